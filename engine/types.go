package engine

import (
	"encoding/json"
	"time"
)

// Message is one stored message. JSON field names are the ones every surface
// (CLI --json, HTTP, MCP) uses.
type Message struct {
	ID              int64           `json:"id"`
	ChannelID       string          `json:"channel_id"`
	SenderID        string          `json:"sender_id"`
	SenderProjectID string          `json:"sender_project_id"`
	Content         string          `json:"content"`
	ContentHash     string          `json:"content_hash"`
	Confidence      float64         `json:"confidence"`
	MessageType     string          `json:"message_type"`
	Metadata        json.RawMessage `json:"metadata"`
	Mentions        []string        `json:"mentions"`
	WordCount       int             `json:"word_count"`
	HasBreadcrumbs  bool            `json:"has_breadcrumbs"`
	CreatedAt       time.Time       `json:"created_at"`
	// Supersedes is the id of the earlier message this one replaces (0 for
	// none); SupersededBy the id of the message that replaced this one (0
	// while it is current). A superseded message leaves search and recall
	// unless asked for (Filter.IncludeSuperseded).
	Supersedes   int64 `json:"supersedes,omitempty"`
	SupersededBy int64 `json:"superseded_by,omitempty"`
	// BreadcrumbCheck is the cached check of the breadcrumbs at the HEAD
	// of the repository they were written in, set by searches and
	// GetMessage when the message was checked there.
	BreadcrumbCheck *BreadcrumbCheck `json:"breadcrumb_check,omitempty"`
}

// Breadcrumbs point from a message to where its knowledge came from. They
// are stored in the message's metadata under "breadcrumbs" as an object of
// string arrays by kind: {"files": [...], "commits": [...], "issues": [...],
// "prs": [...], "modified_files": [...], ...} (engine/breadcrumbs.go).
type Breadcrumbs struct {
	// Files are paths, each with an optional line range (path:45-89).
	Files   []string `json:"files,omitempty"`
	Commits []string `json:"commits,omitempty"`
	Issues  []string `json:"issues,omitempty"`
	PRs     []string `json:"prs,omitempty"`
	// Other holds every other kind by name (BreadcrumbKinds lists those
	// checked for form; other names are kept as given).
	Other map[string][]string `json:"-"`
}

// Empty reports whether b has no breadcrumb.
func (b Breadcrumbs) Empty() bool {
	for _, l := range b.Other {
		if len(l) > 0 {
			return false
		}
	}
	return len(b.Files) == 0 && len(b.Commits) == 0 && len(b.Issues) == 0 && len(b.PRs) == 0
}

// Breadcrumbs returns the breadcrumbs stored in m's metadata.
func (m Message) Breadcrumbs() Breadcrumbs {
	var md struct {
		Breadcrumbs Breadcrumbs `json:"breadcrumbs"`
	}
	_ = json.Unmarshal(m.Metadata, &md) // stored metadata was validated on write
	return md.Breadcrumbs
}

// Default message types.
const (
	TypeMessage    = "message"
	TypeReflection = "reflection"
	TypeDecision   = "decision"
	TypePattern    = "pattern"
	TypePolicy     = "policy"
)

// DefaultConfidence is a message's confidence when none is given.
const DefaultConfidence = 0.5

// NewMessage is the input of StoreMessage.
type NewMessage struct {
	// Channel is the channel id. agent-notes:{agent}[:{project}] and
	// project:{project}:{decisions|patterns|policies} channels are created
	// on first write; other channels must exist (CreateChannel).
	Channel string
	// Sender is the writing agent's name; Project the sender's project id
	// ("" for none).
	Sender  string
	Project string
	// Content is the message text: non-empty, valid UTF-8, no NUL bytes, at
	// most Options.MaxContentBytes bytes.
	Content string
	// Metadata is a JSON object, or empty for {}.
	Metadata json.RawMessage
	// Breadcrumbs are merged into metadata.breadcrumbs (appended, without
	// duplicates).
	Breadcrumbs Breadcrumbs
	// Confidence in [0,1]; nil means DefaultConfidence.
	Confidence *float64
	// Type is the message type; "" means TypeMessage.
	Type string
	// CreatedAt is the creation time (stored in UTC at millisecond
	// precision); zero means now. Imports set it.
	CreatedAt time.Time
	// Supersedes names an earlier message this one corrects or replaces
	// (0 for none): it must exist and not be superseded already. The
	// earlier message then leaves search and recall, and its reads say
	// which message replaced it.
	Supersedes int64

	// repo is recorded as the breadcrumbs' repository (RepoKey) when
	// metadata names none: Options.BreadcrumbRepo on live writes, ""
	// (keep what the message carries) on imports and copies.
	repo string
}

// NewNote is the input of WriteNote: a message from Agent to its notes
// channel agent-notes:{agent} or, with a project, agent-notes:{agent}:{project}.
type NewNote struct {
	Agent       string
	Project     string
	Content     string
	Metadata    json.RawMessage
	Breadcrumbs Breadcrumbs
	Confidence  *float64
	// Type is the message type; "" means TypeReflection.
	Type      string
	CreatedAt time.Time
	// Supersedes is NewMessage.Supersedes.
	Supersedes int64
}

// WriteResult says what a write did.
type WriteResult struct {
	ID        int64  `json:"id"`
	ChannelID string `json:"channel_id"`
	// Created is false when the same content from the same sender was
	// already in the channel: ID is then the existing message's id and
	// nothing was written.
	Created     bool   `json:"created"`
	ContentHash string `json:"content_hash"`
	// NearDuplicate is true when the write was not stored because an
	// earlier message by the same sender in the same channel says nearly
	// the same (cosine Similarity at or above Options.NearDuplicateCosine):
	// ID is that message's. Created is then false.
	NearDuplicate bool    `json:"near_duplicate,omitempty"`
	Similarity    float64 `json:"similarity,omitempty"`
	// Redactions counts the spans Options.Redactor replaced, per rule, as
	// "rule=n" pairs sorted by rule ("github-pat=1 jwt=2"); "" for none.
	Redactions string `json:"redactions,omitempty"`
}

// Channel types.
const (
	ChannelAgentNotes = "agent-notes"
	ChannelProject    = "project"
	ChannelPlain      = "channel"
)

// ProjectChannelNames returns the names of the channels every project has:
// project:{project}:{name}.
func ProjectChannelNames() []string { return []string{"decisions", "patterns", "policies"} }

// Channel is a channel with its message count.
type Channel struct {
	ID                  string    `json:"id"`
	ChannelType         string    `json:"channel_type"`
	Name                string    `json:"name"`
	Description         string    `json:"description"`
	OwnerAgentName      string    `json:"owner_agent_name,omitempty"`
	OwnerAgentProjectID string    `json:"owner_agent_project_id,omitempty"`
	ProjectID           string    `json:"project_id,omitempty"`
	MessageCount        int64     `json:"message_count"`
	LastMessageAt       time.Time `json:"last_message_at,omitzero"`
	CreatedAt           time.Time `json:"created_at"`
}

// NewChannel is the input of CreateChannel.
type NewChannel struct {
	// ID is the channel id: letters, digits and . _ - / :, starting with a
	// letter or digit, at most 128 bytes, and not in the agent-notes: or
	// project: namespaces (those are created on first write).
	ID string
	// Name is a display name; "" means ID.
	Name        string
	Description string
	// Project optionally ties the channel to a project.
	Project string
}

// Scope selects channels for ListChannels.
type Scope struct {
	// Kind is "" or "all" (every channel), "notes" (agent-notes channels)
	// or "project" (project channels and channels tied to a project).
	Kind string
	// Project, when set, keeps only channels of that project (for notes:
	// the owner's project).
	Project string
	// Agent, when set with Kind "notes", keeps only that agent's notes channels.
	Agent string
}

// Agent is a writer known to the store.
type Agent struct {
	Name         string `json:"name"`
	ProjectID    string `json:"project_id"`
	Description  string `json:"description"`
	MessageCount int64  `json:"message_count"`
	// CreatedAt and LastActive are the times of the agent's earliest and
	// latest message (a message's own created_at, so an import dates the
	// agent by what it wrote, not by when it was imported).
	CreatedAt  time.Time `json:"created_at"`
	LastActive time.Time `json:"last_active"`
}
