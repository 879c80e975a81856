package chromaapi

import (
	"context"

	"github.com/cairn-dev/cairn/vecstore/chroma"
	"github.com/cairn-dev/cairn/vecstore/where"
	"strings"
)

// writeBody is a decoded add, upsert or update body.
type writeBody struct {
	ids        []string
	embeddings [][]float32
	embSet     bool
	documents  []*string
	uris       []*string
	metadatas  []chroma.Metadata
}

// decodeWrite decodes the body of add/upsert (embeddings required, no null
// metadata values in add) or update (everything but ids optional).
func (h *Handler) decodeWrite(rq *request, structName string, embRequired, nullMeta, nullEmb bool) (writeBody, *apiError) {
	var wb writeBody
	v, aerr := h.body(rq)
	if aerr != nil {
		return wb, aerr
	}
	o, aerr := asObject(v, structName)
	if aerr != nil {
		return wb, aerr
	}
	x, ok := o.m["ids"]
	if !ok {
		return wb, missing("ids")
	}
	if wb.ids, aerr = asStrings(x, "ids"); aerr != nil {
		return wb, aerr
	}
	if x, ok := o.m["embeddings"]; ok && (x != nil || embRequired) {
		if wb.embeddings, aerr = asEmbeddings(x, "embeddings", nullEmb); aerr != nil {
			return wb, aerr
		}
		wb.embSet = true
	} else if embRequired {
		return wb, missing("embeddings")
	}
	if x, ok := o.field("documents"); ok {
		if wb.documents, aerr = asNullableStrings(x, "documents"); aerr != nil {
			return wb, aerr
		}
	}
	if x, ok := o.field("uris"); ok {
		if wb.uris, aerr = asNullableStrings(x, "uris"); aerr != nil {
			return wb, aerr
		}
	}
	if x, ok := o.field("metadatas"); ok {
		if wb.metadatas, aerr = asMetadatas(x, "metadatas", nullMeta); aerr != nil {
			return wb, aerr
		}
	}
	if len(wb.ids) > h.opts.MaxBatchSize {
		return wb, errInvalid("Batch of %d records exceeds this server's limit of %d", len(wb.ids), h.opts.MaxBatchSize)
	}
	return wb, refuseNUL(wb)
}

// refuseNUL refuses a NUL character in a record's id, document, uri,
// metadata key or string value with a 400 naming the field, before
// anything is written. Chroma has no such rule (a JSON string may hold
// \u0000, and its API documents no refusal); cairn refuses NUL as it
// does in a message's content: C strings, terminals and many tools cut
// text at a NUL, so what a client reads back or exports would differ from
// what it wrote. A declared divergence (doc.go).
func refuseNUL(wb writeBody) *apiError {
	nul := func(s string) bool { return strings.IndexByte(s, 0) >= 0 }
	refuse := func(field string) *apiError {
		return errInvalid("%s: must not contain a NUL character (\\u0000)", field)
	}
	for i, id := range wb.ids {
		if nul(id) {
			return refuse(indexPath("ids", i))
		}
	}
	for _, f := range []struct {
		name  string
		texts []*string
	}{{"documents", wb.documents}, {"uris", wb.uris}} {
		for i, s := range f.texts {
			if s != nil && nul(*s) {
				return refuse(indexPath(f.name, i))
			}
		}
	}
	for i, md := range wb.metadatas {
		for k, v := range md {
			if nul(k) {
				return refuse(indexPath("metadatas", i) + ": a key")
			}
			if v.Kind == where.KindString && nul(v.Str) {
				return refuse(joinPath(indexPath("metadatas", i), k))
			}
		}
	}
	return nil
}

func (h *Handler) add(rq *request) ([]byte, int, *apiError) {
	wb, aerr := h.decodeWrite(rq, "AddCollectionRecordsPayload", true, false, false)
	if aerr != nil {
		return nil, 0, aerr
	}
	err := h.coll.Add(rq.ctx, rq.segs[2], chroma.AddRequest{IDs: wb.ids, Embeddings: wb.embeddings,
		Documents: wb.documents, URIs: wb.uris, Metadatas: wb.metadatas})
	if err != nil {
		return nil, 0, fromStore(err)
	}
	return emptyObject, 201, nil
}

func (h *Handler) upsert(rq *request) ([]byte, int, *apiError) {
	wb, aerr := h.decodeWrite(rq, "UpsertCollectionRecordsPayload", true, true, false)
	if aerr != nil {
		return nil, 0, aerr
	}
	err := h.coll.Upsert(rq.ctx, rq.segs[2], chroma.AddRequest{IDs: wb.ids, Embeddings: wb.embeddings,
		Documents: wb.documents, URIs: wb.uris, Metadatas: wb.metadatas})
	if err != nil {
		return nil, 0, fromStore(err)
	}
	return emptyObject, 200, nil
}

func (h *Handler) update(rq *request) ([]byte, int, *apiError) {
	wb, aerr := h.decodeWrite(rq, "UpdateCollectionRecordsPayload", false, true, true)
	if aerr != nil {
		return nil, 0, aerr
	}
	req := chroma.UpdateRequest{IDs: wb.ids, Documents: wb.documents, URIs: wb.uris, Metadatas: wb.metadatas}
	if wb.embSet {
		req.Embeddings = wb.embeddings
		if req.Embeddings == nil {
			req.Embeddings = [][]float32{}
		}
	}
	if err := h.coll.Update(rq.ctx, rq.segs[2], req); err != nil {
		return nil, 0, fromStore(err)
	}
	return emptyObject, 200, nil
}

// filters holds the decoded ids/where/where_document of get, query, delete.
type filters struct {
	ids   []string
	where *where.Expr
	doc   *where.DocExpr
}

// decodeFilters reads ids, where and where_document from o. The collection
// id is checked first, as Chroma does, so a bad UUID wins over a bad filter.
func (h *Handler) decodeFilters(ctx context.Context, o object, collID string) (filters, *apiError) {
	var f filters
	var aerr *apiError
	if x, ok := o.field("ids"); ok {
		if f.ids, aerr = asStrings(x, "ids"); aerr != nil {
			return f, aerr
		}
		if len(f.ids) > h.opts.MaxIDs {
			return f, errInvalid("%d ids exceed this server's limit of %d ids per request", len(f.ids), h.opts.MaxIDs)
		}
	}
	wx, hasWhere := o.field("where")
	dx, hasDoc := o.field("where_document")
	if _, err := chroma.ParseCollectionID(collID); err != nil {
		return f, fromStore(err)
	}
	if hasWhere {
		if h.opts.MaxFilterDepth > 0 && filterDepth(wx) > h.opts.MaxFilterDepth {
			return f, errInvalid("Invalid where clause: nested deeper than %d levels", h.opts.MaxFilterDepth)
		}
		w, err := where.FromJSON(wx)
		if err != nil {
			return f, h.filterError(ctx, collID, err)
		}
		if aerr := h.checkFilterSize("where", w.Size()); aerr != nil {
			return f, aerr
		}
		f.where = w
	}
	if hasDoc {
		if h.opts.MaxFilterDepth > 0 && filterDepth(dx) > h.opts.MaxFilterDepth {
			return f, errInvalid("Invalid where document clause: nested deeper than %d levels", h.opts.MaxFilterDepth)
		}
		d, err := where.DocumentFromJSON(dx)
		if err != nil {
			return f, h.filterError(ctx, collID, err)
		}
		if aerr := h.checkFilterSize("where_document", d.Size()); aerr != nil {
			return f, aerr
		}
		f.doc = d
	}
	return f, nil
}

// checkFilterSize refuses a filter over the configured clause or value
// limits.
func (h *Handler) checkFilterSize(field string, sz where.Size) *apiError {
	if sz.Clauses > h.opts.MaxFilterClauses {
		return errInvalid("Invalid %s: %d clauses exceed this server's limit of %d", field, sz.Clauses, h.opts.MaxFilterClauses)
	}
	if sz.Values > h.opts.MaxFilterValues {
		return errInvalid("Invalid %s: %d $in/$nin values exceed this server's limit of %d", field, sz.Values, h.opts.MaxFilterValues)
	}
	return nil
}

// filterError answers an invalid filter. Chroma looks the collection up
// before it validates filters, so a missing collection wins (404).
func (h *Handler) filterError(ctx context.Context, collID string, err error) *apiError {
	if _, gerr := h.coll.GetCollectionByID(ctx, collID); gerr != nil {
		return fromStore(gerr)
	}
	return fromStore(err)
}

// filterDepth counts the $and/$or levels of a decoded filter (a leaf is 0).
func filterDepth(v any) int {
	m, ok := v.(map[string]any)
	if !ok {
		return 0
	}
	d := 0
	for k, x := range m {
		if k != "$and" && k != "$or" {
			continue
		}
		a, _ := x.([]any)
		c := 0
		for _, y := range a {
			c = max(c, filterDepth(y))
		}
		d = max(d, c+1)
	}
	return d
}

func (h *Handler) get(rq *request) ([]byte, int, *apiError) {
	v, aerr := h.body(rq)
	if aerr != nil {
		return nil, 0, aerr
	}
	o, aerr := asObject(v, "GetRequestPayload")
	if aerr != nil {
		return nil, 0, aerr
	}
	var req chroma.GetRequest
	if x, ok := o.field("limit"); ok {
		n, aerr := asUint(x, "limit", 32)
		if aerr != nil {
			return nil, 0, aerr
		}
		req.Limit = &n
	}
	if x, ok := o.field("offset"); ok {
		if req.Offset, aerr = asUint(x, "offset", 32); aerr != nil {
			return nil, 0, aerr
		}
	}
	if x, ok := o.m["include"]; ok {
		if req.Include, aerr = asInclude(x, "include"); aerr != nil {
			return nil, 0, aerr
		}
	}
	f, aerr := h.decodeFilters(rq.ctx, o, rq.segs[2])
	if aerr != nil {
		return nil, 0, aerr
	}
	req.IDs, req.Where, req.WhereDocument, req.MaxScanBytes = f.ids, f.where, f.doc, h.opts.MaxScanBytes
	req.MaxAnswerBytes = h.opts.MaxAnswerBytes // the store stops copying past it
	// Ask for one record over the limit to tell a get that fits from one
	// that does not, without building the whole answer.
	maxRes := h.opts.MaxRequestResults
	if req.Limit != nil && *req.Limit > maxRes {
		return nil, 0, errInvalid("limit %d exceeds this server's limit of %d records per request", *req.Limit, maxRes)
	}
	capped := req.Limit == nil
	if capped {
		n := maxRes + 1
		req.Limit = &n
	}
	res, err := h.coll.Get(rq.ctx, rq.segs[2], req)
	if err != nil {
		return nil, 0, fromStore(err)
	}
	if capped && len(res.IDs) > maxRes {
		return nil, 0, errInvalid("get matches more than this server's limit of %d records per request; page with limit and offset", maxRes)
	}
	if n := getAnswerBytes(res); n > h.opts.MaxAnswerBytes {
		return nil, 0, h.answerTooLarge(n, "page with limit and offset, or leave documents, embeddings or metadatas out of include")
	}
	return appendGetResult(make([]byte, 0, 256), res), 200, nil
}

func (h *Handler) query(rq *request) ([]byte, int, *apiError) {
	v, aerr := h.body(rq)
	if aerr != nil {
		return nil, 0, aerr
	}
	o, aerr := asObject(v, "QueryRequestPayload")
	if aerr != nil {
		return nil, 0, aerr
	}
	var req chroma.QueryRequest
	x, ok := o.m["query_embeddings"]
	if !ok {
		return nil, 0, missing("query_embeddings")
	}
	if req.Embeddings, aerr = asVectors(x, "query_embeddings"); aerr != nil {
		return nil, 0, aerr
	}
	if x, ok := o.field("n_results"); ok {
		n, aerr := asUint(x, "n_results", 32)
		if aerr != nil {
			return nil, 0, aerr
		}
		req.NResults = &n
	}
	if x, ok := o.m["include"]; ok {
		if req.Include, aerr = asInclude(x, "include"); aerr != nil {
			return nil, 0, aerr
		}
	}
	if len(req.Embeddings) > h.opts.MaxBatchSize {
		return nil, 0, errInvalid("Batch of %d query embeddings exceeds this server's limit of %d",
			len(req.Embeddings), h.opts.MaxBatchSize)
	}
	if req.NResults != nil && *req.NResults > h.opts.MaxNResults {
		return nil, 0, errInvalid("n_results %d exceeds this server's limit of %d", *req.NResults, h.opts.MaxNResults)
	}
	nres := chroma.DefaultNResults
	if req.NResults != nil {
		nres = *req.NResults
	}
	if total := len(req.Embeddings) * nres; total > h.opts.MaxRequestResults {
		return nil, 0, errInvalid("%d query embeddings x n_results %d = %d results exceed this server's limit of %d results per request",
			len(req.Embeddings), nres, total, h.opts.MaxRequestResults)
	}
	f, aerr := h.decodeFilters(rq.ctx, o, rq.segs[2])
	if aerr != nil {
		return nil, 0, aerr
	}
	req.IDs, req.Where, req.WhereDocument, req.MaxScanBytes = f.ids, f.where, f.doc, h.opts.MaxScanBytes
	req.MaxAnswerBytes = h.opts.MaxAnswerBytes // the store stops copying past it
	res, err := h.coll.Query(rq.ctx, rq.segs[2], req)
	if err != nil {
		return nil, 0, fromStore(err)
	}
	if n := queryAnswerBytes(res, h.opts.MaxAnswerBytes); n > h.opts.MaxAnswerBytes {
		return nil, 0, h.answerTooLarge(n, "send fewer query embeddings, a smaller n_results, or leave documents, embeddings or metadatas out of include")
	}
	return appendQueryResult(make([]byte, 0, 256), res), 200, nil
}

// answerTooLarge refuses an answer over MaxAnswerBytes, before its JSON is
// built, saying how to ask for less.
func (h *Handler) answerTooLarge(n int64, hint string) *apiError {
	return errInvalid("The answer exceeds this server's limit of %d bytes (max_answer_bytes): it carries at least %d; %s",
		h.opts.MaxAnswerBytes, n, hint)
}

func (h *Handler) deleteRecords(rq *request) ([]byte, int, *apiError) {
	v, aerr := h.body(rq)
	if aerr != nil {
		return nil, 0, aerr
	}
	o, aerr := asObject(v, "DeleteCollectionRecordsPayload")
	if aerr != nil {
		return nil, 0, aerr
	}
	f, aerr := h.decodeFilters(rq.ctx, o, rq.segs[2])
	if aerr != nil {
		return nil, 0, aerr
	}
	err := h.coll.Delete(rq.ctx, rq.segs[2], chroma.DeleteRequest{IDs: f.ids, Where: f.where, WhereDocument: f.doc,
		MaxScanBytes: h.opts.MaxScanBytes})
	if err != nil {
		return nil, 0, fromStore(err)
	}
	return emptyObject, 200, nil
}

func (h *Handler) count(rq *request) ([]byte, int, *apiError) {
	n, err := h.coll.Count(rq.ctx, rq.segs[2])
	if err != nil {
		return nil, 0, fromStore(err)
	}
	b := make([]byte, 0, 8)
	return appendInt(b, n), 200, nil
}
