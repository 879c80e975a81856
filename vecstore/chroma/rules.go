package chroma

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/vecstore/where"
)

// The checks of this file are the collection rules (Chroma 1.0.0's, plus
// cairn's model and dimension checks) that do not depend on how records are
// stored. Every Store applies them, so that each store (vecstore,
// pgcollections) refuses exactly the same requests with exactly the same
// errors, in the same order.

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
		return "", invalidErr(RuleImmutable, "new_configuration.hnsw", "space and ef_construction cannot be changed")
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
		return invalidErr(RuleNegative, "limit, offset", "must not be negative")
	}
	return nil
}

// The refusals of lookups, by what was not found or is taken.
func TenantNotFound(name string) error {
	return refuse(ErrNotFound, RuleNoTenant, "tenant", "no tenant %q", name).withValue(name)
}

// DatabaseNotFound is the refusal of op (a Store method name) on a missing
// database; class is ErrNotFound, or ErrInvalid for CreateCollection.
func DatabaseNotFound(class error, op, name string) error {
	e := refuse(class, RuleNoDatabase, "database", "no database %q", name).withValue(name)
	e.Op = op
	return e
}

// CollectionNotFoundByID and CollectionNotFoundByName are the refusals of
// a lookup of a collection that does not exist.
func CollectionNotFoundByID(id string) error {
	return refuse(ErrNotFound, RuleNoCollection, "id", "no collection with id %s", id).withValue(id)
}

func CollectionNotFoundByName(name string) error {
	return refuse(ErrNotFound, RuleNoCollection, "name", "no collection named %q", name).withValue(name)
}

// Taken is the refusal of a create or rename onto an existing name; kind is
// "tenant", "database" or "collection".
func Taken(kind, name string) error {
	return refuse(ErrExists, RuleTaken, kind, "%s %q already exists", kind, name).withValue(name)
}

// ResetDisabled is the refusal of Reset by a store that does not allow it
// (the Options.AllowReset of vecstore and pgcollections).
func ResetDisabled() error {
	return refuse(ErrForbidden, RuleResetDisabled, "", "reset is disabled (Options.AllowReset)")
}

// UnknownQueryID is the refusal of a query whose ids filter names an id
// that is not stored.
func UnknownQueryID() error {
	return refuse(ErrNotFound, RuleUnknownID, "ids", "an id of the ids filter is not in the collection")
}

// ValidateCollectionName checks a collection name with Chroma's rules.
func ValidateCollectionName(name string) error { return validateName(name, "name") }

func validateName(name, field string) error {
	ok := len(name) >= 3 && len(name) <= 512
	for i := 0; ok && i < len(name); i++ {
		c := name[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && c != '.' && c != '_' && c != '-' {
			ok = false
		}
		if (i == 0 || i == len(name)-1) && !alnum {
			ok = false
		}
	}
	if !ok {
		return invalidErr(RuleName, field, "must be 3-512 characters from [a-zA-Z0-9._-], starting and ending with [a-zA-Z0-9], got %q", name).withValue(name)
	}
	if strings.Contains(name, "..") {
		return invalidErr(RuleNameDots, field, "must not contain two consecutive periods, got %q", name).withValue(name)
	}
	if _, err := netip.ParseAddr(name); err == nil {
		return invalidErr(RuleNameIP, field, "must not be an IP address, got %q", name).withValue(name)
	}
	return nil
}

// ParseCollectionID checks that id is a UUID and returns its canonical form.
// The form is the hyphenated one (8-4-4-4-12 hex digits, either case);
// the canonical form is lower-case.
func ParseCollectionID(id string) (string, error) {
	bad := func() (string, error) {
		return "", invalidErr(RuleCollectionID, "collection_id", "must be a UUID, got %q", id).withValue(id)
	}
	if len(id) != 36 {
		return bad()
	}
	b := []byte(id)
	for i, c := range b {
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return bad()
			}
		case '0' <= c && c <= '9' || 'a' <= c && c <= 'f':
		case 'A' <= c && c <= 'F':
			b[i] = c + 'a' - 'A'
		default:
			return bad()
		}
	}
	return string(b), nil
}

func lengthError(field string, value string) *Error {
	return invalidErr(RuleNameShort, field, "must have at least 3 characters, got %q", value).withValue(value)
}

// resolveConfig builds the HNSW configuration of a new collection the way
// Chroma 1.0.0 does: from configuration.hnsw (or spann's space), else from
// legacy "hnsw:*" metadata keys, else defaults.
func resolveConfig(req *CreateCollectionRequest) (HNSWConfig, error) {
	cfg := DefaultHNSWConfig()
	if req.HNSW != nil && req.SPANN != nil {
		return cfg, invalidErr(RuleOneIndex, "configuration", "set hnsw or spann, not both")
	}
	if req.SPANN != nil {
		if req.SPANN.Space != nil {
			if err := checkSpace(*req.SPANN.Space); err != nil {
				return cfg, err
			}
			cfg.Space = *req.SPANN.Space
		}
		return cfg, nil
	}
	if req.HNSW != nil {
		h := req.HNSW
		if h.Space != nil {
			if err := checkSpace(*h.Space); err != nil {
				return cfg, err
			}
			cfg.Space = *h.Space
		}
		setInt(&cfg.EfConstruction, h.EfConstruction)
		setInt(&cfg.EfSearch, h.EfSearch)
		setInt(&cfg.MaxNeighbors, h.MaxNeighbors)
		setInt(&cfg.SyncThreshold, h.SyncThreshold)
		if h.ResizeFactor != nil {
			cfg.ResizeFactor = *h.ResizeFactor
		}
		return cfg, validateHNSW(cfg)
	}
	for k, v := range req.Metadata {
		if !strings.HasPrefix(k, "hnsw:") {
			continue
		}
		bad := &Error{Class: ErrInvalid, Rule: RuleHNSWMetadata, Field: "metadata", Key: k,
			Reason: fmt.Sprintf("%s: not a valid HNSW parameter value", k)}
		intVal := func(dst *int, min int64) error {
			if v.Kind != where.KindInt || v.Int < min {
				return bad
			}
			*dst = int(v.Int)
			return nil
		}
		var err error
		switch k {
		case "hnsw:space":
			if v.Kind != where.KindString || checkSpace(Space(v.Str)) != nil {
				return cfg, bad
			}
			cfg.Space = Space(v.Str)
		case "hnsw:construction_ef":
			err = intVal(&cfg.EfConstruction, 1)
		case "hnsw:search_ef":
			err = intVal(&cfg.EfSearch, 1)
		case "hnsw:M":
			err = intVal(&cfg.MaxNeighbors, 2)
		case "hnsw:num_threads", "hnsw:batch_size":
			var x int
			err = intVal(&x, 1)
		case "hnsw:sync_threshold":
			err = intVal(&cfg.SyncThreshold, 2)
		case "hnsw:resize_factor":
			switch v.Kind {
			case where.KindFloat:
				cfg.ResizeFactor = v.Float
			case where.KindInt:
				cfg.ResizeFactor = float64(v.Int)
			default:
				err = bad
			}
		default:
			err = bad
		}
		if err != nil {
			return cfg, err
		}
	}
	return cfg, validateHNSW(cfg)
}

func setInt(dst *int, v *int) {
	if v != nil {
		*dst = *v
	}
}

func checkSpace(sp Space) error {
	switch sp {
	case SpaceL2, SpaceIP, SpaceCosine:
		return nil
	}
	return invalidErr(RuleSpace, "space", "must be l2, cosine or ip, got %q", sp).withValue(string(sp))
}

// validateHNSW refuses values the index cannot use (Chroma accepts some of
// these and fails later; refusing up front is a deliberate divergence).
func validateHNSW(c HNSWConfig) error {
	switch {
	case c.EfConstruction < 1 || c.EfConstruction > 1<<16:
		return rangeErr("ef_construction", 1, 1<<16, c.EfConstruction)
	case c.EfSearch < 1 || c.EfSearch > 1<<16:
		return rangeErr("ef_search", 1, 1<<16, c.EfSearch)
	case c.MaxNeighbors < 2 || c.MaxNeighbors > 256:
		return rangeErr("max_neighbors", 2, 256, c.MaxNeighbors)
	}
	return nil
}

func validateCollectionMetadata(md Metadata, field string) error {
	if md != nil && len(md) == 0 {
		return invalidErr(RuleEmptyMetadata, field, "must not be an empty map (leave it out)")
	}
	for _, v := range md {
		if v.IsNull() {
			return invalidErr(RuleNullMetadata, field, "values must not be null")
		}
	}
	return nil
}

// CreateCollection creates a collection, or with GetOrCreate returns the

// vectorCodeFromMetadata reads MetaVectorCode from a create request's metadata.
func vectorCodeFromMetadata(md Metadata) (VectorCode, error) {
	v, ok := md[MetaVectorCode]
	if !ok {
		return "", nil
	}
	if v.Kind == where.KindString {
		switch VectorCode(v.Str) {
		case CodeFloat32:
			return "", nil
		case CodeSQ8, CodeSQ8R:
			return VectorCode(v.Str), nil
		}
	}
	e := invalidErr(RuleVectorCode, "metadata", "%s: must be %q, %q or %q", MetaVectorCode, CodeFloat32, CodeSQ8, CodeSQ8R)
	e.Key = MetaVectorCode
	return "", e
}
