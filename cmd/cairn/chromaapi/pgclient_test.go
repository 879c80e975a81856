package chromaapi_test

import (
	"context"
	"sort"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn/internal/pgtest"
)

// TestClientsOnPostgres runs the JS and Python client scenarios (chromadb
// 3.5.0 and 1.5.9) against a real `cairn serve` whose Chroma collections
// live in PostgreSQL (CAIRN_CHROMA_STORE) and against the real Chroma 1.0.0
// server, and compares every step, with the same declared divergences as
// the embedded store.
func TestClientsOnPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cairn and runs the clients against two servers")
	}
	chroma := chromaURL(t)
	dsn := pgtest.Database(t)
	bin := buildCairnBinary(t)
	t.Setenv("CAIRN_CHROMA_STORE", dsn)
	cairn := startCairnServe(t, bin)

	t.Run("js/3.5.0", func(t *testing.T) {
		want := runScenario(t, chroma, "pg_scenario_js", "3.5.0")
		got := runScenario(t, cairn, "pg_scenario_js", "3.5.0")
		if len(want) < 50 {
			t.Fatalf("scenario produced only %d steps", len(want))
		}
		names := make([]string, 0, len(want))
		for name := range want {
			names = append(names, name)
		}
		sort.Strings(names)
		compareScenario(t, want, got, names, scenarioDivergences, cairn, chroma)
	})
	t.Run("python/1.5.9", func(t *testing.T) {
		client := pyClients(t, chromaPython(t))["1.5.9"]
		want, order := runPyScenario(t, client, chroma, "pg_scenario_py")
		got, _ := runPyScenario(t, client, cairn, "pg_scenario_py")
		if len(want) < 100 {
			t.Fatalf("scenario produced only %d steps", len(want))
		}
		compareScenario(t, want, got, order, pyScenarioDivergences, cairn, chroma)
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
