package ops

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/search"
)

// BytesPerToken is the estimate recall budgets with: English text and
// code average about four bytes per token in the agents' tokenizers.
const BytesPerToken = 4

// Recalled is what a recall puts into the agent's context.
type Recalled struct {
	// Text is the context to add; "" when nothing is recalled.
	Text string
	// IDs are the messages Text lists, in its order.
	IDs []int64
	// Best and Coverage are what a per-prompt recall's gate weighed (the
	// largest calibrated relevance its search found, and
	// search.PromptCoverage of the messages found), also when it injected
	// nothing.
	Best, Coverage float64
}

// PromptRecall is a per-prompt recall: the stored messages of a project
// that a search with the prompt finds.
type PromptRecall struct {
	Prompt  string
	Project string
	// BudgetTokens bounds Text in estimated tokens (BytesPerToken each).
	BudgetTokens int
	// Seen reports messages already recalled in the session; they are
	// left out. nil leaves nothing out.
	Seen func(id int64) bool
	// OmitStale leaves out messages whose breadcrumbs changed or are
	// gone at the repository's HEAD instead of marking them.
	OmitStale bool
	// MinEvidence is the gate: the search.PromptEvidence below which
	// nothing is recalled. nil means search.DefaultPromptEvidence, 0 no
	// gate (the search's relevance floor only).
	MinEvidence *float64
	Now         time.Time
}

// Bounds of a prompt recall.
const (
	// promptQueryBytes bounds the part of a prompt searched with: a
	// pasted log or file says less per byte than the question above it,
	// and a search's cost grows with its terms.
	promptQueryBytes = 2000
	// promptCandidates is how many of the results above the relevance
	// floor are candidates for the recall before those already recalled
	// are left out.
	promptCandidates = 30
	// promptGateResults is how many results, above the floor or not, the
	// gate reads (search.PromptCoverage): each side of a hybrid search
	// retrieves 100 candidates for up to 50 results, as many as for the
	// 30 recall lists.
	promptGateResults = 50
	// promptItemBytes bounds one recalled message's text.
	promptItemBytes = 400
)

// ForPrompt searches the project's messages with the prompt (hybrid, the
// engine's default ranking and relevance floor) and lists the best of
// those not recalled yet in the session, one line each, within the
// budget. A prompt that finds nothing new recalls nothing, and so does one
// whose search finds too little evidence (PromptRecall.MinEvidence, the
// prompt gate of engine/search).
func ForPrompt(ctx context.Context, eng *engine.Engine, r PromptRecall) (Recalled, error) {
	query := strings.TrimSpace(r.Prompt)
	if query == "" || r.Project == "" || r.BudgetTokens <= 0 {
		return Recalled{}, nil
	}
	minEvidence := search.DefaultPromptEvidence
	if r.MinEvidence != nil {
		minEvidence = *r.MinEvidence
	}
	if math.IsNaN(minEvidence) || minEvidence < 0 {
		return Recalled{}, fmt.Errorf("ops: prompt recall: min evidence must be >= 0, got %v", minEvidence)
	}
	query = cut(query, promptQueryBytes)
	every := 0.0
	res, err := eng.Search(ctx, engine.SearchRequest{
		Query:    query,
		Filter:   engine.Filter{Project: r.Project},
		Limit:    promptGateResults,
		MinScore: &every, // the gate reads the results below the floor too
	})
	if err != nil {
		return Recalled{}, err
	}
	var gate Recalled
	texts := make([]string, len(res))
	for i, h := range res {
		gate.Best, texts[i] = max(gate.Best, h.Scores.Fused), h.Message.Content
	}
	gate.Coverage = search.PromptCoverage(query, texts)
	if minEvidence > 0 && search.PromptEvidence(gate.Best, gate.Coverage) < minEvidence {
		return gate, nil
	}
	ms := make([]engine.Message, 0, promptCandidates)
	kept := 0
	for _, h := range res {
		if !search.Kept(h.Scores.Fused, search.DefaultFloor) {
			continue
		}
		if kept++; kept > promptCandidates {
			break
		}
		if r.Seen != nil && r.Seen(h.Message.ID) {
			continue
		}
		ms = append(ms, h.Message)
	}
	header := fmt.Sprintf("cairn memory for this prompt (project %s; get_message ID reads one in full):\n", r.Project)
	got := layout(header, ms, r.BudgetTokens*BytesPerToken, promptItemBytes, r.OmitStale, r.Now)
	got.Best, got.Coverage = gate.Best, gate.Coverage
	return got, nil
}

// layout lists ms one line each after header, skipping lines that would
// pass maxBytes, stale ones when omitStale, and repeats of a line already
// listed (the same text stored twice).
func layout(header string, ms []engine.Message, maxBytes, itemBytes int, omitStale bool, now time.Time) Recalled {
	var b strings.Builder
	var ids []int64
	texts := map[string]bool{}
	for _, m := range ms {
		mark, stale := staleness(m)
		if stale && omitStale {
			continue
		}
		text := oneLine(m.Content, itemBytes)
		if texts[text] {
			continue
		}
		line := Line(m, mark, text, now)
		if len(header)+b.Len()+len(line) > maxBytes {
			continue
		}
		texts[text] = true
		b.WriteString(line)
		ids = append(ids, m.ID)
	}
	if len(ids) == 0 {
		return Recalled{}
	}
	return Recalled{Text: header + b.String(), IDs: ids}
}

// Line is one recalled message: "- #ID (type, age, sender; mark) text".
// The type is left out for plain messages, the mark when every
// breadcrumb is valid or the marks are not known at HEAD.
func Line(m engine.Message, mark, text string, now time.Time) string {
	var parts []string
	if m.MessageType != "" && m.MessageType != engine.TypeMessage {
		parts = append(parts, m.MessageType)
	}
	parts = append(parts, Age(now.Sub(m.CreatedAt)), m.SenderID)
	meta := strings.Join(parts, ", ")
	if mark != "" {
		meta += "; " + mark
	}
	return fmt.Sprintf("- #%d (%s) %s\n", m.ID, meta, text)
}

// staleness describes the marks of m's breadcrumbs at the repository's
// HEAD ("changed a.go, moved b.go -> c.go") and says whether one changed
// or is gone. Marks cached at another commit say nothing of HEAD and are
// not shown.
func staleness(m engine.Message) (mark string, stale bool) {
	c := m.BreadcrumbCheck
	if c == nil || c.Status != engine.CheckCurrent {
		return "", false
	}
	var parts []string
	for _, k := range c.Marks {
		switch k.State {
		case engine.MarkChanged, engine.MarkGone:
			stale = true
			parts = append(parts, string(k.State)+" "+k.Ref)
		case engine.MarkMoved:
			parts = append(parts, "moved "+k.Ref+" -> "+k.MovedTo)
		}
	}
	if len(parts) == 0 {
		return "", false
	}
	if stale {
		return "STALE: " + strings.Join(parts, ", "), true
	}
	return strings.Join(parts, ", "), false
}

// Age is a short age: 5m, 3h, 12d, 4mo, 2y.
func Age(d time.Duration) string {
	switch {
	case d < time.Hour:
		return fmt.Sprintf("%dm", max(int(d/time.Minute), 0))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d/time.Hour))
	case d < 60*24*time.Hour:
		return fmt.Sprintf("%dd", int(d/(24*time.Hour)))
	case d < 2*365*24*time.Hour:
		return fmt.Sprintf("%dmo", int(d/(30*24*time.Hour)))
	}
	return fmt.Sprintf("%dy", int(d/(365*24*time.Hour)))
}

// Briefing is a session-start recall: a project's policies, decisions,
// patterns and notes, best first.
type Briefing struct {
	Project string
	// Sub is the working directory below the project's top ("" at the
	// top): records that name it count as more relevant.
	Sub       string
	MaxItems  int
	MaxBytes  int
	OmitStale bool
	Now       time.Time
}

// briefingTypes are the record types a briefing lists, in the order of its
// sections.
var briefingTypes = []struct{ typ, title string }{
	{engine.TypePolicy, "Policies"},
	{engine.TypeDecision, "Decisions"},
	{engine.TypePattern, "Patterns"},
	{engine.TypeReflection, "Notes"},
}

// briefingItemBytes bounds one record's text in a briefing.
const briefingItemBytes = 600

// Brief lists the project's records by section, best first within each
// by the quality profile (relevance 1 for a record that names the working
// directory, 0.5 for the rest of the project), within MaxItems and
// MaxBytes.
//
// The candidates are the newest MaxItems records of each of the
// project's channels (project:{p}:decisions|patterns|policies and every
// agent's agent-notes:{agent}:{p}): one indexed range read per channel,
// where one query over all of them would read and sort every record of
// the project.
func Brief(ctx context.Context, eng *engine.Engine, b Briefing) (Recalled, error) {
	if b.Project == "" || b.MaxItems <= 0 || b.MaxBytes <= 0 {
		return Recalled{}, nil
	}
	items, err := briefingItems(ctx, eng, b)
	if err != nil || len(items) == 0 {
		return Recalled{}, err
	}
	header := fmt.Sprintf("Memory from cairn for project %q (the most useful records; search for more with the cairn MCP tools):\n", b.Project)
	var out strings.Builder
	var ids []int64
	for _, sec := range briefingTypes {
		wroteTitle := false
		for _, m := range items {
			if m.MessageType != sec.typ {
				continue
			}
			mark, stale := staleness(m)
			if stale && b.OmitStale {
				continue
			}
			line := Line(m, mark, oneLine(m.Content, briefingItemBytes), b.Now)
			title := ""
			if !wroteTitle {
				title = sec.title + ":\n"
			}
			if len(header)+out.Len()+len(title)+len(line) > b.MaxBytes {
				break
			}
			out.WriteString(title + line)
			ids = append(ids, m.ID)
			wroteTitle = true
		}
	}
	if len(ids) == 0 {
		return Recalled{}, nil
	}
	return Recalled{Text: header + out.String(), IDs: ids}, nil
}

func briefingItems(ctx context.Context, eng *engine.Engine, b Briefing) ([]engine.Message, error) {
	wanted := map[string]bool{}
	for _, t := range briefingTypes {
		wanted[t.typ] = true
	}
	quality := engine.Ranking{Profile: engine.ProfileQuality}
	type scored struct {
		m     engine.Message
		score float64
	}
	seen := map[string]bool{}
	var items []scored
	for _, scope := range []engine.Scope{{Kind: engine.ScopeProject, Project: b.Project}, {Kind: engine.ScopeNotes, Project: b.Project}} {
		chans, err := eng.ListChannels(ctx, scope)
		if err != nil {
			return nil, err
		}
		for _, ch := range chans {
			if seen[ch.ID] {
				continue
			}
			seen[ch.ID] = true
			ms, err := eng.GetChannelMessages(ctx, ch.ID, 0, b.MaxItems)
			if err != nil {
				return nil, err
			}
			for _, m := range ms {
				if !wanted[m.MessageType] || m.SupersededBy != 0 {
					continue
				}
				rel := 0.5
				if b.Sub == "" || mentionsDir(m.Content, b.Sub) {
					rel = 1
				}
				s, err := quality.Score(rel, m.Confidence, b.Now.Sub(m.CreatedAt))
				if err != nil {
					return nil, err
				}
				items = append(items, scored{m, s})
			}
		}
	}
	sort.SliceStable(items, func(i, j int) bool {
		if items[i].score != items[j].score {
			return items[i].score > items[j].score
		}
		return items[i].m.ID > items[j].m.ID
	})
	if len(items) > b.MaxItems {
		items = items[:b.MaxItems]
	}
	out := make([]engine.Message, len(items))
	for i, it := range items {
		out[i] = it.m
		if it.m.HasBreadcrumbs { // a channel listing carries no marks
			m, err := eng.GetMessage(ctx, it.m.ID)
			if err != nil {
				return nil, err
			}
			out[i] = m
		}
	}
	return out, nil
}

func mentionsDir(content, sub string) bool {
	return strings.Contains(content, sub) || strings.Contains(content, filepath.Base(sub))
}

// oneLine folds s onto one line and cuts it to at most n bytes.
func oneLine(s string, n int) string {
	return cut(strings.Join(strings.Fields(s), " "), n)
}

// cut cuts s to at most n bytes on a rune boundary, ending it with "…"
// when it was cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	c := n - len("…")
	for c > 0 && !utf8.RuneStart(s[c]) {
		c--
	}
	return s[:c] + "…"
}
