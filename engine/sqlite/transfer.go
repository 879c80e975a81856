package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"github.com/cairn-dev/cairn/engine"
)

// The data dir's side of the Store's transfer methods: the tables of
// migrations/0002_sessions.sql, 0006_read_cursors.sql and
// 0007_breadcrumb_marks.sql read and written as stored.

func (s *Store) PartCounts(ctx context.Context) (engine.PartCounts, error) {
	var c engine.PartCounts
	err := s.r.QueryRowContext(ctx, engine.PartCountsQuery).Scan(c.Targets()...)
	if err != nil {
		return c, fmt.Errorf("engine: count sessions, cursors and marks: %w", classify(err))
	}
	rows, err := s.r.QueryContext(ctx, `SELECT s.id FROM sessions s
		WHERE s.message_count <> (SELECT count(*) FROM session_messages m WHERE m.session_id = s.id) ORDER BY s.id`)
	if err != nil {
		return c, fmt.Errorf("engine: count session records: %w", classify(err))
	}
	c.RecordsMiscounted, err = scanAll(rows, func(r *sql.Rows) (string, error) {
		var id string
		return id, r.Scan(&id)
	})
	return c, err
}

func (s *Store) SessionContentsAfter(ctx context.Context, after string, limit int) ([]engine.ContentRow, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT hash, content, text, tokens FROM session_contents WHERE hash > ? ORDER BY hash LIMIT ?", after, limit)
	if err != nil {
		return nil, fmt.Errorf("engine: read session contents: %w", classify(err))
	}
	out, err := scanAll(rows, func(r *sql.Rows) (engine.ContentRow, error) {
		var c engine.ContentRow
		return c, r.Scan(&c.Hash, &c.Content, &c.Text, &c.Tokens)
	})
	if err != nil || len(out) == 0 {
		return out, err
	}
	rows, err = s.r.QueryContext(ctx, `SELECT content_hash, idx, start_byte, end_byte, tokens, coalesce(message_id, 0) FROM session_chunks
		WHERE content_hash > ? AND content_hash <= ? ORDER BY content_hash, idx`, after, out[len(out)-1].Hash)
	if err != nil {
		return nil, fmt.Errorf("engine: read session chunks: %w", classify(err))
	}
	byHash := make(map[string]*engine.ContentRow, len(out))
	for i := range out {
		byHash[out[i].Hash] = &out[i]
	}
	_, err = scanAll(rows, func(r *sql.Rows) (struct{}, error) {
		var hash string
		var ch engine.ChunkRow
		if err := r.Scan(&hash, &ch.Idx, &ch.Start, &ch.End, &ch.Tokens, &ch.MessageID); err != nil {
			return struct{}{}, err
		}
		if c := byHash[hash]; c != nil {
			c.Chunks = append(c.Chunks, ch)
		}
		return struct{}{}, nil
	})
	return out, err
}

func (s *Store) PutSessionContents(ctx context.Context, cs []engine.ContentRow) (int, error) {
	added := 0
	err := s.transferTx(ctx, "store session contents", func(tx *sql.Tx) error {
		added = 0
		for _, c := range cs {
			res, err := tx.ExecContext(ctx, "INSERT INTO session_contents (hash, content, text, tokens) VALUES (?, ?, ?, ?) ON CONFLICT (hash) DO NOTHING",
				c.Hash, c.Content, c.Text, c.Tokens)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n > 0 {
				added++
			}
			for _, ch := range c.Chunks {
				if _, err := tx.ExecContext(ctx, `INSERT INTO session_chunks (content_hash, idx, start_byte, end_byte, tokens, message_id)
					VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (content_hash, idx) DO NOTHING`,
					c.Hash, ch.Idx, ch.Start, ch.End, ch.Tokens, nullID(ch.MessageID)); err != nil {
					return err
				}
			}
		}
		return nil
	})
	return added, err
}

func (s *Store) SessionsAfter(ctx context.Context, after string, limit int) ([]engine.SessionArchive, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT id, source, project, cwd, git_branch, message_count, first_at, last_at, imported_at, updated_at
		FROM sessions WHERE id > ? ORDER BY id LIMIT ?`, after, limit)
	if err != nil {
		return nil, fmt.Errorf("engine: read sessions: %w", classify(err))
	}
	out, err := scanAll(rows, func(r *sql.Rows) (engine.SessionArchive, error) {
		var a engine.SessionArchive
		return a, r.Scan(&a.ID, &a.Source, &a.Project, &a.CWD, &a.GitBranch, &a.MessageCount, &a.FirstAt, &a.LastAt, &a.ImportedAt, &a.UpdatedAt)
	})
	if err != nil {
		return nil, err
	}
	for i := range out {
		rows, err := s.r.QueryContext(ctx, `SELECT session_id, seq, key, uuid, parent_uuid, type, role, created_at, is_sidechain, is_compact,
			coalesce(content_hash, ''), envelope FROM session_messages WHERE session_id = ? ORDER BY seq`, out[i].ID)
		if err != nil {
			return nil, fmt.Errorf("engine: read session records: %w", classify(err))
		}
		if out[i].Records, err = scanAll(rows, func(r *sql.Rows) (engine.SessionRow, error) {
			var x engine.SessionRow
			return x, r.Scan(&x.Session, &x.Seq, &x.Key, &x.UUID, &x.ParentUUID, &x.Type, &x.Role, &x.CreatedAt, &x.IsSidechain, &x.IsCompact, &x.ContentHash, &x.Envelope)
		}); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (s *Store) PutSession(ctx context.Context, a engine.SessionArchive) (bool, error) {
	put := false
	err := s.transferTx(ctx, "store session "+a.ID, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO sessions (id, source, project, cwd, git_branch, message_count, first_at, last_at, imported_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
			a.ID, a.Source, a.Project, a.CWD, a.GitBranch, a.MessageCount, a.FirstAt, a.LastAt, a.ImportedAt, a.UpdatedAt)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			put = false
			return nil
		}
		put = true
		st := sqliteSessionTx{tx}
		for _, r := range a.Records {
			r.Session = a.ID
			if err := st.PutRecord(ctx, r); err != nil {
				return err
			}
		}
		return nil
	})
	return put, err
}

func (s *Store) SessionFiles(ctx context.Context) ([]engine.FileRow, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT path, end_offset, lines, head_sha256, imported_at FROM session_files ORDER BY path")
	if err != nil {
		return nil, fmt.Errorf("engine: read session files: %w", classify(err))
	}
	return scanAll(rows, func(r *sql.Rows) (engine.FileRow, error) {
		var f engine.FileRow
		return f, r.Scan(&f.Path, &f.End, &f.Lines, &f.Head, &f.ImportedAt)
	})
}

func (s *Store) PutSessionFiles(ctx context.Context, fs []engine.FileRow) error {
	return s.transferTx(ctx, "store session files", func(tx *sql.Tx) error {
		for _, f := range fs {
			if _, err := tx.ExecContext(ctx, `INSERT INTO session_files (path, end_offset, lines, head_sha256, imported_at) VALUES (?, ?, ?, ?, ?)
				ON CONFLICT (path) DO NOTHING`, f.Path, f.End, f.Lines, f.Head, f.ImportedAt); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *Store) ReadCursors(ctx context.Context) ([]engine.CursorRow, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT agent, scope, last_read_id, updated_at FROM read_cursors ORDER BY agent, scope")
	if err != nil {
		return nil, fmt.Errorf("engine: read cursors: %w", classify(err))
	}
	return scanAll(rows, func(r *sql.Rows) (engine.CursorRow, error) {
		var c engine.CursorRow
		return c, r.Scan(&c.Agent, &c.Scope, &c.LastReadID, &c.UpdatedAt)
	})
}

func (s *Store) PutReadCursors(ctx context.Context, cs []engine.CursorRow) error {
	return s.transferTx(ctx, "store read cursors", func(tx *sql.Tx) error {
		for _, c := range cs {
			if _, err := tx.ExecContext(ctx, `INSERT INTO read_cursors (agent, scope, last_read_id, updated_at) VALUES (?, ?, ?, ?)
				ON CONFLICT (agent, scope) DO UPDATE SET last_read_id = excluded.last_read_id, updated_at = excluded.updated_at
				WHERE excluded.last_read_id > read_cursors.last_read_id`, c.Agent, c.Scope, c.LastReadID, c.UpdatedAt); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *Store) MarksAfter(ctx context.Context, after int64, limit int) ([]engine.MarkedRow, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT message_id, repo, head, worst, marks FROM breadcrumb_marks WHERE message_id > ? ORDER BY message_id LIMIT ?", after, limit)
	if err != nil {
		return nil, fmt.Errorf("engine: read breadcrumb marks: %w", classify(err))
	}
	return scanAll(rows, func(r *sql.Rows) (engine.MarkedRow, error) {
		var m engine.MarkedRow
		return m, r.Scan(&m.MessageID, &m.Repo, &m.Head, &m.Worst, &m.Marks)
	})
}

func (s *Store) PutMarkRows(ctx context.Context, ms []engine.MarkedRow) error {
	return s.transferTx(ctx, "store breadcrumb marks", func(tx *sql.Tx) error {
		for _, m := range ms {
			if _, err := tx.ExecContext(ctx, `INSERT INTO breadcrumb_marks (message_id, repo, head, worst, marks)
				SELECT id, ?, ?, ?, ? FROM messages WHERE id = ?
				ON CONFLICT (message_id) DO UPDATE SET repo = excluded.repo, head = excluded.head, worst = excluded.worst, marks = excluded.marks`,
				m.Repo, m.Head, m.Worst, m.Marks, m.MessageID); err != nil {
				return err
			}
		}
		return nil
	})
}

// transferTx runs fn in one write transaction of the data dir; what names
// the work in the error.
func (st *Store) transferTx(ctx context.Context, what string, fn func(*sql.Tx) error) error {
	tx, err := st.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("engine: %s: %w", what, classify(err))
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return fmt.Errorf("engine: %s: %w", what, classify(err))
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("engine: %s: %w", what, classify(err))
	}
	return nil
}

// nullID is a message id as a nullable column: 0 is NULL.
func nullID(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}

// scanAll reads every row with scan and closes rows.
func scanAll[T any](rows *sql.Rows, scan func(*sql.Rows) (T, error)) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, classify(err)
		}
		out = append(out, v)
	}
	return out, classify(rows.Err())
}

// queryAll runs query on q and scans each row with scan; its errors read
// "engine: OP: ...". No rows is an empty slice, not nil.
func queryAll[T any](ctx context.Context, q querier, op, query string, args []any, scan func(*sql.Rows) (T, error)) ([]T, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("engine: %s: %w", op, classify(err))
	}
	out, err := scanAll(rows, scan)
	if err != nil {
		return nil, fmt.Errorf("engine: %s: %w", op, err)
	}
	if out == nil {
		out = []T{}
	}
	return out, nil
}

// querySet runs query on q, whose rows have one column, and returns the
// values it read as a set; its errors read "engine: OP: ...".
func querySet[K comparable](ctx context.Context, q querier, op, query string, args ...any) (map[K]bool, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("engine: %s: %w", op, classify(err))
	}
	defer rows.Close()
	out := map[K]bool{}
	for rows.Next() {
		var k K
		if err := rows.Scan(&k); err != nil {
			return nil, fmt.Errorf("engine: %s: %w", op, classify(err))
		}
		out[k] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("engine: %s: %w", op, classify(err))
	}
	return out, nil
}

func (s *Store) PutAgents(ctx context.Context, as []engine.Agent) error {
	return s.transferTx(ctx, "store agents", func(tx *sql.Tx) error {
		for _, a := range as {
			if _, err := tx.ExecContext(ctx, `INSERT INTO agents (name, project_id, message_count, created_at, last_active) VALUES (?, ?, 0, ?, ?)
				ON CONFLICT (name, project_id) DO UPDATE SET created_at = min(created_at, excluded.created_at), last_active = max(last_active, excluded.last_active)`,
				a.Name, a.ProjectID, a.CreatedAt.UnixMilli(), a.LastActive.UnixMilli()); err != nil {
				return err
			}
		}
		return nil
	})
}
