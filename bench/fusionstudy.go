package bench

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/cairn-dev/cairn/engine"
)

// A fusion study replays hybrid search offline to choose fusion and
// weights: the keyword lists come from the engine (keyword mode, the depth
// hybrid search asks for), the similarities are exact cosines of the
// cached vectors, and the fusion formulas mirror engine/hybrid.go. It is a
// tool for exploring many settings in seconds; the figures reported as
// cairn's are always measured through Engine.Search.

// StudyQuery is one query of a study.
type StudyQuery struct {
	Vec  []float32
	KW   []StudyHit // keyword hits in rank order, Norm = score / best
	Pool []int      // items the query may retrieve (its channel); nil = all
	// Judge scores a ranking of item indexes.
	Judge func(ranked []int) map[string]float64
	Group string // category, for per-group means ("" = none)
	// Boost is added, times Study.BoostWeight, to an item's fused score
	// when the item is a candidate.
	Boost map[int]float64
}

// StudyHit is a keyword hit.
type StudyHit struct {
	Item int
	Norm float64
}

// Study is a set's items and queries.
type Study struct {
	Name    string
	Items   [][]float32
	Queries []StudyQuery
	Depth   int // candidates per side (engine's candidateDepth for the limit)
	Limit   int
	// BoostWeight scales StudyQuery.Boost.
	BoostWeight float64
	// Alt are second vectors of the items (nil = none): an item's
	// similarity is then the larger of its two.
	Alt [][]float32
	// Nbr are each item's neighbours (nil = none); an item's similarity
	// gains NbrWeight times its best neighbour's.
	Nbr       [][]int
	NbrWeight float64
	// PRFDepth and PRFWeight: the query vector moves towards the mean of
	// its PRFDepth most similar items, by PRFWeight (0 = off).
	PRFDepth  int
	PRFWeight float64
	// Next is each item's reply (the next turn of its session, -1 =
	// none); with ReplyWeight > 0 a reply's fused relevance is at least
	// ReplyWeight times that of the candidate it answers, and a reply of
	// one of the ReplyTop best candidates becomes a candidate itself.
	Next        []int
	ReplyWeight float64
	ReplyTop    int
	// Asks says which items ask something (a question mark); with
	// ReplyAsksOnly only their replies are lifted.
	Asks          []bool
	ReplyAsksOnly bool
}

// Fuser is one fusion setting: it returns the fused relevance of a
// candidate from its normalized keyword score (0 = no keyword hit), its
// 1-based keyword and semantic ranks (0 = not in that list) and its exact
// cosine similarity; mm holds the candidates' keyword and similarity
// minima and maxima for min-max fusions.
type Fuser struct {
	Name string
	F    func(c StudyCand, mm MinMax) float64
}

// StudyCand is a candidate's inputs to fusion.
type StudyCand struct {
	KW, KWRaw       float64
	KWRank, SemRank int
	Sim             float64
}

// MinMax are the candidates' score ranges.
type MinMax struct{ KLo, KHi, SLo, SHi float64 }

// Run evaluates one fuser and returns the mean of every judged figure,
// overall and per group ("group/figure").
func (s *Study) Run(f Fuser) map[string]float64 {
	sum := map[string]float64{}
	cnt := map[string]int{}
	for _, q := range s.Queries {
		ranked := s.rank(q, f)
		for k, v := range q.Judge(ranked) {
			sum[k] += v
			cnt[k]++
			if q.Group != "" {
				sum[q.Group+"/"+k] += v
				cnt[q.Group+"/"+k]++
			}
		}
	}
	for k := range sum {
		sum[k] /= float64(cnt[k])
	}
	return sum
}

func (s *Study) rank(q StudyQuery, f Fuser) []int {
	pool := q.Pool
	if pool == nil {
		pool = make([]int, len(s.Items))
		for i := range pool {
			pool[i] = i
		}
	}
	sims := make(map[int]float64, len(pool))
	order := make([]int, len(pool))
	copy(order, pool)
	qv := q.Vec
	simOf := func(it int) float64 {
		v := dot(qv, s.Items[it])
		if s.Alt != nil {
			v = max(v, dot(qv, s.Alt[it]))
		}
		return v
	}
	for _, it := range pool {
		sims[it] = simOf(it)
	}
	sort.SliceStable(order, func(a, b int) bool { return sims[order[a]] > sims[order[b]] })
	if s.PRFWeight > 0 && s.PRFDepth > 0 {
		nv := make([]float32, len(qv))
		for _, it := range order[:min(s.PRFDepth, len(order))] {
			for d, x := range s.Items[it] {
				nv[d] += x * float32(s.PRFWeight/float64(s.PRFDepth))
			}
		}
		var n float64
		for d := range nv {
			nv[d] += qv[d]
			n += float64(nv[d]) * float64(nv[d])
		}
		for d := range nv {
			nv[d] /= float32(math.Sqrt(n))
		}
		qv = nv
		for _, it := range pool {
			sims[it] = simOf(it)
		}
		sort.SliceStable(order, func(a, b int) bool { return sims[order[a]] > sims[order[b]] })
	}
	cands := map[int]*StudyCand{}
	get := func(it int) *StudyCand {
		c := cands[it]
		if c == nil {
			c = &StudyCand{Sim: sims[it]}
			cands[it] = c
		}
		return c
	}
	for i, it := range order[:min(s.Depth, len(order))] {
		get(it).SemRank = i + 1
	}
	for i, h := range q.KW[:min(s.Depth, len(q.KW))] {
		c := get(h.Item)
		c.KW, c.KWRank = h.Norm, i+1
	}
	if s.Nbr != nil && s.NbrWeight != 0 {
		adj := map[int]float64{}
		for it := range cands {
			best := 0.0
			for _, n := range s.Nbr[it] {
				best = max(best, sims[n])
			}
			adj[it] = sims[it] + s.NbrWeight*best
		}
		for it, c := range cands {
			c.Sim = adj[it]
		}
	}
	mm := MinMax{math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)}
	for _, c := range cands {
		mm.KLo, mm.KHi = min(mm.KLo, c.KW), max(mm.KHi, c.KW)
		mm.SLo, mm.SHi = min(mm.SLo, c.Sim), max(mm.SHi, c.Sim)
	}
	type scored struct {
		it int
		f  float64
	}
	out := make([]scored, 0, len(cands))
	for it, c := range cands {
		out = append(out, scored{it, f.F(*c, mm) + s.BoostWeight*q.Boost[it]})
	}
	if s.ReplyWeight > 0 {
		sort.Slice(out, func(a, b int) bool {
			if out[a].f != out[b].f {
				return out[a].f > out[b].f
			}
			return out[a].it > out[b].it
		})
		at := map[int]int{}
		for i, x := range out {
			at[x.it] = i
		}
		top := out[:min(len(out), s.ReplyTop)]
		lift := map[int]float64{}
		for _, x := range top {
			if s.ReplyAsksOnly && !s.Asks[x.it] {
				continue
			}
			if n := s.Next[x.it]; n >= 0 {
				lift[n] = max(lift[n], s.ReplyWeight*x.f)
			}
		}
		for n, v := range lift {
			if i, ok := at[n]; ok {
				out[i].f = max(out[i].f, v)
			} else {
				out = append(out, scored{n, v})
			}
		}
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].f != out[b].f {
			return out[a].f > out[b].f
		}
		return out[a].it > out[b].it
	})
	ranked := make([]int, 0, s.Limit)
	for _, x := range out[:min(s.Limit, len(out))] {
		ranked = append(ranked, x.it)
	}
	return ranked
}

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// Weighted is alpha*keyword + (1-alpha)*similarity (engine's "weighted").
func Weighted(alpha float64) Fuser {
	return Fuser{fmt.Sprintf("weighted kw=%.2f", alpha), func(c StudyCand, _ MinMax) float64 {
		return alpha*c.KW + (1-alpha)*max(0, c.Sim)
	}}
}

// MinMaxFuser is alpha*minmax(keyword) + (1-alpha)*minmax(similarity).
func MinMaxFuser(alpha float64) Fuser {
	return Fuser{fmt.Sprintf("minmax kw=%.2f", alpha), func(c StudyCand, mm MinMax) float64 {
		var k, s float64
		if mm.KHi > mm.KLo {
			k = (c.KW - mm.KLo) / (mm.KHi - mm.KLo)
		}
		if mm.SHi > mm.SLo {
			s = (c.Sim - mm.SLo) / (mm.SHi - mm.SLo)
		}
		return alpha*k + (1-alpha)*s
	}}
}

// RRF is alpha/(k+rank_kw) + (1-alpha)/(k+rank_sem).
func RRF(k int, alpha float64) Fuser {
	return Fuser{fmt.Sprintf("rrf k=%d kw=%.2f", k, alpha), func(c StudyCand, _ MinMax) float64 {
		var s float64
		if c.KWRank > 0 {
			s += alpha / float64(k+c.KWRank)
		}
		if c.SemRank > 0 {
			s += (1 - alpha) / float64(k+c.SemRank)
		}
		return s
	}}
}

// StudyRetrieval builds a study of a retrieval set: keyword lists from a
// keyword-only corpus c, vectors from emb (use a CachedEmbedder).
func StudyRetrieval(ctx context.Context, c *Corpus, emb engine.Embedder, limit int) (*Study, error) {
	s := &Study{Name: c.Set.Name, Limit: limit, Depth: min(engine.MaxLimit, max(100, 2*limit))}
	texts := make([]string, len(c.Set.Docs))
	index := map[string]int{}
	for i, d := range c.Set.Docs {
		texts[i] = DocContent(d)
		index[d.ID] = i
	}
	vecs, err := embedAll(ctx, emb, texts)
	if err != nil {
		return nil, err
	}
	s.Items = vecs
	for _, q := range c.Set.Queries {
		rel := c.Set.Qrels[q.ID]
		if len(rel) == 0 {
			continue
		}
		qv, err := emb.Embed(ctx, []string{q.Text})
		if err != nil {
			return nil, err
		}
		res, err := c.Engine.Search(ctx, engine.SearchRequest{Query: q.Text, Limit: s.Depth, Mode: engine.ModeKeyword, MinScore: new(float64)})
		if err != nil {
			return nil, err
		}
		sq := StudyQuery{Vec: qv[0]}
		for _, r := range res {
			ids := c.docsOf[r.Message.ID]
			if len(ids) > 0 {
				sq.KW = append(sq.KW, StudyHit{Item: index[ids[0]], Norm: r.Scores.Keyword})
			}
		}
		docs := c.Set.Docs
		sq.Judge = func(ranked []int) map[string]float64 {
			ids := make([]string, len(ranked))
			for i, it := range ranked {
				ids[i] = docs[it].ID
			}
			return map[string]float64{"nDCG@10": ndcg(ids, rel, 10), "recall@100": recall(ids, rel, 100)}
		}
		s.Queries = append(s.Queries, sq)
	}
	return s, nil
}

// LoCoMoStudyOptions are the variants a LoCoMo study replays.
type LoCoMoStudyOptions struct {
	// ItemText is the text embedded for a turn (default: TurnContent with captions).
	ItemText func(Conversation, Turn) string
	// SemQuery and KWQuery rewrite the question for each side (default: as is).
	SemQuery, KWQuery func(Conversation, string) string
	// Boost gives an item's boost for a question (nil = none).
	Boost func(Conversation, Turn, string) float64
	// AltText is a second text embedded for the turn at index i (nil =
	// none): Study.Alt.
	AltText func(c Conversation, i int) string
}

// StudyLoCoMo builds a study of the LoCoMo dev protocol from a keyword-only
// corpus lc and vectors from emb.
func StudyLoCoMo(ctx context.Context, lc *LoCoMoCorpus, emb engine.Embedder, o LoCoMoStudyOptions) (*Study, error) {
	text := o.ItemText
	if text == nil {
		text = func(_ Conversation, t Turn) string { return TurnContent(t, true) }
	}
	same := func(_ Conversation, q string) string { return q }
	if o.SemQuery == nil {
		o.SemQuery = same
	}
	if o.KWQuery == nil {
		o.KWQuery = same
	}
	s := &Study{Name: "locomo-dev", Limit: 10, Depth: 100}
	itemOf := map[string]int{} // channel + dia_id -> item
	var texts []string
	var dias []string
	pools := map[string][]int{}
	for _, c := range lc.Convs {
		ch := LoCoMoChannel(c)
		for _, t := range c.Turns {
			itemOf[ch+"/"+t.DiaID] = len(texts)
			pools[ch] = append(pools[ch], len(texts))
			texts = append(texts, text(c, t))
			dias = append(dias, t.DiaID)
		}
	}
	vecs, err := embedAll(ctx, emb, texts)
	if err != nil {
		return nil, err
	}
	s.Items = vecs
	s.Nbr = make([][]int, len(texts))
	s.Next = make([]int, len(texts))
	s.Asks = make([]bool, len(texts))
	var alt []string
	for _, c := range lc.Convs {
		ch := LoCoMoChannel(c)
		for i, t := range c.Turns {
			it := itemOf[ch+"/"+t.DiaID]
			if i > 0 && c.Turns[i-1].Session == t.Session {
				s.Nbr[it] = append(s.Nbr[it], it-1)
			}
			s.Next[it] = -1
			s.Asks[it] = strings.Contains(t.Text, "?")
			if i+1 < len(c.Turns) && c.Turns[i+1].Session == t.Session {
				s.Nbr[it] = append(s.Nbr[it], it+1)
				s.Next[it] = it + 1
			}
			if o.AltText != nil {
				alt = append(alt, o.AltText(c, i))
			}
		}
	}
	if o.AltText != nil {
		if s.Alt, err = embedAll(ctx, emb, alt); err != nil {
			return nil, err
		}
	}
	for _, c := range lc.Convs {
		ch := LoCoMoChannel(c)
		for _, q := range c.Questions {
			qv, err := emb.Embed(ctx, []string{o.SemQuery(c, q.Text)})
			if err != nil {
				return nil, err
			}
			res, err := lc.Engine.Search(ctx, engine.SearchRequest{Query: o.KWQuery(c, q.Text), Limit: s.Depth, Mode: engine.ModeKeyword, Filter: engine.Filter{ChannelIDs: []string{ch}}, MinScore: new(float64)})
			if err != nil {
				return nil, err
			}
			sq := StudyQuery{Vec: qv[0], Pool: pools[ch], Group: q.Category}
			if o.Boost != nil {
				sq.Boost = map[int]float64{}
				for _, t := range c.Turns {
					if b := o.Boost(c, t, q.Text); b != 0 {
						sq.Boost[itemOf[ch+"/"+t.DiaID]] = b
					}
				}
			}
			for _, r := range res {
				sq.KW = append(sq.KW, StudyHit{Item: itemOf[ch+"/"+lc.diaOf[r.Message.ID]], Norm: r.Scores.Keyword})
			}
			ev := q.Evidence
			sq.Judge = func(ranked []int) map[string]float64 {
				ids := make([]string, len(ranked))
				for i, it := range ranked {
					ids[i] = dias[it]
				}
				var m TurnMetrics
				m.add(ids, ev)
				return map[string]float64{"R@5": m.Recall5, "R@10": m.Recall10, "hit@10": m.Hit10}
			}
			s.Queries = append(s.Queries, sq)
		}
	}
	return s, nil
}

func embedAll(ctx context.Context, emb engine.Embedder, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for i := 0; i < len(texts); i += 64 {
		v, err := emb.Embed(ctx, texts[i:min(i+64, len(texts))])
		if err != nil {
			return nil, err
		}
		out = append(out, v...)
	}
	return out, nil
}
