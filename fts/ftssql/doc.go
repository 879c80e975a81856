// Package ftssql runs fts on database/sql: Of adapts a *sql.DB, *sql.Conn
// or *sql.Tx (or anything with their ExecContext and QueryContext) to
// fts.Querier. A pool or connection (*sql.DB, *sql.Conn: what can begin a
// transaction) is also an fts.Snapshotter: an fts.Index catches up inside
// one read transaction of it. Safe for concurrent use as
// what it adapts is. It may import fts and database/sql only.
package ftssql
