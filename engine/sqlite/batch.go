package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/fts/ftssql"
)

// The embedded store's batch write: many messages in one transaction,
// each distinct statement prepared once, the channels, agents and
// counts updated once per batch.

// stmts is a transaction (an ftssql.Conn) that prepares each distinct
// statement once (a batch runs the same few statements thousands of times).
type stmts struct {
	tx *sql.Tx
	m  map[string]*sql.Stmt
}

func (s *stmts) get(ctx context.Context, q string) (*sql.Stmt, error) {
	if st, ok := s.m[q]; ok {
		return st, nil
	}
	st, err := s.tx.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	s.m[q] = st
	return st, nil
}

func (s *stmts) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	st, err := s.get(ctx, q)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

func (s *stmts) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	st, err := s.get(ctx, q)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

func (s *stmts) close() {
	for _, st := range s.m {
		st.Close()
	}
}

// writeBatchTx is writeTxAt for many messages in one transaction,
// with the same effects: channels ensured once each, per-channel and
// per-agent counters updated once each with the batch's totals, prepared
// statements reused, at now (Unix ms). Keep it in step with writeTxAt.
func (s *Store) writeBatchTx(ctx context.Context, tx *sql.Tx, ps []engine.StoredMessage, now int64) ([]engine.WriteResult, bool, error) {
	st := &stmts{tx: tx, m: map[string]*sql.Stmt{}}
	defer st.close()
	if err := s.ensureBatchChannelsTx(ctx, tx, ps, now); err != nil {
		return nil, false, err
	}
	sets, err := liveSetIDsTx(ctx, tx)
	if err != nil {
		return nil, false, err
	}
	out := make([]engine.WriteResult, len(ps))
	var tot batchTotals
	anyCreated := false
	for i, p := range ps {
		created := p.CreatedAt.UnixMilli()
		if created == 0 {
			created = now
		}
		tot.sender(p, created)
		res, err := s.insertBatchMessageTx(ctx, st, p, created, sets)
		if err != nil {
			return nil, false, err
		}
		if res.Created {
			tot.stored(p, created)
			anyCreated = true
		}
		out[i] = res
	}
	// The keyword entries go in after every message row: FTS5 flushes the
	// entries it holds in memory to a new index segment whenever a
	// statement opens a statement savepoint, as each message's upsert
	// does, so interleaving them wrote one tiny segment per message and
	// spent a third of the batch's CPU merging them. Written together
	// they become one segment at commit.
	fq := ftssql.Of(st)
	for i, res := range out {
		if !res.Created {
			continue
		}
		if err := s.fts.Insert(ctx, fq, res.ID, ps[i].Content); err != nil {
			return nil, false, fmt.Errorf("engine: store messages: %w", classify(err))
		}
	}
	if err := s.applyBatchTotalsTx(ctx, tx, &tot, now); err != nil {
		return nil, false, err
	}
	return out, anyCreated, nil
}

// ensureBatchChannelsTx ensures each channel of the batch once. A refused
// channel fails the batch with a BatchError naming its first message.
func (s *Store) ensureBatchChannelsTx(ctx context.Context, tx *sql.Tx, ps []engine.StoredMessage, now int64) error {
	ensured := map[string]bool{}
	for i, p := range ps {
		if ensured[p.Channel.ID] {
			continue
		}
		if err := s.ensureChannelTx(ctx, tx, p.Channel, now); err != nil {
			var inv *engine.InvalidError
			if errors.As(err, &inv) || errors.Is(err, engine.ErrNotFound) {
				return &engine.BatchError{Index: i, Err: err}
			}
			return err
		}
		ensured[p.Channel.ID] = true
	}
	return nil
}

// liveSetIDsTx returns the ids of the vector sets that are not retired: each
// stored message is queued for each of them.
func liveSetIDsTx(ctx context.Context, tx *sql.Tx) ([]int64, error) {
	var sets []int64
	rows, err := tx.QueryContext(ctx, "SELECT id FROM vector_sets WHERE state <> 'retired'")
	if err != nil {
		return nil, fmt.Errorf("engine: store messages: %w", classify(err))
	}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, classify(err)
		}
		sets = append(sets, id)
	}
	rows.Close()
	return sets, nil
}

// insertBatchMessageTx stores message p created at created, with an
// outbox row for each of sets (writeBatchTx adds the keyword entries). A message already
// stored (or earlier in this batch) is not stored again: its id comes back
// with Created false.
func (s *Store) insertBatchMessageTx(ctx context.Context, st *stmts, p engine.StoredMessage, created int64, sets []int64) (engine.WriteResult, error) {
	res := engine.WriteResult{ChannelID: p.Channel.ID, ContentHash: p.ContentHash}
	if p.Supersedes != 0 {
		// As in writeTxAt: a repeat links nothing; a new message's
		// supersedes is checked before it is inserted.
		err := st.tx.QueryRowContext(ctx, "SELECT id FROM messages WHERE content_hash = ? AND channel_id = ? AND sender_id = ?", p.ContentHash, p.Channel.ID, p.Sender).Scan(&res.ID)
		if err == nil {
			return res, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return res, fmt.Errorf("engine: store messages: %w", classify(err))
		}
		if err := engine.CheckSupersedes(ctx, txQuerier{st.tx}, p.Supersedes); err != nil {
			return res, err
		}
	}
	ins, err := st.get(ctx, `INSERT INTO messages
			(channel_id, sender_id, sender_project_id, content, content_hash, confidence, message_type, metadata, mentions, word_count, has_breadcrumbs, created_at, supersedes)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, nullif(?, 0)) ON CONFLICT (content_hash, channel_id, sender_id) DO NOTHING RETURNING id`)
	if err != nil {
		return res, fmt.Errorf("engine: store messages: %w", classify(err))
	}
	err = ins.QueryRowContext(ctx, p.Channel.ID, p.Sender, p.Project, p.Content, p.ContentHash, p.Confidence, p.Type, p.Metadata, p.Mentions, p.WordCount, p.HasBreadcrumbs, created, p.Supersedes).Scan(&res.ID)
	if errors.Is(err, sql.ErrNoRows) { // already stored (or earlier in this batch)
		sel, err := st.get(ctx, "SELECT id FROM messages WHERE content_hash = ? AND channel_id = ? AND sender_id = ?")
		if err != nil {
			return res, fmt.Errorf("engine: store messages: %w", classify(err))
		}
		if err := sel.QueryRowContext(ctx, p.ContentHash, p.Channel.ID, p.Sender).Scan(&res.ID); err != nil {
			return res, fmt.Errorf("engine: store messages: %w", classify(err))
		}
		return res, nil
	}
	if err != nil {
		return res, fmt.Errorf("engine: store messages: %w", classify(err))
	}
	for _, set := range sets {
		if _, err := st.ExecContext(ctx, "INSERT INTO vector_outbox (set_id, message_id, op) VALUES (?, ?, 0) ON CONFLICT DO NOTHING", set, res.ID); err != nil {
			return res, fmt.Errorf("engine: vector outbox: %w", classify(err))
		}
	}
	res.Created = true
	return res, nil
}

// batchAgent is a sender of the batch.
type batchAgent struct{ name, project string }

// batchChannel totals the messages a batch stored in one channel.
type batchChannel struct {
	n    int
	last int64
}

// batchTotals gathers the batch's per-channel and per-agent counts, in
// first-seen order, so that each counter is updated once.
type batchTotals struct {
	agents     map[batchAgent]*batchSender
	agentOrder []batchAgent
	chans      map[string]*batchChannel
	chanOrder  []string
}

// batchSender is what the batch did for one sender: messages stored, and
// the earliest and latest time of what it wrote.
type batchSender struct {
	n           int
	first, last int64
}

// sender notes p's sender, writing at created, whether or not p is then
// stored.
func (t *batchTotals) sender(p engine.StoredMessage, created int64) {
	if t.agents == nil {
		t.agents = map[batchAgent]*batchSender{}
	}
	ak := batchAgent{p.Sender, p.Project}
	s := t.agents[ak]
	if s == nil {
		s = &batchSender{first: created, last: created}
		t.agents[ak] = s
		t.agentOrder = append(t.agentOrder, ak)
	}
	s.first, s.last = min(s.first, created), max(s.last, created)
}

// stored counts p, stored at created, for its channel and its sender.
func (t *batchTotals) stored(p engine.StoredMessage, created int64) {
	if t.chans == nil {
		t.chans = map[string]*batchChannel{}
	}
	c := t.chans[p.Channel.ID]
	if c == nil {
		c = &batchChannel{}
		t.chans[p.Channel.ID] = c
		t.chanOrder = append(t.chanOrder, p.Channel.ID)
	}
	c.n++
	c.last = max(c.last, created)
	t.agents[batchAgent{p.Sender, p.Project}].n++
}

// applyBatchTotalsTx updates each touched channel's counters, then each
// sender's (every sender is touched, even with nothing stored).
func (s *Store) applyBatchTotalsTx(ctx context.Context, tx *sql.Tx, t *batchTotals, now int64) error {
	for _, id := range t.chanOrder {
		c := t.chans[id]
		if _, err := tx.ExecContext(ctx,
			"UPDATE channels SET message_count = message_count + ?, last_message_at = max(last_message_at, ?) WHERE id = ?",
			c.n, c.last, id); err != nil {
			return fmt.Errorf("engine: store messages: %w", classify(err))
		}
	}
	for _, a := range t.agentOrder {
		sn := t.agents[a]
		if err := s.touchAgentTx(ctx, tx, a.name, a.project, now, sn.first, sn.last, sn.n); err != nil {
			return err
		}
	}
	return nil
}
