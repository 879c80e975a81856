package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/cairn-dev/cairn/engine/search"
	"github.com/cairn-dev/cairn/vecstore"
)

// backendState is the vector worker of an Engine over a Store with a
// VectorQueue.
type backendState struct {
	q      VectorQueue
	set    VectorSet // the set of this process's model (ID 0: none)
	hasSet bool

	wake   chan struct{}
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// OpenBackend opens an Engine over be (see Store): messages, channels,
// search and vectors live in be, and the Engine keeps no data dir. The
// operations a Store engine serves are those every Store serves
// (writes, reads, listings, search, deletes, channels, agents, vector
// sets and the backlog, SyncVectors) and those of be's optional
// capabilities; the others (sessions, retention, backups, exports ...)
// return an *InvalidError naming the store. With an embedder be must be a
// VectorQueue: the Engine creates its model's vector set when none exists
// and, unless Options.NoVectorWorker, embeds queued messages in the
// background as the embedded store does. The Engine owns be: Close closes
// it.
//
// dir is the data dir that still holds config.toml and the models ("" for
// none); with Options.VectorStore.Open the Engine opens DIR/vectors for
// the collections a process serves besides messages (VectorStore), which
// therefore stay local to that data dir.
func OpenBackend(ctx context.Context, be Store, kind, dir string, opts Options) (*Engine, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	e := &Engine{db: &db{dir: dir, opts: opts, backend: kind}, store: be, bs: &backendState{wake: make(chan struct{}, 1)}}
	e.fillVectors = e.backendSyncVectors
	if opts.VectorStore.Open && dir != "" {
		st, err := vecstore.Open(ctx, filepath.Join(dir, VectorsDir),
			vecstore.Options{Logger: opts.Logger, AllowReset: opts.VectorStore.AllowReset})
		if err != nil {
			return nil, fmt.Errorf("engine: open vectors: %w", err)
		}
		e.vec = &vectors{store: st, wake: make(chan struct{}, 1)}
	}
	if emb := opts.Embedder; emb != nil {
		q, ok := be.(VectorQueue)
		if !ok {
			return nil, fmt.Errorf("engine: a %s store without a vector queue cannot hold the vectors of %s", kind, emb.ModelID())
		}
		e.bs.q = q
		sets, err := be.Sets(ctx)
		if err != nil {
			return nil, err
		}
		var set VectorSet
		found := false
		for _, s := range sets {
			if s.ModelID == emb.ModelID() {
				set, found = s, true
			}
		}
		if !found && len(sets) == 0 {
			if set, err = q.CreateSet(ctx, emb.ModelID(), emb.Dim(), opts.Now()); err != nil {
				return nil, err
			}
			found = true
		}
		if found {
			if set.Dim != emb.Dim() {
				return nil, fmt.Errorf("%w: model %s: the store's vectors have %d dimensions, the embedder %d", ErrDimensionMismatch, set.ModelID, set.Dim, emb.Dim())
			}
			e.bs.set, e.bs.hasSet = set, true
		}
	}
	if e.bs.hasSet && !opts.NoVectorWorker {
		wctx, cancel := context.WithCancel(context.Background())
		e.bs.cancel = cancel
		e.bs.wg.Add(1)
		go e.backendWorker(wctx)
	}
	return e, nil
}

// enterStore guards an operation every Store serves against Close (enter
// also refuses an Engine over a Store other than the data dir's).
func (e *Engine) enterStore() (func(), error) {
	e.mu.RLock()
	if e.mu.closed {
		e.mu.RUnlock()
		return nil, ErrClosed
	}
	return e.mu.RUnlock, nil
}

// unsupportedOnBackend is the error of an operation a Store engine does
// not serve, naming the exported method that was called.
func unsupportedOnBackend(kind string) error {
	op := "this operation"
	pcs := make([]uintptr, 8)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	for {
		f, more := frames.Next()
		name := f.Function[strings.LastIndex(f.Function, ".")+1:]
		if name != "" && unicode.IsUpper(rune(name[0])) && strings.Contains(f.Function, "/engine.") {
			op = name
			break
		}
		if !more {
			break
		}
	}
	return invalid("store", "%s is not available on a %s store yet (it needs a data dir)", op, kind)
}

func (e *Engine) closeBackend() error {
	if e.bs.cancel != nil {
		e.bs.cancel()
		e.bs.wg.Wait()
	}
	e.flushSearchesBeforeClose(context.Background())
	err := e.store.Close()
	if e.vec != nil && e.vec.store != nil {
		if verr := e.vec.store.Close(); err == nil {
			err = verr
		}
	}
	return err
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
			e.wakeBackend()
			changed = append(changed, out[i].ChannelID)
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
		c := r.cands.get(h.ID)
		c.kw, c.kwRank = h.Score, i+1
		c.kwEv = search.KeywordEvidence(h.Score, mass)
		if best > 0 {
			c.kwNorm = h.Score / best
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

// wakeBackend wakes the worker of a Store's vector queue, if any (the
// embedded store wakes its own on commit).
func (e *Engine) wakeBackend() {
	if e.bs == nil {
		return
	}
	select {
	case e.bs.wake <- struct{}{}:
	default:
	}
}

// backendWorker embeds queued messages until ctx ends: right after a
// local write and every second for other processes' writes.
func (e *Engine) backendWorker(ctx context.Context) {
	defer e.bs.wg.Done()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		n, err := e.backendDrainOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			e.opts.Logger.Warn("vector worker", "err", err)
		}
		if n > 0 && err == nil {
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-e.bs.wake:
		case <-tick.C:
		}
	}
}

// backendDrainOnce embeds one batch of queued messages of this process's
// set and returns how many it stored.
func (e *Engine) backendDrainOnce(ctx context.Context) (int, error) {
	qs, err := e.bs.q.Claim(ctx, e.bs.set.ID, embedBatch, 60*time.Second)
	if err != nil || len(qs) == 0 {
		return 0, err
	}
	texts := make([]string, len(qs))
	ids := make([]int64, len(qs))
	for i, q := range qs {
		ids[i] = q.ID
		texts[i] = embedText(e.opts.EmbedContext, vectorMeta{content: q.Content, sender: q.Sender, created: q.CreatedAt.UnixMilli()})
	}
	vecs, err := e.opts.Embedder.Embed(ctx, texts)
	if err != nil {
		return 0, fmt.Errorf("engine: embed: %w", err)
	}
	if len(vecs) != len(ids) {
		return 0, errors.New("engine: embed: the model returned a wrong number of vectors")
	}
	if err := e.bs.q.PutVectors(ctx, e.bs.set.ID, ids, vecs); err != nil {
		return 0, err
	}
	return len(ids), nil
}

// backendSyncVectors is SyncVectors on a Store: it embeds what is queued
// for this process's set until nothing is queued, waiting for the rows
// another process has leased (they come back to the queue if it dies).
func (e *Engine) backendSyncVectors(ctx context.Context, progress func(Progress)) error {
	if !e.bs.hasSet || e.opts.Embedder == nil {
		return nil
	}
	var total int64
	for {
		n, err := e.backendDrainOnce(ctx)
		if err != nil {
			return err
		}
		total += int64(n)
		if progress != nil {
			progress(Progress{Done: total, Total: total, Item: "embedding"})
		}
		if n > 0 {
			continue
		}
		sets, err := e.store.Sets(ctx)
		if err != nil {
			return err
		}
		if !slices.ContainsFunc(sets, func(s VectorSet) bool { return s.ID == e.bs.set.ID && s.Pending > 0 }) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}
