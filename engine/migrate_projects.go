package engine

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sort"
)

// ProjectlessChunk is a session chunk message stored without a project,
// with the working directory its session records name: the record's own
// cwd, else its session's ("" when neither names one).
type ProjectlessChunk struct {
	ID        int64
	Sender    string
	CreatedAt int64 // Unix ms
	CWD       string
}

// ProjectMove is what a project backfill writes for one sender and
// project: the project of the messages IDs, whose times span First to
// Last (Unix ms), and their count moved from the sender's project-less
// agent row to its row in the project.
type ProjectMove struct {
	Sender, Project string
	IDs             []int64
	First, Last     int64
}

// PlanSessionProjects groups chunks by sender and the project of their
// working directory (ProjectOf, once per directory), by sender then
// project; chunks without a project are left out. Both stores' migrations
// apply it (engine/migrations/0010_session_projects.sql and PostgreSQL's
// 0009).
func PlanSessionProjects(chunks []ProjectlessChunk) []ProjectMove {
	projects := map[string]string{}
	moves := map[[2]string]*ProjectMove{}
	for _, c := range chunks {
		p, seen := projects[c.CWD]
		if !seen {
			p, _ = ProjectOf(c.CWD)
			projects[c.CWD] = p
		}
		if p == "" {
			continue
		}
		k := [2]string{c.Sender, p}
		mv := moves[k]
		if mv == nil {
			mv = &ProjectMove{Sender: c.Sender, Project: p, First: c.CreatedAt, Last: c.CreatedAt}
			moves[k] = mv
		}
		mv.IDs = append(mv.IDs, c.ID)
		mv.First, mv.Last = min(mv.First, c.CreatedAt), max(mv.Last, c.CreatedAt)
	}
	out := make([]ProjectMove, 0, len(moves))
	for _, mv := range moves {
		out = append(out, *mv)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Sender != out[j].Sender {
			return out[i].Sender < out[j].Sender
		}
		return out[i].Project < out[j].Project
	})
	return out
}

// migrationStep returns the Go part of migration version, run after its
// SQL in the same transaction (what SQL cannot compute), or nil.
func (e *sqliteStore) migrationStep(version int) func(context.Context, *sql.Tx) error {
	if version == 10 {
		return e.sessionProjectsTx
	}
	return nil
}

// projectlessChunksQuery selects the ProjectlessChunk rows: every chunk
// message of an imported session without a project, with the working
// directory of the first of its session records (by time) that names one.
const projectlessChunksQuery = `SELECT m.id, m.sender_id, m.created_at, coalesce((
		SELECT coalesce(nullif(json_extract(sm.envelope, '$.cwd'), ''), s.cwd) AS cwd
		FROM session_chunks ch
		JOIN session_messages sm ON sm.content_hash = ch.content_hash
		JOIN sessions s ON s.id = sm.session_id
		WHERE ch.message_id = m.id
		ORDER BY cwd = '', sm.created_at, sm.session_id, sm.seq LIMIT 1), '')
	FROM messages m WHERE m.channel_id = ? AND m.sender_project_id = ''`

// sessionProjectsTx is format 10's step: it gives the session chunks
// stored without a project the project of their working directory
// (engine/migrations/0010_session_projects.sql).
func (e *sqliteStore) sessionProjectsTx(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, projectlessChunksQuery, SessionChannel)
	if err != nil {
		return err
	}
	var chunks []ProjectlessChunk
	for rows.Next() {
		var c ProjectlessChunk
		if err := rows.Scan(&c.ID, &c.Sender, &c.CreatedAt, &c.CWD); err != nil {
			rows.Close()
			return err
		}
		chunks = append(chunks, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	moves := PlanSessionProjects(chunks)
	if len(moves) == 0 {
		return nil // a store without such chunks reads no clock
	}
	now := e.opts.Now().UnixMilli()
	for _, mv := range moves {
		ids, _ := json.Marshal(mv.IDs)
		if _, err := tx.ExecContext(ctx, "UPDATE messages SET sender_project_id = ? WHERE id IN (SELECT value FROM json_each(?))", mv.Project, string(ids)); err != nil {
			return fmt.Errorf("set the project of %d chunks to %s: %w", len(mv.IDs), mv.Project, err)
		}
		if _, err := tx.ExecContext(ctx, "UPDATE agents SET message_count = max(message_count - ?, 0) WHERE name = ? AND project_id = ''", len(mv.IDs), mv.Sender); err != nil {
			return err
		}
		if err := e.touchAgentTx(ctx, tx, mv.Sender, mv.Project, now, mv.First, mv.Last, len(mv.IDs)); err != nil {
			return err
		}
		// An upsert queued for a message whose vector is stored refreshes
		// the vector's metadata (processRows).
		if _, err := tx.ExecContext(ctx, `INSERT INTO vector_outbox (set_id, message_id)
			SELECT s.id, j.value FROM vector_sets s, json_each(?) j WHERE s.state <> 'retired'
			ON CONFLICT (set_id, message_id) DO NOTHING`, string(ids)); err != nil {
			return err
		}
	}
	return nil
}
