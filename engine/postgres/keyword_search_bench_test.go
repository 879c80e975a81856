package postgres_test

import (
	"context"
	"flag"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn/bench"
	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/postgres"
	"github.com/cairn-dev/cairn/fts"
	"github.com/cairn-dev/cairn/internal/pgtest"
	"github.com/cairn-dev/cairn/vecstore/where"
)

func analyze(ctx context.Context, dsn string) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "VACUUM ANALYZE")
	return err
}

var (
	benchMessages = flag.Int("bench.messages", 20000, "messages of BenchmarkKeyword (dev set documents, repeated)")
	benchData     = flag.String("bench.data", "/work/shared/datasets", "dev sets directory of BenchmarkKeyword")
)

// BenchmarkKeyword times one keyword search (depth 100, the engine's
// candidate depth) from keyword_terms and keyword_postings and from the
// messages' own term arrays, on the same database: the dev sets' documents (cosqa, cranfield) repeated to
// -bench.messages, their queries in turn.
func BenchmarkKeyword(b *testing.B) {
	ctx := context.Background()
	var texts []string
	var queries [][]string
	for _, name := range []string{"cosqa", "cranfield"} {
		s, err := bench.LoadDevSet(*benchData, name)
		if err != nil {
			b.Skip(err)
		}
		for _, d := range s.Docs {
			texts = append(texts, bench.DocContent(d))
		}
		for _, q := range s.Queries {
			if terms, _ := fts.ParseQuery(q.Text).Stems(); len(terms) > 0 {
				queries = append(queries, terms)
			}
		}
	}
	dsn := pgtest.Database(b)
	st, err := postgres.Open(ctx, dsn, postgres.Options{})
	if err != nil {
		b.Fatal(err)
	}
	e, err := engine.OpenBackend(ctx, st, postgres.Kind, "", engine.Options{NoVectorWorker: true})
	if err != nil {
		st.Close()
		b.Fatal(err)
	}
	defer e.Close()
	for i := 0; i < *benchMessages; i += 500 {
		var in []engine.NewMessage
		for j := i; j < min(i+500, *benchMessages); j++ {
			in = append(in, engine.NewMessage{Channel: fmt.Sprintf("c-%02d", j%100), Sender: "s",
				Content: fmt.Sprintf("%s (copy %d)", texts[j%len(texts)], j/len(texts))})
		}
		if _, err := e.StoreMessages(ctx, in); err != nil {
			b.Fatal(err)
		}
	}
	// As autovacuum would have by then: the planner needs statistics.
	if err := analyze(ctx, dsn); err != nil {
		b.Fatal(err)
	}
	oneChannel := &where.Expr{Op: where.OpEq, Key: "channel_id", Value: where.String("c-07")}
	halfChannels := &where.Expr{Op: where.OpIn, Key: "channel_id"}
	for c := range 50 {
		halfChannels.Values = append(halfChannels.Values, where.String(fmt.Sprintf("c-%02d", c)))
	}
	for _, filter := range []struct {
		name string
		f    *where.Expr
	}{{"all", nil}, {"1%", oneChannel}, {"50%", halfChannels}} {
		for _, c := range []struct {
			name    string
			keyword func(context.Context, []string, *where.Expr, int) ([]engine.ScoredID, error)
		}{{"postings", st.KeywordTerms}, {"messages", st.KeywordFromMessages}} {
			b.Run(fmt.Sprintf("n=%d/filter=%s/%s", *benchMessages, filter.name, c.name), func(b *testing.B) {
				for i := 0; b.Loop(); i++ {
					if _, err := c.keyword(ctx, queries[i%len(queries)], filter.f, 100); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
