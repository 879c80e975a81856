package ftssql

import (
	"context"
	"database/sql"

	"github.com/cairn-dev/cairn/fts"
)

// Conn is what Of adapts: database/sql's *sql.DB, *sql.Conn, *sql.Tx.
type Conn interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// Of is c as an fts.Querier; one that can begin a transaction is an
// fts.Snapshotter too.
func Of(c Conn) fts.Querier {
	if b, ok := c.(beginner); ok {
		return pool{querier{c}, b}
	}
	return querier{c}
}

type beginner interface {
	BeginTx(ctx context.Context, opts *sql.TxOptions) (*sql.Tx, error)
}

type querier struct{ c Conn }

func (q querier) ExecContext(ctx context.Context, query string, args ...any) error {
	_, err := q.c.ExecContext(ctx, query, args...)
	return err
}

func (q querier) QueryContext(ctx context.Context, query string, args ...any) (fts.Rows, error) {
	rows, err := q.c.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err // not a nil *sql.Rows in a non-nil fts.Rows
	}
	return rows, nil
}

type pool struct {
	querier
	b beginner
}

// Snapshot begins a read transaction; end rolls it back.
func (p pool) Snapshot(ctx context.Context) (fts.Querier, func(), error) {
	tx, err := p.b.BeginTx(ctx, nil)
	if err != nil {
		return nil, nil, err
	}
	return querier{tx}, func() { tx.Rollback() }, nil
}
