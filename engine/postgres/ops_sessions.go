package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn/engine"
)

// ImportSessions implements engine.Store: fn runs in one
// transaction, retried as a whole on serialization failures and deadlocks
// (two processes importing the same sessions at once).
func (s *Store) ImportSessions(ctx context.Context, fn func(engine.SessionTx, func(context.Context, engine.StoredMessage) (engine.WriteResult, error)) error) error {
	created := false
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		created = false
		write := func(ctx context.Context, m engine.StoredMessage) (engine.WriteResult, error) {
			out, err := s.writeTx(ctx, tx, []engine.StoredMessage{m}, []docTerms{termsOf(m.Content)}, time.Now().UnixMilli())
			if err != nil {
				return engine.WriteResult{}, err
			}
			created = created || out[0].Created
			return out[0], nil
		}
		return fn(sessionTx{tx}, write)
	})
	if err != nil {
		return fmt.Errorf("postgres: import sessions: %w", err)
	}
	if created && s.host.Wake != nil {
		s.host.Wake() // the Engine's vector worker
	}
	return nil
}

// sessionTx is engine.SessionTx in a PostgreSQL transaction.
type sessionTx struct{ tx pgx.Tx }

func (t sessionTx) FileState(ctx context.Context, path string) (engine.SessionFile, bool, error) {
	var f engine.SessionFile
	err := t.tx.QueryRow(ctx, "SELECT end_offset, lines, head_sha256 FROM session_files WHERE path = $1", path).Scan(&f.End, &f.Lines, &f.Head)
	if errors.Is(err, pgx.ErrNoRows) {
		return f, false, nil
	}
	return f, err == nil, err
}

func (t sessionTx) PutFileState(ctx context.Context, path string, f engine.SessionFile, now int64) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO session_files (path, end_offset, lines, head_sha256, imported_at) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (path) DO UPDATE SET end_offset = excluded.end_offset, lines = excluded.lines, head_sha256 = excluded.head_sha256, imported_at = excluded.imported_at`,
		path, f.End, f.Lines, f.Head, now)
	return err
}

func (t sessionTx) EnsureChannel(ctx context.Context, id, description string, now int64) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO channels (id, channel_type, name, description, created_at)
		VALUES ($1, 'channel', $1, $2, $3) ON CONFLICT (id) DO NOTHING`, id, description, now)
	return err
}

func (t sessionTx) StartSession(ctx context.Context, id, project string, now int64) (int, error) {
	var seq int
	if err := t.tx.QueryRow(ctx, "SELECT coalesce(max(seq), 0) FROM session_messages WHERE session_id = $1", id).Scan(&seq); err != nil {
		return 0, err
	}
	_, err := t.tx.Exec(ctx, `INSERT INTO sessions (id, project, imported_at, updated_at) VALUES ($1, $2, $3, $3)
		ON CONFLICT (id) DO NOTHING`, id, project, now)
	return seq, err
}

func (t sessionTx) RecordKnown(ctx context.Context, session, key string) (bool, error) {
	var known bool
	err := t.tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM session_messages WHERE session_id = $1 AND key = $2)", session, key).Scan(&known)
	return known, err
}

func (t sessionTx) PutContent(ctx context.Context, hash, content, text string, tokens int) (bool, error) {
	tag, err := t.tx.Exec(ctx, "INSERT INTO session_contents (hash, content, text, tokens) VALUES ($1, $2, $3, $4) ON CONFLICT (hash) DO NOTHING",
		hash, content, text, tokens)
	return err == nil && tag.RowsAffected() == 1, err
}

func (t sessionTx) PutChunk(ctx context.Context, hash string, idx, start, end, tokens int, messageID int64) error {
	_, err := t.tx.Exec(ctx, "INSERT INTO session_chunks (content_hash, idx, start_byte, end_byte, tokens, message_id) VALUES ($1, $2, $3, $4, $5, $6)",
		hash, idx, start, end, tokens, messageID)
	return err
}

func (t sessionTx) PutRecord(ctx context.Context, r engine.SessionRow) error {
	var hash *string
	if r.ContentHash != "" {
		hash = &r.ContentHash
	}
	_, err := t.tx.Exec(ctx, `INSERT INTO session_messages
		(session_id, seq, key, uuid, parent_uuid, type, role, created_at, is_sidechain, is_compact, content_hash, envelope)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		r.Session, r.Seq, r.Key, r.UUID, r.ParentUUID, r.Type, r.Role, r.CreatedAt, r.IsSidechain, r.IsCompact, hash, r.Envelope)
	return err
}

func (t sessionTx) FinishSession(ctx context.Context, u engine.SessionUpdate) error {
	_, err := t.tx.Exec(ctx, `UPDATE sessions SET
			message_count = message_count + $1,
			first_at = CASE WHEN first_at = 0 OR ($2::bigint <> 0 AND $2::bigint < first_at) THEN $2::bigint ELSE first_at END,
			last_at = greatest(last_at, $3::bigint),
			cwd = CASE WHEN cwd = '' THEN $4 ELSE cwd END,
			git_branch = CASE WHEN git_branch = '' THEN $5 ELSE git_branch END,
			updated_at = $6
		WHERE id = $7`,
		u.Added, u.First, u.Last, u.CWD, u.GitBranch, u.Now, u.ID)
	return err
}

// Sessions implements engine.Store.
func (s *Store) Sessions(ctx context.Context, id string) ([]engine.Session, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, source, project, cwd, git_branch, message_count, first_at, last_at, imported_at, updated_at
		FROM sessions WHERE $1 = '' OR id = $1 ORDER BY last_at DESC, id COLLATE "C"`, id)
	if err != nil {
		return nil, fmt.Errorf("postgres: list sessions: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (engine.Session, error) {
		var v engine.Session
		var first, last, imp, upd int64
		err := r.Scan(&v.ID, &v.Source, &v.Project, &v.CWD, &v.GitBranch, &v.MessageCount, &first, &last, &imp, &upd)
		v.FirstAt, v.LastAt, v.ImportedAt, v.UpdatedAt = millis(first), millis(last), millis(imp), millis(upd)
		return v, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: list sessions: %w", err)
	}
	return out, nil
}

func millis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// SessionRecords implements engine.Store.
func (s *Store) SessionRecords(ctx context.Context, id string) ([]engine.SessionRecord, bool, error) {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, false, fmt.Errorf("postgres: session %s: %w", id, err)
	}
	defer tx.Rollback(ctx)
	var found bool
	if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM sessions WHERE id = $1)", id).Scan(&found); err != nil || !found {
		return nil, false, err
	}
	rows, err := tx.Query(ctx, `SELECT sm.seq, sm.uuid, sm.parent_uuid, sm.type, sm.role, sm.created_at, sm.is_sidechain, sm.is_compact,
			coalesce(sm.content_hash, ''), coalesce(c.text, ''), c.content, sm.envelope
		FROM session_messages sm LEFT JOIN session_contents c ON c.hash = sm.content_hash
		WHERE sm.session_id = $1 ORDER BY sm.seq`, id)
	if err != nil {
		return nil, false, fmt.Errorf("postgres: session %s: %w", id, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (engine.SessionRecord, error) {
		var v engine.SessionRecord
		var ts int64
		var content *string
		var env string
		err := r.Scan(&v.Seq, &v.UUID, &v.ParentUUID, &v.Type, &v.Role, &ts, &v.IsSidechain, &v.IsCompact, &v.ContentHash, &v.Text, &content, &env)
		if ts != 0 {
			v.CreatedAt = millis(ts)
		}
		if content != nil {
			v.Content = json.RawMessage(*content)
		}
		v.Envelope = json.RawMessage(env)
		return v, err
	})
	if err != nil {
		return nil, false, fmt.Errorf("postgres: session %s: %w", id, err)
	}
	return out, true, nil
}

// SessionRefs implements engine.Store.
func (s *Store) SessionRefs(ctx context.Context, messageID int64) ([]engine.SessionRef, error) {
	rows, err := s.pool.Query(ctx, `SELECT sm.session_id, sm.seq, sm.uuid, ch.idx, ch.start_byte, ch.end_byte
		FROM session_chunks ch JOIN session_messages sm ON sm.content_hash = ch.content_hash
		WHERE ch.message_id = $1 ORDER BY sm.created_at, sm.session_id COLLATE "C", sm.seq`, messageID)
	if err != nil {
		return nil, fmt.Errorf("postgres: session refs: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (engine.SessionRef, error) {
		var v engine.SessionRef
		err := r.Scan(&v.SessionID, &v.Seq, &v.UUID, &v.Chunk, &v.Start, &v.End)
		return v, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: session refs: %w", err)
	}
	return out, nil
}

// SessionOrphans implements engine.Store.
func (s *Store) SessionOrphans(ctx context.Context, sessions []string) ([]string, []int64, error) {
	if len(sessions) == 0 {
		return nil, nil, nil
	}
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, nil, fmt.Errorf("postgres: gc: %w", err)
	}
	defer tx.Rollback(ctx)
	rows, err := tx.Query(ctx, `SELECT DISTINCT content_hash FROM session_messages
		WHERE session_id = ANY($1) AND content_hash IS NOT NULL
		AND content_hash NOT IN (SELECT content_hash FROM session_messages
			WHERE session_id <> ALL($1) AND content_hash IS NOT NULL)
		ORDER BY 1`, sessions)
	if err != nil {
		return nil, nil, fmt.Errorf("postgres: gc: %w", err)
	}
	orphans, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(orphans) == 0 {
		return nil, nil, err
	}
	rows, err = tx.Query(ctx, `SELECT DISTINCT message_id FROM session_chunks
		WHERE content_hash = ANY($1) AND message_id IS NOT NULL
		AND message_id NOT IN (SELECT message_id FROM session_chunks
			WHERE content_hash <> ALL($1) AND message_id IS NOT NULL)
		ORDER BY message_id`, orphans)
	if err != nil {
		return nil, nil, fmt.Errorf("postgres: gc: %w", err)
	}
	msgs, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, nil, fmt.Errorf("postgres: gc: %w", err)
	}
	return orphans, msgs, nil
}

// DeleteSessions implements engine.Store. Records go with their
// session, chunk rows with their content (ON DELETE CASCADE).
func (s *Store) DeleteSessions(ctx context.Context, sessions, contents []string, messages []int64) error {
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "DELETE FROM sessions WHERE id = ANY($1)", sessions); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "DELETE FROM session_contents WHERE hash = ANY($1)", contents); err != nil {
			return err
		}
		return deleteMessagesTx(ctx, tx, messages)
	})
	if err != nil {
		return fmt.Errorf("postgres: delete sessions: %w", err)
	}
	return nil
}

// ForgetSessionFiles implements engine.Store: the files named by a
// session id (ID.jsonl), those in a folder named by it, and the sub-agent
// files (agent-{agentId}.jsonl) its sidechain records name; it runs before
// the sessions are deleted.
func (s *Store) ForgetSessionFiles(ctx context.Context, sessions []string) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM session_files f WHERE EXISTS (SELECT 1 FROM unnest($1::text[]) AS s(id)
		WHERE right(f.path, length(s.id) + 7) IN ('/' || s.id || '.jsonl', E'\\' || s.id || '.jsonl')
		OR strpos(f.path, '/' || s.id || '/') > 0 OR strpos(f.path, E'\\' || s.id || E'\\') > 0
		OR EXISTS (SELECT 1 FROM (SELECT DISTINCT m.envelope::json ->> 'agentId' AS agent FROM session_messages m
			WHERE m.session_id = s.id AND m.is_sidechain) a
			WHERE a.agent <> '' AND right(f.path, length(a.agent) + 13) IN ('/agent-' || a.agent || '.jsonl', E'\\agent-' || a.agent || '.jsonl')))`, sessions)
	if err != nil {
		return fmt.Errorf("postgres: forget session files: %w", err)
	}
	return nil
}
