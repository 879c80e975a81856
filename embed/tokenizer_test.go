package embed_test

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cairn-dev/cairn/embed"
)

var tokPathOnce = sync.OnceValues(func() (string, error) {
	const rel = "test/data/all-minilm-l6-v2.json"
	if out, err := exec.Command("go", "env", "GOMODCACHE").Output(); err == nil {
		p := filepath.Join(strings.TrimSpace(string(out)), "github.com/daulet/tokenizers@v1.24.0", rel)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	out, err := exec.Command("go", "mod", "download", "-json", "github.com/daulet/tokenizers@v1.24.0").Output()
	if err != nil {
		return "", err
	}
	var m struct{ Dir string }
	if err := json.Unmarshal(out, &m); err != nil || m.Dir == "" {
		return "", err
	}
	return filepath.Join(m.Dir, rel), nil
})

// miniLMTokenizer returns the path of the real all-MiniLM-L6-v2 tokenizer.json
// shipped as test data in github.com/daulet/tokenizers v1.24.0.
func miniLMTokenizer(t testing.TB) string {
	t.Helper()
	p, err := tokPathOnce()
	if err == nil {
		if _, err = os.Stat(p); err == nil {
			return p
		}
	}
	t.Skipf("all-MiniLM-L6-v2 tokenizer.json unavailable (needs github.com/daulet/tokenizers@v1.24.0 in the module cache, `go mod download`): %v", err)
	return ""
}

func TestTokenizerParity(t *testing.T) {
	tok, err := embed.LoadTokenizer(miniLMTokenizer(t), 256)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("testdata/tokenizer_parity.json")
	if err != nil {
		t.Fatal(err)
	}
	var parity struct {
		Cases []struct {
			Hex string  `json:"hex"`
			IDs []int32 `json:"ids"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(data, &parity); err != nil {
		t.Fatal(err)
	}
	if len(parity.Cases) < 50 {
		t.Fatalf("only %d parity cases", len(parity.Cases))
	}
	for _, c := range parity.Cases {
		raw, err := hex.DecodeString(c.Hex)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := tok.Encode(string(raw))
		if !slices.Equal(got, c.IDs) {
			t.Errorf("Encode(%q)\n got %v\nwant %v", raw, got, c.IDs)
		}
	}
}

func TestTokenizerTruncation(t *testing.T) {
	tok, err := embed.LoadTokenizer(miniLMTokenizer(t), 8)
	if err != nil {
		t.Fatal(err)
	}
	ids, dropped := tok.Encode("one two three four five six seven eight nine")
	if len(ids) != 8 || dropped != 3 || ids[0] != 101 || ids[7] != 102 {
		t.Fatalf("Encode = %v, dropped %d; want 8 ids with [CLS]..[SEP] and 3 dropped", ids, dropped)
	}
	ids, dropped = tok.Encode("")
	if !slices.Equal(ids, []int32{101, 102}) || dropped != 0 {
		t.Fatalf("Encode(\"\") = %v, %d", ids, dropped)
	}
}

func FuzzTokenizer(f *testing.F) {
	tok, err := embed.LoadTokenizer(miniLMTokenizer(f), 64)
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{"", "İ", "hello world", "\xff\xfe", "中文", "😀 [CLS][SEP]", "a\u0301", strings.Repeat("x", 200)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ids, dropped := tok.Encode(s)
		if len(ids) < 2 || len(ids) > 64 || ids[0] != 101 || ids[len(ids)-1] != 102 || dropped < 0 {
			t.Fatalf("Encode(%q) = %v, %d", s, ids, dropped)
		}
		for _, id := range ids {
			if id < 0 || int(id) >= tok.VocabSize() {
				t.Fatalf("id %d out of range", id)
			}
		}
		if dropped == 0 && len(tok.Pieces(s))+2 != len(ids) {
			t.Fatalf("Pieces and Encode disagree on %q", s)
		}
	})
}

func FuzzParseTokenizer(f *testing.F) {
	f.Add([]byte(`{"model":{"type":"WordPiece","vocab":{"[UNK]":0,"[CLS]":1,"[SEP]":2,"a":3}}}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tok, err := embed.ParseTokenizer(data, 16)
		if err != nil {
			return
		}
		tok.Encode("a b c İ 中 \xff")
	})
}
