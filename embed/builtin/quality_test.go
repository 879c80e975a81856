package builtin_test

import (
	"cmp"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/embed"
)

// TestSTSB measures Spearman's rank correlation between the cosine of the
// two sentences' vectors and the gold score on STS-B dev (CAIRN_STSB: its
// pairs.tsv) for the fp32 model (CAIRN_MINILM_FP32) and the built-in form,
// and holds the built-in form within 0.003 of fp32. It also reports the
// cosine between the two forms' vectors of every sentence.
func TestSTSB(t *testing.T) {
	dir, pairs := os.Getenv("CAIRN_MINILM_FP32"), os.Getenv("CAIRN_STSB")
	if dir == "" || pairs == "" {
		t.Skip("set CAIRN_MINILM_FP32 (fp32 model directory) and CAIRN_STSB (STS-B dev pairs.tsv)")
	}
	raw, err := os.ReadFile(pairs)
	if err != nil {
		t.Fatal(err)
	}
	var s1, s2 []string
	var gold []float64
	for i, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		f := strings.Split(line, "\t")
		if i == 0 || len(f) != 3 {
			continue
		}
		g, err := strconv.ParseFloat(f[2], 64)
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		s1, s2, gold = append(s1, f[0]), append(s2, f[1]), append(gold, g)
	}
	ref, err := embed.Open(context.Background(), dir, embed.Options{CacheSize: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	m := openBuiltin(t, embed.Options{CacheSize: -1})
	texts := append(slices.Clone(s1), s2...)
	embedAll := func(m *embed.Model) [][]float32 {
		v, err := m.Embed(context.Background(), texts)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	va, vb := embedAll(ref), embedAll(m)
	n := len(s1)
	score := func(v [][]float32) float64 {
		cos := make([]float64, n)
		for i := range cos {
			cos[i] = dot(v[i], v[n+i])
		}
		return spearman(cos, gold)
	}
	fp32, b := score(va), score(vb)
	cs := make([]float64, len(texts))
	var sum float64
	for i := range texts {
		cs[i] = dot(va[i], vb[i])
		sum += cs[i]
	}
	slices.Sort(cs)
	t.Logf("STS-B dev (%d pairs) Spearman: fp32 %.5f, built-in %.5f (loss %.5f)", n, fp32, b, fp32-b)
	t.Logf("cosine(fp32, built-in) over %d sentences: mean %.6f, min %.6f, p1 %.6f, median %.6f",
		len(cs), sum/float64(len(cs)), cs[0], cs[len(cs)/100], cs[len(cs)/2])
	if fp32-b > 0.003 {
		t.Errorf("built-in form loses %.5f Spearman against fp32 (limit 0.003)", fp32-b)
	}
	if cs[0] < 0.995 {
		t.Errorf("min cosine(fp32, built-in) %.5f < 0.995", cs[0])
	}
}

// spearman is Pearson's correlation of the ranks (ties get their mean rank).
func spearman(x, y []float64) float64 {
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
		dx, dy := rx[i]-mx, ry[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	return sxy / math.Sqrt(sxx*syy)
}

func ranks(v []float64) []float64 {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(v[a], v[b]) })
	r := make([]float64, len(v))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && v[idx[j+1]] == v[idx[i]] {
			j++
		}
		for k := i; k <= j; k++ {
			r[idx[k]] = float64(i+j)/2 + 1
		}
		i = j + 1
	}
	return r
}

// TestRetrievalNDCG measures semantic-only nDCG@10 (exact cosine ranking of
// every document) on the BEIR-format dev sets listed in CAIRN_BEIR (comma
// separated directories with corpus.jsonl, queries.jsonl, qrels.tsv) for
// the fp32 model (CAIRN_MINILM_FP32) and the built-in form, and holds the
// built-in form within 0.005 of fp32 on each.
func TestRetrievalNDCG(t *testing.T) {
	dir, sets := os.Getenv("CAIRN_MINILM_FP32"), os.Getenv("CAIRN_BEIR")
	if dir == "" || sets == "" {
		t.Skip("set CAIRN_MINILM_FP32 (fp32 model directory) and CAIRN_BEIR (dev set directories)")
	}
	ref, err := embed.Open(context.Background(), dir, embed.Options{CacheSize: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	m := openBuiltin(t, embed.Options{CacheSize: -1})
	for _, set := range strings.Split(sets, ",") {
		docs, queries, qrels := loadBEIR(t, set)
		var dt, qt []string
		for _, d := range docs {
			dt = append(dt, d.text)
		}
		for _, q := range queries {
			qt = append(qt, q.text)
		}
		score := func(m *embed.Model) float64 {
			dv, err := m.Embed(context.Background(), dt)
			if err != nil {
				t.Fatal(err)
			}
			qv, err := m.Embed(context.Background(), qt)
			if err != nil {
				t.Fatal(err)
			}
			var sum float64
			n := 0
			for qi, q := range queries {
				rel := qrels[q.id]
				if len(rel) == 0 {
					continue
				}
				order := make([]int, len(docs))
				sims := make([]float64, len(docs))
				for i := range order {
					order[i], sims[i] = i, dot(qv[qi], dv[i])
				}
				slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(sims[b], sims[a]) })
				var dcg, idcg float64
				for i, d := range order[:min(10, len(order))] {
					dcg += rel[docs[d].id] / math.Log2(float64(i)+2)
				}
				var gains []float64
				for _, g := range rel {
					gains = append(gains, g)
				}
				slices.SortFunc(gains, func(a, b float64) int { return cmp.Compare(b, a) })
				for i, g := range gains[:min(10, len(gains))] {
					idcg += g / math.Log2(float64(i)+2)
				}
				sum += dcg / idcg
				n++
			}
			return sum / float64(n)
		}
		a, b := score(ref), score(m)
		t.Logf("%s: semantic nDCG@10 fp32 %.5f, built-in %.5f (loss %.5f)", set, a, b, a-b)
		if a-b > 0.005 {
			t.Errorf("%s: built-in form loses %.5f nDCG@10 against fp32 (limit 0.005)", set, a-b)
		}
	}
}

type beirText struct{ id, text string }

func loadBEIR(t *testing.T, dir string) (docs, queries []beirText, qrels map[string]map[string]float64) {
	t.Helper()
	read := func(name string) []beirText {
		raw, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		var out []beirText
		for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
			var r struct{ ID, Title, Text string }
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			out = append(out, beirText{r.ID, r.Text})
		}
		return out
	}
	docs, queries = read("corpus.jsonl"), read("queries.jsonl")
	raw, err := os.ReadFile(filepath.Join(dir, "qrels.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	qrels = map[string]map[string]float64{}
	for i, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		f := strings.Split(line, "\t")
		if i == 0 || len(f) != 3 {
			continue
		}
		g, err := strconv.ParseFloat(f[2], 64)
		if err != nil || g <= 0 {
			continue
		}
		if qrels[f[0]] == nil {
			qrels[f[0]] = map[string]float64{}
		}
		qrels[f[0]][f[1]] = g
	}
	return docs, queries, qrels
}
