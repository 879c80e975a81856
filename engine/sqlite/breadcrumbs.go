package sqlite

import (
	"context"
	"fmt"
	"github.com/cairn-dev/cairn/engine"
)

// BreadcrumbMessages reads a page of the messages with breadcrumbs
// (ops.MessagesWithBreadcrumbs).
func (s *Store) BreadcrumbMessages(ctx context.Context, afterID int64, limit int) ([]engine.Message, error) {
	ms, err := queryMessages(ctx, s.r, "SELECT "+messageColumns+" FROM messages m WHERE m.id > ? AND m.has_breadcrumbs = 1 ORDER BY m.id LIMIT ?", afterID, limit)
	if err != nil {
		return nil, fmt.Errorf("engine: messages with breadcrumbs: %w", err)
	}
	return ms, nil
}
