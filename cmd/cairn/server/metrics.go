package server

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/cairn-dev/cairn/cmd/cairn/cairnapi"
	"github.com/cairn-dev/cairn/cmd/cairn/console"
	"github.com/cairn-dev/cairn/cmd/cairn/httpguard"
	"github.com/cairn-dev/cairn/cmd/cairn/reqlog"
	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
)

// latencyBuckets are the histogram bounds in seconds: sub-millisecond
// resolution, since most requests answer within a few milliseconds.
var latencyBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5}

// chromaRouter returns the pattern of the route a Chroma API request
// matches ("" when none does); chromaapi.Handler implements it.
type chromaRouter interface {
	Pattern(r *http.Request) string
}

// metrics serves /metrics: request counts and latency histograms by route,
// the vector store, the embedding queue and cache, and the Go runtime and
// process metrics, through the Prometheus client library (which owns the
// exposition format, its escaping and content negotiation). The registry
// is the server's own, not the library's global one.
type metrics struct {
	own      *cairnapi.Handler
	chroma   chromaRouter // nil when the Chroma handler cannot name routes
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	handler  http.Handler
}

func newMetrics(eng *engine.Engine, vectors func() (VectorStats, bool), own *cairnapi.Handler, chroma http.Handler, budget *httpguard.Budget) *metrics {
	m := &metrics{own: own}
	m.chroma, _ = chroma.(chromaRouter)
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "cairn_http_requests_total", Help: "HTTP requests by API, route and status code.",
	}, []string{"api", "route", "code"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "cairn_http_request_duration_seconds", Help: "HTTP request latency by API and route.",
		Buckets: latencyBuckets,
	}, []string{"api", "route"})
	reg := prometheus.NewRegistry()
	reg.MustRegister(m.requests, m.latency,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		engineCollector{eng: eng, vectors: vectors},
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "cairn_http_body_budget_bytes_in_use", Help: "Request body bytes held at once, against server.body_budget_bytes.",
		}, func() float64 { return float64(budget.InUse()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "cairn_http_body_budget_bytes", Help: "server.body_budget_bytes: request body bytes that may be held at once (0: no budget).",
		}, func() float64 { return float64(budget.Limit()) }))
	m.handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
	return m
}

// knownMethods bounds the method part of route labels.
var knownMethods = map[string]bool{
	http.MethodGet: true, http.MethodHead: true, http.MethodPost: true, http.MethodPut: true,
	http.MethodPatch: true, http.MethodDelete: true, http.MethodOptions: true,
}

// route names r's route with a bounded label set: route patterns, never raw
// paths (which carry ids and anything a caller invents); every path no
// route matches shares the label "unknown".
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
	case p == "/":
		return "console", "/"
	case strings.HasPrefix(p, console.AssetPrefix):
		return "console", console.AssetPrefix
	case strings.HasPrefix(p, "/api/v2/"):
		if m.chroma == nil || !knownMethods[r.Method] {
			return "chroma", "unknown"
		}
		if pat := m.chroma.Pattern(r); pat != "" {
			return "chroma", r.Method + " " + pat
		}
		return "chroma", "unknown"
	}
	return "other", "unknown"
}

// instrument counts and times every request.
func (m *metrics) instrument(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := reqlog.Wrap(w)
		next.ServeHTTP(sw, r)
		status := sw.Status()
		if status == 0 {
			status = http.StatusOK
		}
		api, route := m.route(r)
		m.requests.WithLabelValues(api, route, strconv.Itoa(status)).Inc()
		m.latency.WithLabelValues(api, route).Observe(time.Since(start).Seconds())
	})
}

func (m *metrics) ServeHTTP(w http.ResponseWriter, r *http.Request) { m.handler.ServeHTTP(w, r) }

// engineCollector reports the engine's vector store, embedding queue and
// embedding cache at each scrape.
type engineCollector struct {
	eng     *engine.Engine
	vectors func() (VectorStats, bool)
}

// VectorStats are the counters of a vector store /metrics reports.
type VectorStats struct {
	Collections, Records                         int // loaded in memory
	ExactQueries, FilteredHNSW, Syncs, Snapshots uint64
}

var (
	descCollections = prometheus.NewDesc("cairn_vector_collections_loaded", "Collections loaded in memory.", nil, nil)
	descRecords     = prometheus.NewDesc("cairn_vector_records_loaded", "Vector records loaded in memory (index size).", nil, nil)
	descExact       = prometheus.NewDesc("cairn_vector_queries_exact_total", "Vector queries answered by an exact scan of the allowed set.", nil, nil)
	descHNSW        = prometheus.NewDesc("cairn_vector_queries_hnsw_total", "Vector queries answered by the (filtered) HNSW graph.", nil, nil)
	descSyncs       = prometheus.NewDesc("cairn_vector_syncs_total", "Change-log replays of other processes' writes.", nil, nil)
	descSnapshots   = prometheus.NewDesc("cairn_vector_snapshots_total", "Graph snapshots written.", nil, nil)
	descQueue       = prometheus.NewDesc("cairn_embedding_queue", "Messages waiting to be embedded or to have their vectors deleted.", nil, nil)
	descHits        = prometheus.NewDesc("cairn_embedding_cache_hits_total", "Embedding cache hits.", nil, nil)
	descMisses      = prometheus.NewDesc("cairn_embedding_cache_misses_total", "Embedding cache misses.", nil, nil)
	descHitRatio    = prometheus.NewDesc("cairn_embedding_cache_hit_ratio", "Embedding cache hits / lookups.", nil, nil)
	descTexts       = prometheus.NewDesc("cairn_embedded_texts_total", "Texts embedded.", nil, nil)
)

func (c engineCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descCollections, descRecords, descExact, descHNSW, descSyncs,
		descSnapshots, descQueue, descHits, descMisses, descHitRatio, descTexts} {
		ch <- d
	}
}

// scrapeTimeout bounds the engine query of one scrape (the collector
// interface carries no context).
const scrapeTimeout = 5 * time.Second

func (c engineCollector) Collect(ch chan<- prometheus.Metric) {
	if c.eng == nil {
		return
	}
	emit := func(d *prometheus.Desc, t prometheus.ValueType, v float64) {
		ch <- prometheus.MustNewConstMetric(d, t, v)
	}
	if c.vectors != nil {
		if vs, ok := c.vectors(); ok {
			emit(descCollections, prometheus.GaugeValue, float64(vs.Collections))
			emit(descRecords, prometheus.GaugeValue, float64(vs.Records))
			emit(descExact, prometheus.CounterValue, float64(vs.ExactQueries))
			emit(descHNSW, prometheus.CounterValue, float64(vs.FilteredHNSW))
			emit(descSyncs, prometheus.CounterValue, float64(vs.Syncs))
			emit(descSnapshots, prometheus.CounterValue, float64(vs.Snapshots))
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	if sets, err := ops.VectorSets(ctx, c.eng); err == nil {
		var pending int64
		for _, s := range sets {
			pending += s.Pending
		}
		emit(descQueue, prometheus.GaugeValue, float64(pending))
	}
	if st, ok := ops.EmbedderStats(c.eng); ok {
		emit(descHits, prometheus.CounterValue, float64(st.CacheHits))
		emit(descMisses, prometheus.CounterValue, float64(st.CacheMisses))
		emit(descHitRatio, prometheus.GaugeValue, st.HitRate)
		emit(descTexts, prometheus.CounterValue, float64(st.Texts))
	}
}
