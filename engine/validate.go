package engine

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"github.com/cairn-dev/cairn/engine/redact"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

var (
	agentRE   = nameSyntax{max: 64, punct: "._-"}
	projectRE = nameSyntax{max: 128, punct: "._/-"}
	channelRE = nameSyntax{max: 128, punct: "._/:-"}
	typeRE    = nameSyntax{max: 64, punct: "._-"}
)

const (
	agentRule   = "must be 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit"
	projectRule = "must be 1-128 letters, digits, '.', '_', '-' or '/', starting with a letter or digit"
	channelRule = "must be 1-128 letters, digits, '.', '_', '-', '/' or ':', starting with a letter or digit"
	typeRule    = "must be 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit"
)

const (
	notesPrefix   = "agent-notes:"
	projectPrefix = "project:"
)

// CheckAgent checks that name is an agent name; else an *InvalidError
// on field.
func CheckAgent(field, name string) error {
	if !agentRE.MatchString(name) {
		return invalid(field, "%s, got %q", agentRule, name)
	}
	return nil
}

func checkProject(field, p string) error {
	if p != "" && !projectRE.MatchString(p) {
		return invalid(field, "%s, got %q", projectRule, p)
	}
	return nil
}

// NotesChannelID returns the notes channel of agent in project ("" for the
// agent's own notes).
func NotesChannelID(agent, project string) string {
	if project == "" {
		return notesPrefix + agent
	}
	return notesPrefix + agent + ":" + project
}

// ProjectChannelID returns the project channel name (decisions, patterns or
// policies) of project.
func ProjectChannelID(project, name string) string {
	return projectPrefix + project + ":" + name
}

// channelSpec is what a channel id says about the channel it names.
type channelSpec struct {
	id, typ, name         string
	ownerAgent, ownerProj string
	project               string
	// namespaced: an agent-notes: or project: channel, whose type, owner
	// and project the id itself says.
	namespaced bool
}

// parseChannel validates a channel id and classifies it.
func parseChannel(field, id string) (channelSpec, error) {
	if !channelRE.MatchString(id) {
		return channelSpec{}, invalid(field, "%s, got %q", channelRule, id)
	}
	switch {
	case strings.HasPrefix(id, notesPrefix):
		rest := id[len(notesPrefix):]
		agent, project, _ := strings.Cut(rest, ":")
		if !agentRE.MatchString(agent) || (project != "" || strings.HasSuffix(rest, ":")) && !projectRE.MatchString(project) {
			return channelSpec{}, invalid(field, "a notes channel is agent-notes:{agent} or agent-notes:{agent}:{project} (agent %s; project %s), got %q", agentRule, projectRule, id)
		}
		return channelSpec{id: id, typ: ChannelAgentNotes, name: id, ownerAgent: agent, ownerProj: project, project: project, namespaced: true}, nil
	case strings.HasPrefix(id, projectPrefix):
		// project:{project} is the project's own channel (the designs'
		// project:backend); project:{project}:{name} one of its named
		// channels (decisions, patterns, policies or any other name).
		project, name, named := strings.Cut(id[len(projectPrefix):], ":")
		if !projectRE.MatchString(project) || named && !typeRE.MatchString(name) {
			return channelSpec{}, invalid(field, "a project channel is project:{project} or project:{project}:{name} such as project:{project}:decisions (project %s; name %s), got %q", projectRule, typeRule, id)
		}
		if !named {
			name = project
		}
		return channelSpec{id: id, typ: ChannelProject, name: name, project: project, namespaced: true}, nil
	}
	return channelSpec{id: id, typ: ChannelPlain, name: id}, nil
}

// redactName returns the name s (of the form valid reports) with its
// secrets redacted (redact.Redactor.RedactName), counting them in rep. A
// result no longer valid (too long) becomes "redacted-" and 16 hex digits
// of the name's SHA-256, still the same for the same name.
func (e *Engine) redactName(s string, valid func(string) bool, rep *redact.Report) string {
	if e.opts.Redactor == nil || s == "" {
		return s
	}
	out, r := e.opts.Redactor.RedactName(s)
	if r.Total() == 0 {
		return s
	}
	rep.Add(r)
	if !valid(out) {
		sum := sha256.Sum256([]byte(s))
		out = "redacted-" + hex.EncodeToString(sum[:8])
	}
	return out
}

// prepared is a validated, normalized write.
type prepared struct {
	channel        channelSpec
	sender         string
	project        string
	content        string
	hash           string
	confidence     float64
	typ            string
	metadata       string
	mentions       string
	wordCount      int
	hasBreadcrumbs bool
	createdAt      int64  // Unix ms; 0 = now
	redactions     string // spans redacted per rule, redact.Report.String()
	supersedes     int64  // 0 = none
}

func (e *Engine) prepare(in NewMessage) (prepared, error) {
	var p prepared
	var err error
	if p.channel, err = parseChannel("channel", in.Channel); err != nil {
		return p, err
	}
	if err := CheckAgent("sender", in.Sender); err != nil {
		return p, err
	}
	if err := checkProject("project", in.Project); err != nil {
		return p, err
	}
	p.sender, p.project = in.Sender, in.Project
	if in.Supersedes < 0 {
		return p, invalid("supersedes", "must be the id of an earlier message, got %d", in.Supersedes)
	}
	p.supersedes = in.Supersedes
	var redactions redact.Report
	// Names are checked as the caller wrote them, then redacted like the
	// content: a secret pasted as a channel id, a sender or a project is
	// stored as redacted-RULE-HASH, the same for the same secret.
	if id := e.redactName(in.Channel, channelRE.MatchString, &redactions); id != in.Channel {
		if p.channel, err = parseChannel("channel", id); err != nil {
			return p, err
		}
	}
	p.sender = e.redactName(p.sender, agentRE.MatchString, &redactions)
	p.project = e.redactName(p.project, projectRE.MatchString, &redactions)
	if e.opts.Redactor != nil {
		var rep redact.Report
		in.Content, rep = e.opts.Redactor.Redact(in.Content)
		redactions.Add(rep)
	}
	if err := e.checkContent(in.Content); err != nil {
		return p, err
	}
	p.content = in.Content
	sum := sha256.Sum256([]byte(in.Content))
	p.hash = hex.EncodeToString(sum[:])

	p.confidence = DefaultConfidence
	if in.Confidence != nil {
		c := *in.Confidence
		if math.IsNaN(c) || c < 0 || c > 1 {
			return p, invalid("confidence", "must be a number from 0 to 1, got %v", c)
		}
		p.confidence = c
	}
	p.typ = in.Type
	typeField := "message_type"
	if p.typ == "" {
		p.typ, typeField = metadataType(in.Metadata), "metadata.type"
	}
	if p.typ == "" {
		p.typ = TypeMessage
	}
	if !typeRE.MatchString(p.typ) {
		return p, invalid(typeField, "%s, got %q", typeRule, p.typ)
	}
	p.typ = e.redactName(p.typ, typeRE.MatchString, &redactions)
	md, has, err := e.normalizeMetadata(in.Metadata, in.Breadcrumbs, in.repo, &redactions)
	if err != nil {
		return p, err
	}
	p.redactions = redactions.String()
	p.metadata, p.hasBreadcrumbs = md, has
	mentions, _ := json.Marshal(Mentions(in.Content))
	p.mentions = string(mentions)
	p.wordCount = len(strings.Fields(in.Content))
	if !in.CreatedAt.IsZero() {
		if err := e.checkCreatedAt(in.CreatedAt); err != nil {
			return p, err
		}
		p.createdAt = in.CreatedAt.UnixMilli()
	}
	return p, nil
}

// MinCreatedAt is the earliest created_at accepted (2000-01-01 UTC); the
// latest is MaxCreatedAtAhead past the engine's clock. A time far in the
// future would sort first forever and escape max-age retention; one before
// 2000 is a unit or parsing mistake (seconds read as milliseconds, a zero
// date), not a record of an agent's memory.
func MinCreatedAt() time.Time { return time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC) }

// MaxCreatedAtAhead is how far past now a created_at may be (clock skew
// between machines).
const MaxCreatedAtAhead = 24 * time.Hour

func (e *Engine) checkCreatedAt(t time.Time) error {
	latest := e.opts.Now().Add(MaxCreatedAtAhead)
	if t.Before(MinCreatedAt()) || t.After(latest) {
		return invalid("created_at", "must be from %s to %s (now + %s), got %s", MinCreatedAt().Format(time.RFC3339),
			latest.UTC().Truncate(time.Second).Format(time.RFC3339), MaxCreatedAtAhead, t.UTC().Format(time.RFC3339Nano))
	}
	return nil
}

func (e *Engine) checkContent(c string) error {
	switch {
	case strings.TrimSpace(c) == "":
		return invalid("content", "must not be empty")
	case len(c) > e.opts.MaxContentBytes:
		return invalid("content", "must be at most %d bytes, got %d", e.opts.MaxContentBytes, len(c))
	case !utf8.ValidString(c):
		return invalid("content", "must be valid UTF-8")
	case strings.IndexByte(c, 0) >= 0:
		return invalid("content", "must not contain NUL bytes")
	}
	return nil
}

// MaxMetadataDepth bounds the nesting of a message's metadata, the outer
// object counting as one level: records are a few levels deep, SQLite's
// JSON functions refuse 1,000, and the transports' own bounds on a whole
// message (32 levels for an HTTP body, 128 for an MCP line) leave room
// for it inside their envelopes, so every surface gives the same answer.
const MaxMetadataDepth = 16

// normalizeMetadata validates raw as a JSON object, merges bc into its
// "breadcrumbs" and returns the compact JSON and whether any breadcrumb is
// present. With a Redactor, every string value of the metadata and every
// breadcrumb is redacted like the content (counts added to redactions).
// With breadcrumbs and no breadcrumbs_repo of its own, the metadata records
// repo ("" records none). The result, breadcrumbs included, is at most
// MaxContentBytes.
func (e *Engine) normalizeMetadata(raw json.RawMessage, bc Breadcrumbs, repo string, redactions *redact.Report) (string, bool, error) {
	if len(raw) > e.opts.MaxContentBytes {
		return "", false, invalid("metadata", "must be at most %d bytes, got %d", e.opts.MaxContentBytes, len(raw))
	}
	md := map[string]any{}
	if len(bytes.TrimSpace(raw)) > 0 {
		if !utf8.Valid(raw) {
			return "", false, invalid("metadata", "must be valid UTF-8")
		}
		if err := checkMetadataShape(raw); err != nil {
			return "", false, err
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return "", false, invalid("metadata", "must be a JSON object: %v", err)
		}
		if dec.More() {
			return "", false, invalid("metadata", "must be a single JSON object")
		}
		obj, ok := v.(map[string]any)
		if !ok {
			return "", false, invalid("metadata", "must be a JSON object, got %s", jsonKind(v))
		}
		md = obj
	}
	if e.opts.Redactor != nil {
		for k, v := range md {
			if k != "breadcrumbs" && k != RepoKey {
				md[k] = redactJSON(e.opts.Redactor, v, redactions)
			}
		}
	}
	var stored Breadcrumbs
	if v, ok := md["breadcrumbs"]; ok {
		obj, ok := v.(map[string]any)
		if !ok {
			return "", false, invalid("metadata.breadcrumbs", "must be an object of string arrays by kind (files, commits, issues, prs, modified_files, ...), got %s", jsonKind(v))
		}
		for k, list := range obj {
			if !breadcrumbKindRE.MatchString(k) {
				return "", false, invalid("metadata.breadcrumbs."+k, "a breadcrumb kind is a letter then letters, digits, _ or - (at most 64)")
			}
			arr, ok := list.([]any)
			if !ok {
				return "", false, invalid("metadata.breadcrumbs."+k, "must be an array of strings, got %s", jsonKind(list))
			}
			vals := make([]string, 0, len(arr))
			for _, item := range arr {
				switch s := item.(type) {
				case string:
					vals = append(vals, s)
				case json.Number:
					vals = append(vals, s.String())
				default:
					return "", false, invalid("metadata.breadcrumbs."+k, "must be an array of strings, got an element of type %s", jsonKind(item))
				}
			}
			stored.set(k, vals)
		}
	}
	merged := Breadcrumbs{
		Files:   mergeStrings(stored.Files, bc.Files),
		Commits: mergeStrings(stored.Commits, bc.Commits),
		Issues:  mergeStrings(stored.Issues, bc.Issues),
		PRs:     mergeStrings(stored.PRs, bc.PRs),
	}
	for _, o := range []map[string][]string{stored.Other, bc.Other} {
		for k := range o {
			if !breadcrumbKindRE.MatchString(k) {
				return "", false, invalid("breadcrumbs."+k, "a breadcrumb kind is a letter then letters, digits, _ or - (at most 64)")
			}
			merged.set(k, mergeStrings(stored.Other[k], bc.Other[k]))
		}
	}
	// Forms are checked on what the caller wrote: a redaction marker is no
	// commit hash, and bad input is refused, not redacted.
	if err := merged.check(); err != nil {
		return "", false, err
	}
	if e.opts.Redactor != nil {
		// merged's lists are fresh copies; two secrets redacted to the
		// same marker are merged again.
		for _, l := range []*[]string{&merged.Files, &merged.Commits, &merged.Issues, &merged.PRs} {
			redactStrings(e.opts.Redactor, *l, redactions)
			*l = mergeStrings(*l, nil)
		}
		for k, l := range merged.Other {
			redactStrings(e.opts.Redactor, l, redactions)
			merged.Other[k] = mergeStrings(l, nil)
		}
	}
	if merged.Empty() {
		delete(md, "breadcrumbs")
	} else {
		md["breadcrumbs"] = merged
	}
	if v, ok := md[RepoKey]; ok {
		root, isStr := v.(string)
		if !isStr {
			return "", false, invalid("metadata."+RepoKey, "must be the absolute path of a repository's top directory, got %s", jsonKind(v))
		}
		if err := checkRepo("metadata."+RepoKey, root); err != nil {
			return "", false, err
		}
	} else if repo != "" && !merged.Empty() {
		md[RepoKey] = repo
	}
	out, err := json.Marshal(md)
	if err != nil {
		return "", false, invalid("metadata", "cannot be encoded: %v", err)
	}
	if len(out) > e.opts.MaxContentBytes {
		return "", false, invalid("metadata", "with its breadcrumbs must be at most %d bytes, got %d", e.opts.MaxContentBytes, len(out))
	}
	return string(out), !merged.Empty(), nil
}

// checkMetadataShape walks raw's JSON tokens and refuses what decoding into
// a map would pass silently or SQLite would refuse later: nesting deeper
// than MaxMetadataDepth, a key given twice in one object (the last would
// win), and a NUL character in a key or a string value (refused in
// content too). Malformed JSON is left to the decoder's message.
func checkMetadataShape(raw []byte) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	type level struct {
		keys      map[string]bool // nil for an array
		expectKey bool
	}
	var stack []level
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil // io.EOF, or malformed: the decoder words it
		}
		isKey := len(stack) > 0 && stack[len(stack)-1].keys != nil && stack[len(stack)-1].expectKey
		if len(stack) > 0 && stack[len(stack)-1].keys != nil {
			stack[len(stack)-1].expectKey = !isKey
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				if len(stack) == MaxMetadataDepth {
					return invalid("metadata", "must be nested at most %d levels deep", MaxMetadataDepth)
				}
				l := level{}
				if t == '{' {
					l = level{keys: map[string]bool{}, expectKey: true}
				}
				stack = append(stack, l)
			default:
				stack = stack[:len(stack)-1]
				if len(stack) > 0 && stack[len(stack)-1].keys != nil {
					stack[len(stack)-1].expectKey = true
				}
			}
		case string:
			if strings.IndexByte(t, 0) >= 0 {
				what := "a value"
				if isKey {
					what = "a key"
				}
				return invalid("metadata", "%s must not contain a NUL character", what)
			}
			if isKey {
				if stack[len(stack)-1].keys[t] {
					return invalid("metadata", "key %q is given twice in one object", t)
				}
				stack[len(stack)-1].keys[t] = true
			}
		}
	}
}

// mergeStrings returns a's then b's strings without duplicates, in order
// of first appearance (a set, so 500,000 file names merge in linear time).
func mergeStrings(a, b []string) []string {
	var out []string
	seen := make(map[string]struct{}, len(a)+len(b))
	for _, l := range [][]string{a, b} {
		for _, s := range l {
			if _, dup := seen[s]; !dup {
				seen[s] = struct{}{}
				out = append(out, s)
			}
		}
	}
	return out
}

// redactJSON returns v (decoded JSON) with every string in it redacted;
// object keys are kept as they are.
func redactJSON(r *redact.Redactor, v any, rep *redact.Report) any {
	switch x := v.(type) {
	case string:
		s, n := r.Redact(x)
		rep.Add(n)
		return s
	case []any:
		for i := range x {
			x[i] = redactJSON(r, x[i], rep)
		}
	case map[string]any:
		for k := range x {
			x[k] = redactJSON(r, x[k], rep)
		}
	}
	return v
}

// redactStrings redacts every element of l in place.
func redactStrings(r *redact.Redactor, l []string, rep *redact.Report) {
	for i, s := range l {
		var n redact.Report
		l[i], n = r.Redact(s)
		rep.Add(n)
	}
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number, float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return "an unknown value"
}

// Mentions returns the agent names referenced as @name in content, in order
// of first appearance, without duplicates. An @ preceded by a letter, digit
// or one of . _ - @ (as in an e-mail address) is not a mention; trailing
// '.', '-' and '_' are not part of the name.
func Mentions(content string) []string {
	out := []string{}
	for i := 0; i < len(content); i++ {
		if content[i] != '@' {
			continue
		}
		if i > 0 {
			prev, _ := utf8.DecodeLastRuneInString(content[:i])
			if isNameRune(prev) || prev == '@' {
				continue
			}
		}
		j := i + 1
		for j < len(content) && j-i-1 < 64 && isNameByte(content[j]) {
			j++
		}
		name := strings.TrimRight(content[i+1:j], ".-_")
		if agentRE.MatchString(name) && !slices.Contains(out, name) {
			out = append(out, name)
		}
		i = j - 1
	}
	return out
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
}

func isNameRune(r rune) bool {
	return r < utf8.RuneSelf && isNameByte(byte(r)) || r >= utf8.RuneSelf && r != utf8.RuneError && (isLetterOrDigit(r))
}

// metadataType is the "type" string of a metadata object, "" without one:
// the implementation plan keeps a message's type there, so it is the type
// when the type field itself is absent.
func metadataType(md json.RawMessage) string {
	var v struct {
		Type any `json:"type"`
	}
	if json.Unmarshal(md, &v) != nil {
		return ""
	}
	t, _ := v.Type.(string)
	return t
}
