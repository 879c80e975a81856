// Package claudecode reads Claude Code session transcripts.
//
// Claude Code writes one JSONL file per session under its projects folder
// (~/.claude/projects by default): {project}/{sessionId}.jsonl, where
// {project} is the working directory with every character outside
// [A-Za-z0-9] replaced by '-', plus agent-{id}.jsonl files (also under
// {project}/{sessionId}/subagents/) for sub-agent sidechains. There is no
// official schema; the format below is what Claude Code 1.x and 2.x write,
// and the reader is lenient about fields it does not need.
//
// Each line is one JSON object (a record) with at least "type". Message
// records (type user, assistant or system) carry uuid, parentUuid (null for
// the first record and after a compaction; logicalParentUuid then links
// across), sessionId, timestamp (RFC 3339, UTC, milliseconds), isSidechain,
// userType, cwd, gitBranch and version, and "message": {role, content}. The
// content is a string or an array of blocks: text {text}, thinking
// {thinking, signature}, tool_use {id, name, input}, tool_result
// {tool_use_id, content (string or blocks), is_error} and image {source}.
// Assistant messages also carry model, stop_reason and usage; user records
// that open a compacted segment carry isCompactSummary. Summary records
// ({type: summary, summary, leafUuid}) name a conversation branch and have no
// uuid. Other record types (file-history-snapshot, queue-operation,
// custom-title, progress, ...) carry no conversation content.
//
// Read streams the records of one file to a callback. Lines that cannot be
// used are skipped and counted in the Report by reason: malformed JSON,
// invalid UTF-8, lines longer than Options.MaxLineBytes, a truncated last
// line (no newline: Claude Code is probably still writing it, so it is not
// consumed and a later read starting at Report.EndOffset picks it up), a
// missing or malformed required field, and record types without content.
// Strings inside records are redacted (Options.Redactor) before the callback
// sees them.
//
// Canonical JSON: Canonical, SplitContent and JoinContent re-encode records
// with sorted object keys, numbers kept as written and no HTML escaping, so
// that a record split into its envelope and its content and joined again is
// byte-identical, which the exports rely on.
//
// Everything here is safe for concurrent use; nothing holds state.
// It imports engine/redact and nothing else from the project.
package claudecode
