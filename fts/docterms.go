package fts

// DocTerms returns what BM25 needs of a document, tokenized exactly as the
// FTS5 table and Index tokenize it ('porter unicode61'): its distinct
// stemmed terms with their frequencies, and its length in tokens. A store
// other than SQLite keeps these to rank with the same BM25 as FTS5.
func DocTerms(text string) (terms []string, tfs []int32, length int) {
	counts := map[string]int32{}
	var buf, sbuf []byte
	buf = tokenize(text, buf, func(tok []byte, _, _ int) {
		sbuf = porterStem(tok, sbuf)
		s := string(sbuf)
		if counts[s] == 0 {
			terms = append(terms, s)
		}
		counts[s]++
		length++
	})
	tfs = make([]int32, len(terms))
	for i, t := range terms {
		tfs[i] = counts[t]
	}
	return terms, tfs, length
}

// DropHeld deletes from stems (terms stemmed as DocTerms stems them) those
// text holds. It stems only the tokens whose first byte starts one of
// stems (stemming keeps a token's first byte) and allocates only for the
// stems it deletes, so that checking many texts stays cheap.
func DropHeld(text string, stems map[string]bool) {
	var first [256]bool
	for s := range stems {
		if s != "" {
			first[s[0]] = true
		}
	}
	var buf, sbuf []byte
	tokenize(text, buf, func(tok []byte, _, _ int) {
		if len(tok) == 0 || !first[tok[0]] || len(stems) == 0 {
			return
		}
		sbuf = porterStem(tok, sbuf)
		if stems[string(sbuf)] {
			delete(stems, string(sbuf))
		}
	})
}

// Stems returns the query's stemmed terms, one per FTS5 phrase of its
// MATCH expression in order (the terms BM25 sums over), and ok false when
// a term is not one token (FTS5 reads it as a phrase, which a term-level
// ranking cannot mirror exactly; its tokens are then returned as terms).
func (q Query) Stems() (stems []string, ok bool) {
	if s, ok := queryPhrases(q); ok {
		return s, true
	}
	seen := map[string]bool{}
	for _, toks := range q.tokens {
		for _, t := range toks {
			if !seen[t] {
				seen[t] = true
				stems = append(stems, t)
			}
		}
	}
	return stems, false
}

// SnippetOf cuts the snippet of req (its Query, marks and length) from
// text exactly as Snippets does from a content row; ok is false when text
// does not match.
func SnippetOf(req Request, text string) (string, bool) {
	want := snippetTerms(req.Query)
	if len(want) == 0 {
		return "", false
	}
	ms, me, el, n := snippetOptions(req)
	return snippet(text, want, ms, me, el, n)
}
