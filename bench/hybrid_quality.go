package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/engine/sqlite"
)

// RetrievalSet is a dev retrieval set: documents, queries and graded
// relevance judgements.
type RetrievalSet struct {
	Name    string
	Docs    []Doc
	Queries []Query
	Qrels   map[string]map[string]float64 // query id -> doc id -> gain (> 0)
}

// Doc is one corpus document.
type Doc struct{ ID, Title, Text string }

// Query is one query.
type Query struct{ ID, Text string }

// LoadBEIR reads a directory with corpus.jsonl, queries.jsonl and qrels.tsv
// (the format of ../shared/datasets).
func LoadBEIR(name, dir string) (*RetrievalSet, error) {
	s := &RetrievalSet{Name: name, Qrels: map[string]map[string]float64{}}
	if err := readJSONL(filepath.Join(dir, "corpus.jsonl"), func(b []byte) error {
		var d struct{ ID, Title, Text string }
		if err := json.Unmarshal(b, &d); err != nil {
			return err
		}
		s.Docs = append(s.Docs, Doc(d))
		return nil
	}); err != nil {
		return nil, err
	}
	if err := readJSONL(filepath.Join(dir, "queries.jsonl"), func(b []byte) error {
		var q struct{ ID, Text string }
		if err := json.Unmarshal(b, &q); err != nil {
			return err
		}
		s.Queries = append(s.Queries, Query(q))
		return nil
	}); err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(dir, "qrels.tsv"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for first := true; sc.Scan(); first = false {
		if first {
			continue
		}
		p := strings.Split(sc.Text(), "\t")
		if len(p) != 3 {
			continue
		}
		g, err := strconv.ParseFloat(p[2], 64)
		if err != nil || g <= 0 {
			continue
		}
		if s.Qrels[p[0]] == nil {
			s.Qrels[p[0]] = map[string]float64{}
		}
		s.Qrels[p[0]][p[1]] = g
	}
	return s, sc.Err()
}

// LoadSTSBRetrieval turns the STS-B dev pairs into a retrieval set: the
// corpus is every distinct sentence; each pair scored >= 4 makes
// sentence1 a query whose relevant document is sentence2 (gain = score - 3,
// so 5 -> 2, 4 -> 1). Queries with the same text are merged.
func LoadSTSBRetrieval(path string) (*RetrievalSet, [][3]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	s := &RetrievalSet{Name: "stsb-dev (pairs >= 4 as retrieval)", Qrels: map[string]map[string]float64{}}
	ids := map[string]string{}
	docID := func(t string) string {
		if id, ok := ids[t]; ok {
			return id
		}
		id := strconv.Itoa(len(ids) + 1)
		ids[t] = id
		s.Docs = append(s.Docs, Doc{ID: id, Text: t})
		return id
	}
	qids := map[string]string{}
	var pairs [][3]string
	sc := bufio.NewScanner(f)
	for first := true; sc.Scan(); first = false {
		if first {
			continue
		}
		p := strings.Split(sc.Text(), "\t")
		if len(p) != 3 {
			continue
		}
		pairs = append(pairs, [3]string{p[0], p[1], p[2]})
		d1, d2 := docID(p[0]), docID(p[1])
		_ = d1
		score, err := strconv.ParseFloat(p[2], 64)
		if err != nil || score < 4 {
			continue
		}
		qid, ok := qids[p[0]]
		if !ok {
			qid = "q" + strconv.Itoa(len(qids)+1)
			qids[p[0]] = qid
			s.Queries = append(s.Queries, Query{ID: qid, Text: p[0]})
			s.Qrels[qid] = map[string]float64{}
		}
		s.Qrels[qid][d2] = score - 3
	}
	return s, pairs, sc.Err()
}

func readJSONL(path string, f func([]byte) error) error {
	file, err := os.Open(path)
	if err != nil {
		return err
	}
	defer file.Close()
	r := bufio.NewReaderSize(file, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if len(strings.TrimSpace(string(line))) > 0 {
			if ferr := f(line); ferr != nil {
				return fmt.Errorf("%s: %w", path, ferr)
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// DocContent is how a dev document becomes a message: "title\ntext", as a
// user would store a titled note (Cranfield's text repeats its title, so
// title terms count twice, much like the reference BM25's separate title
// column).
func DocContent(d Doc) string {
	t, x := strings.TrimSpace(d.Title), strings.TrimSpace(d.Text)
	switch {
	case t == "" && x == "":
		return "(empty document " + d.ID + ")"
	case t == "":
		return x
	case x == "":
		return t
	}
	return t + "\n" + x
}

// Corpus is a retrieval set loaded into an engine.
type Corpus struct {
	Set    *RetrievalSet
	Engine *engine.Engine
	docsOf map[int64][]string // message id -> doc ids (identical contents share a message)
	// Load is how long storing and embedding took.
	Load time.Duration
	// dir and opts are where and how LoadCorpus opened the engine (Reopen).
	dir  string
	opts engine.Options
}

// LoadCorpus stores every document of s as a message (channel "bench",
// sender "bench", same time and confidence, so ranking is relevance only)
// in a fresh engine in dir with embedder emb (nil = keyword only), and
// waits for every vector.
func LoadCorpus(ctx context.Context, dir string, s *RetrievalSet, emb engine.Embedder) (*Corpus, error) {
	opts := engine.Options{Embedder: emb, Now: func() time.Time { return corpusTime }}
	e, err := sqlite.OpenEngine(ctx, dir, opts, sqlite.Options{})
	if err != nil {
		return nil, err
	}
	c, err := LoadCorpusInto(ctx, e, s)
	if err != nil {
		e.Close()
		return nil, err
	}
	c.dir, c.opts = dir, opts
	return c, nil
}

// corpusTime is every corpus message's time (and the engine's clock).
var corpusTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// CorpusClock is the engine clock LoadCorpusInto expects, so that recency
// plays no part in the ranking.
func CorpusClock() time.Time { return corpusTime }

// LoadCorpusInto is LoadCorpus on an open, empty engine e (whose clock
// should be CorpusClock), which the Corpus then owns.
func LoadCorpusInto(ctx context.Context, e *engine.Engine, s *RetrievalSet) (*Corpus, error) {
	at := corpusTime
	c := &Corpus{Set: s, Engine: e, docsOf: map[int64][]string{}}
	start := time.Now()
	for i := 0; i < len(s.Docs); i += 1000 {
		part := s.Docs[i:min(i+1000, len(s.Docs))]
		in := make([]engine.NewMessage, len(part))
		for j, d := range part {
			in[j] = engine.NewMessage{Channel: "bench", Sender: "bench", Content: DocContent(d), CreatedAt: at}
		}
		res, err := e.StoreMessages(ctx, in)
		if err != nil {
			return nil, err
		}
		for j, r := range res {
			c.docsOf[r.ID] = append(c.docsOf[r.ID], part[j].ID)
		}
	}
	if err := ops.SyncVectors(ctx, e, nil); err != nil {
		return nil, err
	}
	c.Load = time.Since(start)
	return c, nil
}

// Close closes the engine.
func (c *Corpus) Close() error { return c.Engine.Close() }

// Reopen closes the engine of a corpus LoadCorpus stored and opens the
// same store again with query analysis qa, so that a search option is
// measured on the documents already stored and embedded.
func (c *Corpus) Reopen(ctx context.Context, qa engine.QueryAnalysis) error {
	if c.dir == "" {
		return fmt.Errorf("bench: Reopen needs a corpus stored by LoadCorpus")
	}
	e, err := reopen(ctx, c.Engine, c.dir, c.opts, qa)
	if err != nil {
		return err
	}
	c.Engine = e
	return nil
}

// reopen closes e, opened on dir with opts, and opens dir again with opts
// but query analysis qa.
func reopen(ctx context.Context, e *engine.Engine, dir string, opts engine.Options, qa engine.QueryAnalysis) (*engine.Engine, error) {
	if err := e.Close(); err != nil {
		return nil, err
	}
	opts.QueryAnalysis = qa
	return sqlite.OpenEngine(ctx, dir, opts, sqlite.Options{})
}

// Metrics are mean retrieval metrics over the judged queries.
type Metrics struct {
	NDCG10    float64
	Recall100 float64
	MRR10     float64
	Queries   int
	// PerQuery holds each query's nDCG@10 (for paired comparisons).
	PerQuery []float64
}

// Evaluate runs every judged query with req as template (Query and Limit
// are set per query) and averages nDCG@10 (linear gains), recall@100 and
// MRR@10.
func (c *Corpus) Evaluate(ctx context.Context, req engine.SearchRequest) (Metrics, error) {
	var m Metrics
	for _, q := range c.Set.Queries {
		rel := c.Set.Qrels[q.ID]
		if len(rel) == 0 {
			continue
		}
		r := req
		r.Query, r.Limit = q.Text, 100
		r.MinScore = everyResult(r.MinScore)
		res, err := c.Engine.Search(ctx, r)
		if err != nil {
			return m, fmt.Errorf("query %s: %w", q.ID, err)
		}
		var ranked []string
		for _, x := range res {
			ranked = append(ranked, c.docsOf[x.Message.ID]...)
		}
		n := ndcg(ranked, rel, 10)
		m.NDCG10 += n
		m.PerQuery = append(m.PerQuery, n)
		m.Recall100 += recall(ranked, rel, 100)
		m.MRR10 += mrr(ranked, rel, 10)
		m.Queries++
	}
	if m.Queries > 0 {
		m.NDCG10 /= float64(m.Queries)
		m.Recall100 /= float64(m.Queries)
		m.MRR10 /= float64(m.Queries)
	}
	return m, nil
}

func ndcg(ranked []string, rel map[string]float64, k int) float64 {
	var dcg float64
	for i, id := range ranked[:min(k, len(ranked))] {
		dcg += rel[id] / math.Log2(float64(i)+2)
	}
	gains := make([]float64, 0, len(rel))
	for _, g := range rel {
		gains = append(gains, g)
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(gains)))
	var idcg float64
	for i, g := range gains[:min(k, len(gains))] {
		idcg += g / math.Log2(float64(i)+2)
	}
	if idcg == 0 {
		return 0
	}
	return dcg / idcg
}

func recall(ranked []string, rel map[string]float64, k int) float64 {
	hit := 0
	for _, id := range ranked[:min(k, len(ranked))] {
		if rel[id] > 0 {
			hit++
		}
	}
	return float64(hit) / float64(len(rel))
}

func mrr(ranked []string, rel map[string]float64, k int) float64 {
	for i, id := range ranked[:min(k, len(ranked))] {
		if rel[id] > 0 {
			return 1 / float64(i+1)
		}
	}
	return 0
}

// Spearman is the rank correlation of x and y (average ranks for ties).
func Spearman(x, y []float64) float64 {
	rx, ry := ranks(x), ranks(y)
	var mx, my float64
	for i := range rx {
		mx += rx[i]
		my += ry[i]
	}
	mx /= float64(len(rx))
	my /= float64(len(ry))
	var sxy, sxx, syy float64
	for i := range rx {
		sxy += (rx[i] - mx) * (ry[i] - my)
		sxx += (rx[i] - mx) * (rx[i] - mx)
		syy += (ry[i] - my) * (ry[i] - my)
	}
	if sxx == 0 || syy == 0 {
		return 0
	}
	return sxy / math.Sqrt(sxx*syy)
}

func ranks(v []float64) []float64 {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return v[idx[a]] < v[idx[b]] })
	r := make([]float64, len(v))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && v[idx[j+1]] == v[idx[i]] {
			j++
		}
		avg := float64(i+j)/2 + 1
		for k := i; k <= j; k++ {
			r[idx[k]] = avg
		}
		i = j + 1
	}
	return r
}

// LexicalEmbedder is NOT a language model: a feature-hashed bag of
// lower-cased words (each word adds a dense pseudo-random ±1 vector seeded
// by its hash), L2-normalized. It carries lexical signal only and stands in
// for "a vector side that carries some signal" when judging fusion, since
// no real embedding weights exist on this machine.
type LexicalEmbedder struct{ D int }

// Dim returns the dimension.
func (l LexicalEmbedder) Dim() int { return l.D }

// ModelID names the embedder.
func (l LexicalEmbedder) ModelID() string { return fmt.Sprintf("lexical-hash-bow-%d", l.D) }

// Embed returns one vector per text.
func (l LexicalEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		v := make([]float32, l.D)
		for _, w := range strings.FieldsFunc(strings.ToLower(t), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			h := fnv.New64a()
			h.Write([]byte(w))
			r := rand.New(rand.NewPCG(h.Sum64(), 7))
			for j := range v {
				if r.Uint64()&1 == 1 {
					v[j]++
				} else {
					v[j]--
				}
			}
		}
		var n float64
		for _, x := range v {
			n += float64(x) * float64(x)
		}
		if n == 0 {
			v[0], n = 1, 1
		}
		for j := range v {
			v[j] = float32(float64(v[j]) / math.Sqrt(n))
		}
		out[i] = v
	}
	return out, nil
}

// NoiseEmbedder is NOT a language model: a pseudo-random unit vector per
// distinct text (no signal at all), the worst case for fusion.
type NoiseEmbedder struct{ D int }

// Dim returns the dimension.
func (n NoiseEmbedder) Dim() int { return n.D }

// ModelID names the embedder.
func (n NoiseEmbedder) ModelID() string { return fmt.Sprintf("noise-%d", n.D) }

// Embed returns one vector per text.
func (n NoiseEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		h := fnv.New64a()
		h.Write([]byte(t))
		r := rand.New(rand.NewPCG(h.Sum64(), 9))
		v := make([]float32, n.D)
		var s float64
		for j := range v {
			v[j] = float32(r.NormFloat64())
			s += float64(v[j]) * float64(v[j])
		}
		for j := range v {
			v[j] = float32(float64(v[j]) / math.Sqrt(s))
		}
		out[i] = v
	}
	return out, nil
}

// everyResult is a request's min_score for measuring a ranking: the one
// given, else 0 (no relevance floor), so that every ranked result counts.
func everyResult(min *float64) *float64 {
	if min != nil {
		return min
	}
	return new(float64)
}
