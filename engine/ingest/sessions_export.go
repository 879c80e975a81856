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

	"github.com/cairn-dev/cairn/engine"
)

// Export formats.
const (
	FormatJSONL    = "jsonl"
	FormatMarkdown = "md"
)

// ExportSessionsOptions select what ExportSessions writes.
type ExportSessionsOptions struct {
	// Sessions lists session ids (UUIDs); empty with All exports every
	// session.
	Sessions []string
	All      bool
	// Formats: FormatJSONL and/or FormatMarkdown; empty means both.
	Formats []string
	// OutDir is the output folder (created if missing). Files are named
	// {session}.jsonl and {session}.md directly inside it.
	OutDir string
	// Progress is called after each session.
	Progress func(engine.Progress)
}

// ExportedFile is one written file.
type ExportedFile struct {
	Session string `json:"session,omitempty"`
	Channel string `json:"channel,omitempty"`
	Format  string `json:"format"`
	Path    string `json:"path"`
	Bytes   int64  `json:"bytes"`
}

// ExportSessions writes the selected sessions of e into opts.OutDir, each file
// atomically (temp file in the same folder, fsync, rename, fsync of the
// folder). Session ids are validated as UUIDs before anything is written,
// so a file name can never leave the output folder.
func ExportSessions(ctx context.Context, e *engine.Engine, opts ExportSessionsOptions) ([]ExportedFile, error) {
	if opts.OutDir == "" {
		return nil, invalid("out", "must name an output folder")
	}
	formats, err := ExportFormats(opts.Formats)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(opts.Sessions))
	for _, s := range opts.Sessions {
		id, err := engine.ParseSessionID(s)
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	if opts.All {
		all, err := ListSessions(ctx, e)
		if err != nil {
			return nil, err
		}
		for _, s := range all {
			ids = append(ids, s.ID)
		}
		if len(ids) == 0 {
			return nil, nil
		}
	}
	if len(ids) == 0 {
		return nil, invalid("session", "name a session id or use --all")
	}
	for _, id := range ids {
		if _, err := GetSession(ctx, e, id); err != nil {
			return nil, err
		}
	}
	out, err := filepath.Abs(opts.OutDir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(out, 0o700); err != nil {
		return nil, fmt.Errorf("engine: export: %w", err)
	}
	var files []ExportedFile
	for i, id := range ids {
		for _, f := range formats {
			var buf bytes.Buffer
			var err error
			if f == FormatJSONL {
				err = WriteSessionJSONL(ctx, e, id, &buf)
			} else {
				err = WriteSessionMarkdown(ctx, e, id, &buf)
			}
			if err != nil {
				return files, err
			}
			name := filepath.Join(out, id+"."+f)
			if filepath.Dir(name) != out { // unreachable for a UUID; kept as the invariant
				return files, invalid("session", "file name %q leaves the output folder", name)
			}
			if err := WriteFileAtomic(name, buf.Bytes(), 0o600); err != nil {
				return files, err
			}
			files = append(files, ExportedFile{Session: id, Format: f, Path: name, Bytes: int64(buf.Len())})
		}
		if opts.Progress != nil {
			opts.Progress(engine.Progress{Done: int64(i + 1), Total: int64(len(ids)), Item: id})
		}
	}
	return files, nil
}

// WriteFileAtomic writes data to name so that readers see either the old
// file or the whole new one: a temp file in the same folder, fsync, rename
// over name, fsync of the folder.
func WriteFileAtomic(name string, data []byte, perm os.FileMode) (err error) {
	dir := filepath.Dir(name)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(name)+".tmp-*")
	if err != nil {
		return fmt.Errorf("engine: write %s: %w", name, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return fmt.Errorf("engine: write %s: %w", name, err)
	}
	// perm only narrows the mode CreateTemp gave (0600 less the umask), so
	// a stricter umask is honoured and nothing is ever widened to 0644.
	fi, err := tmp.Stat()
	if err != nil {
		return fmt.Errorf("engine: write %s: %w", name, err)
	}
	if err = tmp.Chmod(fi.Mode().Perm() & perm); err != nil {
		return fmt.Errorf("engine: write %s: %w", name, err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("engine: fsync %s: %w", name, err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("engine: write %s: %w", name, err)
	}
	if err = os.Rename(tmp.Name(), name); err != nil {
		return fmt.Errorf("engine: rename to %s: %w", name, err)
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("engine: fsync %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("engine: fsync %s: %w", dir, err)
	}
	return nil
}

// WriteSessionMarkdown writes a session for people: a title with the
// session's facts, then one heading per record (role, time, position),
// text as written (so code blocks stay code blocks), thinking, tool calls
// and tool results folded in <details> blocks, and a note where a record
// answers something other than the record before it (a branch) or belongs
// to a sub-agent sidechain.
func WriteSessionMarkdown(ctx context.Context, e *engine.Engine, id string, w io.Writer) error {
	s, err := GetSession(ctx, e, id)
	if err != nil {
		return err
	}
	recs, err := SessionRecords(ctx, e, id)
	if err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Session %s\n\n", s.ID)
	if s.Project != "" {
		fmt.Fprintf(&b, "- Project: `%s`\n", s.Project)
	}
	if s.CWD != "" {
		fmt.Fprintf(&b, "- Directory: `%s`\n", s.CWD)
	}
	if s.GitBranch != "" {
		fmt.Fprintf(&b, "- Branch: `%s`\n", s.GitBranch)
	}
	if !s.FirstAt.IsZero() && s.FirstAt.UnixMilli() != 0 {
		fmt.Fprintf(&b, "- Time: %s to %s\n", mdTime(s.FirstAt), mdTime(s.LastAt))
	}
	fmt.Fprintf(&b, "- Records: %d\n", len(recs))
	bySeq := map[string]int{}
	prevUUID := ""
	for _, r := range recs {
		b.WriteString("\n")
		role := r.Role
		if role == "" {
			role = r.Type
		}
		title := strings.ToUpper(role[:1]) + role[1:]
		switch {
		case r.Type == "summary":
			title = "Summary"
		case r.Type == "system":
			title = "System"
		case r.IsCompact:
			title += " (compacted context)"
		}
		fmt.Fprintf(&b, "## %d. %s", r.Seq, title)
		if !r.CreatedAt.IsZero() {
			fmt.Fprintf(&b, " · %s", mdTime(r.CreatedAt))
		}
		b.WriteString("\n\n")
		var notes []string
		if r.IsSidechain {
			notes = append(notes, "sub-agent sidechain")
		}
		if r.ParentUUID != "" && r.ParentUUID != prevUUID {
			if seq, ok := bySeq[r.ParentUUID]; ok {
				notes = append(notes, fmt.Sprintf("branch: replies to #%d", seq))
			}
		}
		if len(notes) > 0 {
			fmt.Fprintf(&b, "_%s_\n\n", strings.Join(notes, "; "))
		}
		writeBlocksMarkdown(&b, r)
		if r.UUID != "" {
			bySeq[r.UUID] = r.Seq
			prevUUID = r.UUID
		}
	}
	_, err = io.WriteString(w, b.String())
	return err
}

func writeBlocksMarkdown(b *strings.Builder, r engine.SessionRecord) {
	if len(r.Content) == 0 {
		return
	}
	var s string
	if json.Unmarshal(r.Content, &s) == nil {
		b.WriteString(strings.TrimRight(s, "\n"))
		b.WriteString("\n")
		return
	}
	var blocks []struct {
		Type      string          `json:"type"`
		Text      string          `json:"text"`
		Thinking  string          `json:"thinking"`
		Name      string          `json:"name"`
		Input     json.RawMessage `json:"input"`
		Content   json.RawMessage `json:"content"`
		IsError   bool            `json:"is_error"`
		ToolUseID string          `json:"tool_use_id"`
	}
	if json.Unmarshal(r.Content, &blocks) != nil {
		b.WriteString(fence(r.Text, ""))
		return
	}
	for i, blk := range blocks {
		if i > 0 {
			b.WriteString("\n")
		}
		switch blk.Type {
		case "text":
			b.WriteString(strings.TrimRight(blk.Text, "\n"))
			b.WriteString("\n")
		case "thinking":
			details(b, "Thinking", blk.Thinking+"\n")
		case "tool_use", "server_tool_use":
			var pretty bytes.Buffer
			if json.Indent(&pretty, blk.Input, "", "  ") != nil {
				pretty.Reset()
				pretty.Write(blk.Input)
			}
			details(b, "Tool call: "+mdEscape(blk.Name), fence(pretty.String(), "json"))
		case "tool_result":
			label := "Tool result"
			if blk.IsError {
				label += " (error)"
			}
			details(b, label, fence(toolResultText(blk.Content), ""))
		case "image":
			b.WriteString("_[image]_\n")
		default:
			fmt.Fprintf(b, "_[%s block]_\n", mdEscape(blk.Type))
		}
	}
}

func toolResultText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var out []string
		for _, p := range parts {
			if p.Type == "text" {
				out = append(out, p.Text)
			} else {
				out = append(out, "["+p.Type+"]")
			}
		}
		return strings.Join(out, "\n")
	}
	return string(raw)
}

func details(b *strings.Builder, summary, body string) {
	fmt.Fprintf(b, "<details><summary>%s</summary>\n\n%s\n</details>\n", summary, strings.TrimRight(body, "\n"))
}

// fence wraps text in a code fence longer than any backtick run inside it.
func fence(text, lang string) string {
	longest, run := 0, 0
	for _, c := range text {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	f := strings.Repeat("`", max(3, longest+1))
	return f + lang + "\n" + strings.TrimRight(text, "\n") + "\n" + f + "\n"
}

// ExportFormats checks the formats of an export (FormatJSONL,
// FormatMarkdown): empty means both.
func ExportFormats(formats []string) ([]string, error) {
	if len(formats) == 0 {
		return []string{FormatJSONL, FormatMarkdown}, nil
	}
	for _, f := range formats {
		if f != FormatJSONL && f != FormatMarkdown {
			return nil, invalid("format", "must be jsonl or md, got %q", f)
		}
	}
	return formats, nil
}
