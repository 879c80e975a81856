package engine

import "context"

// CountBreadcrumbMarks counts the rows of the marks cache, for tests.
func (e *Engine) CountBreadcrumbMarks(ctx context.Context) (int, error) {
	var n int
	err := e.dataDir().r.QueryRowContext(ctx, "SELECT count(*) FROM breadcrumb_marks").Scan(&n)
	return n, err
}
