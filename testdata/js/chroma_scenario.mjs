// Runs one scenario with a real chromadb JS client against a Chroma-compatible
// server and prints one normalized JSON line per step, so that a test can
// compare cairn serve with the real Chroma 1.0.0 server.
//
//   node chroma_scenario.mjs URL DATABASE [--client=3.5.0|3.0.17]
//
// Every operation, filter and error case the client can send; embeddings are
// always passed explicitly (no embedding function). Volatile values (UUIDs,
// heartbeat) are normalized; floats are rounded to 6 significant digits
// because float32 rounding order differs between implementations (the raw
// HTTP cases check exact formatting).

const [url, database, ...rest] = process.argv.slice(2);
if (!url || !database) {
  console.error("usage: node chroma_scenario.mjs URL DATABASE [--client=3.5.0|3.0.17]");
  process.exit(2);
}
const clientVersion = (rest.find((a) => a.startsWith("--client=")) || "--client=3.5.0").slice(9);
const mod = clientVersion === "3.0.17" ? await import("chromadb-3.0.17") : await import("chromadb");
const { ChromaClient, AdminClient } = mod;

const u = new URL(url);
const conn = { host: u.hostname, port: Number(u.port), ssl: false };
const tenant = "default_tenant";

// Silence the client's warnings about missing embedding functions.
console.warn = () => {};

const out = [];
const uuidRe = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

function norm(v, key) {
  if (v === null || v === undefined) return v ?? null;
  if (typeof v === "string") return v.replace(uuidRe, "<uuid>").split(database).join("${db}");
  if (typeof v === "number") {
    if (key === "heartbeat") return "<ns>";
    if (Number.isInteger(v)) return v;
    return Number(v.toPrecision(6));
  }
  if (typeof v === "bigint") return String(v);
  if (Array.isArray(v)) return v.map((x) => norm(x));
  if (v instanceof Float32Array || ArrayBuffer.isView(v)) return Array.from(v).map((x) => norm(x));
  if (typeof v === "object") {
    const o = {};
    for (const k of Object.keys(v).sort()) {
      if (typeof v[k] === "function") continue;
      o[k] = norm(v[k], k);
    }
    return o;
  }
  return v;
}

function describeCollection(c) {
  return {
    name: c.name,
    id: c.id,
    metadata: c.metadata ?? null,
    configuration: c.configuration ?? null,
  };
}

async function step(name, fn) {
  try {
    const r = await fn();
    out.push({ step: name, ok: norm(r === undefined ? null : r) });
  } catch (e) {
    out.push({ step: name, error: e?.name || e?.constructor?.name || "Error", message: norm(String(e?.message ?? e)) });
  }
}

const admin = new AdminClient(conn);
await step("create database", () => admin.createDatabase({ name: database, tenant }));
const client = new ChromaClient({ ...conn, tenant, database });

await step("heartbeat", async () => ({ heartbeat: await client.heartbeat() }));
await step("version", () => client.version());
await step("list collections (empty)", async () => (await client.listCollections()).map(describeCollection));
await step("count collections (empty)", () => client.countCollections());
await step("reset (disabled)", () => client.reset());
await step("get tenant", () => admin.getTenant({ name: tenant }));
await step("get database", async () => {
  const d = await admin.getDatabase({ name: database, tenant });
  return { name: d.name, tenant: d.tenant };
});
await step("create tenant short name", () => admin.createTenant({ name: "ab" }));
await step("get missing database", () => admin.getDatabase({ name: "no_such_db_" + database, tenant }));

const ef = { embeddingFunction: null };
let coll, cos, ip;
await step("create collection", async () => {
  coll = await client.createCollection({ name: "scenario", metadata: { owner: "cairn", n: 1, f: 0.5, b: true }, ...ef });
  return describeCollection(coll);
});
await step("create duplicate collection", () => client.createCollection({ name: "scenario", ...ef }));
await step("create bad name", () => client.createCollection({ name: "a b", ...ef }));
await step("getOrCreate existing (metadata ignored)", async () =>
  describeCollection(await client.getOrCreateCollection({ name: "scenario", metadata: { other: 1 }, ...ef })));
await step("create cosine collection", async () => {
  cos = await client.createCollection({ name: "scenario_cos", configuration: { hnsw: { space: "cosine" } }, ...ef });
  return describeCollection(cos);
});
await step("create ip collection", async () => {
  ip = await client.createCollection({ name: "scenario_ip", metadata: { "hnsw:space": "ip" }, ...ef });
  return describeCollection(ip);
});
await step("get collection", async () => describeCollection(await client.getCollection({ name: "scenario", ...ef })));
await step("get missing collection", () => client.getCollection({ name: "nope_nope", ...ef }));
await step("list collections", async () =>
  (await client.listCollections()).map(describeCollection).sort((a, b) => a.name.localeCompare(b.name)));
await step("count collections", () => client.countCollections());

const ids = ["r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8"];
const embeddings = [[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0], [0, 1, 1], [1, 0, 1], [2, 2, 2], [0.1, 0.2, 0.3]];
const documents = ["alpha beta", "Beta gamma", "gamma delta", "", "delta alpha", "epsilon", "zeta eta", "theta"];
const metadatas = [
  { cat: "a", n: 1, f: 1.5, ok: true },
  { cat: "b", n: 2, f: 2.5, ok: false },
  { cat: "a", n: 3, f: 3.5 },
  { cat: "c", n: 4 },
  { cat: "b", f: 0.25, ok: true },
  null,
  { cat: "a", n: 7, f: 7.0, ok: false },
  { n: -1, s: "1" },
];
await step("add", () => coll.add({ ids, embeddings, documents, metadatas }));
await step("add with uris", () => coll.add({ ids: ["u1"], embeddings: [[3, 3, 3]], uris: ["file://u1"] }));
await step("add existing id (ignored)", () => coll.add({ ids: ["r1"], embeddings: [[9, 9, 9]], documents: ["changed"] }));
await step("add wrong dimension", () => coll.add({ ids: ["x1"], embeddings: [[1, 2]] }));
await step("add duplicate ids (client refuses)", () => coll.add({ ids: ["d", "d"], embeddings: [[1, 1, 1], [1, 1, 1]] }));
await step("add mismatched lengths (client refuses)", () => coll.add({ ids: ["m1", "m2"], embeddings: [[1, 1, 1]] }));
await step("add empty id", () => coll.add({ ids: [""], embeddings: [[1, 1, 1]] }));
await step("count", () => coll.count());
await step("peek", () => coll.peek({ limit: 3 }));
await step("get all", () => coll.get({ include: ["documents", "metadatas", "embeddings", "uris"] }));
await step("get by ids (order ignored, unknown skipped)", () => coll.get({ ids: ["r3", "r1", "zz"] }));
await step("get limit offset", () => coll.get({ limit: 2, offset: 3 }));
await step("get include embeddings only", () => coll.get({ ids: ["r8"], include: ["embeddings"] }));

const wheres = [
  ["$eq implicit", { cat: "a" }],
  ["$eq int", { n: { $eq: 2 } }],
  ["$ne (missing keys match)", { cat: { $ne: "a" } }],
  ["$gt", { n: { $gt: 2 } }],
  ["$gte float", { f: { $gte: 2.5 } }],
  ["$lt", { n: { $lt: 3 } }],
  ["$lte", { f: { $lte: 1.5 } }],
  ["$in", { cat: { $in: ["a", "c"] } }],
  ["$nin", { cat: { $nin: ["a"] } }],
  ["bool", { ok: true }],
  ["int vs float cross", { f: 7 }],
  ["string vs int", { s: 1 }],
  ["$and", { $and: [{ cat: "a" }, { n: { $gte: 3 } }] }],
  ["$or", { $or: [{ cat: "c" }, { ok: false }] }],
  ["nested", { $or: [{ $and: [{ cat: "a" }, { n: { $lt: 2 } }] }, { $and: [{ cat: "b" }, { f: { $lt: 1 } }] }] }],
  ["no match", { cat: "zzz" }],
  ["$gt on string (client refuses)", { cat: { $gt: "a" } }],
  ["multi-key (client refuses)", { cat: "a", n: 1 }],
  ["unknown operator", { n: { $foo: 1 } }],
];
for (const [name, where] of wheres) {
  await step("get where " + name, async () => (await coll.get({ where, include: [] })).ids);
}
const docs = [
  ["$contains", { $contains: "alpha" }],
  ["$contains case-sensitive", { $contains: "beta" }],
  ["$contains empty", { $contains: "" }],
  ["$not_contains", { $not_contains: "alpha" }],
  ["$regex", { $regex: "^[a-d]" }],
  ["$regex flags", { $regex: "(?i)^beta" }],
  ["$not_regex", { $not_regex: "a$" }],
  ["$and", { $and: [{ $contains: "a" }, { $not_contains: "gamma" }] }],
  ["$or", { $or: [{ $contains: "eta" }, { $regex: "^t" }] }],
  ["invalid regex", { $regex: "(" }],
];
for (const [name, whereDocument] of docs) {
  await step("get whereDocument " + name, async () => (await coll.get({ whereDocument, include: [] })).ids);
}
await step("get where + whereDocument + ids", async () =>
  (await coll.get({ ids: ["r1", "r2", "r3", "r5"], where: { cat: { $in: ["a", "b"] } }, whereDocument: { $contains: "a" }, include: [] })).ids);

await step("query", () => coll.query({ queryEmbeddings: [[1, 0.1, 0]], nResults: 3 }));
await step("query all includes", () =>
  coll.query({ queryEmbeddings: [[0, 0.9, 0.1]], nResults: 2, include: ["documents", "metadatas", "distances", "embeddings", "uris"] }));
await step("query batch", () => coll.query({ queryEmbeddings: [[1, 0, 0], [0, 0, 1]], nResults: 2, include: ["distances"] }));
await step("query where", () => coll.query({ queryEmbeddings: [[1, 1, 0.9]], nResults: 4, where: { cat: "a" }, include: ["distances"] }));
await step("query whereDocument", () =>
  coll.query({ queryEmbeddings: [[1, 1, 1]], nResults: 4, whereDocument: { $contains: "alpha" }, include: ["distances"] }));
await step("query ids filter", () => coll.query({ queryEmbeddings: [[0, 0, 0]], ids: ["r2", "r7"], include: ["distances"] }));
await step("query nResults larger than collection", async () => (await coll.query({ queryEmbeddings: [[0.3, 0.2, 0.1]], nResults: 100, include: [] })).ids);
await step("query wrong dimension", () => coll.query({ queryEmbeddings: [[1, 0]] }));
await step("query filter matches nothing", () => coll.query({ queryEmbeddings: [[1, 0, 0]], where: { cat: "zzz" } }));

await step("upsert (merge metadata, replace embedding)", () =>
  coll.upsert({ ids: ["r1", "new1"], embeddings: [[1, 0, 0.5], [5, 5, 5]], metadatas: [{ n: 10, extra: "x" }, { cat: "n" }], documents: ["alpha upserted", "new doc"] }));
await step("get after upsert", () => coll.get({ ids: ["r1", "new1"], include: ["documents", "metadatas", "embeddings"] }));
await step("update", () => coll.update({ ids: ["r2", "unknown"], embeddings: [[0, 2, 0], [1, 1, 1]], metadatas: [{ cat: "bb" }, { cat: "x" }] }));
await step("update documents without embeddings (client refuses)", () => coll.update({ ids: ["r2"], documents: ["x"] }));
await step("get after update", () => coll.get({ ids: ["r2"], include: ["metadatas", "embeddings", "documents"] }));
await step("update wrong dimension", () => coll.update({ ids: ["r2"], embeddings: [[1]] }));
await step("delete by ids", () => coll.delete({ ids: ["r3", "nope"] }));
await step("delete by where", () => coll.delete({ where: { cat: "c" } }));
await step("delete by whereDocument", () => coll.delete({ whereDocument: { $contains: "epsilon" } }));
await step("delete ids and where (intersection)", () => coll.delete({ ids: ["r5", "r7"], where: { cat: "b" } }));
await step("count after deletes", () => coll.count());
await step("get order after delete and re-add", async () => {
  await coll.delete({ ids: ["r1"] });
  await coll.add({ ids: ["r1"], embeddings: [[1, 0, 0]] });
  return (await coll.get({ include: [] })).ids;
});

await step("cosine add", () => cos.add({ ids: ["c1", "c2", "c3"], embeddings: [[1, 0], [3, 4], [-1, -1]] }));
await step("cosine query", () => cos.query({ queryEmbeddings: [[1, 1]], include: ["distances", "embeddings"] }));
await step("ip add", () => ip.add({ ids: ["i1", "i2", "i3"], embeddings: [[1, 0], [3, 4], [0.5, 2]] }));
await step("ip query", () => ip.query({ queryEmbeddings: [[1, 1]], include: ["distances"] }));

await step("modify name and metadata", async () => {
  await coll.modify({ name: "scenario_renamed", metadata: { v: 2 } });
  return describeCollection(await client.getCollection({ name: "scenario_renamed", ...ef }));
});
await step("modify configuration", async () => {
  await coll.modify({ configuration: { hnsw: { ef_search: 50 } } });
  return describeCollection(await client.getCollection({ name: "scenario_renamed", ...ef }));
});
await step("rename onto existing name", () => coll.modify({ name: "scenario_cos" }));
await step("delete collection", () => client.deleteCollection({ name: "scenario_ip" }));
await step("use deleted collection", () => ip.count());
await step("delete missing collection", () => client.deleteCollection({ name: "scenario_ip" }));

if (clientVersion !== "3.0.17") {
  await step("newer client: search (absent in 1.0.0)", () => coll.search({}));
  await step("newer client: getCollectionById", async () => describeCollection(await client.getCollectionById(cos.id)));
  await step("newer client: forkCount", () => coll.forkCount());
  await step("newer client: getIndexingStatus", () => coll.getIndexingStatus());
}

await step("delete database", () => admin.deleteDatabase({ name: database, tenant }));
for (const o of out) console.log(JSON.stringify(o));
