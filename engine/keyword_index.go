package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/cairn-dev/cairn/fts"
)

// keywordIndex is the in-memory keyword index (fts.Index) of the messages:
// built in the background after the first keyword search of the process
// (a one-shot CLI search never pays for it), then caught up from SQLite at
// every search, so it ranks exactly like FTS5 at a fraction of the cost.
// Until it is ready, and for queries it cannot rank exactly, searches run
// on FTS5.
type keywordIndex struct {
	ix     *fts.Index
	once   sync.Once
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	warned sync.Once
	// off forces the FTS5 path (benchmarks compare the two).
	off atomic.Bool
}

func newKeywordIndex(t *fts.Table) *keywordIndex {
	k := &keywordIndex{ix: t.NewIndex()}
	k.ctx, k.cancel = context.WithCancel(context.Background())
	return k
}

// close stops a build in progress and waits for it.
func (k *keywordIndex) close() {
	k.cancel()
	k.wg.Wait()
}

// keywordHits returns the depth best keyword hits of query among the
// messages passing the filter (SQL over alias c), best first, without
// snippets, and the keyword text that ranked them (query itself, or query
// without its frequent terms on the FTS5 path: see pruneTerms).
func (e *Engine) keywordHits(ctx context.Context, query, filter string, args []any, depth int) ([]fts.Hit, string, error) {
	// Filters depend only on the message row and its channel's type, which
	// never change: the index may cache the rows a filter keeps.
	req := fts.Request{Text: query, Filter: filter, Args: args, Limit: depth, NoSnippets: true, CacheFilter: true}
	if k := e.kw; k != nil && !k.off.Load() {
		k.once.Do(func() {
			k.wg.Add(1)
			go func() {
				defer k.wg.Done()
				if err := k.ix.Build(k.ctx, e.r); err != nil && !errors.Is(err, context.Canceled) {
					e.opts.Logger.Warn("keyword index build failed; keyword search stays on FTS5", "err", err)
				}
			}()
		})
		hits, ok, err := k.ix.Search(ctx, e.r, req)
		if err != nil {
			return nil, "", fmt.Errorf("engine: search: %w", classify(err))
		}
		if ok {
			return hits, query, nil
		}
		if err := k.ix.Err(); err != nil {
			k.warned.Do(func() { e.opts.Logger.Warn("keyword index disabled, keyword search stays on FTS5", "err", err) })
		}
	}
	text, err := e.pruneTerms(ctx, query)
	if err != nil {
		return nil, "", err
	}
	req.Text = text
	hits, err := e.fts.Search(ctx, e.r, req)
	if err != nil {
		return nil, "", fmt.Errorf("engine: search: %w", classify(err))
	}
	return hits, text, nil
}
