package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/cairn-dev/cairn/engine"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options configure a Server. Open is required.
type Options struct {
	// Open opens the store. It is called once, in the background, when the
	// server starts, so that the handshake never waits for it.
	Open func(ctx context.Context) (*engine.Engine, error)
	// Version is reported to clients in the initialize result.
	Version string
	// Logger receives operational messages; nil discards them.
	Logger *slog.Logger
}

// Server is an MCP server over one engine.
type Server struct {
	opts Options
	mcp  *mcp.Server

	startOnce sync.Once
	ready     chan struct{} // closed when the open attempt finished
	eng       *engine.Engine
	openErr   error
	cancel    context.CancelFunc
	closeOnce sync.Once
}

// New returns a server with every tool registered. Nothing is opened until
// Run (or the first tool call).
func New(opts Options) (*Server, error) {
	if opts.Open == nil {
		return nil, errors.New("mcpserver: Options.Open is required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	s := &Server{opts: opts, ready: make(chan struct{})}
	s.mcp = mcp.NewServer(&mcp.Implementation{
		Name:    "cairn",
		Title:   "cairn knowledge store",
		Version: opts.Version,
	}, &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       opts.Logger,
		// The store (and the embedding model, seconds of CPU for a large
		// one) starts opening once the handshake is done, so that it does
		// not compete with the handshake for the CPU.
		InitializedHandler: func(context.Context, *mcp.InitializedRequest) { s.start() },
	})
	if err := s.addTools(); err != nil {
		return nil, fmt.Errorf("mcpserver: %w", err)
	}
	return s, nil
}

const instructions = `cairn is a shared memory for agents. Before a task, search it (search_messages) for what earlier agents learned: decisions, patterns, policies, reflections. After a task, write what you learned (write_note for your own notes, store_message for a project channel such as project:{project}:decisions). Give each write a confidence between 0 and 1 and breadcrumbs (files, commits, issues, PRs) so others can check it.`

// start opens the engine in the background, once.
func (s *Server) start() {
	s.startOnce.Do(func() {
		ctx, cancel := context.WithCancel(context.Background())
		s.cancel = cancel
		go func() {
			defer close(s.ready)
			eng, err := s.opts.Open(ctx)
			if err != nil {
				s.opts.Logger.Error("open store", "err", err)
				s.openErr = err
				return
			}
			s.eng = eng
		}()
	})
}

// engine waits for the store to be open.
func (s *Server) engine(ctx context.Context) (*engine.Engine, error) {
	s.start()
	select {
	case <-s.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if s.openErr != nil {
		return nil, fmt.Errorf("the knowledge store could not be opened: %w", s.openErr)
	}
	return s.eng, nil
}

// Run serves one client over t until it disconnects or ctx ends. The store
// starts opening when the client's initialized notification arrives, or at
// the first tool call.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	return s.mcp.Run(ctx, t)
}

// Connect serves t in the background (tests and in-process clients); the
// returned session ends when the client disconnects.
func (s *Server) Connect(ctx context.Context, t mcp.Transport) (*mcp.ServerSession, error) {
	return s.mcp.Connect(ctx, t, nil)
}

// Close waits for the background open and closes the engine. It is
// idempotent.
func (s *Server) Close() error {
	var err error
	s.closeOnce.Do(func() {
		s.start()
		<-s.ready
		s.cancel()
		if s.eng != nil {
			err = s.eng.Close()
		}
	})
	return err
}
