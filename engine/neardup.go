package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/cairn-dev/cairn/fts"

	"github.com/cairn-dev/cairn/vecstore/where"
)

// DefaultNearDuplicateCosine is the cosine similarity at or above which a
// live write counts as a near-duplicate of an earlier message by the same
// sender in the same channel (Options.NearDuplicateCosine). Chosen on the
// STS-B dev pairs with the built-in model (bench/README.md, "Near-duplicate
// writes"): a near-duplicate is not stored, so a false match loses a
// memory while a miss only stores a near copy; at 0.95 (with the digit
// rule, DigitWords) 5 of the 1,236 pairs people rate below 4 (related, but
// saying something else) match, and 44% of the paraphrases (rated 4.8 or
// more) do.
const DefaultNearDuplicateCosine = 0.95

// nearDuplicate looks for a message by p's sender in p's channel whose
// vector is within the near-duplicate cosine of p's content: one
// embedding and one nearest-neighbour lookup restricted to sender and
// channel, and the same words with digits (DigitWords). ok is false (write
// normally) without an embedder or a vector
// set of its model, for a write that supersedes another (a correction is
// close to what it corrects by nature), and when the content cannot be
// embedded: the check never makes a write fail.
func (e *Engine) nearDuplicate(ctx context.Context, p prepared) (WriteResult, bool, error) {
	threshold := e.opts.NearDuplicateCosine
	if e.opts.Embedder == nil || p.supersedes != 0 || threshold <= 0 || threshold > 1 {
		return WriteResult{}, false, nil
	}
	done, err := e.enterStore()
	if err != nil {
		return WriteResult{}, false, err
	}
	defer done()
	set, ok, err := e.servingSet(ctx)
	if err != nil || !ok {
		return WriteResult{}, false, err
	}
	// Only a message sharing most of the write's words can say nearly the
	// same (WordOverlap): the keyword side finds such candidates in a
	// millisecond, and only a write that has one is embedded here.
	sel := SelectWhere(where.And(where.Eq("channel_id", where.String(p.channel.id)), where.Eq("agent_name", where.String(p.sender))))
	kh, err := e.store.Keyword(ctx, fts.ParseQuery(p.content), sel, 3)
	if err != nil {
		return WriteResult{}, false, fmt.Errorf("engine: near-duplicate check: %w", err)
	}
	kw := kh.Hits
	if len(kw) == 0 {
		return WriteResult{}, false, nil
	}
	ids := make([]int64, len(kw))
	for i, h := range kw {
		ids[i] = h.ID
	}
	near, err := e.store.Messages(ctx, ids)
	if err != nil {
		return WriteResult{}, false, err
	}
	if !slices.ContainsFunc(near, func(m Message) bool { return WordOverlap(m.Content, p.content) >= minWordOverlap }) {
		return WriteResult{}, false, nil
	}
	created := p.createdAt
	if created == 0 && e.opts.EmbedContext == EmbedSenderDate {
		created = e.opts.Now().UnixMilli() // the date is part of the embedded text
	}
	vs, err := e.opts.Embedder.Embed(ctx, []string{embedText(e.opts.EmbedContext, QueuedMessage{Content: p.content, Sender: p.sender, CreatedAt: fromMillis(created)})})
	if err != nil || len(vs) != 1 || len(vs[0]) != set.Dim {
		e.opts.Logger.Debug("near-duplicate check skipped: the content could not be embedded", "err", err)
		return WriteResult{}, false, nil
	}
	hits, err := e.store.Nearest(ctx, set, vs[0], sel, 3)
	if err != nil {
		return WriteResult{}, false, fmt.Errorf("engine: near-duplicate check: %w", err)
	}
	for _, h := range hits {
		if h.Score < threshold {
			break
		}
		ms, err := e.store.Messages(ctx, []int64{h.ID})
		if err != nil {
			return WriteResult{}, false, err
		}
		if len(ms) == 0 || ms[0].SupersededBy != 0 {
			continue // deleted since, or replaced: not what to point the writer at
		}
		m := ms[0]
		if m.ContentHash == p.hash {
			return WriteResult{}, false, nil // an exact repeat: the write path's own rule
		}
		if !slices.Equal(DigitWords(m.Content), DigitWords(p.content)) {
			continue // "step 3 failed" is not "step 4 failed"
		}
		return WriteResult{ID: m.ID, ChannelID: m.ChannelID, ContentHash: m.ContentHash,
			NearDuplicate: true, Similarity: h.Score}, true, nil
	}
	return WriteResult{}, false, nil
}

// DigitWords returns the words of s that hold a digit (counts, versions,
// ids, dates, line numbers), in order: "note 1 of round 0" is not "note 0
// of round 1". Sentence embeddings barely
// tell such words apart, yet two notes that differ in one say different
// things: a write is a near-duplicate only when these words are the same.
func DigitWords(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if strings.IndexFunc(w, unicode.IsDigit) >= 0 {
			out = append(out, w)
		}
	}
	return out
}

// minWordOverlap is the WordOverlap a near-duplicate needs with the earlier
// message: the share of the shorter text's keyword terms the other has.
const minWordOverlap = 0.5

// WordOverlap is the share of the keyword terms (fts.Terms) of the shorter
// of a and b that the other has too: 1 when one's terms are all in the
// other, 0 when they share none (or either has none).
func WordOverlap(a, b string) float64 {
	ta, tb := termSet(a), termSet(b)
	if len(ta) == 0 || len(tb) == 0 {
		return 0
	}
	if len(ta) > len(tb) {
		ta, tb = tb, ta
	}
	n := 0
	for t := range ta {
		if tb[t] {
			n++
		}
	}
	return float64(n) / float64(len(ta))
}

func termSet(s string) map[string]bool {
	out := map[string]bool{}
	for _, t := range fts.Terms(s) {
		out[t] = true
	}
	return out
}
