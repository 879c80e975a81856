package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn/engine"
)

// PutMarks implements engine.Store in one statement.
func (s *Store) PutMarks(ctx context.Context, marks map[int64]engine.MarkRow) error {
	ids := make([]int64, 0, len(marks))
	repos := make([]string, 0, len(marks))
	heads := make([]string, 0, len(marks))
	worst := make([]int32, 0, len(marks))
	texts := make([]string, 0, len(marks))
	for id, m := range marks {
		ids = append(ids, id)
		repos = append(repos, m.Repo)
		heads = append(heads, m.Head)
		worst = append(worst, int32(m.Worst))
		texts = append(texts, m.Marks)
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO breadcrumb_marks (message_id, repo, head, worst, marks)
		SELECT m.id, u.repo, u.head, u.worst, u.marks FROM unnest($1::bigint[], $2::text[], $3::text[], $4::integer[], $5::text[]) AS u (id, repo, head, worst, marks)
		JOIN messages m ON m.id = u.id
		ON CONFLICT (message_id) DO UPDATE SET repo = excluded.repo, head = excluded.head, worst = excluded.worst, marks = excluded.marks`,
		ids, repos, heads, worst, texts)
	if err != nil {
		return fmt.Errorf("postgres: put breadcrumb marks: %w", err)
	}
	return nil
}

// MessagesToMark implements engine.Store.
func (s *Store) MessagesToMark(ctx context.Context, repo, head string, after int64, limit int) ([]engine.Message, error) {
	rows, err := s.pool.Query(ctx, "SELECT "+messageColumns+` FROM messages m
		LEFT JOIN breadcrumb_marks b ON b.message_id = m.id
		WHERE m.id > $1 AND m.has_breadcrumbs
		AND coalesce(m.metadata::jsonb ->> '`+engine.RepoKey+`', nullif(b.repo, ''), $2) = $2
		AND (b.message_id IS NULL OR b.head <> $3)
		ORDER BY m.id LIMIT $4`, after, repo, head, limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: messages to mark: %w", err)
	}
	ms, err := scanMessages(rows)
	if err != nil {
		return nil, fmt.Errorf("postgres: messages to mark: %w", err)
	}
	return ms, nil
}

// Marks implements engine.Store.
func (s *Store) Marks(ctx context.Context, ids []int64) (map[int64]engine.MarkRow, error) {
	rows, err := s.pool.Query(ctx, "SELECT message_id, repo, head, worst, marks FROM breadcrumb_marks WHERE message_id = ANY($1)", ids)
	if err != nil {
		return nil, fmt.Errorf("postgres: breadcrumb marks: %w", err)
	}
	out := make(map[int64]engine.MarkRow, len(ids))
	var id int64
	var r engine.MarkRow
	if _, err := pgx.ForEachRow(rows, []any{&id, &r.Repo, &r.Head, &r.Worst, &r.Marks}, func() error { out[id] = r; return nil }); err != nil {
		return nil, fmt.Errorf("postgres: breadcrumb marks: %w", err)
	}
	return out, nil
}

// MarkedRepos implements engine.Store.
func (s *Store) MarkedRepos(ctx context.Context) ([]string, error) {
	rows, err := s.pool.Query(ctx, "SELECT DISTINCT repo FROM breadcrumb_marks WHERE repo <> ''")
	if err != nil {
		return nil, fmt.Errorf("postgres: breadcrumb marks: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("postgres: breadcrumb marks: %w", err)
	}
	return out, nil
}
