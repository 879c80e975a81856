package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"github.com/cairn-dev/cairn/engine"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/fts"
)

// Store is the data dir's store as an engine.Store: messages, channels
// and agents in SQLite, keyword search over FTS5 and the in-memory BM25
// index (keyword_index.go), vectors in vecstore with the SQLite outbox
// (vecstore.go, outbox.go). Open opens it; engine.OpenBackend (or
// OpenEngine) runs an Engine over it. What it needs of the Engine
// arrives through Attach (engine.Host): the search counter that write
// transactions flush and the call that wakes the vector worker.
type Store struct {
	dir  string
	opts engine.Options
	// storeOpts are the data dir's own options (its SQLite connections
	// and vector store).
	storeOpts Options

	w *sql.DB // one connection, BEGIN IMMEDIATE
	r *sql.DB // read-only pool
	// sharedConn: r is w (Options.ReadOnly's fallback on a full disk).
	sharedConn bool
	// immutable: the data dir is not writable and the database is read
	// as an immutable file (openSQLiteImmutable).
	immutable bool

	fts *fts.Table       // messages_fts
	kw  *memKeywordIndex // in-memory keyword index, fts.Index (keyword_index.go)
	// vec is the vecstore and its collections (vecstore.go).
	vec *vectors
	// host is what the Engine over this store lends it (Attach).
	host engine.Host
	// text is what is embedded of a message (Vectorizer.Text, given to
	// OpenVectors).
	text func(engine.QueuedMessage) string

	// leftovers are the temporaries of killed backups and restores
	// opening removed (RemovedLeftovers).
	leftovers []string
}

var _ engine.Store = (*Store)(nil)

// selectionSQL is f as SQL over messages aliased c, with its arguments
// ("" when nothing filters).
func selectionSQL(f engine.Selection) (string, []any, error) {
	var conds []string
	var args []any
	if f.Where != nil {
		s, a, err := whereSQL(f.Where)
		if err != nil {
			return "", nil, err
		}
		conds, args = append(conds, s), append(args, a...)
	}
	if f.UnreadBy != "" {
		s, a := unreadSQL("c", f.UnreadBy)
		conds, args = append(conds, s), append(args, a...)
	}
	if f.ValidAt != nil {
		s, a := validSQL("c", f.ValidAt)
		conds, args = append(conds, s), append(args, a...)
	}
	return strings.Join(conds, " AND "), args, nil
}

// invalid is bad input on field, as the engine reports it.
func invalid(field, format string, args ...any) error {
	return &engine.InvalidError{Field: field, Rule: fmt.Sprintf(format, args...)}
}

// fromMillis is a stored time (Unix ms) as a time in UTC.
func fromMillis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

func (s *Store) Write(ctx context.Context, ms []engine.StoredMessage, now time.Time) ([]engine.WriteResult, error) {
	if len(ms) == 1 {
		res, err := s.write(ctx, ms[0], now.UnixMilli())
		if err != nil {
			return nil, err
		}
		return []engine.WriteResult{res}, nil
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("engine: store messages: %w", classify(err))
	}
	defer tx.Rollback()
	out, created, err := s.writeBatchTx(ctx, tx, ms, now.UnixMilli())
	if err != nil {
		return nil, err
	}
	counted := s.addSearchesTx(ctx, tx)
	err = tx.Commit()
	counted(err == nil)
	if err != nil {
		return nil, fmt.Errorf("engine: store messages: %w", classify(err))
	}
	if created {
		s.host.Wake()
	}
	return out, nil
}

func (s *Store) Messages(ctx context.Context, ids []int64) ([]engine.Message, error) {
	return s.getMessages(ctx, ids)
}

func (s *Store) RankFacts(ctx context.Context, ids []int64) ([]engine.Message, error) {
	return s.rankFacts(ctx, ids)
}

func (s *Store) List(ctx context.Context, f engine.Selection, limit int, order engine.ListOrder) ([]engine.Message, error) {
	cond, args, err := selectionSQL(f)
	if err != nil {
		return nil, err
	}
	q := "SELECT " + strings.ReplaceAll(messageColumns, "m.", "c.") + " FROM messages c"
	if cond != "" {
		q += " WHERE " + cond
	}
	if order == engine.ListByConfidence {
		q += " ORDER BY c.created_at DESC, c.confidence DESC, c.id DESC LIMIT ?"
	} else {
		q += " ORDER BY c.created_at DESC, c.id DESC LIMIT ?"
	}
	ms, err := queryMessages(ctx, s.r, q, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("engine: list messages: %w", err)
	}
	return ms, nil
}

func (s *Store) Keyword(ctx context.Context, q fts.Query, f engine.Selection, depth int) (engine.KeywordHits, error) {
	cond, args, err := selectionSQL(f)
	if err != nil {
		return engine.KeywordHits{Query: q}, err
	}
	// Filters depend only on the message row and its channel's type, which
	// never change, so the index may cache the rows a filter keeps; all
	// but the unread and breadcrumb filters, which change as the agent's
	// cursors and the marks move.
	hits, ranked, mass, err := s.keywordHits(ctx, q, fts.Request{Filter: cond, Args: args, CacheFilter: f.UnreadBy == "" && f.ValidAt == nil}, depth)
	if err != nil {
		return engine.KeywordHits{Query: ranked}, err
	}
	out := make([]engine.ScoredID, len(hits))
	for i, h := range hits {
		out[i] = engine.ScoredID{ID: h.RowID, Score: h.Score}
	}
	return engine.KeywordHits{Hits: out, Query: ranked, Mass: mass}, nil
}

// Nearest searches vecstore, whose metadata holds f.Where. Whether a
// message is unread, or its breadcrumbs valid, is not in that metadata: a
// search restricted to either asks for four times as many neighbours at a
// time (up to MaxLimit) and keeps those that pass.
func (s *Store) Nearest(ctx context.Context, set engine.VectorSet, q []float32, f engine.Selection, k int) ([]engine.ScoredID, error) {
	for n := k; ; n = min(engine.MaxLimit, 4*n) {
		hits, err := s.semanticSearch(ctx, set, q, f.Where, n)
		if err != nil {
			return nil, engine.VectorStoreError(err)
		}
		pass := map[int64]bool(nil)
		if f.UnreadBy != "" || f.ValidAt != nil {
			ids := make([]int64, len(hits))
			for i, h := range hits {
				ids[i] = h.id
			}
			if pass, err = s.sqlOnlyAmong(ctx, f, ids); err != nil {
				return nil, err
			}
		}
		kept := make([]engine.ScoredID, 0, len(hits))
		for _, h := range hits {
			if pass == nil || pass[h.id] {
				kept = append(kept, engine.ScoredID{ID: h.id, Score: h.sim})
			}
		}
		if pass == nil || len(kept) >= k || len(hits) < n || n >= engine.MaxLimit {
			return kept[:min(len(kept), k)], nil
		}
	}
}

// sqlOnlyAmong returns the ids among ids that pass the parts of f the
// vector metadata cannot hold (UnreadBy, ValidAt).
func (s *Store) sqlOnlyAmong(ctx context.Context, f engine.Selection, ids []int64) (map[int64]bool, error) {
	return engine.PassingMarks(ids, f,
		func(agent string) (map[int64]bool, error) { return s.UnreadAmong(ctx, agent, ids) },
		func(heads *engine.RepoHeads) (map[int64]bool, error) {
			rows, err := s.Marks(ctx, ids)
			return engine.ValidMarks(rows, heads), err
		})
}

func (s *Store) Similarities(ctx context.Context, set engine.VectorSet, q []float32, ids []int64) (map[int64]float64, error) {
	sims, err := s.similarities(ctx, set, q, ids)
	if err != nil {
		return nil, engine.VectorStoreError(err)
	}
	return sims, nil
}

// Replies reads, in one query, each asker's next message in its channel
// (c), kept when it is a reply and passes f (whose SQL names the message
// c). The row-value comparison lets SQLite seek the (channel_id,
// created_at) index; the same condition written with OR scans the channel
// (8.5 ms against 0.04 ms for 10 askers in channels of 10,000 messages).
func (s *Store) Replies(ctx context.Context, askers []int64, within time.Duration, f engine.Selection) ([]engine.Reply, error) {
	if len(askers) == 0 {
		return nil, nil
	}
	q := `SELECT a.id, c.id FROM messages a JOIN messages c ON c.id = (SELECT x.id FROM messages x
		WHERE x.channel_id = a.channel_id AND (x.created_at, x.id) > (a.created_at, a.id)
		ORDER BY x.created_at, x.id LIMIT 1)
		WHERE a.id IN (` + placeholders(len(askers)) + `) AND instr(a.content, '?') > 0
		AND c.sender_id <> a.sender_id AND c.created_at - a.created_at <= ?`
	args := append(int64Args(askers), within.Milliseconds())
	cond, fargs, err := selectionSQL(f)
	if err != nil {
		return nil, err
	}
	if cond != "" {
		q += " AND " + cond
		args = append(args, fargs...)
	}
	return queryAll(ctx, s.r, "search", q, args, func(rows *sql.Rows) (r engine.Reply, err error) {
		err = rows.Scan(&r.Asker, &r.Reply)
		return r, err
	})
}

// Delete deletes in one transaction, then scrubs the WAL (DeleteMessage).
func (s *Store) Delete(ctx context.Context, id int64) (bool, error) {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("engine: delete message: %w", classify(err))
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM messages WHERE id = ?", id).Scan(&n); err != nil {
		return false, fmt.Errorf("engine: delete message: %w", classify(err))
	}
	if n == 0 {
		return false, nil
	}
	if err := s.deleteMessagesTx(ctx, tx, []int64{id}); err != nil {
		return false, err
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("engine: delete message: %w", classify(err))
	}
	s.host.Wake()
	return true, s.scrubDeleted(ctx)
}

func (s *Store) Agents(ctx context.Context, project string) ([]engine.Agent, error) {
	q := "SELECT name, project_id, description, message_count, created_at, last_active FROM agents"
	var args []any
	if project != "" {
		q += " WHERE project_id = ?"
		args = append(args, project)
	}
	q += " ORDER BY name, project_id"
	return queryAll(ctx, s.r, "list agents", q, args, func(rows *sql.Rows) (a engine.Agent, err error) {
		var created, last int64
		err = rows.Scan(&a.Name, &a.ProjectID, &a.Description, &a.MessageCount, &created, &last)
		a.CreatedAt, a.LastActive = fromMillis(created), fromMillis(last)
		return a, err
	})
}

func (s *Store) After(ctx context.Context, after int64, limit int) ([]engine.Message, error) {
	ms, err := queryMessages(ctx, s.r, "SELECT "+messageColumns+" FROM messages m WHERE m.id > ? ORDER BY m.id LIMIT ?", after, limit)
	if err != nil {
		return nil, fmt.Errorf("engine: read messages: %w", err)
	}
	return ms, nil
}

func (s *Store) Count(ctx context.Context) (int64, error) {
	var n int64
	if err := s.r.QueryRowContext(ctx, "SELECT count(*) FROM messages").Scan(&n); err != nil {
		return 0, fmt.Errorf("engine: count messages: %w", classify(err))
	}
	return n, nil
}

func (s *Store) Channels(ctx context.Context) ([]engine.Channel, error) {
	return queryAll(ctx, s.r, "list channels", "SELECT "+channelColumns+" FROM channels ORDER BY id", nil,
		func(rows *sql.Rows) (engine.Channel, error) { return scanChannel(rows) })
}

func (s *Store) Channel(ctx context.Context, id string) (engine.Channel, bool, error) {
	c, err := scanChannel(s.r.QueryRowContext(ctx, "SELECT "+channelColumns+" FROM channels WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return engine.Channel{}, false, nil
	}
	if err != nil {
		return engine.Channel{}, false, fmt.Errorf("engine: channel %s: %w", id, classify(err))
	}
	return c, true, nil
}

func (s *Store) Senders(ctx context.Context, names []string) (map[string]bool, error) {
	if len(names) == 0 {
		return map[string]bool{}, nil
	}
	args := make([]any, len(names))
	for i, n := range names {
		args[i] = n
	}
	return querySet[string](ctx, s.r, "search", "SELECT DISTINCT lower(name) FROM agents WHERE lower(name) IN ("+placeholders(len(names))+")", args...)
}

// Sets returns the live sets, active first, each with the messages still
// queued for its vector.
func (s *Store) Sets(ctx context.Context) ([]engine.VectorSet, error) {
	sets, err := s.liveSets(ctx, s.r)
	if err != nil {
		return nil, err
	}
	for i := range sets {
		if sets[i].Pending, err = s.queued(ctx, sets[i].ID); err != nil {
			return nil, err
		}
	}
	return sets, nil
}

func (s *Store) Pending(ctx context.Context, set int64, ids []int64) (map[int64]bool, error) {
	return s.pendingIDs(ctx, set, ids)
}

// Close stops the keyword index build and the vector worker, flushes the
// search counts, and closes vecstore and SQLite (Engine.Close holds the
// lock).
// Attach keeps what the Engine over the store lends it.
func (s *Store) Attach(h engine.Host) { s.host = h }

func (s *Store) Close() error {
	s.flushSearchesAtClose(context.Background())
	s.kw.close()             // stops a keyword index build (keyword_index.go)
	verr := s.closeVectors() // the worker stopped already (vecstore.go)
	err := s.r.Close()
	if s.sharedConn {
		err = nil // s.r is s.w, closed next
	}
	if werr := s.w.Close(); err == nil {
		err = werr
	}
	if err == nil {
		err = verr
	}
	return err
}
