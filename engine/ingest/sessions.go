package ingest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/chunk"
	"github.com/cairn-dev/cairn/engine/claudecode"
	"github.com/cairn-dev/cairn/engine/redact"
)

// DefaultHumanSender is the sender of a person's turns in imported
// sessions when ImportSessionsOptions.HumanSender is "".
const DefaultHumanSender = "human"

// headBytes is how much of a file's head is hashed to notice a replaced file.
const headBytes = 64 << 10

// ImportSessionsOptions configure ImportSessions. The zero value imports nothing
// (Root is required).
type ImportSessionsOptions struct {
	// Root is the Claude Code projects folder (claudecode.DefaultRoot), or a
	// single .jsonl file.
	Root string
	// Exclude lists globs of sessions never stored (claudecode.Excluded);
	// a record whose sessionId matches one is skipped too.
	Exclude []string
	// Redactor redacts every string of every record before it is stored;
	// nil stores records as they are.
	Redactor *redact.Redactor
	// MaxLineBytes bounds a line (claudecode.DefaultMaxLineBytes if 0).
	MaxLineBytes int
	// HumanSender is the sender of the turns a person typed
	// (DefaultHumanSender if ""); an agent name.
	HumanSender string
	// Chunk bounds the searchable chunks (chunk.DefaultMaxTokens tokens
	// with chunk.DefaultOverlap overlap if zero).
	Chunk chunk.Options
	// Progress, when set, is called after every file with the bytes and
	// files done so far and the totals.
	Progress func(p engine.Progress)
}

// FileReport says what happened to one file.
type FileReport struct {
	Path       string                    `json:"path"`
	Sessions   []string                  `json:"sessions,omitempty"`
	Added      int                       `json:"added"`     // records stored
	Known      int                       `json:"known"`     // records already stored (idempotent re-import)
	Excluded   int                       `json:"excluded"`  // records of excluded sessions
	Unchanged  bool                      `json:"unchanged"` // nothing new since the last import
	Resumed    bool                      `json:"resumed"`   // read from where the last import stopped
	Skipped    map[claudecode.Reason]int `json:"skipped,omitempty"`
	Samples    []claudecode.Skip         `json:"samples,omitempty"`
	Redactions map[string]int            `json:"redactions,omitempty"`
	Error      string                    `json:"error,omitempty"` // the file was rolled back
}

// ImportSessionsReport sums up an import.
type ImportSessionsReport struct {
	Files          []FileReport   `json:"files"`
	FilesExcluded  int            `json:"files_excluded"`
	FilesFailed    int            `json:"files_failed"`
	Added          int            `json:"added"`
	Known          int            `json:"known"`
	Skipped        int            `json:"skipped"`
	ContentsNew    int            `json:"contents_new"`    // distinct contents stored
	ContentsShared int            `json:"contents_shared"` // records whose content was already stored
	Chunks         int            `json:"chunks"`          // chunk messages created
	Redactions     map[string]int `json:"redactions,omitempty"`
}

// ImportSessions imports Claude Code session files into e below opts.Root (or the
// one file opts.Root names). It is idempotent: records already stored are
// recognised by (session, uuid) and files already read are resumed where
// the last import stopped. Each file is imported in one transaction, so a
// file is either wholly imported or (on error, reported in its FileReport)
// not at all. Lines that cannot be used are skipped and reported per file.
func ImportSessions(ctx context.Context, e *engine.Engine, opts ImportSessionsOptions) (*ImportSessionsReport, error) {
	if opts.Root == "" {
		return nil, invalid("root", "must name the Claude Code projects folder or a .jsonl file")
	}
	if err := claudecode.ValidateGlobs(opts.Exclude); err != nil {
		return nil, invalid("exclude", "%v", err)
	}
	if opts.HumanSender == "" {
		opts.HumanSender = DefaultHumanSender
	}
	if err := engine.CheckAgent("human_sender", opts.HumanSender); err != nil {
		return nil, err
	}
	st, err := os.Stat(opts.Root)
	if err != nil {
		return nil, fmt.Errorf("engine: import: %w", err)
	}
	var files []claudecode.File
	rep := &ImportSessionsReport{}
	if st.IsDir() {
		files, rep.FilesExcluded, err = claudecode.Discover(opts.Root, opts.Exclude)
		if err != nil {
			return nil, err
		}
	} else {
		abs, err := filepath.Abs(opts.Root)
		if err != nil {
			return nil, err
		}
		project := filepath.Base(filepath.Dir(abs))
		// Rel as Discover names it, so that exclude globs over
		// "project/file.jsonl" match a file given alone too.
		f := claudecode.File{Path: abs, Rel: project + "/" + filepath.Base(abs), Project: project, Stem: strings.TrimSuffix(filepath.Base(abs), ".jsonl"), Size: st.Size()}
		if claudecode.Excluded(f, opts.Exclude) {
			rep.FilesExcluded++
		} else {
			files = append(files, f)
		}
	}
	var total, done int64
	for _, f := range files {
		total += f.Size
	}
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		fr, st := importFile(ctx, e, f, opts)
		if fr.Error != "" {
			rep.FilesFailed++
		}
		rep.Files = append(rep.Files, fr)
		rep.Added += fr.Added
		rep.Known += fr.Known
		for _, n := range fr.Skipped {
			rep.Skipped += n
		}
		rep.ContentsNew += st.contentsNew
		rep.ContentsShared += st.contentsShared
		rep.Chunks += st.chunks
		for k, v := range fr.Redactions {
			if rep.Redactions == nil {
				rep.Redactions = map[string]int{}
			}
			rep.Redactions[k] += v
		}
		done += f.Size
		if opts.Progress != nil {
			opts.Progress(engine.Progress{Done: done, Total: total, Item: f.Rel})
		}
		if errors.Is(ctx.Err(), context.Canceled) {
			return rep, ctx.Err()
		}
	}
	return rep, nil
}

type importStats struct{ contentsNew, contentsShared, chunks int }

type sessionState struct {
	seq              int
	first, last      int64
	added            int
	cwd, branch, prj string
	// pending writes the chunks of contents read before the session named
	// a working directory (a summary record opens a file and names none):
	// once one does, with its project; at the file's end, without one.
	pending []func(ctx context.Context, project string) (chunks int, err error)
}

func importFile(ctx context.Context, e *engine.Engine, f claudecode.File, opts ImportSessionsOptions) (FileReport, importStats) {
	fr := FileReport{Path: f.Path}
	fail := func(err error) (FileReport, importStats) {
		fr.Error = err.Error()
		fr.Added, fr.Known, fr.Excluded, fr.Sessions, fr.Redactions = 0, 0, 0, nil, nil
		return fr, importStats{}
	}
	fh, err := os.Open(f.Path)
	if err != nil {
		return fail(err)
	}
	defer fh.Close()
	info, err := fh.Stat()
	if err != nil {
		return fail(err)
	}
	var st importStats
	err = e.Use(func(s engine.Store) error {
		return s.ImportSessions(ctx, func(stx engine.SessionTx, write func(context.Context, engine.StoredMessage) (engine.WriteResult, error)) error {
			fr = FileReport{Path: f.Path}
			var err error
			st, err = importFileTx(ctx, e, stx, write, fh, info.Size(), f, opts, &fr)
			return err
		})
	})
	if err != nil {
		return fail(err)
	}
	return fr, st
}

// importFileTx imports one file through stx, writing chunk messages with
// write; fr is filled as it goes.
func importFileTx(ctx context.Context, e *engine.Engine, stx engine.SessionTx, write func(context.Context, engine.StoredMessage) (engine.WriteResult, error),
	fh *os.File, size int64, f claudecode.File, opts ImportSessionsOptions, fr *FileReport) (importStats, error) {
	start, startLine, err := resumePoint(ctx, stx, fh, f.Path, size)
	if err != nil {
		return importStats{}, err
	}
	fr.Resumed = start > 0
	if start == size && start > 0 {
		fr.Unchanged = true
		return importStats{}, nil
	}
	if _, err := fh.Seek(start, io.SeekStart); err != nil {
		return importStats{}, err
	}
	fi := &fileImport{e: e, stx: stx, write: write, file: f, opts: opts, now: e.Options().Now().UnixMilli(), fr: fr,
		sessions: map[string]*sessionState{}, excluded: map[string]bool{}}
	if err := stx.EnsureChannel(ctx, engine.SessionChannel, "Searchable chunks of imported Claude Code sessions", fi.now); err != nil {
		return importStats{}, err
	}
	rrep, err := claudecode.Read(ctx, fh, claudecode.Options{
		MaxLineBytes:     opts.MaxLineBytes,
		Redactor:         opts.Redactor,
		StartOffset:      start,
		StartLine:        startLine,
		DefaultSessionID: f.SessionID(),
	}, func(rec *claudecode.Record) error { return fi.record(ctx, rec) })
	if err != nil {
		return importStats{}, err
	}
	fr.Skipped, fr.Samples = rrep.Skipped, rrep.Samples
	if rrep.Redactions.Total() > 0 {
		fr.Redactions = rrep.Redactions.Counts
	}
	if err := fi.finish(ctx, fh, rrep, startLine); err != nil {
		return importStats{}, err
	}
	return fi.st, nil
}

// resumePoint returns where the last import of path stopped (offset and
// line) when the file only grew since: the bytes before that offset hash as
// they did. Otherwise the file is read from the start.
func resumePoint(ctx context.Context, stx engine.SessionTx, fh *os.File, path string, size int64) (int64, int, error) {
	prev, found, err := stx.FileState(ctx, path)
	switch {
	case err != nil:
		return 0, 0, err
	case !found || prev.End > size:
		return 0, 0, nil
	}
	h, err := headHash(fh, prev.End)
	if err != nil || h != prev.Head {
		return 0, 0, err
	}
	return prev.End, prev.Lines, nil
}

// fileImport is the state of one file's import, inside its transaction.
type fileImport struct {
	e     *engine.Engine
	stx   engine.SessionTx
	write func(context.Context, engine.StoredMessage) (engine.WriteResult, error)
	file  claudecode.File
	opts  ImportSessionsOptions
	now   int64 // Unix ms
	fr    *FileReport
	st    importStats

	sessions map[string]*sessionState
	order    []string          // session ids in first-seen order
	excluded map[string]bool   // session id -> matches opts.Exclude
	projects map[string]string // working directory -> its project (engine.ProjectOf)
}

// projectOf is ProjectOf(cwd), once per working directory of the file.
func (fi *fileImport) projectOf(cwd string) string {
	p, seen := fi.projects[cwd]
	if !seen {
		p, _ = engine.ProjectOf(cwd)
		if fi.projects == nil {
			fi.projects = map[string]string{}
		}
		fi.projects[cwd] = p
	}
	return p
}

// isExcluded reports whether the session matches an exclude glob.
func (fi *fileImport) isExcluded(session string) bool {
	ex, seen := fi.excluded[session]
	if !seen {
		for _, g := range fi.opts.Exclude {
			if ok, _ := filepath.Match(g, session); ok {
				ex = true
			}
		}
		fi.excluded[session] = ex
	}
	return ex
}

// session returns the state of a session, creating its row on first sight.
func (fi *fileImport) session(ctx context.Context, id string) (*sessionState, error) {
	if ss := fi.sessions[id]; ss != nil {
		return ss, nil
	}
	ss := &sessionState{prj: fi.file.Project}
	var err error
	if ss.seq, err = fi.stx.StartSession(ctx, id, fi.file.Project, fi.now); err != nil {
		return nil, err
	}
	fi.sessions[id] = ss
	fi.order = append(fi.order, id)
	return ss, nil
}

// record stores one record unless its session is excluded or it is
// already stored: its content (once per distinct content, chunked into
// searchable messages) and its envelope.
func (fi *fileImport) record(ctx context.Context, rec *claudecode.Record) error {
	if fi.isExcluded(rec.SessionID) {
		fi.fr.Excluded++
		return nil
	}
	ss, err := fi.session(ctx, rec.SessionID)
	if err != nil {
		return err
	}
	known, err := fi.stx.RecordKnown(ctx, rec.SessionID, rec.Key())
	if err != nil {
		return err
	}
	if known {
		fi.fr.Known++
		return nil
	}
	envelope, content, err := claudecode.SplitContent(rec.JSON)
	if err != nil {
		return err
	}
	var env struct {
		CWD       string `json:"cwd"`
		GitBranch string `json:"gitBranch"`
	}
	_ = json.Unmarshal(envelope, &env) // optional fields
	if ss.cwd == "" {
		ss.cwd = env.CWD
		if err := fi.flushPending(ctx, ss, fi.projectOf(ss.cwd)); err != nil {
			return err
		}
	}
	if ss.branch == "" {
		ss.branch = env.GitBranch
	}
	var hash string
	if content != nil {
		sum := sha256.Sum256(content)
		hash = hex.EncodeToString(sum[:])
		created := rec.Timestamp.UnixMilli()
		if rec.Timestamp.IsZero() {
			created = fi.now
		}
		// The chunks belong to the project the session worked in: the
		// record's own working directory, else the session's first (its
		// chunks wait for it when the session has named none yet).
		cwd := env.CWD
		if cwd == "" {
			cwd = ss.cwd
		}
		src := fi.chunkSourceOf(rec, created)
		isNew, n, err := fi.storeContent(ctx, hash, content, src, fi.projectOf(cwd), cwd == "")
		if err != nil {
			return err
		}
		if isNew && cwd == "" {
			ss.pending = append(ss.pending, func(ctx context.Context, project string) (int, error) {
				return fi.storeChunks(ctx, hash, src, project)
			})
		}
		if isNew {
			fi.st.contentsNew++
			fi.st.chunks += n
		} else {
			fi.st.contentsShared++
		}
	}
	ss.seq++
	var ts int64
	if !rec.Timestamp.IsZero() {
		ts = rec.Timestamp.UnixMilli()
		if ss.first == 0 || ts < ss.first {
			ss.first = ts
		}
		if ts > ss.last {
			ss.last = ts
		}
	}
	if err := fi.stx.PutRecord(ctx, engine.SessionRow{Session: rec.SessionID, Seq: ss.seq, Key: rec.Key(), UUID: rec.UUID, ParentUUID: rec.ParentUUID,
		Type: rec.Type, Role: rec.Role, CreatedAt: ts, IsSidechain: rec.IsSidechain, IsCompact: rec.IsCompact, ContentHash: hash,
		Envelope: string(envelope)}); err != nil {
		return err
	}
	ss.added++
	fi.fr.Added++
	return nil
}

// flushPending writes the chunks ss holds back, with project.
func (fi *fileImport) flushPending(ctx context.Context, ss *sessionState, project string) error {
	for _, write := range ss.pending {
		n, err := write(ctx, project)
		if err != nil {
			return err
		}
		fi.st.chunks += n
	}
	ss.pending = nil
	return nil
}

// finish updates the sessions' counters and time span and records where
// the file's import stopped, so the next import resumes there. Chunks
// still held back belong to a session that named no working directory:
// they are written without a project.
func (fi *fileImport) finish(ctx context.Context, fh *os.File, rrep *claudecode.Report, startLine int) error {
	for _, id := range fi.order {
		ss := fi.sessions[id]
		if err := fi.flushPending(ctx, ss, ""); err != nil {
			return err
		}
		fi.fr.Sessions = append(fi.fr.Sessions, id)
		if err := fi.stx.FinishSession(ctx, engine.SessionUpdate{ID: id, Added: ss.added, First: ss.first, Last: ss.last, Now: fi.now,
			CWD: ss.cwd, GitBranch: ss.branch}); err != nil {
			return err
		}
	}
	head, err := headHash(fh, rrep.EndOffset)
	if err != nil {
		return err
	}
	return fi.stx.PutFileState(ctx, fi.file.Path, engine.SessionFile{End: rrep.EndOffset, Lines: startLine + linesConsumed(rrep), Head: head}, fi.now)
}

// linesConsumed is the number of complete lines a read consumed (a
// truncated last line is not consumed).
func linesConsumed(r *claudecode.Report) int {
	return r.Lines - r.Skipped[claudecode.ReasonTruncated]
}

// headHash hashes the first min(n, headBytes) bytes of f.
func headHash(f *os.File, n int64) (string, error) {
	if n > headBytes {
		n = headBytes
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, n)); err != nil {
		return "", fmt.Errorf("engine: import %s: %w", f.Name(), err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// storeContent stores a record's content once: a new content gets its
// text chunked and each chunk stored as a message of SessionChannel (by
// storeChunks; unless hold, when the caller writes them later).
func (fi *fileImport) storeContent(ctx context.Context, hash string, content []byte, src chunkSource, project string, hold bool) (isNew bool, chunks int, err error) {
	if isNew, err = fi.stx.PutContent(ctx, hash, string(content), src.text, chunk.Tokens(src.text)); err != nil || !isNew || hold {
		return isNew, 0, err
	}
	chunks, err = fi.storeChunks(ctx, hash, src, project)
	return true, chunks, err
}

// chunkText is a record's text as it is stored and chunked.
func chunkText(text string) string { return strings.ReplaceAll(text, "\x00", "\uFFFD") }

// chunkSource is what the chunk messages of a record's content are made
// of (copied out of the record, which the reader reuses).
type chunkSource struct {
	text, sender, role, model string
	created                   int64 // Unix ms
}

func (fi *fileImport) chunkSourceOf(rec *claudecode.Record, created int64) chunkSource {
	src := chunkSource{text: chunkText(rec.Text()), sender: engine.SessionAgent, role: rec.Role, model: rec.Model, created: created}
	if rec.Human() {
		src.sender = fi.opts.HumanSender
	}
	return src
}

// storeChunks stores the chunks of a new content's text as messages of
// SessionChannel in project.
func (fi *fileImport) storeChunks(ctx context.Context, hash string, src chunkSource, project string) (chunks int, err error) {
	text := src.text
	cs := chunk.Split(text, fi.opts.Chunk)
	for i, c := range cs {
		if c.Tokens == 0 {
			continue
		}
		md := map[string]any{"source": "claude-code", "content_hash": hash, "chunk": i, "chunks": len(cs), "tokens": c.Tokens, "role": src.role}
		if src.model != "" {
			md["model"] = src.model
		}
		mdJSON, _ := json.Marshal(md)
		m, err := fi.e.ValidateMessage(engine.NewMessage{
			Channel:   engine.SessionChannel,
			Sender:    src.sender,
			Project:   project,
			Content:   text[c.Start:c.End],
			Metadata:  mdJSON,
			Type:      engine.TypeSessionChunk,
			CreatedAt: time.UnixMilli(src.created),
		})
		if err != nil {
			return 0, fmt.Errorf("engine: chunk %d of content %s: %w", i, hash[:12], err)
		}
		wr, err := fi.write(ctx, m)
		if err != nil {
			return 0, err
		}
		if err := fi.stx.PutChunk(ctx, hash, i, c.Start, c.End, c.Tokens, wr.ID); err != nil {
			return 0, err
		}
		if wr.Created {
			chunks++
		}
	}
	return chunks, nil
}

// GetSession returns the session with id, or engine.ErrNotFound.
func GetSession(ctx context.Context, e *engine.Engine, id string) (engine.Session, error) {
	id, err := engine.ParseSessionID(id)
	if err != nil {
		return engine.Session{}, err
	}
	ss, err := sessions(ctx, e, id)
	if err != nil {
		return engine.Session{}, err
	}
	if len(ss) == 0 {
		return engine.Session{}, fmt.Errorf("session %s: %w", id, engine.ErrNotFound)
	}
	return ss[0], nil
}

// ListSessions returns every imported session, most recent first.
func ListSessions(ctx context.Context, e *engine.Engine) ([]engine.Session, error) {
	return sessions(ctx, e, "")
}

// sessions reads the session id ("" for every one) from e's store.
func sessions(ctx context.Context, e *engine.Engine, id string) ([]engine.Session, error) {
	var out []engine.Session
	err := e.Use(func(s engine.Store) error {
		var err error
		out, err = s.Sessions(ctx, id)
		return err
	})
	if out == nil {
		out = []engine.Session{}
	}
	return out, err
}

// SessionRecords loads the records of a session in order (the context an
// agent resumes from). engine.ErrNotFound if the session does not exist.
func SessionRecords(ctx context.Context, e *engine.Engine, id string) ([]engine.SessionRecord, error) {
	id, err := engine.ParseSessionID(id)
	if err != nil {
		return nil, err
	}
	var recs []engine.SessionRecord
	err = e.Use(func(s engine.Store) error {
		var ok bool
		recs, ok, err = s.SessionRecords(ctx, id)
		if err == nil && !ok {
			err = fmt.Errorf("session %s: %w", id, engine.ErrNotFound)
		}
		return err
	})
	return recs, err
}

// SessionRefs returns the session records that contain the chunk stored
// as message id (a search hit in engine.SessionChannel), oldest session
// first. It is empty for messages that are not session chunks.
func SessionRefs(ctx context.Context, e *engine.Engine, messageID int64) ([]engine.SessionRef, error) {
	var out []engine.SessionRef
	err := e.Use(func(s engine.Store) error {
		var err error
		out, err = s.SessionRefs(ctx, messageID)
		return err
	})
	if out == nil {
		out = []engine.SessionRef{}
	}
	return out, err
}

// WriteSessionJSONL writes a session as Claude Code JSONL: one canonical
// record per line, in order. Importing that output into an empty store and
// exporting again gives the same bytes.
func WriteSessionJSONL(ctx context.Context, e *engine.Engine, id string, w io.Writer) error {
	recs, err := SessionRecords(ctx, e, id)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	for _, r := range recs {
		b, err := r.JSON()
		if err != nil {
			return fmt.Errorf("%w: session %s record %d: %w", engine.ErrCorrupt, id, r.Seq, err)
		}
		buf.Write(b)
		buf.WriteByte('\n')
		if buf.Len() > 1<<20 {
			if _, err := w.Write(buf.Bytes()); err != nil {
				return err
			}
			buf.Reset()
		}
	}
	_, err = w.Write(buf.Bytes())
	return err
}
