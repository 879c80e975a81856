package ops

import (
	"context"
	"fmt"
	"math"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/engine"
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
	if (typ == engine.TypeDecision || typ == engine.TypePolicy) && !p.ForgetDecisions {
		return true
	}
	return slices.Contains(p.KeepTypes, typ)
}

// VectorLookup returns the stored vectors of messages (missing ids are left
// out of the map). Retention uses it to find near-duplicates.
type VectorLookup interface {
	Vectors(ctx context.Context, ids []int64) (map[int64][]float32, error)
}

// GCOptions configure GC.
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
	Progress func(engine.Progress)
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

// GC applies retention to e's store: it selects messages and sessions to
// forget, then (unless DryRun) deletes them in one transaction of the
// store and has the store reclaim the space (gc). On a data dir that merges the FTS5
// segments so no deleted term survives and runs VACUUM and a truncating
// WAL checkpoint, so deleted text is in no file of the data dir
// afterwards; it reclaims even when nothing was selected, since deletes
// made since the last GC may have left text in free pages.
func GC(ctx context.Context, e *engine.Engine, opts GCOptions) (*GCReport, error) {
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
	return gc(ctx, e, opts)
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
			if s := engine.Cosine(v, vecs[b]); s >= p.CollapseThreshold {
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
			return GCItem{ID: r.id, ChannelID: r.channel, MessageType: r.typ, Confidence: r.confidence, CreatedAt: time.UnixMilli(r.created).UTC(), Policy: name, Reason: reason}
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

// PurgeOptions select what Purge deletes: exactly one of
// Channel, Agent and Session.
type PurgeOptions struct {
	// Channel deletes every message of the channel, and the channel.
	Channel string
	// Agent deletes every message the agent sent (under any project).
	Agent string
	// Session deletes an imported session: its records, the contents only
	// it holds and the chunk messages only those contents use.
	Session string
	// DryRun reports what would go and changes nothing.
	DryRun bool
	// NoVacuum skips reclaiming the space (then deleted text may stay in
	// free pages of the database file until the next gc).
	NoVacuum bool
}

// PurgeReport says what Purge deleted (or, with DryRun, would delete).
type PurgeReport struct {
	DryRun          bool     `json:"dry_run"`
	Messages        int      `json:"messages"`
	Channels        []string `json:"channels,omitempty"`
	Sessions        []string `json:"sessions,omitempty"`
	ContentsDeleted int      `json:"contents_deleted"`
	BytesBefore     int64    `json:"bytes_before"`
	BytesAfter      int64    `json:"bytes_after"`
}

// Purge deletes everything of one channel, agent or session of e's store in one
// transaction, then (unless NoVacuum) reclaims the space as GC does, so the
// deleted text is in no file of the data dir afterwards. An unknown channel,
// agent or session is ErrNotFound.
func Purge(ctx context.Context, e *engine.Engine, opts PurgeOptions) (*PurgeReport, error) {
	n := 0
	for _, s := range []string{opts.Channel, opts.Agent, opts.Session} {
		if s != "" {
			n++
		}
	}
	if n != 1 {
		return nil, invalid("purge", "give exactly one of channel, agent and session")
	}
	if opts.Session != "" {
		id, err := engine.ParseSessionID(opts.Session)
		if err != nil {
			return nil, err
		}
		opts.Session = id
	}
	return purge(ctx, e, opts)
}

func matchGlob(globs []string, names ...string) string {
	for _, g := range globs {
		for _, n := range names {
			if ok, _ := path.Match(g, n); ok && n != "" {
				return g
			}
		}
	}
	return ""
}

// Quota estimates: what a message or a session's content costs on disk
// besides its text (row, keyword index, a 384-dimension float32 vector and
// its graph links). Estimates only: the report gives the real sizes.
const (
	quotaTextFactor   = 2
	quotaMessageExtra = 2048
)

// quotaPlan adds to a GC plan what gc.max_bytes deletes, fed the
// candidates in order (sessions least recently active first, then
// messages oldest first): each is taken unless planned already, and its
// estimated size subtracted, until the store is estimated to fit.
type quotaPlan struct {
	rep      *GCReport
	maxBytes int64
	over     int64
	reason   string
	messages map[int64]bool
	sessions map[string]bool
}

// newQuotaPlan starts the quota's part of rep's plan; nil when there is no
// quota or the store (named what in the reasons) fits it.
func newQuotaPlan(maxBytes int64, rep *GCReport, what string) *quotaPlan {
	if maxBytes <= 0 || rep.BytesBefore <= maxBytes {
		return nil
	}
	q := &quotaPlan{rep: rep, maxBytes: maxBytes, over: rep.BytesBefore - maxBytes, messages: map[int64]bool{}, sessions: map[string]bool{},
		reason: fmt.Sprintf("%s over gc.max_bytes %d (oldest first)", what, maxBytes)}
	for _, m := range rep.Messages {
		q.messages[m.ID] = true
	}
	for _, s := range rep.Sessions {
		q.sessions[s.ID] = true
	}
	return q
}

// session plans deleting a session of size content bytes; false once the
// store fits.
func (q *quotaPlan) session(id string, last time.Time, size int64) bool {
	if !q.sessions[id] {
		q.sessions[id] = true
		q.rep.Sessions = append(q.rep.Sessions, GCSession{ID: id, LastAt: last, Reason: q.reason})
		q.over -= size * quotaTextFactor
	}
	return q.over > 0
}

// message plans deleting it (size: its content and metadata bytes); false
// once the store fits.
func (q *quotaPlan) message(it GCItem, size int64) bool {
	if !q.messages[it.ID] {
		q.messages[it.ID] = true
		it.Policy, it.Reason = "quota", q.reason
		q.rep.Messages = append(q.rep.Messages, it)
		q.over -= size*quotaTextFactor + quotaMessageExtra
	}
	return q.over > 0
}

// finish notes what stays over the quota.
func (q *quotaPlan) finish() {
	if q.over > 0 {
		q.rep.Notes = append(q.rep.Notes, fmt.Sprintf("gc.max_bytes %d: what is left (pinned messages, decisions, policies) is estimated to stay %d bytes over", q.maxBytes, q.over))
	}
}

// gc is GC on e's store: the policies and plan over the store's
// retention facts and sessions, one delete transaction, then the store's
// own reclaim. A size quota (gc.max_bytes) plans as on a data dir; after
// it deleted something the store is compacted, so that its size drops.
func gc(ctx context.Context, e *engine.Engine, opts GCOptions) (rep *GCReport, err error) {
	err = e.Use(func(rs engine.Store) error {
		rep, err = gcOn(ctx, e, rs, opts)
		return err
	})
	return rep, err
}

// gcOn is gc on rs, e's store.
func gcOn(ctx context.Context, e *engine.Engine, rs engine.Store, opts GCOptions) (*GCReport, error) {
	var err error
	rep := &GCReport{DryRun: opts.DryRun, Messages: []GCItem{}, Sessions: []GCSession{}}
	if rep.BytesBefore, err = rs.Size(ctx); err != nil {
		return nil, err
	}
	progress := func(done int64, item string) {
		if opts.Progress != nil {
			opts.Progress(engine.Progress{Done: done, Total: 3, Item: item})
		}
	}
	quota := rs
	if len(opts.Policies) > 0 {
		if opts.Vectors == nil {
			if opts.Vectors, err = collapseVectors(ctx, e, rs); err != nil {
				return nil, err
			}
		}
		rows, err := rs.RetentionRows(ctx)
		if err != nil {
			return nil, err
		}
		all := make([]gcRow, len(rows))
		for i, r := range rows {
			all[i] = gcRow{id: r.ID, channel: r.Channel, typ: r.Type, confidence: r.Confidence, created: r.CreatedAt.UnixMilli(), pinned: r.Pinned}
		}
		if err := planMessageRows(ctx, opts, e.Options().Now(), rep, all); err != nil {
			return nil, err
		}
	}
	progress(1, "plan messages")
	var sessionIDs, orphans []string
	var quotaPlanned bool
	if opts.SessionMaxAge > 0 || len(opts.ExcludeSessions) > 0 || opts.MaxBytes > 0 {
		planQuota := func() error {
			before := len(rep.Messages) + len(rep.Sessions)
			err := overQuota(ctx, quota, opts.MaxBytes, rep, e.StoreName())
			quotaPlanned = len(rep.Messages)+len(rep.Sessions) > before
			return err
		}
		if sessionIDs, orphans, err = planSessions(ctx, e, rs, opts, rep, planQuota); err != nil {
			return nil, err
		}
	}
	progress(2, "plan sessions")
	if opts.DryRun {
		rep.BytesAfter = rep.BytesBefore
		progress(3, "done")
		return rep, nil
	}
	ids := make([]int64, len(rep.Messages))
	for i, it := range rep.Messages {
		ids[i] = it.ID
	}
	if len(sessionIDs) > 0 {
		if err := rs.DeleteSessions(ctx, sessionIDs, orphans, ids); err != nil {
			return nil, err
		}
	} else if len(ids) > 0 {
		if err := rs.DeleteMessages(ctx, ids, ""); err != nil {
			return nil, err
		}
	}
	switch {
	case opts.NoVacuum:
	case quotaPlanned:
		if err := quota.Compact(ctx); err != nil {
			return rep, err
		}
	default:
		if err := rs.Reclaim(ctx); err != nil {
			return rep, err
		}
	}
	if rep.BytesAfter, err = rs.Size(ctx); err != nil {
		return rep, err
	}
	progress(3, "done")
	return rep, nil
}

// planSessions adds to rep the sessions that match an exclusion
// glob (by id), then what overQuota plans, then the sessions whose last
// record is older than opts.SessionMaxAge (oldest first), as GC does on a
// data dir, with the chunk messages only they use; it returns the
// sessions' ids and the contents only they hold.
func planSessions(ctx context.Context, e *engine.Engine, ss engine.Store, opts GCOptions, rep *GCReport, overQuota func() error) (sessionIDs, orphans []string, _ error) {
	all, err := ss.Sessions(ctx, "")
	if err != nil {
		return nil, nil, err
	}
	planned := map[string]bool{}
	if len(opts.ExcludeSessions) > 0 {
		byID := slices.Clone(all)
		slices.SortFunc(byID, func(a, b engine.Session) int { return strings.Compare(a.ID, b.ID) })
		for _, s := range byID {
			if g := matchGlob(opts.ExcludeSessions, s.ID, s.Project, s.Project+"/"+s.ID+".jsonl"); g != "" {
				rep.Sessions = append(rep.Sessions, GCSession{ID: s.ID, LastAt: s.LastAt, Reason: fmt.Sprintf("matches import.exclude %q", g)})
				planned[s.ID] = true
			}
		}
	}
	if err := overQuota(); err != nil {
		return nil, nil, err
	}
	for _, s := range rep.Sessions {
		planned[s.ID] = true
	}
	if opts.SessionMaxAge > 0 {
		cutoff := e.Options().Now().Add(-opts.SessionMaxAge).UnixMilli()
		old := slices.DeleteFunc(slices.Clone(all), func(s engine.Session) bool {
			last := s.LastAt.UnixMilli()
			return planned[s.ID] || last <= 0 || last >= cutoff
		})
		slices.SortStableFunc(old, func(a, b engine.Session) int { return a.LastAt.Compare(b.LastAt) })
		for _, s := range old {
			rep.Sessions = append(rep.Sessions, GCSession{ID: s.ID, LastAt: s.LastAt, Reason: fmt.Sprintf("last record older than %s", opts.SessionMaxAge)})
		}
	}
	for _, s := range rep.Sessions {
		sessionIDs = append(sessionIDs, s.ID)
	}
	orphans, chunkMsgs, err := ss.SessionOrphans(ctx, sessionIDs)
	if err != nil {
		return nil, nil, err
	}
	rep.ContentsDeleted = len(orphans)
	inPlan := map[int64]bool{}
	for _, m := range rep.Messages {
		inPlan[m.ID] = true
	}
	if len(chunkMsgs) > 0 {
		ms, err := ss.Messages(ctx, chunkMsgs)
		if err != nil {
			return nil, nil, err
		}
		for _, m := range engine.InOrder(chunkMsgs, ms) {
			if !inPlan[m.ID] {
				rep.Messages = append(rep.Messages, GCItem{ID: m.ID, ChannelID: m.ChannelID, MessageType: m.MessageType, Confidence: m.Confidence,
					CreatedAt: m.CreatedAt, Policy: "sessions", Reason: "chunk of deleted sessions only"})
			}
		}
	}
	return sessionIDs, orphans, nil
}

// collapseVectors is the VectorLookup of near-duplicate collapse: the
// vectors of the embedder's set (the set its searches use), or with no
// embedder (a one-shot `cairn gc` does not load the model: comparing
// stored vectors needs none) those of the active set; nil when there is
// no such set.
func collapseVectors(ctx context.Context, e *engine.Engine, rs engine.Store) (VectorLookup, error) {
	sets, err := rs.Sets(ctx)
	if err != nil {
		return nil, err
	}
	if emb := e.Options().Embedder; emb != nil {
		for _, s := range sets { // active first
			if s.ModelID == emb.ModelID() {
				return storeVectors{rs, s.ID}, nil
			}
		}
		return nil, nil
	}
	for _, s := range sets {
		if s.State == engine.SetActive {
			return storeVectors{rs, s.ID}, nil
		}
	}
	return nil, nil
}

// storeVectors are the vectors of one set of a store.
type storeVectors struct {
	rs  engine.Store
	set int64
}

func (v storeVectors) Vectors(ctx context.Context, ids []int64) (map[int64][]float32, error) {
	return v.rs.Vectors(ctx, v.set, ids)
}

// purge is Purge on e's store: a channel's, an agent's or a session's
// messages (a session's with the contents only it holds).
func purge(ctx context.Context, e *engine.Engine, opts PurgeOptions) (rep *PurgeReport, err error) {
	err = e.Use(func(rs engine.Store) error {
		rep, err = purgeOn(ctx, rs, opts)
		return err
	})
	return rep, err
}

// purgeOn is purge on rs.
func purgeOn(ctx context.Context, rs engine.Store, opts PurgeOptions) (*PurgeReport, error) {
	var err error
	rep := &PurgeReport{DryRun: opts.DryRun}
	if rep.BytesBefore, err = rs.Size(ctx); err != nil {
		return nil, err
	}
	var del func() error
	if opts.Session != "" {
		del, err = planPurgeSession(ctx, rs, opts.Session, rep)
	} else {
		del, err = planPurgeMessages(ctx, rs, opts, rep)
	}
	if err != nil {
		return nil, err
	}
	if opts.DryRun {
		rep.BytesAfter = rep.BytesBefore
		return rep, nil
	}
	if err := del(); err != nil {
		return nil, err
	}
	if !opts.NoVacuum {
		if err := rs.Reclaim(ctx); err != nil {
			return rep, err
		}
	}
	if rep.BytesAfter, err = rs.Size(ctx); err != nil {
		return rep, err
	}
	return rep, nil
}

// planPurgeMessages fills rep with a channel's or an agent's messages and
// returns their deletion.
func planPurgeMessages(ctx context.Context, rs engine.Store, opts PurgeOptions, rep *PurgeReport) (func() error, error) {
	ids, found, err := rs.MessageIDsOf(ctx, opts.Channel, opts.Agent)
	switch {
	case err != nil:
		return nil, err
	case !found && opts.Channel != "":
		return nil, fmt.Errorf("channel %q: %w", opts.Channel, engine.ErrNotFound)
	case !found:
		return nil, fmt.Errorf("agent %q: %w", opts.Agent, engine.ErrNotFound)
	}
	if opts.Channel != "" {
		rep.Channels = []string{opts.Channel}
	}
	rep.Messages = len(ids)
	return func() error { return rs.DeleteMessages(ctx, ids, opts.Channel) }, nil
}

// planPurgeSession fills rep with a session, the contents only it holds
// and the chunk messages only those use, and returns their deletion.
func planPurgeSession(ctx context.Context, ss engine.Store, session string, rep *PurgeReport) (func() error, error) {
	found, err := ss.Sessions(ctx, session)
	if err != nil {
		return nil, err
	}
	if len(found) == 0 {
		return nil, fmt.Errorf("session %s: %w", session, engine.ErrNotFound)
	}
	sessions := []string{session}
	orphans, ids, err := ss.SessionOrphans(ctx, sessions)
	if err != nil {
		return nil, err
	}
	rep.Messages, rep.Sessions, rep.ContentsDeleted = len(ids), sessions, len(orphans)
	return func() error {
		if err := ss.ForgetSessionFiles(ctx, sessions); err != nil {
			return err
		}
		return ss.DeleteSessions(ctx, sessions, orphans, ids)
	}, nil
}

// overQuota adds to rep what gc.max_bytes deletes: the quota's plan over
// the store's sessions and candidate messages.
func overQuota(ctx context.Context, qs engine.Store, maxBytes int64, rep *GCReport, what string) error {
	q := newQuotaPlan(maxBytes, rep, what)
	if q == nil {
		return nil
	}
	ss, err := qs.QuotaSessions(ctx)
	if err != nil {
		return err
	}
	for _, s := range ss {
		if !q.session(s.ID, s.LastAt, s.Length) {
			return nil
		}
	}
	ms, err := qs.QuotaMessages(ctx)
	if err != nil {
		return err
	}
	for _, m := range ms {
		it := GCItem{ID: m.ID, ChannelID: m.Channel, MessageType: m.Type, Confidence: m.Confidence, CreatedAt: m.CreatedAt}
		if !q.message(it, m.Length) {
			return nil
		}
	}
	q.finish()
	return nil
}

// invalid is an *engine.InvalidError on field.
func invalid(field, format string, args ...any) error {
	return &engine.InvalidError{Field: field, Rule: fmt.Sprintf(format, args...)}
}
