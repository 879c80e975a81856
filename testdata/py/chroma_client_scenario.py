"""Runs one scenario with the real Python chromadb client (HttpClient) against
a Chroma-compatible server and prints one normalized JSON line per step, so
that a test can compare `cairn serve` with the real Chroma 1.0.0 server.

    python chroma_client_scenario.py URL DATABASE [--token TOKEN]

With --token the server requires TOKEN (cairn serve --auth-token) and the
scenario checks the client's token settings instead.

Steps cover connecting (heartbeat, version, pre-flight checks, identity,
tenant and database checks), collections (create, list, modify, delete) and
records (add, upsert, update, get, query, delete, count, peek), with the
exception class the client raises for each error answer. Embeddings are
passed explicitly or come from a tiny deterministic embedding function, so
no model is ever downloaded. A guard installed before chromadb is imported
records any connection or name lookup beyond the loopback address; the last
step lists them (none expected).

Volatile values (UUIDs, the heartbeat, the database name) are normalized;
floats are rounded to 6 significant digits because float32 rounding order
differs between implementations. Ints and floats stay distinct (2 vs 2.0).
"""

import asyncio
import ipaddress
import json
import os
import re
import socket
import sys
import warnings

# ---- network guard: installed before chromadb is imported

outside = []


def _loopback(host):
    if host in ("localhost", "", None):
        return True
    try:
        return ipaddress.ip_address(str(host).split("%")[0]).is_loopback
    except ValueError:
        return False


_getaddrinfo = socket.getaddrinfo
_connect = socket.socket.connect


def guarded_getaddrinfo(host, *args, **kwargs):
    if not _loopback(host.decode() if isinstance(host, bytes) else host):
        outside.append("lookup " + str(host))
        raise socket.gaierror(socket.EAI_NONAME, "blocked by the scenario: no network")
    return _getaddrinfo(host, *args, **kwargs)


def guarded_connect(self, address):
    if isinstance(address, tuple) and not _loopback(address[0]):
        outside.append("connect " + str(address[0]))
        raise OSError("blocked by the scenario: no network")
    return _connect(self, address)


socket.getaddrinfo = guarded_getaddrinfo
socket.socket.connect = guarded_connect

os.environ["ANONYMIZED_TELEMETRY"] = "False"
os.environ["HF_HUB_OFFLINE"] = "1"
warnings.simplefilter("ignore")

import chromadb  # noqa: E402
import numpy as np  # noqa: E402
from chromadb.api.types import EmbeddingFunction  # noqa: E402
from chromadb.config import Settings  # noqa: E402

url, database = sys.argv[1], sys.argv[2]
token = sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == "--token" else None
host, port = url.split("//", 1)[1].rsplit(":", 1)
settings = Settings(anonymized_telemetry=False)
tenant = "default_tenant"

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)


def norm(v, key=None):
    if v is None:
        return None
    if isinstance(v, bool):
        return v
    if isinstance(v, (np.floating, np.integer, np.bool_)):
        return norm(v.item(), key)
    if isinstance(v, int):
        return "<ns>" if key == "heartbeat" else v
    if isinstance(v, float):
        return float("%.6g" % v)
    if isinstance(v, str):
        return UUID.sub("<uuid>", v).replace(database, "${db}")
    if isinstance(v, np.ndarray):
        return norm(v.tolist())
    if isinstance(v, dict):
        return {str(k): norm(v[k], k) for k in sorted(v, key=str)}
    if isinstance(v, (list, tuple)):
        return [norm(x) for x in v]
    if hasattr(v, "model_dump"):
        return norm(v.model_dump())
    return norm(str(v))


lines = []


def step(name, fn):
    try:
        r = fn()
        lines.append({"step": name, "ok": norm(r)})
    except Exception as e:  # the class is what the scenario compares
        lines.append({"step": name, "error": type(e).__name__, "message": norm(str(e))})


def describe(c):
    return {"name": c.name, "id": str(c.id), "metadata": c.metadata,
            "configuration": c.configuration_json, "tenant": c.tenant, "database": c.database}


class HashEmbedding(EmbeddingFunction):
    """A tiny deterministic embedding function (letter counts folded into 4
    dimensions) standing in for a model: no download, same vectors everywhere."""

    def __init__(self):
        pass

    def __call__(self, input):
        out = []
        for text in input:
            v = [0.0, 0.0, 0.0, 0.0]
            for ch in text.lower():
                if ch.isalpha():
                    v[(ord(ch) - ord("a")) % 4] += 1.0
            out.append(np.array(v, dtype=np.float32))
        return out

    @staticmethod
    def name():
        return "cairn_test_hash"

    def get_config(self):
        return {"dims": 4}

    @staticmethod
    def build_from_config(config):
        return HashEmbedding()


def raw(method, path, body=None):
    """Sends a request through the client's own HTTP layer (its headers, its
    error mapping) for inputs the client's validation refuses to send."""
    server = client._server
    kwargs = {} if body is None else {"json": body}
    return server._make_request(method, path, **kwargs)


def finish():
    step("client version", lambda: chromadb.__version__)
    step("network beyond loopback", lambda: outside)
    for line in lines:
        print(json.dumps(line, sort_keys=True, allow_nan=False, default=str))
    sys.exit(0)


def token_settings(value, header=None):
    extra = {} if header is None else {"chroma_auth_token_transport_header": header}
    return Settings(anonymized_telemetry=False, chroma_client_auth_provider="chromadb.auth.token_authn.TokenAuthClientProvider",
                    chroma_client_auth_credentials=value, **extra)


def token_roundtrip(settings_):
    c = chromadb.HttpClient(host=host, port=int(port), settings=settings_)
    col = c.get_or_create_collection("auth_" + database, embedding_function=None)
    col.upsert(ids=["a"], embeddings=[[1.0, 2.0]], documents=["doc"])
    return col.query(query_embeddings=[[1.0, 2.0]], n_results=1, include=["documents"])


if token is not None:
    step("no token: connect", lambda: chromadb.HttpClient(host=host, port=int(port), settings=settings).list_collections())
    step("wrong token: connect", lambda: chromadb.HttpClient(host=host, port=int(port), settings=token_settings("wrong")))
    step("bearer token: add and query", lambda: token_roundtrip(token_settings(token)))
    step("X-Chroma-Token: add and query", lambda: token_roundtrip(token_settings(token, "X-Chroma-Token")))
    finish()

# ---- connecting

step("connect to missing tenant", lambda: chromadb.HttpClient(
    host=host, port=int(port), settings=settings, tenant="no_such_tenant_" + database).heartbeat())
step("connect to missing database", lambda: chromadb.HttpClient(
    host=host, port=int(port), settings=settings, database="no_such_db_" + database).heartbeat())
admin = chromadb.AdminClient(Settings(chroma_api_impl="chromadb.api.fastapi.FastAPI",
                                      chroma_server_host=host, chroma_server_http_port=int(port),
                                      anonymized_telemetry=False))
step("create database", lambda: admin.create_database(database, tenant))
step("create database again", lambda: admin.create_database(database, tenant))
step("create database short name", lambda: admin.create_database("ab", tenant))
step("get database", lambda: {k: v for k, v in admin.get_database(database, tenant).items() if k != "id"})
step("get missing database", lambda: admin.get_database("no_such_db_" + database, tenant))
step("list databases has it", lambda: database in [d["name"] for d in admin.list_databases(tenant=tenant)])
step("get tenant", lambda: admin.get_tenant(tenant))
step("get missing tenant", lambda: admin.get_tenant("no_such_tenant_" + database))
step("create tenant short name", lambda: admin.create_tenant("ab"))

client = chromadb.HttpClient(host=host, port=int(port), settings=settings, tenant=tenant, database=database)
step("heartbeat", lambda: {"heartbeat": client.heartbeat()})
step("version", lambda: client.get_version())
step("identity", lambda: client.get_user_identity())
step("pre-flight max batch size", lambda: client.get_max_batch_size())
step("pre-flight base64", lambda: client._server.supports_base64_encoding())
step("reset (disabled)", lambda: client.reset())
step("list collections (empty)", lambda: [describe(c) for c in client.list_collections()])
step("count collections (empty)", lambda: client.count_collections())

# ---- collections

coll = cos = ip = efc = None


def create_main():
    global coll
    coll = client.create_collection("scenario", metadata={"owner": "cairn", "n": 1, "f": 0.5, "whole": 2.0, "b": True},
                                    embedding_function=None)
    return describe(coll)


def create_cos():
    global cos
    cos = client.create_collection("scenario_cos", configuration={"hnsw": {"space": "cosine"}}, embedding_function=None)
    return describe(cos)


def create_ip():
    global ip
    ip = client.create_collection("scenario_ip", metadata={"hnsw:space": "ip"}, embedding_function=None)
    return describe(ip)


def create_ef():
    global efc
    efc = client.create_collection("scenario_ef", embedding_function=HashEmbedding())
    return describe(efc)


step("create collection", create_main)
step("create duplicate collection", lambda: client.create_collection("scenario", embedding_function=None))
step("create bad name", lambda: client.create_collection("a b", embedding_function=None))
step("create name too short", lambda: client.create_collection("ab", embedding_function=None))
step("create empty metadata", lambda: client.create_collection("scenario_empty_md", metadata={}, embedding_function=None))
step("get_or_create existing (metadata ignored)", lambda: describe(
    client.get_or_create_collection("scenario", metadata={"other": 1}, embedding_function=None)))
step("create cosine collection", create_cos)
step("create ip collection", create_ip)
step("create collection with embedding function", create_ef)
step("get collection", lambda: describe(client.get_collection("scenario", embedding_function=None)))
step("get missing collection", lambda: client.get_collection("nope_nope", embedding_function=None))
step("list collections", lambda: sorted((describe(c) for c in client.list_collections()), key=lambda d: d["name"]))


def list_paged():
    # Both servers list by collection id (random), so only the paging itself is compared.
    pages = [[c.name for c in client.list_collections(limit=2, offset=off)] for off in (0, 2, 4)]
    return {"sizes": [len(p) for p in pages], "names": sorted(n for p in pages for n in p)}


step("list collections paged", list_paged)
step("count collections", lambda: client.count_collections())

# ---- records

ids = ["r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8"]
embeddings = [[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0], [0, 1, 1], [1, 0, 1], [2, 2, 2], [0.1, 0.2, 0.3]]
documents = ["alpha beta", "Beta gamma", "gamma delta", "", "delta alpha", "epsilon", "zeta eta", "theta"]
metadatas = [
    {"cat": "a", "n": 1, "f": 1.5, "ok": True},
    {"cat": "b", "n": 2, "f": 2.5, "ok": False},
    {"cat": "a", "n": 3, "f": 3.5},
    {"cat": "c", "n": 4, "whole": 4.0},
    {"cat": "b", "f": 0.25, "ok": True},
    None,
    {"cat": "a", "n": 7, "f": 7.0, "ok": False},
    {"n": -1, "s": "1"},
]

step("add", lambda: coll.add(ids=ids[:5], embeddings=embeddings[:5], documents=documents[:5], metadatas=metadatas[:5]))
step("add numpy float32 embeddings", lambda: coll.add(ids=ids[5:], embeddings=np.array(embeddings[5:], dtype=np.float32),
                                                       documents=documents[5:]))
step("set r7 r8 metadata", lambda: coll.update(ids=["r7", "r8"], metadatas=[metadatas[6], metadatas[7]]))
step("add with uris", lambda: coll.add(ids=["u1"], embeddings=[[3, 3, 3]], uris=["file://u1"]))
step("add existing id (ignored)", lambda: coll.add(ids=["r1"], embeddings=[[9, 9, 9]], documents=["changed"]))
step("add wrong dimension", lambda: coll.add(ids=["x1"], embeddings=[[1, 2]]))
step("add duplicate ids (client refuses)", lambda: coll.add(ids=["d", "d"], embeddings=[[1, 1, 1], [1, 1, 1]]))
step("add mismatched lengths (client refuses)", lambda: coll.add(ids=["m1", "m2"], embeddings=[[1, 1, 1]]))
step("add empty id", lambda: coll.add(ids=[""], embeddings=[[1, 1, 1]]))
step("add without embeddings or function", lambda: coll.add(ids=["noemb"], documents=["text"]))
step("add empty metadata", lambda: coll.add(ids=["em"], embeddings=[[1, 1, 1]], metadatas=[{}]))
step("count", lambda: coll.count())
step("peek", lambda: coll.peek(limit=3))
step("peek default", lambda: coll.peek()["ids"])
step("get all", lambda: coll.get(include=["documents", "metadatas", "embeddings", "uris"]))
step("get by ids (order ignored, unknown skipped)", lambda: coll.get(ids=["r3", "r1", "zz"]))
step("get one id as string", lambda: coll.get(ids="r2"))
step("get limit offset", lambda: coll.get(limit=2, offset=3))
step("get offset only", lambda: coll.get(offset=6, include=[])["ids"])
step("get include embeddings only", lambda: coll.get(ids=["r8"], include=["embeddings"]))
step("get include distances (client refuses)", lambda: coll.get(include=["distances"]))

wheres = [
    ("$eq implicit", {"cat": "a"}),
    ("$eq int", {"n": {"$eq": 2}}),
    ("$eq float literal on int", {"n": {"$eq": 2.0}}),
    ("$eq int literal on float", {"whole": 4}),
    ("$ne (missing keys match)", {"cat": {"$ne": "a"}}),
    ("$gt", {"n": {"$gt": 2}}),
    ("$gt float", {"n": {"$gt": 2.5}}),
    ("$gte float", {"f": {"$gte": 2.5}}),
    ("$lt", {"n": {"$lt": 3}}),
    ("$lte", {"f": {"$lte": 1.5}}),
    ("$in", {"cat": {"$in": ["a", "c"]}}),
    ("$in ints", {"n": {"$in": [1, 4, 7]}}),
    ("$in floats", {"f": {"$in": [1.5, 7.0]}}),
    ("$nin", {"cat": {"$nin": ["a"]}}),
    ("bool", {"ok": True}),
    ("bool $ne", {"ok": {"$ne": True}}),
    ("int vs float cross", {"f": 7}),
    ("string vs int", {"s": 1}),
    ("$and", {"$and": [{"cat": "a"}, {"n": {"$gte": 3}}]}),
    ("$or", {"$or": [{"cat": "c"}, {"ok": False}]}),
    ("nested", {"$or": [{"$and": [{"cat": "a"}, {"n": {"$lt": 2}}]}, {"$and": [{"cat": "b"}, {"f": {"$lt": 1}}]}]}),
    ("no match", {"cat": "zzz"}),
    ("$gt on string (client refuses)", {"cat": {"$gt": "a"}}),
    ("multi-key (client refuses)", {"cat": "a", "n": 1}),
    ("unknown operator (client refuses)", {"n": {"$foo": 1}}),
    ("$and with one child (client refuses)", {"$and": [{"cat": "a"}]}),
    ("empty where", {}),
]
for name, where in wheres:
    step("get where " + name, lambda where=where: coll.get(where=where, include=[])["ids"])

docs = [
    ("$contains", {"$contains": "alpha"}),
    ("$contains case-sensitive", {"$contains": "beta"}),
    ("$contains empty", {"$contains": ""}),
    ("$not_contains", {"$not_contains": "alpha"}),
    ("$regex", {"$regex": "^[a-d]"}),
    ("$regex flags", {"$regex": "(?i)^beta"}),
    ("$not_regex", {"$not_regex": "a$"}),
    ("$and", {"$and": [{"$contains": "a"}, {"$not_contains": "gamma"}]}),
    ("$or", {"$or": [{"$contains": "eta"}, {"$regex": "^t"}]}),
    ("invalid regex", {"$regex": "("}),
    ("unknown operator (client refuses)", {"$startswith": "a"}),
]
for name, wd in docs:
    step("get where_document " + name, lambda wd=wd: coll.get(where_document=wd, include=[])["ids"])
step("get where + where_document + ids", lambda: coll.get(
    ids=["r1", "r2", "r3", "r5"], where={"cat": {"$in": ["a", "b"]}}, where_document={"$contains": "a"}, include=[])["ids"])

step("query", lambda: coll.query(query_embeddings=[[1, 0.1, 0]], n_results=3))
step("query one vector (not a list of vectors)", lambda: coll.query(query_embeddings=[1, 0.1, 0], n_results=2, include=["distances"]))
step("query numpy", lambda: coll.query(query_embeddings=np.array([[1, 0.1, 0]], dtype=np.float32), n_results=2, include=["distances"]))
step("query all includes", lambda: coll.query(query_embeddings=[[0, 0.9, 0.1]], n_results=2,
                                              include=["documents", "metadatas", "distances", "embeddings", "uris"]))
step("query batch", lambda: coll.query(query_embeddings=[[1, 0, 0], [0, 0, 1]], n_results=2, include=["distances"]))
step("query where", lambda: coll.query(query_embeddings=[[1, 1, 0.9]], n_results=4, where={"cat": "a"}, include=["distances"]))
step("query where_document", lambda: coll.query(query_embeddings=[[1, 1, 1]], n_results=4,
                                                where_document={"$contains": "alpha"}, include=["distances"]))
step("query ids filter", lambda: coll.query(query_embeddings=[[0, 0, 0]], ids=["r2", "r7"], include=["distances"]))
step("query n_results larger than collection", lambda: coll.query(query_embeddings=[[0.3, 0.2, 0.1]], n_results=100, include=[])["ids"])
step("query n_results 0 (client refuses)", lambda: coll.query(query_embeddings=[[1, 0, 0]], n_results=0))
step("query wrong dimension", lambda: coll.query(query_embeddings=[[1, 0]]))
step("query filter matches nothing", lambda: coll.query(query_embeddings=[[1, 0, 0]], where={"cat": "zzz"}))
step("query texts without function (client refuses)", lambda: coll.query(query_texts=["alpha"]))

step("upsert (merge metadata, replace embedding)", lambda: coll.upsert(
    ids=["r1", "new1"], embeddings=[[1, 0, 0.5], [5, 5, 5]], metadatas=[{"n": 10, "extra": "x", "g": 1.0}, {"cat": "n"}],
    documents=["alpha upserted", "new doc"]))
step("get after upsert", lambda: coll.get(ids=["r1", "new1"], include=["documents", "metadatas", "embeddings"]))
step("upsert None metadata value (removes the key)", lambda: coll.upsert(ids=["r1"], embeddings=[[1, 0, 0.5]], metadatas=[{"extra": None}]))
step("get after None upsert", lambda: coll.get(ids=["r1"], include=["metadatas"])["metadatas"])
step("update", lambda: coll.update(ids=["r2", "unknown"], embeddings=[[0, 2, 0], [1, 1, 1]],
                                   metadatas=[{"cat": "bb"}, {"cat": "x"}]))
step("update documents only", lambda: coll.update(ids=["r2"], documents=["Beta gamma updated"]))
step("update metadata None value", lambda: coll.update(ids=["r2"], metadatas=[{"f": None}]))
step("get after update", lambda: coll.get(ids=["r2"], include=["metadatas", "embeddings", "documents"]))
step("update wrong dimension", lambda: coll.update(ids=["r2"], embeddings=[[1]]))
step("delete by ids", lambda: coll.delete(ids=["r3", "nope"]))
step("delete by where", lambda: coll.delete(where={"cat": "c"}))
step("delete by where_document", lambda: coll.delete(where_document={"$contains": "epsilon"}))
step("delete ids and where (intersection)", lambda: coll.delete(ids=["r5", "r7"], where={"cat": "b"}))
step("delete with nothing (client refuses)", lambda: coll.delete())
step("count after deletes", lambda: coll.count())


def reorder():
    coll.delete(ids=["r1"])
    coll.add(ids=["r1"], embeddings=[[1, 0, 0]])
    return coll.get(include=[])["ids"]


step("get order after delete and re-add", reorder)



def add_nan():
    scratch = client.create_collection("scenario_nan", embedding_function=None)
    try:
        scratch.add(ids=["nan"], embeddings=[[float("nan"), 0, 0]])
        return scratch.get(include=["embeddings"])
    finally:
        client.delete_collection("scenario_nan")


step("add NaN embedding", add_nan)
step("cosine add", lambda: cos.add(ids=["c1", "c2", "c3"], embeddings=[[1, 0], [3, 4], [-1, -1]]))
step("cosine query", lambda: cos.query(query_embeddings=[[1, 1]], include=["distances", "embeddings"]))
step("ip add", lambda: ip.add(ids=["i1", "i2", "i3"], embeddings=[[1, 0], [3, 4], [0.5, 2]]))
step("ip query", lambda: ip.query(query_embeddings=[[1, 1]], include=["distances"]))

step("function: add documents", lambda: efc.add(ids=["e1", "e2", "e3"], documents=["aaaa", "bbbb", "abcd"]))
step("function: query texts", lambda: efc.query(query_texts=["aab"], n_results=2, include=["distances", "documents"]))
step("function: get collection again", lambda: describe(client.get_collection("scenario_ef", embedding_function=HashEmbedding())))
step("function: upsert documents", lambda: efc.upsert(ids=["e1"], documents=["dddd"]))
step("function: get embeddings", lambda: efc.get(include=["embeddings", "documents"]))

# ---- values and sizes the Python client produces

def edge_values():
    col = client.create_collection("scenario_values", configuration={
        "hnsw": {"space": "cosine", "ef_construction": 200, "max_neighbors": 32, "ef_search": 20}}, embedding_function=None)
    out = {"configuration": col.configuration_json}
    out["empty count"] = col.count()
    out["empty peek"] = col.peek()
    out["empty get"] = col.get(where={"x": 1})
    col.add(ids=["héllo ✓", "with space", "slash/id", "🎉"],
            embeddings=[[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 1]],
            documents=["café crème", "naïve résumé", "日本語のテキスト", "emoji 🎉 party"],
            metadatas=[{"big": 2 ** 62, "neg": -(2 ** 53) - 1, "tiny": 1e-300, "negzero": -0.0, "sum": 0.1 + 0.2},
                       {"unicode": "héllo ✓", "empty": ""}, {"huge": 1.7976931348623157e308}, {"t": True, "f": False}])
    out["get"] = col.get(include=["documents", "metadatas"])
    out["where unicode"] = col.get(where={"unicode": "héllo ✓"}, include=[])["ids"]
    out["where big int"] = col.get(where={"big": {"$gte": 2 ** 62}}, include=[])["ids"]
    out["where_document unicode"] = col.get(where_document={"$contains": "résumé"}, include=[])["ids"]
    out["where_document regex unicode"] = col.get(where_document={"$regex": "^日本"}, include=[])["ids"]
    out["query cosine"] = col.query(query_embeddings=[[1, 0.5, 0]], n_results=4, include=["distances"])
    out["get by unicode id"] = col.get(ids=["🎉", "slash/id"], include=["documents"])
    client.delete_collection("scenario_values")
    return out


def many_records():
    rng = np.random.default_rng(7)
    vecs = rng.standard_normal((500, 16)).astype(np.float32)
    col = client.create_collection("scenario_many", embedding_function=None)
    col.add(ids=["m%03d" % i for i in range(500)], embeddings=vecs,
            metadatas=[{"i": i, "even": i % 2 == 0} for i in range(500)])
    queries = rng.standard_normal((6, 16)).astype(np.float32)
    got = col.query(query_embeddings=queries, n_results=5, include=[])["ids"]
    exact = [["m%03d" % i for i in np.argsort(((vecs - q) ** 2).sum(axis=1))[:5]] for q in queries]
    found = sum(len(set(g) & set(e)) for g, e in zip(got, exact))
    # An unfiltered query is approximate (HNSW) in both servers: compared by
    # recall against the exact answer, not id by id.
    out = {"count": col.count(),
           "query recall@5 at least 0.9": found >= 0.9 * 5 * len(queries),
           "query where": col.query(query_embeddings=queries, n_results=5, where={"even": True}, include=[])["ids"],
           "get page": col.get(limit=3, offset=250, where={"i": {"$gte": 100}}, include=["metadatas"])}
    client.delete_collection("scenario_many")
    return out


def too_big_batch():
    n = client.get_max_batch_size() + 1
    col = client.get_or_create_collection("scenario_batch", embedding_function=None)
    try:
        col.add(ids=["b%d" % i for i in range(n)], embeddings=[[0.5]] * n)
        return col.count()
    finally:
        client.delete_collection("scenario_batch")


step("edge values", edge_values)
step("500 records", many_records)
step("batch larger than max_batch_size (client refuses)", too_big_batch)
step("list metadata value", lambda: coll.add(ids=["lm"], embeddings=[[1, 1, 1]], metadatas=[{"tags": ["a", "b"]}]))
step("dict metadata value (client refuses)", lambda: coll.add(ids=["dm"], embeddings=[[1, 1, 1]], metadatas=[{"d": {"a": 1}}]))
step("get limit 0", lambda: coll.get(limit=0, include=[])["ids"])
step("modify metadata with hnsw key", lambda: cos.modify(metadata={"hnsw:space": "l2"}))
step("get_or_create with other configuration", lambda: describe(client.get_or_create_collection(
    "scenario_cos", configuration={"hnsw": {"space": "l2"}}, embedding_function=None)))
step("update with uris", lambda: coll.update(ids=["u1"], uris=["file://u1-new"]))
step("query with uris", lambda: coll.query(query_embeddings=[[3, 3, 3]], n_results=1, include=["uris", "embeddings"]))
step("delete where matches nothing", lambda: coll.delete(where={"cat": "none-such"}))

# ---- raw requests through the client's HTTP layer: the class it raises for each error answer

cpath = "/tenants/%s/databases/%s/collections" % (tenant, database)
step("raw: where with unknown operator", lambda: raw("post", "%s/%s/get" % (cpath, coll.id), {"where": {"n": {"$foo": 1}}}))
step("raw: body of the wrong shape", lambda: raw("post", "%s/%s/get" % (cpath, coll.id), {"ids": "r1"}))
step("raw: query unknown id", lambda: raw("post", "%s/%s/query" % (cpath, coll.id),
                                          {"query_embeddings": [[1, 0, 0]], "ids": ["missing"], "n_results": 1}))
step("raw: add empty ids", lambda: raw("post", "%s/%s/add" % (cpath, coll.id), {"ids": [], "embeddings": []}))
step("raw: bad collection id", lambda: raw("get", "%s/not-a-uuid/count" % cpath))
step("raw: unknown collection id", lambda: raw("get", "%s/00000000-0000-4000-8000-000000000000/count" % cpath))
step("raw: unknown route", lambda: raw("get", "/no/such/route"))
step("raw: create collection with metadata null value", lambda: raw("post", cpath, {"name": "nullmd", "metadata": {"a": None}}))
step("raw: fork", lambda: raw("post", "%s/%s/fork" % (cpath, coll.id), {"new_name": "forked"}))

# ---- modify and delete

def modify_name():
    coll.modify(name="scenario_renamed", metadata={"v": 2, "w": 2.0})
    return describe(client.get_collection("scenario_renamed", embedding_function=None))


def modify_config():
    coll.modify(configuration={"hnsw": {"ef_search": 50}})
    return describe(client.get_collection("scenario_renamed", embedding_function=None))


step("modify name and metadata", modify_name)
step("modify configuration", modify_config)
step("modify local collection object", lambda: {"name": coll.name, "metadata": coll.metadata})
step("rename onto existing name", lambda: coll.modify(name="scenario_cos"))
if hasattr(client, "get_collection_by_id"):  # clients from 1.1 on
    step("get collection by id", lambda: describe(client.get_collection_by_id(cos.id)))
step("delete collection", lambda: client.delete_collection("scenario_ip"))
step("use deleted collection", lambda: ip.count())
step("delete missing collection", lambda: client.delete_collection("scenario_ip"))
step("list after delete", lambda: sorted(c.name for c in client.list_collections()))

step("newer client: search (absent in 1.0.0)", lambda: coll.search([]))
step("newer client: fork_count", lambda: coll.fork_count())
step("newer client: get_indexing_status", lambda: coll.get_indexing_status())



async def async_client():
    ac = await chromadb.AsyncHttpClient(host=host, port=int(port), settings=settings, tenant=tenant, database=database)
    col = await ac.create_collection("scenario_async", metadata={"k": 1.0}, embedding_function=None)
    await col.add(ids=["a1", "a2"], embeddings=[[1, 0], [0, 1]], documents=["one", "two"], metadatas=[{"n": 1}, {"n": 2.0}])
    got = await col.get(where={"n": {"$gte": 1.5}}, include=["metadatas"])
    res = await col.query(query_embeddings=[[1, 0.2]], n_results=2, include=["distances"])
    n = await col.count()
    await ac.delete_collection("scenario_async")
    try:
        await ac.get_collection("scenario_async", embedding_function=None)
        missing = None
    except Exception as e:
        missing = type(e).__name__ + ": " + str(e)
    return {"metadata": col.metadata, "get": got, "query": res, "count": n, "after delete": missing}


step("async client", lambda: asyncio.run(async_client()))


def spaced_database():
    name = "spaced db " + database
    admin.create_database(name, tenant)
    sc = chromadb.HttpClient(host=host, port=int(port), settings=settings, tenant=tenant, database=name)
    col = sc.create_collection("in_spaced", embedding_function=None)
    col.add(ids=["s"], embeddings=[[1.0]])
    out = {"collections": [c.name for c in sc.list_collections()], "count": col.count(),
           "database": admin.get_database(name, tenant)["name"]}
    admin.delete_database(name, tenant)
    return out


step("database name with spaces", spaced_database)

step("delete database", lambda: admin.delete_database(database, tenant))
step("use collection of deleted database", lambda: cos.count())
finish()
