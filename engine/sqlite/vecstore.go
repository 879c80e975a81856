package sqlite

import (
	"context"
	"errors"
	"fmt"
	"github.com/cairn-dev/cairn/engine"
	"math"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/cairn-dev/cairn/vecstore"
	"github.com/cairn-dev/cairn/vecstore/chroma"
	"github.com/cairn-dev/cairn/vecstore/where"
)

// messageEfSearch is the ef_search of message collections: Chroma's
// default, which vecstore searches with twice the beam (its BeamFactor).
const messageEfSearch = 100

// messageEfConstruction is the ef_construction of message collections: the
// design card's value (collections created before keep theirs).
const messageEfConstruction = 200

// messageCode is the vector code of message collections: their vectors can
// always be recomputed from the messages, so they keep 8-bit codes (about
// a quarter of float32's bytes on disk and in memory) instead of exact
// floats: residuals from trained centroids (sq8r), whose distances are
// nearer float32's than plain SQ8's for six bytes a vector more.
const messageCode = chroma.CodeSQ8R

// VectorsDir is the vecstore directory inside the data dir.
const VectorsDir = "vectors"

// VectorDatabase is the vecstore database (in the default tenant) that holds
// the engine's message collections. Nothing but the engine may change it:
// cairn serve's Chroma API serves it read-only.
const VectorDatabase = "cairn"

// syncBatch is the same for SyncVectors and Rebuild, where a caller waits
// for the whole backlog.
const syncBatch = 512

// compactAfterRows: a drain of at least this many outbox rows in a row (a
// bulk import's vectors, a backlog) ends with a compaction of the vector
// file, so that the drain's many transactions and snapshot rewrites leave
// no free pages behind (they made the file about 1.6 times its compacted
// size). Single writes never reach it, so their cost stays one snapshot.
const compactAfterRows = 1000

// compactVectors compacts the vector file if that gives back a tenth of
// it; failing is not an error of the drain (the next Close retries).
func (st *Store) compactVectors(ctx context.Context) {
	if err := st.vec.store.Compact(ctx, false); err != nil && ctx.Err() == nil {
		st.opts.Logger.Warn("vectors: compacting the vector file", "err", err)
	}
}

// vectors is the engine's vector side: the vecstore and the background
// worker that drains the outbox.
type vectors struct {
	store *vecstore.Store // nil: no vectors (no embedder and no set)
	emb   engine.Embedder // nil: keyword only
	// drained counts the rows the background worker filled since it was
	// last idle (embeddedStore.FillVectors); only the worker touches it.
	drained int

	mu struct {
		sync.Mutex
		colls map[string]string // collection name -> vecstore id
	}
}

// openVectors opens DIR/vectors when an embedder is configured or vector
// sets exist and registers the embedder's set if no set is active yet
// (Store.OpenVectors).
func (s *Store) openVectors(ctx context.Context) error {
	s.vec.emb = s.opts.Embedder
	sets, err := s.liveSets(ctx, s.w)
	if err != nil {
		return err
	}
	if s.vec.emb == nil && len(sets) == 0 && !s.storeOpts.VectorStore.Open {
		return nil
	}
	return s.openVectorStore(ctx, sets)
}

// openVectorStore opens the vecstore and, for an embedder whose model has
// no live set while no set is active (a store written before any model),
// creates its set with every stored message queued.
func (ss *Store) openVectorStore(ctx context.Context, sets []engine.VectorSet) error {
	st, err := vecstore.Open(ctx, filepath.Join(ss.dir, VectorsDir),
		vecstore.Options{Logger: ss.opts.Logger, AllowReset: ss.storeOpts.VectorStore.AllowReset, ResetKeeps: []string{VectorDatabase},
			OneShot: ss.opts.ReadOnly, LoadInBackground: !ss.opts.ReadOnly})
	if err != nil {
		return fmt.Errorf("engine: open vectors: %w", engine.VectorStoreError(err))
	}
	ss.vec.store = st
	if emb := ss.vec.emb; emb != nil {
		if emb.Dim() <= 0 || emb.ModelID() == "" {
			st.Close()
			return invalid("Options.Embedder", "must have a model id and a positive dimension")
		}
		var active *engine.VectorSet
		for i := range sets {
			if sets[i].ModelID == emb.ModelID() && sets[i].Dim != emb.Dim() {
				st.Close()
				return fmt.Errorf("%w: vector set %d of model %s has dimension %d, the embedder %d", engine.ErrDimensionMismatch, sets[i].ID, emb.ModelID(), sets[i].Dim, emb.Dim())
			}
			if sets[i].State == engine.SetActive {
				active = &sets[i]
			}
		}
		switch {
		case active == nil:
			// First model (or the active set was lost): the set is
			// filled in the background, or by SyncVectors.
			s, err := ss.createSet(ctx, emb.ModelID(), emb.Dim(), true)
			if err != nil {
				st.Close()
				return err
			}
			if n, err := ss.queued(ctx, s.ID); err == nil && n > 0 {
				ss.opts.Logger.Info("messages queued for vectors", "messages", n, "model", emb.ModelID(), "set", s.ID)
			}
		case active.ModelID != emb.ModelID():
			ss.opts.Logger.Warn("embedder differs from the active vectors: semantic search is off in this process until the vectors are rebuilt with it (cairn rebuild)",
				"embedder", emb.ModelID(), "active", active.ModelID)
		}
	}
	return nil
}

// VectorStore returns the data dir's vector store (DIR/vectors): the one
// *vecstore.Store of the process, to hand to whatever else serves
// collections, since a second Store on the same directory would replay
// every write of the first through the file lock and hold each shared
// collection in memory twice. It is nil when the store is not open (no
// embedder, no vector set and Options.VectorStore.Open false). The store
// owns it: Close closes it, callers must not.
func (s *Store) VectorStore() *vecstore.Store {
	if s.vec == nil {
		return nil
	}
	return s.vec.store
}

// closeVectors closes the vecstore (the worker is stopped). Called by the
// embedded store's Close.
func (s *Store) closeVectors() error {
	if s.vec == nil {
		return nil
	}
	if s.vec.store != nil {
		return s.vec.store.Close()
	}
	return nil
}

// drainOnce processes one batch of outbox rows of the first set that has
// work this process can do, and promotes a building set whose outbox is
// empty. It returns the number of rows processed.
func (st *Store) drainOnce(ctx context.Context, n int) (int, error) {
	if st.vec == nil || st.vec.store == nil {
		return 0, nil
	}
	sets, err := st.liveSets(ctx, st.w)
	if err != nil {
		return 0, err
	}
	for _, s := range sets {
		own := st.vec.emb != nil && st.vec.emb.ModelID() == s.ModelID
		rows, lease, err := st.claim(ctx, s.ID, n, !own)
		if err != nil {
			return 0, err
		}
		if len(rows) == 0 {
			if own && s.State == engine.SetBuilding {
				switched, err := st.promote(ctx, s.ID)
				if err != nil {
					return 0, err
				}
				if switched {
					st.dropRetired(ctx)
				}
			}
			continue
		}
		if err := st.processRows(ctx, s, rows, lease); err != nil {
			ids := make([]int64, len(rows))
			for i, r := range rows {
				ids[i] = r.id
			}
			st.release(ctx, s.ID, ids, lease)
			return 0, err
		}
		return len(rows), nil
	}
	return 0, nil
}

// dropRetired deletes retired sets' collections and rows.
func (st *Store) dropRetired(ctx context.Context) {
	rows, err := st.w.QueryContext(ctx, "SELECT "+setColumns+" FROM vector_sets WHERE state = 'retired'")
	if err != nil {
		st.opts.Logger.Warn("drop retired vector sets", "err", err)
		return
	}
	var sets []engine.VectorSet
	for rows.Next() {
		s, err := scanSet(rows)
		if err == nil {
			sets = append(sets, s)
		}
	}
	rows.Close()
	for _, s := range sets {
		err := st.vec.store.DeleteCollection(ctx, chroma.DefaultTenant, VectorDatabase, s.Collection)
		if err != nil && !errors.Is(err, chroma.ErrNotFound) {
			st.opts.Logger.Warn("drop retired vector set", "id", s.ID, "err", err)
			continue
		}
		st.vec.mu.Lock()
		delete(st.vec.mu.colls, s.Collection)
		st.vec.mu.Unlock()
		if _, err := st.w.ExecContext(ctx, "DELETE FROM vector_sets WHERE id = ? AND state = 'retired'", s.ID); err != nil {
			st.opts.Logger.Warn("drop retired vector set", "id", s.ID, "err", err)
		}
	}
}

// collection returns the vecstore id of set s's collection, creating the
// collection (with the set's model and dimension) on first use.
func (st *Store) collection(ctx context.Context, s engine.VectorSet, create bool) (string, error) {
	st.vec.mu.Lock()
	id, ok := st.vec.mu.colls[s.Collection]
	st.vec.mu.Unlock()
	if ok {
		return id, nil
	}
	c, err := st.vec.store.GetCollection(ctx, chroma.DefaultTenant, VectorDatabase, s.Collection)
	if errors.Is(err, chroma.ErrNotFound) && create {
		if err := st.vec.store.CreateDatabase(ctx, chroma.DefaultTenant, VectorDatabase); err != nil && !errors.Is(err, chroma.ErrExists) {
			return "", fmt.Errorf("engine: vectors: %w", err)
		}
		space := chroma.SpaceCosine
		efSearch, efConstruction := messageEfSearch, messageEfConstruction
		c, err = st.vec.store.CreateCollection(ctx, chroma.CreateCollectionRequest{
			Tenant: chroma.DefaultTenant, Database: VectorDatabase, Name: s.Collection,
			Metadata: chroma.Metadata{"cairn": where.String("messages"), "model": where.String(s.ModelID),
				chroma.MetaVectorCode: where.String(string(messageCode))},
			HNSW:        &chroma.HNSWParams{Space: &space, EfSearch: &efSearch, EfConstruction: &efConstruction},
			GetOrCreate: true, Model: s.ModelID, Dimension: s.Dim,
		})
	}
	if err != nil {
		return "", fmt.Errorf("engine: vectors: collection %s: %w", s.Collection, err)
	}
	if c.Model != s.ModelID || (c.Dimension != 0 && c.Dimension != s.Dim) {
		return "", fmt.Errorf("%w: collection %s holds model %q dim %d, vector set %d says %q dim %d", engine.ErrEmbedderMismatch, s.Collection, c.Model, c.Dimension, s.ID, s.ModelID, s.Dim)
	}
	st.vec.mu.Lock()
	st.vec.mu.colls[s.Collection] = c.ID
	st.vec.mu.Unlock()
	return c.ID, nil
}

// vectorMeta is what a message's vector carries for filtering.
type vectorMeta struct {
	id                                                  int64
	content, channel, channelType, sender, project, typ string
	created                                             int64
	confidence                                          float64
	words                                               int64
	breadcrumbs                                         bool
}

func (m vectorMeta) metadata() chroma.Metadata {
	return chroma.Metadata{
		"channel_id":      where.String(m.channel),
		"channel_type":    where.String(m.channelType),
		"agent_name":      where.String(m.sender),
		"project_id":      where.String(m.project),
		"timestamp":       where.Int(m.created),
		"confidence":      where.Float(m.confidence),
		"message_type":    where.String(m.typ),
		"word_count":      where.Int(m.words),
		"has_breadcrumbs": where.Bool(m.breadcrumbs),
	}
}

func (s *Store) loadVectorMeta(ctx context.Context, ids []int64) (map[int64]vectorMeta, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT m.id, m.content, m.channel_id, ch.channel_type, m.sender_id, m.sender_project_id,
		m.created_at, m.confidence, m.message_type, m.word_count, m.has_breadcrumbs
		FROM messages m JOIN channels ch ON ch.id = m.channel_id WHERE m.id IN (`+placeholders(len(ids))+")", int64Args(ids)...)
	if err != nil {
		return nil, fmt.Errorf("engine: vectors: %w", classify(err))
	}
	defer rows.Close()
	out := make(map[int64]vectorMeta, len(ids))
	for rows.Next() {
		var m vectorMeta
		if err := rows.Scan(&m.id, &m.content, &m.channel, &m.channelType, &m.sender, &m.project, &m.created, &m.confidence, &m.typ, &m.words, &m.breadcrumbs); err != nil {
			return nil, fmt.Errorf("engine: vectors: %w", classify(err))
		}
		out[m.id] = m
	}
	return out, classify(rows.Err())
}

// processRows does the work of claimed rows: embeds and upserts messages
// (a message whose vector is already stored only gets its metadata
// refreshed, so a crash after the vecstore write and before the outbox
// delete never embeds twice), deletes vectors of deleted messages, then
// removes the rows.
func (st *Store) processRows(ctx context.Context, s engine.VectorSet, rows []outboxRow, lease int64) error {
	coll, err := st.collection(ctx, s, true)
	if err != nil {
		return err
	}
	var ups, dels, doneIDs []int64
	for _, r := range rows {
		if r.op == opDelete {
			dels = append(dels, r.id)
		} else {
			ups = append(ups, r.id)
		}
	}
	if len(ups) > 0 {
		metas, err := st.loadVectorMeta(ctx, ups)
		if err != nil {
			return err
		}
		strIDs := make([]string, 0, len(ups))
		for _, id := range ups {
			if _, ok := metas[id]; ok {
				strIDs = append(strIDs, strconv.FormatInt(id, 10))
			} else {
				dels = append(dels, id) // deleted since it was queued
			}
		}
		have := map[string]bool{}
		if len(strIDs) > 0 {
			got, err := st.vec.store.Get(ctx, coll, chroma.GetRequest{IDs: strIDs, Include: []chroma.Include{}})
			if err != nil {
				return fmt.Errorf("engine: vectors: %w", err)
			}
			for _, id := range got.IDs {
				have[id] = true
			}
		}
		var todo []vectorMeta
		refresh := chroma.UpdateRequest{}
		for _, id := range ups {
			m, ok := metas[id]
			if !ok {
				continue
			}
			if sid := strconv.FormatInt(id, 10); have[sid] {
				// Stored already: a crash came between the vecstore write
				// and the outbox delete, or a migration changed what the
				// metadata holds (a session chunk's project). Its
				// metadata is made current; nothing is embedded.
				refresh.IDs = append(refresh.IDs, sid)
				refresh.Metadatas = append(refresh.Metadatas, m.metadata())
				doneIDs = append(doneIDs, id)
				continue
			}
			todo = append(todo, m)
		}
		if len(refresh.IDs) > 0 {
			if err := st.vec.store.Update(ctx, coll, refresh); err != nil {
				return fmt.Errorf("engine: vectors: %w", err)
			}
		}
		if len(todo) > 0 {
			texts := make([]string, len(todo))
			for i, m := range todo {
				texts[i] = st.text(engine.QueuedMessage{ID: m.id, Content: m.content, Sender: m.sender, CreatedAt: fromMillis(m.created)})
			}
			vecs, err := st.vec.emb.Embed(ctx, texts)
			if err != nil {
				return fmt.Errorf("engine: embed %d messages: %w", len(texts), err)
			}
			if len(vecs) != len(texts) {
				return fmt.Errorf("engine: embedder returned %d vectors for %d texts", len(vecs), len(texts))
			}
			req := chroma.AddRequest{Model: s.ModelID, IDs: make([]string, len(todo)), Embeddings: vecs, Metadatas: make([]chroma.Metadata, len(todo))}
			for i, m := range todo {
				if len(vecs[i]) != s.Dim {
					return fmt.Errorf("%w: embedder returned %d floats, vector set %d has dimension %d", engine.ErrDimensionMismatch, len(vecs[i]), s.ID, s.Dim)
				}
				req.IDs[i] = strconv.FormatInt(m.id, 10)
				req.Metadatas[i] = m.metadata()
				doneIDs = append(doneIDs, m.id)
			}
			// Add, not Upsert: ids already stored were skipped above, and
			// Add leaves an id written meanwhile by another process as is.
			if err := st.vec.store.Add(ctx, coll, req); err != nil {
				return fmt.Errorf("engine: vectors: %w", err)
			}
		}
	}
	if len(dels) > 0 {
		strIDs := make([]string, len(dels))
		for i, id := range dels {
			strIDs[i] = strconv.FormatInt(id, 10)
		}
		if err := st.vec.store.Delete(ctx, coll, chroma.DeleteRequest{IDs: strIDs}); err != nil {
			return fmt.Errorf("engine: vectors: %w", err)
		}
		doneIDs = append(doneIDs, dels...)
	}
	return st.complete(ctx, s.ID, doneIDs, lease)
}

// queued counts the messages waiting for their vector in set.
func (st *Store) queued(ctx context.Context, set int64) (int64, error) {
	var n int64
	if err := st.r.QueryRowContext(ctx, "SELECT count(*) FROM vector_outbox WHERE set_id = ? AND op = 0", set).Scan(&n); err != nil {
		return 0, fmt.Errorf("engine: vector outbox: %w", classify(err))
	}
	return n, nil
}

// syncVectors is the data dir's SyncVectors: it drains the outbox rows
// this process can do (its model's sets, and deletions), waits for the
// leases other workers hold, and makes one more pass that promotes a
// building set another worker emptied.
func (st *Store) syncVectors(ctx context.Context, progress func(engine.Progress)) error {
	if st.vec == nil || st.vec.store == nil {
		return nil
	}
	model := ""
	if st.vec.emb != nil {
		model = st.vec.emb.ModelID()
	}
	// The rows this process can do: its model's sets, and deletions.
	const mine = " FROM vector_outbox WHERE (op = 1 OR set_id IN (SELECT id FROM vector_sets WHERE model_id = ?1 AND state <> 'retired'))"
	count := func() (int64, error) {
		var n int64
		err := st.r.QueryRowContext(ctx, "SELECT count(*)"+mine, model).Scan(&n)
		return n, classify(err)
	}
	total, err := count()
	if err != nil {
		return fmt.Errorf("engine: vectors: %w", err)
	}
	drained := 0
	for {
		k, err := st.drainOnce(ctx, syncBatch)
		if err != nil {
			return err
		}
		drained += k
		if progress != nil {
			left, err := count()
			if err != nil {
				return fmt.Errorf("engine: vectors: %w", err)
			}
			total = max(total, left)
			progress(engine.Progress{Done: total - left, Total: total, Item: "embedding"})
		}
		if k == 0 {
			// Another worker may still hold leases: wait for them.
			var leased int64
			if err := st.r.QueryRowContext(ctx, "SELECT count(*)"+mine+" AND lease_until > ?2", model, time.Now().UnixMilli()).Scan(&leased); err != nil {
				return fmt.Errorf("engine: vectors: %w", classify(err))
			}
			if leased == 0 {
				// One more pass promotes a building set emptied by another worker.
				if _, err := st.drainOnce(ctx, syncBatch); err != nil {
					return err
				}
				if drained >= compactAfterRows {
					st.compactVectors(ctx)
				}
				return nil
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
}

// semanticHit is one vector search hit.
type semanticHit struct {
	id  int64
	sim float64 // cosine similarity
}

// semanticSearch embeds query and returns the k nearest messages among
// those matching filter, by descending similarity.
func (st *Store) semanticSearch(ctx context.Context, s engine.VectorSet, qvec []float32, filter *where.Expr, k int) ([]semanticHit, error) {
	coll, err := st.collection(ctx, s, false)
	if errors.Is(err, chroma.ErrNotFound) {
		return nil, nil // nothing embedded yet
	}
	if err != nil {
		return nil, err
	}
	res, err := st.vec.store.Query(ctx, coll, chroma.QueryRequest{
		Embeddings: [][]float32{qvec}, NResults: &k, Where: filter,
		Include: []chroma.Include{chroma.IncludeDistances}, Model: s.ModelID,
	})
	if err != nil {
		return nil, fmt.Errorf("engine: semantic search: %w", err)
	}
	if len(res.IDs) == 0 {
		return nil, nil
	}
	out := make([]semanticHit, 0, len(res.IDs[0]))
	for i, sid := range res.IDs[0] {
		id, err := strconv.ParseInt(sid, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%w: vector record id %q is not a message id", engine.ErrCorrupt, sid)
		}
		out = append(out, semanticHit{id: id, sim: 1 - float64(res.Distances[0][i])})
	}
	return out, nil
}

// similarities returns the exact cosine similarity of qvec to the stored
// vectors of ids (those that have one).
func (st *Store) similarities(ctx context.Context, s engine.VectorSet, qvec []float32, ids []int64) (map[int64]float64, error) {
	vecs, err := st.vectorsOf(ctx, s, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]float64, len(vecs))
	for id, v := range vecs {
		if len(v) == len(qvec) && norm(v) > 0 && norm(qvec) > 0 {
			out[id] = engine.Cosine(qvec, v)
		}
	}
	return out, nil
}

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}
