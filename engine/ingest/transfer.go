package ingest

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/cairn-dev/cairn/engine"
)

// transferBatch is how many session contents, sessions or marks
// TransferTo reads and writes at once.
const transferBatch = 200

// TransferReport says what TransferTo did.
type TransferReport struct {
	CopyReport
	// ChannelsCreated counts channels created with their names and
	// descriptions (CopyChannelsTo).
	ChannelsCreated int `json:"channels_created"`
	// ContentsCopied, SessionsCopied: stored now (the others were there).
	ContentsCopied int `json:"session_contents_copied"`
	SessionsCopied int `json:"sessions_copied"`
	// Source and target parts at the end, after the copy was verified.
	SourceParts engine.PartCounts `json:"source_parts"`
	TargetParts engine.PartCounts `json:"target_parts"`
}

// TransferTo copies the whole store e into dst, between a data dir and a
// Store either way: channels with their names and descriptions, every
// message (CopyMessagesTo), then, with message ids translated to dst's,
// imported sessions (contents with their chunks, sessions with their
// records, where each file's import stopped, so that importing the same
// files again into dst finds them), agents (their times), read cursors and
// breadcrumb marks; then it verifies the copy part by part. Vector sets
// are not copied: dst's processes embed the messages with their own model.
// Every step is idempotent and each write is one transaction, so a copy
// stopped at any point (even by SIGKILL) finishes by running again, and
// nothing is stored twice.
//
// A read cursor is translated to the dst id of the newest source message
// it covers: exact while dst's ids follow the source's order (a copy into
// an empty store or a store only migrate writes to); otherwise it is kept
// below every message it did not cover, so that nothing unread becomes
// read.
func TransferTo(ctx context.Context, e, dst *engine.Engine, progress func(engine.Progress)) (TransferReport, error) {
	var rep TransferReport
	var err error
	if rep.ChannelsCreated, err = CopyChannelsTo(ctx, e, dst); err != nil {
		return rep, err
	}
	ids := idMap{}
	if rep.CopyReport, err = copyMessages(ctx, e, dst, progress, ids.add); err != nil {
		return rep, err
	}
	if rep.SourceParts, err = partCounts(ctx, e); err != nil {
		return rep, err
	}
	ids.seal()
	t := transfer{src: e, dst: dst, ids: ids, progress: progress, parts: rep.SourceParts}
	steps := []func(context.Context, *TransferReport) error{t.contents, t.sessions, t.files, t.agents, t.cursors, t.marks}
	for _, step := range steps {
		if err := step(ctx, &rep); err != nil {
			return rep, err
		}
	}
	if rep.TargetParts, err = partCounts(ctx, dst); err != nil {
		return rep, err
	}
	return rep, t.verify(ctx, rep.SourceParts, rep.TargetParts)
}

// idMap translates source message ids to the target's.
type idMap struct {
	to map[int64]int64
	// src holds the source ids in order; sufMin[i] is the smallest target
	// id of src[i:].
	src, sufMin []int64
}

func (m *idMap) add(from, to int64) {
	if m.to == nil {
		m.to = map[int64]int64{}
	}
	m.to[from] = to
}

// seal readies cursor translation once every id is added.
func (m *idMap) seal() {
	m.src = make([]int64, 0, len(m.to))
	for id := range m.to {
		m.src = append(m.src, id)
	}
	slices.Sort(m.src)
	m.sufMin = make([]int64, len(m.src)+1)
	m.sufMin[len(m.src)] = 1<<63 - 1
	for i := len(m.src) - 1; i >= 0; i-- {
		m.sufMin[i] = min(m.to[m.src[i]], m.sufMin[i+1])
	}
}

// cursor translates a cursor's last read id: the largest target id of a
// message it covers, but below every message it does not.
func (m *idMap) cursor(last int64) int64 {
	i := sort.Search(len(m.src), func(i int) bool { return m.src[i] > last })
	var t int64
	for _, id := range m.src[:i] {
		t = max(t, m.to[id])
	}
	if m.sufMin[i]-1 < t {
		t = m.sufMin[i] - 1
	}
	return max(t, 0)
}

// message translates a message id; an id the copy did not see is
// corruption of the source (its part names a message it does not hold).
func (m *idMap) message(id int64, part string) (int64, error) {
	to, ok := m.to[id]
	if !ok {
		return 0, fmt.Errorf("%w: %s names message %d, which the source does not hold", engine.ErrCorrupt, part, id)
	}
	return to, nil
}

// transfer is one TransferTo's state.
type transfer struct {
	src, dst *engine.Engine
	ids      idMap
	progress func(engine.Progress)
	parts    engine.PartCounts
}

func (t *transfer) report(done, total int64, item string) {
	if t.progress != nil {
		t.progress(engine.Progress{Done: done, Total: total, Item: item})
	}
}

// onDst and onSrc run fn on the target's or the source's Store under its
// close guard.
func onDst[R any](t *transfer, fn func(engine.Store) (R, error)) (R, error) {
	return use(t.dst, fn)
}

func onSrc[R any](t *transfer, fn func(engine.Store) (R, error)) (R, error) {
	return use(t.src, fn)
}

func (t *transfer) contents(ctx context.Context, rep *TransferReport) error {
	after, done := "", int64(0)
	for {
		cs, err := onSrc(t, func(s engine.Store) ([]engine.ContentRow, error) {
			return s.SessionContentsAfter(ctx, after, transferBatch)
		})
		if err != nil || len(cs) == 0 {
			return err
		}
		for i := range cs {
			for j, ch := range cs[i].Chunks {
				if ch.MessageID == 0 {
					continue
				}
				if cs[i].Chunks[j].MessageID, err = t.ids.message(ch.MessageID, "a chunk of session content "+cs[i].Hash); err != nil {
					return err
				}
			}
		}
		n, err := onDst(t, func(d engine.Store) (int, error) { return d.PutSessionContents(ctx, cs) })
		if err != nil {
			return err
		}
		rep.ContentsCopied += n
		after, done = cs[len(cs)-1].Hash, done+int64(len(cs))
		t.report(done, t.parts.Contents, "session contents")
	}
}

func (t *transfer) sessions(ctx context.Context, rep *TransferReport) error {
	after, done := "", int64(0)
	for {
		ss, err := onSrc(t, func(s engine.Store) ([]engine.SessionArchive, error) {
			return s.SessionsAfter(ctx, after, transferBatch)
		})
		if err != nil || len(ss) == 0 {
			return err
		}
		for _, s := range ss {
			put, err := onDst(t, func(d engine.Store) (bool, error) { return d.PutSession(ctx, s) })
			if err != nil {
				return err
			}
			if put {
				rep.SessionsCopied++
			}
			done++
			t.report(done, t.parts.Sessions, "sessions")
		}
		after = ss[len(ss)-1].ID
	}
}

func (t *transfer) files(ctx context.Context, _ *TransferReport) error {
	fs, err := onSrc(t, func(s engine.Store) ([]engine.FileRow, error) { return s.SessionFiles(ctx) })
	if err != nil || len(fs) == 0 {
		return err
	}
	_, err = onDst(t, func(d engine.Store) (struct{}, error) { return struct{}{}, d.PutSessionFiles(ctx, fs) })
	return err
}

func (t *transfer) agents(ctx context.Context, _ *TransferReport) error {
	as, err := t.src.ListAgents(ctx, "")
	if err != nil || len(as) == 0 {
		return err
	}
	_, err = onDst(t, func(d engine.Store) (struct{}, error) { return struct{}{}, d.PutAgents(ctx, as) })
	return err
}

func (t *transfer) cursors(ctx context.Context, _ *TransferReport) error {
	cs, err := t.translatedCursors(ctx)
	if err != nil || len(cs) == 0 {
		return err
	}
	_, err = onDst(t, func(d engine.Store) (struct{}, error) { return struct{}{}, d.PutReadCursors(ctx, cs) })
	t.report(int64(len(cs)), int64(len(cs)), "read cursors")
	return err
}

// translatedCursors are the source's cursors with target ids.
func (t *transfer) translatedCursors(ctx context.Context) ([]engine.CursorRow, error) {
	cs, err := onSrc(t, func(s engine.Store) ([]engine.CursorRow, error) { return s.ReadCursors(ctx) })
	for i := range cs {
		cs[i].LastReadID = t.ids.cursor(cs[i].LastReadID)
	}
	return cs, err
}

func (t *transfer) marks(ctx context.Context, _ *TransferReport) error {
	return t.eachMarks(ctx, func(ms []engine.MarkedRow) error {
		_, err := onDst(t, func(d engine.Store) (struct{}, error) { return struct{}{}, d.PutMarkRows(ctx, ms) })
		return err
	})
}

// eachMarks calls fn with the source's marks in batches, ids translated.
func (t *transfer) eachMarks(ctx context.Context, fn func([]engine.MarkedRow) error) error {
	var after, done int64
	for {
		ms, err := onSrc(t, func(s engine.Store) ([]engine.MarkedRow, error) { return s.MarksAfter(ctx, after, transferBatch*5) })
		if err != nil || len(ms) == 0 {
			return err
		}
		after = ms[len(ms)-1].MessageID
		for i := range ms {
			if ms[i].MessageID, err = t.ids.message(ms[i].MessageID, "a breadcrumb mark"); err != nil {
				return err
			}
		}
		if err := fn(ms); err != nil {
			return err
		}
		done += int64(len(ms))
		t.report(done, t.parts.Marks, "breadcrumb marks")
	}
}

// verify compares what the target holds with the source, part by part:
// counts, then every session (row and records), cursor and mark.
func (t *transfer) verify(ctx context.Context, sp, tp engine.PartCounts) error {
	var problems []string
	for _, c := range []struct {
		part     string
		src, dst int64
	}{{"sessions", sp.Sessions, tp.Sessions}, {"session records", sp.Records, tp.Records}, {"session contents", sp.Contents, tp.Contents},
		{"session chunks", sp.Chunks, tp.Chunks}, {"session files", sp.Files, tp.Files}, {"read cursors", sp.Cursors, tp.Cursors},
		{"breadcrumb marks", sp.Marks, tp.Marks}} {
		if c.dst < c.src {
			problems = append(problems, fmt.Sprintf("the target holds %d %s, the source %d", c.dst, c.part, c.src))
		}
	}
	srcSessions, err := sessionShapes(ctx, t.src)
	if err != nil {
		return err
	}
	dstSessions, err := sessionShapes(ctx, t.dst)
	if err != nil {
		return err
	}
	for id, shape := range srcSessions {
		if dstSessions[id] != shape {
			problems = append(problems, fmt.Sprintf("session %s differs in the target", id))
		}
	}
	cs, err := t.translatedCursors(ctx)
	if err != nil {
		return err
	}
	dcs, err := onDst(t, func(d engine.Store) ([]engine.CursorRow, error) { return d.ReadCursors(ctx) })
	if err != nil {
		return err
	}
	have := map[[2]string]int64{}
	for _, c := range dcs {
		have[[2]string{c.Agent, c.Scope}] = c.LastReadID
	}
	for _, c := range cs {
		if got, ok := have[[2]string{c.Agent, c.Scope}]; !ok || got < c.LastReadID {
			problems = append(problems, fmt.Sprintf("read cursor of %s (%q) is behind in the target", c.Agent, c.Scope))
		}
	}
	dstMarks := map[int64]engine.MarkRow{}
	for after := int64(0); ; {
		ms, err := onDst(t, func(d engine.Store) ([]engine.MarkedRow, error) { return d.MarksAfter(ctx, after, transferBatch*5) })
		if err != nil {
			return err
		}
		if len(ms) == 0 {
			break
		}
		for _, m := range ms {
			dstMarks[m.MessageID] = m.MarkRow
		}
		after = ms[len(ms)-1].MessageID
	}
	err = t.eachMarks(ctx, func(ms []engine.MarkedRow) error {
		for _, m := range ms {
			if dstMarks[m.MessageID] != m.MarkRow {
				problems = append(problems, fmt.Sprintf("breadcrumb marks of message %d differ in the target", m.MessageID))
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(problems) > 0 {
		if len(problems) > 10 {
			problems = append(problems[:10], fmt.Sprintf("and %d more", len(problems)-10))
		}
		return fmt.Errorf("%w: %s", engine.ErrCorrupt, strings.Join(problems, "; "))
	}
	return nil
}

// sessionShape is what verify compares of a session.
type sessionShape struct {
	project           string
	count, records    int
	firstAt, lastAt   int64
	firstKey, lastKey string
}

// sessionShapes reads the shape of every session of e.
func sessionShapes(ctx context.Context, e *engine.Engine) (map[string]sessionShape, error) {
	out := map[string]sessionShape{}
	after := ""
	for {
		ss, err := use(e, func(s engine.Store) ([]engine.SessionArchive, error) {
			return s.SessionsAfter(ctx, after, transferBatch)
		})
		if err != nil || len(ss) == 0 {
			return out, err
		}
		for _, s := range ss {
			sh := sessionShape{project: s.Project, count: s.MessageCount, records: len(s.Records), firstAt: s.FirstAt, lastAt: s.LastAt}
			if n := len(s.Records); n > 0 {
				sh.firstKey, sh.lastKey = s.Records[0].Key, s.Records[n-1].Key
			}
			out[s.ID] = sh
		}
		after = ss[len(ss)-1].ID
	}
}

// partCounts is e's PartCounts.
func partCounts(ctx context.Context, e *engine.Engine) (engine.PartCounts, error) {
	return use(e, func(s engine.Store) (engine.PartCounts, error) { return s.PartCounts(ctx) })
}
