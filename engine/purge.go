package engine

import (
	"context"
	"encoding/json"
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
		id, err := checkSessionID(opts.Session)
		if err != nil {
			return nil, err
		}
		opts.Session = id
	}
	if rt.over != nil {
		return rt.over.backendPurge(ctx, opts)
	}
	done, err := rt.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	rep := &PurgeReport{DryRun: opts.DryRun, BytesBefore: rt.diskBytes()}
	var ids []int64
	var sessions, orphans []string
	switch {
	case opts.Channel != "":
		var one int
		if err := rt.r.QueryRowContext(ctx, "SELECT count(*) FROM channels WHERE id = ?", opts.Channel).Scan(&one); err != nil {
			return nil, fmt.Errorf("engine: purge: %w", classify(err))
		}
		if one == 0 {
			return nil, fmt.Errorf("channel %q: %w", opts.Channel, ErrNotFound)
		}
		rep.Channels = []string{opts.Channel}
		ids, err = queryIDs(ctx, rt.r, "SELECT id FROM messages WHERE channel_id = ? ORDER BY id", opts.Channel)
	case opts.Agent != "":
		var known int
		if err := rt.r.QueryRowContext(ctx, "SELECT count(*) FROM agents WHERE name = ?", opts.Agent).Scan(&known); err != nil {
			return nil, fmt.Errorf("engine: purge: %w", classify(err))
		}
		if known == 0 {
			return nil, fmt.Errorf("agent %q: %w", opts.Agent, ErrNotFound)
		}
		ids, err = queryIDs(ctx, rt.r, "SELECT id FROM messages WHERE sender_id = ? ORDER BY id", opts.Agent)
	default:
		var known int
		if err := rt.r.QueryRowContext(ctx, "SELECT count(*) FROM sessions WHERE id = ?", opts.Session).Scan(&known); err != nil {
			return nil, fmt.Errorf("engine: purge: %w", classify(err))
		}
		if known == 0 {
			return nil, fmt.Errorf("session %s: %w", opts.Session, ErrNotFound)
		}
		sessions = []string{opts.Session}
		orphans, ids, err = rt.sessionOrphans(ctx, rt.r, sessions)
	}
	if err != nil {
		return nil, err
	}
	rep.Messages, rep.Sessions, rep.ContentsDeleted = len(ids), sessions, len(orphans)
	if opts.DryRun {
		rep.BytesAfter = rep.BytesBefore
		return rep, nil
	}
	items := make([]GCItem, len(ids))
	for i, id := range ids {
		items[i] = GCItem{ID: id}
	}
	// The session's files are forgotten first: the sidechain files are
	// found through the session's records, which the deletion removes.
	if len(sessions) > 0 {
		js, _ := json.Marshal(sessions)
		if _, err := rt.w.ExecContext(ctx, forgetSessionFilesSQL, string(js)); err != nil {
			return nil, fmt.Errorf("engine: purge: forget session files: %w", classify(err))
		}
	}
	if err := rt.apply(ctx, &GCReport{Messages: items}, sessions, orphans); err != nil {
		return nil, err
	}
	if opts.Channel != "" {
		if _, err := rt.w.ExecContext(ctx, "DELETE FROM channels WHERE id = ? AND NOT EXISTS (SELECT 1 FROM messages WHERE channel_id = ?)", opts.Channel, opts.Channel); err != nil {
			return nil, fmt.Errorf("engine: purge: delete channel: %w", classify(err))
		}
	}
	rt.msgs.wakeVectors()
	if !opts.NoVacuum {
		if err := rt.reclaim(ctx); err != nil {
			return rep, err
		}
	}
	rep.BytesAfter = rt.diskBytes()
	return rep, nil
}

// forgetSessionFilesSQL deletes where the import of a purged session's
// files stopped (session_files), so that its transcripts' paths are not
// kept: the files named by the session id (ID.jsonl), those in a folder
// named by it (ID/subagents/...), and the sub-agent files of the project
// folder its sidechain records name (agent-{agentId}.jsonl, which carry
// the parent's session id and nothing else linking them to it). It runs
// before the session's records are deleted. A later import reads these
// files again from the start. ? is a JSON array of session ids. gc keeps
// these rows: it deletes sessions by age or quota, and forgetting where
// their files stopped would import them again on the next run.
const forgetSessionFilesSQL = `DELETE FROM session_files WHERE EXISTS (SELECT 1 FROM json_each(?) s
	WHERE session_files.path LIKE '%/' || s.value || '.jsonl' OR session_files.path LIKE '%\' || s.value || '.jsonl'
	OR instr(session_files.path, '/' || s.value || '/') > 0 OR instr(session_files.path, '\' || s.value || '\') > 0
	OR EXISTS (SELECT 1 FROM (SELECT DISTINCT json_extract(m.envelope, '$.agentId') AS agent FROM session_messages m
		WHERE m.session_id = s.value AND m.is_sidechain = 1) a
		WHERE typeof(a.agent) = 'text' AND a.agent <> ''
		AND substr(session_files.path, -length(a.agent) - 13) IN ('/agent-' || a.agent || '.jsonl', '\agent-' || a.agent || '.jsonl')))`

func queryIDs(ctx context.Context, q querier, query string, args ...any) ([]int64, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("engine: %w", classify(err))
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, classify(err)
		}
		ids = append(ids, id)
	}
	return ids, classify(rows.Err())
}

// excludedSessions adds to rep the imported sessions that match one of
// the exclude globs (the import's exclusion: matched against the session
// id, its project folder and "project/id.jsonl"), so that a session
// excluded after it was imported goes on the next GC.
func (rt *Retention) excludedSessions(ctx context.Context, globs []string, rep *GCReport) error {
	if len(globs) == 0 {
		return nil
	}
	planned := map[string]bool{}
	for _, s := range rep.Sessions {
		planned[s.ID] = true
	}
	rows, err := rt.r.QueryContext(ctx, "SELECT id, project, last_at FROM sessions ORDER BY id")
	if err != nil {
		return fmt.Errorf("engine: gc: %w", classify(err))
	}
	defer rows.Close()
	for rows.Next() {
		var id, project string
		var last int64
		if err := rows.Scan(&id, &project, &last); err != nil {
			return classify(err)
		}
		if planned[id] {
			continue
		}
		if g := matchGlob(globs, id, project, project+"/"+id+".jsonl"); g != "" {
			rep.Sessions = append(rep.Sessions, GCSession{ID: id, LastAt: fromMillis(last), Reason: fmt.Sprintf("matches import.exclude %q", g)})
		}
	}
	return classify(rows.Err())
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

// overQuota adds to rep, when the data dir is larger than maxBytes, the
// oldest sessions and then the oldest messages (never pinned ones,
// decisions or policies) until the estimated size fits.
func (rt *Retention) overQuota(ctx context.Context, maxBytes int64, rep *GCReport) error {
	q := newQuotaPlan(maxBytes, rep, "data dir")
	if q == nil {
		return nil
	}
	rows, err := rt.r.QueryContext(ctx, `SELECT s.id, s.last_at, coalesce((SELECT sum(length(c.content)) FROM session_contents c
		WHERE c.hash IN (SELECT content_hash FROM session_messages WHERE session_id = s.id)), 0) FROM sessions s ORDER BY s.last_at, s.id`)
	if err != nil {
		return fmt.Errorf("engine: gc: %w", classify(err))
	}
	more := true
	for more && rows.Next() {
		var id string
		var last, size int64
		if err := rows.Scan(&id, &last, &size); err != nil {
			rows.Close()
			return classify(err)
		}
		more = q.session(id, fromMillis(last), size)
	}
	rows.Close()
	if !more {
		return nil
	}
	rows, err = rt.r.QueryContext(ctx, `SELECT id, channel_id, message_type, confidence, created_at, length(content) + length(metadata) FROM messages
		WHERE message_type NOT IN ('decision', 'policy') AND NOT coalesce(json_extract(metadata, '$.pinned') IN (1, 'true'), 0)
		ORDER BY created_at, id`)
	if err != nil {
		return fmt.Errorf("engine: gc: %w", classify(err))
	}
	defer rows.Close()
	for more && rows.Next() {
		var it GCItem
		var created, size int64
		if err := rows.Scan(&it.ID, &it.ChannelID, &it.MessageType, &it.Confidence, &created, &size); err != nil {
			return classify(err)
		}
		it.CreatedAt = fromMillis(created)
		more = q.message(it, size)
	}
	q.finish()
	return classify(rows.Err())
}

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
