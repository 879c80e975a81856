package chromaapi_test

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/cmd/cairn/chromaapi"
)

// TestVectorCodeOptIn: a Chroma client opts a collection into 8-bit codes
// through its metadata ("cairn:vector_code": "sq8" or "sq8r"); it then reads back
// embeddings within a quantization step of what it wrote (a float32
// collection reads back exactly), and a bad value is a 400 naming the key.
func TestVectorCodeOptIn(t *testing.T) {
	base, _ := cairnServer(t, chromaapi.Options{})
	written := []float32{0.1, -0.25, 0.5, 0.8, -1, 0.333}
	for _, code := range []string{"float32", "sq8", "sq8r"} {
		a := call(t, base, "POST", collPath, `{"name":"codes-`+code+`","metadata":{"cairn:vector_code":"`+code+`"}}`, nil)
		if a.status != 200 {
			t.Fatalf("create %s: %d %s", code, a.status, a.body)
		}
		var c struct {
			ID       string
			Metadata map[string]any
		}
		if err := json.Unmarshal([]byte(a.body), &c); err != nil || c.Metadata["cairn:vector_code"] != code {
			t.Fatalf("create %s: %s", code, a.body)
		}
		emb, _ := json.Marshal(written)
		a = call(t, base, "POST", collPath+"/"+c.ID+"/add", `{"ids":["a"],"embeddings":[`+string(emb)+`]}`, nil)
		if a.status/100 != 2 {
			t.Fatalf("add %s: %d %s", code, a.status, a.body)
		}
		a = call(t, base, "POST", collPath+"/"+c.ID+"/get", `{"ids":["a"],"include":["embeddings"]}`, nil)
		var got struct{ Embeddings [][]float64 }
		if err := json.Unmarshal([]byte(a.body), &got); err != nil || len(got.Embeddings) != 1 {
			t.Fatalf("get %s: %s", code, a.body)
		}
		step := (0.8 - -1.0) / 255
		for i, w := range written {
			d := math.Abs(got.Embeddings[0][i] - float64(w))
			if code == "float32" && float32(got.Embeddings[0][i]) != w || code != "float32" && d > step {
				t.Errorf("%s: component %d read back %v, wrote %v", code, i, got.Embeddings[0][i], w)
			}
		}
	}
	a := call(t, base, "POST", collPath, `{"name":"codes-bad","metadata":{"cairn:vector_code":"int4"}}`, nil)
	if a.status != 400 || !strings.Contains(a.body, "cairn:vector_code") {
		t.Errorf("bad code: %d %s", a.status, a.body)
	}
}
