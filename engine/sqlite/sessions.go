package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/cairn-dev/cairn/engine"
)

// The embedded store's imported sessions (migrations/0002_sessions.sql).

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// ImportSessions runs fn in one write transaction of the data dir, its
// chunk messages written in it (writeTxAt); once it committed a new
// message, it wakes the vector worker.
func (s *Store) ImportSessions(ctx context.Context, fn func(tx engine.SessionTx, write func(context.Context, engine.StoredMessage) (engine.WriteResult, error)) error) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return classify(err)
	}
	defer tx.Rollback()
	created := false
	write := func(ctx context.Context, m engine.StoredMessage) (engine.WriteResult, error) {
		r, err := s.writeTxAt(ctx, tx, m, s.opts.Now().UnixMilli())
		created = created || r.Created
		return r, err
	}
	if err := fn(sqliteSessionTx{tx}, write); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return classify(err)
	}
	if created {
		s.host.Wake() // engine/worker.go
	}
	return nil
}

// Sessions reads the session id ("" for every one), most recent first.
func (s *Store) Sessions(ctx context.Context, id string) ([]engine.Session, error) {
	where, args := "", []any(nil)
	if id != "" {
		where, args = "WHERE id = ?", []any{id}
	}
	return queryAll(ctx, s.r, "list sessions", `SELECT id, source, project, cwd, git_branch, message_count, first_at, last_at, imported_at, updated_at
		FROM sessions `+where+` ORDER BY last_at DESC, id`, args, func(rows *sql.Rows) (s engine.Session, err error) {
		var first, last, imp, upd int64
		err = rows.Scan(&s.ID, &s.Source, &s.Project, &s.CWD, &s.GitBranch, &s.MessageCount, &first, &last, &imp, &upd)
		s.FirstAt, s.LastAt, s.ImportedAt, s.UpdatedAt = fromMillis(first), fromMillis(last), fromMillis(imp), fromMillis(upd)
		return s, err
	})
}

// SessionRecords reads the session's records with their contents; false
// when it does not exist.
func (s *Store) SessionRecords(ctx context.Context, id string) ([]engine.SessionRecord, bool, error) {
	q := s.r
	var n int
	if err := q.QueryRowContext(ctx, "SELECT count(*) FROM sessions WHERE id = ?", id).Scan(&n); err != nil {
		return nil, false, fmt.Errorf("engine: session %s: %w", id, classify(err))
	}
	if n == 0 {
		return nil, false, nil
	}
	rows, err := q.QueryContext(ctx, `SELECT sm.seq, sm.uuid, sm.parent_uuid, sm.type, sm.role, sm.created_at, sm.is_sidechain, sm.is_compact,
			coalesce(sm.content_hash, ''), coalesce(c.text, ''), c.content, sm.envelope
		FROM session_messages sm LEFT JOIN session_contents c ON c.hash = sm.content_hash
		WHERE sm.session_id = ? ORDER BY sm.seq`, id)
	if err != nil {
		return nil, false, fmt.Errorf("engine: session %s: %w", id, classify(err))
	}
	defer rows.Close()
	out := make([]engine.SessionRecord, 0, 64)
	for rows.Next() {
		var r engine.SessionRecord
		var ts int64
		var content sql.NullString
		var env string
		if err := rows.Scan(&r.Seq, &r.UUID, &r.ParentUUID, &r.Type, &r.Role, &ts, &r.IsSidechain, &r.IsCompact, &r.ContentHash, &r.Text, &content, &env); err != nil {
			return nil, false, classify(err)
		}
		if ts != 0 {
			r.CreatedAt = fromMillis(ts)
		}
		if content.Valid {
			r.Content = json.RawMessage(content.String)
		}
		r.Envelope = json.RawMessage(env)
		out = append(out, r)
	}
	return out, true, classify(rows.Err())
}

// SessionRefs reads the records holding the chunk stored as message id.
func (s *Store) SessionRefs(ctx context.Context, messageID int64) ([]engine.SessionRef, error) {
	return queryAll(ctx, s.r, "session refs", `SELECT sm.session_id, sm.seq, sm.uuid, ch.idx, ch.start_byte, ch.end_byte
		FROM session_chunks ch JOIN session_messages sm ON sm.content_hash = ch.content_hash
		WHERE ch.message_id = ? ORDER BY sm.created_at, sm.session_id, sm.seq`, []any{messageID}, func(rows *sql.Rows) (r engine.SessionRef, err error) {
		err = rows.Scan(&r.SessionID, &r.Seq, &r.UUID, &r.Chunk, &r.Start, &r.End)
		return r, err
	})
}

// SessionOrphans is what GC's plan reads (ops.GC).
func (s *Store) SessionOrphans(ctx context.Context, sessions []string) ([]string, []int64, error) {
	return s.sessionOrphans(ctx, s.r, sessions)
}

// DeleteSessions deletes in one transaction (applyGC), then
// scrubs the WAL.
func (s *Store) DeleteSessions(ctx context.Context, sessions, contents []string, messages []int64) error {
	if err := s.applyGC(ctx, messages, sessions, contents); err != nil {
		return err
	}
	// The vector deletions recorded in the outbox are applied by the
	// vector worker; vecstore zeroes the pages they free.
	s.host.Wake()
	return s.scrubDeleted(ctx)
}

// ForgetSessionFiles deletes the session_files rows of the sessions' files
// (forgetSessionFilesSQL), as Purge does.
func (s *Store) ForgetSessionFiles(ctx context.Context, sessions []string) error {
	if len(sessions) == 0 {
		return nil
	}
	js, _ := json.Marshal(sessions)
	if _, err := s.w.ExecContext(ctx, forgetSessionFilesSQL, string(js)); err != nil {
		return fmt.Errorf("engine: purge: forget session files: %w", classify(err))
	}
	return nil
}
