package sqlite

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/cairn-dev/cairn/fts"
	"github.com/cairn-dev/cairn/fts/ftssql"
)

// memKeywordIndex owns the in-memory keyword index of the messages, an
// fts.Index: the BM25 twin of the FTS5 table (not to be confused with
// index/, the HNSW graphs of the vectors). It is built in the background
// after the first keyword search of the process (not at all in a read-only
// engine, a one-shot command's), then caught up from SQLite at every search, so it
// ranks exactly like FTS5 at a fraction of the cost. Until it is ready, and
// for queries it cannot rank exactly, searches run on FTS5.
type memKeywordIndex struct {
	mem    *fts.Index
	once   sync.Once
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	warned sync.Once
	// off forces the FTS5 path (benchmarks compare the two).
	off atomic.Bool
}

func newMemKeywordIndex(t *fts.Table) *memKeywordIndex {
	k := &memKeywordIndex{mem: t.NewIndex()}
	k.ctx, k.cancel = context.WithCancel(context.Background())
	return k
}

// close stops a build in progress and waits for it.
func (k *memKeywordIndex) close() {
	k.cancel()
	k.wg.Wait()
}

// startBuild starts the background build, once per process.
func (st *Store) startKeywordBuild(k *memKeywordIndex) {
	k.once.Do(func() {
		k.wg.Add(1)
		go func() {
			defer k.wg.Done()
			if err := k.mem.Build(k.ctx, ftssql.Of(st.r)); err != nil && !errors.Is(err, context.Canceled) {
				st.opts.Logger.Warn("keyword index build failed; keyword search stays on FTS5", "err", err)
			}
		}()
	})
}

// keywordHits returns the depth best keyword hits of q among the messages
// passing req's filter (SQL over alias c), best first, without snippets, the
// query that ranked them: q without its frequent terms
// (fts.Table.PruneFrequent), by either path, so that a query ranks the same
// before the in-memory index is ready, in a one-shot process and after;
// and that query's mass (fts.QueryMass) by the same path's counts.
func (st *Store) keywordHits(ctx context.Context, q fts.Query, req fts.Request, depth int) ([]fts.Hit, fts.Query, float64, error) {
	req.Query, req.Limit, req.NoSnippets = q, depth, true
	rq := ftssql.Of(st.r)
	// A read-only engine serves a one-shot command: building the index
	// would cost that process more CPU than its whole search.
	if k := st.kw; k != nil && !k.off.Load() && !st.opts.ReadOnly {
		st.startKeywordBuild(k)
		hits, ranked, ok, err := k.mem.SearchPruned(ctx, rq, req)
		if err != nil {
			return nil, q, 0, fmt.Errorf("engine: search: %w", classify(err))
		}
		if ok {
			if mass, ok := k.mem.Mass(ranked); ok {
				return hits, ranked, mass, nil
			}
		}
		if err := k.mem.Err(); err != nil {
			k.warned.Do(func() { st.opts.Logger.Warn("keyword index disabled, keyword search stays on FTS5", "err", err) })
		}
	}
	pruned, err := st.fts.PruneFrequent(ctx, rq, q)
	if err != nil {
		return nil, q, 0, fmt.Errorf("engine: search: %w", classify(err))
	}
	req.Query = pruned
	hits, err := st.fts.Search(ctx, rq, req)
	if err != nil {
		return nil, q, 0, fmt.Errorf("engine: search: %w", classify(err))
	}
	mass, err := st.fts.Mass(ctx, rq, pruned)
	if err != nil {
		return nil, q, 0, fmt.Errorf("engine: search: %w", classify(err))
	}
	return hits, pruned, mass, nil
}

// SetKeywordIndex turns the in-memory keyword index off (FTS5 only) or on,
// for benchmarks and tests that compare the two paths. With on, it builds
// the index now (synchronously) when it is not built yet, and reports
// whether it has diverged from FTS5.
func (s *Store) SetKeywordIndex(on bool) error {
	s.kw.off.Store(!on)
	if on && !s.kw.mem.Ready() {
		s.kw.once.Do(func() {})
		if err := s.kw.mem.Build(s.kw.ctx, ftssql.Of(s.r)); err != nil {
			return err
		}
	}
	if on {
		return s.kw.mem.Err() // diverged: searches would silently use FTS5
	}
	return nil
}

// KeywordIndexStats returns the in-memory keyword index's size.
func (s *Store) KeywordIndexStats() fts.IndexStats { return s.kw.mem.Stats() }

// BuildFreshKeywordIndex builds a new in-memory keyword index from SQLite
// (the work of the first search's background build) and installs it, for
// benchmarks that time that build.
func (s *Store) BuildFreshKeywordIndex() error {
	k := newMemKeywordIndex(s.fts)
	k.once.Do(func() {})
	if err := k.mem.Build(k.ctx, ftssql.Of(s.r)); err != nil {
		return err
	}
	old := s.kw
	k.off.Store(old.off.Load())
	s.kw = k
	old.close()
	return nil
}
