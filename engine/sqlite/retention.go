package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/fts/ftssql"
)

// The embedded store's retention steps (GC, Purge, gc.max_bytes) as the
// Store port names them. engine/ops plans GC, Purge and the quota over
// these steps (ops.GC, ops.Purge).

func (s *Store) RetentionRows(ctx context.Context) ([]engine.RetentionRow, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT id, channel_id, message_type, confidence, created_at,
			coalesce(json_extract(metadata, '$.pinned') IN (1, 'true'), 0)
		FROM messages ORDER BY channel_id, confidence DESC, created_at DESC, id DESC`)
	if err != nil {
		return nil, fmt.Errorf("engine: gc: %w", classify(err))
	}
	defer rows.Close()
	var out []engine.RetentionRow
	for rows.Next() {
		var r engine.RetentionRow
		var created int64
		if err := rows.Scan(&r.ID, &r.Channel, &r.Type, &r.Confidence, &created, &r.Pinned); err != nil {
			return nil, classify(err)
		}
		r.CreatedAt = fromMillis(created)
		out = append(out, r)
	}
	return out, classify(rows.Err())
}

func (s *Store) MessageIDsOf(ctx context.Context, channel, agent string) ([]int64, bool, error) {
	known, q, arg := "SELECT count(*) FROM agents WHERE name = ?", "SELECT id FROM messages WHERE sender_id = ? ORDER BY id", agent
	if channel != "" {
		known, q, arg = "SELECT count(*) FROM channels WHERE id = ?", "SELECT id FROM messages WHERE channel_id = ? ORDER BY id", channel
	}
	var n int
	if err := s.r.QueryRowContext(ctx, known, arg).Scan(&n); err != nil {
		return nil, false, fmt.Errorf("engine: purge: %w", classify(err))
	}
	if n == 0 {
		return nil, false, nil
	}
	ids, err := queryIDs(ctx, s.r, q, arg)
	return ids, true, err
}

// DeleteMessages deletes in one transaction (deleteMessagesTx), wakes the
// worker for the vectors' deletions and scrubs the WAL.
func (s *Store) DeleteMessages(ctx context.Context, ids []int64, dropChannel string) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("engine: delete messages: %w", classify(err))
	}
	defer tx.Rollback()
	if err := s.deleteMessagesTx(ctx, tx, ids); err != nil {
		return err
	}
	if dropChannel != "" {
		if _, err := tx.ExecContext(ctx, "DELETE FROM channels WHERE id = ? AND NOT EXISTS (SELECT 1 FROM messages WHERE channel_id = ?)", dropChannel, dropChannel); err != nil {
			return fmt.Errorf("engine: purge: delete channel: %w", classify(err))
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("engine: delete messages: %w", classify(err))
	}
	s.host.Wake()
	return s.scrubDeleted(ctx)
}

// Vectors reads the set's vectors from vecstore, 1,000 ids at a time.
func (s *Store) Vectors(ctx context.Context, set int64, ids []int64) (map[int64][]float32, error) {
	out := map[int64][]float32{}
	if len(ids) == 0 || s.vec == nil || s.vec.store == nil {
		return out, nil
	}
	vs, err := s.getSet(ctx, set)
	if err != nil {
		return nil, err
	}
	const batch = 1000
	for start := 0; start < len(ids); start += batch {
		got, err := s.vectorsOf(ctx, vs, ids[start:min(start+batch, len(ids))])
		if err != nil {
			return nil, fmt.Errorf("engine: gc: %w", err)
		}
		maps.Copy(out, got)
	}
	return out, nil
}

// Reclaim merges the FTS5 segments, VACUUMs and truncates the WAL
// (Retention.reclaim).
func (s *Store) Reclaim(ctx context.Context) error {
	return s.reclaim(ctx)
}

// Size is the size of every file in the data dir.
func (s *Store) Size(ctx context.Context) (int64, error) {
	return s.diskBytes(), nil
}

func (s *Store) QuotaSessions(ctx context.Context) ([]engine.QuotaSession, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT s.id, s.last_at, coalesce((SELECT sum(length(c.content)) FROM session_contents c
		WHERE c.hash IN (SELECT content_hash FROM session_messages WHERE session_id = s.id)), 0) FROM sessions s ORDER BY s.last_at, s.id`)
	if err != nil {
		return nil, fmt.Errorf("engine: gc: %w", classify(err))
	}
	defer rows.Close()
	var out []engine.QuotaSession
	for rows.Next() {
		var q engine.QuotaSession
		var last int64
		if err := rows.Scan(&q.ID, &last, &q.Length); err != nil {
			return nil, classify(err)
		}
		q.LastAt = fromMillis(last)
		out = append(out, q)
	}
	return out, classify(rows.Err())
}

func (s *Store) QuotaMessages(ctx context.Context) ([]engine.QuotaMessage, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT id, channel_id, message_type, confidence, created_at, length(content) + length(metadata) FROM messages
		WHERE message_type NOT IN ('decision', 'policy') AND NOT coalesce(json_extract(metadata, '$.pinned') IN (1, 'true'), 0)
		ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("engine: gc: %w", classify(err))
	}
	defer rows.Close()
	var out []engine.QuotaMessage
	for rows.Next() {
		var q engine.QuotaMessage
		var created int64
		if err := rows.Scan(&q.ID, &q.Channel, &q.Type, &q.Confidence, &created, &q.Length); err != nil {
			return nil, classify(err)
		}
		q.CreatedAt = fromMillis(created)
		out = append(out, q)
	}
	return out, classify(rows.Err())
}

// Compact is Reclaim: VACUUM gives the file its deleted pages back.
func (s *Store) Compact(ctx context.Context) error { return s.Reclaim(ctx) }

// applyGC deletes the planned sessions, their orphaned contents and the
// planned messages ids in one transaction.
func (rt *Store) applyGC(ctx context.Context, ids []int64, sessionIDs, orphans []string) error {
	tx, err := rt.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("engine: gc: %w", classify(err))
	}
	defer tx.Rollback()
	if len(sessionIDs) > 0 {
		js, _ := json.Marshal(sessionIDs)
		if _, err := tx.ExecContext(ctx, "DELETE FROM sessions WHERE id IN (SELECT value FROM json_each(?))", string(js)); err != nil {
			return fmt.Errorf("engine: gc: delete sessions: %w", classify(err))
		}
		oj, _ := json.Marshal(orphans)
		if _, err := tx.ExecContext(ctx, "DELETE FROM session_contents WHERE hash IN (SELECT value FROM json_each(?))", string(oj)); err != nil {
			return fmt.Errorf("engine: gc: delete contents: %w", classify(err))
		}
	}
	if err := rt.deleteMessagesTx(ctx, tx, ids); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("engine: gc: %w", classify(err))
	}
	return nil
}

// sessionOrphans returns the contents only the given sessions reference and
// the chunk messages only those contents use.
func (rt *Store) sessionOrphans(ctx context.Context, q querier, sessions []string) ([]string, []int64, error) {
	if len(sessions) == 0 {
		return nil, nil, nil
	}
	js, _ := json.Marshal(sessions)
	rows, err := q.QueryContext(ctx, `SELECT DISTINCT content_hash FROM session_messages
		WHERE session_id IN (SELECT value FROM json_each(?1)) AND content_hash IS NOT NULL
		AND content_hash NOT IN (SELECT content_hash FROM session_messages
			WHERE session_id NOT IN (SELECT value FROM json_each(?1)) AND content_hash IS NOT NULL)`, string(js))
	if err != nil {
		return nil, nil, fmt.Errorf("engine: gc: %w", classify(err))
	}
	var orphans []string
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			rows.Close()
			return nil, nil, classify(err)
		}
		orphans = append(orphans, h)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, classify(err)
	}
	if len(orphans) == 0 {
		return nil, nil, nil
	}
	oj, _ := json.Marshal(orphans)
	rows, err = q.QueryContext(ctx, `SELECT DISTINCT message_id FROM session_chunks
		WHERE content_hash IN (SELECT value FROM json_each(?1)) AND message_id IS NOT NULL
		AND message_id NOT IN (SELECT message_id FROM session_chunks
			WHERE content_hash NOT IN (SELECT value FROM json_each(?1)) AND message_id IS NOT NULL)
		ORDER BY message_id`, string(oj))
	if err != nil {
		return nil, nil, fmt.Errorf("engine: gc: %w", classify(err))
	}
	defer rows.Close()
	var msgs []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, nil, classify(err)
		}
		msgs = append(msgs, id)
	}
	return orphans, msgs, classify(rows.Err())
}

// deleteMessagesTx deletes messages from SQLite and the FTS5 index inside
// tx and keeps the channel and agent counters right. Session chunks that
// pointed at them are unlinked by the foreign key (ON DELETE SET NULL).
// Each deleted message also gets an outbox row per live vector set in the
// same transaction, so its vectors are deleted after the commit.
func (e *Store) deleteMessagesTx(ctx context.Context, tx *sql.Tx, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	if err := e.fts.SecureDelete(ctx, ftssql.Of(tx)); err != nil {
		return classify(err)
	}
	sel, err := tx.PrepareContext(ctx, "SELECT content, channel_id, sender_id, sender_project_id FROM messages WHERE id = ?")
	if err != nil {
		return classify(err)
	}
	defer sel.Close()
	del, err := tx.PrepareContext(ctx, "DELETE FROM messages WHERE id = ?")
	if err != nil {
		return classify(err)
	}
	defer del.Close()
	channels := map[string]int{}
	type agentKey struct{ name, project string }
	agents := map[agentKey]int{}
	for _, id := range ids {
		var content, channel, sender, project string
		err := sel.QueryRowContext(ctx, id).Scan(&content, &channel, &sender, &project)
		if err == sql.ErrNoRows {
			continue // already gone
		}
		if err != nil {
			return fmt.Errorf("engine: delete message %d: %w", id, classify(err))
		}
		if err := e.fts.Delete(ctx, ftssql.Of(tx), id, content); err != nil {
			return fmt.Errorf("engine: delete message %d: %w", id, classify(err))
		}
		if _, err := del.ExecContext(ctx, id); err != nil {
			return fmt.Errorf("engine: delete message %d: %w", id, classify(err))
		}
		if err := e.outboxDeleteTx(ctx, tx, id); err != nil { // vector outbox (outbox.go)
			return err
		}
		channels[channel]++
		agents[agentKey{sender, project}]++
	}
	for ch, n := range channels {
		if _, err := tx.ExecContext(ctx, `UPDATE channels SET message_count = message_count - ?1,
			last_message_at = coalesce((SELECT max(created_at) FROM messages WHERE channel_id = ?2), 0) WHERE id = ?2`, n, ch); err != nil {
			return fmt.Errorf("engine: delete messages: %w", classify(err))
		}
	}
	for a, n := range agents {
		if _, err := tx.ExecContext(ctx, "UPDATE agents SET message_count = max(message_count - ?, 0) WHERE name = ? AND project_id = ?", n, a.name, a.project); err != nil {
			return fmt.Errorf("engine: delete messages: %w", classify(err))
		}
	}
	return nil
}

// reclaim merges the FTS5 segments (dropping deleted entries), rewrites the
// database (VACUUM) and truncates the WAL, so deleted text leaves the disk.
func (rt *Store) reclaim(ctx context.Context) error {
	if err := rt.fts.Optimize(ctx, ftssql.Of(rt.w)); err != nil {
		return fmt.Errorf("engine: gc: fts optimize: %w", classify(err))
	}
	if _, err := rt.w.ExecContext(ctx, "VACUUM"); err != nil {
		return fmt.Errorf("engine: gc: vacuum: %w", classify(err))
	}
	return rt.scrubDeleted(ctx)
}

// diskBytes is the size of every file in the data dir.
func (rt *Store) diskBytes() int64 {
	var n int64
	filepath.WalkDir(rt.dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
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
