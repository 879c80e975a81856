package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"github.com/cairn-dev/cairn/engine"
)

// migrationStep returns the Go part of migration version, run after its
// SQL in the same transaction (what SQL cannot compute), or nil.
func (e *Store) migrationStep(version int) func(context.Context, *sql.Tx) error {
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
// (migrations/0010_session_projects.sql).
func (e *Store) sessionProjectsTx(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, projectlessChunksQuery, engine.SessionChannel)
	if err != nil {
		return err
	}
	var chunks []engine.ProjectlessChunk
	for rows.Next() {
		var c engine.ProjectlessChunk
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
	moves := engine.PlanSessionProjects(chunks)
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
