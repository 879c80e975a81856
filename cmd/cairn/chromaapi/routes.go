package chromaapi

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"

	"github.com/cairn-dev/cairn/vecstore/chroma"
	"github.com/google/uuid"
)

type handlerFunc = func(*Handler, *request) ([]byte, int, *apiError)

func newRoute(name, pattern, allow string, fns map[string]handlerFunc) *route {
	return &route{name: name, pattern: pattern, allow: allow, methods: fns}
}

// The route table. Allow headers list the methods in Chroma 1.0.0's order.
var (
	rtHeartbeat  = newRoute("heartbeat", "/api/v2/heartbeat", "GET,HEAD", map[string]handlerFunc{"GET": (*Handler).heartbeat})
	rtVersion    = newRoute("version", "/api/v2/version", "GET,HEAD", map[string]handlerFunc{"GET": (*Handler).version})
	rtHealth     = newRoute("healthcheck", "/api/v2/healthcheck", "GET,HEAD", map[string]handlerFunc{"GET": (*Handler).healthcheck})
	rtPreflight  = newRoute("pre-flight-checks", "/api/v2/pre-flight-checks", "GET,HEAD", map[string]handlerFunc{"GET": (*Handler).preflight})
	rtReset      = newRoute("reset", "/api/v2/reset", "POST", map[string]handlerFunc{"POST": (*Handler).reset})
	rtIdentity   = newRoute("identity", "/api/v2/auth/identity", "GET,HEAD", map[string]handlerFunc{"GET": (*Handler).identity})
	rtTenants    = newRoute("tenants", "/api/v2/tenants", "POST", map[string]handlerFunc{"POST": (*Handler).createTenant})
	rtTenant     = newRoute("tenant", "/api/v2/tenants/{tenant}", "GET,HEAD,PATCH", map[string]handlerFunc{"GET": (*Handler).getTenant, "PATCH": (*Handler).updateTenant})
	rtDatabases  = newRoute("databases", "/api/v2/tenants/{tenant}/databases", "GET,HEAD,POST", map[string]handlerFunc{"GET": (*Handler).listDatabases, "POST": (*Handler).createDatabase})
	rtDatabase   = newRoute("database", "/api/v2/tenants/{tenant}/databases/{database}", "GET,HEAD,DELETE", map[string]handlerFunc{"GET": (*Handler).getDatabase, "DELETE": (*Handler).deleteDatabase})
	rtColls      = newRoute("collections", "/api/v2/tenants/{tenant}/databases/{database}/collections", "POST,GET,HEAD", map[string]handlerFunc{"GET": (*Handler).listCollections, "POST": (*Handler).createCollection})
	rtCollsCount = newRoute("collections_count", "/api/v2/tenants/{tenant}/databases/{database}/collections_count", "GET,HEAD", map[string]handlerFunc{"GET": (*Handler).countCollections})
	rtColl       = newRoute("collection", "/api/v2/tenants/{tenant}/databases/{database}/collections/{collection}", "GET,HEAD,PUT,DELETE", map[string]handlerFunc{"GET": (*Handler).getCollection, "PUT": (*Handler).modifyCollection, "DELETE": (*Handler).deleteCollection})
	rtCollByID   = newRoute("collection_by_id", "/api/v2/tenants/{tenant}/databases/{database}/collections/by-id/{collection}", "GET,HEAD", map[string]handlerFunc{"GET": (*Handler).getCollectionByID})
	rtCRN        = newRoute("collection_by_crn", "/api/v2/collections/{crn}", "GET,HEAD", map[string]handlerFunc{"GET": (*Handler).getCollectionByCRN})
	rtFork       = newRoute("fork", "/api/v2/tenants/{tenant}/databases/{database}/collections/{collection}/fork", "POST", map[string]handlerFunc{"POST": (*Handler).fork})
	rtAdd        = newRoute("add", "/api/v2/tenants/{tenant}/databases/{database}/collections/{collection}/add", "POST", map[string]handlerFunc{"POST": (*Handler).add})
	rtUpsert     = newRoute("upsert", "/api/v2/tenants/{tenant}/databases/{database}/collections/{collection}/upsert", "POST", map[string]handlerFunc{"POST": (*Handler).upsert})
	rtUpdate     = newRoute("update", "/api/v2/tenants/{tenant}/databases/{database}/collections/{collection}/update", "POST", map[string]handlerFunc{"POST": (*Handler).update})
	rtDelete     = newRoute("delete", "/api/v2/tenants/{tenant}/databases/{database}/collections/{collection}/delete", "POST", map[string]handlerFunc{"POST": (*Handler).deleteRecords})
	rtGet        = newRoute("get", "/api/v2/tenants/{tenant}/databases/{database}/collections/{collection}/get", "POST", map[string]handlerFunc{"POST": (*Handler).get})
	rtQuery      = newRoute("query", "/api/v2/tenants/{tenant}/databases/{database}/collections/{collection}/query", "POST", map[string]handlerFunc{"POST": (*Handler).query})
	rtCount      = newRoute("count", "/api/v2/tenants/{tenant}/databases/{database}/collections/{collection}/count", "GET,HEAD", map[string]handlerFunc{"GET": (*Handler).count})
)

// routeNames lists the name of every route (for Stats).
func routeNames() []string {
	var names []string
	for _, rt := range []*route{rtHeartbeat, rtVersion, rtHealth, rtPreflight, rtReset, rtIdentity, rtTenants, rtTenant,
		rtDatabases, rtDatabase, rtColls, rtCollsCount, rtColl, rtCollByID, rtCRN, rtFork, rtAdd, rtUpsert, rtUpdate,
		rtDelete, rtGet, rtQuery, rtCount} {
		names = append(names, rt.name)
	}
	return names
}

var recordRoutes = map[string]*route{"fork": rtFork, "add": rtAdd, "upsert": rtUpsert, "update": rtUpdate,
	"delete": rtDelete, "get": rtGet, "query": rtQuery, "count": rtCount}

// match finds the route for the segments after /api/v2 and returns the path
// parameters in order (tenant, database, collection).
func match(s []string) (*route, []string) {
	switch len(s) {
	case 0:
		return rtHeartbeat, nil
	case 1:
		switch s[0] {
		case "heartbeat":
			return rtHeartbeat, nil
		case "version":
			return rtVersion, nil
		case "healthcheck":
			return rtHealth, nil
		case "pre-flight-checks":
			return rtPreflight, nil
		case "reset":
			return rtReset, nil
		case "tenants":
			return rtTenants, nil
		}
	case 2:
		switch {
		case s[0] == "auth" && s[1] == "identity":
			return rtIdentity, nil
		case s[0] == "tenants":
			return rtTenant, s[1:]
		case s[0] == "collections":
			return rtCRN, s[1:]
		}
	}
	if s[0] != "tenants" || len(s) < 3 || s[2] != "databases" {
		return nil, nil
	}
	switch len(s) {
	case 3:
		return rtDatabases, s[1:2]
	case 4:
		return rtDatabase, []string{s[1], s[3]}
	case 5:
		switch s[4] {
		case "collections":
			return rtColls, []string{s[1], s[3]}
		case "collections_count":
			return rtCollsCount, []string{s[1], s[3]}
		}
	case 6:
		if s[4] == "collections" {
			return rtColl, []string{s[1], s[3], s[5]} // a name for GET and DELETE; canonicalized in PUT
		}
	case 7:
		if s[4] != "collections" {
			return nil, nil
		}
		if s[5] == "by-id" {
			return rtCollByID, []string{s[1], s[3], s[6]}
		}
		if rt := recordRoutes[s[6]]; rt != nil {
			return rt, []string{s[1], s[3], canonicalID(s[5])}
		}
	}
	return nil, nil
}

var emptyObject = []byte("{}")

// canonicalID returns the hyphenated lower-case form of a collection UUID
// given in any form Chroma accepts (simple, braced, urn:uuid:); anything
// else is returned unchanged for the store to refuse.
func canonicalID(s string) string {
	if len(s) == 36 {
		return s
	}
	u, err := uuid.Parse(s)
	if err != nil {
		return s
	}
	return u.String()
}

// ---- server-level routes

func (h *Handler) heartbeat(*request) ([]byte, int, *apiError) {
	b := append([]byte(`{"nanosecond heartbeat":`), strconv.FormatInt(h.opts.Now().UnixNano(), 10)...)
	return append(b, '}'), 200, nil
}

func (h *Handler) version(*request) ([]byte, int, *apiError) {
	return appendString(nil, Version), 200, nil
}

func (h *Handler) healthcheck(*request) ([]byte, int, *apiError) {
	return []byte(`{"is_executor_ready":true,"is_log_client_ready":true}`), 200, nil
}

// chromaMaxBatchSize is what Chroma 1.0.0 reports as max_batch_size in its
// pre-flight checks (it enforces nothing; Options.MaxBatchSize is cairn's limit).
const chromaMaxBatchSize = 5461

func (h *Handler) preflight(*request) ([]byte, int, *apiError) {
	n := min(chromaMaxBatchSize, h.opts.MaxBatchSize)
	return []byte(`{"max_batch_size":` + strconv.Itoa(n) + `,"supports_base64_encoding":true}`), 200, nil
}

func (h *Handler) reset(rq *request) ([]byte, int, *apiError) {
	if !h.opts.AllowReset {
		return nil, 0, &apiError{status: 403, name: "ChromaError", message: "Reset is disabled by config"}
	}
	if err := h.coll.Reset(rq.ctx); err != nil {
		return nil, 0, fromStore(err)
	}
	return []byte("true"), 200, nil
}

func (h *Handler) identity(*request) ([]byte, int, *apiError) {
	return []byte(`{"user_id":"","tenant":"default_tenant","databases":["default_database"]}`), 200, nil
}

// ---- tenants and databases

// nameBody decodes {"name": string}.
func (h *Handler) nameBody(rq *request, structName string) (string, *apiError) {
	v, aerr := h.body(rq)
	if aerr != nil {
		return "", aerr
	}
	o, aerr := asObject(v, structName)
	if aerr != nil {
		return "", aerr
	}
	x, ok := o.m["name"]
	if !ok {
		return "", missing("name")
	}
	return asString(x, "name")
}

func (h *Handler) createTenant(rq *request) ([]byte, int, *apiError) {
	name, aerr := h.nameBody(rq, "CreateTenantPayload")
	if aerr != nil {
		return nil, 0, aerr
	}
	if err := h.coll.CreateTenant(rq.ctx, name); err != nil {
		return nil, 0, fromStore(err)
	}
	return emptyObject, 200, nil
}

func (h *Handler) getTenant(rq *request) ([]byte, int, *apiError) {
	t, err := h.coll.GetTenant(rq.ctx, rq.segs[0])
	if err != nil {
		return nil, 0, fromStore(err)
	}
	b := append([]byte(`{"name":`), appendString(nil, t.Name)...)
	return append(b, `,"resource_name":null}`...), 200, nil
}

func (h *Handler) updateTenant(rq *request) ([]byte, int, *apiError) {
	v, aerr := h.body(rq)
	if aerr != nil {
		return nil, 0, aerr
	}
	o, aerr := asObject(v, "UpdateTenantPayload")
	if aerr != nil {
		return nil, 0, aerr
	}
	x, ok := o.m["resource_name"]
	if !ok {
		return nil, 0, missing("resource_name")
	}
	if _, aerr := asString(x, "resource_name"); aerr != nil {
		return nil, 0, aerr
	}
	// A no-op on single-node Chroma, even for a missing tenant.
	return emptyObject, 200, nil
}

// pageQuery parses ?limit&offset as Chroma does (u32, offset default 0).
func pageQuery(rq *request) (*int, int, *apiError) {
	q, err := url.ParseQuery(rq.r.URL.RawQuery)
	if err != nil {
		return nil, 0, errInvalid("Failed to deserialize query string: %v", err)
	}
	parse := func(key string) (*int, *apiError) {
		vs, ok := q[key]
		if !ok {
			return nil, nil
		}
		if len(vs) > 1 {
			return nil, errInvalid("Failed to deserialize query string: duplicate field `%s`", key)
		}
		s := vs[0]
		if s == "" {
			return nil, errInvalid("Failed to deserialize query string: %s: cannot parse integer from empty string", key)
		}
		n, err := strconv.ParseUint(s, 10, 32)
		if err != nil {
			if isRangeErr(err) {
				return nil, errInvalid("Failed to deserialize query string: %s: number too large to fit in target type", key)
			}
			return nil, errInvalid("Failed to deserialize query string: %s: invalid digit found in string", key)
		}
		i := int(n)
		return &i, nil
	}
	limit, aerr := parse("limit")
	if aerr != nil {
		return nil, 0, aerr
	}
	off, aerr := parse("offset")
	if aerr != nil {
		return nil, 0, aerr
	}
	offset := 0
	if off != nil {
		offset = *off
	}
	return limit, offset, nil
}

func appendDatabase(b []byte, d chroma.Database) []byte {
	b = append(b, `{"id":`...)
	b = appendString(b, d.ID)
	b = append(b, `,"name":`...)
	b = appendString(b, d.Name)
	b = append(b, `,"tenant":`...)
	b = appendString(b, d.Tenant)
	return append(b, '}')
}

func (h *Handler) listDatabases(rq *request) ([]byte, int, *apiError) {
	limit, offset, aerr := pageQuery(rq)
	if aerr != nil {
		return nil, 0, aerr
	}
	dbs, err := h.coll.ListDatabases(rq.ctx, rq.segs[0], limit, offset)
	if err != nil {
		return nil, 0, fromStore(err)
	}
	b := []byte{'['}
	for i, d := range dbs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendDatabase(b, d)
	}
	return append(b, ']'), 200, nil
}

func (h *Handler) createDatabase(rq *request) ([]byte, int, *apiError) {
	name, aerr := h.nameBody(rq, "CreateDatabasePayload")
	if aerr != nil {
		return nil, 0, aerr
	}
	if err := h.coll.CreateDatabase(rq.ctx, rq.segs[0], name); err != nil {
		return nil, 0, fromStore(err)
	}
	return emptyObject, 200, nil
}

func (h *Handler) getDatabase(rq *request) ([]byte, int, *apiError) {
	d, err := h.coll.GetDatabase(rq.ctx, rq.segs[0], rq.segs[1])
	if err != nil {
		return nil, 0, fromStore(err)
	}
	return appendDatabase(nil, d), 200, nil
}

func (h *Handler) deleteDatabase(rq *request) ([]byte, int, *apiError) {
	if err := h.coll.DeleteDatabase(rq.ctx, rq.segs[0], rq.segs[1]); err != nil {
		return nil, 0, fromStore(err)
	}
	return emptyObject, 200, nil
}

// ---- collections

func (h *Handler) listCollections(rq *request) ([]byte, int, *apiError) {
	limit, offset, aerr := pageQuery(rq)
	if aerr != nil {
		return nil, 0, aerr
	}
	cs, err := h.coll.ListCollections(rq.ctx, rq.segs[0], rq.segs[1], limit, offset)
	if err != nil {
		return nil, 0, fromStore(err)
	}
	b := []byte{'['}
	for i := range cs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendCollection(b, &cs[i])
	}
	return append(b, ']'), 200, nil
}

func (h *Handler) countCollections(rq *request) ([]byte, int, *apiError) {
	n, err := h.coll.CountCollections(rq.ctx, rq.segs[0], rq.segs[1])
	if err != nil {
		return nil, 0, fromStore(err)
	}
	return strconv.AppendInt(nil, int64(n), 10), 200, nil
}

var hnswCreateKeys = []string{"space", "ef_construction", "ef_search", "max_neighbors", "num_threads",
	"resize_factor", "sync_threshold", "batch_size"}
var hnswUpdateKeys = []string{"ef_search", "max_neighbors", "num_threads", "resize_factor",
	"sync_threshold", "batch_size"}

func unknownField(path, key string, expected []string) *apiError {
	return shapeErr(path, "unknown field `%s`, expected one of `%s`", key, strings.Join(expected, "`, `"))
}

// asHNSW decodes the hnsw part of a create (create=true) or modify configuration.
func asHNSW(v any, path string, create bool) (*chroma.HNSWParams, *apiError) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, invalidType(path, v, "struct HnswConfiguration")
	}
	keys := hnswUpdateKeys
	if create {
		keys = hnswCreateKeys
	}
	p := &chroma.HNSWParams{}
	for k, x := range m {
		fp := joinPath(path, k)
		known := false
		for _, kk := range keys {
			known = known || kk == k
		}
		if !known {
			return nil, unknownField(path, k, keys)
		}
		if x == nil {
			continue
		}
		switch k {
		case "space":
			s, aerr := asString(x, fp)
			if aerr != nil {
				return nil, aerr
			}
			if s != "l2" && s != "cosine" && s != "ip" {
				return nil, shapeErr(fp, "unknown variant `%s`, expected one of `l2`, `cosine`, `ip`", s)
			}
			sp := chroma.Space(s)
			p.Space = &sp
		case "resize_factor":
			f, aerr := asFloat64(x, fp)
			if aerr != nil {
				return nil, aerr
			}
			p.ResizeFactor = &f
		default:
			n, aerr := asInt(x, fp)
			if aerr != nil {
				return nil, aerr
			}
			switch k {
			case "ef_construction":
				p.EfConstruction = &n
			case "ef_search":
				p.EfSearch = &n
			case "max_neighbors":
				p.MaxNeighbors = &n
			case "num_threads":
				p.NumThreads = &n
			case "sync_threshold":
				p.SyncThreshold = &n
			case "batch_size":
				p.BatchSize = &n
			}
		}
	}
	return p, nil
}

// asEmbeddingFunction validates an embedding_function configuration
// (null, {"type":"legacy"} or {"type":"known","name","config"}) and returns
// it as JSON to be stored opaquely.
func asEmbeddingFunction(v any, path string) (json.RawMessage, *apiError) {
	if v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, invalidType(path, v, "internally tagged enum EmbeddingFunctionConfiguration")
	}
	t, ok := m["type"]
	if !ok {
		return nil, shapeErr(path, "missing field `type`")
	}
	ts, aerr := asString(t, joinPath(path, "type"))
	if aerr != nil {
		return nil, aerr
	}
	switch ts {
	case "legacy":
		return json.RawMessage(`{"type":"legacy"}`), nil
	case "known":
		name, ok := m["name"]
		if !ok {
			return nil, shapeErr(path, "missing field `name`")
		}
		ns, aerr := asString(name, joinPath(path, "name"))
		if aerr != nil {
			return nil, aerr
		}
		cfg, ok := m["config"]
		if !ok {
			return nil, shapeErr(path, "missing field `config`")
		}
		b := append([]byte(`{"type":"known","name":`), appendString(nil, ns)...)
		cj, err := json.Marshal(cfg)
		if err != nil {
			return nil, shapeErr(joinPath(path, "config"), "%v", err)
		}
		b = append(b, `,"config":`...)
		b = append(b, cj...)
		return append(b, '}'), nil
	}
	return nil, shapeErr(path, "unknown variant `%s`, expected `legacy` or `known`", ts)
}

// configuration holds a decoded create or modify configuration.
type configuration struct {
	hnsw     *chroma.HNSWParams
	spann    *chroma.SPANNParams
	ef       json.RawMessage
	efSet    bool
	hasSPANN bool
}

func asConfiguration(v any, path string, create bool) (configuration, *apiError) {
	var c configuration
	m, ok := v.(map[string]any)
	if !ok {
		return c, invalidType(path, v, "struct CollectionConfiguration")
	}
	if x, ok := m["hnsw"]; ok && x != nil {
		p, aerr := asHNSW(x, joinPath(path, "hnsw"), create)
		if aerr != nil {
			return c, aerr
		}
		c.hnsw = p
	}
	if x, ok := m["spann"]; ok && x != nil {
		sm, ok := x.(map[string]any)
		if !ok {
			return c, invalidType(joinPath(path, "spann"), x, "struct SpannConfiguration")
		}
		c.spann = &chroma.SPANNParams{}
		c.hasSPANN = true
		if sp, ok := sm["space"]; ok && sp != nil {
			s, aerr := asString(sp, joinPath(path, "spann.space"))
			if aerr != nil {
				return c, aerr
			}
			if s != "l2" && s != "cosine" && s != "ip" {
				return c, shapeErr(joinPath(path, "spann.space"), "unknown variant `%s`, expected one of `l2`, `cosine`, `ip`", s)
			}
			space := chroma.Space(s)
			c.spann.Space = &space
		}
	}
	if x, ok := m["embedding_function"]; ok {
		ef, aerr := asEmbeddingFunction(x, joinPath(path, "embedding_function"))
		if aerr != nil {
			return c, aerr
		}
		c.ef, c.efSet = ef, true
	}
	return c, nil
}

func (h *Handler) createCollection(rq *request) ([]byte, int, *apiError) {
	v, aerr := h.body(rq)
	if aerr != nil {
		return nil, 0, aerr
	}
	o, aerr := asObject(v, "CreateCollectionPayload")
	if aerr != nil {
		return nil, 0, aerr
	}
	req := chroma.CreateCollectionRequest{Tenant: rq.segs[0], Database: rq.segs[1]}
	x, ok := o.m["name"]
	if !ok {
		return nil, 0, missing("name")
	}
	if req.Name, aerr = asString(x, "name"); aerr != nil {
		return nil, 0, aerr
	}
	if x, ok := o.field("metadata"); ok {
		if req.Metadata, aerr = asMetadata(x, "metadata", false); aerr != nil {
			return nil, 0, aerr
		}
	}
	if x, ok := o.field("configuration"); ok {
		c, aerr := asConfiguration(x, "configuration", true)
		if aerr != nil {
			return nil, 0, aerr
		}
		req.HNSW, req.SPANN, req.EmbeddingFunction = c.hnsw, c.spann, c.ef
	}
	if x, ok := o.field("get_or_create"); ok {
		if req.GetOrCreate, aerr = asBool(x, "get_or_create"); aerr != nil {
			return nil, 0, aerr
		}
	}
	c, err := h.coll.CreateCollection(rq.ctx, req)
	if err != nil {
		return nil, 0, fromStore(err)
	}
	return appendCollection(nil, &c), 200, nil
}

func (h *Handler) getCollection(rq *request) ([]byte, int, *apiError) {
	c, err := h.coll.GetCollection(rq.ctx, rq.segs[0], rq.segs[1], rq.segs[2])
	if err != nil {
		return nil, 0, fromStore(err)
	}
	return appendCollection(nil, &c), 200, nil
}

// getCollectionByID serves C/by-id/{uuid} (chromadb JS >= 3.4.3
// getCollectionById), which Chroma 1.0.0 lacks (404 there).
func (h *Handler) getCollectionByID(rq *request) ([]byte, int, *apiError) {
	c, err := h.coll.GetCollectionByID(rq.ctx, rq.segs[2])
	if err != nil {
		return nil, 0, fromStore(err)
	}
	if c.Tenant != rq.segs[0] || c.Database != rq.segs[1] {
		return nil, 0, fromStore(&chroma.Error{Class: chroma.ErrNotFound, Rule: chroma.RuleNoCollection,
			Field: "id", Value: rq.segs[2], Reason: "the collection is in another tenant or database"})
	}
	return appendCollection(nil, &c), 200, nil
}

// getCollectionByCRN serves /api/v2/collections/{tenant:database:name}.
// Chroma 1.0.0 single-node drops the connection for a well-formed CRN; this
// adapter looks the collection up.
func (h *Handler) getCollectionByCRN(rq *request) ([]byte, int, *apiError) {
	parts := strings.Split(rq.segs[0], ":")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return nil, 0, errInvalid("Validation error: crn: CRN must be in the format <tenant_resource_name>:<database_name>:<collection_name> with non-empty parts")
	}
	c, err := h.coll.GetCollection(rq.ctx, parts[0], parts[1], parts[2])
	if err != nil {
		return nil, 0, fromStore(err)
	}
	return appendCollection(nil, &c), 200, nil
}

func (h *Handler) modifyCollection(rq *request) ([]byte, int, *apiError) {
	v, aerr := h.body(rq)
	if aerr != nil {
		return nil, 0, aerr
	}
	o, aerr := asObject(v, "UpdateCollectionPayload")
	if aerr != nil {
		return nil, 0, aerr
	}
	var req chroma.ModifyCollectionRequest
	if x, ok := o.field("new_name"); ok {
		s, aerr := asString(x, "new_name")
		if aerr != nil {
			return nil, 0, aerr
		}
		req.NewName = &s
	}
	if x, ok := o.field("new_metadata"); ok {
		md, aerr := asMetadata(x, "new_metadata", true)
		if aerr != nil {
			return nil, 0, aerr
		}
		req.NewMetadata, req.NewMetadataSet = md, true
	}
	if x, ok := o.field("new_configuration"); ok {
		c, aerr := asConfiguration(x, "new_configuration", false)
		if aerr != nil {
			return nil, 0, aerr
		}
		req.HNSW, req.SPANN = c.hnsw, c.spann
		req.EmbeddingFunction, req.EmbeddingFunctionSet = c.ef, c.efSet
	}
	if err := h.coll.ModifyCollection(rq.ctx, canonicalID(rq.segs[2]), req); err != nil {
		return nil, 0, fromStore(err)
	}
	return emptyObject, 200, nil
}

func (h *Handler) deleteCollection(rq *request) ([]byte, int, *apiError) {
	if err := h.coll.DeleteCollection(rq.ctx, rq.segs[0], rq.segs[1], rq.segs[2]); err != nil {
		return nil, 0, fromStore(err)
	}
	return emptyObject, 200, nil
}

func (h *Handler) fork(rq *request) ([]byte, int, *apiError) {
	v, aerr := h.body(rq)
	if aerr != nil {
		return nil, 0, aerr
	}
	o, aerr := asObject(v, "ForkCollectionPayload")
	if aerr != nil {
		return nil, 0, aerr
	}
	x, ok := o.m["new_name"]
	if !ok {
		return nil, 0, missing("new_name")
	}
	if _, aerr := asString(x, "new_name"); aerr != nil {
		return nil, 0, aerr
	}
	if _, err := chroma.ParseCollectionID(rq.segs[2]); err != nil {
		return nil, 0, fromStore(err)
	}
	return nil, 0, &apiError{status: 501, name: "ChromaError",
		message: "Collection forking is unsupported for local chroma"}
}
