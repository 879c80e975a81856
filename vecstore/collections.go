package vecstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strings"

	"github.com/google/uuid"
	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/cairn-dev/cairn/vecstore/where"
)

func collNotFoundByID(id string) *Error {
	return refuse(ErrNotFound, RuleNoCollection, "id", "no collection with id %s", id).withValue(id)
}

func collNotFoundByName(name string) *Error {
	return refuse(ErrNotFound, RuleNoCollection, "name", "no collection named %q", name).withValue(name)
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
func ParseCollectionID(id string) (string, error) {
	u, err := uuid.Parse(id)
	if err != nil || len(id) != 36 {
		return "", invalidErr(RuleCollectionID, "collection_id", "must be a UUID, got %q", id).withValue(id)
	}
	return u.String(), nil
}

func lengthError(field string, value string) *Error {
	return invalidErr(RuleNameShort, field, "must have at least 3 characters, got %q", value).withValue(value)
}

// CreateTenant creates a tenant (CheckTenantName).
func (s *Store) CreateTenant(ctx context.Context, name string) error {
	if err := CheckTenantName(name); err != nil {
		return err
	}
	return s.writeOp(ctx, func(tx *bolt.Tx) (func(), error) {
		b := tx.Bucket(bktTenants)
		if b.Get([]byte(name)) != nil {
			return nil, refuse(ErrExists, RuleTaken, "tenant", "tenant %q already exists", name).withValue(name)
		}
		return nil, b.Put([]byte(name), []byte("{}"))
	})
}

// GetTenant returns a tenant.
func (s *Store) GetTenant(ctx context.Context, name string) (Tenant, error) {
	var found bool
	err := s.viewDirect(ctx, func(tx *bolt.Tx) error {
		found = tx.Bucket(bktTenants).Get([]byte(name)) != nil
		return nil
	})
	if err != nil {
		return Tenant{}, err
	}
	if !found {
		return Tenant{}, refuse(ErrNotFound, RuleNoTenant, "tenant", "no tenant %q", name).withValue(name)
	}
	return Tenant{Name: name}, nil
}

// CreateDatabase creates a database. Like Chroma, the tenant is not checked.
func (s *Store) CreateDatabase(ctx context.Context, tenant, name string) error {
	if err := CheckDatabaseName(name); err != nil {
		return err
	}
	if err := CheckTenantPath(tenant); err != nil {
		return err
	}
	return s.writeOp(ctx, func(tx *bolt.Tx) (func(), error) {
		b := tx.Bucket(bktDatabases)
		if b.Get(dbKey(tenant, name)) != nil {
			return nil, refuse(ErrExists, RuleTaken, "database", "database %q already exists", name).withValue(name)
		}
		v, _ := json.Marshal(map[string]string{"id": uuid.NewString()})
		return nil, b.Put(dbKey(tenant, name), v)
	})
}

func readDatabase(tx *bolt.Tx, tenant, name string) (Database, bool) {
	v := tx.Bucket(bktDatabases).Get(dbKey(tenant, name))
	if v == nil {
		return Database{}, false
	}
	var d struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(v, &d)
	return Database{ID: d.ID, Name: name, Tenant: tenant}, true
}

// GetDatabase returns a database.
func (s *Store) GetDatabase(ctx context.Context, tenant, name string) (Database, error) {
	var d Database
	var ok bool
	err := s.viewDirect(ctx, func(tx *bolt.Tx) error {
		d, ok = readDatabase(tx, tenant, name)
		return nil
	})
	if err != nil {
		return Database{}, err
	}
	if !ok {
		return Database{}, noDatabase(ErrNotFound, "GetDatabase", name)
	}
	return d, nil
}

// ListDatabases lists a tenant's databases by name. limit nil means all.
func (s *Store) ListDatabases(ctx context.Context, tenant string, limit *int, offset int) ([]Database, error) {
	if (limit != nil && *limit < 0) || offset < 0 {
		return nil, unprocessableErr(RuleNegative, "limit, offset", "must not be negative")
	}
	var out []Database
	err := s.viewDirect(ctx, func(tx *bolt.Tx) error {
		prefix := []byte(tenant + "\x00")
		c := tx.Bucket(bktDatabases).Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			name := string(k[len(prefix):])
			if strings.Contains(name, "\x00") {
				continue
			}
			d, _ := readDatabase(tx, tenant, name)
			out = append(out, d)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return page(out, limit, offset), nil
}

func page[T any](xs []T, limit *int, offset int) []T {
	if offset >= len(xs) {
		return []T{}
	}
	xs = xs[offset:]
	if limit != nil && *limit < len(xs) {
		xs = xs[:*limit]
	}
	return xs
}

// DeleteDatabase deletes a database and all its collections.
func (s *Store) DeleteDatabase(ctx context.Context, tenant, name string) error {
	return s.deleteOp(ctx, func(tx *bolt.Tx) (func(), error) {
		if _, ok := readDatabase(tx, tenant, name); !ok {
			return nil, noDatabase(ErrNotFound, "DeleteDatabase", name)
		}
		var ids []string
		for id, ci := range s.mu.infos {
			if ci.Tenant == tenant && ci.Database == name {
				ids = append(ids, id)
			}
		}
		for _, id := range ids {
			if err := deleteCollectionTx(tx, s.mu.infos[id]); err != nil {
				return nil, err
			}
		}
		if err := tx.Bucket(bktDatabases).Delete(dbKey(tenant, name)); err != nil {
			return nil, err
		}
		if _, err := nextSeq(tx); err != nil {
			return nil, err
		}
		return func() {
			for _, id := range ids {
				delete(s.mu.infos, id)
				delete(s.mu.colls, id)
			}
		}, nil
	})
}

// viewDirect runs fn in a read transaction without touching memory.
func (s *Store) viewDirect(ctx context.Context, fn func(tx *bolt.Tx) error) error {
	s.ioMu.Lock()
	defer s.ioMu.Unlock()
	s.mu.RLock()
	closed := s.mu.closed
	s.mu.RUnlock()
	if closed {
		return ErrClosed
	}
	return s.view(ctx, fn)
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
	return unprocessableErr(RuleSpace, "space", "must be l2, cosine or ip, got %q", sp).withValue(string(sp))
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
			return unprocessableErr(RuleNullMetadata, field, "values must not be null")
		}
	}
	return nil
}

// CreateCollection creates a collection, or with GetOrCreate returns the
// existing one unchanged (the request's metadata and configuration ignored).
func (s *Store) CreateCollection(ctx context.Context, req CreateCollectionRequest) (Collection, error) {
	if err := CheckCreateCollection(&req); err != nil {
		return Collection{}, err
	}
	var out Collection
	err := s.writeOp(ctx, func(tx *bolt.Tx) (func(), error) {
		if _, ok := readDatabase(tx, req.Tenant, req.Database); !ok {
			return nil, noDatabase(ErrInvalid, "CreateCollection", req.Database)
		}
		nk := nameKey(req.Tenant, req.Database, req.Name)
		if existing := tx.Bucket(bktCollNames).Get(nk); existing != nil {
			ci := s.mu.infos[string(existing)]
			if ci == nil {
				return nil, corruptf(nil, "collection name %q points to missing collection %s", req.Name, existing)
			}
			if !req.GetOrCreate {
				return nil, refuse(ErrExists, RuleTaken, "collection", "collection %q already exists", req.Name).withValue(req.Name)
			}
			out = ci.public()
			return nil, nil
		}
		cfg, err := resolveConfig(&req)
		if err != nil {
			return nil, err
		}
		if cfg.VectorCode, err = vectorCodeFromMetadata(req.Metadata); err != nil {
			return nil, err
		}
		ci := &collInfo{ID: uuid.NewString(), Name: req.Name, Tenant: req.Tenant, Database: req.Database,
			Metadata: req.Metadata.Clone(), Config: CollectionConfig{HNSW: cfg, EmbeddingFunction: req.EmbeddingFunction},
			Dimension: req.Dimension, Model: req.Model}
		seq, err := nextSeq(tx)
		if err != nil {
			return nil, err
		}
		ci.LastSeq = seq
		if err := putCollInfo(tx, ci); err != nil {
			return nil, err
		}
		if err := tx.Bucket(bktCollNames).Put(nk, []byte(ci.ID)); err != nil {
			return nil, err
		}
		cb, err := tx.CreateBucket(collBucketName(ci.ID))
		if err != nil {
			return nil, err
		}
		for _, sub := range [][]byte{subRec, subVec, subLog, subSnap} {
			if _, err := cb.CreateBucket(sub); err != nil {
				return nil, err
			}
		}
		out = ci.public()
		return func() {
			s.mu.infos[ci.ID] = ci
			mc := newMemColl(ci)
			mc.applied = seq
			s.mu.colls[ci.ID] = mc
		}, nil
	})
	return out, err
}

func putCollInfo(tx *bolt.Tx, ci *collInfo) error {
	b, err := encodeCollInfo(ci)
	if err != nil {
		return err
	}
	if ci.Config.HNSW.VectorCode == CodeSQ8R {
		if err := raiseFormat(tx, 4); err != nil {
			return err
		}
	}
	return tx.Bucket(bktColls).Put([]byte(ci.ID), b)
}

func deleteCollectionTx(tx *bolt.Tx, ci *collInfo) error {
	if err := tx.Bucket(bktColls).Delete([]byte(ci.ID)); err != nil {
		return err
	}
	if err := tx.Bucket(bktCollNames).Delete(nameKey(ci.Tenant, ci.Database, ci.Name)); err != nil {
		return err
	}
	if err := tx.DeleteBucket(collBucketName(ci.ID)); err != nil && !errors.Is(err, berrors.ErrBucketNotFound) {
		return err
	}
	return nil
}

// GetCollection returns a collection by tenant, database and name.
func (s *Store) GetCollection(ctx context.Context, tenant, database, name string) (Collection, error) {
	var out Collection
	err := s.readOp(ctx, "", func() error {
		for _, ci := range s.mu.infos {
			if ci.Tenant == tenant && ci.Database == database && ci.Name == name {
				out = ci.public()
				return nil
			}
		}
		return collNotFoundByName(name)
	})
	return out, err
}

// GetCollectionByID returns a collection by its UUID.
func (s *Store) GetCollectionByID(ctx context.Context, id string) (Collection, error) {
	cid, err := ParseCollectionID(id)
	if err != nil {
		return Collection{}, err
	}
	var out Collection
	err = s.readOp(ctx, "", func() error {
		ci := s.mu.infos[cid]
		if ci == nil {
			return collNotFoundByID(cid)
		}
		out = ci.public()
		return nil
	})
	return out, err
}

// ListCollections lists a database's collections in collection-UUID order
// (as Chroma does). limit nil means all.
func (s *Store) ListCollections(ctx context.Context, tenant, database string, limit *int, offset int) ([]Collection, error) {
	if (limit != nil && *limit < 0) || offset < 0 {
		return nil, unprocessableErr(RuleNegative, "limit, offset", "must not be negative")
	}
	var out []Collection
	err := s.readOp(ctx, "", func() error {
		for _, ci := range s.mu.infos {
			if ci.Tenant == tenant && ci.Database == database {
				out = append(out, ci.public())
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return page(out, limit, offset), nil
}

// CountCollections counts a database's collections (0 for an unknown database).
func (s *Store) CountCollections(ctx context.Context, tenant, database string) (int, error) {
	cs, err := s.ListCollections(ctx, tenant, database, nil, 0)
	return len(cs), err
}

// ModifyCollection renames a collection, replaces its metadata or changes
// its mutable configuration (ef_search and Chroma's accepted-but-unused keys).
// Renaming onto an existing name gives ErrExists (Chroma 1.0.0 answers 500).
func (s *Store) ModifyCollection(ctx context.Context, id string, req ModifyCollectionRequest) error {
	cid, err := CheckModifyCollection(id, req)
	if err != nil {
		return err
	}
	return s.writeOp(ctx, func(tx *bolt.Tx) (func(), error) {
		if s.mu.infos[cid] == nil {
			return nil, collNotFoundByID(cid)
		}
		old, err := freshInfo(tx, cid)
		if err != nil {
			return nil, err
		}
		ci := *old
		ci.Metadata = old.Metadata.Clone()
		if req.NewName != nil && *req.NewName != ci.Name {
			nk := nameKey(ci.Tenant, ci.Database, *req.NewName)
			if tx.Bucket(bktCollNames).Get(nk) != nil {
				return nil, refuse(ErrExists, RuleTaken, "collection", "collection %q already exists", *req.NewName).withValue(*req.NewName)
			}
			if err := tx.Bucket(bktCollNames).Delete(nameKey(ci.Tenant, ci.Database, ci.Name)); err != nil {
				return nil, err
			}
			if err := tx.Bucket(bktCollNames).Put(nk, []byte(ci.ID)); err != nil {
				return nil, err
			}
			ci.Name = *req.NewName
		}
		pub := ci.public()
		if err := ApplyModifyCollection(&pub, req); err != nil {
			return nil, err
		}
		ci.Metadata, ci.Config = pub.Metadata, pub.Config
		if _, err := nextSeq(tx); err != nil {
			return nil, err
		}
		if err := putCollInfo(tx, &ci); err != nil {
			return nil, err
		}
		return func() {
			s.mu.infos[cid] = &ci
			if mc := s.mu.colls[cid]; mc != nil {
				mc.info = &ci
			}
		}, nil
	})
}

// DeleteCollection deletes a collection by name with its records, index and
// snapshot; bbolt reuses the freed pages.
func (s *Store) DeleteCollection(ctx context.Context, tenant, database, name string) error {
	return s.deleteOp(ctx, func(tx *bolt.Tx) (func(), error) {
		id := tx.Bucket(bktCollNames).Get(nameKey(tenant, database, name))
		if id == nil {
			return nil, collNotFoundByName(name)
		}
		ci := s.mu.infos[string(id)]
		if ci == nil {
			return nil, corruptf(nil, "collection name %q points to missing collection %s", name, id)
		}
		if err := deleteCollectionTx(tx, ci); err != nil {
			return nil, err
		}
		if _, err := nextSeq(tx); err != nil {
			return nil, err
		}
		cid := ci.ID
		return func() {
			delete(s.mu.infos, cid)
			delete(s.mu.colls, cid)
		}, nil
	})
}

// Reset deletes every tenant, database and collection (Chroma's reset)
// but the databases Options.ResetKeeps names, if Options.AllowReset;
// otherwise ErrForbidden.
func (s *Store) Reset(ctx context.Context) error {
	if !s.opts.AllowReset {
		return refuse(ErrForbidden, RuleResetDisabled, "", "reset is disabled (Options.AllowReset)")
	}
	kept := func(tenant, database string) bool {
		return tenant == DefaultTenant && slices.Contains(s.opts.ResetKeeps, database)
	}
	return s.deleteOp(ctx, func(tx *bolt.Tx) (func(), error) {
		keptDBs := map[string][]byte{}
		for _, name := range s.opts.ResetKeeps {
			if v := tx.Bucket(bktDatabases).Get(dbKey(DefaultTenant, name)); v != nil {
				keptDBs[name] = bytes.Clone(v)
			}
		}
		for _, ci := range s.mu.infos {
			if kept(ci.Tenant, ci.Database) {
				continue
			}
			if err := deleteCollectionTx(tx, ci); err != nil {
				return nil, err
			}
		}
		for _, b := range [][]byte{bktTenants, bktDatabases} {
			if err := tx.DeleteBucket(b); err != nil {
				return nil, err
			}
		}
		if err := initLayout(tx); err != nil {
			return nil, err
		}
		for name, v := range keptDBs {
			if err := tx.Bucket(bktDatabases).Put(dbKey(DefaultTenant, name), v); err != nil {
				return nil, err
			}
		}
		if _, err := nextSeq(tx); err != nil {
			return nil, err
		}
		return func() {
			for id, ci := range s.mu.infos {
				if !kept(ci.Tenant, ci.Database) {
					delete(s.mu.infos, id)
					delete(s.mu.colls, id)
				}
			}
		}, nil
	})
}

// describe is used in error messages.
func (ci *collInfo) describe() string { return fmt.Sprintf("%s (%s)", ci.Name, ci.ID) }
