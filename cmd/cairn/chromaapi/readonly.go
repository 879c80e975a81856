package chromaapi

import (
	"cmp"
	"context"
	"fmt"
	"net/http"

	"github.com/cairn-dev/cairn/vecstore/chroma"
)

// ReadOnlyDatabase names a database the API serves for reading only: its
// collections can be listed, read, counted and queried, but a Chroma client
// can neither create, modify nor delete them, nor write or delete their
// records, nor create or delete the database (403 ChromaError, the status
// Chroma gives a forbidden operation). cairn serve marks the engine's own
// message vectors so: they follow the messages in SQLite, so a change made
// through the Chroma API would break semantic search until a rebuild.
// Reset (when allowed) is the store's own: the store must keep these
// databases (vecstore's Options.ResetKeeps, which the engine sets).
type ReadOnlyDatabase struct {
	// Tenant is the database's tenant ("": Chroma's default_tenant, as
	// Chroma's clients default to it).
	Tenant   string
	Database string
	// Reason ends the refusal "Database [NAME] is read-only: REASON".
	Reason string
}

// readOnly wraps the served store and refuses every change inside its
// read-only databases, or anywhere when store is set; reads pass through
// untouched.
type readOnly struct {
	chroma.Store
	dbs []ReadOnlyDatabase
	// store, when not empty, makes the whole store read-only and says why
	// (Options.ReadOnlyStore).
	store string
}

// storeRefusal refuses a change anywhere in a read-only store: 403 as for
// a read-only database, since waiting does not help (a 503 invites
// retries) and Chroma's clients raise it as they raise any refusal.
func (r readOnly) storeRefusal() error {
	if r.store == "" {
		return nil
	}
	return &apiError{status: http.StatusForbidden, name: nameChroma, message: r.store + "; nothing was written"}
}

// protected returns the read-only database (tenant, database), if it is one.
func (r readOnly) protected(tenant, database string) (ReadOnlyDatabase, bool) {
	for _, d := range r.dbs {
		if cmp.Or(d.Tenant, chroma.DefaultTenant) == tenant && d.Database == database {
			return d, true
		}
	}
	return ReadOnlyDatabase{}, false
}

func (d ReadOnlyDatabase) refusal() *apiError {
	return &apiError{status: http.StatusForbidden, name: nameChroma,
		message: fmt.Sprintf("Database [%s] is read-only: %s", d.Database, d.Reason)}
}

// check refuses a change to (tenant, database) when it is read-only.
func (r readOnly) check(tenant, database string) error {
	if err := r.storeRefusal(); err != nil {
		return err
	}
	if d, ok := r.protected(tenant, database); ok {
		return d.refusal()
	}
	return nil
}

// checkID refuses a change to collection id when it lives in a read-only
// database. An id the store does not know passes, so that the store words
// the error as it does without this guard.
func (r readOnly) checkID(ctx context.Context, id string) error {
	if err := r.storeRefusal(); err != nil {
		return err
	}
	c, err := r.Store.GetCollectionByID(ctx, id)
	if err != nil {
		return nil
	}
	return r.check(c.Tenant, c.Database)
}

func (r readOnly) CreateTenant(ctx context.Context, name string) error {
	if err := r.storeRefusal(); err != nil {
		return err
	}
	return r.Store.CreateTenant(ctx, name)
}

func (r readOnly) Reset(ctx context.Context) error {
	if err := r.storeRefusal(); err != nil {
		return err
	}
	return r.Store.Reset(ctx)
}

func (r readOnly) CreateDatabase(ctx context.Context, tenant, name string) error {
	if err := r.check(tenant, name); err != nil {
		return err
	}
	return r.Store.CreateDatabase(ctx, tenant, name)
}

func (r readOnly) DeleteDatabase(ctx context.Context, tenant, name string) error {
	if err := r.check(tenant, name); err != nil {
		return err
	}
	return r.Store.DeleteDatabase(ctx, tenant, name)
}

func (r readOnly) CreateCollection(ctx context.Context, req chroma.CreateCollectionRequest) (chroma.Collection, error) {
	if r.store != "" && req.GetOrCreate {
		// get_or_create of a collection that exists only reads it (the
		// store ignores the request's metadata then): a client that
		// opens its collection so still reads a read-only store.
		if c, err := r.Store.GetCollection(ctx, req.Tenant, req.Database, req.Name); err == nil {
			return c, nil
		}
	}
	if err := r.check(req.Tenant, req.Database); err != nil {
		return chroma.Collection{}, err
	}
	return r.Store.CreateCollection(ctx, req)
}

func (r readOnly) ModifyCollection(ctx context.Context, id string, req chroma.ModifyCollectionRequest) error {
	if err := r.checkID(ctx, id); err != nil {
		return err
	}
	return r.Store.ModifyCollection(ctx, id, req)
}

func (r readOnly) DeleteCollection(ctx context.Context, tenant, database, name string) error {
	if err := r.check(tenant, database); err != nil {
		return err
	}
	return r.Store.DeleteCollection(ctx, tenant, database, name)
}

func (r readOnly) Add(ctx context.Context, collID string, req chroma.AddRequest) error {
	if err := r.checkID(ctx, collID); err != nil {
		return err
	}
	return r.Store.Add(ctx, collID, req)
}

func (r readOnly) Upsert(ctx context.Context, collID string, req chroma.AddRequest) error {
	if err := r.checkID(ctx, collID); err != nil {
		return err
	}
	return r.Store.Upsert(ctx, collID, req)
}

func (r readOnly) Update(ctx context.Context, collID string, req chroma.UpdateRequest) error {
	if err := r.checkID(ctx, collID); err != nil {
		return err
	}
	return r.Store.Update(ctx, collID, req)
}

func (r readOnly) Delete(ctx context.Context, collID string, req chroma.DeleteRequest) error {
	if err := r.checkID(ctx, collID); err != nil {
		return err
	}
	return r.Store.Delete(ctx, collID, req)
}
