package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/cairn-dev/cairn/engine/search"
)

// OpenBackend opens an Engine over be (see Store): messages, channels,
// search and vectors live in be. kind names a store other than the data
// dir's in reports ("" for the data dir's own, engine/sqlite). With an
// embedder be readies its model's vectors (Store.OpenVectors) and, unless
// Options.NoVectorWorker, the Engine's worker fills them in the
// background. The Engine owns be: Close closes it (the caller closes it
// when OpenBackend fails).
//
// dir is the data dir that holds config.toml and the models ("" for
// none).
func OpenBackend(ctx context.Context, be Store, kind, dir string, opts Options) (*Engine, error) {
	opts, err := opts.WithDefaults()
	if err != nil {
		return nil, err
	}
	e := &Engine{dir: dir, opts: opts, backend: kind, store: be}
	e.worker.wake = make(chan struct{}, 1)
	be.Attach(Host{Wake: e.wakeVectors, Searches: &e.searches})
	if err := e.startVectors(ctx); err != nil {
		return nil, err
	}
	return e, nil
}

// StoreName names e's store in reports: "data dir" or "KIND store".
func (e *Engine) StoreName() string {
	if e.backend == "" {
		return "data dir"
	}
	return e.backend + " store"
}

// enterStore guards an operation against Close; call the returned func
// when done.
func (e *Engine) enterStore() (func(), error) {
	e.mu.RLock()
	if e.mu.closed {
		e.mu.RUnlock()
		return nil, ErrClosed
	}
	return e.mu.RUnlock, nil
}

func (p prepared) stored(now time.Time) StoredMessage {
	created := now
	if p.createdAt != 0 {
		created = fromMillis(p.createdAt)
	}
	return StoredMessage{
		Channel: Channel{ID: p.channel.id, ChannelType: p.channel.typ, Name: p.channel.name,
			OwnerAgentName: p.channel.ownerAgent, OwnerAgentProjectID: p.channel.ownerProj, ProjectID: p.channel.project},
		Sender: p.sender, Project: p.project, Content: p.content, ContentHash: p.hash,
		Confidence: p.confidence, Type: p.typ, Metadata: p.metadata, Mentions: p.mentions,
		WordCount: p.wordCount, HasBreadcrumbs: p.hasBreadcrumbs, CreatedAt: created.UTC().Truncate(time.Millisecond),
		Supersedes: p.supersedes,
	}
}

// writePrepared stores validated messages through the store, all or
// nothing.
func (e *Engine) writePrepared(ctx context.Context, ps []prepared) ([]WriteResult, error) {
	done, err := e.enterStore()
	if err != nil {
		return nil, err
	}
	defer done()
	if len(ps) == 0 {
		return []WriteResult{}, nil
	}
	now := e.opts.Now()
	ms := make([]StoredMessage, len(ps))
	for i, p := range ps {
		ms[i] = p.stored(now)
	}
	out, err := e.store.Write(ctx, ms, now)
	if err != nil {
		return nil, err
	}
	e.addSearchesAfterWrite(ctx)
	var changed []string
	for i := range out {
		out[i].Redactions = ps[i].redactions
		if out[i].Created {
			e.wakeVectors()
			if e.opts.Observer != nil {
				changed = append(changed, out[i].ChannelID)
			}
		}
	}
	if len(changed) > 0 {
		e.committed(changed...)
	}
	return out, nil
}

// agentNamesAmong returns which of names (lower-cased) name an agent.
func (e *Engine) agentNamesAmong(ctx context.Context, names []any) (map[string]bool, error) {
	strs := make([]string, len(names))
	for i, n := range names {
		strs[i] = n.(string)
	}
	return e.store.Senders(ctx, strs)
}

// addKeywordHits adds the keyword side's hits, best first, with their
// keyword evidence against the query's mass and their scores normalized
// by the best (for FusionWeighted).
func (r *searchRun) addKeywordHits(hits []ScoredID, mass float64) {
	best := 0.0
	for _, h := range hits {
		best = max(best, h.Score)
	}
	for i, h := range hits {
		c := r.cands.Get(h.ID)
		c.BM25, c.KeywordRank = h.Score, i+1
		c.Keyword = search.KeywordEvidence(h.Score, mass)
		if best > 0 {
			c.KeywordNorm = h.Score / best
		}
	}
}

// embedQuery searches set: it notes a backlog and embeds the query into
// r.qvec. ok is false when the semantic side stops: with an error, or
// without one when hybrid mode fell back to keyword (the query could not
// be embedded).
func (r *searchRun) embedQuery(ctx context.Context, emb Embedder, set VectorSet) (ok bool, err error) {
	r.set, r.vecUsed = set, true
	if note, ok := backlogNote(set); ok {
		r.notes = append(r.notes, note)
	}
	vs, err := emb.Embed(ctx, []string{r.query})
	switch {
	case err != nil && (r.mode == ModeSemantic || ctx.Err() != nil):
		return false, fmt.Errorf("engine: embed query: %w", err)
	case err != nil:
		// Hybrid degrades to keyword rather than failing.
		r.fallBack(NoteEmbedFailed, "the query could not be embedded: "+err.Error())
		return false, nil
	case len(vs) != 1 || len(vs[0]) != set.Dim:
		return false, fmt.Errorf("%w: query vector has the wrong dimension", ErrDimensionMismatch)
	}
	r.qvec = vs[0]
	return true, nil
}
