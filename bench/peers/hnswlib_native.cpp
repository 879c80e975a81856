// Native hnswlib peer of cairn's index comparison: Debian's libhnswlib-dev
// headers compiled with -O3 -march=native (AVX2/AVX-512 distance kernels).
// Reads the fvecs/ivecs files written by `go run ./bench/cmd/indexbench`,
// builds with each requested thread count, times single-threaded queries one
// at a time, and prints one JSON object per line (fields of bench.IndexRow).
//
// Build: g++ -O3 -march=native -std=c++17 -pthread -o hnswlib_native hnswlib_native.cpp
// Usage: hnswlib_native dataset base.fvecs query.fvecs gt.ivecs M efc efs threads reps [k [save]]
//   efs and threads are comma lists, e.g. 10,20,40 and 1,2; efs "-" skips queries;
//   save: write the first build's index there (saveIndex) after the queries.
//        hnswlib_native load index.bin query.fvecs dataset
//   loads a saved index, answers the first query and prints its footprint
//   (file bytes, VmRSS, and the RSS the load added).
#include <hnswlib/hnswlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <sys/resource.h>
#include <time.h>
#include <vector>

static std::vector<std::vector<int>> read_vecs(const char *path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) {
        fprintf(stderr, "hnswlib_native: cannot open %s\n", path);
        exit(2);
    }
    std::vector<std::vector<int>> rows;
    int n;
    while (f.read(reinterpret_cast<char *>(&n), 4)) {
        std::vector<int> r(n);
        f.read(reinterpret_cast<char *>(r.data()), 4 * (size_t)n);
        rows.push_back(std::move(r));
    }
    return rows;
}

static std::vector<float> read_fvecs(const char *path, size_t &dim, size_t &n) {
    std::ifstream f(path, std::ios::binary);
    if (!f) {
        fprintf(stderr, "hnswlib_native: cannot open %s\n", path);
        exit(2);
    }
    f.seekg(0, std::ios::end);
    size_t bytes = f.tellg();
    f.seekg(0);
    int d;
    f.read(reinterpret_cast<char *>(&d), 4);
    dim = d;
    n = bytes / (4 * (dim + 1));
    std::vector<float> out(n * dim);
    f.seekg(0);
    for (size_t i = 0; i < n; i++) {
        f.read(reinterpret_cast<char *>(&d), 4);
        f.read(reinterpret_cast<char *>(out.data() + i * dim), 4 * dim);
    }
    return out;
}

static std::vector<int> parse_list(const std::string &s) {
    std::vector<int> v;
    std::stringstream ss(s);
    std::string x;
    while (std::getline(ss, x, ','))
        if (!x.empty() && x != "-") v.push_back(atoi(x.c_str()));
    return v;
}

static long rss_bytes() {
    std::ifstream f("/proc/self/status");
    std::string line;
    while (std::getline(f, line))
        if (line.rfind("VmRSS:", 0) == 0) return atol(line.c_str() + 6) * 1024;
    return 0;
}

static double pct(std::vector<double> s, double p) {
    std::sort(s.begin(), s.end());
    long i = (long)std::ceil(p * s.size()) - 1;
    return s[std::max(0L, std::min(i, (long)s.size() - 1))];
}

static double thread_cpu_us() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static double process_cpu_s() {
    rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static double med(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int load_footprint(const char *path, const char *query, const char *dataset) {
    size_t qdim, nq;
    std::vector<float> xq = read_fvecs(query, qdim, nq);
    long before = rss_bytes();
    hnswlib::L2Space space(qdim);
    auto *alg = new hnswlib::HierarchicalNSW<float>(&space, path);
    alg->setEf(100);
    auto res = alg->searchKnn(xq.data(), 10);
    long after = rss_bytes();
    std::ifstream f(path, std::ios::binary | std::ios::ate);
    long disk = (long)f.tellg();
    printf("{\"peer\":\"hnswlib-native\",\"dataset\":\"%s\",\"n\":%zu,\"kind\":\"footprint\","
           "\"disk_bytes\":%ld,\"rss_bytes\":%ld,\"bytes\":%ld,\"note\":\"loadIndex + 1 query\"}\n",
           dataset, (size_t)alg->cur_element_count, disk, after, after - before);
    fflush(stdout);
    (void)res;
    delete alg;
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 5 && strcmp(argv[1], "load") == 0) return load_footprint(argv[2], argv[3], argv[4]);
    if (argc < 10) {
        fprintf(stderr, "usage: %s dataset base query gt M efc efs threads reps [k]\n", argv[0]);
        return 2;
    }
    const char *dataset = argv[1];
    size_t dim, n, qdim, nq;
    long rss0 = rss_bytes();
    std::vector<float> xb = read_fvecs(argv[2], dim, n);
    std::vector<float> xq = read_fvecs(argv[3], qdim, nq);
    auto gt = read_vecs(argv[4]);
    int M = atoi(argv[5]), efc = atoi(argv[6]);
    auto efs = parse_list(argv[7]);
    auto threads = parse_list(argv[8]);
    int reps = atoi(argv[9]);
    int k = argc > 10 ? atoi(argv[10]) : 10;
    (void)rss0;

    hnswlib::L2Space space(dim);
    hnswlib::HierarchicalNSW<float> *keep = nullptr;
    for (int t : threads) {
        long before = rss_bytes();
        auto *alg = new hnswlib::HierarchicalNSW<float>(&space, n, M, efc, 100);
        double cpu0 = process_cpu_s();
        auto t0 = std::chrono::steady_clock::now();
        if (t <= 1) {
            for (size_t i = 0; i < n; i++) alg->addPoint(xb.data() + i * dim, i);
        } else {
            std::atomic<size_t> next(0);
            std::vector<std::thread> ws;
            for (int w = 0; w < t; w++)
                ws.emplace_back([&] {
                    for (size_t i; (i = next.fetch_add(1)) < n;) alg->addPoint(xb.data() + i * dim, i);
                });
            for (auto &w : ws) w.join();
        }
        double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        double cpus = process_cpu_s() - cpu0;
        long used = rss_bytes() - before;
        printf("{\"peer\":\"hnswlib-native\",\"dataset\":\"%s\",\"n\":%zu,\"kind\":\"build\",\"threads\":%d,"
               "\"build_s\":%.3f,\"build_cpu_s\":%.3f,\"bytes\":%ld,\"note\":\"bytes = RSS growth during build\"}\n",
               dataset, n, t, secs, cpus, used);
        fflush(stdout);
        if (!keep)
            keep = alg;
        else
            delete alg;
    }
    if (!keep) return 0;

    std::vector<double> lat(nq), cpu(nq);
    for (int ef : efs) {
        keep->setEf(std::max(ef, k));
        for (size_t i = 0; i < std::min<size_t>(100, nq); i++) keep->searchKnn(xq.data() + i * dim, k);
        std::vector<double> p50s, p99s, means, c50s, c99s;
        double rec = 0;
        for (int r = 0; r < reps; r++) {
            double sum = 0;
            for (size_t i = 0; i < nq; i++) {
                double c0 = thread_cpu_us();
                auto t0 = std::chrono::steady_clock::now();
                auto res = keep->searchKnn(xq.data() + i * dim, k);
                double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
                cpu[i] = thread_cpu_us() - c0;
                lat[i] = us;
                sum += us;
                if (r == 0) {
                    std::set<int> want(gt[i].begin(), gt[i].end());
                    int hit = 0;
                    while (!res.empty()) {
                        hit += want.count((int)res.top().second);
                        res.pop();
                    }
                    rec += (double)hit / std::max<size_t>(1, want.size());
                }
            }
            p50s.push_back(pct(lat, 0.50));
            p99s.push_back(pct(lat, 0.99));
            means.push_back(sum / nq);
            c50s.push_back(pct(cpu, 0.50));
            c99s.push_back(pct(cpu, 0.99));
        }
        printf("{\"peer\":\"hnswlib-native\",\"dataset\":\"%s\",\"n\":%zu,\"kind\":\"query\",\"ef\":%d,"
               "\"recall\":%.5f,\"p50_us\":%.2f,\"p99_us\":%.2f,\"mean_us\":%.2f,\"cpu_p50_us\":%.2f,\"cpu_p99_us\":%.2f}\n",
               dataset, n, ef, rec / nq, med(p50s), med(p99s), med(means), med(c50s), med(c99s));
        fflush(stdout);
    }
    if (argc > 11) keep->saveIndex(argv[11]);
    delete keep;
    return 0;
}
