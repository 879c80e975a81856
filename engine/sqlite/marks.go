package sqlite

import (
	"context"
	"fmt"
	"github.com/cairn-dev/cairn/engine"
)

// The embedded store's breadcrumb marks cache (table breadcrumb_marks).

func (s *Store) PutMarks(ctx context.Context, rows map[int64]engine.MarkRow) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("engine: put breadcrumb marks: %w", classify(err))
	}
	defer tx.Rollback()
	st, err := tx.PrepareContext(ctx, `INSERT INTO breadcrumb_marks (message_id, repo, head, worst, marks)
		SELECT id, ?, ?, ?, ? FROM messages WHERE id = ?
		ON CONFLICT (message_id) DO UPDATE SET repo = excluded.repo, head = excluded.head, worst = excluded.worst, marks = excluded.marks`)
	if err != nil {
		return fmt.Errorf("engine: put breadcrumb marks: %w", classify(err))
	}
	defer st.Close()
	for id, r := range rows {
		if _, err := st.ExecContext(ctx, r.Repo, r.Head, r.Worst, r.Marks, id); err != nil {
			return fmt.Errorf("engine: put breadcrumb marks: %w", classify(err))
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("engine: put breadcrumb marks: %w", classify(err))
	}
	return nil
}

func (s *Store) MessagesToMark(ctx context.Context, repo, head string, after int64, limit int) ([]engine.Message, error) {
	ms, err := queryMessages(ctx, s.r, "SELECT "+messageColumns+` FROM messages m
		LEFT JOIN breadcrumb_marks b ON b.message_id = m.id
		WHERE m.id > ? AND m.has_breadcrumbs = 1
		AND coalesce(json_extract(m.metadata, '$.`+engine.RepoKey+`'), nullif(b.repo, ''), ?) = ?
		AND (b.message_id IS NULL OR b.head <> ?)
		ORDER BY m.id LIMIT ?`, after, repo, repo, head, limit)
	if err != nil {
		return nil, fmt.Errorf("engine: messages to mark: %w", err)
	}
	return ms, nil
}

func (s *Store) Marks(ctx context.Context, ids []int64) (map[int64]engine.MarkRow, error) {
	out := map[int64]engine.MarkRow{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.r.QueryContext(ctx, "SELECT message_id, repo, head, worst, marks FROM breadcrumb_marks WHERE message_id IN ("+placeholders(len(ids))+")", int64Args(ids)...)
	if err != nil {
		return nil, fmt.Errorf("engine: breadcrumb marks: %w", classify(err))
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var r engine.MarkRow
		if err := rows.Scan(&id, &r.Repo, &r.Head, &r.Worst, &r.Marks); err != nil {
			return nil, fmt.Errorf("engine: breadcrumb marks: %w", classify(err))
		}
		out[id] = r
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("engine: breadcrumb marks: %w", classify(err))
	}
	return out, nil
}

func (s *Store) MarkedRepos(ctx context.Context) ([]string, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT DISTINCT repo FROM breadcrumb_marks WHERE repo <> ''")
	if err != nil {
		return nil, fmt.Errorf("engine: breadcrumb marks: %w", classify(err))
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var r string
		if err := rows.Scan(&r); err != nil {
			return nil, fmt.Errorf("engine: breadcrumb marks: %w", classify(err))
		}
		out = append(out, r)
	}
	return out, classify(rows.Err())
}
