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

	"github.com/cairn-dev/cairn/fts"
	"github.com/cairn-dev/cairn/vecstore"
	"github.com/cairn-dev/cairn/vecstore/where"
)

// backendState is an Engine's Backend and its vector worker.
type backendState struct {
	be     Backend
	set    VectorSet // the set of this process's model (ID 0: none)
	hasSet bool

	wake   chan struct{}
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// OpenBackend opens an Engine over be (see Backend): messages, channels,
// search and vectors live in be, and the Engine keeps no data dir. The
// operations beyond messages and search are served when be has their
// optional capability (engine/backend_ops.go); without it, and for
// backups, they return an *InvalidError naming the store. With an embedder the
// Engine creates its model's vector set when none exists and, unless
// Options.NoVectorWorker, embeds queued messages in the background as the
// SQLite engine does. The Engine owns be: Close closes it.
//
// dir is the data dir that still holds config.toml and the models ("" for
// none); with Options.VectorStore.Open the Engine opens DIR/vectors for
// the collections a process serves besides messages (VectorStore), which
// therefore stay local to that data dir.
func OpenBackend(ctx context.Context, be Backend, kind, dir string, opts Options) (*Engine, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	e := &Engine{db: &db{dir: dir, opts: opts, backend: kind}, bs: &backendState{be: be, wake: make(chan struct{}, 1)}}
	if opts.VectorStore.Open && dir != "" {
		st, err := vecstore.Open(ctx, filepath.Join(dir, VectorsDir),
			vecstore.Options{Logger: opts.Logger, AllowReset: opts.VectorStore.AllowReset})
		if err != nil {
			return nil, fmt.Errorf("engine: open vectors: %w", err)
		}
		e.vec = &vectors{store: st, wake: make(chan struct{}, 1)}
	}
	if emb := opts.Embedder; emb != nil {
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
			if set, err = be.CreateSet(ctx, emb.ModelID(), emb.Dim(), opts.Now()); err != nil {
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

// enterBackend is enter for the operations a Backend engine serves.
func (e *Engine) enterBackend() (func(), error) {
	e.mu.RLock()
	if e.mu.closed {
		e.mu.RUnlock()
		return nil, ErrClosed
	}
	return e.mu.RUnlock, nil
}

// unsupportedOnBackend is the error of an operation a Backend engine does
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
	err := e.bs.be.Close()
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
	}
}

// backendWrite is StoreMessages on a Backend.
func (e *Engine) backendWrite(ctx context.Context, ps []prepared) ([]WriteResult, error) {
	done, err := e.enterBackend()
	if err != nil {
		return nil, err
	}
	defer done()
	now := e.opts.Now()
	ms := make([]StoredMessage, len(ps))
	for i, p := range ps {
		ms[i] = p.stored(now)
	}
	out, err := e.bs.be.Write(ctx, ms, now)
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].Redactions = ps[i].redactions
		if out[i].Created {
			e.wakeBackend()
		}
	}
	return out, nil
}

func (e *Engine) backendGetMessages(ctx context.Context, ids []int64) ([]Message, error) {
	done, err := e.enterBackend()
	if err != nil {
		return nil, err
	}
	defer done()
	if len(ids) == 0 {
		return []Message{}, nil
	}
	ms, err := e.bs.be.Messages(ctx, ids)
	if err != nil {
		return nil, err
	}
	return inOrder(ids, ms), nil
}

func (e *Engine) backendDelete(ctx context.Context, id int64) error {
	done, err := e.enterBackend()
	if err != nil {
		return err
	}
	defer done()
	ok, err := e.bs.be.Delete(ctx, id)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("message id %d: %w", id, ErrNotFound)
	}
	return nil
}

// agentNamesAmong returns which of names (lower-cased) name an agent.
func (e *Engine) agentNamesAmong(ctx context.Context, names []any) (map[string]bool, error) {
	if e.bs != nil {
		strs := make([]string, len(names))
		for i, n := range names {
			strs[i] = n.(string)
		}
		return e.bs.be.Senders(ctx, strs)
	}
	rows, err := e.r.QueryContext(ctx, "SELECT DISTINCT lower(name) FROM agents WHERE lower(name) IN ("+placeholders(len(names))+")", names...)
	if err != nil {
		return nil, fmt.Errorf("engine: search: %w", classify(err))
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, fmt.Errorf("engine: search: %w", classify(err))
		}
		out[n] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("engine: search: %w", classify(err))
	}
	return out, nil
}

// backendSearch is SearchDetailed on a Backend: the same plan, query
// shape, fusion and ranking; retrieval, facts and pending vectors come
// from the Backend.
func (e *Engine) backendSearch(ctx context.Context, p searchPlan) (SearchResponse, error) {
	done, err := e.enterBackend()
	if err != nil {
		return SearchResponse{}, err
	}
	defer done()
	be, err := e.searchBackend(p) // engine/backend_filter.go
	if err != nil {
		return SearchResponse{}, err
	}
	if p.listing() {
		ms, err := be.List(ctx, p.filter.where, p.limit, ListByConfidence)
		if err != nil {
			return SearchResponse{}, err
		}
		resp := SearchResponse{Mode: p.mode, Profile: p.rank.Profile, Results: []SearchResult{}}
		for _, m := range ms {
			rec := p.rank.listingRecency(p.now.Sub(m.CreatedAt))
			resp.Results = append(resp.Results, SearchResult{Message: m, Score: rec,
				Scores: Scores{Confidence: m.Confidence, Recency: rec, Final: rec}})
		}
		return resp, e.attachResultChecks(ctx, resp.Results)
	}
	run, err := e.newSearchRun(ctx, p)
	if err != nil {
		return SearchResponse{}, err
	}
	if err := e.backendSemantic(ctx, run); err != nil {
		return SearchResponse{}, err
	}
	if run.mode != ModeSemantic {
		q := fts.ParseQuery(run.query)
		run.kwQuery = q
		stems, _ := q.Stems()
		if len(stems) > 0 {
			hits, err := be.Keyword(ctx, stems, p.filter.where, p.depth)
			if err != nil {
				return SearchResponse{}, err
			}
			run.addKeywordHits(hits)
		}
	}
	if run.mode == ModeHybrid && len(run.cands) > 0 {
		var need []int64
		for id, c := range run.cands {
			if !c.hasSim {
				need = append(need, id)
			}
		}
		if len(need) > 0 {
			sims, err := be.Similarities(ctx, run.set.ID, run.qvec, need)
			if err != nil {
				return SearchResponse{}, err
			}
			for id, s := range sims {
				c := run.cands[id]
				c.sim, c.hasSim = s, true
			}
		}
	}
	fuse(run.mode, p.fusion, keywordWeight(run.query, e.opts.QueryAnalysis), run.cands)
	facts, err := be.Messages(ctx, run.cands.ids())
	if err != nil {
		return SearchResponse{}, err
	}
	for _, f := range facts {
		if c := run.cands[f.ID]; c != nil {
			c.fused = run.boosts.apply(c.fused, f.SenderID, f.CreatedAt)
		}
	}
	if err := e.markStale(ctx, run); err != nil {
		return SearchResponse{}, err
	}
	ranked := rankCandidates(p, facts, run.cands)
	var pending map[int64]bool
	if run.vecUsed {
		ids := make([]int64, len(ranked))
		for i, r := range ranked {
			ids[i] = r.Message.ID
		}
		if pending, err = be.Pending(ctx, run.set.ID, ids); err != nil {
			return SearchResponse{}, err
		}
	}
	req := fts.Request{Query: run.kwQuery}
	for i := range ranked {
		r := &ranked[i]
		if p.mode != ModeKeyword {
			r.VectorMissing = !run.vecUsed || pending[r.Message.ID] || !run.cands[r.Message.ID].hasSim
		}
		if r.KeywordScore > 0 {
			r.Snippet, _ = fts.SnippetOf(req, r.Message.Content)
		}
	}
	if err := e.attachResultChecks(ctx, ranked); err != nil {
		return SearchResponse{}, err
	}
	return run.response(ranked), nil
}

// addKeywordHits adds the keyword side's hits, best first, with their
// scores normalized by the best.
func (r *searchRun) addKeywordHits(hits []ScoredID) {
	best := 0.0
	for _, h := range hits {
		best = max(best, h.Score)
	}
	for i, h := range hits {
		c := r.cands.get(h.ID)
		c.kw, c.kwRank = h.Score, i+1
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

// backendSemantic is the semantic step on a Backend.
func (e *Engine) backendSemantic(ctx context.Context, r *searchRun) error {
	if r.mode == ModeKeyword {
		return nil
	}
	emb := e.opts.Embedder
	if emb == nil || !e.bs.hasSet {
		kind, reason := NoteNoModel, "no embedding model is configured"
		if emb != nil {
			kind, reason = NoteOtherModel, "the store's vectors are of another model than "+emb.ModelID()
		}
		if r.mode == ModeSemantic {
			return noSemanticSearch(kind, reason)
		}
		r.fallBack(kind, reason)
		return nil
	}
	set := e.bs.set
	if sets, err := e.bs.be.Sets(ctx); err == nil {
		for _, s := range sets {
			if s.ID == set.ID {
				set = s
			}
		}
	}
	if ok, err := r.embedQuery(ctx, emb, set); !ok {
		return err
	}
	be, err := e.searchBackend(r.plan)
	if err != nil {
		return err
	}
	hits, err := be.Nearest(ctx, set.ID, r.qvec, r.plan.filter.where, r.plan.depth)
	if err != nil {
		return err
	}
	for i, h := range hits {
		c := r.cands.get(h.ID)
		c.sim, c.hasSim, c.semRank = h.Score, true, i+1
	}
	return nil
}

func (e *Engine) wakeBackend() {
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
	qs, err := e.bs.be.Claim(ctx, e.bs.set.ID, embedBatch, 60*time.Second)
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
	if err := e.bs.be.PutVectors(ctx, e.bs.set.ID, ids, vecs); err != nil {
		return 0, err
	}
	return len(ids), nil
}

// backendSyncVectors is SyncVectors on a Backend: it embeds what is queued
// for this process's set until nothing is queued, waiting for the rows
// another process has leased (they come back to the queue if it dies).
func (e *Engine) backendSyncVectors(ctx context.Context, progress func(Progress)) error {
	done, err := e.enterBackend()
	if err != nil {
		return err
	}
	defer done()
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
		sets, err := e.bs.be.Sets(ctx)
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

func (e *Engine) backendVectorSets(ctx context.Context) ([]VectorSet, error) {
	done, err := e.enterBackend()
	if err != nil {
		return nil, err
	}
	defer done()
	return e.bs.be.Sets(ctx)
}

// backendListChannels is ListChannels on a Backend: scopes all and
// project (channels of a project), ordered by id.
func (e *Engine) backendListChannels(ctx context.Context, scope Scope) ([]Channel, error) {
	done, err := e.enterBackend()
	if err != nil {
		return nil, err
	}
	defer done()
	if scope.Kind != "" && scope.Kind != ScopeAll {
		return nil, unsupportedOnBackend(e.backend)
	}
	all, err := e.bs.be.Channels(ctx)
	if err != nil {
		return nil, err
	}
	out := []Channel{}
	for _, c := range all {
		if scope.Project == "" || c.ProjectID == scope.Project {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b Channel) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// backendVectorBacklog is VectorBacklog on a Backend.
func (e *Engine) backendVectorBacklog(ctx context.Context, model string) (VectorBacklog, error) {
	done, err := e.enterBackend()
	if err != nil {
		return VectorBacklog{}, err
	}
	defer done()
	var b VectorBacklog
	if b.Messages, err = e.bs.be.Count(ctx); err != nil {
		return b, err
	}
	sets, err := e.bs.be.Sets(ctx)
	if err != nil {
		return b, err
	}
	b.chooseModel(model, e.opts.Embedder, sets)
	b.Queued = b.Messages
	for _, s := range sets {
		if s.ModelID == b.Model {
			b.Set, b.Queued = s.ID, s.Pending
		}
	}
	return b, nil
}

func (e *Engine) backendAgents(ctx context.Context, project string) ([]Agent, error) {
	done, err := e.enterBackend()
	if err != nil {
		return nil, err
	}
	defer done()
	return e.bs.be.Agents(ctx, project)
}

// backendAgentNotes is GetAgentNotes on a Backend.
func (e *Engine) backendAgentNotes(ctx context.Context, agent, project string, limit int) ([]Message, error) {
	done, err := e.enterBackend()
	if err != nil {
		return nil, err
	}
	defer done()
	var chans []where.Value
	if project != "" {
		chans = append(chans, where.String(NotesChannelID(agent, project)))
	} else {
		all, err := e.bs.be.Channels(ctx)
		if err != nil {
			return nil, err
		}
		for _, c := range all {
			if c.ChannelType == ChannelAgentNotes && c.OwnerAgentName == agent {
				chans = append(chans, where.String(c.ID))
			}
		}
		if len(chans) == 0 {
			return []Message{}, nil
		}
	}
	return e.bs.be.List(ctx, where.In("channel_id", chans...), limit, ListByTime)
}

// backendChannelMessages is GetChannelMessages on a Backend.
func (e *Engine) backendChannelMessages(ctx context.Context, channel string, maxAge time.Duration, limit int) ([]Message, error) {
	done, err := e.enterBackend()
	if err != nil {
		return nil, err
	}
	defer done()
	all, err := e.bs.be.Channels(ctx)
	if err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(all, func(c Channel) bool { return c.ID == channel }) {
		return nil, fmt.Errorf("channel %q: %w", channel, ErrNotFound)
	}
	since := int64(0)
	if maxAge > 0 {
		since = e.opts.Now().Add(-maxAge).UnixMilli()
	}
	f := where.And(where.Eq("channel_id", where.String(channel)), where.Gte("timestamp", where.Int(since)))
	return e.bs.be.List(ctx, f, limit, ListByTime)
}
