package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cairn-dev/cairn/vecstore"

	"github.com/cairn-dev/cairn/cmd/cairn/cairnapi"
	"github.com/cairn-dev/cairn/cmd/cairn/chromaapi"
	"github.com/cairn-dev/cairn/cmd/cairn/config"
	"github.com/cairn-dev/cairn/cmd/cairn/gitcrumbs"
	"github.com/cairn-dev/cairn/cmd/cairn/server"
	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ingest"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/engine/sqlite"
	"github.com/cairn-dev/cairn/vecstore/chroma"
)

func serveCommand() *command {
	return &command{
		name:    "serve",
		summary: "serve the Chroma HTTP API v2 and cairn's own API (/api/cairn/v1)",
		usage:   "[--host HOST] [--port PORT] [--auth-token TOKEN] [--insecure] [--allow-reset]",
		examples: []string{
			`cairn serve`,
			`cairn serve --port 8001 --data-dir ./data`,
			`CAIRN_AUTH_TOKEN=s3cret cairn serve --host 0.0.0.0`,
			`curl -s localhost:8000/api/v2/heartbeat`,
			`curl -s localhost:8000/api/cairn/v1/search -H 'Content-Type: application/json' -d '{"query":"flaky tests"}'`,
		},
		run: runServe,
	}
}

// serveConfig is what runServe was asked for.
type serveConfig struct {
	// vectors is the vector store the engine's process holds
	// (env.vectorStore): the Chroma API's collections unless chroma is
	// set, and /metrics' vector gauges.
	vectors     func() *vecstore.Store
	host, port  string
	token       string
	insecure    bool
	allowReset  bool
	maxBody     int64
	maxBatch    int
	maxResults  int
	maxDepth    int
	drain       time.Duration
	logLevel    slog.Level
	logRequests bool
	// limits holds config.toml's [server] section with the flags above
	// applied over it.
	limits config.Server
	// chroma is what the Chroma API serves when not the engine's vector
	// store (PostgreSQL collections; see openChromaCollections).
	chroma chroma.Store
	// gc holds the retention policies and storage budget of config.toml,
	// for the API's gc and stats.
	gc ops.GCOptions
	// readOnly, when not empty, says why every write is refused: the data
	// dir is not writable by this process.
	readOnly string
}

// readOnlyDataDir returns the data dir when serve must serve it read-only:
// the messages live there (not in PostgreSQL) and it exists, but this
// process may not write it. "" otherwise (a missing dir is created by the
// engine, or its creation fails with the reason).
func (e *env) readOnlyDataDir() (string, error) {
	if e.storeURL() != "" {
		return "", nil
	}
	dir, err := e.resolveDataDir()
	if err != nil {
		return "", err
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() || sqlite.Writable(dir) {
		return "", nil
	}
	return filepath.Abs(dir)
}

func runServe(ctx context.Context, e *env, c *command, args []string) error {
	cfg, model, err := parseServeArgs(e, c, args)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewJSONHandler(e.stderr, &slog.HandlerOptions{Level: cfg.logLevel}))

	// Listen first: a taken port is reported before anything is opened.
	ln, err := listenServe(c, cfg)
	if err != nil {
		return err
	}
	defer ln.Close()

	// A data dir this process may not write (another user's, chmod -w, a
	// read-only mount) is served read-only: the engine reads the database
	// as an immutable file, the APIs refuse every write up front.
	roDir, err := e.readOnlyDataDir()
	if err != nil {
		return err
	}
	if roDir != "" {
		e.readOnly = true
		cfg.readOnly = fmt.Sprintf("cairn serves the data dir %s read-only: this process may not write it (restart cairn serve with write access to it to write)", roDir)
		logger.Warn("serving read-only: the data dir is not writable by this process; reads work, every write is refused (403 read_only)", "data_dir", roDir)
	}
	// The engine opens the vector store even without a model and hands it
	// to the Chroma API: one store per process.
	eng, closeModel, err := e.openWithModelVectors(ctx, model, forServe,
		sqlite.VectorStoreOptions{Open: true, AllowReset: cfg.allowReset})
	if err != nil {
		return err
	}
	defer closeModel()
	defer e.closeLocalVectors()
	defer eng.Close()
	cfg.vectors = e.vectorStore
	chroma, closeChroma, err := openChromaCollections(ctx, e.storeURL(), cfg.allowReset, logger)
	if err != nil {
		return err
	}
	defer closeChroma()
	cfg.chroma = chroma

	h, err := newServeHandler(eng, cfg, logger)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler: h,
		// Stalled clients do not hold connections forever: headers, the
		// whole request, the answer and idle keep-alives are each bounded.
		ReadHeaderTimeout: time.Duration(cfg.limits.ReadHeaderTimeout),
		ReadTimeout:       time.Duration(cfg.limits.ReadTimeout),
		WriteTimeout:      time.Duration(cfg.limits.WriteTimeout),
		IdleTimeout:       time.Duration(cfg.limits.IdleTimeout),
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	conf, _, err := e.loadConfig()
	if err != nil {
		return err
	}
	// The scheduled jobs (gc, export) and the breadcrumb refresh write:
	// a read-only server runs none of them.
	stopJobs, crumbs := func() {}, (*gitcrumbs.Refresher)(nil)
	if cfg.readOnly == "" {
		stopJobs = ops.StartLifecycle(context.WithoutCancel(ctx), eng, lifecycleOptions(conf.LifecycleOptions(eng.Dir()), logger)).Stop
		crumbs = e.startBreadcrumbRefresh(context.WithoutCancel(ctx), eng, logger)
	}
	defer stopJobs()
	defer crumbs.Stop()
	url := "http://" + ln.Addr().String()
	logger.Info("cairn serving", "url", url, "data_dir", eng.Dir(), "auth", cfg.token != "")
	if !e.json {
		fmt.Fprintf(e.stderr, "cairn serving on %s (Chroma API /api/v2, cairn API %s, metrics /metrics); Ctrl-C stops\n", url, cairnapi.Prefix)
	} else {
		_ = e.printJSON(map[string]string{"url": url, "data_dir": eng.Dir()})
	}

	if err := drainServer(ctx, logger, srv, served, cfg.drain); err != nil {
		return err
	}
	stopJobs()
	crumbs.Stop()
	// Closing the engine (and with it the vector store) flushes graph
	// snapshots and the vector outbox state; every acknowledged write was
	// already committed.
	if err := eng.Close(); err != nil {
		return err
	}
	logger.Info("stopped")
	return nil
}

// parseServeArgs reads serve's flags and checks them; it returns the
// configuration and the --model value.
func parseServeArgs(e *env, c *command, args []string) (serveConfig, string, error) {
	fs := newFlagSet(e, c)
	cfg := serveConfig{}
	fs.StringVar(&cfg.host, "host", "127.0.0.1", "listen on `HOST` (beyond loopback only with a token or --insecure)")
	fs.StringVar(&cfg.port, "port", "8000", "listen on `PORT` (Chroma's default is 8000; 0 picks a free one)")
	fs.StringVar(&cfg.token, "auth-token", "", "require `TOKEN` as Authorization: Bearer or X-Chroma-Token (default $CAIRN_AUTH_TOKEN)")
	fs.BoolVar(&cfg.insecure, "insecure", false, "allow listening beyond loopback without a token")
	fs.BoolVar(&cfg.allowReset, "allow-reset", false, "enable POST /api/v2/reset, which deletes every Chroma collection (cairn's own message vectors stay)")
	def := config.Default().Server
	fs.Int64Var(&cfg.maxBody, "max-body-bytes", int64(def.MaxBodyBytes), "largest request body in `BYTES` (config: server.max_body_bytes)")
	fs.IntVar(&cfg.maxBatch, "max-batch", def.MaxBatch, "most records in one Chroma add/upsert/update or query batch (config: server.max_batch)")
	fs.IntVar(&cfg.maxResults, "max-results", def.MaxResults, "largest n_results / limit (config: server.max_results)")
	fs.IntVar(&cfg.maxDepth, "max-filter-depth", def.MaxFilterDepth, "deepest nesting of a where filter or JSON body (config: server.max_filter_depth)")
	fs.DurationVar(&cfg.drain, "shutdown-timeout", 30*time.Second, "how long in-flight requests may finish after SIGINT/SIGTERM")
	model := fs.String("model", "", modelUsage)
	level := fs.String("log-level", "info", "log `LEVEL` on stderr: debug, info, warn or error")
	fs.BoolVar(&cfg.logRequests, "log-requests", true, "log one structured line per request")
	pos, err := parse(e, c, fs, args)
	if err != nil {
		return cfg, "", err
	}
	if err := noArgs(c, pos); err != nil {
		return cfg, "", err
	}
	if err := cfg.logLevel.UnmarshalText([]byte(*level)); err != nil {
		return cfg, "", usagef(c.name, "--log-level must be debug, info, warn or error, got %q", *level)
	}
	if cfg.token == "" {
		cfg.token = e.getenv("CAIRN_AUTH_TOKEN")
	}
	conf, _, err := e.loadConfig()
	if err != nil {
		return cfg, "", err
	}
	cfg.applyLimits(fs, conf.Server)
	cfg.gc = conf.GCOptions()
	if err := cfg.check(c); err != nil {
		return cfg, "", err
	}
	return cfg, *model, nil
}

// listenServe opens the listening socket; a taken port is a usage error.
func listenServe(c *command, cfg serveConfig) (net.Listener, error) {
	addr := net.JoinHostPort(cfg.host, cfg.port)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, usagef(c.name, "%s is already in use (another cairn or Chroma?); choose another with --port", addr)
		}
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	return ln, nil
}

// drainServer waits until ctx is done, then lets in-flight requests finish
// for up to drain. It returns the error that ended srv.Serve if that came
// first.
func drainServer(ctx context.Context, logger *slog.Logger, srv *http.Server, served <-chan error, drain time.Duration) error {
	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	logger.Info("shutting down: letting in-flight requests finish", "timeout", drain.String())
	sctx, cancel := context.WithTimeout(context.Background(), drain)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		logger.Warn("shutdown", "err", err)
	}
	return nil
}

// applyLimits takes the [server] section of the configuration, then the
// limit flags given on the command line over it (a flag not given leaves
// the configured value).
func (cfg *serveConfig) applyLimits(fs *flag.FlagSet, conf config.Server) {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	pick := func(flag string, given, configured int) int {
		if set[flag] {
			return given
		}
		return configured
	}
	cfg.maxBody = int64(pick("max-body-bytes", int(cfg.maxBody), conf.MaxBodyBytes))
	cfg.maxBatch = pick("max-batch", cfg.maxBatch, conf.MaxBatch)
	cfg.maxResults = pick("max-results", cfg.maxResults, conf.MaxResults)
	cfg.maxDepth = pick("max-filter-depth", cfg.maxDepth, conf.MaxFilterDepth)
	conf.MaxBodyBytes, conf.MaxBatch, conf.MaxResults, conf.MaxFilterDepth = int(cfg.maxBody), cfg.maxBatch, cfg.maxResults, cfg.maxDepth
	conf.BodyBudgetBytes = max(conf.BodyBudgetBytes, conf.MaxBodyBytes)
	cfg.limits = conf
}

func (cfg serveConfig) check(c *command) error {
	if n, err := strconv.Atoi(cfg.port); err != nil || n < 0 || n > 65535 {
		return usagef(c.name, "--port must be a number from 0 to 65535, got %q", cfg.port)
	}
	if cfg.maxBody <= 0 || cfg.maxBatch <= 0 || cfg.maxResults <= 0 || cfg.maxDepth <= 0 {
		return usagef(c.name, "--max-body-bytes, --max-batch, --max-results and --max-filter-depth must be positive")
	}
	if cfg.token == "" && !cfg.insecure && !isLoopback(cfg.host) {
		return usagef(c.name, "refusing to listen on %s without a token: set --auth-token or CAIRN_AUTH_TOKEN, or pass --insecure", cfg.host)
	}
	return nil
}

// isLoopback reports whether host names only loopback addresses.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// newServeHandler builds the APIs over eng and its vector store behind the
// HTTP front.
func newServeHandler(eng *engine.Engine, cfg serveConfig, logger *slog.Logger) (http.Handler, error) {
	own, err := cairnapi.New(cairnapi.Options{Engine: eng, MaxBodyBytes: cfg.maxBody, MaxLimit: cfg.maxResults, MaxDepth: cfg.maxDepth, GC: cfg.gc,
		MaxResultBytes: int64(cfg.limits.MaxResultBytes), ReadOnly: cfg.readOnly, Logger: logger})
	if err != nil {
		return nil, err
	}
	lim := cfg.limits
	hosts := slices.Clone(lim.Hosts)
	if net.ParseIP(strings.Trim(cfg.host, "[]")) == nil {
		hosts = append(hosts, cfg.host) // a --host name is a name the server answers to
	}
	colls, readOnly := chromaCollections(cfg)
	return server.New(server.Options{
		Engine: eng, VectorStats: vectorStats(cfg.vectors),
		Chroma: chromaapi.New(chromaapi.Options{
			Collections: colls, ReadOnly: readOnly, ReadOnlyStore: cfg.readOnly, AuthToken: cfg.token, AllowReset: cfg.allowReset,
			MaxBodyBytes: cfg.maxBody, MaxBatchSize: cfg.maxBatch, MaxNResults: cfg.maxResults,
			MaxFilterDepth: cfg.maxDepth, MaxRequestResults: lim.MaxRequestResults, MaxIDs: lim.MaxIDs,
			MaxAnswerBytes: int64(lim.MaxAnswerBytes), MaxScanBytes: int64(lim.MaxScanBytes),
			MaxFilterClauses: lim.MaxFilterClauses, MaxFilterValues: lim.MaxFilterValues, Logger: logger,
		}),
		Cairn:     own,
		AuthToken: cfg.token, LogRequests: cfg.logRequests, Logger: logger,
		Hosts: hosts, AllowedOrigins: lim.AllowedOrigins, BodyBudget: int64(lim.BodyBudgetBytes),
	}), nil
}

// vectorStats reports the vector store of vectors on /metrics.
func vectorStats(vectors func() *vecstore.Store) func() (server.VectorStats, bool) {
	return func() (server.VectorStats, bool) {
		var vs *vecstore.Store
		if vectors != nil {
			vs = vectors()
		}
		if vs == nil {
			return server.VectorStats{}, false
		}
		s := vs.Stats()
		return server.VectorStats{Collections: s.Collections, Records: s.Records, ExactQueries: s.ExactQueries,
			FilteredHNSW: s.FilteredHNSW, Syncs: s.Syncs, Snapshots: s.Snapshots}, true
	}
}

// lifecycleOptions logs the outcome of each scheduled job.
func lifecycleOptions(opts ops.LifecycleOptions, logger *slog.Logger) ops.LifecycleOptions {
	opts.OnGC = func(r *ops.GCReport) {
		logger.Info("gc", "messages_deleted", len(r.Messages), "sessions_deleted", len(r.Sessions), "kept_forever", r.KeptForever)
	}
	opts.OnExport = func(files []ingest.ExportedFile) {
		if len(files) > 0 {
			logger.Info("export", "files", len(files))
		}
	}
	opts.OnError = func(err error) { logger.Error("lifecycle job", "err", err) }
	return opts
}
