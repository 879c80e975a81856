package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/engine"
)

// importLine is one line of `cairn import messages`: the fields of
// engine.NewMessage, with the names of cairn's own JSON output accepted as
// aliases (channel_id, sender_id, sender_project_id), so `cairn search
// --json` and `cairn export` lines import again.
type importLine struct {
	Channel         string             `json:"channel"`
	ChannelID       string             `json:"channel_id"`
	Sender          string             `json:"sender"`
	SenderID        string             `json:"sender_id"`
	Project         string             `json:"project"`
	SenderProjectID string             `json:"sender_project_id"`
	Content         *string            `json:"content"`
	Metadata        json.RawMessage    `json:"metadata"`
	Breadcrumbs     engine.Breadcrumbs `json:"breadcrumbs"`
	Confidence      *float64           `json:"confidence"`
	MessageType     string             `json:"message_type"`
	CreatedAt       string             `json:"created_at"`
}

func (l importLine) message() (engine.NewMessage, error) {
	m := engine.NewMessage{Channel: first(l.Channel, l.ChannelID), Sender: first(l.Sender, l.SenderID), Project: first(l.Project, l.SenderProjectID),
		Metadata: l.Metadata, Breadcrumbs: l.Breadcrumbs, Confidence: l.Confidence, Type: l.MessageType}
	if m.Channel == "" {
		return m, errors.New(`missing "channel"`)
	}
	if m.Sender == "" {
		return m, errors.New(`missing "sender"`)
	}
	if l.Content == nil {
		return m, errors.New(`missing "content"`)
	}
	m.Content = *l.Content
	if bytes.Equal(bytes.TrimSpace(m.Metadata), []byte("null")) {
		m.Metadata = nil
	}
	if l.CreatedAt != "" {
		t, err := time.Parse(time.RFC3339Nano, l.CreatedAt)
		if err != nil {
			return m, fmt.Errorf("created_at must be an RFC 3339 time, got %q", l.CreatedAt)
		}
		m.CreatedAt = t
	}
	return m, nil
}

func first(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// importReport is the --json summary of an import.
type importReport struct {
	Lines           int      `json:"lines"`
	Imported        int      `json:"imported"`
	AlreadyStored   int      `json:"already_stored"`
	Invalid         int      `json:"invalid"`
	ChannelsCreated []string `json:"channels_created,omitempty"`
	Embedded        int64    `json:"embedded"`
}

// readLines calls f for every non-blank line of path with its 1-based
// number and the bytes read so far.
func readLines(path string, f func(n int, line []byte, offset int64) error) (int64, error) {
	file, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer file.Close()
	st, err := file.Stat()
	if err != nil {
		return 0, err
	}
	r := bufio.NewReaderSize(file, 1<<20)
	var off int64
	for n := 1; ; n++ {
		line, err := r.ReadBytes('\n')
		off += int64(len(line))
		if len(bytes.TrimSpace(line)) > 0 {
			if ferr := f(n, line, off); ferr != nil {
				return st.Size(), ferr
			}
		}
		if err == io.EOF {
			return st.Size(), nil
		}
		if err != nil {
			return st.Size(), err
		}
	}
}

func runImportMessages(ctx context.Context, e *env, c *command, args []string) error {
	fs := newFlagSet(e, c)
	batchSize := fs.Int("batch", 1000, "messages per transaction (1 to 10000)")
	skipInvalid := fs.Bool("skip-invalid", false, "import the valid lines even if some are invalid (default: import nothing then)")
	noCreate := fs.Bool("no-create-channels", false, "treat lines naming a plain channel that does not exist as invalid (default: create it)")
	noEmbed := fs.Bool("no-embed", false, "do not wait for the embeddings (another cairn process with the model embeds them later)")
	model := fs.String("model", "", modelUsage)
	pos, err := parse(e, c, fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef(c.name, "expected one FILE.jsonl after 'messages'")
	}
	if *batchSize < 1 || *batchSize > engine.MaxBatch {
		return usagef(c.name, "--batch must be from 1 to %d, got %d", engine.MaxBatch, *batchSize)
	}
	path := pos[0]
	return e.withModelEngine(ctx, *model, forSelf, func(eng *engine.Engine) error {
		var rep importReport
		// Pass 1: validate every line; nothing is written.
		type bad struct {
			line int
			err  error
		}
		var bads []bad
		invalid := map[int]bool{}
		plain := map[string][]int{} // plain channels -> lines
		_, err := readLines(path, func(n int, line []byte, _ int64) error {
			rep.Lines++
			var l importLine
			dec := json.NewDecoder(bytes.NewReader(line))
			err := dec.Decode(&l)
			var m engine.NewMessage
			if err == nil && dec.More() {
				err = errors.New("more than one JSON value")
			}
			if err == nil {
				m, err = l.message()
			}
			if err == nil {
				err = eng.ValidateMessage(m)
			}
			if err != nil {
				bads = append(bads, bad{n, err})
				invalid[n] = true
				return nil
			}
			if !strings.HasPrefix(m.Channel, "agent-notes:") && !strings.HasPrefix(m.Channel, "project:") {
				plain[m.Channel] = append(plain[m.Channel], n)
			}
			return ctx.Err()
		})
		if err != nil {
			return err
		}
		var create []string
		for ch, lines := range plain {
			if _, err := eng.GetChannel(ctx, ch); errors.Is(err, engine.ErrNotFound) {
				if *noCreate {
					for _, n := range lines {
						bads = append(bads, bad{n, fmt.Errorf("channel %q does not exist (create it, or drop --no-create-channels)", ch)})
						invalid[n] = true
					}
					continue
				}
				create = append(create, ch)
			} else if err != nil {
				return err
			}
		}
		rep.Invalid = len(invalid)
		if len(bads) > 0 {
			for i, b := range bads {
				if i == 100 {
					fmt.Fprintf(e.stderr, "... and %d more\n", len(bads)-100)
					break
				}
				fmt.Fprintf(e.stderr, "%s:%d: %v\n", path, b.line, b.err)
			}
			if !*skipInvalid {
				return &engine.InvalidError{Field: "file", Rule: fmt.Sprintf("%d of %d lines are invalid (listed above); nothing was imported (use --skip-invalid to import the rest)", rep.Invalid, rep.Lines)}
			}
		}
		for _, ch := range create {
			if _, err := eng.CreateChannel(ctx, engine.NewChannel{ID: ch}); err != nil && !errors.Is(err, engine.ErrExists) {
				return err
			}
			rep.ChannelsCreated = append(rep.ChannelsCreated, ch)
		}

		// Pass 2: batches of whole lines, each batch one transaction.
		bar := e.progress("import")
		var batch []engine.NewMessage
		flush := func() error {
			if len(batch) == 0 {
				return nil
			}
			res, err := eng.StoreMessages(ctx, batch)
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
		var total int64
		if st, err := os.Stat(path); err == nil {
			total = st.Size()
		}
		_, err = readLines(path, func(n int, line []byte, off int64) error {
			if invalid[n] {
				return nil
			}
			var l importLine
			if err := json.Unmarshal(line, &l); err != nil {
				return fmt.Errorf("%s:%d: %w (the file changed during the import?)", path, n, err)
			}
			m, err := l.message()
			if err != nil {
				return fmt.Errorf("%s:%d: %w (the file changed during the import?)", path, n, err)
			}
			batch = append(batch, m)
			if len(batch) >= *batchSize {
				if err := flush(); err != nil {
					return err
				}
				bar.update(engine.Progress{Done: off, Total: total, Item: fmt.Sprintf("line %d", n)})
			}
			return ctx.Err()
		})
		if err == nil {
			err = flush()
		}
		bar.done()
		if err != nil {
			return err
		}
		if !*noEmbed {
			ebar := e.progress("embed")
			err := eng.SyncVectors(ctx, func(p engine.Progress) {
				rep.Embedded = p.Done
				ebar.update(p)
			})
			ebar.done()
			if err != nil {
				return err
			}
		}
		if e.json {
			return e.printJSON(rep)
		}
		fmt.Fprintf(e.stdout, "%d lines: %d imported, %d already stored, %d invalid", rep.Lines, rep.Imported, rep.AlreadyStored, rep.Invalid)
		if len(rep.ChannelsCreated) > 0 {
			fmt.Fprintf(e.stdout, "; created channels %s", strings.Join(rep.ChannelsCreated, ", "))
		}
		if rep.Embedded > 0 {
			fmt.Fprintf(e.stdout, "; %d embedded", rep.Embedded)
		}
		fmt.Fprintln(e.stdout)
		if rep.Invalid > 0 {
			return exitError{code: 1}
		}
		return nil
	})
}
