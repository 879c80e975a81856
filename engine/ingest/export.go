package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/engine"
)

// MessagesDir is the folder, inside an export folder, of the per-channel
// message files.
const MessagesDir = "messages"

// MessageExportOptions select what ExportMessages writes.
type MessageExportOptions struct {
	// Channels lists channel ids; empty means every channel with messages
	// or a description.
	Channels []string
	// Formats: FormatJSONL and/or FormatMarkdown; empty means both.
	Formats []string
	// OutDir is the export folder; files go to OutDir/messages/
	// {channel}.jsonl and .md, the channel id with ':' and '/' written as
	// %3A and %2F (ChannelFileName).
	OutDir string
	// Progress is called after each channel.
	Progress func(engine.Progress)
}

// ChannelFileName is the file name (without extension) of a channel's
// export: the id with every byte other than letters, digits, '.', '_' and
// '-' percent-encoded, so it is a valid file name on every platform and
// never leaves its folder.
func ChannelFileName(id string) string {
	var b strings.Builder
	for i := 0; i < len(id); i++ {
		c := id[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.' && i > 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// ExportMessages writes the messages of the selected channels, one JSONL
// and/or Markdown file per channel, each atomically (WriteFileAtomic). The
// JSONL is what ImportMessages reads back: a header line naming the format
// (MessageExportFormat), a channel line (plain channels: name,
// description, project) and then the channel's messages in id order, a
// correction with a reference to the message it supersedes that holds in
// any store (supersedesRef).
func ExportMessages(ctx context.Context, e *engine.Engine, opts MessageExportOptions) ([]ExportedFile, error) {
	if opts.OutDir == "" {
		return nil, invalid("out", "must name an output folder")
	}
	formats, err := ExportFormats(opts.Formats)
	if err != nil {
		return nil, err
	}
	var chans []engine.Channel
	if len(opts.Channels) == 0 {
		all, err := e.ListChannels(ctx, engine.Scope{})
		if err != nil {
			return nil, err
		}
		for _, c := range all {
			if c.MessageCount > 0 || c.Description != "" {
				chans = append(chans, c)
			}
		}
	} else {
		for _, id := range opts.Channels {
			c, err := e.GetChannel(ctx, id)
			if err != nil {
				return nil, err
			}
			chans = append(chans, c)
		}
	}
	if len(chans) == 0 {
		return nil, nil
	}
	out, err := filepath.Abs(filepath.Join(opts.OutDir, MessagesDir))
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(out, 0o700); err != nil {
		return nil, fmt.Errorf("engine: export: %w", err)
	}
	var files []ExportedFile
	for i, c := range chans {
		msgs, err := channelMessages(ctx, e, c.ID)
		if err != nil {
			return files, err
		}
		superseded, err := supersededOf(ctx, e, msgs)
		if err != nil {
			return files, err
		}
		for _, f := range formats {
			var buf bytes.Buffer
			if f == FormatJSONL {
				err = writeChannelJSONL(&buf, c, msgs, superseded)
			} else {
				err = writeChannelMarkdown(&buf, c, msgs)
			}
			if err != nil {
				return files, err
			}
			name := filepath.Join(out, ChannelFileName(c.ID)+"."+f)
			if err := WriteFileAtomic(name, buf.Bytes(), 0o644); err != nil {
				return files, err
			}
			files = append(files, ExportedFile{Channel: c.ID, Format: f, Path: name, Bytes: int64(buf.Len())})
		}
		if opts.Progress != nil {
			opts.Progress(engine.Progress{Done: int64(i + 1), Total: int64(len(chans)), Item: c.ID})
		}
	}
	return files, nil
}

// channelMessages returns every message of a channel in id order.
func channelMessages(ctx context.Context, e *engine.Engine, channel string) ([]engine.Message, error) {
	var ids []int64
	if err := e.Use(func(s engine.Store) error {
		var err error
		ids, err = s.ChannelMessageIDs(ctx, channel)
		return err
	}); err != nil {
		return nil, err
	}
	return messagesInBatches(ctx, e, ids)
}

// supersededOf returns the messages that msgs supersede, by id.
func supersededOf(ctx context.Context, e *engine.Engine, msgs []engine.Message) (map[int64]engine.Message, error) {
	var ids []int64
	for _, m := range msgs {
		if m.Supersedes != 0 {
			ids = append(ids, m.Supersedes)
		}
	}
	ms, err := messagesInBatches(ctx, e, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]engine.Message, len(ms))
	for _, m := range ms {
		out[m.ID] = m
	}
	return out, nil
}

// MessageExportFormat is the format of the JSONL files ExportMessages
// writes, named by their header line {"kind":"export","format":N}:
//
//	1  no header line: a channel line, then one message per line
//	2  the header line; a correction carries "supersedes_ref", the
//	   message it supersedes by channel_id, sender_id, content_hash and
//	   created_at (what identifies a message in every store, whatever its
//	   id there)
//
// ImportMessages reads every format up to this one, and files without a
// header as format 1; a newer header is refused (ErrIncompatibleFormat).
// testdata/export-v1 keeps a format-1 export.
const MessageExportFormat = 2

// exportHeaderLine, exportChannelLine and exportMessageLine are the JSONL
// records; their field names are among those ImportMessages accepts.
type exportHeaderLine struct {
	Kind   string `json:"kind"`
	Format int    `json:"format"`
}

type exportChannelLine struct {
	Kind        string `json:"kind"`
	ID          string `json:"id"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
	ProjectID   string `json:"project_id,omitempty"`
}

type exportMessageLine struct {
	ChannelID       string          `json:"channel_id"`
	SenderID        string          `json:"sender_id"`
	SenderProjectID string          `json:"sender_project_id,omitempty"`
	Content         string          `json:"content"`
	Confidence      float64         `json:"confidence"`
	MessageType     string          `json:"message_type"`
	Metadata        json.RawMessage `json:"metadata,omitempty"`
	CreatedAt       string          `json:"created_at"`
	SupersedesRef   *supersedesRef  `json:"supersedes_ref,omitempty"`
}

// supersedesRef names a message by what makes it unique in a store (its
// content hash, channel and sender) and its time, so that an import finds
// it whatever id it got there.
type supersedesRef struct {
	ChannelID   string `json:"channel_id"`
	SenderID    string `json:"sender_id"`
	ContentHash string `json:"content_hash"`
	CreatedAt   string `json:"created_at"`
}

func refOf(m engine.Message) *supersedesRef {
	return &supersedesRef{ChannelID: m.ChannelID, SenderID: m.SenderID, ContentHash: m.ContentHash, CreatedAt: exportTime(m.CreatedAt)}
}

func exportTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// writeChannelJSONL writes a channel's export; superseded holds the
// messages that msgs supersede (a link whose target is missing, deleted
// meanwhile, is left out).
func writeChannelJSONL(w io.Writer, c engine.Channel, msgs []engine.Message, superseded map[int64]engine.Message) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(exportHeaderLine{Kind: "export", Format: MessageExportFormat}); err != nil {
		return err
	}
	if c.ChannelType == engine.ChannelPlain {
		l := exportChannelLine{Kind: "channel", ID: c.ID, Description: c.Description, ProjectID: c.ProjectID}
		if c.Name != c.ID {
			l.Name = c.Name
		}
		if err := enc.Encode(l); err != nil {
			return err
		}
	}
	for _, m := range msgs {
		md := m.Metadata
		if bytes.Equal(bytes.TrimSpace(md), []byte("{}")) {
			md = nil
		}
		l := exportMessageLine{ChannelID: m.ChannelID, SenderID: m.SenderID, SenderProjectID: m.SenderProjectID,
			Content: m.Content, Confidence: m.Confidence, MessageType: m.MessageType, Metadata: md,
			CreatedAt: exportTime(m.CreatedAt)}
		if old, ok := superseded[m.Supersedes]; ok && m.Supersedes != 0 {
			l.SupersedesRef = refOf(old)
		}
		if err := enc.Encode(l); err != nil {
			return err
		}
	}
	return nil
}

// writeChannelMarkdown writes a channel for people: its description, then
// one heading per message (id, sender, type, time) and the text as written.
func writeChannelMarkdown(w io.Writer, c engine.Channel, msgs []engine.Message) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Channel %s\n\n", mdEscape(c.ID))
	if c.Description != "" {
		fmt.Fprintf(&b, "%s\n\n", mdEscape(c.Description))
	}
	if c.ProjectID != "" {
		fmt.Fprintf(&b, "- Project: `%s`\n", c.ProjectID)
	}
	fmt.Fprintf(&b, "- Messages: %d\n", len(msgs))
	for _, m := range msgs {
		fmt.Fprintf(&b, "\n## #%d · %s · %s · %s\n\n", m.ID, mdEscape(m.SenderID), mdEscape(m.MessageType), mdTime(m.CreatedAt))
		if m.Confidence != engine.DefaultConfidence {
			fmt.Fprintf(&b, "_confidence %.2f_\n\n", m.Confidence)
		}
		if m.Supersedes != 0 {
			fmt.Fprintf(&b, "_supersedes #%d_\n\n", m.Supersedes)
		}
		b.WriteString(strings.TrimRight(m.Content, "\n"))
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// messagesInBatches reads the messages of ids, in that order, 500 at a
// time (a bound on the query's parameters).
func messagesInBatches(ctx context.Context, e *engine.Engine, ids []int64) ([]engine.Message, error) {
	var out []engine.Message
	for len(ids) > 0 {
		n := min(len(ids), 500)
		ms, err := e.GetMessages(ctx, ids[:n])
		if err != nil {
			return nil, err
		}
		out = append(out, ms...)
		ids = ids[n:]
	}
	return out, nil
}

var mdEscaper = strings.NewReplacer("<", "&lt;", ">", "&gt;", "&", "&amp;")

func mdEscape(s string) string { return mdEscaper.Replace(s) }

func mdTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }
