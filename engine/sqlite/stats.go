package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"github.com/cairn-dev/cairn/engine"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The embedded store's counts: what it holds, by part and on disk, the
// timeline, and the searches of the processes on the data dir.

// Stats counts in SQLite; Bytes are the data dir's files by part (the
// models folder left to the Engine) and the tables' pages (dbstat).
func (s *Store) Stats(ctx context.Context) (engine.BackendStats, error) {
	st := engine.BackendStats{ByChannel: map[string]int64{}, ByType: map[string]int64{}, ByAgent: map[string]int64{}}
	group := func(q string, into map[string]int64) error {
		rows, err := s.r.QueryContext(ctx, q)
		if err != nil {
			return fmt.Errorf("engine: stats: %w", classify(err))
		}
		defer rows.Close()
		for rows.Next() {
			var k string
			var n int64
			if err := rows.Scan(&k, &n); err != nil {
				return classify(err)
			}
			into[k] = n
		}
		return classify(rows.Err())
	}
	if err := group("SELECT channel_id, count(*) FROM messages GROUP BY channel_id", st.ByChannel); err != nil {
		return st, err
	}
	if err := group("SELECT message_type, count(*) FROM messages GROUP BY message_type", st.ByType); err != nil {
		return st, err
	}
	if err := group("SELECT CASE WHEN sender_project_id = '' THEN sender_id ELSE sender_id || '@' || sender_project_id END, count(*) FROM messages GROUP BY 1", st.ByAgent); err != nil {
		return st, err
	}
	row := s.r.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM sessions), (SELECT count(*) FROM session_messages),
		(SELECT count(*) FROM session_contents), (SELECT count(*) FROM session_chunks),
		(SELECT count(*) FROM session_messages WHERE content_hash IS NOT NULL)`)
	var withContent int64
	if err := row.Scan(&st.Sessions.Sessions, &st.Sessions.Records, &st.Sessions.Contents, &st.Sessions.Chunks, &withContent); err != nil {
		return st, fmt.Errorf("engine: stats: %w", classify(err))
	}
	if st.Sessions.Contents > 0 {
		st.Sessions.DedupRatio = float64(withContent) / float64(st.Sessions.Contents)
	}

	fileBytes(s.dir, &st.Bytes)
	if err := s.tableBytes(ctx, &st); err != nil {
		return st, err
	}
	st.Bytes.Total -= st.Bytes.Models
	st.Bytes.Models = 0
	return st, nil
}

// fileBytes adds up the sizes of the files of the data dir dir by part.
func fileBytes(dir string, b *engine.DiskStats) {
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		n := info.Size()
		b.Total += n
		switch {
		case rel == DBFile || rel == DBFile+"-wal":
			b.SQLite += n
		case rel == DBFile+"-shm":
			b.Other += n
		case strings.HasPrefix(rel, "vectors/"):
			b.Vectors += n
		case strings.HasPrefix(rel, "graph/"):
			b.Graph += n
		case strings.HasPrefix(rel, "models/"):
			b.Models += n
		default:
			b.Other += n
		}
		return nil
	})
}

// tableBytes adds the bytes of the messages, FTS5 and session tables and
// their indexes inside the SQLite file (dbstat counts pages of the main
// file); without dbstat it says so in st.Notes.
func (ss *Store) tableBytes(ctx context.Context, st *engine.BackendStats) error {
	// The index names first: one query at a time, so that this also works
	// on a single connection (Options.ReadOnly's fallback).
	idx := map[string]string{}
	irows, err := ss.r.QueryContext(ctx, "SELECT name, tbl_name FROM sqlite_schema WHERE type = 'index'")
	if err == nil {
		for irows.Next() {
			var n, tbl string
			if irows.Scan(&n, &tbl) == nil {
				idx[n] = tbl
			}
		}
		irows.Close()
	}
	rows, err := ss.r.QueryContext(ctx, "SELECT name, sum(pgsize) FROM dbstat GROUP BY name")
	if err != nil {
		st.Notes = append(st.Notes, "per-table sizes unavailable: "+err.Error())
		return nil
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var n int64
		if err := rows.Scan(&name, &n); err != nil {
			return classify(err)
		}
		tbl := name
		if t, ok := idx[name]; ok {
			tbl = t
		} else if strings.HasPrefix(name, "sqlite_autoindex_") {
			tbl = strings.TrimSuffix(strings.TrimPrefix(name, "sqlite_autoindex_"), "_1")
			if i := strings.LastIndexByte(tbl, '_'); i > 0 && strings.HasPrefix(name, "sqlite_autoindex_") {
				tbl = tbl[:i]
			}
		}
		switch {
		case strings.HasPrefix(tbl, "messages_fts"):
			st.Bytes.FTS += n
		case tbl == "messages":
			st.Bytes.Messages += n
		case strings.HasPrefix(tbl, "session"):
			st.Bytes.Sessions += n
		}
	}
	return nil
}

func (s *Store) TimelineCounts(ctx context.Context, start, width, end int64) ([]engine.TimelineCount, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT c.channel_type, (m.created_at - ?) / ?, count(*)
		FROM messages m JOIN channels c ON c.id = m.channel_id
		WHERE m.created_at >= ? AND m.created_at < ? GROUP BY 1, 2`, start, width, start, end)
	if err != nil {
		return nil, fmt.Errorf("engine: timeline: %w", classify(err))
	}
	defer rows.Close()
	var out []engine.TimelineCount
	for rows.Next() {
		var c engine.TimelineCount
		if err := rows.Scan(&c.ChannelType, &c.Bucket, &c.Count); err != nil {
			return nil, fmt.Errorf("engine: timeline: %w", classify(err))
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("engine: timeline: %w", classify(err))
	}
	return out, nil
}

// SearchTotals reads the stored totals and the counts processes that
// wrote nothing left in searchCountsFile.
func (s *Store) SearchTotals(ctx context.Context) (n, us int64, err error) {
	if err := s.r.QueryRowContext(ctx, "SELECT searches, total_us FROM search_stats WHERE id = 1").Scan(&n, &us); err != nil {
		return 0, 0, classify(err)
	}
	fn, fus := readSearchCounts(filepath.Join(s.dir, searchCountsFile))
	return n + fn, us + fus, nil
}

// AddSearches keeps the counts for the next write transaction of this
// process or its Close (addSearchesTx, flushSearchesAtClose): counting
// makes no commit of its own.
func (s *Store) AddSearches(ctx context.Context, n, us int64) error {
	s.host.Searches.Add(n, us)
	return nil
}

// addSearchStats adds a number of searches and their total time to the
// stored totals.
const addSearchStats = "UPDATE search_stats SET searches = searches + ?, total_us = total_us + ? WHERE id = 1"

// addSearchesTx moves the pending counts into the search_stats row inside
// tx, a message write transaction the caller commits anyway. Call the
// returned func with whether tx committed: otherwise the counts are put
// back. A failure to count never fails the write: the counts wait for the
// next one.
func (s *Store) addSearchesTx(ctx context.Context, tx *sql.Tx) func(committed bool) {
	c := s.host.Searches
	n, us := c.Take()
	restore := func(committed bool) {
		if committed {
			c.SetWrote()
			return
		}
		c.Add(n, us)
	}
	if n == 0 {
		return restore
	}
	if _, err := tx.ExecContext(ctx, addSearchStats, n, us); err != nil {
		s.opts.Logger.Warn("search stats not saved with this write", "err", err)
		c.Add(n, us)
		return func(committed bool) {
			if committed {
				c.SetWrote()
			}
		}
	}
	return restore
}

// searchCountsFile holds the search counts of processes that wrote
// nothing (a one-shot `cairn search`): each appends one "searches
// microseconds" line at Close, without fsync (they are statistics, and a
// read makes no durable write), and the next process that writes to the
// database adds them to the search_stats row and removes the file.
const searchCountsFile = "search-counts"

// flushSearchesAtClose adds what is pending to the search_stats row, with
// the counts other processes left in searchCountsFile, when this process
// wrote to the database; otherwise it appends them to searchCountsFile.
// On failure the counts are lost with the process.
func (st *Store) flushSearchesAtClose(ctx context.Context) {
	c := st.host.Searches
	if !c.Wrote() {
		if n, us := c.Take(); n > 0 && !st.immutable {
			appendSearchCounts(filepath.Join(st.dir, searchCountsFile), n, us)
		}
		return
	}
	n, us := c.Take()
	// The file is renamed first, so that counts appended meanwhile go to
	// a new file for the next writer.
	path := filepath.Join(st.dir, searchCountsFile)
	taken := fmt.Sprintf("%s.%d-%d", path, os.Getpid(), time.Now().UnixNano())
	if os.Rename(path, taken) == nil {
		fn, fus := readSearchCounts(taken)
		n, us = n+fn, us+fus
	} else {
		taken = ""
	}
	if n == 0 {
		return
	}
	if _, err := st.w.ExecContext(ctx, addSearchStats, n, us); err != nil {
		st.opts.Logger.Warn("search stats not saved", "err", err)
		return
	}
	if taken != "" {
		os.Remove(taken)
	}
}

func appendSearchCounts(path string, n, us int64) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	// One write: appends of processes closing at once do not interleave.
	f.WriteString(strconv.FormatInt(n, 10) + " " + strconv.FormatInt(us, 10) + "\n")
	f.Close()
}

// readSearchCounts sums the lines of a searchCountsFile; a damaged line
// is skipped.
func readSearchCounts(path string) (n, us int64) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		a, b, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		ln, err1 := strconv.ParseInt(a, 10, 64)
		lus, err2 := strconv.ParseInt(b, 10, 64)
		if err1 == nil && err2 == nil && ln > 0 && lus >= 0 {
			n, us = n+ln, us+lus
		}
	}
	return n, us
}
