package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/fts"
)

// sqliteStore is the data dir's store as a Store: messages, channels
// and agents in SQLite, keyword search over FTS5 and the in-memory BM25
// index (engine/sqlite_keyword_index.go), vectors in vecstore with the SQLite
// outbox (engine/sqlite_vecstore.go, sqlite_outbox.go). Open builds it and
// hands it to the Engine as its Store; its methods are here and in
// engine/sqlite_*.go. What it needs of the Engine arrives through Attach
// (Host): the search counter that write transactions flush and the call
// that wakes the vector worker.
type sqliteStore struct {
	dir  string
	opts Options

	w *sql.DB // one connection, BEGIN IMMEDIATE
	r *sql.DB // read-only pool
	// sharedConn: r is w (Options.ReadOnly's fallback on a full disk).
	sharedConn bool
	// immutable: the data dir is not writable and the database is read
	// as an immutable file (openSQLiteImmutable).
	immutable bool

	fts *fts.Table       // messages_fts
	kw  *memKeywordIndex // in-memory keyword index, fts.Index (engine/sqlite_keyword_index.go)
	// vec is the vecstore and its collections (engine/sqlite_vecstore.go).
	vec *vectors
	// host is what the Engine over this store lends it (Attach).
	host Host
	// text is what is embedded of a message (Vectorizer.Text, given to
	// OpenVectors).
	text func(QueuedMessage) string

	// leftovers are the temporaries of killed backups and restores
	// opening removed (RemovedLeftovers).
	leftovers []string
}

var _ Store = (*sqliteStore)(nil)

// selectionSQL is f as SQL over messages aliased c, with its arguments
// ("" when nothing filters).
func selectionSQL(f Selection) (string, []any, error) {
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

// prepared is m as the SQLite write path takes it.
func (m StoredMessage) prepared() prepared {
	c := m.Channel
	return prepared{
		channel: channelSpec{id: c.ID, typ: c.ChannelType, name: c.Name, ownerAgent: c.OwnerAgentName, ownerProj: c.OwnerAgentProjectID, project: c.ProjectID},
		sender:  m.Sender, project: m.Project, content: m.Content, hash: m.ContentHash,
		confidence: m.Confidence, typ: m.Type, metadata: m.Metadata, mentions: m.Mentions,
		wordCount: m.WordCount, hasBreadcrumbs: m.HasBreadcrumbs, createdAt: m.CreatedAt.UnixMilli(),
		supersedes: m.Supersedes,
	}
}

func (s *sqliteStore) Write(ctx context.Context, ms []StoredMessage, now time.Time) ([]WriteResult, error) {
	if len(ms) == 1 {
		res, err := s.write(ctx, ms[0].prepared(), now.UnixMilli())
		if err != nil {
			return nil, err
		}
		return []WriteResult{res}, nil
	}
	ps := make([]prepared, len(ms))
	for i, m := range ms {
		ps[i] = m.prepared()
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("engine: store messages: %w", classify(err))
	}
	defer tx.Rollback()
	out, created, err := s.writeBatchTx(ctx, tx, ps, now.UnixMilli())
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

func (s *sqliteStore) Messages(ctx context.Context, ids []int64) ([]Message, error) {
	return s.getMessages(ctx, ids)
}

func (s *sqliteStore) RankFacts(ctx context.Context, ids []int64) ([]Message, error) {
	return s.rankFacts(ctx, ids)
}

func (s *sqliteStore) List(ctx context.Context, f Selection, limit int, order ListOrder) ([]Message, error) {
	cond, args, err := selectionSQL(f)
	if err != nil {
		return nil, err
	}
	q := "SELECT " + strings.ReplaceAll(messageColumns, "m.", "c.") + " FROM messages c"
	if cond != "" {
		q += " WHERE " + cond
	}
	if order == ListByConfidence {
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

func (s *sqliteStore) Keyword(ctx context.Context, q fts.Query, f Selection, depth int) (KeywordHits, error) {
	cond, args, err := selectionSQL(f)
	if err != nil {
		return KeywordHits{Query: q}, err
	}
	// Filters depend only on the message row and its channel's type, which
	// never change, so the index may cache the rows a filter keeps; all
	// but the unread and breadcrumb filters, which change as the agent's
	// cursors and the marks move.
	hits, ranked, mass, err := s.keywordHits(ctx, q, fts.Request{Filter: cond, Args: args, CacheFilter: f.UnreadBy == "" && f.ValidAt == nil}, depth)
	if err != nil {
		return KeywordHits{Query: ranked}, err
	}
	out := make([]ScoredID, len(hits))
	for i, h := range hits {
		out[i] = ScoredID{ID: h.RowID, Score: h.Score}
	}
	return KeywordHits{Hits: out, Query: ranked, Mass: mass}, nil
}

// Nearest searches vecstore, whose metadata holds f.Where. Whether a
// message is unread, or its breadcrumbs valid, is not in that metadata: a
// search restricted to either asks for four times as many neighbours at a
// time (up to MaxLimit) and keeps those that pass.
func (s *sqliteStore) Nearest(ctx context.Context, set VectorSet, q []float32, f Selection, k int) ([]ScoredID, error) {
	for n := k; ; n = min(MaxLimit, 4*n) {
		hits, err := s.semanticSearch(ctx, set, q, f.Where, n)
		if err != nil {
			return nil, VectorStoreError(err)
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
		kept := make([]ScoredID, 0, len(hits))
		for _, h := range hits {
			if pass == nil || pass[h.id] {
				kept = append(kept, ScoredID{ID: h.id, Score: h.sim})
			}
		}
		if pass == nil || len(kept) >= k || len(hits) < n || n >= MaxLimit {
			return kept[:min(len(kept), k)], nil
		}
	}
}

// sqlOnlyAmong returns the ids among ids that pass the parts of f the
// vector metadata cannot hold (UnreadBy, ValidAt).
func (s *sqliteStore) sqlOnlyAmong(ctx context.Context, f Selection, ids []int64) (map[int64]bool, error) {
	return PassingMarks(ids, f,
		func(agent string) (map[int64]bool, error) { return s.UnreadAmong(ctx, agent, ids) },
		func(heads *RepoHeads) (map[int64]bool, error) {
			rows, err := s.Marks(ctx, ids)
			return ValidMarks(rows, heads), err
		})
}

func (s *sqliteStore) Similarities(ctx context.Context, set VectorSet, q []float32, ids []int64) (map[int64]float64, error) {
	sims, err := s.similarities(ctx, set, q, ids)
	if err != nil {
		return nil, VectorStoreError(err)
	}
	return sims, nil
}

// Replies reads, in one query, each asker's next message in its channel
// (c), kept when it is a reply and passes f (whose SQL names the message
// c). The row-value comparison lets SQLite seek the (channel_id,
// created_at) index; the same condition written with OR scans the channel
// (8.5 ms against 0.04 ms for 10 askers in channels of 10,000 messages).
func (s *sqliteStore) Replies(ctx context.Context, askers []int64, within time.Duration, f Selection) ([]Reply, error) {
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
	return queryAll(ctx, s.r, "search", q, args, func(rows *sql.Rows) (r Reply, err error) {
		err = rows.Scan(&r.Asker, &r.Reply)
		return r, err
	})
}

// Delete deletes in one transaction, then scrubs the WAL (DeleteMessage).
func (s *sqliteStore) Delete(ctx context.Context, id int64) (bool, error) {
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

func (s *sqliteStore) Agents(ctx context.Context, project string) ([]Agent, error) {
	q := "SELECT name, project_id, description, message_count, created_at, last_active FROM agents"
	var args []any
	if project != "" {
		q += " WHERE project_id = ?"
		args = append(args, project)
	}
	q += " ORDER BY name, project_id"
	return queryAll(ctx, s.r, "list agents", q, args, func(rows *sql.Rows) (a Agent, err error) {
		var created, last int64
		err = rows.Scan(&a.Name, &a.ProjectID, &a.Description, &a.MessageCount, &created, &last)
		a.CreatedAt, a.LastActive = fromMillis(created), fromMillis(last)
		return a, err
	})
}

func (s *sqliteStore) After(ctx context.Context, after int64, limit int) ([]Message, error) {
	ms, err := queryMessages(ctx, s.r, "SELECT "+messageColumns+" FROM messages m WHERE m.id > ? ORDER BY m.id LIMIT ?", after, limit)
	if err != nil {
		return nil, fmt.Errorf("engine: read messages: %w", err)
	}
	return ms, nil
}

func (s *sqliteStore) Count(ctx context.Context) (int64, error) {
	var n int64
	if err := s.r.QueryRowContext(ctx, "SELECT count(*) FROM messages").Scan(&n); err != nil {
		return 0, fmt.Errorf("engine: count messages: %w", classify(err))
	}
	return n, nil
}

func (s *sqliteStore) Channels(ctx context.Context) ([]Channel, error) {
	return queryAll(ctx, s.r, "list channels", "SELECT "+channelColumns+" FROM channels ORDER BY id", nil,
		func(rows *sql.Rows) (Channel, error) { return scanChannel(rows) })
}

func (s *sqliteStore) Channel(ctx context.Context, id string) (Channel, bool, error) {
	c, err := scanChannel(s.r.QueryRowContext(ctx, "SELECT "+channelColumns+" FROM channels WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return Channel{}, false, nil
	}
	if err != nil {
		return Channel{}, false, fmt.Errorf("engine: channel %s: %w", id, classify(err))
	}
	return c, true, nil
}

func (s *sqliteStore) Senders(ctx context.Context, names []string) (map[string]bool, error) {
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
func (s *sqliteStore) Sets(ctx context.Context) ([]VectorSet, error) {
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

func (s *sqliteStore) Pending(ctx context.Context, set int64, ids []int64) (map[int64]bool, error) {
	return s.pendingIDs(ctx, set, ids)
}

// Close stops the keyword index build and the vector worker, flushes the
// search counts, and closes vecstore and SQLite (Engine.Close holds the
// lock).
// Attach keeps what the Engine over the store lends it.
func (s *sqliteStore) Attach(h Host) { s.host = h }

func (s *sqliteStore) Close() error {
	s.flushSearchesAtClose(context.Background())
	s.kw.close()             // stops a keyword index build (engine/sqlite_keyword_index.go)
	verr := s.closeVectors() // the worker stopped already (engine/sqlite_vecstore.go)
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
