package main

import (
	"context"
	"fmt"
	"io"
	"sort"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
)

func statsCommand() *command {
	return &command{
		name:     "stats",
		summary:  "counts per channel, type and agent, sessions, and bytes on disk per part",
		usage:    "[--json]",
		examples: []string{`cairn stats`, `cairn stats --json`},
		readOnly: true,
		run:      runStats,
	}
}

func runStats(ctx context.Context, e *env, c *command, args []string) error {
	fs := newFlagSet(e, c)
	pos, err := parse(e, c, fs, args)
	if err != nil {
		return err
	}
	if err := noArgs(c, pos); err != nil {
		return err
	}
	return e.withEngine(ctx, func(eng *engine.Engine) error {
		st, err := ops.StoreStats(ctx, eng)
		if err != nil {
			return err
		}
		if e.json {
			return e.printJSON(st)
		}
		w := e.stdout
		fmt.Fprintf(w, "messages: %d\n", st.Messages)
		printCounts(w, "by channel", st.ByChannel)
		printCounts(w, "by type", st.ByType)
		printCounts(w, "by agent", st.ByAgent)
		s := st.Sessions
		fmt.Fprintf(w, "sessions: %d, records %d, distinct contents %d (%.2f records per content), chunks %d\n", s.Sessions, s.Records, s.Contents, s.DedupRatio, s.Chunks)
		b := st.Bytes
		fmt.Fprintf(w, "bytes on disk: total %d\n  sqlite %d (messages %d, fts %d, sessions %d)\n  vectors %d (%.0f per message, %.2fx the messages table)\n  graph %d\n  models %d\n  other %d\n",
			b.Total, b.SQLite, b.Messages, b.FTS, b.Sessions, b.Vectors, b.VectorsPerMessage, b.VectorsToMessages, b.Graph, b.Models, b.Other)
		fmt.Fprintf(w, "searches: %d, average %.2f ms\n", st.Search.Searches, st.Search.AvgMs)
		if v := st.Vectors; v.Set == 0 {
			fmt.Fprintf(w, "vectors: none yet (%d messages; the first command with a model queues them, 'cairn rebuild --vectors' embeds them)\n", v.Messages)
		} else {
			fmt.Fprintf(w, "vectors: %s, %d of %d messages queued for embedding\n", v.Model, v.Queued, v.Messages)
		}
		if em := st.Embedder; em != nil {
			fmt.Fprintf(w, "embedding cache: %d hits, %d misses (hit rate %.1f%%)\n", em.CacheHits, em.CacheMisses, 100*em.HitRate)
		}
		for _, n := range st.Notes {
			fmt.Fprintf(w, "note: %s\n", n)
		}
		return nil
	})
}

func printCounts(w io.Writer, title string, m map[string]int64) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	fmt.Fprintf(w, "%s:\n", title)
	for _, k := range keys {
		fmt.Fprintf(w, "  %-40s %d\n", k, m[k])
	}
}
