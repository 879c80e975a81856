package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn/engine"
)

// The transfer methods of engine.Store on PostgreSQL: the tables of
// migrations 0002 (read_cursors, breadcrumb_marks) and 0003 (sessions)
// read and written as stored, for cairn migrate. Paging is by the tables' keys in the
// database's default collation, the same in the comparison and the order.

// PartCounts implements engine.Store.
func (s *Store) PartCounts(ctx context.Context) (engine.PartCounts, error) {
	var c engine.PartCounts
	err := s.pool.QueryRow(ctx, engine.PartCountsQuery).Scan(c.Targets()...)
	if err != nil {
		return c, fmt.Errorf("postgres: count sessions, cursors and marks: %w", err)
	}
	rows, err := s.pool.Query(ctx, `SELECT s.id FROM sessions s
		WHERE s.message_count <> (SELECT count(*) FROM session_messages m WHERE m.session_id = s.id) ORDER BY s.id COLLATE "C"`)
	if err != nil {
		return c, fmt.Errorf("postgres: count session records: %w", err)
	}
	miscounted, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return c, fmt.Errorf("postgres: count session records: %w", err)
	}
	if len(miscounted) > 0 {
		c.RecordsMiscounted = miscounted
	}
	return c, nil
}

// SessionContentsAfter implements engine.Store.
func (s *Store) SessionContentsAfter(ctx context.Context, after string, limit int) ([]engine.ContentRow, error) {
	rows, err := s.pool.Query(ctx, "SELECT hash, content, text, tokens FROM session_contents WHERE hash > $1 ORDER BY hash LIMIT $2", after, limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: read session contents: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (engine.ContentRow, error) {
		var c engine.ContentRow
		return c, r.Scan(&c.Hash, &c.Content, &c.Text, &c.Tokens)
	})
	if err != nil || len(out) == 0 {
		return out, wrapErr("read session contents", err)
	}
	hashes := make([]string, len(out))
	byHash := make(map[string]*engine.ContentRow, len(out))
	for i := range out {
		hashes[i] = out[i].Hash
		byHash[out[i].Hash] = &out[i]
	}
	rows, err = s.pool.Query(ctx, `SELECT content_hash, idx, start_byte, end_byte, tokens, coalesce(message_id, 0) FROM session_chunks
		WHERE content_hash = ANY($1) ORDER BY content_hash, idx`, hashes)
	if err != nil {
		return nil, fmt.Errorf("postgres: read session chunks: %w", err)
	}
	var hash string
	var ch engine.ChunkRow
	_, err = pgx.ForEachRow(rows, []any{&hash, &ch.Idx, &ch.Start, &ch.End, &ch.Tokens, &ch.MessageID}, func() error {
		c := byHash[hash]
		c.Chunks = append(c.Chunks, ch)
		return nil
	})
	return out, wrapErr("read session chunks", err)
}

// PutSessionContents implements engine.Store.
func (s *Store) PutSessionContents(ctx context.Context, cs []engine.ContentRow) (int, error) {
	added := 0
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		added = 0
		for _, c := range cs {
			tag, err := tx.Exec(ctx, "INSERT INTO session_contents (hash, content, text, tokens) VALUES ($1, $2, $3, $4) ON CONFLICT (hash) DO NOTHING",
				c.Hash, c.Content, c.Text, c.Tokens)
			if err != nil {
				return err
			}
			added += int(tag.RowsAffected())
			for _, ch := range c.Chunks {
				var msg *int64
				if ch.MessageID != 0 {
					msg = &ch.MessageID
				}
				if _, err := tx.Exec(ctx, `INSERT INTO session_chunks (content_hash, idx, start_byte, end_byte, tokens, message_id)
					VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (content_hash, idx) DO NOTHING`,
					c.Hash, ch.Idx, ch.Start, ch.End, ch.Tokens, msg); err != nil {
					return err
				}
			}
		}
		return nil
	})
	return added, wrapErr("store session contents", err)
}

// SessionsAfter implements engine.Store.
func (s *Store) SessionsAfter(ctx context.Context, after string, limit int) ([]engine.SessionArchive, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, source, project, cwd, git_branch, message_count, first_at, last_at, imported_at, updated_at
		FROM sessions WHERE id > $1 ORDER BY id LIMIT $2`, after, limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: read sessions: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (engine.SessionArchive, error) {
		var a engine.SessionArchive
		return a, r.Scan(&a.ID, &a.Source, &a.Project, &a.CWD, &a.GitBranch, &a.MessageCount, &a.FirstAt, &a.LastAt, &a.ImportedAt, &a.UpdatedAt)
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: read sessions: %w", err)
	}
	for i := range out {
		rows, err := s.pool.Query(ctx, `SELECT session_id, seq, key, uuid, parent_uuid, type, role, created_at, is_sidechain, is_compact,
			coalesce(content_hash, ''), envelope FROM session_messages WHERE session_id = $1 ORDER BY seq`, out[i].ID)
		if err != nil {
			return nil, fmt.Errorf("postgres: read session records: %w", err)
		}
		if out[i].Records, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (engine.SessionRow, error) {
			var x engine.SessionRow
			return x, r.Scan(&x.Session, &x.Seq, &x.Key, &x.UUID, &x.ParentUUID, &x.Type, &x.Role, &x.CreatedAt, &x.IsSidechain, &x.IsCompact, &x.ContentHash, &x.Envelope)
		}); err != nil {
			return nil, fmt.Errorf("postgres: read session records: %w", err)
		}
	}
	return out, nil
}

// PutSession implements engine.Store.
func (s *Store) PutSession(ctx context.Context, a engine.SessionArchive) (bool, error) {
	put := false
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO sessions (id, source, project, cwd, git_branch, message_count, first_at, last_at, imported_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (id) DO NOTHING`,
			a.ID, a.Source, a.Project, a.CWD, a.GitBranch, a.MessageCount, a.FirstAt, a.LastAt, a.ImportedAt, a.UpdatedAt)
		if err != nil {
			return err
		}
		put = tag.RowsAffected() == 1
		if !put {
			return nil
		}
		for _, r := range a.Records {
			r.Session = a.ID
			if err := (sessionTx{tx}).PutRecord(ctx, r); err != nil {
				return err
			}
		}
		return nil
	})
	return put, wrapErr("store session "+a.ID, err)
}

// SessionFiles implements engine.Store.
func (s *Store) SessionFiles(ctx context.Context) ([]engine.FileRow, error) {
	rows, err := s.pool.Query(ctx, "SELECT path, end_offset, lines, head_sha256, imported_at FROM session_files ORDER BY path")
	if err != nil {
		return nil, fmt.Errorf("postgres: read session files: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (engine.FileRow, error) {
		var f engine.FileRow
		return f, r.Scan(&f.Path, &f.End, &f.Lines, &f.Head, &f.ImportedAt)
	})
	return out, wrapErr("read session files", err)
}

// PutSessionFiles implements engine.Store.
func (s *Store) PutSessionFiles(ctx context.Context, fs []engine.FileRow) error {
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		for _, f := range fs {
			if _, err := tx.Exec(ctx, `INSERT INTO session_files (path, end_offset, lines, head_sha256, imported_at) VALUES ($1, $2, $3, $4, $5)
				ON CONFLICT (path) DO NOTHING`, f.Path, f.End, f.Lines, f.Head, f.ImportedAt); err != nil {
				return err
			}
		}
		return nil
	})
	return wrapErr("store session files", err)
}

// ReadCursors implements engine.Store.
func (s *Store) ReadCursors(ctx context.Context) ([]engine.CursorRow, error) {
	rows, err := s.pool.Query(ctx, "SELECT agent, scope, last_read_id, updated_at FROM read_cursors ORDER BY agent, scope")
	if err != nil {
		return nil, fmt.Errorf("postgres: read cursors: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (engine.CursorRow, error) {
		var c engine.CursorRow
		return c, r.Scan(&c.Agent, &c.Scope, &c.LastReadID, &c.UpdatedAt)
	})
	return out, wrapErr("read cursors", err)
}

// PutReadCursors implements engine.Store.
func (s *Store) PutReadCursors(ctx context.Context, cs []engine.CursorRow) error {
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		for _, c := range cs {
			if _, err := tx.Exec(ctx, `INSERT INTO read_cursors (agent, scope, last_read_id, updated_at) VALUES ($1, $2, $3, $4)
				ON CONFLICT (agent, scope) DO UPDATE SET last_read_id = excluded.last_read_id, updated_at = excluded.updated_at
				WHERE excluded.last_read_id > read_cursors.last_read_id`, c.Agent, c.Scope, c.LastReadID, c.UpdatedAt); err != nil {
				return err
			}
		}
		return nil
	})
	return wrapErr("store read cursors", err)
}

// MarksAfter implements engine.Store.
func (s *Store) MarksAfter(ctx context.Context, after int64, limit int) ([]engine.MarkedRow, error) {
	rows, err := s.pool.Query(ctx, "SELECT message_id, repo, head, worst, marks FROM breadcrumb_marks WHERE message_id > $1 ORDER BY message_id LIMIT $2", after, limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: read breadcrumb marks: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (engine.MarkedRow, error) {
		var m engine.MarkedRow
		return m, r.Scan(&m.MessageID, &m.Repo, &m.Head, &m.Worst, &m.Marks)
	})
	return out, wrapErr("read breadcrumb marks", err)
}

// PutMarkRows implements engine.Store in one statement.
func (s *Store) PutMarkRows(ctx context.Context, ms []engine.MarkedRow) error {
	rows := make(map[int64]engine.MarkRow, len(ms))
	for _, m := range ms {
		rows[m.MessageID] = m.MarkRow
	}
	return s.PutMarks(ctx, rows)
}

// PutAgents implements engine.Store.
func (s *Store) PutAgents(ctx context.Context, as []engine.Agent) error {
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		for _, a := range as {
			if _, err := tx.Exec(ctx, `INSERT INTO agents (name, project_id, message_count, created_at, last_active) VALUES ($1, $2, 0, $3, $4)
				ON CONFLICT (name, project_id) DO UPDATE SET created_at = least(agents.created_at, excluded.created_at),
					last_active = greatest(agents.last_active, excluded.last_active)`,
				a.Name, a.ProjectID, a.CreatedAt.UnixMilli(), a.LastActive.UnixMilli()); err != nil {
				return err
			}
		}
		return nil
	})
	return wrapErr("store agents", err)
}

// wrapErr names what failed, nil for nil.
func wrapErr(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("postgres: %s: %w", what, err)
}
