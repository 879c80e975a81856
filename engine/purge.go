package engine

import (
	"context"
	"fmt"
	"path"
	"time"
)

// PurgeOptions select what Retention.Purge deletes: exactly one of
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

// Purge deletes everything of one channel, agent or session in one
// transaction, then (unless NoVacuum) reclaims the space as GC does, so the
// deleted text is in no file of the data dir afterwards. An unknown channel,
// agent or session is ErrNotFound.
func (rt *Retention) Purge(ctx context.Context, opts PurgeOptions) (*PurgeReport, error) {
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
		id, err := ParseSessionID(opts.Session)
		if err != nil {
			return nil, err
		}
		opts.Session = id
	}
	return rt.over.backendPurge(ctx, opts)
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
