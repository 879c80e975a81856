package server

import (
	"bufio"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cairn-dev/cairn/cmd/cairn/cairnapi"
	"github.com/cairn-dev/cairn/cmd/cairn/reqlog"
	"github.com/cairn-dev/cairn/engine"
)

// latencyBuckets are the histogram bounds in seconds: sub-millisecond
// resolution, since most requests answer within a few milliseconds.
var latencyBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5}

// routeKey labels one series of request metrics.
type routeKey struct {
	api, route string
	code       int
}

// histogram is one route's latency distribution.
type histogram struct {
	counts []uint64 // per bucket, not cumulative; len(latencyBuckets)+1
	sum    float64
	n      uint64
}

// metrics serves /metrics in the Prometheus text format: request counts
// and latency histograms by route, index sizes, the embedding queue and the
// embedding cache.
type metrics struct {
	eng *engine.Engine
	own *cairnapi.Handler

	mu struct {
		sync.Mutex
		requests  map[routeKey]uint64
		latencies map[[2]string]*histogram // by api, route
	}
}

func newMetrics(eng *engine.Engine, own *cairnapi.Handler) *metrics {
	m := &metrics{eng: eng, own: own}
	m.mu.requests = map[routeKey]uint64{}
	m.mu.latencies = map[[2]string]*histogram{}
	return m
}

// route names r's route with a bounded label set (never raw paths, which
// carry ids and would grow the series without bound).
func (m *metrics) route(r *http.Request) (api, route string) {
	p := r.URL.Path
	switch {
	case strings.HasPrefix(p, cairnapi.Prefix+"/"):
		if pat := m.own.Pattern(r); pat != "" {
			return "cairn", pat
		}
		return "cairn", "unknown"
	case p == "/metrics":
		return "metrics", "/metrics"
	case strings.HasPrefix(p, "/api/v2/"):
		return "chroma", r.Method + " " + chromaRoute(p)
	}
	return "other", "unknown"
}

// chromaRoute collapses a Chroma v2 path to its route shape: tenant,
// database and collection segments become placeholders.
func chromaRoute(p string) string {
	segs := strings.Split(strings.TrimPrefix(p, "/api/v2/"), "/")
	names := map[string]string{"tenants": "{tenant}", "databases": "{database}", "collections": "{collection}"}
	for i := 0; i+1 < len(segs); i++ {
		if ph, ok := names[segs[i]]; ok {
			segs[i+1] = ph
			i++
		}
	}
	return "/api/v2/" + strings.Join(segs, "/")
}

// instrument counts and times every request.
func (m *metrics) instrument(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := reqlog.Wrap(w)
		next.ServeHTTP(sw, r)
		secs := time.Since(start).Seconds()
		status := sw.Status()
		if status == 0 {
			status = http.StatusOK
		}
		api, route := m.route(r)
		m.mu.Lock()
		defer m.mu.Unlock()
		m.mu.requests[routeKey{api, route, status}]++
		h := m.mu.latencies[[2]string{api, route}]
		if h == nil {
			h = &histogram{counts: make([]uint64, len(latencyBuckets)+1)}
			m.mu.latencies[[2]string{api, route}] = h
		}
		i, _ := slices.BinarySearch(latencyBuckets, secs)
		h.counts[i]++
		h.sum += secs
		h.n++
	})
}

func (m *metrics) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	m.writeRequests(bw)

	m.writeVectors(bw)
	m.writeEngine(bw, r)
}

// writeVectors reports the engine's vector store, when it is open.
func (m *metrics) writeVectors(bw *bufio.Writer) {
	store := m.eng.VectorStore()
	if store == nil {
		return
	}
	vs := store.Stats()
	gauge(bw, "cairn_vector_collections_loaded", "Collections loaded in memory.", float64(vs.Collections))
	gauge(bw, "cairn_vector_records_loaded", "Vector records loaded in memory (index size).", float64(vs.Records))
	counter(bw, "cairn_vector_queries_exact_total", "Vector queries answered by an exact scan of the allowed set.", float64(vs.ExactQueries))
	counter(bw, "cairn_vector_queries_hnsw_total", "Vector queries answered by the (filtered) HNSW graph.", float64(vs.FilteredHNSW))
	counter(bw, "cairn_vector_syncs_total", "Change-log replays of other processes' writes.", float64(vs.Syncs))
	counter(bw, "cairn_vector_snapshots_total", "Graph snapshots written.", float64(vs.Snapshots))
}

func (m *metrics) writeEngine(bw *bufio.Writer, r *http.Request) {
	if sets, err := m.eng.VectorSets(r.Context()); err == nil {
		var pending int64
		for _, s := range sets {
			pending += s.Pending
		}
		gauge(bw, "cairn_embedding_queue", "Messages waiting to be embedded or to have their vectors deleted.", float64(pending))
	}
	if st, ok := m.eng.EmbedderStats(); ok {
		counter(bw, "cairn_embedding_cache_hits_total", "Embedding cache hits.", float64(st.CacheHits))
		counter(bw, "cairn_embedding_cache_misses_total", "Embedding cache misses.", float64(st.CacheMisses))
		gauge(bw, "cairn_embedding_cache_hit_ratio", "Embedding cache hits / lookups.", st.HitRate)
		counter(bw, "cairn_embedded_texts_total", "Texts embedded.", float64(st.Texts))
	}
}

func (m *metrics) writeRequests(bw *bufio.Writer) {
	m.mu.Lock()
	defer m.mu.Unlock()
	keys := make([]routeKey, 0, len(m.mu.requests))
	for k := range m.mu.requests {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b routeKey) int {
		return strings.Compare(fmt.Sprint(a.api, a.route, a.code), fmt.Sprint(b.api, b.route, b.code))
	})
	fmt.Fprintln(bw, "# HELP cairn_http_requests_total HTTP requests by API, route and status code.")
	fmt.Fprintln(bw, "# TYPE cairn_http_requests_total counter")
	for _, k := range keys {
		fmt.Fprintf(bw, "cairn_http_requests_total{api=%q,route=%q,code=\"%d\"} %d\n", k.api, k.route, k.code, m.mu.requests[k])
	}
	routes := make([][2]string, 0, len(m.mu.latencies))
	for k := range m.mu.latencies {
		routes = append(routes, k)
	}
	slices.SortFunc(routes, func(a, b [2]string) int { return strings.Compare(a[0]+a[1], b[0]+b[1]) })
	fmt.Fprintln(bw, "# HELP cairn_http_request_duration_seconds HTTP request latency by API and route.")
	fmt.Fprintln(bw, "# TYPE cairn_http_request_duration_seconds histogram")
	for _, k := range routes {
		h := m.mu.latencies[k]
		var cum uint64
		for i, le := range latencyBuckets {
			cum += h.counts[i]
			fmt.Fprintf(bw, "cairn_http_request_duration_seconds_bucket{api=%q,route=%q,le=\"%g\"} %d\n", k[0], k[1], le, cum)
		}
		fmt.Fprintf(bw, "cairn_http_request_duration_seconds_bucket{api=%q,route=%q,le=\"+Inf\"} %d\n", k[0], k[1], h.n)
		fmt.Fprintf(bw, "cairn_http_request_duration_seconds_sum{api=%q,route=%q} %g\n", k[0], k[1], h.sum)
		fmt.Fprintf(bw, "cairn_http_request_duration_seconds_count{api=%q,route=%q} %d\n", k[0], k[1], h.n)
	}
}

func gauge(bw *bufio.Writer, name, help string, v float64) {
	fmt.Fprintf(bw, "# HELP %s %s\n# TYPE %s gauge\n%s %g\n", name, help, name, name, v)
}

func counter(bw *bufio.Writer, name, help string, v float64) {
	fmt.Fprintf(bw, "# HELP %s %s\n# TYPE %s counter\n%s %g\n", name, help, name, name, v)
}
