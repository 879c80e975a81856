package pgtest_test

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// The server the project installs answers, has pgvector with iterative
// index scans (0.8 or later), and gives each caller its own database.
func TestDatabaseHasPgvector(t *testing.T) {
	ctx := context.Background()
	a, b := pgtest.Database(t), pgtest.Database(t)
	if a == b {
		t.Fatalf("two callers got the same database %s", a)
	}
	conn, err := pgx.Connect(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var version string
	if err := conn.QueryRow(ctx, "SELECT extversion FROM pg_extension WHERE extname = 'vector'").Scan(&version); err != nil {
		t.Fatal(err)
	}
	if version < "0.8" {
		t.Fatalf("pgvector %s: iterative index scans need 0.8 or later", version)
	}
	if _, err := conn.Exec(ctx, `CREATE TABLE v (id int PRIMARY KEY, e vector(3));
		INSERT INTO v VALUES (1, '[1,0,0]'), (2, '[0,1,0]');
		CREATE INDEX ON v USING hnsw (e vector_cosine_ops);
		SET hnsw.iterative_scan = strict_order`); err != nil {
		t.Fatal(err)
	}
	var id int
	if err := conn.QueryRow(ctx, "SELECT id FROM v ORDER BY e <=> '[0.1,1,0]' LIMIT 1").Scan(&id); err != nil {
		t.Fatal(err)
	}
	if id != 2 {
		t.Fatalf("nearest to [0.1,1,0] is %d, want 2", id)
	}
}
