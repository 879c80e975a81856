package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cairn-dev/cairn/engine"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tool hints: every tool works on the local store only (openWorldHint
// false); reads say so, writes are additive and idempotent (the same
// content from the same sender in the same channel is stored once), and
// only memory_delete destroys.
func readHints(title string) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)}
}

func writeHints(title string) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{Title: title, DestructiveHint: ptr(false), IdempotentHint: true, OpenWorldHint: ptr(false)}
}

// Tool sets a server can serve (Options.Tools). Core is the default: the
// implementation plan's four tools and get_message, which reads in full a
// message that a search or a recall listed by id. The others are opt-in,
// because every tool's definition is sent to the model in every session.
const (
	ToolsCore     = "core"     // store_message, search_messages, get_message, get_notes_channel, list_channels
	ToolsNotes    = "notes"    // write_note, get_notes
	ToolsChannels = "channels" // get_channel_messages
	ToolsUnread   = "unread"   // get_unread, mark_read
	ToolsMemory   = "memory"   // the vector-memory design's memory_store, memory_search, memory_get, memory_stats, memory_delete
	ToolsAll      = "all"
)

// ToolSets lists the tool set names Options.Tools accepts.
func ToolSets() []string {
	return []string{ToolsCore, ToolsNotes, ToolsChannels, ToolsUnread, ToolsMemory, ToolsAll}
}

// ErrUnknownToolSet is returned by New for a tool set it does not know.
var ErrUnknownToolSet = errors.New("mcpserver: unknown tool set")

// toolSets resolves Options.Tools: nil means core; all means every set.
func toolSets(names []string) (map[string]bool, error) {
	if len(names) == 0 {
		names = []string{ToolsCore}
	}
	sets := map[string]bool{}
	for _, n := range names {
		if !slices.Contains(ToolSets(), n) {
			return nil, fmt.Errorf("%w %q (want %s)", ErrUnknownToolSet, n, strings.Join(ToolSets(), ", "))
		}
		if n == ToolsAll {
			for _, m := range ToolSets() {
				sets[m] = true
			}
		}
		sets[n] = true
	}
	return sets, nil
}

// addTools registers the tools of the sets asked for. Beside cairn's own
// names there are the names the designs use (get_notes_channel from the
// implementation plan; memory_store, memory_search and memory_get from
// the vector-memory design, over the same handlers as store_message,
// search_messages and get_message); where only argument names differ
// (channel_id, sender_id, filters, ranking_profile) the existing tool
// takes both spellings instead of a second tool.
func (s *Server) addTools(sets map[string]bool) error {
	storeSchema, err := inputSchema[StoreMessageInput](writeBounds())
	if err != nil {
		return err
	}
	noteSchema, err := inputSchema[WriteNoteInput](writeBounds())
	if err != nil {
		return err
	}
	searchSchema, err := inputSchema[SearchInput](searchBounds())
	if err != nil {
		return err
	}
	compactSearch(searchSchema)
	// The opt-in memory_search carries every argument's description; the
	// default search_messages only the core ones (compactSearch).
	describedSearch, err := inputSchema[SearchInput](searchBounds())
	if err != nil {
		return err
	}
	if err := describe(describedSearch, searchDescriptions); err != nil {
		return err
	}
	notesSchema, err := inputSchema[GetNotesInput](listBounds())
	if err != nil {
		return err
	}
	channelBounds := listBounds()
	channelBounds["max_age_hours"] = between(0, engine.MaxHours)
	channelSchema, err := inputSchema[ChannelMessagesInput](channelBounds)
	if err != nil {
		return err
	}
	listSchema, err := inputSchema[ListChannelsInput](map[string]bound{"scope": oneOf(engine.ScopeAll, engine.ScopeNotes, engine.ScopeProject)})
	if err != nil {
		return err
	}
	idSchema, err := inputSchema[GetMessageInput](map[string]bound{"id": between(1, 1<<53)})
	if err != nil {
		return err
	}
	if sets[ToolsCore] {
		mcp.AddTool(s.mcp, tool("store_message", writeHints("Store a message"), storeSchema,
			"Store what you learned (a decision, pattern, policy or reflection) so later agents find it; project knowledge goes to project:{project}:decisions, :patterns or :policies, your own notes to agent-notes:{you}. The same content twice returns the existing id."), writes(s, s.storeMessage))
		mcp.AddTool(s.mcp, tool("search_messages", readHints("Search messages"), searchSchema,
			"Search stored knowledge by meaning and keyword before a task or when unsure; results are compact (id, score, first line, breadcrumb marks). Other fields: as in cairn's HTTP search API."), s.search)
		mcp.AddTool(s.mcp, tool("get_message", readHints("Read a message"), idSchema,
			"Read one whole message by id (a search result or a recalled #id)."), s.getMessage)
		mcp.AddTool(s.mcp, tool("get_notes_channel", readHints("Name an agent's notes channel"), nil,
			"The id of an agent's notes channel (agent-notes:{agent_id}[:{project}]), to write to, read or search."), s.notesChannel)
		mcp.AddTool(s.mcp, tool("list_channels", readHints("List channels"), listSchema,
			"List channels with their message counts, to see what knowledge exists."), s.listChannels)
	}
	if sets[ToolsNotes] {
		mcp.AddTool(s.mcp, tool("write_note", writeHints("Write a note"), noteSchema,
			"Write a note to your own notes channel (agent-notes:{agent}, or agent-notes:{agent}:{project} with a project): reflections and lessons you want to find again in a later task."), writes(s, s.writeNote))
		mcp.AddTool(s.mcp, tool("get_notes", readHints("Read an agent's notes"), notesSchema,
			"Read an agent's notes, newest first."), s.getNotes)
	}
	if sets[ToolsChannels] {
		mcp.AddTool(s.mcp, tool("get_channel_messages", readHints("Read a channel"), channelSchema,
			"Read a channel's messages, newest first."), s.channelMessages)
	}
	if sets[ToolsUnread] {
		s.addUnreadTools()
	}
	if sets[ToolsMemory] {
		mcp.AddTool(s.mcp, tool("memory_store", writeHints("Store a memory"), storeSchema,
			"store_message with the channel optional: without channel the memory goes to your notes channel (agent-notes:{sender})."), writes(s, s.memoryStore))
		mcp.AddTool(s.mcp, tool("memory_search", readHints("Search memories"), describedSearch,
			"The same search as search_messages, under the vector-memory design's name."), s.search)
		mcp.AddTool(s.mcp, tool("memory_get", readHints("Read a memory"), idSchema,
			"The same as get_message: one whole message by id."), s.getMessage)
		mcp.AddTool(s.mcp, tool("memory_stats", readHints("Store statistics"), nil,
			"Counts of stored messages per channel, type and agent, imported sessions, and bytes on disk."), s.stats)
		mcp.AddTool(s.mcp, tool("memory_delete", &mcp.ToolAnnotations{Title: "Delete a message", DestructiveHint: ptr(true), IdempotentHint: true, OpenWorldHint: ptr(false)}, nil,
			"Delete one message for good (for example a wrong or leaked one). Guarded: confirm must be 'delete message ID' with the message's id. Deleted messages cannot be recovered."), writes(s, s.delete))
	}
	return nil
}

// writes guards a write tool's handler: on a read-only server
// (Options.ReadOnly) it answers the tool error read_only naming why,
// before the engine is asked.
func writes[In, Out any](s *Server, h mcp.ToolHandlerFor[In, Out]) mcp.ToolHandlerFor[In, Out] {
	return func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		if s.opts.ReadOnly != "" {
			var zero Out
			return nil, zero, &ToolError{Code: "read_only", Err: errors.New(s.opts.ReadOnly)}
		}
		return h(ctx, req, in)
	}
}

// tool is one tool's description; its title is the annotations' title.
func tool(name string, hints *mcp.ToolAnnotations, schema *jsonschema.Schema, description string) *mcp.Tool {
	// The output schema is left open: results are described by the
	// tool's description, and a full schema of every result field would
	// cost more of the model's context than the rest of the definition.
	t := &mcp.Tool{Name: name, Title: hints.Title, Description: description, Annotations: hints, OutputSchema: &jsonschema.Schema{Type: "object"}}
	if schema != nil { // else the SDK infers it from the handler
		t.InputSchema = schema
	}
	return t
}

// NotesChannelInput is get_notes_channel's arguments (agent_id as the
// implementation plan names it; agent as cairn's other tools do).
type NotesChannelInput struct {
	AgentID string `json:"agent_id,omitempty" jsonschema:"the agent (required; alias agent)"`
	Agent   string `json:"agent,omitempty" jsonschema:"alias of agent_id"`
	Project string `json:"project,omitempty" jsonschema:"the project, for the agent's notes about one project"`
}

// NotesChannelOutput is an agent's notes channel id.
type NotesChannelOutput struct {
	ChannelID string `json:"channel_id"`
}

func (s *Server) notesChannel(_ context.Context, _ *mcp.CallToolRequest, in NotesChannelInput) (*mcp.CallToolResult, NotesChannelOutput, error) {
	agent, err := aliased("agent_id", in.AgentID, "agent", in.Agent, true)
	if err != nil {
		return nil, NotesChannelOutput{}, err
	}
	id := engine.NotesChannelID(agent, in.Project)
	return nil, NotesChannelOutput{ChannelID: id}, nil
}
