package ingest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/vecstore/where"
)

// ImportMessagesOptions configure ImportMessages. The zero value imports in
// batches of 1,000, creates missing plain channels and imports nothing when
// a line is invalid.
type ImportMessagesOptions struct {
	// BatchSize is the number of messages per transaction, 1 to MaxBatch;
	// 0 means 1,000.
	BatchSize int
	// SkipInvalid imports the valid lines even if some are invalid.
	SkipInvalid bool
	// NoCreateChannels makes a line naming a plain channel that does not
	// exist invalid instead of creating the channel.
	NoCreateChannels bool
	// Progress, when set, is called after each batch with the bytes read.
	Progress func(engine.Progress)
	// MaxLineBytes is the longest line read, in bytes; 0 means
	// DefaultMaxImportLine. A longer line stops the import (nothing is
	// imported) with an error naming it, instead of being buffered whole.
	MaxLineBytes int
}

// DefaultMaxImportLine is the line cap of ImportMessages (16 MiB, as for
// Claude Code transcripts): a message is at most 1 MiB of content and
// 1 MiB of metadata, so a longer line cannot be valid.
const DefaultMaxImportLine = 16 << 20

// ImportMessagesReport is what ImportMessages did.
type ImportMessagesReport struct {
	Lines           int      `json:"lines"` // non-blank lines read
	Imported        int      `json:"imported"`
	AlreadyStored   int      `json:"already_stored"`
	Invalid         int      `json:"invalid"` // lines with at least one error
	ChannelsCreated []string `json:"channels_created,omitempty"`
	// LinksRestored counts the corrections stored with the link to the
	// message they supersede (an export's supersedes_ref); LinksDropped
	// the corrections stored without it, as current messages (listed in
	// Dropped, in line order, with why).
	LinksRestored int `json:"links_restored"`
	LinksDropped  int `json:"links_dropped"`
	// Errors lists every invalid line, in line order.
	Errors  []LineError `json:"-"`
	Dropped []LineError `json:"-"`
}

// LineError is why one line of an import is invalid.
type LineError struct {
	Line int // 1-based
	Err  error
}

func (e LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e LineError) Unwrap() error { return e.Err }

// ImportMessages stores the messages of r, one JSON object per line (the
// fields of NewMessage; blank lines are skipped), idempotently: a message
// already stored counts as AlreadyStored. It reads r twice: first it
// validates every line and writes nothing, then it stores the valid lines in
// batches of whole lines, one transaction each, creating the missing plain
// channels first (unless NoCreateChannels). When a line is invalid and
// SkipInvalid is not set, it imports nothing and returns the report (whose
// Errors list the lines) with an *InvalidError for field "lines". An
// export header of a newer format imports nothing (ErrIncompatibleFormat).
//
// A correction (supersedes_ref) is stored in its own transaction with its
// link, after everything before it: the message it supersedes is looked
// up in this store then, so it must come earlier in r or be stored
// already. When it is absent or superseded already, the correction is
// stored without the link and the line is listed in Dropped; the import
// goes on.
func ImportMessages(ctx context.Context, e *engine.Engine, r io.ReadSeeker, opts ImportMessagesOptions) (*ImportMessagesReport, error) {
	if opts.BatchSize == 0 {
		opts.BatchSize = 1000
	}
	if opts.BatchSize < 1 || opts.BatchSize > engine.MaxBatch {
		return nil, invalid("BatchSize", "must be from 1 to %d, got %d", engine.MaxBatch, opts.BatchSize)
	}
	if opts.MaxLineBytes < 0 {
		return nil, invalid("MaxLineBytes", "must be >= 0, got %d", opts.MaxLineBytes)
	}
	if opts.MaxLineBytes == 0 {
		opts.MaxLineBytes = DefaultMaxImportLine
	}
	rep := &ImportMessagesReport{}
	create, err := checkImport(ctx, e, r, opts, rep)
	if err != nil {
		return nil, err
	}
	if rep.Invalid > 0 && !opts.SkipInvalid {
		return rep, invalid("lines", "%d of %d lines are invalid; nothing was imported", rep.Invalid, rep.Lines)
	}
	for _, ch := range create {
		if _, err := e.CreateChannel(ctx, ch); err != nil && !errors.Is(err, engine.ErrExists) {
			return rep, err
		}
		rep.ChannelsCreated = append(rep.ChannelsCreated, ch.ID)
		if obs := e.Options().Observer; obs != nil {
			obs.Committed(e, []string{ch.ID}) // its description, even without messages
		}
	}
	total, err := r.Seek(0, io.SeekEnd)
	if err != nil {
		return rep, fmt.Errorf("engine: import: %w", err)
	}
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return rep, fmt.Errorf("engine: import: %w", err)
	}
	invalidLine := make(map[int]bool, len(rep.Errors))
	for _, le := range rep.Errors {
		invalidLine[le.Line] = true
	}
	var batch []engine.NewMessage
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		res, err := e.StoreMessages(ctx, batch)
		if err != nil {
			return err
		}
		for _, r := range res {
			if r.Created {
				rep.Imported++
			} else {
				rep.AlreadyStored++
			}
		}
		batch = batch[:0]
		return nil
	}
	err = eachLine(r, opts.MaxLineBytes, func(n int, line []byte, off int64) error {
		if invalidLine[n] {
			return nil
		}
		rec, err := decodeImportLine(line)
		if err != nil {
			return fmt.Errorf("engine: import: line %d: %w (did the input change during the import?)", n, err)
		}
		if rec.channel != nil || rec.header {
			return nil // channels are created before the messages
		}
		if rec.ref != nil {
			if err := flush(); err != nil {
				return err
			}
			if err := importCorrection(ctx, e, n, rec, rep); err != nil {
				return err
			}
			return ctx.Err()
		}
		batch = append(batch, rec.msg)
		if len(batch) < opts.BatchSize {
			return ctx.Err()
		}
		if err := flush(); err != nil {
			return err
		}
		if opts.Progress != nil {
			opts.Progress(engine.Progress{Done: off, Total: total, Item: fmt.Sprintf("line %d", n)})
		}
		return ctx.Err()
	})
	if err == nil {
		err = flush()
	}
	return rep, err
}

// checkImport is ImportMessages' first pass: it counts and validates every
// line into rep and returns the plain channels to create (with the
// description of their channel line, if any).
func checkImport(ctx context.Context, e *engine.Engine, r io.Reader, opts ImportMessagesOptions, rep *ImportMessagesReport) ([]engine.NewChannel, error) {
	plain := map[string][]int{} // plain channel -> its lines
	var order []string
	described := map[string]engine.NewChannel{}
	err := eachLine(r, opts.MaxLineBytes, func(n int, line []byte, _ int64) error {
		rep.Lines++
		id, err := checkImportLine(e, line, described)
		if errors.Is(err, engine.ErrIncompatibleFormat) {
			return fmt.Errorf("line %d: %w", n, err)
		}
		if err != nil {
			rep.Errors = append(rep.Errors, LineError{Line: n, Err: err})
			return nil
		}
		if id != "" {
			if _, ok := plain[id]; !ok {
				order = append(order, id)
			}
			plain[id] = append(plain[id], n)
		}
		return ctx.Err()
	})
	if err != nil {
		return nil, err
	}
	var create []engine.NewChannel
	for _, ch := range order {
		_, err := e.GetChannel(ctx, ch)
		switch {
		case err == nil:
			continue
		case !errors.Is(err, engine.ErrNotFound):
			return nil, err
		case !opts.NoCreateChannels:
			nc, ok := described[ch]
			if !ok {
				nc = engine.NewChannel{ID: ch}
			}
			create = append(create, nc)
			continue
		}
		for _, n := range plain[ch] {
			rep.Errors = append(rep.Errors, LineError{Line: n, Err: fmt.Errorf("channel %q does not exist", ch)})
		}
	}
	slices.SortStableFunc(rep.Errors, func(a, b LineError) int { return a.Line - b.Line })
	rep.Invalid = len(rep.Errors)
	return create, nil
}

// checkImportLine validates one line and returns the plain channel it
// needs ("" for none). A channel line's channel goes into described.
func checkImportLine(e *engine.Engine, line []byte, described map[string]engine.NewChannel) (string, error) {
	rec, err := decodeImportLine(line)
	if err != nil || rec.header {
		return "", err
	}
	if c := rec.channel; c != nil {
		if err := engine.ValidateNewChannel(*c); err != nil {
			return "", err
		}
		if prev, ok := described[c.ID]; ok && prev != *c {
			return "", fmt.Errorf("channel %q is described twice, differently", c.ID)
		}
		described[c.ID] = *c
		return c.ID, nil
	}
	p, err := e.ValidateMessage(rec.msg)
	if err != nil {
		return "", err
	}
	if p.Channel.ChannelType != engine.ChannelPlain { // agent-notes: or project:
		return "", nil
	}
	return p.Channel.ID, nil
}

// importCorrection stores the message of line n, which supersedes
// rec.ref, in a transaction of its own, linked to the message rec.ref
// names in this store when there is one that is current; otherwise
// unlinked, and the line is listed in rep.Dropped.
func importCorrection(ctx context.Context, e *engine.Engine, n int, rec importRecord, rep *ImportMessagesReport) error {
	drop := func(format string, args ...any) {
		rep.LinksDropped++
		rep.Dropped = append(rep.Dropped, LineError{Line: n, Err: fmt.Errorf("supersedes link dropped: "+format, args...)})
	}
	old, found, err := findByRef(ctx, e, *rec.ref)
	if err != nil {
		return err
	}
	m := rec.msg
	switch {
	case !found:
		drop("the message it supersedes (%s by %s at %s) is not in this store; import its channel first", rec.ref.ChannelID, rec.ref.SenderID, rec.ref.CreatedAt)
	case old.SupersededBy != 0:
		by, err := e.GetMessage(ctx, old.SupersededBy)
		if err != nil {
			return err
		}
		if p, err := e.ValidateMessage(m); err != nil || p.ContentHash != by.ContentHash || p.Channel.ID != by.ChannelID || p.Sender != by.SenderID {
			drop("message %d, which it supersedes, is superseded already by message %d", old.ID, old.SupersededBy)
			break
		}
		m.Supersedes = old.ID // this message, stored with its link by an earlier import
	default:
		m.Supersedes = old.ID
	}
	res, err := e.StoreMessages(ctx, []engine.NewMessage{m})
	var inv *engine.InvalidError
	if m.Supersedes != 0 && errors.As(err, &inv) && inv.Field == "supersedes" {
		// Superseded by another writer since it was looked up.
		drop("%s", inv.Rule)
		m.Supersedes = 0
		res, err = e.StoreMessages(ctx, []engine.NewMessage{m})
	}
	if err != nil {
		return err
	}
	r := res[0]
	if r.Created {
		rep.Imported++
		if m.Supersedes != 0 {
			rep.LinksRestored++
		}
		return nil
	}
	rep.AlreadyStored++
	if m.Supersedes == 0 {
		return nil
	}
	// A repeat links nothing: the link is there when an earlier import
	// stored it.
	got, err := e.GetMessage(ctx, r.ID)
	if err != nil {
		return err
	}
	if got.Supersedes != m.Supersedes {
		drop("the message was stored already (id %d) without this link", r.ID)
	}
	return nil
}

// findByRef returns the message ref names: the one of its channel, sender
// and time whose content hash is ref's. Up to MaxLimit messages of one
// sender in one channel at one millisecond are looked at: a write stores at
// most MaxBatch (= MaxLimit) at one time; only an import giving more that
// same created_at could hide the one named (its link is then reported
// dropped, never guessed).
func findByRef(ctx context.Context, e *engine.Engine, ref supersedesRef) (engine.Message, bool, error) {
	t, err := time.Parse(time.RFC3339Nano, ref.CreatedAt)
	if err != nil {
		return engine.Message{}, false, invalid("supersedes_ref", "created_at must be an RFC 3339 time, got %q", ref.CreatedAt)
	}
	w := where.And(where.Eq("channel_id", where.String(ref.ChannelID)), where.Eq("agent_name", where.String(ref.SenderID)),
		where.Eq("timestamp", where.Int(t.UnixMilli())))
	var ms []engine.Message
	if err := e.Use(func(s engine.Store) error {
		ms, err = s.List(ctx, engine.SelectWhere(w), engine.MaxLimit, engine.ListByTime)
		return err
	}); err != nil {
		return engine.Message{}, false, err
	}
	for _, m := range ms {
		if m.ContentHash == ref.ContentHash {
			return m, true, nil
		}
	}
	return engine.Message{}, false, nil
}

// eachLine calls f for every non-blank line of r with its 1-based number and
// the bytes read so far. A line longer than maxLine bytes (its newline not
// counted) is an *InvalidError naming it, found before more than maxLine
// bytes of it are held in memory.
func eachLine(r io.Reader, maxLine int, f func(n int, line []byte, offset int64) error) error {
	br := bufio.NewReaderSize(r, 1<<20)
	var off int64
	for n := 1; ; n++ {
		line, err := readLineCapped(br, maxLine)
		if errors.Is(err, errLineTooLong) {
			return invalid(fmt.Sprintf("line %d", n), "is longer than %d bytes, the longest line an import reads (one message of at most 1 MiB of content and 1 MiB of metadata fits easily)", maxLine)
		}
		off += int64(len(line))
		if len(bytes.TrimSpace(line)) > 0 {
			if ferr := f(n, line, off); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("engine: import: %w", err)
		}
	}
}

var errLineTooLong = errors.New("engine: import: line too long")

// readLineCapped reads one line (with its newline, if any) like
// bufio.Reader.ReadBytes, but returns errLineTooLong as soon as the line
// exceeds max bytes without its newline.
func readLineCapped(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		body := len(line) + len(chunk)
		if len(chunk) > 0 && chunk[len(chunk)-1] == '\n' {
			body--
		}
		if body > max {
			return nil, errLineTooLong
		}
		line = append(line, chunk...)
		if err != bufio.ErrBufferFull {
			return line, err
		}
	}
}

// invalid is an *engine.InvalidError of field.
func invalid(field, format string, args ...any) error {
	return &engine.InvalidError{Field: field, Rule: fmt.Sprintf(format, args...)}
}
