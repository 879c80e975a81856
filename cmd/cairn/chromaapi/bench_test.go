package chromaapi_test

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"github.com/cairn-dev/cairn/vecstore"
	"math"
	"math/rand/v2"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/cmd/cairn/chromaapi"
)

// benchVectors returns n seeded unit vectors of dimension dim.
func benchVectors(r *rand.Rand, n, dim int) [][]float32 {
	out := make([][]float32, n)
	for i := range out {
		v := make([]float32, dim)
		var s float64
		for j := range v {
			v[j] = float32(r.NormFloat64())
			s += float64(v[j] * v[j])
		}
		for j := range v {
			v[j] /= float32(math.Sqrt(s))
		}
		out[i] = v
	}
	return out
}

func addBody(ids []string, vecs [][]float32, base64Enc bool) string {
	var b strings.Builder
	b.WriteString(`{"ids":[`)
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Quote(id))
	}
	b.WriteString(`],"embeddings":[`)
	buf := make([]byte, 0, 4*len(vecs[0]))
	for i, v := range vecs {
		if i > 0 {
			b.WriteByte(',')
		}
		if base64Enc {
			buf = buf[:0]
			for _, f := range v {
				buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(f))
			}
			b.WriteString(`"` + base64.StdEncoding.EncodeToString(buf) + `"`)
			continue
		}
		b.WriteByte('[')
		for j, f := range v {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.FormatFloat(float64(f), 'g', -1, 32))
		}
		b.WriteByte(']')
	}
	b.WriteString(`],"metadatas":[`)
	for i := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"bucket":%d,"pct":%d}`, i%10, i%100)
	}
	b.WriteString(`]}`)
	return b.String()
}

// BenchmarkHandler measures the adapter in-process (no network): add
// batches of 1000 (base64 as the JS client sends them, and JSON floats as
// Python sends them) and queries against 20,000 records of dimension 384.
func BenchmarkHandler(b *testing.B) {
	const dim, batch, n = 384, 1000, 20000
	r := rand.New(rand.NewPCG(1, 2))
	vecs := benchVectors(r, n, dim)
	ctx := b.Context()
	coll, err := vecstore.Open(ctx, b.TempDir(), vecstore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer coll.Close()
	h := chromaapi.New(chromaapi.Options{Collections: coll})
	do := func(method, path, body string) int {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Code
	}
	base := "http://x"
	id := createCollectionH(b, h, "bench")
	p := collPath + "/" + id
	_ = base
	bodies := make([]string, 0, n/batch)
	for i := 0; i < n; i += batch {
		ids := make([]string, batch)
		for k := range ids {
			ids[k] = "id" + strconv.Itoa(i+k)
		}
		bodies = append(bodies, addBody(ids, vecs[i:i+batch], true))
	}
	for _, body := range bodies {
		if code := do("POST", p+"/add", body); code != 201 {
			b.Fatalf("add: %d", code)
		}
	}
	for _, enc := range []bool{true, false} {
		b.Run(fmt.Sprintf("add/batch=1000/base64=%t", enc), func(b *testing.B) {
			id := createCollectionH(b, h, fmt.Sprintf("bench_add_%t_%d", enc, b.N))
			q := benchVectors(r, batch, dim)
			bodiesA := make([]string, b.N)
			for i := range bodiesA {
				ids := make([]string, batch)
				for k := range ids {
					ids[k] = fmt.Sprintf("b%d_%d", i, k)
				}
				bodiesA[i] = addBody(ids, q, enc)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if code := do("POST", collPath+"/"+id+"/add", bodiesA[i]); code != 201 {
					b.Fatalf("add: %d", code)
				}
			}
			b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "records/s")
		})
	}
	queries := benchVectors(r, 256, dim)
	qbodies := make([]string, len(queries))
	for i, q := range queries {
		var sb strings.Builder
		sb.WriteString(`{"query_embeddings":[[`)
		for j, f := range q {
			if j > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString(strconv.FormatFloat(float64(f), 'g', -1, 32))
		}
		sb.WriteString(`]],"n_results":10,"include":["metadatas","documents","distances"]`)
		qbodies[i] = sb.String()
	}
	for _, where := range []string{"", `,"where":{"bucket":3}`} {
		b.Run("query/n=20000/where="+strconv.FormatBool(where != ""), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if code := do("POST", p+"/query", qbodies[i%len(qbodies)]+where+"}"); code != 200 {
					b.Fatalf("query: %d", code)
				}
			}
		})
	}
}

func createCollectionH(b *testing.B, h *chromaapi.Handler, name string) string {
	srv := httptest.NewServer(h)
	defer srv.Close()
	return createCollection(b, srv.URL, name, nil)
}
