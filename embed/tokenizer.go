package embed

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
	"golang.org/x/text/unicode/rangetable"
)

// Tokenizer is a WordPiece tokenizer that reproduces Hugging Face's
// BertTokenizer (the BertNormalizer + BertPreTokenizer + WordPiece pipeline of
// a tokenizer.json). It is safe for concurrent use: it is immutable after
// LoadTokenizer.
type Tokenizer struct {
	vocab        *vocabTable
	unkID        int32
	clsID, sepID int32
	prefix       string // continuing subword prefix, "##"
	maxWordChars int

	cleanText    bool
	chineseChars bool
	stripAccents bool
	lowercase    bool
	maxLen       int      // max tokens including [CLS] and [SEP]
	added        []string // added tokens matched verbatim in the raw text, longest first
	addedIDs     map[string]int32
	vocabSize    int
	padID        int32
}

// tokenizerJSON is the subset of tokenizer.json that a BERT WordPiece
// tokenizer uses.
type tokenizerJSON struct {
	Truncation *struct {
		MaxLength int `json:"max_length"`
	} `json:"truncation"`
	AddedTokens []struct {
		ID         int32  `json:"id"`
		Content    string `json:"content"`
		Normalized bool   `json:"normalized"`
	} `json:"added_tokens"`
	Normalizer *struct {
		Type               string `json:"type"`
		CleanText          *bool  `json:"clean_text"`
		HandleChineseChars *bool  `json:"handle_chinese_chars"`
		StripAccents       *bool  `json:"strip_accents"`
		Lowercase          *bool  `json:"lowercase"`
	} `json:"normalizer"`
	PreTokenizer *struct {
		Type string `json:"type"`
	} `json:"pre_tokenizer"`
	Model struct {
		Type                    string    `json:"type"`
		UnkToken                string    `json:"unk_token"`
		ContinuingSubwordPrefix *string   `json:"continuing_subword_prefix"`
		MaxInputCharsPerWord    int       `json:"max_input_chars_per_word"`
		Vocab                   vocabJSON `json:"vocab"`
	} `json:"model"`
}

// vocabJSON is WordPiece's vocabulary as a field of tokenizerJSON, read
// by parseVocab when the document is decoded whole (see cutVocab).
type vocabJSON struct{ t *vocabTable }

func (v *vocabJSON) UnmarshalJSON(b []byte) error {
	t, n, err := parseVocab(b)
	if err != nil {
		return err
	}
	if skipSpace(b, n) != len(b) {
		return fmt.Errorf("vocab: malformed object at byte %d", n)
	}
	v.t = t
	return nil
}

// LoadTokenizer reads a Hugging Face tokenizer.json describing a BERT
// WordPiece tokenizer. maxLen is the maximum number of tokens per text
// including [CLS] and [SEP]; zero means the file's truncation length, or 512.
func LoadTokenizer(path string, maxLen int) (*Tokenizer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("embed: read tokenizer: %w", err)
	}
	return ParseTokenizer(data, maxLen)
}

// ParseTokenizer is LoadTokenizer on the bytes of a tokenizer.json.
func ParseTokenizer(data []byte, maxLen int) (*Tokenizer, error) {
	var tj tokenizerJSON
	rest, vocab, cut, err := cutVocab(data)
	if err != nil {
		return nil, fmt.Errorf("%w: tokenizer.json: %v", ErrBadModel, err)
	}
	if !cut {
		rest = data
	}
	if err := json.Unmarshal(rest, &tj); err != nil {
		return nil, fmt.Errorf("%w: tokenizer.json: %v", ErrBadModel, err)
	}
	if !cut {
		vocab = tj.Model.Vocab.t
	}
	if tj.Model.Type != "WordPiece" {
		return nil, fmt.Errorf("%w: tokenizer model %q (only WordPiece is supported)", ErrUnsupported, tj.Model.Type)
	}
	if vocab == nil || vocab.size() == 0 {
		return nil, fmt.Errorf("%w: tokenizer.json has an empty vocabulary", ErrBadModel)
	}
	t := &Tokenizer{
		vocab:        vocab,
		prefix:       "##",
		maxWordChars: tj.Model.MaxInputCharsPerWord,
		cleanText:    true,
		chineseChars: true,
		lowercase:    true,
		addedIDs:     map[string]int32{},
		vocabSize:    max(vocab.size(), int(vocab.maxID)+1),
	}
	if tj.Model.ContinuingSubwordPrefix != nil {
		t.prefix = *tj.Model.ContinuingSubwordPrefix
	}
	if t.maxWordChars <= 0 {
		t.maxWordChars = 100
	}
	if n := tj.Normalizer; n != nil {
		if n.Type != "BertNormalizer" {
			return nil, fmt.Errorf("%w: normalizer %q (only BertNormalizer is supported)", ErrUnsupported, n.Type)
		}
		if n.CleanText != nil {
			t.cleanText = *n.CleanText
		}
		if n.HandleChineseChars != nil {
			t.chineseChars = *n.HandleChineseChars
		}
		if n.Lowercase != nil {
			t.lowercase = *n.Lowercase
		}
		// strip_accents null follows lowercase (as in Hugging Face).
		t.stripAccents = t.lowercase
		if n.StripAccents != nil {
			t.stripAccents = *n.StripAccents
		}
	}
	if p := tj.PreTokenizer; p != nil && p.Type != "BertPreTokenizer" {
		return nil, fmt.Errorf("%w: pre_tokenizer %q (only BertPreTokenizer is supported)", ErrUnsupported, p.Type)
	}
	var ok bool
	unk := tj.Model.UnkToken
	if unk == "" {
		unk = "[UNK]"
	}
	if t.unkID, ok = t.vocab.get(unk); !ok {
		return nil, fmt.Errorf("%w: unknown token %q not in vocabulary", ErrBadModel, unk)
	}
	if t.clsID, ok = t.vocab.get("[CLS]"); !ok {
		return nil, fmt.Errorf("%w: [CLS] not in vocabulary", ErrBadModel)
	}
	if t.sepID, ok = t.vocab.get("[SEP]"); !ok {
		return nil, fmt.Errorf("%w: [SEP] not in vocabulary", ErrBadModel)
	}
	t.padID, _ = t.vocab.get("[PAD]")
	for _, a := range tj.AddedTokens {
		if a.Content == "" || a.Normalized {
			continue
		}
		if _, dup := t.addedIDs[a.Content]; !dup {
			t.added = append(t.added, a.Content)
		}
		t.addedIDs[a.Content] = a.ID
	}
	sort.SliceStable(t.added, func(i, j int) bool { return len(t.added[i]) > len(t.added[j]) })
	t.maxLen = maxLen
	if t.maxLen <= 0 && tj.Truncation != nil && tj.Truncation.MaxLength > 0 {
		t.maxLen = tj.Truncation.MaxLength
	}
	if t.maxLen <= 0 {
		t.maxLen = 512
	}
	if t.maxLen < 3 {
		t.maxLen = 3
	}
	return t, nil
}

// MaxLen is the maximum number of tokens of an encoded text, [CLS] and [SEP] included.
func (t *Tokenizer) MaxLen() int { return t.maxLen }

// VocabSize is one more than the largest token id.
func (t *Tokenizer) VocabSize() int { return t.vocabSize }

// Encode returns the token ids of text as [CLS] pieces... [SEP], truncated to
// MaxLen, and the number of word pieces dropped by truncation.
func (t *Tokenizer) Encode(text string) (ids []int32, dropped int) {
	pieces := t.Pieces(text)
	max := t.maxLen - 2
	if len(pieces) > max {
		dropped = len(pieces) - max
		pieces = pieces[:max]
	}
	ids = make([]int32, 0, len(pieces)+2)
	ids = append(ids, t.clsID)
	ids = append(ids, pieces...)
	ids = append(ids, t.sepID)
	return ids, dropped
}

// Pieces returns the word-piece ids of text without special tokens and
// without truncation.
func (t *Tokenizer) Pieces(text string) []int32 {
	var out []int32
	var sb strings.Builder
	rest := text
	for len(rest) > 0 {
		pos, tok := t.nextAdded(rest)
		if pos < 0 {
			out = t.appendSegment(out, rest, &sb)
			break
		}
		out = t.appendSegment(out, rest[:pos], &sb)
		out = append(out, t.addedIDs[tok])
		rest = rest[pos+len(tok):]
	}
	return out
}

// nextAdded finds the leftmost added token in s (the longest one at that position).
func (t *Tokenizer) nextAdded(s string) (int, string) {
	best, bestTok := -1, ""
	for _, a := range t.added {
		i := strings.Index(s, a)
		if i < 0 {
			continue
		}
		if best < 0 || i < best || (i == best && len(a) > len(bestTok)) {
			best, bestTok = i, a
		}
	}
	return best, bestTok
}

func (t *Tokenizer) appendSegment(out []int32, s string, sb *strings.Builder) []int32 {
	norm := t.normalize(s)
	// BertPreTokenizer: split on whitespace, and isolate every punctuation char.
	start := -1
	for i, r := range norm {
		switch {
		case isWhitespace(r):
			if start >= 0 {
				out = t.wordPiece(out, norm[start:i], sb)
				start = -1
			}
		case isPunct(r):
			if start >= 0 {
				out = t.wordPiece(out, norm[start:i], sb)
				start = -1
			}
			out = t.wordPiece(out, norm[i:i+utf8.RuneLen(r)], sb)
		default:
			if start < 0 {
				start = i
			}
		}
	}
	if start >= 0 {
		out = t.wordPiece(out, norm[start:], sb)
	}
	return out
}

// normalize applies BertNormalizer in Hugging Face tokenizers' order: clean
// text, pad CJK characters, strip accents (NFD, drop Mn), lowercase.
// Invalid UTF-8 decodes to U+FFFD, which clean text removes.
func (t *Tokenizer) normalize(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s {
		if t.cleanText {
			if r == 0 || r == utf8.RuneError || isControl(r) {
				continue
			}
			if isWhitespace(r) {
				b.WriteByte(' ')
				continue
			}
		}
		if t.chineseChars && isCJK(r) {
			b.WriteByte(' ')
			b.WriteRune(r)
			b.WriteByte(' ')
			continue
		}
		b.WriteRune(r)
	}
	out := b.String()
	if t.stripAccents {
		d := norm.NFD.String(out)
		b.Reset()
		for _, r := range d {
			if isAccent(r) {
				continue
			}
			b.WriteRune(r)
		}
		out = b.String()
	}
	if t.lowercase {
		b.Reset()
		for _, r := range out {
			if r == 'İ' { // the one unconditional multi-rune lowercase mapping
				b.WriteString("i\u0307")
				continue
			}
			b.WriteRune(unicode.ToLower(r))
		}
		out = b.String()
	}
	return out
}

// wordPiece appends the greedy longest-match-first pieces of word, or [UNK].
func (t *Tokenizer) wordPiece(out []int32, word string, sb *strings.Builder) []int32 {
	if utf8.RuneCountInString(word) > t.maxWordChars {
		return append(out, t.unkID)
	}
	mark := len(out)
	start := 0
	for start < len(word) {
		end := len(word)
		found := int32(-1)
		for end > start {
			sub := word[start:end]
			if start > 0 {
				sb.Reset()
				sb.WriteString(t.prefix)
				sb.WriteString(sub)
				sub = sb.String()
			}
			if id, ok := t.vocab.get(sub); ok {
				found = id
				break
			}
			// step back one rune
			_, size := utf8.DecodeLastRuneInString(word[start:end])
			end -= size
		}
		if found < 0 {
			return append(out[:mark], t.unkID)
		}
		out = append(out, found)
		start = end
	}
	return out
}

func isWhitespace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\r':
		return true
	}
	return unicode.Is(unicode.White_Space, r)
}

func isControl(r rune) bool {
	switch r {
	case '\t', '\n', '\r':
		return false
	}
	if r >= 0x20 && r < 0x7f {
		return false
	}
	// Cc, Cf, Co (Cs never decodes from UTF-8). Unassigned code points (Cn,
	// which Go's unicode.C includes) are not control characters for Hugging
	// Face: they stay in the text and become [UNK].
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co) && inUnicode8(r)
}

// Hugging Face tokenizers classifies characters with Unicode 8.0 tables (the
// unicode_categories crate); Go's unicode package is newer. A character
// assigned later is unassigned (Cn) for Hugging Face: never a control
// character, an accent or punctuation, so it stays inside its word.
// Unicode 8.0's characters are those x/text lists for 9.0 minus
// added9, 9.0's additions of those categories; three characters changed
// category since (see isAccent and isPunct). Comparing every code point with
// Hugging Face tokenizers 0.23 found no other difference.
func inUnicode8(r rune) bool {
	return r < 0x80 || unicode.Is(assigned9, r) && !unicode.Is(added9, r)
}

var assigned9 = rangetable.Assigned("9.0.0")

var added9 = &unicode.RangeTable{
	R16: []unicode.Range16{{0x08d4, 0x08e2, 1}, {0x1885, 0x1886, 1}, {0x1dfb, 0x1dfb, 1}, {0x2e43, 0x2e44, 1},
		{0xa8c5, 0xa8c5, 1}, {0xa9bd, 0xa9bd, 1}},
	R32: []unicode.Range32{{0x1123e, 0x1123e, 1}, {0x11438, 0x1143f, 1}, {0x11442, 0x11444, 1}, {0x11446, 0x11446, 1},
		{0x1144b, 0x1144f, 1}, {0x1145b, 0x1145b, 1}, {0x1145d, 0x1145d, 1}, {0x11660, 0x1166c, 1}, {0x11c30, 0x11c36, 1},
		{0x11c38, 0x11c3d, 1}, {0x11c3f, 0x11c3f, 1}, {0x11c41, 0x11c45, 1}, {0x11c70, 0x11c71, 1}, {0x11c92, 0x11ca7, 1},
		{0x11caa, 0x11cb0, 1}, {0x11cb2, 0x11cb3, 1}, {0x11cb5, 0x11cb6, 1}, {0x1e000, 0x1e006, 1}, {0x1e008, 0x1e018, 1},
		{0x1e01b, 0x1e021, 1}, {0x1e023, 0x1e024, 1}, {0x1e026, 0x1e02a, 1}, {0x1e944, 0x1e94a, 1}, {0x1e95e, 0x1e95f, 1}},
}

// isAccent reports a nonspacing mark (Mn) as of Unicode 8.0.
func isAccent(r rune) bool {
	switch r {
	case 0x1734: // Mc since Unicode 14.0
		return true
	case 0x111c9: // Po until Unicode 13.0
		return false
	}
	return unicode.Is(unicode.Mn, r) && inUnicode8(r)
}

func isPunct(r rune) bool {
	if (r >= 33 && r <= 47) || (r >= 58 && r <= 64) || (r >= 91 && r <= 96) || (r >= 123 && r <= 126) {
		return true
	}
	switch r {
	case 0x166d, 0x111c9: // Po in Unicode 8.0, So and Mn now
		return true
	}
	return unicode.IsPunct(r) && inUnicode8(r)
}

func isCJK(r rune) bool {
	return (r >= 0x4E00 && r <= 0x9FFF) ||
		(r >= 0x3400 && r <= 0x4DBF) ||
		(r >= 0x20000 && r <= 0x2A6DF) ||
		(r >= 0x2A700 && r <= 0x2B73F) ||
		(r >= 0x2B740 && r <= 0x2B81F) ||
		(r >= 0x2B920 && r <= 0x2CEAF) || // sic: Hugging Face starts here, BERT's Python at 0x2B820
		(r >= 0xF900 && r <= 0xFAFF) ||
		(r >= 0x2F800 && r <= 0x2FA1F)
}
