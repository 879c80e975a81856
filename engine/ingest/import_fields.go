package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/engine"
)

// A line of a message import is a JSON object: a message (the default);
// with "kind":"channel", a channel to create with its description, so that
// an export (ExportMessages) imports back whole; with "kind":"export", the
// header of an export naming its format (MessageExportFormat). Every field
// name is checked: a misspelt or unsupported field makes the line invalid
// instead of being dropped silently.

// importMessageFields are the field names of a message line, mapped to the
// name each is an alias of. The names of `cairn post`, the MCP tools
// (channel, sender, project, type) and of cairn's own JSON output
// (channel_id, sender_id, sender_project_id, message_type) are accepted.
var importMessageFields = map[string]string{
	"kind": "kind", "channel": "channel", "channel_id": "channel", "sender": "sender", "sender_id": "sender",
	"project": "project", "sender_project_id": "project", "content": "content", "metadata": "metadata",
	"breadcrumbs": "breadcrumbs", "confidence": "confidence", "type": "type", "message_type": "type",
	"created_at": "created_at", "supersedes_ref": "supersedes_ref",
}

// importDerivedFields are fields of cairn's message output that are
// computed from the others, or ids of the store it came from: accepted and
// ignored, so a `cairn show --json` line imports again (supersedes and
// superseded_by name ids of that store, not of the one imported into).
var importDerivedFields = []string{"id", "content_hash", "mentions", "word_count", "has_breadcrumbs", "supersedes", "superseded_by"}

// importChannelFields are the field names of a channel line ("kind":
// "channel"); the counters and times of `cairn channels --json` output are
// accepted and ignored.
var importChannelFields = map[string]string{
	"kind": "kind", "id": "id", "name": "name", "description": "description", "project_id": "project", "project": "project",
	"channel_type": "", "owner_agent_name": "", "owner_agent_project_id": "", "message_count": "", "last_message_at": "", "created_at": "",
}

// importRecord is one line of a message import.
type importRecord struct {
	msg     engine.NewMessage
	ref     *supersedesRef     // the message msg supersedes, if any
	channel *engine.NewChannel // set for a channel line
	header  bool               // an export's header line
}

// decodeImportLine decodes one line, without validating the record beyond
// the line's own syntax and field names.
func decodeImportLine(line []byte) (importRecord, error) {
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(line))
	if err := dec.Decode(&raw); err != nil {
		return importRecord{}, err
	}
	if dec.More() {
		return importRecord{}, errors.New("more than one JSON value")
	}
	if raw == nil {
		return importRecord{}, errors.New("want a JSON object, got null")
	}
	kind := "message"
	if k, ok := raw["kind"]; ok {
		if err := json.Unmarshal(k, &kind); err != nil || (kind != "message" && kind != "channel" && kind != "export") {
			return importRecord{}, fmt.Errorf(`"kind" must be "message", "channel" or "export", got %s`, k)
		}
	}
	switch kind {
	case "channel":
		return decodeChannelLine(raw)
	case "export":
		return importRecord{header: true}, decodeHeaderLine(raw)
	}
	fields, err := canonicalFields(raw, importMessageFields, importDerivedFields)
	if err != nil {
		return importRecord{}, err
	}
	m, err := decodeMessageFields(fields)
	if err != nil {
		return importRecord{msg: m}, err
	}
	rec := importRecord{msg: m}
	if v, ok := fields["supersedes_ref"]; ok && !bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
		if rec.ref, err = decodeSupersedesRef(v); err != nil {
			return rec, err
		}
	}
	return rec, nil
}

// decodeHeaderLine checks an export's header: a format this cairn reads,
// else an error wrapping ErrIncompatibleFormat.
func decodeHeaderLine(raw map[string]json.RawMessage) error {
	if _, err := canonicalFields(raw, map[string]string{"kind": "kind", "format": "format"}, nil); err != nil {
		return err
	}
	var format int
	if err := json.Unmarshal(raw["format"], &format); err != nil || format < 1 {
		return fmt.Errorf(`"format" must be a whole number from 1, got %s`, raw["format"])
	}
	if format > MessageExportFormat {
		return fmt.Errorf("%w: the export is of format %d, this cairn reads formats up to %d: upgrade cairn", engine.ErrIncompatibleFormat, format, MessageExportFormat)
	}
	return nil
}

// decodeSupersedesRef decodes and checks a supersedes_ref object.
func decodeSupersedesRef(v json.RawMessage) (*supersedesRef, error) {
	var ref supersedesRef
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ref); err != nil {
		return nil, fmt.Errorf(`"supersedes_ref" must be an object of channel_id, sender_id, content_hash and created_at: %v`, err)
	}
	switch {
	case ref.ChannelID == "" || ref.SenderID == "":
		return nil, errors.New(`"supersedes_ref" needs "channel_id" and "sender_id"`)
	case len(ref.ContentHash) != 64 || strings.Trim(ref.ContentHash, "0123456789abcdef") != "":
		return nil, fmt.Errorf(`"supersedes_ref": "content_hash" must be 64 lower-case hex digits, got %q`, ref.ContentHash)
	}
	if _, err := time.Parse(time.RFC3339Nano, ref.CreatedAt); err != nil {
		return nil, fmt.Errorf(`"supersedes_ref": "created_at" must be an RFC 3339 time, got %q`, ref.CreatedAt)
	}
	return &ref, nil
}

// canonicalFields maps each field of raw to its canonical name, dropping
// the ignored ones; unknown fields and two aliases of one field are errors.
func canonicalFields(raw map[string]json.RawMessage, known map[string]string, ignored []string) (map[string]json.RawMessage, error) {
	out := make(map[string]json.RawMessage, len(raw))
	from := map[string]string{}
	var unknown []string
	for name, v := range raw {
		if slices.Contains(ignored, name) {
			continue
		}
		canon, ok := known[name]
		if !ok {
			unknown = append(unknown, name)
			continue
		}
		if canon == "" {
			continue
		}
		if prev, dup := from[canon]; dup {
			a, b := min(prev, name), max(prev, name)
			return nil, fmt.Errorf("%q and %q are the same field; give one", a, b)
		}
		from[canon] = name
		out[canon] = v
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		names := make([]string, 0, len(known))
		for n := range known {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("unknown field %s (known: %s)", quoteJoin(unknown), strings.Join(names, ", "))
	}
	return out, nil
}

func quoteJoin(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// decodeMessageFields builds a message from canonical fields.
func decodeMessageFields(f map[string]json.RawMessage) (engine.NewMessage, error) {
	var m engine.NewMessage
	str := func(name string, dst *string) error {
		v, ok := f[name]
		if !ok || bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
			return nil
		}
		if err := json.Unmarshal(v, dst); err != nil {
			return fmt.Errorf("%q must be a string", name)
		}
		return nil
	}
	var content, created *string
	if v, ok := f["content"]; ok && !bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
		content = new(string)
		if err := json.Unmarshal(v, content); err != nil {
			return m, errors.New(`"content" must be a string`)
		}
	}
	if v, ok := f["created_at"]; ok {
		created = new(string)
		if err := json.Unmarshal(v, created); err != nil {
			return m, errors.New(`"created_at" must be an RFC 3339 time string`)
		}
	}
	for _, s := range []struct {
		name string
		dst  *string
	}{{"channel", &m.Channel}, {"sender", &m.Sender}, {"project", &m.Project}, {"type", &m.Type}} {
		if err := str(s.name, s.dst); err != nil {
			return m, err
		}
	}
	if v, ok := f["metadata"]; ok && !bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
		m.Metadata = v
	}
	if v, ok := f["breadcrumbs"]; ok {
		if err := json.Unmarshal(v, &m.Breadcrumbs); err != nil {
			return m, fmt.Errorf(`"breadcrumbs": %v`, err)
		}
	}
	if v, ok := f["confidence"]; ok && !bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
		m.Confidence = new(float64)
		if err := json.Unmarshal(v, m.Confidence); err != nil {
			return m, errors.New(`"confidence" must be a number`)
		}
	}
	switch {
	case m.Channel == "":
		return m, errors.New(`missing "channel"`)
	case m.Sender == "":
		return m, errors.New(`missing "sender"`)
	case content == nil:
		return m, errors.New(`missing "content"`)
	}
	m.Content = *content
	if created != nil && *created != "" {
		t, err := time.Parse(time.RFC3339Nano, *created)
		if err != nil {
			return m, fmt.Errorf("created_at must be an RFC 3339 time, got %q", *created)
		}
		if t.IsZero() { // a zero time would mean "now"
			return m, fmt.Errorf("created_at must not be before %s, got %q", engine.MinCreatedAt().Format(time.RFC3339), *created)
		}
		m.CreatedAt = t
	}
	return m, nil
}

// decodeChannelLine decodes a channel line.
func decodeChannelLine(raw map[string]json.RawMessage) (importRecord, error) {
	f, err := canonicalFields(raw, importChannelFields, nil)
	if err != nil {
		return importRecord{}, err
	}
	var c engine.NewChannel
	for _, s := range []struct {
		name string
		dst  *string
	}{{"id", &c.ID}, {"name", &c.Name}, {"description", &c.Description}, {"project", &c.Project}} {
		if v, ok := f[s.name]; ok {
			if err := json.Unmarshal(v, s.dst); err != nil {
				return importRecord{}, fmt.Errorf("%q must be a string", s.name)
			}
		}
	}
	if c.ID == "" {
		return importRecord{}, errors.New(`channel line: missing "id"`)
	}
	return importRecord{channel: &c}, nil
}
