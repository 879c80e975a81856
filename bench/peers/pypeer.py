#!/usr/bin/python3
"""Python peers of cairn's index comparison: hnswlib (Debian python3-hnswlib),
faiss IndexHNSWFlat and faiss IndexHNSWSQ with 8-bit scalar codes (faiss-sq8,
the nearest faiss flavour of cairn's SQ8; faiss trains one range per
dimension where cairn keeps one per vector) from Debian python3-faiss.

Reads the fvecs/ivecs files written by `go run ./bench/cmd/indexbench`, builds
the index with the given threads, times single-threaded queries one at a time
and prints one JSON object per line (fields of bench.IndexRow). With --save
it writes the first build's index to a file; --load FILE is the footprint
process: it loads that file, answers one query and prints the bytes on disk
and its resident memory.
Run by indexbench; not meant to be run by hand except for debugging.
"""
import argparse
import json
import os
import resource
import sys
import time

import numpy as np


def read_fvecs(path):
    a = np.fromfile(path, dtype=np.int32)
    d = int(a[0])
    return np.ascontiguousarray(a.reshape(-1, d + 1)[:, 1:].view(np.float32))


def read_ivecs(path):
    a = np.fromfile(path, dtype=np.int32)
    rows, i = [], 0
    while i < len(a):
        n = int(a[i])
        rows.append(a[i + 1:i + 1 + n].astype(np.int64))
        i += 1 + n
    return rows


def recall(got, want):
    w = set(int(x) for x in want)
    return len(w & set(int(x) for x in got)) / max(len(w), 1)


def emit(**kw):
    print(json.dumps(kw), flush=True)


def measure(query_one, xq, gt, k, reps):
    """Warm up on 100 queries, then reps passes; recall of pass 0, medians."""
    for i in range(min(100, len(xq))):
        query_one(xq[i:i + 1], k)
    p50s, p99s, means, c50s, c99s, rec = [], [], [], [], [], 0.0
    lat = np.zeros(len(xq))
    cpu = np.zeros(len(xq))
    for r in range(reps):
        for i in range(len(xq)):
            q = xq[i:i + 1]
            c0 = time.thread_time_ns()
            t0 = time.perf_counter_ns()
            ids = query_one(q, k)
            lat[i] = (time.perf_counter_ns() - t0) / 1e3
            cpu[i] = (time.thread_time_ns() - c0) / 1e3
            if r == 0:
                rec += recall(ids, gt[i])
        s = np.sort(lat)
        p50s.append(s[int(np.ceil(0.50 * len(s))) - 1])
        p99s.append(s[int(np.ceil(0.99 * len(s))) - 1])
        means.append(float(lat.mean()))
        s = np.sort(cpu)
        c50s.append(s[int(np.ceil(0.50 * len(s))) - 1])
        c99s.append(s[int(np.ceil(0.99 * len(s))) - 1])
    return dict(recall=rec / len(xq), p50_us=float(np.median(p50s)), p99_us=float(np.median(p99s)),
                mean_us=float(np.median(means)), cpu_p50_us=float(np.median(c50s)), cpu_p99_us=float(np.median(c99s)))


PEERS = {"hnswlib": "hnswlib-py", "faiss": "faiss", "faiss-sq8": "faiss-sq8"}


def rss_bytes():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def footprint(a):
    """Load a saved index, answer the first query, print the footprint row."""
    xq = read_fvecs(a.query)
    d = xq.shape[1]
    if a.lib == "hnswlib":
        import hnswlib
    else:
        import faiss
    before = rss_bytes()
    if a.lib == "hnswlib":
        p = hnswlib.Index(space=a.space, dim=d)
        p.load_index(a.load)
        p.set_ef(100)
        p.knn_query(xq[:1], k=10, num_threads=1)
        n = p.get_current_count()
    else:
        p = faiss.read_index(a.load)
        p.hnsw.efSearch = 100
        p.search(xq[:1], 10)
        n = p.ntotal
    after = rss_bytes()
    emit(peer=PEERS[a.lib], dataset=a.dataset, n=int(n), kind="footprint", disk_bytes=os.path.getsize(a.load),
         rss_bytes=after, bytes=after - before, note="load + 1 query; bytes = RSS added by the load (python %d MB before)"
         % (before >> 20))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True, choices=sorted(PEERS))
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--base")
    ap.add_argument("--query", required=True)
    ap.add_argument("--gt")
    ap.add_argument("--space", default="l2", choices=["l2", "cosine"],
                    help="cosine: hnswlib's cosine space; faiss inner product on normalized vectors")
    ap.add_argument("--save", help="write the first build's index here")
    ap.add_argument("--load", help="footprint only: load this saved index")
    ap.add_argument("--M", type=int, default=16)
    ap.add_argument("--efc", type=int, default=200)
    ap.add_argument("--efs", default="10,20,40,80,100,200,400")
    ap.add_argument("--threads", default="1", help="build thread counts; queries use the first build")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--filters", default="", help="sel:allowfile:gtfile,... (faiss only)")
    ap.add_argument("--filter-efs", default="100")
    a = ap.parse_args()
    if a.load:
        return footprint(a)

    xb, xq = read_fvecs(a.base), read_fvecs(a.query)
    gt = read_ivecs(a.gt) if a.gt else []
    n, d = xb.shape
    peer = PEERS[a.lib]
    if a.lib == "hnswlib":
        import hnswlib
    else:
        import faiss
        metric = faiss.METRIC_L2
        if a.space == "cosine":
            faiss.normalize_L2(xb)
            faiss.normalize_L2(xq)
            metric = faiss.METRIC_INNER_PRODUCT

    def cpu_s():
        ru = resource.getrusage(resource.RUSAGE_SELF)
        return ru.ru_utime + ru.ru_stime

    def build(threads):
        if a.lib == "hnswlib":
            p = hnswlib.Index(space=a.space, dim=d)
            p.init_index(max_elements=n, ef_construction=a.efc, M=a.M, random_seed=100)
            c0, t0 = cpu_s(), time.perf_counter()
            p.add_items(xb, np.arange(n), num_threads=threads)
            return p, time.perf_counter() - t0, cpu_s() - c0
        faiss.omp_set_num_threads(threads)
        if a.lib == "faiss-sq8":
            p = faiss.IndexHNSWSQ(d, faiss.ScalarQuantizer.QT_8bit, a.M, metric)
        else:
            p = faiss.IndexHNSWFlat(d, a.M, metric)
        p.hnsw.efConstruction = a.efc
        c0, t0 = cpu_s(), time.perf_counter()
        if not p.is_trained:
            p.train(xb)  # the scalar quantizer's per-dimension ranges: part of the build
        p.add(xb)
        return p, time.perf_counter() - t0, cpu_s() - c0

    first = None
    for t in [int(x) for x in a.threads.split(",") if x]:
        p, secs, cpus = build(t)
        emit(peer=peer, dataset=a.dataset, n=n, kind="build", threads=t, build_s=secs, build_cpu_s=cpus)
        if first is None:
            first = p
        else:
            del p
    p = first

    if a.lib == "hnswlib":
        def one(q, k):
            labels, _ = p.knn_query(q, k=k, num_threads=1)
            return labels[0]
    else:
        faiss.omp_set_num_threads(1)

        def one(q, k):
            _, ids = p.search(q, k)
            return ids[0]

    for ef in [int(x) for x in a.efs.split(",") if x and gt]:
        if a.lib == "hnswlib":
            p.set_ef(max(ef, a.k))
        else:
            p.hnsw.efSearch = max(ef, a.k)
        emit(peer=peer, dataset=a.dataset, n=n, kind="query", ef=ef, **measure(one, xq, gt, a.k, a.reps))

    if a.filters and a.lib != "hnswlib":
        for spec in a.filters.split(","):
            sel, allow_path, gt_path = spec.split(":")
            allow = read_ivecs(allow_path)[0]
            fgt = read_ivecs(gt_path)
            bitmap = np.zeros((n + 7) // 8, dtype=np.uint8)
            np.bitwise_or.at(bitmap, allow >> 3, (1 << (allow & 7)).astype(np.uint8))
            selector = faiss.IDSelectorBitmap(n, faiss.swig_ptr(bitmap))
            for ef in [int(x) for x in a.filter_efs.split(",") if x]:
                params = faiss.SearchParametersHNSW(sel=selector, efSearch=max(ef, a.k))

                def onef(q, k):
                    _, ids = p.search(q, k, params=params)
                    return ids[0]

                emit(peer=peer, dataset=a.dataset, n=n, kind="filter", sel=float(sel), ef=ef,
                     **measure(onef, xq, fgt, a.k, a.reps))

    if a.save:
        if a.lib == "hnswlib":
            p.save_index(a.save)
        else:
            faiss.write_index(p, a.save)


if __name__ == "__main__":
    sys.exit(main())
