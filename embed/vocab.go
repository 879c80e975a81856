package embed

import (
	"encoding/json"
	"fmt"
	"hash/maphash"
	"math"
	"math/bits"
	"strings"
)

// vocabTable maps WordPiece tokens to ids. The tokens are concatenated in
// one string, in the order read, and an open-addressing table of token
// indexes finds them, so a 30,000-token vocabulary is a few allocations
// with no pointer per entry: a Go map of strings cost most of a model's
// load time (an allocation and a map insertion per token, then the
// collector scanning them).
type vocabTable struct {
	keys  string   // token i is keys[offs[i]:offs[i+1]]
	offs  []uint32 // len(ids)+1
	ids   []int32
	slots []uint32 // token index + 1, or 0 for an empty slot; a power of two, at most half full
	seed  maphash.Seed
	n     int // distinct tokens
	maxID int32
}

func (v *vocabTable) key(i uint32) string { return v.keys[v.offs[i]:v.offs[i+1]] }

func (v *vocabTable) get(s string) (int32, bool) {
	if v.n == 0 {
		return 0, false
	}
	mask := uint64(len(v.slots) - 1)
	for i := maphash.String(v.seed, s) & mask; ; i = (i + 1) & mask {
		k := v.slots[i]
		if k == 0 {
			return 0, false
		}
		if v.key(k-1) == s {
			return v.ids[k-1], true
		}
	}
}

// size is the number of distinct tokens.
func (v *vocabTable) size() int { return v.n }

// vocabBuilder collects tokens before the table is laid out; a later
// duplicate replaces an earlier one, as encoding/json's map decoding does.
type vocabBuilder struct {
	keys strings.Builder
	offs []uint32
	ids  []int32
}

func (b *vocabBuilder) add(key []byte, id int32) {
	b.offs = append(b.offs, uint32(b.keys.Len()))
	b.keys.Write(key)
	b.ids = append(b.ids, id)
}

func (b *vocabBuilder) table() *vocabTable {
	v := &vocabTable{keys: b.keys.String(), offs: append(b.offs, uint32(b.keys.Len())), ids: b.ids, seed: maphash.MakeSeed(), maxID: -1}
	v.slots = make([]uint32, max(2, 1<<bits.Len(uint(2*len(b.ids)))))
	mask := uint64(len(v.slots) - 1)
	for k := range v.ids {
		key := v.key(uint32(k))
		i := maphash.String(v.seed, key) & mask
		for ; v.slots[i] != 0 && v.key(v.slots[i]-1) != key; i = (i + 1) & mask {
		}
		if v.slots[i] == 0 {
			v.n++
		}
		v.slots[i] = uint32(k) + 1
		v.maxID = max(v.maxID, v.ids[k])
	}
	return v
}

// parseVocab reads WordPiece's vocabulary, a JSON object {"token": id, ...}
// at the start of b (after optional spaces), or null, and returns the
// table (nil for null) and the bytes it took. Keys are decoded by
// encoding/json only when they hold an escape; ids are integers that fit
// in an int32.
func parseVocab(b []byte) (*vocabTable, int, error) {
	bad := func(at int) error { return fmt.Errorf("vocab: malformed object at byte %d", at) }
	i := skipSpace(b, 0)
	if i+4 <= len(b) && string(b[i:i+4]) == "null" {
		return nil, i + 4, nil
	}
	if i >= len(b) || b[i] != '{' {
		return nil, 0, bad(i)
	}
	i++
	var vb vocabBuilder
	vb.keys.Grow(len(b) / 2)
	for first := true; ; first = false {
		i = skipSpace(b, i)
		if i < len(b) && b[i] == '}' && first {
			i++
			break
		}
		if i >= len(b) || b[i] != '"' {
			return nil, 0, bad(i)
		}
		start := i
		end, escaped := stringEnd(b, i)
		if end < 0 {
			return nil, 0, bad(start)
		}
		i = end
		key := b[start+1 : i-1]
		if escaped {
			var s string
			if err := json.Unmarshal(b[start:i], &s); err != nil {
				return nil, 0, fmt.Errorf("vocab: key at byte %d: %v", start, err)
			}
			key = []byte(s)
		}
		i = skipSpace(b, i)
		if i >= len(b) || b[i] != ':' {
			return nil, 0, bad(i)
		}
		i = skipSpace(b, i+1)
		id, n, ok := parseInt32(b[i:])
		if !ok {
			return nil, 0, fmt.Errorf("vocab: id of %q at byte %d is not an int32", key, i)
		}
		vb.add(key, id)
		i = skipSpace(b, i+n)
		if i < len(b) && b[i] == ',' {
			i++
			continue
		}
		if i < len(b) && b[i] == '}' {
			i++
			break
		}
		return nil, 0, bad(i)
	}
	return vb.table(), i, nil
}

// parseInt32 reads a JSON integer (an optional minus sign, then digits
// without a leading zero) at the start of b that fits in an int32.
func parseInt32(b []byte) (v int32, n int, ok bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		n++
	}
	start := n
	var x int64
	for n < len(b) && b[n] >= '0' && b[n] <= '9' {
		x = x*10 + int64(b[n]-'0')
		if x > math.MaxInt32+1 {
			return 0, 0, false
		}
		n++
	}
	if n == start || (b[start] == '0' && n-start > 1) || (n < len(b) && (b[n] == '.' || b[n] == 'e' || b[n] == 'E')) {
		return 0, 0, false
	}
	if neg {
		x = -x
	}
	if x > math.MaxInt32 || x < math.MinInt32 {
		return 0, 0, false
	}
	return int32(x), n, true
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index just past the JSON string starting at b[i]
// (a quote), whether it holds an escape, or -1 when it does not end.
func stringEnd(b []byte, i int) (int, bool) {
	escaped := false
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			escaped = true
			i++
		case '"':
			return i + 1, escaped
		}
	}
	return -1, escaped
}

// cutVocab finds the value of "vocab" in the top-level "model" object of a
// tokenizer.json (the last one, as encoding/json keeps), parses it, and
// returns the document with that value replaced by null, so that
// encoding/json decodes the rest (a few kilobytes) instead of validating
// and skipping the whole vocabulary. ok is false when the document is not
// laid out so (the caller then decodes it all).
func cutVocab(doc []byte) (rest []byte, vocab *vocabTable, ok bool, err error) {
	depth, vs, ve := 0, -1, -1
	var key []byte   // the last key read at this depth
	inModel := false // inside the top-level "model" object
	for i := 0; i < len(doc); {
		switch c := doc[i]; c {
		case '"':
			end, _ := stringEnd(doc, i)
			if end < 0 {
				return nil, nil, false, nil
			}
			s := doc[i+1 : end-1]
			j := skipSpace(doc, end)
			if j < len(doc) && doc[j] == ':' {
				key = s
				if depth == 2 && inModel && string(s) == "vocab" {
					v, n, err := parseVocab(doc[j+1:])
					if err != nil {
						return nil, nil, false, err
					}
					vocab, vs, ve = v, j+1, j+1+n
					i = ve
					continue
				}
			}
			i = end
		case '{', '[':
			if depth == 1 && c == '{' && string(key) == "model" {
				inModel = true
			}
			depth++
			key = nil
			i++
		case '}', ']':
			depth--
			if depth == 1 {
				inModel = false
			}
			i++
		default:
			i++
		}
	}
	if vs < 0 {
		return nil, nil, false, nil
	}
	rest = make([]byte, 0, len(doc)-(ve-vs)+4)
	rest = append(append(append(rest, doc[:vs]...), "null"...), doc[ve:]...)
	return rest, vocab, true, nil
}
