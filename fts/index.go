package fts

import (
	"container/heap"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
)

// ErrIndexDiverged is the cause Index.Err reports when the in-memory index
// stopped agreeing with the FTS5 table (document or token counts differ
// after catching up); the index then answers no more searches.
var ErrIndexDiverged = errors.New("fts: in-memory index diverged from FTS5")

// Index is an in-memory inverted index of a Table's content that ranks
// exactly like Table.Search (FTS5's bm25(), same order and scores up to
// float ties) but without making SQLite score every matching row.
//
// The SQLite tables stay the source of truth: every search first catches up
// from them (rows with a rowid above the largest one indexed; deletions
// noticed by comparing document counts with FTS5's own totals, then found
// by one scan of the content rowids), so several processes writing the same
// database stay correct. It requires what cairn's messages guarantee: rows
// are immutable and rowids are never reused (AUTOINCREMENT).
//
// Index is safe for concurrent use.
type Index struct {
	t     *Table
	ready atomic.Bool
	// refreshMu serializes catching up (one reader of new rows at a time).
	refreshMu sync.Mutex
	mu        struct {
		sync.RWMutex
		broken error
		terms  map[string]uint32
		post   [][]posting
		rowids []int64  // doc -> rowid, ascending
		dl     []uint32 // doc -> length in tokens
		dead   []bool
		live   int64 // live documents
		tokens int64 // tokens in live documents
		last   int64 // largest rowid indexed
	}
	accPool sync.Pool
	// touchedPool holds scoreLocked's lists of the documents a query
	// scored: tens of thousands for a common term, reused rather than
	// grown again by every search.
	touchedPool sync.Pool
	cache       struct {
		sync.Mutex
		sets map[string]*allowedSet
		tick uint64
	}
}

// allowedSet is a cached answer of a filter: the sorted rowids it keeps
// among the rows up to upTo.
type allowedSet struct {
	bits     []uint64 // by document number
	upTo     int64
	lastUsed uint64
}

// maxCachedFilters bounds the filter cache (least recently used out).
const maxCachedFilters = 16

type posting struct{ doc, tf uint32 }

// NewIndex returns an empty in-memory index of t; Build fills it.
func (t *Table) NewIndex() *Index {
	ix := &Index{t: t}
	ix.mu.terms = map[string]uint32{}
	return ix
}

// Ready reports whether Build has finished, so Search can answer.
func (ix *Index) Ready() bool { return ix.ready.Load() }

// Err returns why the index stopped answering (wrapping ErrIndexDiverged),
// or nil.
func (ix *Index) Err() error {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.mu.broken
}

// Stats describes the index.
type IndexStats struct {
	Docs, Tokens, Terms, Postings int64
}

// Stats returns the index's size.
func (ix *Index) Stats() IndexStats {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	s := IndexStats{Docs: ix.mu.live, Tokens: ix.mu.tokens, Terms: int64(len(ix.mu.terms))}
	for _, p := range ix.mu.post {
		s.Postings += int64(len(p))
	}
	return s
}

// Build loads every row of the content table; afterwards Search answers
// from memory. It may run in the background while Search falls back.
func (ix *Index) Build(ctx context.Context, q Querier) error {
	if err := ix.refresh(ctx, q); err != nil {
		return err
	}
	ix.ready.Store(true)
	return nil
}

// refresh catches up with the content table in one read snapshot.
func (ix *Index) refresh(ctx context.Context, q Querier) error {
	ix.refreshMu.Lock()
	defer ix.refreshMu.Unlock()
	if b, ok := q.(Snapshotter); ok {
		tx, end, err := b.Snapshot(ctx)
		if err != nil {
			return fmt.Errorf("fts: index: %w", err)
		}
		defer end()
		q = tx
	}
	t := ix.t
	rows, err := q.QueryContext(ctx, fmt.Sprintf("SELECT coalesce((SELECT max(%s) FROM %s), 0), (SELECT block FROM %s_data WHERE id = 1)", t.rowid, t.content, t.name))
	if err != nil {
		return fmt.Errorf("fts: index: %w", err)
	}
	var maxID int64
	var avg []byte
	if rows.Next() {
		err = rows.Scan(&maxID, &avg)
	}
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("fts: index: %w", err)
	}
	ftsRows, n := uvarint(avg)
	ftsTokens, _ := uvarint(avg[n:])

	ix.mu.RLock()
	last, live, tokens, broken := ix.mu.last, ix.mu.live, ix.mu.tokens, ix.mu.broken
	ix.mu.RUnlock()
	if broken != nil {
		return nil
	}
	if maxID > last {
		if err := ix.addRows(ctx, q, last); err != nil {
			return err
		}
		ix.mu.RLock()
		live, tokens = ix.mu.live, ix.mu.tokens
		ix.mu.RUnlock()
	}
	if live != int64(ftsRows) || maxID < last {
		if err := ix.findDeleted(ctx, q); err != nil {
			return err
		}
		ix.mu.RLock()
		live, tokens = ix.mu.live, ix.mu.tokens
		ix.mu.RUnlock()
	}
	if live != int64(ftsRows) || tokens != int64(ftsTokens) {
		ix.mu.Lock()
		ix.mu.broken = fmt.Errorf("%w: %d documents with %d tokens in memory, %d with %d in FTS5", ErrIndexDiverged, live, tokens, ftsRows, ftsTokens)
		ix.mu.Unlock()
	}
	return nil
}

type newDoc struct {
	rowid  int64
	length uint32
	terms  []termFreq
}

type termFreq struct {
	term string
	tf   uint32
}

// addRows indexes the content rows with rowid > after, in batches.
func (ix *Index) addRows(ctx context.Context, q Querier, after int64) error {
	t := ix.t
	rows, err := q.QueryContext(ctx, fmt.Sprintf("SELECT %s, %s FROM %s WHERE %s > ? ORDER BY %s", t.rowid, t.column, t.content, t.rowid, t.rowid), after)
	if err != nil {
		return fmt.Errorf("fts: index: %w", err)
	}
	defer rows.Close()
	counts := map[string]uint32{}
	stems := map[string]string{} // token -> stem: most tokens repeat
	var buf, sbuf []byte
	var batch []newDoc
	for rows.Next() {
		var id int64
		var text *string
		if err := rows.Scan(&id, &text); err != nil {
			return fmt.Errorf("fts: index: %w", err)
		}
		clear(counts)
		var n uint32
		buf = tokenize(deref(text), buf, func(tok []byte, _, _ int) {
			stem, ok := stems[string(tok)]
			if !ok {
				sbuf = porterStem(tok, sbuf)
				stem = string(sbuf)
				if len(stems) < 1<<20 {
					stems[string(tok)] = stem
				}
			}
			counts[stem]++
			n++
		})
		d := newDoc{rowid: id, length: n, terms: make([]termFreq, 0, len(counts))}
		for term, tf := range counts {
			d.terms = append(d.terms, termFreq{term, tf})
		}
		batch = append(batch, d)
		if len(batch) == 4096 {
			if err := ctx.Err(); err != nil {
				return err
			}
			ix.apply(batch)
			batch = batch[:0]
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("fts: index: %w", err)
	}
	ix.apply(batch)
	return nil
}

func (ix *Index) apply(docs []newDoc) {
	if len(docs) == 0 {
		return
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for _, d := range docs {
		doc := uint32(len(ix.mu.rowids))
		ix.mu.rowids = append(ix.mu.rowids, d.rowid)
		ix.mu.dl = append(ix.mu.dl, d.length)
		ix.mu.dead = append(ix.mu.dead, false)
		ix.mu.live++
		ix.mu.tokens += int64(d.length)
		ix.mu.last = d.rowid
		for _, tf := range d.terms {
			id, ok := ix.mu.terms[tf.term]
			if !ok {
				id = uint32(len(ix.mu.post))
				ix.mu.terms[tf.term] = id
				ix.mu.post = append(ix.mu.post, nil)
			}
			ix.mu.post[id] = append(ix.mu.post[id], posting{doc, tf.tf})
		}
	}
}

// findDeleted scans the content rowids and drops the documents whose row
// is gone (deletions are rare: retention and explicit deletes).
func (ix *Index) findDeleted(ctx context.Context, q Querier) error {
	t := ix.t
	rows, err := q.QueryContext(ctx, fmt.Sprintf("SELECT %s FROM %s ORDER BY %s", t.rowid, t.content, t.rowid))
	if err != nil {
		return fmt.Errorf("fts: index: %w", err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return fmt.Errorf("fts: index: %w", err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("fts: index: %w", err)
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	gone := 0
	j := 0
	for doc, rowid := range ix.mu.rowids {
		for j < len(ids) && ids[j] < rowid {
			j++
		}
		if ix.mu.dead[doc] || j < len(ids) && ids[j] == rowid {
			continue
		}
		ix.mu.dead[doc] = true
		ix.mu.live--
		ix.mu.tokens -= int64(ix.mu.dl[doc])
		gone++
	}
	if gone == 0 {
		return nil
	}
	for i, p := range ix.mu.post {
		k := 0
		for _, x := range p {
			if !ix.mu.dead[x.doc] {
				p[k] = x
				k++
			}
		}
		ix.mu.post[i] = p[:k]
	}
	return nil
}

// uvarint decodes an SQLite varint (big-endian 7-bit groups, the ninth
// byte holding 8 bits) and returns it with its length; 0, 0 for no bytes.
func uvarint(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < len(b) && i < 9; i++ {
		if i == 8 {
			return v<<8 | uint64(b[i]), 9
		}
		v = v<<7 | uint64(b[i]&0x7f)
		if b[i] < 0x80 {
			return v, i + 1
		}
	}
	return v, len(b)
}

// candidate is a scored document.
type candidate struct {
	score float64
	rowid int64
}

// better orders hits like Table.Search: larger score, then larger rowid.
func better(a, b candidate) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return a.rowid > b.rowid
}

type worstFirst []candidate

func (h worstFirst) Len() int           { return len(h) }
func (h worstFirst) Less(i, j int) bool { return better(h[j], h[i]) }
func (h worstFirst) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *worstFirst) Push(x any)        { *h = append(*h, x.(candidate)) }
func (h *worstFirst) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// topN returns the n best of cs, best first.
func topN(cs []candidate, n int) []candidate {
	if n >= len(cs) {
		out := slices.Clone(cs)
		slices.SortFunc(out, cmpCandidates)
		return out
	}
	h := make(worstFirst, 0, n+1)
	for _, c := range cs {
		if len(h) < n {
			heap.Push(&h, c)
		} else if better(c, h[0]) {
			h[0] = c
			heap.Fix(&h, 0)
		}
	}
	out := []candidate(h)
	slices.SortFunc(out, cmpCandidates)
	return out
}

func cmpCandidates(a, b candidate) int {
	switch {
	case better(a, b):
		return -1
	case better(b, a):
		return 1
	}
	return 0
}

// queryPhrases returns the query's index terms, one per FTS5 phrase of
// its MATCH expression in order. ok is false when the index cannot rank
// the query exactly (a term outside the Basic Multilingual Plane, whose
// folding the generated table does not cover, or not a single token).
func queryPhrases(q Query) (stems []string, ok bool) {
	for i, term := range q.terms {
		if !isBMP(term) || len(q.tokens[i]) != 1 {
			return nil, false
		}
		stems = append(stems, q.tokens[i][0])
	}
	return stems, true
}

// Search answers req from memory when it can do so exactly: ok is false
// when the index is not built, has diverged, or the query has a term that
// has a character outside the Basic Multilingual Plane or that FTS5 splits into several tokens (then use Table.Search). It first catches up with q
// (rows added or deleted since, by any process). Hits, scores, order and
// filtering are those of Table.Search; snippets mark the same terms but are
// cut by cairn's own (simpler) fragment choice.
func (ix *Index) Search(ctx context.Context, q Querier, req Request) (hits []Hit, ok bool, err error) {
	hits, _, ok, err = ix.search(ctx, q, req, false)
	return hits, ok, err
}

// SearchPruned is Search for req.Query without its frequent terms, by
// Table.PruneFrequent's rule applied to the index's counts once it has
// caught up: the hits of Table.PruneFrequent then Table.Search. ranked is
// the query that ranked them.
func (ix *Index) SearchPruned(ctx context.Context, q Querier, req Request) (hits []Hit, ranked Query, ok bool, err error) {
	return ix.search(ctx, q, req, true)
}

func (ix *Index) search(ctx context.Context, q Querier, req Request, prune bool) (hits []Hit, ranked Query, ok bool, err error) {
	ranked = req.Query
	if !ix.ready.Load() {
		return nil, ranked, false, nil
	}
	if _, ok := queryPhrases(req.Query); !ok {
		return nil, ranked, false, nil
	}
	if req.Query.Empty() {
		return nil, ranked, true, nil
	}
	if err := ix.refresh(ctx, q); err != nil {
		return nil, ranked, false, err
	}
	limit := req.Limit
	if limit <= 0 {
		limit = 20
	}
	var best []candidate
	var all []candidate
	ix.mu.RLock()
	if ix.mu.broken != nil {
		ix.mu.RUnlock()
		return nil, ranked, false, nil
	}
	if prune {
		ranked = DropFrequent(req.Query, int64(ix.mu.live), ix.docFreqLocked)
		req.Query = ranked
	}
	stems, _ := queryPhrases(req.Query)
	if req.Filter != "" && req.CacheFilter {
		ix.mu.RUnlock()
		bits, err := ix.cachedAllowed(ctx, q, req)
		if err != nil {
			return nil, ranked, true, err
		}
		ix.mu.RLock()
		ix.scoreLocked(stems, bits, true, limit, &best)
		ix.mu.RUnlock()
	} else {
		all = ix.scoreLocked(stems, nil, req.Filter == "", limit, &best)
		ix.mu.RUnlock()
	}
	if req.Filter != "" && !req.CacheFilter {
		if best, err = ix.filtered(ctx, q, req, all, limit); err != nil {
			return nil, ranked, true, err
		}
	}
	if len(best) == 0 {
		return nil, ranked, true, nil
	}
	hits = make([]Hit, len(best))
	for i, c := range best {
		hits[i] = Hit{RowID: c.rowid, Score: c.score}
	}
	if req.NoSnippets {
		return hits, ranked, true, nil
	}
	ids := make([]int64, len(hits))
	for i, h := range hits {
		ids[i] = h.RowID
	}
	snips, err := ix.t.Snippets(ctx, q, req, ids)
	if err != nil {
		return nil, ranked, true, err
	}
	for i := range hits {
		hits[i].Snippet = snips[hits[i].RowID]
	}
	return hits, ranked, true, nil
}

// docFreqLocked is the number of live documents holding the index term
// term, as FTS5's vocabulary counts them (0 when none does).
// REQUIRES: ix.mu read-locked.
func (ix *Index) docFreqLocked(term string) int64 {
	id, ok := ix.mu.terms[term]
	if !ok {
		return 0
	}
	return int64(len(ix.mu.post[id]))
}

// scoreLocked computes the BM25 score of every document matching a
// phrase, with FTS5's formula and summation order (so scores are equal to
// the bit). With topOnly it puts the limit best in *best and returns nil;
// otherwise it returns every scored document. A non-nil allow keeps only
// the documents whose bit is set.
// REQUIRES: ix.mu read-locked.
func (ix *Index) scoreLocked(stems []string, allow []uint64, topOnly bool, limit int, best *[]candidate) []candidate {
	n := float64(ix.mu.live)
	if n == 0 {
		return nil
	}
	avgdl := float64(ix.mu.tokens) / n
	// FTS5's bm25() parameters, as variables so the arithmetic is done in
	// float64 at run time exactly as the C code does it.
	k1, b := 1.2, 0.75
	var acc []float64
	if p, _ := ix.accPool.Get().(*[]float64); p != nil && len(*p) >= len(ix.mu.rowids) {
		acc = *p
	} else {
		acc = make([]float64, len(ix.mu.rowids)+1024)
	}
	var touched []uint32
	if p, _ := ix.touchedPool.Get().(*[]uint32); p != nil {
		touched = (*p)[:0]
	}
	for _, s := range stems {
		id, ok := ix.mu.terms[s]
		if !ok {
			continue
		}
		p := ix.mu.post[id]
		nHit := float64(len(p))
		idf := math.Log((n - nHit + 0.5) / (nHit + 0.5))
		if idf <= 0 {
			idf = 1e-6
		}
		for _, x := range p {
			if allow != nil && (int(x.doc>>6) >= len(allow) || allow[x.doc>>6]&(1<<(x.doc&63)) == 0) {
				continue
			}
			f := float64(x.tf)
			d := float64(ix.mu.dl[x.doc])
			c := idf * (float64(f*(k1+1.0)) / (f + float64(k1*float64(1-b+float64(float64(b*d)/avgdl)))))
			if acc[x.doc] == 0 {
				touched = append(touched, x.doc)
			}
			acc[x.doc] += c
		}
	}
	var out []candidate
	if topOnly {
		h := make(worstFirst, 0, limit+1)
		for _, doc := range touched {
			c := candidate{acc[doc], ix.mu.rowids[doc]}
			acc[doc] = 0
			if len(h) < limit {
				heap.Push(&h, c)
			} else if better(c, h[0]) {
				h[0] = c
				heap.Fix(&h, 0)
			}
		}
		r := []candidate(h)
		slices.SortFunc(r, cmpCandidates)
		*best = r
	} else {
		out = make([]candidate, len(touched))
		for i, doc := range touched {
			out[i] = candidate{acc[doc], ix.mu.rowids[doc]}
			acc[doc] = 0
		}
	}
	ix.accPool.Put(&acc)
	ix.touchedPool.Put(&touched)
	return out
}

// filterRound is how many more candidates than wanted the first filter
// check looks at; allowedAbove is the number of candidates beyond which
// reading the whole allowed set is cheaper than checking candidates.
const (
	filterRound  = 4
	allowedAbove = 2000
)

// filtered returns the limit best candidates that pass req.Filter: it
// checks candidates in score order against the filter in SQL (cheap when
// the filter keeps most rows), and when that would take too many checks
// reads the set of rows the filter keeps instead (cheap when it keeps few).
func (ix *Index) filtered(ctx context.Context, q Querier, req Request, all []candidate, limit int) ([]candidate, error) {
	var out []candidate
	checked := 0
	var sorted []candidate
	for len(out) < limit && checked < len(all) {
		n := filterRound * limit
		if checked > 0 {
			passRate := float64(len(out)) / float64(checked)
			if passRate == 0 {
				break
			}
			n = int(math.Ceil(float64(limit-len(out)) / passRate * 1.5))
		}
		if checked+n > allowedAbove && checked > 0 {
			break
		}
		if sorted == nil || checked+n > len(sorted) {
			sorted = topN(all, checked+n)
		}
		chunk := sorted[checked:min(checked+n, len(sorted))]
		pass, err := ix.check(ctx, q, req, chunk)
		if err != nil {
			return nil, err
		}
		for _, c := range chunk {
			if pass[c.rowid] {
				out = append(out, c)
				if len(out) == limit {
					break
				}
			}
		}
		checked += len(chunk)
	}
	if len(out) >= limit || checked >= len(all) {
		return out, nil
	}
	allowed, err := ix.allowed(ctx, q, req, 0, math.MaxInt64)
	if err != nil {
		return nil, err
	}
	return keepAllowed(all, allowed, limit), nil
}

func keepAllowed(all []candidate, allowed []int64, limit int) []candidate {
	keep := all[:0:0]
	for _, c := range all {
		if _, ok := slices.BinarySearch(allowed, c.rowid); ok {
			keep = append(keep, c)
		}
	}
	return topN(keep, limit)
}

// cachedAllowed returns the documents req.Filter keeps, as a bitmap by
// document number, from the filter cache, reading only the rows added
// since it was cached.
func (ix *Index) cachedAllowed(ctx context.Context, q Querier, req Request) ([]uint64, error) {
	key := fmt.Sprintf("%s\x00%#v", req.Filter, req.Args)
	ix.mu.RLock()
	last := ix.mu.last
	ix.mu.RUnlock()
	ix.cache.Lock()
	set := ix.cache.sets[key]
	var bits []uint64
	var upTo int64
	if set != nil {
		bits, upTo = set.bits, set.upTo
	}
	ix.cache.Unlock()
	if set != nil && upTo >= last {
		return bits, nil
	}
	more, err := ix.allowed(ctx, q, req, upTo, last)
	if err != nil {
		return nil, err
	}
	ix.mu.RLock()
	n := len(ix.mu.rowids)
	bits = append(make([]uint64, 0, (n+63)/64), bits...)
	bits = bits[:(n+63)/64]
	for _, id := range more {
		if doc, ok := slices.BinarySearch(ix.mu.rowids, id); ok {
			bits[doc>>6] |= 1 << (doc & 63)
		}
	}
	ix.mu.RUnlock()
	ix.cache.Lock()
	defer ix.cache.Unlock()
	if ix.cache.sets == nil {
		ix.cache.sets = map[string]*allowedSet{}
	}
	ix.cache.tick++
	if cur := ix.cache.sets[key]; cur == nil || cur.upTo < last {
		if cur == nil && len(ix.cache.sets) >= maxCachedFilters {
			var oldest string
			for k, v := range ix.cache.sets {
				if oldest == "" || v.lastUsed < ix.cache.sets[oldest].lastUsed {
					oldest = k
				}
			}
			delete(ix.cache.sets, oldest)
		}
		ix.cache.sets[key] = &allowedSet{bits: bits, upTo: last, lastUsed: ix.cache.tick}
	} else {
		cur.lastUsed = ix.cache.tick
	}
	return bits, nil
}

func idsJSON(cs []candidate) string {
	ids := make([]int64, len(cs))
	for i, c := range cs {
		ids[i] = c.rowid
	}
	b, _ := json.Marshal(ids)
	return string(b)
}

// check returns which of cs pass the filter.
func (ix *Index) check(ctx context.Context, q Querier, req Request, cs []candidate) (map[int64]bool, error) {
	t := ix.t
	query := fmt.Sprintf("SELECT c.%s FROM %s c WHERE c.%s IN (SELECT value FROM json_each(?)) AND (%s)", t.rowid, t.content, t.rowid, req.Filter)
	args := append([]any{idsJSON(cs)}, req.Args...)
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("fts: search: %w", err)
	}
	defer rows.Close()
	pass := make(map[int64]bool, len(cs))
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("fts: search: %w", err)
		}
		pass[id] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("fts: search: %w", err)
	}
	return pass, nil
}

// allowed returns the sorted rowids in (after, through] that the filter
// keeps.
func (ix *Index) allowed(ctx context.Context, q Querier, req Request, after, through int64) ([]int64, error) {
	t := ix.t
	rows, err := q.QueryContext(ctx, fmt.Sprintf("SELECT c.%s FROM %s c WHERE c.%s > ? AND c.%s <= ? AND (%s)", t.rowid, t.content, t.rowid, t.rowid, req.Filter), append([]any{after, through}, req.Args...)...)
	if err != nil {
		return nil, fmt.Errorf("fts: search: %w", err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("fts: search: %w", err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("fts: search: %w", err)
	}
	slices.Sort(ids)
	return ids, nil
}
