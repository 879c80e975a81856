package chunk

import (
	"unicode"
	"unicode/utf8"
)

// Defaults for Options.
const (
	DefaultMaxTokens = 256
	DefaultOverlap   = 32
)

// Options bound the chunks. The zero value means defaults.
type Options struct {
	MaxTokens int // per chunk; 0 means DefaultMaxTokens
	Overlap   int // tokens shared by consecutive chunks; 0 means DefaultOverlap, <0 means none
}

// Chunk is a byte range of the text and its token estimate.
type Chunk struct {
	Start, End int // text[Start:End]
	Tokens     int
}

// Tokens returns the token estimate of s (see the package doc).
func Tokens(s string) int {
	n := 0
	for _, t := range scan(s) {
		n += t.tokens
	}
	return n
}

// token is one scanned unit: a letter/digit run, a single other rune, or a
// white-space run (tokens 0).
type token struct {
	start, end int
	tokens     int
	space      bool
	brk        int // break strength after this unit: 3 paragraph, 2 line, 1 sentence/space
}

func runTokens(runes int) int {
	if runes <= 6 {
		return 1
	}
	return 1 + (runes-6+3)/4
}

func scan(s string) []token {
	var out []token
	i := 0
	for i < len(s) {
		r, w := utf8.DecodeRuneInString(s[i:])
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_':
			j, runes := i, 0
			for j < len(s) {
				r2, w2 := utf8.DecodeRuneInString(s[j:])
				if !(unicode.IsLetter(r2) || unicode.IsDigit(r2) || r2 == '_') {
					break
				}
				j += w2
				runes++
			}
			out = append(out, token{start: i, end: j, tokens: runTokens(runes)})
			i = j
		case unicode.IsSpace(r):
			j, nl := i, 0
			for j < len(s) {
				r2, w2 := utf8.DecodeRuneInString(s[j:])
				if !unicode.IsSpace(r2) {
					break
				}
				if r2 == '\n' {
					nl++
				}
				j += w2
			}
			brk := 1
			switch {
			case nl >= 2:
				brk = 3
			case nl == 1:
				brk = 2
			}
			out = append(out, token{start: i, end: j, space: true, brk: brk})
			i = j
		default:
			t := token{start: i, end: i + w, tokens: 1}
			out = append(out, t)
			i += w
		}
	}
	return out
}

// Split returns the chunks of text. A text within the budget is one chunk;
// an empty text has none.
func Split(text string, opts Options) []Chunk {
	max := opts.MaxTokens
	if max <= 0 {
		max = DefaultMaxTokens
	}
	overlap := opts.Overlap
	if overlap == 0 {
		overlap = DefaultOverlap
	}
	if overlap < 0 {
		overlap = 0
	}
	if overlap >= max/2 {
		overlap = max / 2
	}
	toks := scan(text)
	total := 0
	for _, t := range toks {
		total += t.tokens
	}
	if total == 0 && len(text) == 0 {
		return nil
	}
	if total <= max {
		return []Chunk{{Start: 0, End: len(text), Tokens: total}}
	}
	// Split over-long runs so that every unit fits the budget.
	toks = splitLong(text, toks, max)
	var out []Chunk
	i := 0
	for i < len(toks) {
		for i < len(toks) && toks[i].space {
			i++
		}
		if i >= len(toks) {
			break
		}
		// Extend as far as the budget allows, remembering the best break.
		sum, j := 0, i
		bestEnd, bestStrength := -1, -1
		for j < len(toks) && sum+toks[j].tokens <= max {
			sum += toks[j].tokens
			if toks[j].space && toks[j].brk >= bestStrength && j > i {
				bestEnd, bestStrength = j, toks[j].brk
			}
			j++
		}
		end := j
		if j < len(toks) && bestEnd > i && bestStrength >= 1 {
			end = bestEnd // cut at the strongest (latest among equals) break
		}
		if end <= i {
			end = i + 1
		}
		// trim trailing space
		last := end - 1
		for last > i && toks[last].space {
			last--
		}
		c := Chunk{Start: toks[i].start, End: toks[last].end}
		for k := i; k <= last; k++ {
			c.Tokens += toks[k].tokens
		}
		out = append(out, c)
		if end >= len(toks) {
			break
		}
		// Step back by about overlap tokens, but always make progress.
		next, back := end, 0
		for next-1 > i && back+toks[next-1].tokens <= overlap {
			back += toks[next-1].tokens
			next--
		}
		if next <= i {
			next = end
		}
		i = next
	}
	return out
}

func splitLong(text string, toks []token, max int) []token {
	need := false
	for _, t := range toks {
		if t.tokens > max {
			need = true
			break
		}
	}
	if !need {
		return toks
	}
	out := make([]token, 0, len(toks))
	for _, t := range toks {
		if t.tokens <= max {
			out = append(out, t)
			continue
		}
		// Cut the run every 6+4*(max-1) runes (max tokens each).
		start, runes := t.start, 0
		for k := t.start; k < t.end; {
			_, w := utf8.DecodeRuneInString(text[k:])
			k += w
			runes++
			if runes == 6+4*(max-1) || k == t.end {
				out = append(out, token{start: start, end: k, tokens: runTokens(runes)})
				start, runes = k, 0
			}
		}
	}
	return out
}
