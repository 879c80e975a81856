package engine

import (
	"context"
	"fmt"
	"strings"
)

// Check verifies the database: SQLite's quick_check, the foreign keys, and
// that the keyword index matches the messages exactly. It returns an error
// wrapping ErrCorrupt describing the first problems found.
func (e *Engine) Check(ctx context.Context) error {
	if e.bs != nil {
		return e.backendCheck(ctx)
	}
	done, err := e.enter()
	if err != nil {
		return err
	}
	defer done()
	// quick_check also runs FTS5's own check of its index, which reads the
	// index structure a connection cached at its last FTS5 query without
	// asking whether another connection changed it since (a secure-delete
	// that dropped a segment leaves the cache naming pages that are gone:
	// a false "corruption found"). An FTS5 query on the same connection
	// first reloads the structure.
	conn, err := e.r.Conn(ctx)
	if err != nil {
		return fmt.Errorf("engine: check: %w", classify(err))
	}
	defer conn.Close()
	if err := e.fts.Refresh(ctx, conn); err != nil {
		return fmt.Errorf("engine: check: %w", classify(err))
	}
	rows, err := conn.QueryContext(ctx, "PRAGMA quick_check")
	if err != nil {
		return fmt.Errorf("engine: check: %w", classify(err))
	}
	var problems []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			rows.Close()
			return fmt.Errorf("engine: check: %w", classify(err))
		}
		if s != "ok" {
			problems = append(problems, s)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("engine: check: %w", classify(err))
	}
	var orphans int
	if err := e.r.QueryRowContext(ctx, "SELECT count(*) FROM pragma_foreign_key_check").Scan(&orphans); err != nil {
		return fmt.Errorf("engine: check: %w", classify(err))
	}
	if orphans > 0 {
		problems = append(problems, fmt.Sprintf("%d rows break foreign keys", orphans))
	}
	var counted, stored int64
	if err := e.r.QueryRowContext(ctx, "SELECT (SELECT coalesce(sum(message_count), 0) FROM channels), (SELECT count(*) FROM messages)").Scan(&counted, &stored); err != nil {
		return fmt.Errorf("engine: check: %w", classify(err))
	}
	if counted != stored {
		problems = append(problems, fmt.Sprintf("channels count %d messages, the messages table has %d", counted, stored))
	}
	// integrity-check writes nothing but is an INSERT statement: it needs
	// the writer connection.
	if err := e.ftsIntegrity(ctx); err != nil {
		problems = append(problems, err.Error())
	}
	// Vectors vs messages: every live set holds a vector or an outbox row per message.
	rep, err := e.consistency(ctx)
	if err == nil {
		err = e.checkPartsLocked(ctx, &rep)
	}
	if err != nil {
		problems = append(problems, err.Error())
	} else {
		for _, p := range rep.Problems {
			if !strings.HasPrefix(p, "fts: integrity") {
				problems = append(problems, p)
			}
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", ErrCorrupt, strings.Join(problems, "; "))
	}
	return nil
}

// ftsIntegrity runs FTS5's integrity check of the keyword index. It is an
// INSERT statement that writes nothing, which a database read as an
// immutable file refuses; there SQLite's quick_check of the table runs the
// same check of the index (FTS5's xIntegrity).
func (e *Engine) ftsIntegrity(ctx context.Context) error {
	if !e.immutable {
		return e.fts.Check(ctx, e.w)
	}
	var res string
	if err := e.r.QueryRowContext(ctx, "PRAGMA quick_check(messages_fts)").Scan(&res); err != nil {
		return fmt.Errorf("fts: integrity check: %w", classify(err))
	}
	if res != "ok" {
		return fmt.Errorf("fts: integrity check: %s", res)
	}
	return nil
}
