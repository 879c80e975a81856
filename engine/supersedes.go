package engine

import (
	"context"
	"fmt"
)

// SupersedesQuerier reads one row inside a store's write transaction.
type SupersedesQuerier interface {
	// QueryRow runs query with args and scans its one row into dest;
	// ok is false when there is no row.
	QueryRow(ctx context.Context, query string, args []any, dest ...any) (ok bool, err error)
}

// SupersedesQuery is the query CheckSupersedes runs, with the id as its one
// argument ($1 / ?): the id's row, and the message superseding it (0 for
// none).
const SupersedesQuery = `SELECT coalesce((SELECT s.id FROM messages s WHERE s.supersedes = m.id), 0) FROM messages m WHERE m.id = `

// CheckSupersedes checks, inside the write transaction of a message that
// supersedes id (0: none), that id exists and is not superseded already
// (a correction supersedes the newest version): an *InvalidError on
// supersedes otherwise. Both stores run it before their insert, so a
// refused write writes nothing.
func CheckSupersedes(ctx context.Context, q SupersedesQuerier, id int64) error {
	if id == 0 {
		return nil
	}
	var by int64
	ok, err := q.QueryRow(ctx, SupersedesQuery, []any{id}, &by)
	switch {
	case err != nil:
		return fmt.Errorf("engine: check supersedes: %w", err)
	case !ok:
		return invalid("supersedes", "message %d does not exist", id)
	case by != 0:
		return invalid("supersedes", "message %d is already superseded by message %d; supersede that one", id, by)
	}
	return nil
}
