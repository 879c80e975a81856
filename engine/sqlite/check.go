package sqlite

import (
	"context"
	"errors"
	"fmt"
	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/fts/ftssql"
	"slices"
	"strconv"

	"github.com/cairn-dev/cairn/vecstore/chroma"
)

// The embedded store's checks: its files (Integrity) and its keyword
// index and vector sets against the messages (Consistency).

// Integrity runs SQLite's quick_check, the foreign key check, the channel
// counters against the messages and FTS5's integrity check.
func (s *Store) Integrity(ctx context.Context) ([]string, error) {
	// quick_check also runs FTS5's own check of its index, which reads the
	// index structure a connection cached at its last FTS5 query without
	// asking whether another connection changed it since (a secure-delete
	// that dropped a segment leaves the cache naming pages that are gone:
	// a false "corruption found"). An FTS5 query on the same connection
	// first reloads the structure.
	conn, err := s.r.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("engine: check: %w", classify(err))
	}
	defer conn.Close()
	if err := s.fts.Refresh(ctx, ftssql.Of(conn)); err != nil {
		return nil, fmt.Errorf("engine: check: %w", classify(err))
	}
	rows, err := conn.QueryContext(ctx, "PRAGMA quick_check")
	if err != nil {
		return nil, fmt.Errorf("engine: check: %w", classify(err))
	}
	var problems []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			rows.Close()
			return nil, fmt.Errorf("engine: check: %w", classify(err))
		}
		if s != "ok" {
			problems = append(problems, s)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("engine: check: %w", classify(err))
	}
	var orphans int
	if err := s.r.QueryRowContext(ctx, "SELECT count(*) FROM pragma_foreign_key_check").Scan(&orphans); err != nil {
		return nil, fmt.Errorf("engine: check: %w", classify(err))
	}
	if orphans > 0 {
		problems = append(problems, fmt.Sprintf("%d rows break foreign keys", orphans))
	}
	var counted, stored int64
	if err := s.r.QueryRowContext(ctx, "SELECT (SELECT coalesce(sum(message_count), 0) FROM channels), (SELECT count(*) FROM messages)").Scan(&counted, &stored); err != nil {
		return nil, fmt.Errorf("engine: check: %w", classify(err))
	}
	if counted != stored {
		problems = append(problems, fmt.Sprintf("channels count %d messages, the messages table has %d", counted, stored))
	}
	// integrity-check writes nothing but is an INSERT statement: it needs
	// the writer connection.
	if err := s.ftsIntegrity(ctx); err != nil {
		problems = append(problems, err.Error())
	}
	return problems, nil
}

// ftsIntegrity runs FTS5's integrity check of the keyword index. It is an
// INSERT statement that writes nothing, which a database read as an
// immutable file refuses; there SQLite's quick_check of the table runs the
// same check of the index (FTS5's xIntegrity).
func (st *Store) ftsIntegrity(ctx context.Context) error {
	if !st.immutable {
		return st.fts.Check(ctx, ftssql.Of(st.w))
	}
	var res string
	if err := st.r.QueryRowContext(ctx, "PRAGMA quick_check(messages_fts)").Scan(&res); err != nil {
		return fmt.Errorf("fts: integrity check: %w", classify(err))
	}
	if res != "ok" {
		return fmt.Errorf("fts: integrity check: %s", res)
	}
	return nil
}

// Consistency compares the messages with the FTS5 index and every live
// vector set's collection in vecstore; the data dir's mode warnings come
// with it.
func (s *Store) Consistency(ctx context.Context) (engine.CheckReport, error) {
	var rep engine.CheckReport
	rep.Problems = []string{}
	rep.Sets = []engine.SetCheck{}
	rep.Warnings = modeWarnings(s.dir)
	msgs, err := s.idSet(ctx, "SELECT id FROM messages")
	if err != nil {
		return rep, err
	}
	rep.Messages = int64(len(msgs))
	ftsIDs, err := s.idSet(ctx, "SELECT id FROM messages_fts_docsize")
	if err != nil {
		return rep, err
	}
	rep.FTSRows = int64(len(ftsIDs))
	rep.FTSMissing, rep.FTSMissingIDs = diff(msgs, ftsIDs, nil)
	rep.FTSExtra, rep.FTSExtraIDs = diff(ftsIDs, msgs, nil)
	if rep.FTSMissing > 0 {
		rep.Problems = append(rep.Problems, fmt.Sprintf("fts: %d messages are not in the keyword index (e.g. %v)", rep.FTSMissing, rep.FTSMissingIDs))
	}
	if rep.FTSExtra > 0 {
		rep.Problems = append(rep.Problems, fmt.Sprintf("fts: %d index rows belong to no message (e.g. %v)", rep.FTSExtra, rep.FTSExtraIDs))
	}
	rep.FTSIntegrity = "ok"
	if err := s.ftsIntegrity(ctx); err != nil {
		rep.FTSIntegrity = err.Error()
		rep.Problems = append(rep.Problems, err.Error())
	}

	sets, err := s.liveSets(ctx, s.r)
	if err != nil {
		return rep, err
	}
	st := s // the loop names each set s
	for _, s := range sets {
		sc := engine.SetCheck{VectorSet: s}
		ups, err := st.idSet(ctx, "SELECT message_id FROM vector_outbox WHERE op = 0 AND set_id = ?", s.ID)
		if err != nil {
			return rep, err
		}
		dels, err := st.idSet(ctx, "SELECT message_id FROM vector_outbox WHERE op = 1 AND set_id = ?", s.ID)
		if err != nil {
			return rep, err
		}
		sc.PendingUpserts, sc.PendingDeletes = int64(len(ups)), int64(len(dels))
		sc.Pending = sc.PendingUpserts + sc.PendingDeletes
		vecIDs := map[int64]bool{}
		if st.vec == nil || st.vec.store == nil {
			rep.Problems = append(rep.Problems, fmt.Sprintf("vector set %d: the vector store is not open", s.ID))
		} else {
			c, err := st.vec.store.GetCollection(ctx, chroma.DefaultTenant, VectorDatabase, s.Collection)
			switch {
			case errors.Is(err, chroma.ErrNotFound):
			case err != nil:
				return rep, fmt.Errorf("engine: check vectors: %w", err)
			default:
				sc.CollectionModel, sc.CollectionDim = c.Model, c.Dimension
				if c.Model != s.ModelID {
					rep.Problems = append(rep.Problems, fmt.Sprintf("vector set %d: collection %s records model %q, the set %q", s.ID, s.Collection, c.Model, s.ModelID))
				}
				if c.Dimension != 0 && c.Dimension != s.Dim {
					rep.Problems = append(rep.Problems, fmt.Sprintf("vector set %d: collection %s has dimension %d, the set %d", s.ID, s.Collection, c.Dimension, s.Dim))
				}
				got, err := st.vec.store.Get(ctx, c.ID, chroma.GetRequest{Include: []chroma.Include{}})
				if err != nil {
					return rep, fmt.Errorf("engine: check vectors: %w", err)
				}
				for _, sid := range got.IDs {
					id, err := strconv.ParseInt(sid, 10, 64)
					if err != nil {
						rep.Problems = append(rep.Problems, fmt.Sprintf("vector set %d: record id %q is not a message id", s.ID, sid))
						continue
					}
					vecIDs[id] = true
				}
			}
		}
		sc.Vectors = int64(len(vecIDs))
		sc.Missing, sc.MissingIDs = diff(msgs, vecIDs, ups)
		sc.Extra, sc.ExtraIDs = diff(vecIDs, msgs, dels)
		if sc.Missing > 0 {
			rep.Problems = append(rep.Problems, fmt.Sprintf("vector set %d (%s): %d messages have no vector and none queued (e.g. %v)", s.ID, s.ModelID, sc.Missing, sc.MissingIDs))
		}
		if sc.Extra > 0 {
			rep.Problems = append(rep.Problems, fmt.Sprintf("vector set %d (%s): %d vectors belong to no message and no delete is queued (e.g. %v)", s.ID, s.ModelID, sc.Extra, sc.ExtraIDs))
		}
		rep.Sets = append(rep.Sets, sc)
	}
	return rep, nil
}

func (s *Store) idSet(ctx context.Context, q string, args ...any) (map[int64]bool, error) {
	return querySet[int64](ctx, s.r, "check", q, args...)
}

// maxListedIDs is how many ids of each difference a report lists.
const maxListedIDs = 20

// diff counts the ids of a that are neither in b nor in except, listing
// the smallest maxListedIDs of them.
func diff(a, b, except map[int64]bool) (int64, []int64) {
	var n int64
	var list []int64
	for id := range a {
		if b[id] || except[id] {
			continue
		}
		n++
		list = append(list, id)
	}
	slices.Sort(list)
	if len(list) > maxListedIDs {
		list = list[:maxListedIDs]
	}
	return n, list
}
