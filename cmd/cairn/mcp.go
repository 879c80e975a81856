package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/cairn-dev/cairn/cmd/cairn/gitcrumbs"
	"github.com/cairn-dev/cairn/cmd/cairn/mcpserver"
	"github.com/cairn-dev/cairn/engine"
)

func mcpCommand() *command {
	return &command{
		name:    "mcp",
		summary: "serve the knowledge store to an agent over MCP (stdio)",
		usage:   "[--data-dir DIR] [--model DIR] [--tools SET[,SET]] [--log-level LEVEL]",
		examples: []string{
			`cairn mcp`,
			`cairn mcp --tools core,unread   # add get_unread and mark_read to the default tools`,
			`claude mcp add cairn -- cairn mcp --data-dir ~/.local/share/cairn`,
		},
		run: runMCP,
	}
}

// runMCP serves MCP on stdin/stdout until the client disconnects or a signal
// ends ctx. Logs go to stderr, never to stdout (which carries the protocol).
func runMCP(ctx context.Context, e *env, c *command, args []string) error {
	fs := newFlagSet(e, c)
	model := fs.String("model", "", modelUsage)
	level := fs.String("log-level", "warn", "log `LEVEL` on stderr: debug, info, warn or error")
	toolsFlag := fs.String("tools", "", "tool `SETS` to serve, comma-separated: "+strings.Join(mcpserver.ToolSets(), ", ")+" (default: config mcp.tools, core)")
	pos, err := parse(e, c, fs, args)
	if err != nil {
		return err
	}
	if err := noArgs(c, pos); err != nil {
		return err
	}
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(*level)); err != nil {
		return usagef(c.name, "--log-level must be debug, info, warn or error, got %q", *level)
	}
	cfg, _, err := e.loadConfig()
	if err != nil {
		return err
	}
	var tools []string
	if *toolsFlag != "" {
		for _, t := range strings.Split(*toolsFlag, ",") {
			t = strings.TrimSpace(t)
			if !slices.Contains(mcpserver.ToolSets(), t) {
				return usagef(c.name, "--tools: %q is not a tool set (want %s)", t, strings.Join(mcpserver.ToolSets(), ", "))
			}
			tools = append(tools, t)
		}
	} else {
		tools = cfg.MCP.Tools
	}
	logger := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: lv}))
	// A data dir this process may not write (another user's, chmod -w, a
	// read-only mount) is served read-only, as by cairn serve: the engine
	// reads the database as an immutable file, the write tools answer
	// read_only, and no breadcrumb refresh runs (it writes marks).
	roDir, err := e.readOnlyDataDir()
	if err != nil {
		return err
	}
	readOnly := ""
	if roDir != "" {
		e.readOnly = true
		readOnly = fmt.Sprintf("cairn mcp serves the data dir %s read-only: this process may not write it (restart cairn mcp with write access to it to write)", roDir)
		logger.Warn("serving read-only: the data dir is not writable by this process; reads work, every write tool answers read_only", "data_dir", roDir)
	}
	// The engine and the model open in the background (the handshake does
	// not wait for them); closeModel is set before the open finishes and
	// read after srv.Close has waited for it.
	closeModel := func() error { return nil }
	var crumbs refresherSlot
	open := func(ctx context.Context) (*engine.Engine, error) {
		eng, cm, err := e.openWithModel(ctx, *model, forServe)
		if err == nil {
			closeModel = cm
			if readOnly != "" {
				return eng, nil
			}
			crumbs.start(func() *gitcrumbs.Refresher { return e.startBreadcrumbRefresh(context.WithoutCancel(ctx), eng, logger) })
		}
		return eng, err
	}
	srv, err := mcpserver.New(mcpserver.Options{Open: open, Version: buildVersion(), Logger: logger, Tools: tools,
		MaxResultBytes: int64(cfg.Server.MaxResultBytes), ReadOnly: readOnly})
	if err != nil {
		return err
	}
	defer func() {
		crumbs.stop() // before the engine closes
		_ = srv.Close()
		_ = closeModel()
	}()
	return srv.Run(ctx, &mcpserver.StdioTransport{Reader: readCloser(e.stdin), Writer: writeCloser(e.stdout)})
}

// readCloser and writeCloser let the transport close the streams it was
// given without closing the process's real stdin/stdout twice.
func readCloser(r io.Reader) io.ReadCloser {
	if f, ok := r.(*os.File); ok {
		return f
	}
	return io.NopCloser(r)
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

func writeCloser(w io.Writer) io.WriteCloser {
	if f, ok := w.(*os.File); ok {
		return f
	}
	return nopWriteCloser{w}
}

// refresherSlot holds the breadcrumb refresher of an engine that opens in
// the background: stop may come before, during or after the open, and a
// refresher is never started after stop.
type refresherSlot struct {
	mu      sync.Mutex
	r       *gitcrumbs.Refresher
	stopped bool
}

func (s *refresherSlot) start(f func() *gitcrumbs.Refresher) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.stopped {
		s.r = f()
	}
}

func (s *refresherSlot) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = true
	s.r.Stop()
}
