package engine

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/engine/search"
	"github.com/cairn-dev/cairn/fts"
)

// SearchMode selects the retrieval of a search.
type SearchMode string

// Search modes.
const (
	ModeHybrid   SearchMode = "hybrid"   // keyword and semantic lists, fused (default)
	ModeSemantic SearchMode = "semantic" // nearest vectors only
	ModeKeyword  SearchMode = "keyword"  // BM25 over FTS5 only
)

// Fusion selects how hybrid mode fuses its two lists into one relevance
// in [0,1].
type Fusion string

// Fusions. See DefaultFusion for the measured choice. Whatever the
// fusion, a result's relevance (Scores.Fused, the floor's measure) is the
// calibrated one (engine/search); the fusion decides only the order.
const (
	// FusionCalibrated orders by the calibrated relevance itself: the
	// probability, fitted on the dev sets, that a message with this
	// similarity and this keyword evidence is relevant (search.Relevance).
	// Both features are absolute, so nothing is stretched over the result
	// list: a flat or tiny list keeps its low scores.
	FusionCalibrated Fusion = "calibrated"
	// FusionWeighted: w*keyword + (1-w)*similarity (w = KeywordWeight),
	// where keyword is the
	// BM25 score divided by the best BM25 score of the query's keyword hits
	// and similarity the raw cosine similarity (clamped to [0,1]) computed
	// exactly for every candidate that has a vector. Because cosine is not
	// re-normalized per query, a vector side whose similarities are flat
	// (a model that carries no signal for the query) shifts every candidate
	// by about the same amount and barely changes the keyword order.
	FusionWeighted Fusion = "weighted"
	// FusionMinMax: like FusionWeighted but both sides min-max normalized
	// over the candidates (classic normalized score fusion). With a vector
	// side that carries no signal it is worse than FusionWeighted, which
	// is why FusionWeighted stays available.
	FusionMinMax Fusion = "minmax"
	// FusionRRF: reciprocal rank fusion, 1/(60+rank_keyword) +
	// 1/(60+rank_semantic), divided by its maximum 2/61 (search.FuseRRF).
	FusionRRF Fusion = "rrf"
)

// DefaultFusion is the fusion of hybrid mode when SearchRequest.Fusion is
// "" (bench/README.md, "Calibrated relevance": at least as good as the
// better side on every dev set and LoCoMo dev conversation).
const DefaultFusion = FusionCalibrated

// KeywordWeight is the keyword side's share in FusionWeighted and
// FusionMinMax (the semantic side has the rest) for a query of keywords;
// a question in words has QuestionKeywordWeight (engine/queryshape.go).
// With all-MiniLM-L6-v2 the
// semantic side is the stronger one on every dev set (CoSQA: nDCG@10 0.603
// against BM25's 0.384); minmax at 0.1 is the only setting of the measured
// grid at least as good as the better side on all four (0.05-0.12 on
// CoSQA), and keyword still decides among near-equal similarities (names,
// numbers, identifiers). Every fusion constant lives here, next to
// DefaultFusion.
const KeywordWeight = 0.1

// QuestionKeywordWeight is the keyword side's share for a query shaped as
// a question in words ("When did Caroline go to the support group?",
// Cranfield's "what problems of heat conduction ... have been solved ."):
// there the words a question shares with its answer (names, places,
// objects) carry more than in a query of keywords, where the model is
// better at matching paraphrases and code. Measured on LoCoMo (minmax
// hybrid R@10 with the reply lift: 0.753 at 0.15, 0.771 at 0.2, 0.782-0.786
// from 0.25 to 0.35) and Cranfield (nDCG@10 0.403 at 0.1, 0.414 at 0.3);
// 7 of CoSQA's 500 queries have this shape (bench/README.md).
const QuestionKeywordWeight = 0.3

// Scores is a result's score breakdown. Every component is in [0,1].
type Scores struct {
	// Similarity is the cosine similarity of the query's and the message's
	// vectors (clamped at 0; 0 when not computed or the vector is missing).
	Similarity float64 `json:"similarity"`
	// Context is, for a conversation turn scored with its neighbouring
	// turn (engine/turncontext.go), that similarity when it is above
	// Similarity: the relevance was computed from it.
	Context float64 `json:"context,omitempty"`
	// Keyword is the message's keyword evidence (search.KeywordEvidence):
	// its BM25 score as a share of the most the query can score, the same
	// whatever else the search found (0 when it matched no term).
	Keyword float64 `json:"keyword"`
	// Fused is the calibrated relevance: roughly the probability that the
	// message is relevant to the query, the same across queries, stores
	// and modes (search.Relevance). The relevance floor applies to it.
	Fused      float64 `json:"fused"`
	Confidence float64 `json:"confidence"`
	Recency    float64 `json:"recency"`
	// Final orders the results (Ranking).
	Final float64 `json:"final"`
	// Demoted says Final was multiplied by Ranking.StaleFactor: the
	// message's breadcrumbs changed or are gone at the repository's HEAD.
	Demoted bool `json:"demoted,omitempty"`
}

// SearchResponse is Search's result with what the search actually did.
type SearchResponse struct {
	Results []SearchResult `json:"results"`
	// Mode is the mode that ran: hybrid falls back to keyword when there
	// are no usable vectors (see Notes).
	Mode    SearchMode `json:"mode"`
	Profile string     `json:"profile"`
	Fusion  Fusion     `json:"fusion,omitempty"`
	// Model is the embedding model of the vectors searched ("" when none).
	Model string `json:"model,omitempty"`
	// Notes explain degraded searches (no embedding model, another model's
	// vectors, vectors still being built).
	Notes []SearchNote `json:"notes,omitempty"`
	// BelowFloor is how many messages were found but left out as less
	// likely relevant than the relevance floor (SearchRequest.MinScore).
	BelowFloor int `json:"below_floor,omitempty"`
}

// NoteKind classifies a SearchNote, so that a caller branches on the kind
// and never on the text.
type NoteKind string

// Note kinds. The first four mean hybrid mode fell back to keyword search
// (SearchResponse.Mode is then ModeKeyword).
const (
	// NoteNoModel: no embedding model is configured in this process.
	NoteNoModel NoteKind = "no_model"
	// NoteOtherModel: the stored vectors are of another model than this
	// process's embedding model (cairn rebuild switches them).
	NoteOtherModel NoteKind = "other_model"
	// NoteNoVectors: there are no vectors of this process's model.
	NoteNoVectors NoteKind = "no_vectors"
	// NoteEmbedFailed: the query could not be embedded.
	NoteEmbedFailed NoteKind = "embed_failed"
	// NoteVectorsBuilding: the vectors of the model are still being built
	// or filled (messages queued for their vector); messages without one
	// yet were found by keyword only (VectorMissing).
	NoteVectorsBuilding NoteKind = "vectors_building"
)

// SearchNote says why a search ran degraded.
type SearchNote struct {
	Kind NoteKind `json:"kind"`
	// Message says it in words a user can act on.
	Message string `json:"message"`
}

func (n SearchNote) String() string { return n.Message }

// Fallback reports whether the note means hybrid mode ran as keyword
// search.
func (n SearchNote) Fallback() bool {
	switch n.Kind {
	case NoteNoModel, NoteOtherModel, NoteNoVectors, NoteEmbedFailed:
		return true
	}
	return false
}

// Search runs one search. See SearchDetailed.
func (e *Engine) Search(ctx context.Context, req SearchRequest) ([]SearchResult, error) {
	r, err := e.SearchDetailed(ctx, req)
	return r.Results, err
}

// SearchDetailed runs one search: filters first on both sides (SQL WHERE
// for FTS5, a vecstore where for vectors), then the mode's retrieval,
// fusion in hybrid mode, and the ranking profile. With an empty query it
// lists the filtered messages by recency, then confidence, then id.
//
// Semantic mode without usable vectors fails with ErrNoModel (no embedding
// model) or ErrEmbedderMismatch (vectors of another model only); hybrid
// mode then runs as keyword search and says so in Notes.
//
// The search is a pipeline of steps, each a method or function of its own
// (engine/hybrid.go): plan (validate and resolve the request), semantic
// (nearest vectors), keyword (BM25), exactSimilarities (cosine for keyword
// hits the vector list missed), turnContext (conversation turns also
// scored with their neighbours, engine/turncontext.go), fuse
// (one relevance per candidate), the
// boosts of the senders and times the query names and liftReplies
// (search.Boosts, engine/replies.go),
// blendRanks (hybrid mode in a conversation: fused ranks blended with
// semantic ranks with turn context, search.BlendRanks), rankCandidates
// (ranking profile, order, limit) and hydrate (full messages,
// vector_missing, snippets). The steps that need no store (query
// analysis, calibration, fusion, the rank blend, the ranking formula)
// are engine/search's; this orchestrates them around the store's reads.
// The steps up to turnContext run two at a time, on the caller's goroutine
// and one more, joined before the next step (retrieve, engine/retrieve.go):
// the query's embedding beside the keyword side.
func (e *Engine) SearchDetailed(ctx context.Context, req SearchRequest) (SearchResponse, error) {
	defer e.noteSearch(time.Now()) // for stats (engine/searchstats.go)
	done, err := e.enterStore()
	if err != nil {
		return SearchResponse{}, err
	}
	defer done()
	p, err := e.plan(ctx, req)
	if err != nil {
		return SearchResponse{}, err
	}
	if p.listing() {
		return e.listing(ctx, p)
	}
	run, err := e.newSearchRun(ctx, p)
	if err != nil {
		return SearchResponse{}, err
	}
	// The steps semantic, keyword, exactSimilarities and turnContext, and
	// the candidates' facts, two at a time (engine/retrieve.go).
	facts, err := e.retrieve(ctx, run)
	if err != nil {
		return SearchResponse{}, err
	}
	fuse(run.mode, p.fusion, keywordWeight(run.query, e.opts.QueryAnalysis), keywordShare(run.query, e.opts.QueryAnalysis), run.cands)
	for _, f := range facts {
		if c := run.cands[f.ID]; c != nil {
			c.Fused = run.boosts.Apply(c.Fused, f.SenderID, f.CreatedAt)
			c.Relevance = run.boosts.Apply(c.Relevance, f.SenderID, f.CreatedAt)
		}
	}
	// Replies to the best candidates that ask something (engine/replies.go).
	added, err := e.liftReplies(ctx, run)
	if err != nil {
		return SearchResponse{}, err
	}
	if len(added) > 0 {
		more, err := e.facts(ctx, added)
		if err != nil {
			return SearchResponse{}, err
		}
		facts = append(facts, more...)
	}
	// Fused ranks blended with semantic ones in conversations
	// (engine/rankblend.go).
	e.blendRanks(run, facts)
	if err := e.markStale(ctx, run); err != nil {
		return SearchResponse{}, err
	}
	ranked, below := rankCandidates(p, facts, run.cands)
	results, err := e.hydrate(ctx, run, ranked)
	if err != nil {
		return SearchResponse{}, err
	}
	resp := run.response(results)
	resp.BelowFloor = below
	return resp, nil
}

// searchPlan is a validated search request with its defaults applied.
type searchPlan struct {
	query  string
	limit  int
	depth  int // candidates each side contributes before fusion and ranking
	mode   SearchMode
	fusion Fusion
	rank   Ranking // resolved: the profile's weights
	floor  float64 // relevance below which results are dropped (0: none)
	filter resolved
	now    time.Time
	heads  *RepoHeads // the breadcrumb repositories' HEADs, when demoting or filtering by them
	// superseded keeps the messages another one superseded.
	superseded bool
}

// listing reports whether the plan is a filter-only listing (no query).
func (p searchPlan) listing() bool { return strings.TrimSpace(p.query) == "" }

// candidateDepth is how many hits each side contributes before fusion and
// ranking.
func candidateDepth(limit int) int { return min(MaxLimit, max(100, 2*limit)) }

// plan validates req and applies its defaults: the first step of a search,
// and the only one that rejects input.
func (e *Engine) plan(ctx context.Context, req SearchRequest) (searchPlan, error) {
	var heads *RepoHeads
	if req.Filter.BreadcrumbsValid || req.Ranking.StaleFactor > 0 {
		heads = e.repoHeads()
		if req.Filter.BreadcrumbsValid {
			// A store may filter in its SQL, which needs the HEAD of
			// every repository the cache holds marks of.
			repos, err := e.store.MarkedRepos(ctx)
			if err != nil {
				return searchPlan{}, err
			}
			for _, r := range repos {
				heads.head(r)
			}
			req.Filter.validAt = heads
		}
	}
	p, err := planSearch(req, e.opts.Now())
	p.heads = heads
	return p, err
}

// markStale marks the candidates whose breadcrumbs changed or are gone at
// HEAD, when the ranking demotes them: one lookup in the marks cache.
func (e *Engine) markStale(ctx context.Context, r *searchRun) error {
	if r.plan.rank.StaleFactor == 0 || r.plan.heads == nil {
		return nil
	}
	stale, err := e.staleAmong(ctx, r.plan.heads, r.cands.IDs())
	if err != nil {
		return err
	}
	for id := range stale {
		r.cands[id].Stale = true
	}
	return nil
}

// planSearch is plan at the time now (SearchRequest.Validate checks with
// it too).
func planSearch(req SearchRequest, now time.Time) (searchPlan, error) {
	p := searchPlan{query: req.Query, mode: req.Mode, fusion: req.Fusion, now: now, superseded: req.Filter.IncludeSuperseded}
	if len(req.Query) > MaxQueryBytes {
		return p, invalid("query", "at most %d bytes, got %d: search with the words that matter (the embedding model reads only the first 512 tokens)", MaxQueryBytes, len(req.Query))
	}
	var err error
	if p.limit, err = checkLimit(req.Limit, DefaultSearchLimit); err != nil {
		return p, err
	}
	p.depth = candidateDepth(p.limit)
	if p.floor, err = resolveFloor(req.MinScore); err != nil {
		return p, err
	}
	switch p.mode {
	case "":
		p.mode = ModeHybrid
	case ModeHybrid, ModeSemantic, ModeKeyword:
	default:
		return p, invalid("mode", "must be hybrid, semantic or keyword, got %q", req.Mode)
	}
	switch p.fusion {
	case "":
		p.fusion = DefaultFusion
	case FusionCalibrated, FusionWeighted, FusionMinMax, FusionRRF:
	default:
		return p, invalid("fusion", "must be calibrated, weighted, minmax or rrf, got %q", req.Fusion)
	}
	if p.rank, err = req.Ranking.resolve(); err != nil {
		return p, err
	}
	if p.filter, err = resolveFilter(req.Filter, p.now); err != nil {
		return p, err
	}
	return p, nil
}

// searchRun is one search in progress: what the steps after plan found.
type searchRun struct {
	plan searchPlan
	// query is the text both sides search: the plan's query without the
	// sender names and the dates it mentions, which boost instead.
	query  string
	boosts search.Boosts
	mode   SearchMode // the mode that runs: hybrid may fall back to keyword
	notes  []SearchNote
	// The vector side: the set searched (vecUsed) and the query's vector.
	set     VectorSet
	vecUsed bool
	qvec    []float32
	// kwQuery is the keyword query that ranked (its frequent terms pruned
	// on the FTS5 path); the snippets mark its terms.
	kwQuery fts.Query
	cands   search.Candidates
}

// newSearchRun starts a search: both sides search the query without the
// senders it names, whose messages are boosted instead
// (search.NameMentions), and likewise without the times it names
// (search.TimeMentions).
func (e *Engine) newSearchRun(ctx context.Context, p searchPlan) (*searchRun, error) {
	qa := e.opts.QueryAnalysis
	query, named := p.query, map[string]bool(nil)
	if !qa.NoSenderNames {
		var err error
		if query, named, err = e.senderMentions(ctx, query); err != nil {
			return nil, err
		}
	}
	var ranges []search.TimeRange
	if !qa.NoTimes {
		query, ranges = search.TimeMentions(query, p.now)
	}
	return &searchRun{plan: p, mode: p.mode, cands: search.Candidates{}, query: query, boosts: search.Boosts{Senders: named, Times: ranges, SenderBoost: qa.SenderBoost, TimeBoost: qa.TimeBoost}}, nil
}

// fallBack makes a hybrid search a keyword one, saying why.
func (r *searchRun) fallBack(kind NoteKind, msg string) {
	r.notes = append(r.notes, SearchNote{Kind: kind, Message: "keyword search only: " + msg})
	r.mode, r.vecUsed = ModeKeyword, false
}

func (r *searchRun) response(results []SearchResult) SearchResponse {
	resp := SearchResponse{Results: results, Mode: r.mode, Profile: r.plan.rank.Profile, Notes: r.notes}
	if r.mode == ModeHybrid {
		resp.Fusion = r.plan.fusion
	}
	if r.vecUsed {
		resp.Model = r.set.ModelID
	}
	return resp
}

// semantic is the vector step: it embeds the query and adds the nearest
// messages passing the filter to the candidates. Without usable vectors a
// semantic search fails and a hybrid one falls back to keyword. It calls
// embedded once the query's vector is set or the side gave up, and writes
// nothing of r but the candidates after that (engine/retrieve.go).
func (e *Engine) semantic(ctx context.Context, r *searchRun, embedded func()) error {
	if r.mode == ModeKeyword {
		return nil
	}
	set, ok, err := e.servingSet(ctx)
	if err != nil {
		return err
	}
	if !ok {
		kind, reason := e.noVectorsReason(ctx)
		if r.mode == ModeSemantic {
			return noSemanticSearch(kind, reason)
		}
		r.fallBack(kind, reason)
		return nil
	}
	ok, err = r.embedQuery(ctx, e.opts.Embedder, set)
	embedded()
	if !ok {
		return err
	}
	hits, err := e.store.Nearest(ctx, set, r.qvec, r.plan.filter.selection(), r.plan.depth)
	if err != nil {
		return err
	}
	for i, h := range hits {
		c := r.cands.Get(h.ID)
		c.Similarity, c.HasSimilarity, c.SemanticRank = h.Score, true, i+1
	}
	return nil
}

// servingSet returns the set this process answers semantic queries from:
// the active set when its model is the embedder's, else a building set of
// the embedder's model (partial: its missing vectors are reported). ok is
// false when there is none (no embedder, or another model's vectors only).
func (e *Engine) servingSet(ctx context.Context) (VectorSet, bool, error) {
	emb := e.opts.Embedder
	if emb == nil {
		return VectorSet{}, false, nil
	}
	sets, err := e.store.Sets(ctx)
	if err != nil {
		return VectorSet{}, false, err
	}
	for _, s := range sets { // active first
		if s.ModelID == emb.ModelID() {
			return s, true, nil
		}
	}
	return VectorSet{}, false, nil
}

// keyword is the BM25 step: it returns the best keyword hits passing the
// filter and their facts, and, once embedded is closed, the exact
// similarities of the hits (exactSimilarities). It reads r's plan and
// query, and r's vector side only after embedded is closed; the caller
// adds the hits to the candidates.
func (e *Engine) keyword(ctx context.Context, r *searchRun, embedded <-chan struct{}) keywordSide {
	kh, err := e.store.Keyword(ctx, fts.ParseQuery(r.query), r.plan.filter.selection(), r.plan.depth)
	if err != nil {
		return keywordSide{err: err}
	}
	hits := kh.Hits
	side := keywordSide{hits: hits, query: kh.Query, mass: kh.Mass}
	ids := make([]int64, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	if side.facts, err = e.facts(ctx, ids); err != nil {
		return keywordSide{err: err}
	}
	select {
	case <-embedded:
	case <-ctx.Done():
		return keywordSide{err: ctx.Err()}
	}
	if side.sims, err = e.exactSimilarities(ctx, r, ids); err != nil {
		return keywordSide{err: err}
	}
	return side
}

// exactSimilarities computes, in hybrid mode, the exact cosine similarity
// of keyword hits, so that fusion sees both sides of every candidate: a
// hit the vector list did not reach takes it (retrieve).
func (e *Engine) exactSimilarities(ctx context.Context, r *searchRun, ids []int64) (map[int64]float64, error) {
	if r.mode != ModeHybrid || len(ids) == 0 {
		return nil, nil
	}
	return e.store.Similarities(ctx, r.set, r.qvec, ids)
}

// fuse sets each candidate's calibrated relevance (search.Calibrate,
// with the query's keyword share in hybrid mode) and the score that
// orders it: the relevance itself with FusionCalibrated; with the other
// fusions (kept to compare them) the normalized keyword score in keyword
// mode, the similarity in semantic mode and the fusion of both in hybrid
// mode, where the keyword side has the share kw in the weighted and
// minmax fusions.
func fuse(mode SearchMode, fusion Fusion, kw, share float64, cands search.Candidates) {
	sm := search.Hybrid
	switch mode {
	case ModeKeyword:
		sm = search.Keyword
	case ModeSemantic:
		sm = search.Semantic
	}
	search.Calibrate(sm, share, cands)
	switch {
	case fusion == FusionCalibrated || mode == ModeKeyword || mode == ModeSemantic:
		// Ordered by the mode's calibration (search.RankScore): in one
		// mode it orders as the mode's own score (BM25, similarity) does.
	case fusion == FusionRRF:
		search.FuseRRF(cands)
	case fusion == FusionMinMax:
		search.FuseMinMax(kw, cands)
	default: // FusionWeighted
		search.FuseWeighted(kw, cands)
	}
}

// rankCandidates applies the ranking profile to the candidates whose facts
// (id, confidence, created_at: the messages still there) were read, drops
// those below the plan's relevance floor, orders them and keeps the plan's
// limit. Ranking needs only those facts; the full messages are read for
// the results only (hydrate). below is the number of candidates the floor
// dropped.
func rankCandidates(p searchPlan, facts []Message, cands search.Candidates) (out []SearchResult, below int) {
	out = make([]SearchResult, 0, len(facts))
	order := make(map[int64]float64, len(facts))
	w := p.rank.weights()
	for _, f := range facts {
		if f.SupersededBy != 0 && !p.superseded {
			continue
		}
		c := cands[f.ID]
		if !search.Kept(c.Relevance, p.floor) {
			below++
			continue
		}
		rec, fin := w.Final(c.Relevance, f.Confidence, p.now.Sub(f.CreatedAt))
		_, by := w.Final(c.Fused, f.Confidence, p.now.Sub(f.CreatedAt))
		if c.Stale {
			fin *= p.rank.StaleFactor
			by *= p.rank.StaleFactor
		}
		order[f.ID] = by
		out = append(out, SearchResult{
			Message: f, Score: fin, KeywordScore: c.BM25,
			Scores: Scores{Similarity: c.ShownSimilarity(), Context: c.ContextAbove(), Keyword: c.Keyword, Fused: c.Relevance, Confidence: f.Confidence, Recency: rec, Final: fin, Demoted: c.Stale},
		})
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := order[out[i].Message.ID], order[out[j].Message.ID]
		if a != b {
			return a > b
		}
		return resultBefore(out[i], out[j])
	})
	if len(out) > p.limit {
		out = out[:p.limit]
	}
	return out, below
}

// hydrate replaces the ranked results' facts with the full messages (a
// message deleted since is dropped), says which have no vector, and cuts
// the snippets.
func (e *Engine) hydrate(ctx context.Context, r *searchRun, ranked []SearchResult) ([]SearchResult, error) {
	ids := make([]int64, len(ranked))
	for i, res := range ranked {
		ids[i] = res.Message.ID
	}
	ms, err := e.store.Messages(ctx, ids)
	if err != nil {
		return nil, err
	}
	var pending map[int64]bool
	if r.vecUsed {
		if pending, err = e.store.Pending(ctx, r.set.ID, ids); err != nil {
			return nil, err
		}
	}
	full := make(map[int64]Message, len(ms))
	for _, m := range ms {
		full[m.ID] = m
	}
	out := ranked[:0]
	for _, res := range ranked {
		m, ok := full[res.Message.ID]
		if !ok {
			continue // deleted between the two reads
		}
		res.Message = m
		if r.plan.mode != ModeKeyword {
			res.VectorMissing = !r.vecUsed || pending[m.ID] || !r.cands[m.ID].HasSimilarity
		}
		out = append(out, res)
	}
	if err := e.attachResultChecks(ctx, out); err != nil {
		return nil, err
	}
	snippets(r.kwQuery, out)
	return out, nil
}

// snippets sets the snippets of the results that matched a keyword (only
// for the results: cutting one tokenizes the message).
func snippets(q fts.Query, results []SearchResult) {
	if q.Empty() {
		return
	}
	req := fts.Request{Query: q}
	for i := range results {
		if r := &results[i]; r.KeywordScore > 0 {
			r.Snippet, _ = fts.SnippetOf(req, r.Message.Content)
		}
	}
}

// resultBefore orders results of equal rank: by final score, then
// relevance, then newer id.
func resultBefore(x, y SearchResult) bool {
	a, b := x.Scores, y.Scores
	if a.Final != b.Final {
		return a.Final > b.Final
	}
	if a.Fused != b.Fused {
		return a.Fused > b.Fused
	}
	return x.Message.ID > y.Message.ID
}

// listing is the filter-only search: newest first, then higher
// confidence, with recency scores.
func (e *Engine) listing(ctx context.Context, p searchPlan) (SearchResponse, error) {
	resp := SearchResponse{Mode: p.mode, Profile: p.rank.Profile, Results: []SearchResult{}}
	var ms []Message
	// Superseded messages are left out: ask for more until the limit is
	// filled or the store has no more.
	for k := p.limit; ; k = min(MaxLimit, 4*k) {
		got, err := e.store.List(ctx, p.filter.selection(), k, ListByConfidence)
		if err != nil {
			return SearchResponse{}, err
		}
		ms = ms[:0]
		for _, m := range got {
			if (m.SupersededBy == 0 || p.superseded) && len(ms) < p.limit {
				ms = append(ms, m)
			}
		}
		if len(ms) >= p.limit || len(got) < k || k >= MaxLimit {
			break
		}
	}
	w := p.rank.weights()
	for _, m := range ms {
		rec := w.ListingRecency(p.now.Sub(m.CreatedAt))
		resp.Results = append(resp.Results, SearchResult{Message: m, Score: rec,
			Scores: Scores{Confidence: m.Confidence, Recency: rec, Final: rec}})
	}
	return resp, e.attachResultChecks(ctx, resp.Results)
}

// facts reads what ranking needs of the messages in ids.
func (e *Engine) facts(ctx context.Context, ids []int64) ([]Message, error) {
	return e.store.RankFacts(ctx, ids)
}

// noVectorsReason says why this process has no vectors to search.
func (e *Engine) noVectorsReason(ctx context.Context) (NoteKind, string) {
	emb := e.opts.Embedder
	if emb == nil {
		return NoteNoModel, "no embedding model is configured"
	}
	sets, err := e.store.Sets(ctx)
	if err == nil {
		for _, s := range sets {
			if s.State == SetActive {
				return NoteOtherModel, fmt.Sprintf("the stored vectors are of model %s, this process embeds with %s (run cairn rebuild with this model to switch)", s.ModelID, emb.ModelID())
			}
		}
	}
	return NoteNoVectors, "no vectors for model " + emb.ModelID()
}

// noSemanticSearch is the error of a semantic search without usable
// vectors: ErrNoModel without an embedding model, else ErrEmbedderMismatch.
func noSemanticSearch(kind NoteKind, reason string) error {
	if kind == NoteNoModel {
		return fmt.Errorf("%w: semantic search needs one (use mode keyword or hybrid)", ErrNoModel)
	}
	return fmt.Errorf("%w: semantic search unavailable: %s", ErrEmbedderMismatch, reason)
}
