package pgcollections

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cairn-dev/cairn/vecstore/chroma"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// isUniqueViolation reports a unique or primary key violation.
func isUniqueViolation(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

// CreateTenant creates a tenant (at least 3 characters).
func (s *Store) CreateTenant(ctx context.Context, name string) error {
	if err := chroma.CheckTenantName(name); err != nil {
		return err
	}
	tag, err := s.pool.Exec(ctx, `INSERT INTO chroma_tenants (name) VALUES ($1) ON CONFLICT DO NOTHING`, name)
	if err != nil {
		return s.mapErr(err)
	}
	if tag.RowsAffected() == 0 {
		return chroma.Taken("tenant", name)
	}
	return nil
}

// GetTenant returns a tenant.
func (s *Store) GetTenant(ctx context.Context, name string) (chroma.Tenant, error) {
	var n string
	err := s.pool.QueryRow(ctx, `SELECT name FROM chroma_tenants WHERE name = $1`, name).Scan(&n)
	if errors.Is(err, pgx.ErrNoRows) {
		return chroma.Tenant{}, chroma.TenantNotFound(name)
	}
	if err != nil {
		return chroma.Tenant{}, s.mapErr(err)
	}
	return chroma.Tenant{Name: n}, nil
}

// CreateDatabase creates a database. Like Chroma, the tenant is not looked
// up; its name is checked (chroma.CheckTenantPath).
func (s *Store) CreateDatabase(ctx context.Context, tenant, name string) error {
	if err := chroma.CheckDatabaseName(name); err != nil {
		return err
	}
	if err := chroma.CheckTenantPath(tenant); err != nil {
		return err
	}
	tag, err := s.pool.Exec(ctx, `INSERT INTO chroma_databases (tenant, name, id) VALUES ($1, $2, gen_random_uuid()) ON CONFLICT DO NOTHING`,
		tenant, name)
	if err != nil {
		return s.mapErr(err)
	}
	if tag.RowsAffected() == 0 {
		return chroma.Taken("database", name)
	}
	return nil
}

// GetDatabase returns a database.
func (s *Store) GetDatabase(ctx context.Context, tenant, name string) (chroma.Database, error) {
	var id string
	err := s.pool.QueryRow(ctx, `SELECT id::text FROM chroma_databases WHERE tenant = $1 AND name = $2`, tenant, name).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return chroma.Database{}, chroma.DatabaseNotFound(chroma.ErrNotFound, "GetDatabase", name)
	}
	if err != nil {
		return chroma.Database{}, s.mapErr(err)
	}
	return chroma.Database{ID: id, Name: name, Tenant: tenant}, nil
}

// ListDatabases lists a tenant's databases by name. limit nil means all.
func (s *Store) ListDatabases(ctx context.Context, tenant string, limit *int, offset int) ([]chroma.Database, error) {
	if err := chroma.CheckPage(limit, offset); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT id::text, name FROM chroma_databases WHERE tenant = $1 ORDER BY name LIMIT $2 OFFSET $3`,
		tenant, sqlLimit(limit), int64(offset))
	if err != nil {
		return nil, s.mapErr(err)
	}
	out := []chroma.Database{}
	for rows.Next() {
		d := chroma.Database{Tenant: tenant}
		if err := rows.Scan(&d.ID, &d.Name); err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// DeleteDatabase deletes a database and all its collections.
func (s *Store) DeleteDatabase(ctx context.Context, tenant, name string) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT id::text FROM chroma_collections WHERE tenant = $1 AND database = $2`, tenant, name)
		if err != nil {
			return err
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `DELETE FROM chroma_databases WHERE tenant = $1 AND name = $2`, tenant, name)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return chroma.DatabaseNotFound(chroma.ErrNotFound, "DeleteDatabase", name)
		}
		for _, id := range ids {
			if err := dropVectorIndex(ctx, tx, id); err != nil {
				return err
			}
		}
		return nil
	})
}

const collectionColumns = `id::text, name, tenant, database, metadata, float_keys, config, dimension, model`

func scanCollection(row pgx.Row) (chroma.Collection, error) {
	var c chroma.Collection
	var md, fk, cfg []byte
	if err := row.Scan(&c.ID, &c.Name, &c.Tenant, &c.Database, &md, &fk, &cfg, &c.Dimension, &c.Model); err != nil {
		return c, err
	}
	var err error
	if c.Metadata, err = decodeMetadata(md, fk); err != nil {
		return c, err
	}
	if err := json.Unmarshal(cfg, &c.Config); err != nil {
		return c, fmt.Errorf("pgcollections: collection %s configuration: %w", c.ID, err)
	}
	return c, nil
}

// CreateCollection creates a collection, or with GetOrCreate returns the
// existing one unchanged (the request's metadata and configuration ignored).
func (s *Store) CreateCollection(ctx context.Context, req chroma.CreateCollectionRequest) (chroma.Collection, error) {
	if err := chroma.CheckCreateCollection(&req); err != nil {
		return chroma.Collection{}, err
	}
	var out chroma.Collection
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		// The database row lock orders creates in one database across
		// processes, so get-or-create never races into a duplicate.
		var one int
		err := tx.QueryRow(ctx, `SELECT 1 FROM chroma_databases WHERE tenant = $1 AND name = $2 FOR UPDATE`, req.Tenant, req.Database).Scan(&one)
		if errors.Is(err, pgx.ErrNoRows) {
			return chroma.DatabaseNotFound(chroma.ErrInvalid, "CreateCollection", req.Database)
		}
		if err != nil {
			return err
		}
		existing, err := scanCollection(tx.QueryRow(ctx, `SELECT `+collectionColumns+` FROM chroma_collections
			WHERE tenant = $1 AND database = $2 AND name = $3`, req.Tenant, req.Database, req.Name))
		if err == nil {
			if !req.GetOrCreate {
				return chroma.Taken("collection", req.Name)
			}
			out = existing
			return nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		cfg, err := chroma.ResolveCollectionConfig(&req)
		if err != nil {
			return err
		}
		c := chroma.Collection{Name: req.Name, Tenant: req.Tenant, Database: req.Database, Metadata: req.Metadata.Clone(),
			Config: cfg, Dimension: req.Dimension, Model: req.Model}
		md, fk, err := encodeMetadata(c.Metadata, "metadata")
		if err != nil {
			return err
		}
		cfgJSON, err := json.Marshal(c.Config)
		if err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `INSERT INTO chroma_collections (id, tenant, database, name, metadata, float_keys, config, dimension, model)
			VALUES (gen_random_uuid(), $1, $2, $3, $4, $5, $6, $7, $8) RETURNING id::text`,
			c.Tenant, c.Database, c.Name, md, fk, cfgJSON, c.Dimension, c.Model).Scan(&c.ID); err != nil {
			return err
		}
		if c.Dimension > 0 {
			if err := s.createVectorIndex(ctx, tx, c); err != nil {
				return err
			}
		}
		out = c
		return nil
	})
	return out, err
}

// GetCollection returns a collection by tenant, database and name.
func (s *Store) GetCollection(ctx context.Context, tenant, database, name string) (chroma.Collection, error) {
	c, err := scanCollection(s.pool.QueryRow(ctx, `SELECT `+collectionColumns+` FROM chroma_collections
		WHERE tenant = $1 AND database = $2 AND name = $3`, tenant, database, name))
	if errors.Is(err, pgx.ErrNoRows) {
		return c, chroma.CollectionNotFoundByName(name)
	}
	return c, s.mapErr(err)
}

// GetCollectionByID returns a collection by its UUID.
func (s *Store) GetCollectionByID(ctx context.Context, id string) (chroma.Collection, error) {
	cid, err := chroma.ParseCollectionID(id)
	if err != nil {
		return chroma.Collection{}, err
	}
	return s.collectionByID(ctx, s.pool, cid, "")
}

// collectionByID reads collection cid (canonical), with lock appended to
// the statement (FOR UPDATE in writes).
func (s *Store) collectionByID(ctx context.Context, q querier, cid, lock string) (chroma.Collection, error) {
	c, err := scanCollection(q.QueryRow(ctx, `SELECT `+collectionColumns+` FROM chroma_collections WHERE id = $1 `+lock, cid))
	if errors.Is(err, pgx.ErrNoRows) {
		return c, chroma.CollectionNotFoundByID(cid)
	}
	return c, s.mapErr(err)
}

// ListCollections lists a database's collections in collection-UUID order
// (as Chroma does). limit nil means all.
func (s *Store) ListCollections(ctx context.Context, tenant, database string, limit *int, offset int) ([]chroma.Collection, error) {
	if err := chroma.CheckPage(limit, offset); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT `+collectionColumns+` FROM chroma_collections WHERE tenant = $1 AND database = $2
		ORDER BY id LIMIT $3 OFFSET $4`, tenant, database, sqlLimit(limit), int64(offset))
	if err != nil {
		return nil, s.mapErr(err)
	}
	defer rows.Close()
	out := []chroma.Collection{}
	for rows.Next() {
		c, err := scanCollection(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// CountCollections counts a database's collections (0 for an unknown database).
func (s *Store) CountCollections(ctx context.Context, tenant, database string) (int, error) {
	var n int
	err := s.pool.QueryRow(ctx, `SELECT count(*) FROM chroma_collections WHERE tenant = $1 AND database = $2`, tenant, database).Scan(&n)
	return n, s.mapErr(err)
}

// ModifyCollection renames a collection, replaces its metadata or changes
// its mutable configuration, with vecstore's rules.
func (s *Store) ModifyCollection(ctx context.Context, id string, req chroma.ModifyCollectionRequest) error {
	cid, err := chroma.CheckModifyCollection(id, req)
	if err != nil {
		return err
	}
	return s.inTx(ctx, func(tx pgx.Tx) error {
		c, err := s.collectionByID(ctx, tx, cid, "FOR UPDATE")
		if err != nil {
			return err
		}
		if req.NewName != nil && *req.NewName != c.Name {
			var one int
			err := tx.QueryRow(ctx, `SELECT 1 FROM chroma_collections WHERE tenant = $1 AND database = $2 AND name = $3`,
				c.Tenant, c.Database, *req.NewName).Scan(&one)
			if err == nil {
				return chroma.Taken("collection", *req.NewName)
			}
			if !errors.Is(err, pgx.ErrNoRows) {
				return err
			}
			c.Name = *req.NewName
		}
		if err := chroma.ApplyModifyCollection(&c, req); err != nil {
			return err
		}
		md, fk, err := encodeMetadata(c.Metadata, "new_metadata")
		if err != nil {
			return err
		}
		cfgJSON, err := json.Marshal(c.Config)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE chroma_collections SET name = $2, metadata = $3, float_keys = $4, config = $5 WHERE id = $1`,
			cid, c.Name, md, fk, cfgJSON)
		if isUniqueViolation(err) {
			return chroma.Taken("collection", c.Name)
		}
		return err
	})
}

// DeleteCollection deletes a collection by name with its records and index.
func (s *Store) DeleteCollection(ctx context.Context, tenant, database, name string) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		var cid string
		err := tx.QueryRow(ctx, `DELETE FROM chroma_collections WHERE tenant = $1 AND database = $2 AND name = $3 RETURNING id::text`,
			tenant, database, name).Scan(&cid)
		if errors.Is(err, pgx.ErrNoRows) {
			return chroma.CollectionNotFoundByName(name)
		}
		if err != nil {
			return err
		}
		return dropVectorIndex(ctx, tx, cid)
	})
}

// Reset deletes every tenant, database and collection (Chroma's reset), if
// Options.AllowReset; otherwise ErrForbidden.
func (s *Store) Reset(ctx context.Context) error {
	if !s.opts.AllowReset {
		return chroma.ResetDisabled()
	}
	return s.inTx(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT id::text FROM chroma_collections`)
		if err != nil {
			return err
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		for _, id := range ids {
			if err := dropVectorIndex(ctx, tx, id); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `TRUNCATE chroma_records, chroma_collections, chroma_databases, chroma_tenants`); err != nil {
			return err
		}
		return s.ensureDefaults(ctx, tx)
	})
}

// sqlLimit is a LIMIT parameter: NULL (no limit) for nil.
func sqlLimit(limit *int) *int64 {
	if limit == nil {
		return nil
	}
	l := int64(*limit)
	return &l
}
