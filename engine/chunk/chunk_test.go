package chunk_test

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"

	"github.com/cairn-dev/cairn/engine/chunk"
)

func TestTokens(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"", 0},
		{"   \n\t", 0},
		{"the", 1},
		{"the cat sat.", 4},
		{"internationalization", 1 + 4},
		{"fmt.Println(x)", 1 + 1 + 2 + 1 + 1 + 1}, {"hello", 1},
		{"héllo wörld", 2},
		{"日本語", 1},
		{"a_b_c", 1},
	}
	for _, tc := range tests {
		if got := chunk.Tokens(tc.in); got != tc.want {
			t.Errorf("Tokens(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestSplitShort(t *testing.T) {
	if got := chunk.Split("", chunk.Options{}); len(got) != 0 {
		t.Errorf("Split(\"\") = %v", got)
	}
	got := chunk.Split("hello world", chunk.Options{})
	if len(got) != 1 || got[0] != (chunk.Chunk{Start: 0, End: 11, Tokens: 2}) {
		t.Errorf("Split(short) = %v", got)
	}
}

func TestSplitParagraphs(t *testing.T) {
	para := strings.TrimSpace(strings.Repeat("word ", 40))
	text := para + "\n\n" + para + "\n\n" + para
	got := chunk.Split(text, chunk.Options{MaxTokens: 100, Overlap: -1})
	if len(got) != 2 {
		t.Fatalf("Split = %v, want 2 chunks", got)
	}
	if s := text[got[0].Start:got[0].End]; s != para+"\n\n"+para {
		t.Errorf("first chunk does not end at the paragraph break: %q", s)
	}
	checkChunks(t, text, got, 100)
}

func checkChunks(t *testing.T, text string, cs []chunk.Chunk, max int) {
	t.Helper()
	covered := make([]bool, len(text))
	prev := -1
	for i, c := range cs {
		if c.Start < 0 || c.End > len(text) || c.Start >= c.End {
			t.Fatalf("chunk %d = %+v out of range (len %d)", i, c, len(text))
		}
		if c.Start <= prev {
			t.Fatalf("chunk %d starts at %d, not after the previous start %d", i, c.Start, prev)
		}
		prev = c.Start
		if c.Tokens > max {
			t.Fatalf("chunk %d has %d tokens > %d", i, c.Tokens, max)
		}
		if got := chunk.Tokens(text[c.Start:c.End]); got != c.Tokens {
			t.Fatalf("chunk %d: Tokens = %d, recount %d", i, c.Tokens, got)
		}
		for k := c.Start; k < c.End; k++ {
			covered[k] = true
		}
	}
	for k, r := range text {
		if !covered[k] && !unicode.IsSpace(r) {
			t.Fatalf("byte %d (%q) is in no chunk", k, r)
		}
	}
}

func TestSplitRandom(t *testing.T) {
	seed := uint64(1)
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	words := []string{"the", "engine", "stores", "messages", "x", "internationalization", "fmt.Println(\"hi\")", "\n", "\n\n", "日本語", "{", "}", strings.Repeat("a", 3000)}
	for iter := 0; iter < 200; iter++ {
		var b strings.Builder
		n := rng.IntN(800)
		for range n {
			b.WriteString(words[rng.IntN(len(words))])
			b.WriteByte(' ')
		}
		text := b.String()
		max := 8 + rng.IntN(300)
		cs := chunk.Split(text, chunk.Options{MaxTokens: max, Overlap: rng.IntN(max)})
		checkChunks(t, text, cs, max)
	}
}

func FuzzSplit(f *testing.F) {
	f.Add("hello world\n\nsecond paragraph", 4, 1)
	f.Add(strings.Repeat("x", 100), 3, 0)
	f.Add("\xff\xfe abc", 1, -1)
	f.Fuzz(func(t *testing.T, text string, max, overlap int) {
		if max <= 0 || max > 10000 {
			max = 16
		}
		cs := chunk.Split(text, chunk.Options{MaxTokens: max, Overlap: overlap})
		checkChunks(t, text, cs, max)
	})
}

func BenchmarkSplit(b *testing.B) {
	text := strings.Repeat("The engine stores each message once and indexes it.\n", 2000)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		chunk.Split(text, chunk.Options{})
	}
}
