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
	// Open opens the store. It is called in the background when the
	// server starts, so that the handshake never waits for it, and again
	// at the next tool call after a failed attempt (a store locked by a
	// migration, a data dir made readable, a model put in place).
	Open func(ctx context.Context) (*engine.Engine, error)
	// Version is reported to clients in the initialize result.
	Version string
	// Logger receives operational messages; nil discards them.
	Logger *slog.Logger
	// Tools names the tool sets to serve (ToolSets); nil serves core.
	Tools []string
	// MaxResultBytes bounds the JSON of a search's or a listing's
	// messages (0: DefaultMaxResultBytes): the messages past it are left
	// out whole, and the result says "truncated": true with
	// "max_result_bytes".
	MaxResultBytes int64
	// ReadOnly, when not empty, says why every write is refused: the data
	// dir is not writable by this process. The write tools stay listed
	// (an agent's instructions name them) and answer the tool error
	// read_only with this text, before the engine is asked.
	ReadOnly string
}

// DefaultMaxResultBytes is Options.MaxResultBytes' default (config
// server.max_result_bytes).
const DefaultMaxResultBytes = 16 << 20

// Server is an MCP server over one engine.
type Server struct {
	opts Options
	mcp  *mcp.Server

	mu      sync.Mutex
	open    *openAttempt // the latest attempt; nil before the first
	closed  bool
	ctx     context.Context // what Open gets; ends at Close
	cancel  context.CancelFunc
	closeMu sync.Once
}

// openAttempt is one call of Options.Open; done is closed when it returned.
type openAttempt struct {
	done chan struct{}
	eng  *engine.Engine
	err  error
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
	if opts.MaxResultBytes <= 0 {
		opts.MaxResultBytes = DefaultMaxResultBytes
	}
	sets, err := toolSets(opts.Tools)
	if err != nil {
		return nil, err
	}
	s := &Server{opts: opts}
	s.ctx, s.cancel = context.WithCancel(context.Background())
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
	if err := s.addTools(sets); err != nil {
		return nil, fmt.Errorf("mcpserver: %w", err)
	}
	return s, nil
}

const instructions = `cairn is a shared memory for agents. Before a task, search it (search_messages) for what earlier agents learned: decisions, patterns, policies, reflections. After a task, write what you learned with store_message (to agent-notes:{you} for your own notes, to a project channel such as project:{project}:decisions for the team). Give each write a confidence between 0 and 1 and breadcrumbs (files, commits, issues, PRs) so others can check it.`

// start returns the open attempt to wait for: the one under way or
// succeeded, else a new one in the background (the first, or a retry after
// a failure). After Close it returns nil.
func (s *Server) start() *openAttempt {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	if a := s.open; a != nil {
		select {
		case <-a.done:
			if a.err == nil {
				return a
			}
		default:
			return a
		}
	}
	a := &openAttempt{done: make(chan struct{})}
	s.open = a
	go func() {
		defer close(a.done)
		a.eng, a.err = s.opts.Open(s.ctx)
		if a.err != nil {
			s.opts.Logger.Error("open store", "err", a.err)
		}
	}()
	return a
}

// engine waits for the store to be open, trying again if the last attempt
// failed.
func (s *Server) engine(ctx context.Context) (*engine.Engine, error) {
	a := s.start()
	if a == nil {
		return nil, errors.New("the server is shutting down")
	}
	select {
	case <-a.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if a.err != nil {
		return nil, fmt.Errorf("the knowledge store could not be opened: %w", a.err)
	}
	return a.eng, nil
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

// Close waits for an open attempt under way, ends the context the engine
// was opened with, and closes the engine. It is idempotent.
func (s *Server) Close() error {
	var err error
	s.closeMu.Do(func() {
		s.mu.Lock()
		s.closed = true
		a := s.open
		s.mu.Unlock()
		if a != nil {
			<-a.done
		}
		s.cancel()
		if a != nil && a.eng != nil {
			err = a.eng.Close()
		}
	})
	return err
}
