package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn/engine"
)

// migrationStep returns the Go part of migration version, run after its
// SQL in the same transaction (what SQL cannot compute), or nil.
func migrationStep(version int) func(context.Context, pgx.Tx) error {
	if version == 9 {
		return sessionProjects
	}
	return nil
}

// projectlessChunksQuery selects the engine.ProjectlessChunk rows: every
// chunk message of an imported session without a project, with the
// working directory of the first of its session records (by time) that
// names one.
const projectlessChunksQuery = `SELECT m.id, m.sender_id, m.created_at, coalesce((
		SELECT coalesce(nullif(sm.envelope::json ->> 'cwd', ''), s.cwd)
		FROM session_chunks ch
		JOIN session_messages sm ON sm.content_hash = ch.content_hash
		JOIN sessions s ON s.id = sm.session_id
		WHERE ch.message_id = m.id
		ORDER BY coalesce(nullif(sm.envelope::json ->> 'cwd', ''), s.cwd) = '', sm.created_at, sm.session_id, sm.seq LIMIT 1), '')
	FROM messages m WHERE m.channel_id = $1 AND m.sender_project_id = ''`

// sessionProjects is format 9's step: it gives the session chunks stored
// without a project the project of their working directory
// (migrations/0009_session_projects.sql).
func sessionProjects(ctx context.Context, tx pgx.Tx) error {
	rows, err := tx.Query(ctx, projectlessChunksQuery, engine.SessionChannel)
	if err != nil {
		return err
	}
	chunks, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (engine.ProjectlessChunk, error) {
		var c engine.ProjectlessChunk
		err := r.Scan(&c.ID, &c.Sender, &c.CreatedAt, &c.CWD)
		return c, err
	})
	if err != nil {
		return err
	}
	now := time.Now().UnixMilli()
	for _, mv := range engine.PlanSessionProjects(chunks) {
		if _, err := tx.Exec(ctx, "UPDATE messages SET sender_project_id = $1 WHERE id = ANY($2)", mv.Project, mv.IDs); err != nil {
			return fmt.Errorf("set the project of %d chunks to %s: %w", len(mv.IDs), mv.Project, err)
		}
		if _, err := tx.Exec(ctx, "UPDATE agents SET message_count = greatest(message_count - $1, 0) WHERE name = $2 AND project_id = ''", len(mv.IDs), mv.Sender); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO agents (name, project_id, message_count, created_at, last_active)
			VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (name, project_id) DO UPDATE SET created_at = least(agents.created_at, excluded.created_at),
				last_active = greatest(agents.last_active, excluded.last_active), message_count = agents.message_count + excluded.message_count`,
			mv.Sender, mv.Project, len(mv.IDs), mv.First, mv.Last); err != nil {
			return err
		}
		for _, name := range engine.ProjectChannelNames() {
			if _, err := tx.Exec(ctx, `INSERT INTO channels (id, channel_type, name, project_id, created_at)
				VALUES ($1, 'project', $2, $3, $4) ON CONFLICT (id) DO NOTHING`,
				engine.ProjectChannelID(mv.Project, name), name, mv.Project, now); err != nil {
				return err
			}
		}
	}
	return nil
}
