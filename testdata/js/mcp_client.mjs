// mcp_client.mjs drives `cairn mcp` with the official MCP TypeScript SDK
// client over stdio and prints one JSON object per step, for the Go test in
// cmd/cairn to check. Usage: node mcp_client.mjs CAIRN_BINARY DATA_DIR [FLAGS...]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [bin, dataDir, ...extra] = process.argv.slice(2);
if (!bin || !dataDir) {
  console.error("usage: node mcp_client.mjs CAIRN_BINARY DATA_DIR [cairn mcp flags...]");
  process.exit(2);
}

const out = (step, value) => console.log(JSON.stringify({ step, ...value }));

const transport = new StdioClientTransport({
  command: bin,
  args: ["mcp", "--data-dir", dataDir, ...extra],
  stderr: "inherit",
});
const client = new Client({ name: "cairn-test", version: "1.0.0" });

const started = performance.now();
await client.connect(transport);
out("initialize", {
  server: client.getServerVersion(),
  ms: performance.now() - started,
});

const tools = await client.listTools();
out("list_tools", {
  tools: tools.tools.map((t) => ({
    name: t.name,
    has_description: (t.description ?? "").length > 20,
    schema_type: t.inputSchema?.type,
    title: t.title ?? t.annotations?.title ?? "",
    open_world: t.annotations?.openWorldHint ?? null,
  })),
});

const call = async (step, name, args) => {
  try {
    const r = await client.callTool({ name, arguments: args });
    out(step, { is_error: !!r.isError, structured: r.structuredContent ?? null, text: r.content?.[0]?.text ?? "" });
    return r;
  } catch (e) {
    out(step, { protocol_error: true, code: e.code ?? null, message: String(e.message) });
    return null;
  }
};

const stored = await call("store", "store_message", {
  channel: "project:demo:decisions",
  sender: "planner",
  project: "demo",
  content: "We chose SQLite WAL mode so readers never block the writer.\nMeasured: 3x fewer lock waits.",
  confidence: 0.9,
  type: "decision",
  breadcrumbs: { files: ["engine/engine.go"] },
});
await call("store_again", "store_message", {
  channel: "project:demo:decisions",
  sender: "planner",
  project: "demo",
  content: "We chose SQLite WAL mode so readers never block the writer.\nMeasured: 3x fewer lock waits.",
  confidence: 0.9,
  type: "decision",
});
await call("note", "write_note", { agent: "planner", project: "demo", content: "Remember: run the race tests before a release.", confidence: 0.7 });
await call("search", "search_messages", { query: "readers block writer", limit: 5 });
await call("search_full", "search_messages", { query: "lock waits", full: true });
const id = stored?.structuredContent?.id ?? 1;
await call("get", "get_message", { id });
await call("notes", "get_notes", { agent: "planner" });
await call("channel", "get_channel_messages", { channel: "project:demo:decisions" });
await call("channels", "list_channels", {});
// Bad arguments: tool errors, never crashes.
await call("bad_confidence", "store_message", { channel: "project:demo:decisions", sender: "planner", content: "x", confidence: 7 });
await call("bad_empty", "write_note", { agent: "planner", content: "" });
await call("bad_type", "get_message", { id: "seven" });
await call("missing", "get_message", { id: 999999 });
await call("bad_limit", "search_messages", { query: "x", limit: -3 });
await call("unknown_tool", "no_such_tool", {});
// Still alive after all of that.
await call("after", "search_messages", { query: "race tests" });
// The implementation plan's and the vector-memory design's spellings.
await call("plan_store", "store_message", {
  channel_id: "global:general",
  sender_id: "planner",
  content: "Blue-green deploys removed the release downtime.",
  metadata: { type: "decision" },
  confidence: 0.8,
});
await call("plan_search", "search_messages", {
  query: "release downtime",
  filters: { channel_ids: ["global:general"], message_type: "decision", min_confidence: 0.5 },
  limit: 5,
  ranking_profile: { similarity_weight: 0.6, confidence_weight: 0.4, decay_weight: 0, decay_half_life_hours: 168 },
});
await call("notes_channel", "get_notes_channel", { agent_id: "planner" });
await call("memory_store", "memory_store", { sender_id: "planner", content: "Staging credentials rotate every Monday." });

await client.close();
