package chromaapi_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn/internal/pgtest"
	"github.com/cairn-dev/cairn/internal/racedetector"
)

// TestClientsOnPostgres runs the JS and Python client scenarios (chromadb
// 3.5.0 and 1.5.9) against a real `cairn serve` whose Chroma collections
// live in PostgreSQL (the store CAIRN_STORE names) and against the real Chroma 1.0.0
// server, and compares every step, with the same declared divergences as
// the embedded store.
func TestClientsOnPostgres(t *testing.T) {
	if racedetector.Enabled {
		t.Skip("builds cairn and runs the clients against two servers: left to the run without -race")
	}
	chroma := chromaURL(t)
	dsn := pgtest.Database(t)
	bin := buildCairnBinary(t)
	t.Setenv("CAIRN_STORE", dsn)
	cairn := startCairnServe(t, bin)

	t.Run("js/3.5.0", func(t *testing.T) { jsScenario(t, chroma, cairn, "pg_scenario_js", "3.5.0") })
	t.Run("python/1.5.9", func(t *testing.T) {
		comparePyScenario(t, pyClients(t, chromaPython(t))["1.5.9"], chroma, cairn, "pg_scenario_py")
	})
	// The scenarios' records went to PostgreSQL (they delete their
	// databases at the end; the record sequence remembers): the server did
	// not fall back to its data directory.
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(context.Background(), `SELECT last_value FROM chroma_record_seq`).Scan(&n); err != nil || n < 10 {
		t.Errorf("records written to PostgreSQL: %d (%v), want some", n, err)
	}
}
