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
// one string and the slots of an open-addressing table hold offsets, so a
// 30,000-token vocabulary is three allocations with no pointer per entry:
// a Go map of strings cost most of a model's load time (an allocation and
// a map insertion per token, then the collector scanning them).
type vocabTable struct {
	keys  string
	slots []vocabSlot // a power of two, at most half full
	seed  maphash.Seed
	n     int // tokens
	maxID int32
}

type vocabSlot struct {
	off, len uint32
	id       int32
	used     bool
}

func (v *vocabTable) get(s string) (int32, bool) {
	if v.n == 0 {
		return 0, false
	}
	mask := uint64(len(v.slots) - 1)
	for i := maphash.String(v.seed, s) & mask; ; i = (i + 1) & mask {
		sl := &v.slots[i]
		if !sl.used {
			return 0, false
		}
		if int(sl.len) == len(s) && v.keys[sl.off:sl.off+sl.len] == s {
			return sl.id, true
		}
	}
}

// size is the number of tokens.
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
	v := &vocabTable{keys: b.keys.String(), seed: maphash.MakeSeed(), maxID: -1}
	v.slots = make([]vocabSlot, max(2, 1<<bits.Len(uint(2*len(b.ids)))))
	mask := uint64(len(v.slots) - 1)
	for k, off := range b.offs {
		end := uint32(len(v.keys))
		if k+1 < len(b.offs) {
			end = b.offs[k+1]
		}
		key := v.keys[off:end]
		i := maphash.String(v.seed, key) & mask
		for ; v.slots[i].used; i = (i + 1) & mask {
			if sl := v.slots[i]; v.keys[sl.off:sl.off+sl.len] == key {
				break
			}
		}
		if !v.slots[i].used {
			v.n++
		}
		v.slots[i] = vocabSlot{off: off, len: end - off, id: b.ids[k], used: true}
		v.maxID = max(v.maxID, b.ids[k])
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
