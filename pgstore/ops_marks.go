package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn/engine"
)

var _ engine.MarkStore = (*Store)(nil)

// PutMarks implements engine.MarkStore in one statement.
func (s *Store) PutMarks(ctx context.Context, head string, marks map[int64]engine.MarkRow) error {
	ids := make([]int64, 0, len(marks))
	worst := make([]int32, 0, len(marks))
	texts := make([]string, 0, len(marks))
	for id, m := range marks {
		ids = append(ids, id)
		worst = append(worst, int32(m.Worst))
		texts = append(texts, m.Marks)
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO breadcrumb_marks (message_id, head, worst, marks)
		SELECT m.id, $1, u.worst, u.marks FROM unnest($2::bigint[], $3::integer[], $4::text[]) AS u (id, worst, marks)
		JOIN messages m ON m.id = u.id
		ON CONFLICT (message_id) DO UPDATE SET head = excluded.head, worst = excluded.worst, marks = excluded.marks`,
		head, ids, worst, texts)
	if err != nil {
		return fmt.Errorf("pgstore: put breadcrumb marks: %w", err)
	}
	return nil
}

// MessagesToMark implements engine.MarkStore.
func (s *Store) MessagesToMark(ctx context.Context, head string, after int64, limit int) ([]engine.Message, error) {
	rows, err := s.pool.Query(ctx, "SELECT "+messageColumns+` FROM messages m
		WHERE m.id > $1 AND m.has_breadcrumbs
		AND NOT EXISTS (SELECT 1 FROM breadcrumb_marks b WHERE b.message_id = m.id AND b.head = $2)
		ORDER BY m.id LIMIT $3`, after, head, limit)
	if err != nil {
		return nil, fmt.Errorf("pgstore: messages to mark: %w", err)
	}
	ms, err := scanMessages(rows)
	if err != nil {
		return nil, fmt.Errorf("pgstore: messages to mark: %w", err)
	}
	return ms, nil
}

// Marks implements engine.MarkStore.
func (s *Store) Marks(ctx context.Context, ids []int64) (map[int64]engine.MarkRow, error) {
	rows, err := s.pool.Query(ctx, "SELECT message_id, head, worst, marks FROM breadcrumb_marks WHERE message_id = ANY($1)", ids)
	if err != nil {
		return nil, fmt.Errorf("pgstore: breadcrumb marks: %w", err)
	}
	out := make(map[int64]engine.MarkRow, len(ids))
	var id int64
	var r engine.MarkRow
	if _, err := pgx.ForEachRow(rows, []any{&id, &r.Head, &r.Worst, &r.Marks}, func() error { out[id] = r; return nil }); err != nil {
		return nil, fmt.Errorf("pgstore: breadcrumb marks: %w", err)
	}
	return out, nil
}
