package engine

import (
	"context"
	"fmt"
	"math"
	"path"
	"slices"
	"sort"
	"time"
)

// RetentionPolicy says what to forget in the channels and message types it
// matches. Policies are tried in order and a message is governed by the
// first one that matches it (so put specific policies before general ones);
// a message no policy matches is kept.
//
// Whatever a policy says, pinned messages (metadata "pinned": true) and
// messages of type decision or policy are kept forever unless the policy
// sets ForgetPinned or ForgetDecisions; KeepTypes adds types kept forever.
// Kept-forever messages do not count towards MaxItems.
type RetentionPolicy struct {
	// Name identifies the policy in reports.
	Name string
	// Channels are globs (path.Match syntax, e.g. "agent-notes:*",
	// "project:cairn:*") over channel ids; empty matches every channel.
	Channels []string
	// Types are message types; empty matches every type.
	Types []string
	// MaxAge forgets messages older than this; 0 keeps them.
	MaxAge time.Duration
	// MaxItems keeps at most this many messages per channel, the most
	// important first: higher confidence, then more recent; 0 means no limit.
	MaxItems int
	// ForgetPinned and ForgetDecisions lift the keep-forever defaults.
	ForgetPinned    bool
	ForgetDecisions bool
	// KeepTypes are further message types kept forever.
	KeepTypes []string
	// CollapseThreshold, when > 0, forgets near-duplicates: within a
	// channel, among messages whose age lies in [CollapseMinAge,
	// CollapseMaxAge] (0 max = no upper bound), a message whose vector has
	// cosine similarity >= CollapseThreshold with a better one (higher
	// confidence, then more recent) is forgotten. The design's value is 0.95.
	CollapseThreshold float64
	CollapseMinAge    time.Duration
	CollapseMaxAge    time.Duration
}

// Validate reports the first invalid field as an *InvalidError.
func (p RetentionPolicy) Validate() error {
	field := func(f string) string { return "retention." + p.Name + "." + f }
	for _, g := range p.Channels {
		if _, err := path.Match(g, ""); err != nil {
			return invalid(field("channels"), "bad glob %q: %v", g, err)
		}
	}
	if p.MaxAge < 0 {
		return invalid(field("max_age"), "must be >= 0")
	}
	if p.MaxItems < 0 {
		return invalid(field("max_items"), "must be >= 0")
	}
	if p.CollapseThreshold < 0 || p.CollapseThreshold > 1 || math.IsNaN(p.CollapseThreshold) {
		return invalid(field("collapse_threshold"), "must be from 0 to 1 (0 = off), got %v", p.CollapseThreshold)
	}
	if p.CollapseMinAge < 0 || p.CollapseMaxAge < 0 || (p.CollapseMaxAge > 0 && p.CollapseMaxAge < p.CollapseMinAge) {
		return invalid(field("collapse_age"), "need 0 <= min age <= max age (0 max = no bound)")
	}
	return nil
}

func (p RetentionPolicy) matches(channel, typ string) bool {
	if len(p.Types) > 0 && !slices.Contains(p.Types, typ) {
		return false
	}
	if len(p.Channels) == 0 {
		return true
	}
	for _, g := range p.Channels {
		if ok, _ := path.Match(g, channel); ok {
			return true
		}
	}
	return false
}

func (p RetentionPolicy) keptForever(typ string, pinned bool) bool {
	if pinned && !p.ForgetPinned {
		return true
	}
	if (typ == TypeDecision || typ == TypePolicy) && !p.ForgetDecisions {
		return true
	}
	return slices.Contains(p.KeepTypes, typ)
}

// VectorLookup returns the stored vectors of messages (missing ids are left
// out of the map). Retention uses it to find near-duplicates.
type VectorLookup interface {
	Vectors(ctx context.Context, ids []int64) (map[int64][]float32, error)
}

// GCOptions configure Retention.GC.
type GCOptions struct {
	Policies []RetentionPolicy
	// SessionMaxAge deletes imported sessions whose last record is older,
	// with their contents and chunk messages no other session shares;
	// 0 keeps sessions.
	SessionMaxAge time.Duration
	// DryRun reports what would go and why, and changes nothing.
	DryRun bool
	// Vectors supplies vectors for collapsing near-duplicates; nil means
	// the engine's own vectors (the serving vector set), and when there are
	// none collapse rules are skipped (reported in GCReport.Notes).
	Vectors VectorLookup
	// ExcludeSessions are the import's exclusion globs: imported sessions
	// matching one (id, project folder, "project/id.jsonl") are deleted
	// like sessions past SessionMaxAge.
	ExcludeSessions []string
	// MaxBytes, when > 0, is a size quota for the data dir: when it is
	// larger, the oldest sessions and then the oldest messages (never
	// pinned ones, decisions or policies) go until the estimated size fits.
	MaxBytes int64
	// NoVacuum skips reclaiming space (VACUUM) after deleting.
	NoVacuum bool
	// Progress is called as phases complete.
	Progress func(Progress)
}

// GCItem is one message GC deletes (or would delete).
type GCItem struct {
	ID          int64     `json:"id"`
	ChannelID   string    `json:"channel_id"`
	MessageType string    `json:"message_type"`
	Confidence  float64   `json:"confidence"`
	CreatedAt   time.Time `json:"created_at"`
	Policy      string    `json:"policy"`
	Reason      string    `json:"reason"`
	DuplicateOf int64     `json:"duplicate_of,omitempty"`
}

// GCSession is one session GC deletes.
type GCSession struct {
	ID     string    `json:"id"`
	LastAt time.Time `json:"last_at"`
	Reason string    `json:"reason"`
}

// GCReport says what GC deleted (or, with DryRun, would delete).
type GCReport struct {
	DryRun          bool        `json:"dry_run"`
	Messages        []GCItem    `json:"messages"`
	Sessions        []GCSession `json:"sessions"`
	ContentsDeleted int         `json:"contents_deleted"`
	KeptForever     int         `json:"kept_forever"` // matched a policy but protected
	BytesBefore     int64       `json:"bytes_before"`
	BytesAfter      int64       `json:"bytes_after"`
	Notes           []string    `json:"notes,omitempty"`
}

type gcRow struct {
	id         int64
	channel    string
	typ        string
	confidence float64
	created    int64
	pinned     bool
}

// Retention deletes what the retention policies no longer keep. Get it
// from Engine.Retention; it shares the engine's database and closes with
// it.
type Retention struct {
	// over is the Engine whose Store GC and Purge run on.
	over *Engine
}

// GC applies retention: it selects messages and sessions to forget, then
// (unless DryRun) deletes them in one transaction of the store and has the
// store reclaim the space (backendGC). On a data dir that merges the FTS5
// segments so no deleted term survives and runs VACUUM and a truncating
// WAL checkpoint, so deleted text is in no file of the data dir
// afterwards; it reclaims even when nothing was selected, since deletes
// made since the last GC may have left text in free pages.
func (rt *Retention) GC(ctx context.Context, opts GCOptions) (*GCReport, error) {
	for _, p := range opts.Policies {
		if err := p.Validate(); err != nil {
			return nil, err
		}
	}
	if opts.SessionMaxAge < 0 {
		return nil, invalid("retention.sessions.max_age", "must be >= 0")
	}
	if opts.MaxBytes < 0 {
		return nil, invalid("gc.max_bytes", "must be >= 0 (0: no quota)")
	}
	return rt.over.backendGC(ctx, opts)
}

// nearDuplicates returns the messages of kept (in importance order) within
// p's collapse age window that are near-duplicates of a better one: greedy,
// best first, a message whose vector is within p.CollapseThreshold cosine
// of an already kept one goes.
func nearDuplicates(ctx context.Context, p RetentionPolicy, kept []gcRow, nowMs int64, vectors VectorLookup, item func(gcRow, string) GCItem) ([]GCItem, error) {
	var window []gcRow
	for _, r := range kept {
		age := time.Duration(nowMs-r.created) * time.Millisecond
		if age >= p.CollapseMinAge && (p.CollapseMaxAge == 0 || age <= p.CollapseMaxAge) {
			window = append(window, r)
		}
	}
	if len(window) < 2 {
		return nil, nil
	}
	ids := make([]int64, len(window))
	for i, r := range window {
		ids[i] = r.id
	}
	vecs, err := vectors.Vectors(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("engine: gc: vectors: %w", err)
	}
	var out []GCItem
	var best []int64
	for _, r := range window {
		v, ok := vecs[r.id]
		if !ok {
			continue
		}
		dup, sim := int64(0), 0.0
		for _, b := range best {
			if s := Cosine(v, vecs[b]); s >= p.CollapseThreshold {
				dup, sim = b, s
				break
			}
		}
		if dup == 0 {
			best = append(best, r.id)
			continue
		}
		it := item(r, fmt.Sprintf("near-duplicate of #%d (cosine %.3f >= %.2f)", dup, sim, p.CollapseThreshold))
		it.DuplicateOf = dup
		out = append(out, it)
	}
	return out, nil
}

// planMessageRows fills rep.Messages from the policies over every
// message's retention facts, ordered by channel, then confidence, time and
// id, all descending.
func planMessageRows(ctx context.Context, opts GCOptions, now time.Time, rep *GCReport, all []gcRow) error {
	type groupKey struct {
		policy  int
		channel string
	}
	groups := map[groupKey][]gcRow{}
	var keys []groupKey
	for _, r := range all {
		for i, p := range opts.Policies {
			if !p.matches(r.channel, r.typ) {
				continue
			}
			if p.keptForever(r.typ, r.pinned) {
				rep.KeptForever++
				break
			}
			k := groupKey{i, r.channel}
			if _, ok := groups[k]; !ok {
				keys = append(keys, k)
			}
			groups[k] = append(groups[k], r)
			break
		}
	}
	nowMs := now.UnixMilli()
	collapseSkipped := false
	for _, k := range keys {
		p := opts.Policies[k.policy]
		name := p.Name
		if name == "" {
			name = fmt.Sprintf("policy %d", k.policy+1)
		}
		item := func(r gcRow, reason string) GCItem {
			return GCItem{ID: r.id, ChannelID: r.channel, MessageType: r.typ, Confidence: r.confidence, CreatedAt: fromMillis(r.created), Policy: name, Reason: reason}
		}
		var kept []gcRow // in importance order: confidence desc, recency desc
		for _, r := range groups[k] {
			if p.MaxAge > 0 && r.created < nowMs-p.MaxAge.Milliseconds() {
				rep.Messages = append(rep.Messages, item(r, fmt.Sprintf("older than max_age %s", p.MaxAge)))
				continue
			}
			kept = append(kept, r)
		}
		if p.MaxItems > 0 && len(kept) > p.MaxItems {
			for i, r := range kept[p.MaxItems:] {
				rep.Messages = append(rep.Messages, item(r, fmt.Sprintf("beyond max_items %d in %s (rank %d by confidence, then recency)", p.MaxItems, r.channel, p.MaxItems+i+1)))
			}
			kept = kept[:p.MaxItems]
		}
		if p.CollapseThreshold <= 0 || len(kept) < 2 {
			continue
		}
		if opts.Vectors == nil {
			collapseSkipped = true
			continue
		}
		dups, err := nearDuplicates(ctx, p, kept, nowMs, opts.Vectors, item)
		if err != nil {
			return err
		}
		rep.Messages = append(rep.Messages, dups...)
	}
	if collapseSkipped {
		rep.Notes = append(rep.Notes, "near-duplicate collapse skipped: no vectors available")
	}
	sort.Slice(rep.Messages, func(i, j int) bool { return rep.Messages[i].ID < rep.Messages[j].ID })
	return nil
}

// Cosine is the cosine similarity of a and b: 0 when their lengths differ
// or either is empty or zero.
func Cosine(a, b []float32) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}
