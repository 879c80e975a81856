package vecstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/cairn-dev/cairn/vecstore/chroma"
	"github.com/google/uuid"
	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// CreateTenant creates a tenant (CheckTenantName).
func (s *Store) CreateTenant(ctx context.Context, name string) error {
	if err := chroma.CheckTenantName(name); err != nil {
		return err
	}
	return s.writeOp(ctx, func(tx *bolt.Tx) (func(), error) {
		b := tx.Bucket(bktTenants)
		if b.Get([]byte(name)) != nil {
			return nil, chroma.Taken("tenant", name)
		}
		return nil, b.Put([]byte(name), []byte("{}"))
	})
}

// GetTenant returns a tenant.
func (s *Store) GetTenant(ctx context.Context, name string) (chroma.Tenant, error) {
	var found bool
	err := s.viewDirect(ctx, func(tx *bolt.Tx) error {
		found = tx.Bucket(bktTenants).Get([]byte(name)) != nil
		return nil
	})
	if err != nil {
		return chroma.Tenant{}, err
	}
	if !found {
		return chroma.Tenant{}, chroma.TenantNotFound(name)
	}
	return chroma.Tenant{Name: name}, nil
}

// CreateDatabase creates a database. Like Chroma, the tenant is not checked.
func (s *Store) CreateDatabase(ctx context.Context, tenant, name string) error {
	if err := chroma.CheckDatabaseName(name); err != nil {
		return err
	}
	if err := chroma.CheckTenantPath(tenant); err != nil {
		return err
	}
	return s.writeOp(ctx, func(tx *bolt.Tx) (func(), error) {
		b := tx.Bucket(bktDatabases)
		if b.Get(dbKey(tenant, name)) != nil {
			return nil, chroma.Taken("database", name)
		}
		v, _ := json.Marshal(map[string]string{"id": uuid.NewString()})
		return nil, b.Put(dbKey(tenant, name), v)
	})
}

func readDatabase(tx *bolt.Tx, tenant, name string) (chroma.Database, bool) {
	v := tx.Bucket(bktDatabases).Get(dbKey(tenant, name))
	if v == nil {
		return chroma.Database{}, false
	}
	var d struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(v, &d)
	return chroma.Database{ID: d.ID, Name: name, Tenant: tenant}, true
}

// GetDatabase returns a database.
func (s *Store) GetDatabase(ctx context.Context, tenant, name string) (chroma.Database, error) {
	var d chroma.Database
	var ok bool
	err := s.viewDirect(ctx, func(tx *bolt.Tx) error {
		d, ok = readDatabase(tx, tenant, name)
		return nil
	})
	if err != nil {
		return chroma.Database{}, err
	}
	if !ok {
		return chroma.Database{}, chroma.DatabaseNotFound(chroma.ErrNotFound, "GetDatabase", name)
	}
	return d, nil
}

// ListDatabases lists a tenant's databases by name. limit nil means all.
func (s *Store) ListDatabases(ctx context.Context, tenant string, limit *int, offset int) ([]chroma.Database, error) {
	if err := chroma.CheckPage(limit, offset); err != nil {
		return nil, err
	}
	var out []chroma.Database
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
			return nil, chroma.DatabaseNotFound(chroma.ErrNotFound, "DeleteDatabase", name)
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
		return chroma.ErrClosed
	}
	return s.view(ctx, fn)
}

// CreateCollection creates a collection, or with GetOrCreate returns the
// existing one unchanged (the request's metadata and configuration ignored).
func (s *Store) CreateCollection(ctx context.Context, req chroma.CreateCollectionRequest) (chroma.Collection, error) {
	if err := chroma.CheckCreateCollection(&req); err != nil {
		return chroma.Collection{}, err
	}
	var out chroma.Collection
	err := s.writeOp(ctx, func(tx *bolt.Tx) (func(), error) {
		if _, ok := readDatabase(tx, req.Tenant, req.Database); !ok {
			return nil, chroma.DatabaseNotFound(chroma.ErrInvalid, "CreateCollection", req.Database)
		}
		nk := nameKey(req.Tenant, req.Database, req.Name)
		if existing := tx.Bucket(bktCollNames).Get(nk); existing != nil {
			ci := s.mu.infos[string(existing)]
			if ci == nil {
				return nil, corruptf(nil, "collection name %q points to missing collection %s", req.Name, existing)
			}
			if !req.GetOrCreate {
				return nil, chroma.Taken("collection", req.Name)
			}
			out = ci.public()
			return nil, nil
		}
		cfg, err := chroma.ResolveCollectionConfig(&req)
		if err != nil {
			return nil, err
		}
		ci := &collInfo{ID: uuid.NewString(), Name: req.Name, Tenant: req.Tenant, Database: req.Database,
			Metadata: req.Metadata.Clone(), Config: cfg,
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
	if ci.Config.HNSW.VectorCode == chroma.CodeSQ8R {
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
func (s *Store) GetCollection(ctx context.Context, tenant, database, name string) (chroma.Collection, error) {
	var out chroma.Collection
	err := s.readOp(ctx, "", func() error {
		for _, ci := range s.mu.infos {
			if ci.Tenant == tenant && ci.Database == database && ci.Name == name {
				out = ci.public()
				return nil
			}
		}
		return chroma.CollectionNotFoundByName(name)
	})
	return out, err
}

// GetCollectionByID returns a collection by its UUID.
func (s *Store) GetCollectionByID(ctx context.Context, id string) (chroma.Collection, error) {
	cid, err := chroma.ParseCollectionID(id)
	if err != nil {
		return chroma.Collection{}, err
	}
	var out chroma.Collection
	err = s.readOp(ctx, "", func() error {
		ci := s.mu.infos[cid]
		if ci == nil {
			return chroma.CollectionNotFoundByID(cid)
		}
		out = ci.public()
		return nil
	})
	return out, err
}

// ListCollections lists a database's collections in collection-UUID order
// (as Chroma does). limit nil means all.
func (s *Store) ListCollections(ctx context.Context, tenant, database string, limit *int, offset int) ([]chroma.Collection, error) {
	if err := chroma.CheckPage(limit, offset); err != nil {
		return nil, err
	}
	var out []chroma.Collection
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
func (s *Store) ModifyCollection(ctx context.Context, id string, req chroma.ModifyCollectionRequest) error {
	cid, err := chroma.CheckModifyCollection(id, req)
	if err != nil {
		return err
	}
	return s.writeOp(ctx, func(tx *bolt.Tx) (func(), error) {
		if s.mu.infos[cid] == nil {
			return nil, chroma.CollectionNotFoundByID(cid)
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
				return nil, chroma.Taken("collection", *req.NewName)
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
		if err := chroma.ApplyModifyCollection(&pub, req); err != nil {
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
			return nil, chroma.CollectionNotFoundByName(name)
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
		return chroma.ResetDisabled()
	}
	kept := func(tenant, database string) bool {
		return tenant == chroma.DefaultTenant && slices.Contains(s.opts.ResetKeeps, database)
	}
	return s.deleteOp(ctx, func(tx *bolt.Tx) (func(), error) {
		keptDBs := map[string][]byte{}
		for _, name := range s.opts.ResetKeeps {
			if v := tx.Bucket(bktDatabases).Get(dbKey(chroma.DefaultTenant, name)); v != nil {
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
			if err := tx.Bucket(bktDatabases).Put(dbKey(chroma.DefaultTenant, name), v); err != nil {
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
