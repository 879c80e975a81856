package fts

import (
	"unicode"
	"unicode/utf8"
)

// The tokenizer of the in-memory index: FTS5's 'porter unicode61' with its
// default options, for the purposes of ranking ASCII query terms exactly.
//
//   - ASCII: letters and digits are token characters, A-Z is lower-cased,
//     everything else separates tokens.
//   - Other characters: letters, numbers and private-use characters
//     (unicode61's default categories "L* N* Co") are token characters;
//     combining diacritical marks U+0300..U+036F are token characters that
//     unicode61 removes (remove_diacritics); every other character
//     separates tokens. Non-ASCII letters are lower-cased with Go's tables,
//     which can differ from unicode61's folding (which also strips
//     diacritics): the index never answers a query whose terms are not
//     ASCII (see Index.Search), so only the token boundaries matter, and
//     they decide the document lengths BM25 uses. The index compares its
//     token total with FTS5's after every catch-up and stops answering if
//     they ever differ.

// tokenize calls fn for every token of text with its lower-cased bytes
// (valid until the next call) and its byte range in text.
func tokenize(text string, buf []byte, fn func(tok []byte, start, end int)) []byte {
	start := -1
	tok := buf[:0]
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			switch {
			case 'a' <= c && c <= 'z' || '0' <= c && c <= '9':
				if start < 0 {
					start, tok = i, tok[:0]
				}
				tok = append(tok, c)
			case 'A' <= c && c <= 'Z':
				if start < 0 {
					start, tok = i, tok[:0]
				}
				tok = append(tok, c+'a'-'A')
			default:
				if start >= 0 {
					emit(fn, tok, start, i)
					start = -1
				}
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			// unicode61 reads invalid UTF-8 leniently; treat it as a
			// separator (the consistency check catches disagreement).
			if start >= 0 {
				emit(fn, tok, start, i)
				start = -1
			}
		case isTokenRune(r):
			if start < 0 {
				start, tok = i, tok[:0]
			}
			if f := foldRune(r); f >= 0 {
				tok = utf8.AppendRune(tok, f)
			}
		default:
			if start >= 0 {
				emit(fn, tok, start, i)
				start = -1
			}
		}
		i += size
	}
	if start >= 0 {
		emit(fn, tok, start, len(text))
	}
	return tok
}

func emit(fn func([]byte, int, int), tok []byte, start, end int) {
	if len(tok) > 0 {
		fn(tok, start, end)
	}
}

// defaultTokenRune is unicode61's default token class ("L* N* Co" and the
// combining diacritics it removes) by Go's tables; tokenRuneExceptions
// (generated from FTS5) corrects it where SQLite's tables differ.
func defaultTokenRune(r rune) bool {
	return 0x300 <= r && r <= 0x36f || unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Co, r)
}

func isTokenRune(r rune) bool {
	if r < 0x10000 {
		if v, ok := tokenRuneExceptions[r]; ok {
			return v
		}
	}
	return defaultTokenRune(r)
}

// defaultFold lower-cases r with Go's tables and drops the combining
// diacritics; foldExceptions (generated from FTS5) holds where unicode61
// differs, mostly letters with diacritics folded to their base letter.
func defaultFold(r rune) rune {
	if 0x300 <= r && r <= 0x36f {
		return -1
	}
	return unicode.ToLower(r)
}

// foldRune returns unicode61's folding of the token character r, -1 when
// it is removed.
func foldRune(r rune) rune {
	if r < 0x10000 {
		if f, ok := foldExceptions[r]; ok {
			return f
		}
	}
	return defaultFold(r)
}

// isBMP reports whether s has only Basic Multilingual Plane characters
// (and valid UTF-8).
func isBMP(s string) bool {
	for _, r := range s {
		if r >= 0x10000 || r == utf8.RuneError {
			return false
		}
	}
	return true
}

// isASCII reports whether s has only ASCII bytes.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
