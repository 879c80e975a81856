package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"github.com/cairn-dev/cairn/engine"
)

// sqliteSessionTx is SessionTx over the data dir's write transaction.
type sqliteSessionTx struct{ tx *sql.Tx }

func (s sqliteSessionTx) FileState(ctx context.Context, path string) (engine.SessionFile, bool, error) {
	var f engine.SessionFile
	err := s.tx.QueryRowContext(ctx, "SELECT end_offset, lines, head_sha256 FROM session_files WHERE path = ?", path).Scan(&f.End, &f.Lines, &f.Head)
	if errors.Is(err, sql.ErrNoRows) {
		return f, false, nil
	}
	return f, err == nil, classify(err)
}

func (s sqliteSessionTx) PutFileState(ctx context.Context, path string, f engine.SessionFile, now int64) error {
	_, err := s.tx.ExecContext(ctx, `INSERT INTO session_files (path, end_offset, lines, head_sha256, imported_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (path) DO UPDATE SET end_offset = excluded.end_offset, lines = excluded.lines, head_sha256 = excluded.head_sha256, imported_at = excluded.imported_at`,
		path, f.End, f.Lines, f.Head, now)
	return classify(err)
}

func (s sqliteSessionTx) EnsureChannel(ctx context.Context, id, description string, now int64) error {
	_, err := s.tx.ExecContext(ctx, `INSERT INTO channels (id, channel_type, name, description, created_at)
		VALUES (?, 'channel', ?, ?, ?) ON CONFLICT (id) DO NOTHING`, id, id, description, now)
	return classify(err)
}

func (s sqliteSessionTx) StartSession(ctx context.Context, id, project string, now int64) (int, error) {
	var seq int
	if err := s.tx.QueryRowContext(ctx, "SELECT coalesce(max(seq), 0) FROM session_messages WHERE session_id = ?", id).Scan(&seq); err != nil {
		return 0, classify(err)
	}
	_, err := s.tx.ExecContext(ctx, `INSERT INTO sessions (id, project, imported_at, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (id) DO NOTHING`, id, project, now, now)
	return seq, classify(err)
}

func (s sqliteSessionTx) RecordKnown(ctx context.Context, session, key string) (bool, error) {
	var n int
	err := s.tx.QueryRowContext(ctx, "SELECT count(*) FROM session_messages WHERE session_id = ? AND key = ?", session, key).Scan(&n)
	return n > 0, classify(err)
}

func (s sqliteSessionTx) PutContent(ctx context.Context, hash, content, text string, tokens int) (bool, error) {
	res, err := s.tx.ExecContext(ctx, "INSERT INTO session_contents (hash, content, text, tokens) VALUES (?, ?, ?, ?) ON CONFLICT (hash) DO NOTHING",
		hash, content, text, tokens)
	if err != nil {
		return false, classify(err)
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

func (s sqliteSessionTx) PutChunk(ctx context.Context, hash string, idx, start, end, tokens int, messageID int64) error {
	_, err := s.tx.ExecContext(ctx, "INSERT INTO session_chunks (content_hash, idx, start_byte, end_byte, tokens, message_id) VALUES (?, ?, ?, ?, ?, ?)",
		hash, idx, start, end, tokens, messageID)
	return classify(err)
}

func (s sqliteSessionTx) PutRecord(ctx context.Context, r engine.SessionRow) error {
	var hash any
	if r.ContentHash != "" {
		hash = r.ContentHash
	}
	_, err := s.tx.ExecContext(ctx, `INSERT INTO session_messages
		(session_id, seq, key, uuid, parent_uuid, type, role, created_at, is_sidechain, is_compact, content_hash, envelope)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.Session, r.Seq, r.Key, r.UUID, r.ParentUUID, r.Type, r.Role, r.CreatedAt, r.IsSidechain, r.IsCompact, hash, r.Envelope)
	return classify(err)
}

func (s sqliteSessionTx) FinishSession(ctx context.Context, u engine.SessionUpdate) error {
	_, err := s.tx.ExecContext(ctx, `UPDATE sessions SET
			message_count = message_count + ?,
			first_at = CASE WHEN first_at = 0 OR (? <> 0 AND ? < first_at) THEN ? ELSE first_at END,
			last_at = max(last_at, ?),
			cwd = CASE WHEN cwd = '' THEN ? ELSE cwd END,
			git_branch = CASE WHEN git_branch = '' THEN ? ELSE git_branch END,
			updated_at = ?
		WHERE id = ?`,
		u.Added, u.First, u.First, u.First, u.Last, u.CWD, u.GitBranch, u.Now, u.ID)
	return classify(err)
}
