package engine

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

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

// Fusions. See DefaultFusion for the measured choice.
const (
	// FusionWeighted: w*keyword + (1-w)*similarity (w = KeywordWeight,
	// engine/fusion.go), where keyword is the
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
	// 1/(60+rank_semantic), divided by its maximum 2/61.
	FusionRRF Fusion = "rrf"
)

// DefaultFusion is the fusion of hybrid mode when SearchRequest.Fusion is
// "": with KeywordWeight (engine/fusion.go), the one setting measured at
// least as good as the better side on every dev set (bench/README.md,
// "Search quality with the real model").
const DefaultFusion = FusionMinMax

// rrfK is the reciprocal rank fusion constant.
const rrfK = 60

// Scores is a result's score breakdown. Every component is in [0,1].
type Scores struct {
	// Similarity is the cosine similarity of the query's and the message's
	// vectors (clamped at 0; 0 when not computed or the vector is missing).
	Similarity float64 `json:"similarity"`
	// Keyword is the BM25 score divided by the best BM25 score among the
	// query's keyword hits (0 when the message matched no term).
	Keyword float64 `json:"keyword"`
	// Fused is the relevance the ranking uses: Similarity in semantic
	// mode, Keyword in keyword mode, the fusion of both in hybrid mode.
	Fused      float64 `json:"fused"`
	Confidence float64 `json:"confidence"`
	Recency    float64 `json:"recency"`
	// Final orders the results (Ranking).
	Final float64 `json:"final"`
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
	// Notes explain degraded searches (no embedder, another model's
	// vectors, vectors still being built).
	Notes []string `json:"notes,omitempty"`
}

// Search runs one search. See SearchDetailed.
func (e *Engine) Search(ctx context.Context, req SearchRequest) ([]SearchResult, error) {
	r, err := e.SearchDetailed(ctx, req)
	return r.Results, err
}

// candidateDepth is how many hits each side contributes before fusion and
// ranking.
func candidateDepth(limit int) int { return min(MaxLimit, max(100, 2*limit)) }

// SearchDetailed runs one search: filters first on both sides (SQL WHERE
// for FTS5, a vecstore where for vectors), then the mode's retrieval,
// fusion in hybrid mode, and the ranking profile. With an empty query it
// lists the filtered messages by recency, then confidence, then id.
//
// Semantic mode without usable vectors (no embedder, or vectors of another
// model only) fails with ErrEmbedderMismatch; hybrid mode then runs as
// keyword search and says so in Notes.
func (e *Engine) SearchDetailed(ctx context.Context, req SearchRequest) (SearchResponse, error) {
	defer e.noteSearch(time.Now()) // for stats (engine/searchstats.go)
	var resp SearchResponse
	limit, err := checkLimit(req.Limit)
	if err != nil {
		return resp, err
	}
	if limit == 0 {
		limit = DefaultSearchLimit
	}
	mode := req.Mode
	switch mode {
	case "":
		mode = ModeHybrid
	case ModeHybrid, ModeSemantic, ModeKeyword:
	default:
		return resp, invalid("mode", "must be hybrid, semantic or keyword, got %q", req.Mode)
	}
	fusion := req.Fusion
	switch fusion {
	case "":
		fusion = DefaultFusion
	case FusionWeighted, FusionMinMax, FusionRRF:
	default:
		return resp, invalid("fusion", "must be weighted, minmax or rrf, got %q", req.Fusion)
	}
	rank, err := req.Ranking.resolve()
	if err != nil {
		return resp, err
	}
	now := e.opts.Now()
	flt, err := resolveFilter(req.Filter, now)
	if err != nil {
		return resp, err
	}
	done, err := e.enter()
	if err != nil {
		return resp, err
	}
	defer done()
	resp.Profile = rank.Profile
	resp.Results = []SearchResult{}

	if strings.TrimSpace(req.Query) == "" {
		resp.Mode = mode
		return resp, e.listing(ctx, &resp, flt, rank, limit, now)
	}

	depth := candidateDepth(limit)
	type cand struct {
		kw, kwNorm float64
		kwRank     int // 1-based, 0 = not a keyword hit
		sim        float64
		hasSim     bool
		semRank    int
		fused      float64
	}
	cands := map[int64]*cand{}
	get := func(id int64) *cand {
		c := cands[id]
		if c == nil {
			c = &cand{}
			cands[id] = c
		}
		return c
	}

	// Both sides search the query without the senders it names; their
	// messages are boosted instead (engine/queryshape.go).
	query, named, err := e.senderMentions(ctx, req.Query)
	if err != nil {
		return resp, err
	}

	// Semantic side.
	wantVec := mode != ModeKeyword
	kwText := "" // the keyword query actually run (frequent terms pruned)
	var set VectorSet
	useVec := false
	var qvec []float32
	if mode != ModeKeyword {
		var ok bool
		set, ok, err = e.servingSet(ctx)
		if err != nil {
			return resp, err
		}
		if !ok {
			reason := e.noVectorsReason(ctx)
			if mode == ModeSemantic {
				return resp, noSemantic(reason)
			}
			resp.Notes = append(resp.Notes, "keyword only: "+reason)
			mode = ModeKeyword
		} else {
			useVec = true
			resp.Model = set.ModelID
			if set.State == SetBuilding {
				resp.Notes = append(resp.Notes, "vectors of "+set.ModelID+" are still being built: messages not embedded yet are found by keyword only (vector_missing)")
			}
			vs, err := e.vec.emb.Embed(ctx, []string{query})
			switch {
			case err != nil && (mode == ModeSemantic || ctx.Err() != nil):
				return resp, fmt.Errorf("engine: embed query: %w", err)
			case err != nil:
				// Hybrid degrades to keyword rather than failing.
				resp.Notes = append(resp.Notes, "keyword only: the query could not be embedded: "+err.Error())
				mode, useVec, resp.Model = ModeKeyword, false, ""
			case len(vs) != 1 || len(vs[0]) != set.Dim:
				return resp, fmt.Errorf("%w: query vector has the wrong dimension", ErrDimensionMismatch)
			default:
				qvec = vs[0]
				hits, err := e.semanticSearch(ctx, set, qvec, flt.where, depth)
				if err != nil {
					return resp, err
				}
				for i, h := range hits {
					c := get(h.id)
					c.sim, c.hasSim, c.semRank = h.sim, true, i+1
				}
			}
		}
	}
	resp.Mode = mode
	if mode == ModeHybrid {
		resp.Fusion = fusion
	}

	// Keyword side.
	if mode != ModeSemantic {
		// In-memory index when ready (exact BM25), else FTS5 with
		// frequent terms pruned (engine/keyword_index.go).
		hits, text, err := e.keywordHits(ctx, query, flt.sql, flt.args, depth)
		if err != nil {
			return resp, err
		}
		kwText = text
		best := 0.0
		for _, h := range hits {
			best = max(best, h.Score)
		}
		for i, h := range hits {
			c := get(h.RowID)
			c.kw, c.kwRank = h.Score, i+1
			if best > 0 {
				c.kwNorm = h.Score / best
			}
		}
	}
	if len(cands) == 0 {
		return resp, nil
	}
	ids := make([]int64, 0, len(cands))
	for id := range cands {
		ids = append(ids, id)
	}

	// Exact similarity for keyword hits the vector list did not reach.
	if mode == ModeHybrid {
		var need []int64
		for _, id := range ids {
			if !cands[id].hasSim {
				need = append(need, id)
			}
		}
		sims, err := e.similarities(ctx, set, qvec, need)
		if err != nil {
			return resp, err
		}
		for id, s := range sims {
			c := cands[id]
			c.sim, c.hasSim = s, true
		}
	}

	// Relevance.
	switch mode {
	case ModeKeyword:
		for _, c := range cands {
			c.fused = c.kwNorm
		}
	case ModeSemantic:
		for _, c := range cands {
			c.fused = clamp01(c.sim)
		}
	case ModeHybrid:
		switch fusion {
		case FusionRRF:
			for _, c := range cands {
				var s float64
				if c.kwRank > 0 {
					s += 1 / float64(rrfK+c.kwRank)
				}
				if c.semRank > 0 {
					s += 1 / float64(rrfK+c.semRank)
				}
				c.fused = s / (2.0 / float64(rrfK+1))
			}
		case FusionMinMax:
			klo, khi, slo, shi := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
			for _, c := range cands {
				klo, khi = min(klo, c.kw), max(khi, c.kw)
				if c.hasSim {
					slo, shi = min(slo, c.sim), max(shi, c.sim)
				}
			}
			for _, c := range cands {
				var k, s float64
				if khi > klo {
					k = (c.kw - klo) / (khi - klo)
				} else if c.kw > 0 {
					k = 1
				}
				if c.hasSim {
					if shi > slo {
						s = (c.sim - slo) / (shi - slo)
					} else {
						s = 1
					}
				}
				c.fused = KeywordWeight*k + (1-KeywordWeight)*s
			}
		default: // FusionWeighted
			for _, c := range cands {
				c.fused = KeywordWeight*c.kwNorm + (1-KeywordWeight)*clamp01(c.sim)
			}
		}
	}

	// Ranking needs only each candidate's confidence and age; the full
	// messages (content, metadata, mentions) are read for the results only
	// (up to 2 x depth candidates against limit results).
	facts, err := e.rankFacts(ctx, ids)
	if err != nil {
		return resp, err
	}
	out := make([]SearchResult, 0, len(facts))
	for _, f := range facts {
		c := cands[f.ID]
		c.fused = boostSender(c.fused, f.SenderID, named)
		rec, fin := rank.final(c.fused, f.Confidence, now.Sub(f.CreatedAt))
		out = append(out, SearchResult{
			Message: f, Score: fin, KeywordScore: c.kw,
			Scores: Scores{Similarity: clamp01(c.sim), Keyword: c.kwNorm, Fused: c.fused, Confidence: f.Confidence, Recency: rec, Final: fin},
		})
	}
	sortResults(out)
	if len(out) > limit {
		out = out[:limit]
	}
	resIDs := make([]int64, len(out))
	for i, r := range out {
		resIDs[i] = r.Message.ID
	}
	ms, err := e.getMessages(ctx, resIDs)
	if err != nil {
		return resp, err
	}
	var pending map[int64]bool
	if useVec {
		if pending, err = e.pendingIDs(ctx, set.ID, resIDs); err != nil {
			return resp, err
		}
	}
	full := make(map[int64]Message, len(ms))
	for _, m := range ms {
		full[m.ID] = m
	}
	kept := out[:0]
	for _, r := range out {
		m, ok := full[r.Message.ID]
		if !ok {
			continue // deleted between the two reads
		}
		r.Message = m
		if wantVec {
			c := cands[m.ID]
			r.VectorMissing = !useVec || pending[m.ID] || !c.hasSim
		}
		kept = append(kept, r)
	}
	out = kept
	// Snippets for the results only (snippet() re-reads and re-tokenizes
	// each row: too costly for every candidate).
	if kwText != "" {
		var sids []int64
		for _, r := range out {
			if r.KeywordScore > 0 {
				sids = append(sids, r.Message.ID)
			}
		}
		snips, err := e.fts.Snippets(ctx, e.r, fts.Request{Text: kwText}, sids)
		if err != nil {
			return resp, fmt.Errorf("engine: search: %w", classify(err))
		}
		for i := range out {
			out[i].Snippet = snips[out[i].Message.ID]
		}
	}
	resp.Results = out
	return resp, nil
}

// sortResults orders by final score, then fused relevance, then newer id.
func sortResults(rs []SearchResult) {
	sort.SliceStable(rs, func(i, j int) bool {
		a, b := rs[i].Scores, rs[j].Scores
		if a.Final != b.Final {
			return a.Final > b.Final
		}
		if a.Fused != b.Fused {
			return a.Fused > b.Fused
		}
		return rs[i].Message.ID > rs[j].Message.ID
	})
}

func clamp01(x float64) float64 {
	switch {
	case x < 0 || math.IsNaN(x):
		return 0
	case x > 1:
		return 1
	}
	return x
}

// listing is the filter-only search: newest first, then higher
// confidence, with recency scores.
func (e *Engine) listing(ctx context.Context, resp *SearchResponse, flt resolved, rank Ranking, limit int, now time.Time) error {
	q := "SELECT " + strings.ReplaceAll(messageColumns, "m.", "c.") + " FROM messages c"
	if flt.sql != "" {
		q += " WHERE " + flt.sql
	}
	q += " ORDER BY c.created_at DESC, c.confidence DESC, c.id DESC LIMIT ?"
	ms, err := queryMessages(ctx, e.r, q, append(flt.args, limit)...)
	if err != nil {
		return fmt.Errorf("engine: search: %w", err)
	}
	for _, m := range ms {
		rec := rank.listingRecency(now.Sub(m.CreatedAt))
		resp.Results = append(resp.Results, SearchResult{Message: m, Score: rec,
			Scores: Scores{Confidence: m.Confidence, Recency: rec, Final: rec}})
	}
	return nil
}

// noVectorsReason says why this process has no vectors to search.
func (e *Engine) noVectorsReason(ctx context.Context) string {
	if e.vec == nil || e.vec.emb == nil {
		return "no embedding model configured"
	}
	sets, err := e.liveSets(ctx, e.r)
	if err == nil {
		for _, s := range sets {
			if s.State == SetActive {
				return fmt.Sprintf("the stored vectors are of model %s, this process embeds with %s (run cairn rebuild with this model to switch)", s.ModelID, e.vec.emb.ModelID())
			}
		}
	}
	return "no vectors for model " + e.vec.emb.ModelID()
}

// frequentShare: a query term found in more than this share of the
// messages is dropped from the keyword query (when the query has another
// term). Its BM25 idf is at most ln 2 (FTS5 clamps it near 0 above one
// half), so it barely moves the ranking, but it makes FTS5 score most rows.
const frequentShare = 1.0 / 3

// pruneTerms returns the query text without its frequent terms (see
// frequentShare); the document frequencies come from the fts5vocab view.
// Terms the vocabulary does not list under their plain form (stemmed
// differently) are kept: pruning only ever saves time.
func (e *Engine) pruneTerms(ctx context.Context, query string) (string, error) {
	terms := fts.Terms(query)
	if len(terms) < 2 || e.vec == nil {
		return query, nil
	}
	e.vec.mu.Lock()
	n, at := e.vec.mu.docs, e.vec.mu.docsAt
	e.vec.mu.Unlock()
	if time.Since(at) > 10*time.Second {
		if err := e.r.QueryRowContext(ctx, "SELECT count(*) FROM messages").Scan(&n); err != nil {
			return "", fmt.Errorf("engine: search: %w", classify(err))
		}
		e.vec.mu.Lock()
		e.vec.mu.docs, e.vec.mu.docsAt = n, time.Now()
		e.vec.mu.Unlock()
	}
	if n < 1000 {
		return query, nil
	}
	args := make([]any, len(terms))
	for i, t := range terms {
		args[i] = t
	}
	rows, err := e.r.QueryContext(ctx, "SELECT term, doc FROM messages_fts_vocab WHERE term IN ("+placeholders(len(terms))+")", args...)
	if err != nil {
		return "", fmt.Errorf("engine: search: %w", classify(err))
	}
	df := map[string]int64{}
	for rows.Next() {
		var t string
		var d int64
		if err := rows.Scan(&t, &d); err != nil {
			rows.Close()
			return "", fmt.Errorf("engine: search: %w", classify(err))
		}
		df[t] = d
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("engine: search: %w", classify(err))
	}
	limit := int64(float64(n) * frequentShare)
	var kept []string
	rarest := ""
	for _, t := range terms {
		if df[t] <= limit {
			kept = append(kept, t)
		}
		if rarest == "" || df[t] < df[rarest] {
			rarest = t
		}
	}
	if len(kept) == 0 {
		kept = []string{rarest}
	}
	return strings.Join(kept, " "), nil
}
