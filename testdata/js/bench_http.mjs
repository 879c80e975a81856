// HTTP benchmark of a Chroma-compatible server with the real chromadb JS
// client (3.5.0): add throughput, query latency (p50/p99) unfiltered and with
// where filters of 10% and 1% selectivity, and recall@10 against an exact
// brute-force scan of the same data. The data is generated from a seed, so
// two servers given the same arguments see the same records and queries.
//
//   node bench_http.mjs URL[,URL2...] [--n=100000] [--dim=384] [--batch=1000] [--queries=300]
//                           [--filtered=200] [--recall=50] [--seed=1]
//
// With several URLs the servers are measured interleaved: each add batch and
// each query goes to every server in turn (alternating which goes first), so
// that all of them see the same machine load; only one request is in flight
// at a time. Prints one JSON object per server, one per line.

import { ChromaClient } from "chromadb";

const [url, ...rest] = process.argv.slice(2);
if (!url) {
  console.error("usage: node bench_http.mjs URL [--n=N] [--dim=D] ...");
  process.exit(2);
}
const arg = (name, def) => {
  const a = rest.find((x) => x.startsWith(`--${name}=`));
  return a ? Number(a.slice(name.length + 3)) : def;
};
const N = arg("n", 100000), DIM = arg("dim", 384), BATCH = arg("batch", 1000);
const Q = arg("queries", 300), QF = arg("filtered", 200), R = arg("recall", 50), SEED = arg("seed", 1);
console.warn = () => {};

// mulberry32: small seeded PRNG; gaussian by Box-Muller.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = rng(SEED);
const gauss = () => Math.sqrt(-2 * Math.log(rand() + 1e-12)) * Math.cos(2 * Math.PI * rand());

// Clustered unit vectors (like text embeddings): 200 centres, each point a
// centre plus noise, normalized.
const CENTRES = 200;
const centres = Array.from({ length: CENTRES }, () => Float32Array.from({ length: DIM }, gauss));
function point() {
  const c = centres[Math.floor(rand() * CENTRES)];
  const v = new Float32Array(DIM);
  let s = 0;
  for (let j = 0; j < DIM; j++) {
    v[j] = c[j] + 0.6 * gauss();
    s += v[j] * v[j];
  }
  s = Math.sqrt(s);
  for (let j = 0; j < DIM; j++) v[j] /= s;
  return v;
}
const data = Array.from({ length: N }, point);
const queries = Array.from({ length: Math.max(Q, QF) }, point);

const servers = url.split(",").map((raw) => {
  const u = new URL(raw);
  return { url: raw, client: new ChromaClient({ host: u.hostname, port: Number(u.port), ssl: false }), addMs: 0 };
});
for (const sv of servers) {
  try {
    await sv.client.deleteCollection({ name: "bench_http" });
  } catch {}
  sv.coll = await sv.client.createCollection({ name: "bench_http", embeddingFunction: null });
}
// order(i) alternates which server goes first.
const order = (i) => (i % 2 === 0 ? servers : [...servers].reverse());

for (let i = 0, b = 0; i < N; i += BATCH, b++) {
  const end = Math.min(N, i + BATCH);
  const ids = [], embeddings = [], metadatas = [];
  for (let k = i; k < end; k++) {
    ids.push("id" + k);
    embeddings.push(Array.from(data[k]));
    metadatas.push({ bucket: k % 10, pct: k % 100 });
  }
  for (const sv of order(b)) {
    const s = performance.now();
    await sv.coll.add({ ids, embeddings, metadatas });
    sv.addMs += performance.now() - s;
  }
}
for (const sv of servers) sv.count = await sv.coll.count();

function l2(a, b) {
  let s = 0;
  for (let j = 0; j < a.length; j++) {
    const d = a[j] - b[j];
    s += d * d;
  }
  return s;
}
function exactTop(q, k, allow) {
  const best = [];
  for (let i = 0; i < N; i++) {
    if (allow && !allow(i)) continue;
    const d = l2(q, data[i]);
    if (best.length < k) {
      best.push([d, i]);
      best.sort((x, y) => x[0] - y[0]);
    } else if (d < best[k - 1][0]) {
      best[k - 1] = [d, i];
      best.sort((x, y) => x[0] - y[0]);
    }
  }
  return best.map((x) => "id" + x[1]);
}

function pct(xs, p) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}

async function run(name, nq, where, allow) {
  for (const sv of servers) {
    // warm-up
    for (let i = 0; i < 5; i++) await sv.coll.query({ queryEmbeddings: [Array.from(queries[i])], nResults: 10, where });
    sv.lat = [];
    sv.got = [];
  }
  for (let i = 0; i < nq; i++) {
    const q = Array.from(queries[i]);
    for (const sv of order(i)) {
      const s = performance.now();
      const r = await sv.coll.query({ queryEmbeddings: [q], nResults: 10, where });
      sv.lat.push(performance.now() - s);
      if (i < R) sv.got.push(r.ids[0]);
    }
  }
  const wants = [];
  for (let i = 0; i < Math.min(R, nq); i++) wants.push(new Set(exactTop(queries[i], 10, allow)));
  return servers.map((sv) => {
    let hit = 0, total = 0;
    wants.forEach((want, i) => {
      total += want.size;
      for (const id of sv.got[i]) if (want.has(id)) hit++;
    });
    const lat = sv.lat;
    return { name, queries: nq, p50_ms: pct(lat, 50), p99_ms: pct(lat, 99), mean_ms: lat.reduce((a, b) => a + b, 0) / nq, recall_at_10: total ? hit / total : null };
  });
}

const runs = [
  await run("unfiltered", Q, undefined, null),
  await run("where bucket=3 (10%)", QF, { bucket: 3 }, (i) => i % 10 === 3),
  await run("where pct=7 (1%)", QF, { pct: 7 }, (i) => i % 100 === 7),
];
servers.forEach((sv, k) => {
  const addSeconds = sv.addMs / 1000;
  console.log(JSON.stringify({ url: sv.url, n: N, dim: DIM, batch: BATCH, count: sv.count, add_seconds: addSeconds,
    add_per_sec: N / addSeconds, results: runs.map((r) => r[k]) }));
});
