package chroma

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/cairn-dev/cairn/vecstore/where"
)

// The rules of record writes and reads, and the shapes of their results.

// WriteKind is a record write: add, upsert or update.
type WriteKind int

const (
	WriteAdd WriteKind = iota
	WriteUpsert
	WriteUpdate
)

// CheckWrite checks a write before the collection is read:
// it returns the embeddings' dimension (0 when none), and besides err a
// refusal to return only after the dimension has been checked against the
// collection (and fixed there, when it had none: see AdoptVectors).
func CheckWrite(kind WriteKind, req UpdateRequest) (dim int, refusal, err error) {
	if kind != WriteUpdate && req.Embeddings == nil {
		return 0, nil, Missing("embeddings")
	}
	return checkWrite(kind, req)
}

// Missing is the refusal of a request without the required field.
func Missing(field string) error {
	return invalidErr(RuleMissing, field, "required")
}

// AdoptVectors checks vectors of dimension dim from model against c and
// records model on a collection that has never held a vector (empty: it
// holds no record); it sets c.Dimension when it was unset.
func AdoptVectors(c *Collection, empty bool, dim int, model string) error {
	if dim == 0 {
		return nil
	}
	if c.Dimension != 0 && c.Dimension != dim {
		return dimMismatch(c.Dimension, dim)
	}
	if model != c.Model {
		if !(c.Model == "" && c.Dimension == 0 && empty) {
			return modelMismatch(c, model)
		}
		c.Model = model
	}
	if c.Dimension == 0 {
		c.Dimension = dim
	}
	return nil
}

// SplitReserved removes Chroma's reserved "chroma:" keys from a record's
// metadata and returns the document "chroma:document" sets, if any.
func SplitReserved(md Metadata) (Metadata, *string) {
	var doc *string
	for k, v := range md {
		if strings.HasPrefix(k, reservedPrefix) {
			if k == "chroma:document" && v.Kind == where.KindString {
				s := v.Str
				doc = &s
			}
			if md != nil {
				md = md.Clone()
				delete(md, k)
			}
		}
	}
	return md, doc
}

// MergeMetadata applies md (Null deletes a key) on top of old; nil when empty.
func MergeMetadata(old, md Metadata) Metadata {
	out := old.Clone()
	for k, v := range md {
		if v.IsNull() {
			delete(out, k)
			continue
		}
		if out == nil {
			out = make(Metadata, len(md))
		}
		out[k] = v
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// ResultMetadata is a record's metadata as get and query return it: nil
// (JSON null), or {} for a record with a uri but no metadata.
func ResultMetadata(md Metadata, uri *string) Metadata {
	if md != nil {
		return md.Clone()
	}
	if uri != nil {
		return Metadata{}
	}
	return nil
}

// CheckDelete checks a delete: the selector and the filters.
func CheckDelete(req DeleteRequest) error {
	if req.IDs != nil && len(req.IDs) == 0 && req.Where == nil && req.WhereDocument == nil {
		return invalidErr(RuleNoSelector, "ids, where", "give ids or a where filter")
	}
	return CheckFilters(req.Where, req.WhereDocument)
}

// CheckFilters checks a request's where and where_document filters.
func CheckFilters(w *where.Expr, d *where.DocExpr) error {
	if err := w.Validate(); err != nil {
		return filterErr("where", err)
	}
	if err := d.Validate(); err != nil {
		return filterErr("where_document", err)
	}
	return nil
}

// CheckGet checks a get and returns its include list with the default
// applied and an empty result shaped by it.
func CheckGet(req GetRequest) (*GetResult, error) {
	inc, included, err := CheckIncludes(req.Include, []Include{IncludeDocuments, IncludeMetadatas})
	if err != nil {
		return nil, err
	}
	if err := CheckPage(req.Limit, req.Offset); err != nil {
		return nil, err
	}
	if err := CheckFilters(req.Where, req.WhereDocument); err != nil {
		return nil, err
	}
	return NewGetResult(inc, included, 0), nil
}

// AppendRow adds one query embedding's records (row, shaped by the
// result's include list) and their distances as res's next row.
func (res *QueryResult) AppendRow(row *GetResult, dists []float32) {
	res.IDs = append(res.IDs, row.IDs)
	if res.Embeddings != nil {
		res.Embeddings = append(res.Embeddings, row.Embeddings)
	}
	if res.Documents != nil {
		res.Documents = append(res.Documents, row.Documents)
	}
	if res.URIs != nil {
		res.URIs = append(res.URIs, row.URIs)
	}
	if res.Metadatas != nil {
		res.Metadatas = append(res.Metadatas, row.Metadatas)
	}
	if res.Distances != nil {
		res.Distances = append(res.Distances, dists)
	}
}

const reservedPrefix = "chroma:"

func errInconsistentLengths() *Error {
	return invalidErr(RuleLengths, "ids", "ids, embeddings, documents, uris and metadatas must have the same length")
}

// checkLengths verifies that every present field is parallel to ids.
func checkLengths(n int, embs int, embsSet bool, docs []*string, uris []*string, metas []Metadata) error {
	if (embsSet && embs != n) || (docs != nil && len(docs) != n) || (uris != nil && len(uris) != n) ||
		(metas != nil && len(metas) != n) {
		return errInconsistentLengths()
	}
	return nil
}

// checkEmbeddings validates a batch of vectors (nil entries skipped) and
// returns their common dimension (0 if none).
func checkEmbeddings(embs [][]float32) (int, error) {
	dim := 0
	for _, e := range embs {
		if e != nil && len(e) == 0 {
			return 0, invalidErr(RuleEmptyVector, "embeddings", "each embedding must have at least 1 dimension")
		}
	}
	for _, e := range embs {
		if e == nil {
			continue
		}
		if dim == 0 {
			dim = len(e)
		} else if len(e) != dim {
			return 0, invalidErr(RuleMixedDims, "embeddings", "all embeddings must have the same dimension")
		}
		for _, f := range e {
			if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
				return 0, invalidErr(RuleNonFinite, "embeddings", "must not contain NaN or infinite values")
			}
		}
	}
	return dim, nil
}

func dimMismatch(want, got int) *Error {
	return &Error{Class: ErrDimensionMismatch, Rule: RuleDimension, Field: "embeddings", Want: itoa(want), Value: itoa(got),
		Reason: fmt.Sprintf("the collection's dimension is %d, got %d", want, got)}
}

func modelMismatch(c *Collection, model string) *Error {
	e := &Error{Class: ErrEmbedderMismatch, Rule: RuleModel, Field: "embeddings", Want: c.Model, Value: model}
	switch {
	case c.Model == "":
		e.Reason = fmt.Sprintf("collection %s holds vectors without an embedding model; got vectors from model %q", c.Name, model)
	case model == "":
		e.Reason = fmt.Sprintf("collection %s holds vectors from embedding model %q; got vectors with no model", c.Name, c.Model)
	default:
		e.Reason = fmt.Sprintf("collection %s holds vectors from embedding model %q; got vectors from model %q", c.Name, c.Model, model)
	}
	return e
}

// checkWrite checks a batch before the collection is read. It returns the
// embeddings' dimension (0 when there are none) and, apart from err, a
// refusal that still lets that dimension be checked or fixed first.
//
// Chroma 1.0.0's order: deserialization (422) first, then the embeddings
// themselves, then the collection's dimension (a mismatch wins over
// everything below; an unset dimension is fixed from the first embedding
// even when the batch is then refused), then the lengths, then empty ids
// (verified against the server, see cmd/cairn/chromaapi/testdata/chroma_ops.jsonl).
func checkWrite(kind WriteKind, req UpdateRequest) (dim int, refusal, err error) {
	if kind == WriteAdd {
		for _, md := range req.Metadatas {
			for k, v := range md {
				if v.IsNull() {
					e := invalidErr(RuleNullMetadata, "metadatas", "%s: values must not be null in add", k)
					e.Key = k
					return 0, nil, e
				}
			}
		}
	}
	if kind != WriteUpdate {
		for _, e := range req.Embeddings {
			if e == nil {
				return 0, nil, invalidErr(RuleNullVector, "embeddings", "must not hold null entries")
			}
		}
	}
	dim, err = checkEmbeddings(req.Embeddings)
	if err != nil {
		return 0, nil, err
	}
	refusal = checkLengths(len(req.IDs), len(req.Embeddings), req.Embeddings != nil, req.Documents, req.URIs, req.Metadatas)
	if refusal == nil && slices.Contains(req.IDs, "") {
		refusal = invalidErr(RuleEmptyID, "ids", "an id must have at least one character")
	}
	if refusal == nil {
		for _, id := range req.IDs {
			if len(id) > MaxIDBytes {
				refusal = invalidErr(RuleIDLong, "ids", "an id must have at most %d bytes, got %d", MaxIDBytes, len(id)).withValue(strconv.Itoa(len(id)))
				break
			}
		}
	}
	return dim, refusal, nil
}

// CheckIncludes checks a get's or a query's include list and returns it,
// def when it is nil, with the same names as a set.
func CheckIncludes(inc []Include, def []Include) ([]Include, map[Include]bool, error) {
	if inc == nil {
		inc = def
	}
	set := make(map[Include]bool)
	for _, i := range inc {
		switch i {
		case IncludeDocuments, IncludeEmbeddings, IncludeMetadatas, IncludeDistances, IncludeURIs:
			set[i] = true
		default:
			return nil, nil, invalidErr(RuleInclude, "include", "unknown value %q: use distances, documents, embeddings, metadatas or uris", i).withValue(string(i))
		}
	}
	return append([]Include{}, inc...), set, nil
}

// NewGetResult makes an empty result with room for n records and a list for
// each included field.
func NewGetResult(inc []Include, incSet map[Include]bool, n int) *GetResult {
	res := &GetResult{IDs: make([]string, 0, n), Include: inc}
	if incSet[IncludeEmbeddings] {
		res.Embeddings = make([][]float32, 0, n)
	}
	if incSet[IncludeDocuments] {
		res.Documents = make([]*string, 0, n)
	}
	if incSet[IncludeURIs] {
		res.URIs = make([]*string, 0, n)
	}
	if incSet[IncludeMetadatas] {
		res.Metadatas = make([]Metadata, 0, n)
	}
	return res
}

// QueryArgs are a query's checked arguments.
type QueryArgs struct {
	Include  []Include        // the include list, the default applied
	Included map[Include]bool // Include as a set
	K        int              // results per query embedding
	Dim      int              // the embeddings' dimension, -1 when there are none
}

// CheckQuery checks what a query can be judged on without the collection,
// in Chroma's order: embeddings present, include, n_results, filters, then
// one dimension for all embeddings.
func CheckQuery(req QueryRequest) (QueryArgs, error) {
	if req.Embeddings == nil {
		return QueryArgs{}, Missing("query_embeddings")
	}
	inc, incSet, err := CheckIncludes(req.Include, []Include{IncludeDocuments, IncludeMetadatas, IncludeDistances})
	if err != nil {
		return QueryArgs{}, err
	}
	k := DefaultNResults
	if req.NResults != nil {
		k = *req.NResults
	}
	if k < 0 {
		return QueryArgs{}, invalidErr(RuleNResults, "n_results", "must not be negative, got %d", k).withValue(itoa(k))
	}
	if err := CheckFilters(req.Where, req.WhereDocument); err != nil {
		return QueryArgs{}, err
	}
	dim := -1
	for _, e := range req.Embeddings {
		if dim == -1 {
			dim = len(e)
		} else if len(e) != dim {
			return QueryArgs{}, invalidErr(RuleMixedDims, "query_embeddings", "all embeddings must have the same dimension")
		}
	}
	return QueryArgs{Include: inc, Included: incSet, K: k, Dim: dim}, nil
}

// CheckQueryVectors checks a query's embeddings of dimension dim against
// c: dimension, model, then finite values.
func CheckQueryVectors(c Collection, req QueryRequest, dim int) error {
	if c.Dimension != 0 && dim >= 0 && dim != c.Dimension {
		return dimMismatch(c.Dimension, dim)
	}
	if c.Dimension != 0 && len(req.Embeddings) > 0 && req.Model != c.Model {
		return modelMismatch(&c, req.Model)
	}
	for _, e := range req.Embeddings {
		for _, f := range e {
			if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
				return invalidErr(RuleNonFinite, "query_embeddings", "must not contain NaN or infinite values")
			}
		}
	}
	return nil
}

// NewQueryResult makes an empty result for nq queries with a list for each
// included field.
func NewQueryResult(inc []Include, incSet map[Include]bool, nq int) *QueryResult {
	res := &QueryResult{IDs: make([][]string, 0, nq), Include: inc}
	if incSet[IncludeEmbeddings] {
		res.Embeddings = make([][][]float32, 0, nq)
	}
	if incSet[IncludeDocuments] {
		res.Documents = make([][]*string, 0, nq)
	}
	if incSet[IncludeURIs] {
		res.URIs = make([][]*string, 0, nq)
	}
	if incSet[IncludeMetadatas] {
		res.Metadatas = make([][]Metadata, 0, nq)
	}
	if incSet[IncludeDistances] {
		res.Distances = make([][]float32, 0, nq)
	}
	return res
}
