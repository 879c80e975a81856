package vecstore

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/vecstore/where"
)

// The checks of this file are the collection rules (Chroma 1.0.0's, plus
// cairn's model and dimension checks) that do not depend on how records are
// stored. They are exported so that another implementation of the same
// collections (PostgreSQL, package pgcollections) refuses exactly the same
// requests with exactly the same errors, in the same order, as Store does.

// CheckCreateCollection applies defaults to req's tenant and database and
// checks what a create can be judged on before the database is read: the
// name, the metadata and the dimension.
func CheckCreateCollection(req *CreateCollectionRequest) error {
	if req.Tenant == "" {
		req.Tenant = DefaultTenant
	}
	if req.Database == "" {
		req.Database = DefaultDatabase
	}
	if err := ValidateCollectionName(req.Name); err != nil {
		return err
	}
	if err := validateCollectionMetadata(req.Metadata, "metadata"); err != nil {
		return err
	}
	if req.Dimension < 0 {
		return invalidErr(RuleNegative, "dimension", "must not be negative")
	}
	return nil
}

// ResolveCollectionConfig is the configuration a new collection gets from
// req (configuration, legacy "hnsw:*" metadata keys, MetaVectorCode), checked
// once the name is known to be free.
func ResolveCollectionConfig(req *CreateCollectionRequest) (CollectionConfig, error) {
	cfg, err := resolveConfig(req)
	if err != nil {
		return CollectionConfig{}, err
	}
	if cfg.VectorCode, err = vectorCodeFromMetadata(req.Metadata); err != nil {
		return CollectionConfig{}, err
	}
	return CollectionConfig{HNSW: cfg, EmbeddingFunction: req.EmbeddingFunction}, nil
}

// CheckModifyCollection checks what a modify can be judged on before the
// collection is read; it returns the canonical collection id.
func CheckModifyCollection(id string, req ModifyCollectionRequest) (string, error) {
	cid, err := ParseCollectionID(id)
	if err != nil {
		return "", err
	}
	if req.NewName != nil {
		if err := validateName(*req.NewName, "new_name"); err != nil {
			return "", err
		}
	}
	if (req.NewMetadataSet || req.NewMetadata != nil) && len(req.NewMetadata) == 0 {
		return "", invalidErr(RuleEmptyMetadata, "new_metadata", "must not be an empty map (leave it out)")
	}
	if req.HNSW != nil && req.SPANN != nil {
		return "", invalidErr(RuleOneIndex, "new_configuration", "set hnsw or spann, not both")
	}
	if req.HNSW != nil && (req.HNSW.Space != nil || req.HNSW.EfConstruction != nil) {
		return "", unprocessableErr(RuleImmutable, "new_configuration.hnsw", "space and ef_construction cannot be changed")
	}
	return cid, nil
}

// ApplyModifyCollection applies req's metadata and configuration changes to
// c (the rename is the caller's: it must check the new name is free).
func ApplyModifyCollection(c *Collection, req ModifyCollectionRequest) error {
	if req.NewMetadata != nil {
		md := Metadata{}
		for k, v := range req.NewMetadata {
			if !v.IsNull() {
				md[k] = v
			}
		}
		if len(md) == 0 {
			md = nil
		}
		c.Metadata = md
	}
	if h := req.HNSW; h != nil {
		setInt(&c.Config.HNSW.EfSearch, h.EfSearch)
		setInt(&c.Config.HNSW.MaxNeighbors, h.MaxNeighbors)
		setInt(&c.Config.HNSW.SyncThreshold, h.SyncThreshold)
		if h.ResizeFactor != nil {
			c.Config.HNSW.ResizeFactor = *h.ResizeFactor
		}
		if err := validateHNSW(c.Config.HNSW); err != nil {
			return err
		}
	}
	if req.EmbeddingFunctionSet {
		c.Config.EmbeddingFunction = req.EmbeddingFunction
	}
	return nil
}

// MaxNameChars bounds tenant and database names, as Chroma bounds
// collection names.
const MaxNameChars = 512

// CheckTenantName and CheckDatabaseName check the names of a new tenant or
// database: 3 to MaxNameChars characters (Chroma checks the minimum only),
// no ".." (Chroma's rule for collection names) and no control characters.
// Any other character is accepted, as Chroma does ("a b/c").
func CheckTenantName(name string) error { return checkKeyName("name", name) }

func CheckDatabaseName(name string) error { return checkKeyName("database_name", name) }

// CheckTenantPath checks a tenant named by a request's path, which Chroma
// does not look up (a database may be created under any tenant name).
func CheckTenantPath(name string) error { return checkKeyName("tenant", name) }

func checkKeyName(field, name string) error {
	n := utf8.RuneCountInString(name)
	switch {
	case n < 3:
		return lengthError(field, name)
	case n > MaxNameChars:
		return invalidErr(RuleNameLong, field, "must have at most %d characters, got %d", MaxNameChars, n).withValue(strconv.Itoa(n))
	case strings.Contains(name, ".."):
		return invalidErr(RuleNameDots, field, "must not contain \"..\", got %q", name).withValue(name)
	case strings.ContainsFunc(name, unicode.IsControl):
		return invalidErr(RuleNameControl, field, "must not contain control characters, got %q", name).withValue(name)
	}
	return nil
}

// CheckPage refuses a negative limit or offset of a listing or a get.
func CheckPage(limit *int, offset int) error {
	if (limit != nil && *limit < 0) || offset < 0 {
		return unprocessableErr(RuleNegative, "limit, offset", "must not be negative")
	}
	return nil
}

// The refusals of lookups, by what was not found or is taken.
func TenantNotFound(name string) error {
	return refuse(ErrNotFound, RuleNoTenant, "tenant", "no tenant %q", name).withValue(name)
}

// DatabaseNotFound is the refusal of op (a Store method name) on a missing
// database; class is ErrNotFound, or ErrInvalid for CreateCollection.
func DatabaseNotFound(class error, op, name string) error { return noDatabase(class, op, name) }

func CollectionNotFoundByID(id string) error     { return collNotFoundByID(id) }
func CollectionNotFoundByName(name string) error { return collNotFoundByName(name) }

// Taken is the refusal of a create or rename onto an existing name; kind is
// "tenant", "database" or "collection".
func Taken(kind, name string) error {
	return refuse(ErrExists, RuleTaken, kind, "%s %q already exists", kind, name).withValue(name)
}

// ResetDisabled is the refusal of Reset without Options.AllowReset.
func ResetDisabled() error {
	return refuse(ErrForbidden, RuleResetDisabled, "", "reset is disabled (Options.AllowReset)")
}

// UnknownQueryID is the refusal of a query whose ids filter names an id
// that is not stored (Chroma 1.0.0 answers 500).
func UnknownQueryID() error {
	return refuse(ErrInternal, RuleUnknownID, "ids", "an id of the ids filter is not in the collection")
}

// WriteKind is a record write: add, upsert or update.
type WriteKind int

const (
	WriteAdd    = WriteKind(kindAdd)
	WriteUpsert = WriteKind(kindUpsert)
	WriteUpdate = WriteKind(kindUpdate)
)

// CheckWrite checks a write before the collection is read, as Store does:
// it returns the embeddings' dimension (0 when none), and besides err a
// refusal to return only after the dimension has been checked against the
// collection (and fixed there, when it had none: see AdoptVectors).
func CheckWrite(kind WriteKind, req UpdateRequest) (dim int, refusal, err error) {
	if kind != WriteUpdate && req.Embeddings == nil {
		return 0, nil, unprocessableErr(RuleMissing, "embeddings", "required")
	}
	return checkWrite(writeKind(kind), req)
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
			return modelMismatch(&collInfo{Name: c.Name, Model: c.Model}, model)
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
func SplitReserved(md Metadata) (Metadata, *string) { return splitReserved(md) }

// MergeMetadata applies md (Null deletes a key) on top of old; nil when empty.
func MergeMetadata(old, md Metadata) Metadata { return mergeMeta(old, md) }

// ResultMetadata is a record's metadata as get and query return it: nil
// (JSON null), or {} for a record with a uri but no metadata.
func ResultMetadata(md Metadata, uri *string) Metadata {
	return resultMeta(&record{meta: md, uri: uri})
}

// CheckDelete checks a delete: the selector and the filters.
func CheckDelete(req DeleteRequest) error {
	if req.IDs != nil && len(req.IDs) == 0 && req.Where == nil && req.WhereDocument == nil {
		return invalidErr(RuleNoSelector, "ids, where", "give ids or a where filter")
	}
	return checkFilters(req.Where, req.WhereDocument)
}

func checkFilters(w *where.Expr, d *where.DocExpr) error {
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
	inc, incSet, err := checkIncludes(req.Include, []Include{IncludeDocuments, IncludeMetadatas})
	if err != nil {
		return nil, err
	}
	if err := CheckPage(req.Limit, req.Offset); err != nil {
		return nil, err
	}
	if err := checkFilters(req.Where, req.WhereDocument); err != nil {
		return nil, err
	}
	return newGetResult(inc, incSet, 0), nil
}

// CheckQuery checks what a query can be judged on without the collection,
// and returns its results per embedding (k), the embeddings' dimension (-1
// when there are none) and an empty result shaped by its include list.
func CheckQuery(req QueryRequest) (k, dim int, res *QueryResult, err error) {
	qa, err := checkQuery(req)
	if err != nil {
		return 0, 0, nil, err
	}
	return qa.k, qa.dim, newQueryResult(qa.include, qa.incSet, len(req.Embeddings)), nil
}

// CheckQueryVectors checks a query's embeddings of dimension dim against c.
func CheckQueryVectors(c Collection, req QueryRequest, dim int) error {
	return checkQueryVectors(&collInfo{Name: c.Name, Model: c.Model, Dimension: c.Dimension}, req, dim)
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
