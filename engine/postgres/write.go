package postgres

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/fts"
)

// maxLexemeBytes is the longest term keyword_postings holds (a bound of
// its index rows); longer terms stay in terms (and count in the length)
// but cannot be searched, as no query term is that long.
const maxLexemeBytes = 2046

// Write implements engine.Store.
func (s *Store) Write(ctx context.Context, ms []engine.StoredMessage, now time.Time) ([]engine.WriteResult, error) {
	docs := make([]docTerms, len(ms))
	for i, m := range ms {
		docs[i] = termsOf(m.Content)
	}
	var out []engine.WriteResult
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		out, err = s.writeTx(ctx, tx, ms, docs, now.UnixMilli())
		return err
	})
	var inv *engine.InvalidError
	if errors.As(err, &inv) {
		return nil, err // bad input, as the embedded store reports it
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: store messages: %w", err)
	}
	return out, nil
}

// txQuerier is a transaction as an engine.SupersedesQuerier.
type txQuerier struct{ tx pgx.Tx }

func (q txQuerier) QueryRow(ctx context.Context, query string, args []any, dest ...any) (bool, error) {
	err := q.tx.QueryRow(ctx, query+"$1", args...).Scan(dest...)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

type docTerms struct {
	terms  []string
	tfs    []int32
	length int
}

func termsOf(content string) docTerms {
	d := docTerms{}
	d.terms, d.tfs, d.length = fts.DocTerms(content)
	if d.terms == nil {
		d.terms, d.tfs = []string{}, []int32{}
	}
	return d
}

type agentKey struct{ name, project string }

type agentTotals struct {
	n           int
	first, last int64
}

type channelTotals struct {
	n    int
	last int64
}

func (s *Store) writeTx(ctx context.Context, tx pgx.Tx, ms []engine.StoredMessage, docs []docTerms, now int64) ([]engine.WriteResult, error) {
	// Channels and projects first, each once, in key order (concurrent
	// writers then lock rows in the same order).
	chans := map[string]engine.Channel{}
	projects := map[string]bool{}
	for _, m := range ms {
		chans[m.Channel.ID] = m.Channel
		if m.Channel.ProjectID != "" {
			projects[m.Channel.ProjectID] = true
		}
		if m.Project != "" {
			projects[m.Project] = true
		}
	}
	for _, id := range sortedKeys(chans) {
		c := chans[id]
		if _, err := tx.Exec(ctx, `INSERT INTO channels (id, channel_type, name, owner_agent_name, owner_agent_project_id, project_id, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (id) DO NOTHING`,
			c.ID, c.ChannelType, c.Name, c.OwnerAgentName, c.OwnerAgentProjectID, c.ProjectID, now); err != nil {
			return nil, err
		}
	}
	for _, p := range sortedKeys(projects) {
		for _, name := range engine.ProjectChannelNames() {
			if _, err := tx.Exec(ctx, `INSERT INTO channels (id, channel_type, name, project_id, created_at)
				VALUES ($1, 'project', $2, $3, $4) ON CONFLICT (id) DO NOTHING`,
				engine.ProjectChannelID(p, name), name, p, now); err != nil {
				return nil, err
			}
		}
	}
	var sets []int64
	rows, err := tx.Query(ctx, "SELECT id FROM vector_sets WHERE state <> 'retired'")
	if err != nil {
		return nil, err
	}
	if sets, err = pgx.CollectRows(rows, pgx.RowTo[int64]); err != nil {
		return nil, err
	}
	out := make([]engine.WriteResult, len(ms))
	agents := map[agentKey]*agentTotals{}
	chanTot := map[string]*channelTotals{}
	var docsAdded, tokensAdded int64
	for i, m := range ms {
		created := m.CreatedAt.UnixMilli()
		ak := agentKey{m.Sender, m.Project}
		a := agents[ak]
		if a == nil {
			a = &agentTotals{first: created, last: created}
			agents[ak] = a
		}
		a.first, a.last = min(a.first, created), max(a.last, created)
		res := engine.WriteResult{ChannelID: m.Channel.ID, ContentHash: m.ContentHash}
		// A single write looks first, so that a repeat takes no id from
		// the sequence; a batch inserts at once, where a repeat takes one:
		// ids then follow the embedded store's (its AUTOINCREMENT behaves
		// the same way on each path).
		// A repeat links nothing: a supersedes is checked only for a
		// message not stored yet.
		if len(ms) == 1 || m.Supersedes != 0 {
			err := tx.QueryRow(ctx, "SELECT id FROM messages WHERE content_hash = $1 AND channel_id = $2 AND sender_id = $3",
				m.ContentHash, m.Channel.ID, m.Sender).Scan(&res.ID)
			if err == nil {
				out[i] = res
				continue
			}
			if !errors.Is(err, pgx.ErrNoRows) {
				return nil, err
			}
		}
		if err := engine.CheckSupersedes(ctx, txQuerier{tx}, m.Supersedes); err != nil {
			return nil, err
		}
		d := docs[i]
		err := tx.QueryRow(ctx, `INSERT INTO messages
			(channel_id, channel_type, sender_id, sender_project_id, content, content_hash, confidence, message_type, metadata, mentions,
			 word_count, has_breadcrumbs, created_at, terms, tfs, doc_len, supersedes)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, nullif($17::bigint, 0))
			ON CONFLICT (content_hash, channel_id, sender_id) DO NOTHING RETURNING id`,
			m.Channel.ID, m.Channel.ChannelType, m.Sender, m.Project, m.Content, m.ContentHash, m.Confidence, m.Type, m.Metadata, m.Mentions,
			m.WordCount, m.HasBreadcrumbs, created, d.terms, d.tfs, d.length, m.Supersedes).Scan(&res.ID)
		if errors.Is(err, pgx.ErrNoRows) {
			// Stored already: by an earlier message of the batch, before,
			// or by another process since the look above (and committed).
			if err := tx.QueryRow(ctx, "SELECT id FROM messages WHERE content_hash = $1 AND channel_id = $2 AND sender_id = $3",
				m.ContentHash, m.Channel.ID, m.Sender).Scan(&res.ID); err != nil {
				return nil, err
			}
			out[i] = res
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, set := range sets {
			if _, err := tx.Exec(ctx, "INSERT INTO vector_outbox (set_id, message_id) VALUES ($1, $2) ON CONFLICT DO NOTHING", set, res.ID); err != nil {
				return nil, err
			}
		}
		res.Created = true
		out[i] = res
		a.n++
		c := chanTot[m.Channel.ID]
		if c == nil {
			c = &channelTotals{}
			chanTot[m.Channel.ID] = c
		}
		c.n++
		c.last = max(c.last, created)
		docsAdded++
		tokensAdded += int64(d.length)
	}
	for _, id := range sortedKeys(chanTot) {
		c := chanTot[id]
		if _, err := tx.Exec(ctx, "UPDATE channels SET message_count = message_count + $1, last_message_at = greatest(last_message_at, $2) WHERE id = $3",
			c.n, c.last, id); err != nil {
			return nil, err
		}
	}
	keys := make([]agentKey, 0, len(agents))
	for k := range agents {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b agentKey) int {
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		return strings.Compare(a.project, b.project)
	})
	for _, k := range keys {
		a := agents[k]
		if _, err := tx.Exec(ctx, `INSERT INTO agents (name, project_id, message_count, created_at, last_active)
			VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (name, project_id) DO UPDATE SET created_at = least(agents.created_at, excluded.created_at),
				last_active = greatest(agents.last_active, excluded.last_active), message_count = agents.message_count + excluded.message_count`,
			k.name, k.project, a.n, a.first, a.last); err != nil {
			return nil, err
		}
	}
	if docsAdded > 0 {
		if _, err := tx.Exec(ctx, "UPDATE keyword_stats SET docs = docs + $1, tokens = tokens + $2 WHERE shard = $3",
			docsAdded, tokensAdded, rand.IntN(16)); err != nil {
			return nil, err
		}
	}
	if err := indexTerms(ctx, tx, docs, out); err != nil {
		return nil, err
	}
	return out, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Delete implements engine.Store.
func (s *Store) Delete(ctx context.Context, id int64) (bool, error) {
	found := false
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var channel, sender, project string
		var docLen int64
		err := tx.QueryRow(ctx, "DELETE FROM messages WHERE id = $1 RETURNING channel_id, sender_id, sender_project_id, doc_len", id).
			Scan(&channel, &sender, &project, &docLen)
		if errors.Is(err, pgx.ErrNoRows) {
			found = false
			return nil
		}
		if err != nil {
			return err
		}
		found = true
		if _, err := tx.Exec(ctx, `UPDATE channels SET message_count = message_count - 1,
			last_message_at = coalesce((SELECT max(created_at) FROM messages WHERE channel_id = $1), 0) WHERE id = $1`, channel); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "UPDATE agents SET message_count = greatest(message_count - 1, 0) WHERE name = $1 AND project_id = $2", sender, project); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, "UPDATE keyword_stats SET docs = docs - 1, tokens = tokens - $1 WHERE shard = $2", docLen, rand.IntN(16))
		return err
	})
	if err != nil {
		return false, fmt.Errorf("postgres: delete message: %w", err)
	}
	return found, nil
}
