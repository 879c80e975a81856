package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn/engine"
)

// maxListedIDs is how many ids of each difference a report lists.
const maxListedIDs = 20

// keywordEntryOK is the condition "the message's keyword entry matches
// its terms" over messages aliased m: as many frequencies as terms, a
// length that is their sum.
const keywordEntryOK = `cardinality(m.terms) = cardinality(m.tfs)
	AND m.doc_len = (SELECT coalesce(sum(f), 0) FROM unnest(m.tfs) f)`

// Integrity implements engine.Store: PostgreSQL checks its own pages, and
// Consistency compares the counters and statistics kept beside the
// messages.
func (s *Store) Integrity(ctx context.Context) ([]string, error) { return nil, nil }

// Consistency implements engine.Store, in one snapshot. Keyword
// entries live in the message rows, so FTSExtra is always 0 and FTSRows
// counts the entries that match their terms; FTSIntegrity compares the
// BM25 totals (keyword_stats) with the messages. Each live vector set is
// compared with the messages (a vector or an outbox row each, never both)
// and its table's dimension with the set's.
func (s *Store) Consistency(ctx context.Context) (engine.CheckReport, error) {
	rep := engine.CheckReport{Problems: []string{}, Sets: []engine.SetCheck{}}
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return rep, fmt.Errorf("postgres: check: %w", err)
	}
	defer tx.Rollback(ctx)
	fail := func(err error) (engine.CheckReport, error) { return rep, fmt.Errorf("postgres: check: %w", err) }
	problem := func(format string, args ...any) { rep.Problems = append(rep.Problems, fmt.Sprintf(format, args...)) }

	var tokens int64
	if err := tx.QueryRow(ctx, "SELECT count(*), coalesce(sum(doc_len), 0) FROM messages").Scan(&rep.Messages, &tokens); err != nil {
		return fail(err)
	}
	if rep.FTSMissing, rep.FTSMissingIDs, err = countAndList(ctx, tx, "FROM messages m WHERE NOT ("+keywordEntryOK+")", "m.id"); err != nil {
		return fail(err)
	}
	rep.FTSRows = rep.Messages - rep.FTSMissing
	if rep.FTSMissing > 0 {
		problem("fts: %d messages have a keyword entry that does not match their terms (e.g. %v)", rep.FTSMissing, rep.FTSMissingIDs)
	}
	var docs, statTokens int64
	if err := tx.QueryRow(ctx, "SELECT coalesce(sum(docs), 0), coalesce(sum(tokens), 0) FROM keyword_stats").Scan(&docs, &statTokens); err != nil {
		return fail(err)
	}
	rep.FTSIntegrity = "ok"
	if docs != rep.Messages || statTokens != tokens {
		rep.FTSIntegrity = fmt.Sprintf("keyword statistics count %d documents and %d tokens, the messages are %d with %d tokens", docs, statTokens, rep.Messages, tokens)
		problem("fts: integrity: %s", rep.FTSIntegrity)
	}
	// The keyword search reads postings and per-term counts, not the
	// message rows: they must hold one entry per searchable term.
	var postings, searchable, dfs int64
	if err := tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM keyword_postings),
		(SELECT count(*) FROM messages m CROSS JOIN LATERAL unnest(m.terms) AS t(term) WHERE octet_length(t.term) <= 2046),
		(SELECT coalesce(sum(df), 0) FROM keyword_terms)`).Scan(&postings, &searchable, &dfs); err != nil {
		return fail(err)
	}
	if postings != searchable || dfs != searchable {
		msg := fmt.Sprintf("keyword postings hold %d entries and term counts sum to %d, the messages have %d searchable terms", postings, dfs, searchable)
		if rep.FTSIntegrity == "ok" {
			rep.FTSIntegrity = msg
		}
		problem("fts: integrity: %s", msg)
	}

	rows, err := tx.Query(ctx, `SELECT c.id, c.message_count, count(m.id) FROM channels c LEFT JOIN messages m ON m.channel_id = c.id
		GROUP BY c.id, c.message_count HAVING c.message_count <> count(m.id) ORDER BY c.id COLLATE "C" LIMIT $1`, maxListedIDs)
	if err != nil {
		return fail(err)
	}
	var ch string
	var counted, stored int64
	if _, err := pgx.ForEachRow(rows, []any{&ch, &counted, &stored}, func() error {
		problem("channel %s counts %d messages, it has %d", ch, counted, stored)
		return nil
	}); err != nil {
		return fail(err)
	}

	sets, err := s.Sets(ctx)
	if err != nil {
		return rep, err
	}
	for _, set := range sets {
		sc := engine.SetCheck{VectorSet: set, CollectionModel: set.ModelID}
		table := vectorTable(set.ID)
		var exists bool
		err := tx.QueryRow(ctx, `SELECT coalesce((SELECT a.atttypmod FROM pg_attribute a WHERE a.attrelid = to_regclass($1) AND a.attname = 'embedding'), 0),
			to_regclass($1) IS NOT NULL`, table).Scan(&sc.CollectionDim, &exists)
		if err != nil {
			return fail(err)
		}
		if !exists {
			problem("vector set %d: its table %s does not exist", set.ID, table)
			rep.Sets = append(rep.Sets, sc)
			continue
		}
		if sc.CollectionDim != set.Dim {
			problem("vector set %d: table %s has dimension %d, the set %d", set.ID, table, sc.CollectionDim, set.Dim)
		}
		if err := tx.QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&sc.Vectors); err != nil {
			return fail(err)
		}
		if err := tx.QueryRow(ctx, "SELECT count(*) FROM vector_outbox WHERE set_id = $1", set.ID).Scan(&sc.PendingUpserts); err != nil {
			return fail(err)
		}
		sc.Pending = sc.PendingUpserts
		if sc.Missing, sc.MissingIDs, err = countAndList(ctx, tx, `FROM messages m WHERE NOT EXISTS (SELECT 1 FROM `+table+` v WHERE v.message_id = m.id)
			AND NOT EXISTS (SELECT 1 FROM vector_outbox o WHERE o.set_id = `+fmt.Sprint(set.ID)+` AND o.message_id = m.id)`, "m.id"); err != nil {
			return fail(err)
		}
		if sc.Extra, sc.ExtraIDs, err = countAndList(ctx, tx, `FROM `+table+` v WHERE NOT EXISTS (SELECT 1 FROM messages m WHERE m.id = v.message_id)`, "v.message_id"); err != nil {
			return fail(err)
		}
		if sc.Missing > 0 {
			problem("vector set %d (%s): %d messages have no vector and none queued (e.g. %v)", set.ID, set.ModelID, sc.Missing, sc.MissingIDs)
		}
		if sc.Extra > 0 {
			problem("vector set %d (%s): %d vectors belong to no message (e.g. %v)", set.ID, set.ModelID, sc.Extra, sc.ExtraIDs)
		}
		both, bothIDs, err := countAndList(ctx, tx, `FROM vector_outbox o JOIN `+table+` v ON v.message_id = o.message_id WHERE o.set_id = `+fmt.Sprint(set.ID), "o.message_id")
		if err != nil {
			return fail(err)
		}
		if both > 0 {
			problem("vector set %d (%s): %d messages have a vector and are still queued (e.g. %v)", set.ID, set.ModelID, both, bothIDs)
		}
		rep.Sets = append(rep.Sets, sc)
	}
	return rep, nil
}

// countAndList counts the rows of from (a FROM ... WHERE ... clause) and
// lists the smallest maxListedIDs values of id among them.
func countAndList(ctx context.Context, tx pgx.Tx, from, id string) (int64, []int64, error) {
	var n int64
	if err := tx.QueryRow(ctx, "SELECT count(*) "+from).Scan(&n); err != nil || n == 0 {
		return n, nil, err
	}
	rows, err := tx.Query(ctx, "SELECT "+id+" "+from+" ORDER BY 1 LIMIT "+fmt.Sprint(maxListedIDs))
	if err != nil {
		return n, nil, err
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	return n, ids, err
}
