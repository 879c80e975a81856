package pgcollections

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn/internal/pgvector"
	"github.com/cairn-dev/cairn/vecstore/chroma"
	"github.com/cairn-dev/cairn/vecstore/where"
)

// maxIndexedDim is pgvector's HNSW limit for the vector type; collections
// of higher dimension are scanned exactly.
const maxIndexedDim = 2000

func indexName(cid string) string { return "chroma_hnsw_" + strings.ReplaceAll(cid, "-", "") }

// distanceSQL returns, for a collection, the ordering operator expression
// between its rows' vectors and the query placeholder q, and the SQL that
// turns that expression into Chroma's distance.
func distanceSQL(c chroma.Collection, q string) (order, dist string) {
	v := fmt.Sprintf("embedding::vector(%d)", c.Dimension)
	qv := fmt.Sprintf("%s::vector(%d)", q, c.Dimension)
	switch c.Config.HNSW.Space {
	case chroma.SpaceIP:
		order = v + " <#> " + qv
		return order, "1 + (" + order + ")"
	case chroma.SpaceCosine:
		order = v + " <=> " + qv
		return order, order
	}
	order = v + " <-> " + qv
	return order, "power(" + order + ", 2)"
}

// createVectorIndex builds collection c's HNSW index (its dimension is set).
func (s *Store) createVectorIndex(ctx context.Context, tx pgx.Tx, c chroma.Collection) error {
	if c.Dimension > maxIndexedDim {
		return nil
	}
	ops := map[chroma.Space]string{chroma.SpaceL2: "vector_l2_ops", chroma.SpaceIP: "vector_ip_ops",
		chroma.SpaceCosine: "vector_cosine_ops"}[c.Config.HNSW.Space]
	if ops == "" {
		ops = "vector_l2_ops"
	}
	m := min(max(c.Config.HNSW.MaxNeighbors, 2), 100)
	efc := min(max(c.Config.HNSW.EfConstruction, 2*m, 4), 1000)
	// cid is a canonical UUID (checked before any statement), so it can be
	// written into the statement: the partial index's predicate must be a
	// literal for the planner to match queries against it.
	_, err := tx.Exec(ctx, fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %s ON chroma_records USING hnsw ((embedding::vector(%d)) %s)
		WITH (m = %d, ef_construction = %d) WHERE collection = '%s'`, indexName(c.ID), c.Dimension, ops, m, efc, c.ID))
	return err
}

func dropVectorIndex(ctx context.Context, tx pgx.Tx, cid string) error {
	_, err := tx.Exec(ctx, `DROP INDEX IF EXISTS `+indexName(cid))
	return err
}

// Add inserts records. Ids already in the collection are silently ignored,
// and within one batch the first occurrence of an id wins (Chroma 1.0.0).
func (s *Store) Add(ctx context.Context, collID string, req chroma.AddRequest) error {
	return s.write(ctx, collID, chroma.WriteAdd, chroma.UpdateRequest(req))
}

// Upsert inserts new ids and replaces existing ones, with vecstore's merge
// rules. Records keep their position in insertion order.
func (s *Store) Upsert(ctx context.Context, collID string, req chroma.AddRequest) error {
	return s.write(ctx, collID, chroma.WriteUpsert, chroma.UpdateRequest(req))
}

// Update changes existing records (unknown ids ignored).
func (s *Store) Update(ctx context.Context, collID string, req chroma.UpdateRequest) error {
	return s.write(ctx, collID, chroma.WriteUpdate, req)
}

// stored is a record's state as the write path needs it.
type stored struct {
	seq      int64
	doc, uri *string
	meta     chroma.Metadata
	emb      *string // new vector (pgvector text), nil: unchanged
}

// write is Add, Upsert and Update: in one transaction that locks the
// collection's row, it checks the vectors against the collection, reads the
// records the batch names, computes their new states with vecstore's rules
// and writes them.
func (s *Store) write(ctx context.Context, collID string, kind chroma.WriteKind, req chroma.UpdateRequest) error {
	cid, err := chroma.ParseCollectionID(collID)
	if err != nil {
		return err
	}
	dim, refusal, err := chroma.CheckWrite(kind, req)
	if err != nil {
		return err
	}
	if refusal != nil && dim == 0 {
		return refusal
	}
	return s.inTx(ctx, func(tx pgx.Tx) error {
		c, err := s.collectionByID(ctx, tx, cid, "FOR UPDATE")
		if err != nil {
			return err
		}
		if len(req.IDs) == 0 && refusal == nil {
			return nil
		}
		empty := true
		if dim > 0 && req.Model != c.Model {
			if err := tx.QueryRow(ctx, `SELECT NOT EXISTS (SELECT 1 FROM chroma_records WHERE collection = $1)`, cid).Scan(&empty); err != nil {
				return err
			}
		}
		before := c
		if err := chroma.AdoptVectors(&c, empty, dim, req.Model); err != nil {
			return err
		}
		if c.Dimension != before.Dimension || c.Model != before.Model {
			if _, err := tx.Exec(ctx, `UPDATE chroma_collections SET dimension = $2, model = $3 WHERE id = $1`, cid, c.Dimension, c.Model); err != nil {
				return err
			}
			if before.Dimension == 0 {
				if err := s.createVectorIndex(ctx, tx, c); err != nil {
					return err
				}
			}
		}
		if refusal != nil {
			if before.Dimension == 0 && c.Dimension != 0 {
				return &errCommitThenRefuse{refusal}
			}
			return refusal
		}
		old, err := readStates(ctx, tx, cid, req.IDs)
		if err != nil {
			return err
		}
		states, touched := stage(kind, req, old)
		if len(touched) == 0 {
			return nil
		}
		return writeStates(ctx, tx, cid, states, touched)
	})
}

// readStates reads the stored records among ids.
func readStates(ctx context.Context, tx pgx.Tx, cid string, ids []string) (map[string]*stored, error) {
	rows, err := tx.Query(ctx, `SELECT id, seq, document, uri, metadata, float_keys FROM chroma_records
		WHERE collection = $1 AND id = ANY($2)`, cid, ids)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make(map[string]*stored)
	for rows.Next() {
		var id string
		var md, fk []byte
		st := &stored{}
		if err := rows.Scan(&id, &st.seq, &st.doc, &st.uri, &md, &fk); err != nil {
			return nil, err
		}
		if st.meta, err = decodeMetadata(md, fk); err != nil {
			return nil, err
		}
		out[id] = st
	}
	return out, rows.Err()
}

// stage computes the new state of every record the batch changes (seq -1:
// a new record), as vecstore's stageWriteLocked does.
func stage(kind chroma.WriteKind, req chroma.UpdateRequest, old map[string]*stored) (map[string]*stored, []string) {
	states := make(map[string]*stored)
	var touched []string
	for i, id := range req.IDs {
		var md chroma.Metadata
		if req.Metadatas != nil {
			md = req.Metadatas[i]
		}
		md, reservedDoc := chroma.SplitReserved(md)
		var doc, uri *string
		if req.Documents != nil {
			doc = req.Documents[i]
		}
		if doc == nil && reservedDoc != nil {
			doc = reservedDoc
		}
		if req.URIs != nil {
			uri = req.URIs[i]
		}
		var emb *string
		if req.Embeddings != nil && req.Embeddings[i] != nil {
			t := pgvector.Text(req.Embeddings[i])
			emb = &t
		}
		cur, ok := states[id]
		if !ok {
			cur = old[id]
		}
		var r *stored
		switch {
		case cur == nil && kind == chroma.WriteUpdate:
			continue
		case cur != nil && kind == chroma.WriteAdd:
			continue
		case cur == nil:
			r = &stored{seq: -1, doc: doc, uri: uri, meta: chroma.MergeMetadata(nil, md), emb: emb}
		default:
			nr := *cur
			r = &nr
			if doc != nil {
				r.doc = doc
			}
			if uri != nil {
				r.uri = uri
			}
			r.meta = chroma.MergeMetadata(cur.meta, md)
			if emb != nil {
				r.emb = emb
			}
		}
		if _, seen := states[id]; !seen {
			touched = append(touched, id)
		}
		states[id] = r
	}
	return states, touched
}

// writeStates writes the staged records in one statement; new records take
// insertion-order numbers from chroma_record_seq in batch order.
func writeStates(ctx context.Context, tx pgx.Tx, cid string, states map[string]*stored, touched []string) error {
	fresh := 0
	for _, id := range touched {
		if states[id].seq < 0 {
			fresh++
		}
	}
	if fresh > 0 {
		rows, err := tx.Query(ctx, `SELECT nextval('chroma_record_seq') FROM generate_series(1, $1)`, fresh)
		if err != nil {
			return err
		}
		seqs, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return err
		}
		slices.Sort(seqs)
		for _, id := range touched {
			if st := states[id]; st.seq < 0 {
				st.seq, seqs = seqs[0], seqs[1:]
			}
		}
	}
	n := len(touched)
	seqs := make([]int64, n)
	embs := make([]*string, n)
	docs := make([]*string, n)
	uris := make([]*string, n)
	metas := make([]*string, n)
	fks := make([]*string, n)
	for i, id := range touched {
		st := states[id]
		seqs[i], embs[i], docs[i], uris[i] = st.seq, st.emb, st.doc, st.uri
		md, fk, err := encodeMetadata(st.meta, "metadatas")
		if err != nil {
			return err
		}
		if md != nil {
			m := string(md)
			metas[i] = &m
		}
		if fk != nil {
			f := string(fk)
			fks[i] = &f
		}
	}
	_, err := tx.Exec(ctx, `INSERT INTO chroma_records (collection, id, seq, embedding, document, uri, metadata, float_keys)
		SELECT $1, u.id, u.seq, u.emb::vector, u.doc, u.uri, u.meta::jsonb, u.fk::jsonb
		FROM unnest($2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[]) AS u(id, seq, emb, doc, uri, meta, fk)
		ON CONFLICT (collection, id) DO UPDATE SET embedding = coalesce(EXCLUDED.embedding, chroma_records.embedding),
			document = EXCLUDED.document, uri = EXCLUDED.uri, metadata = EXCLUDED.metadata, float_keys = EXCLUDED.float_keys`,
		cid, touched, seqs, embs, docs, uris, metas, fks)
	return err
}

// filterSQL is the condition selecting collection cid's records that match
// ids, w and d (d without regular expressions, or allowed from a Go scan).
func filterSQL(cid string, ids []string, w *where.Expr, d *where.DocExpr, allowed []string, a *sqlArgs) string {
	conds := []string{"collection = '" + cid + "'"}
	if ids != nil {
		conds = append(conds, "id = ANY("+a.add(ids)+"::text[])")
	}
	if w != nil {
		conds = append(conds, whereSQL(w, a))
	}
	if allowed != nil {
		conds = append(conds, "id = ANY("+a.add(allowed)+"::text[])")
	} else if d != nil {
		conds = append(conds, documentSQL(d, a))
	}
	return strings.Join(conds, " AND ")
}

// regexAllowed evaluates a document filter with regular expressions in Go
// over the records ids and w allow, and returns the ids that match (nil
// when d needs no Go scan).
func (s *Store) regexAllowed(ctx context.Context, q querier, cid string, ids []string, w *where.Expr, d *where.DocExpr, maxScan int64) ([]string, error) {
	if !hasRegex(d) {
		return nil, nil
	}
	var a sqlArgs
	rows, err := q.Query(ctx, `SELECT id, document FROM chroma_records WHERE `+filterSQL(cid, ids, w, nil, nil, &a), a...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []string{}
	m := chroma.NewDocMatcher(ctx, d, maxScan)
	for rows.Next() {
		var id string
		var doc *string
		if err := rows.Scan(&id, &doc); err != nil {
			return nil, err
		}
		ok, err := m.Match(doc)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, id)
		}
	}
	return out, rows.Err()
}

// Delete deletes the records matching req. With nothing set it deletes
// nothing; with an empty IDs list and no filter it is an error (Chroma).
func (s *Store) Delete(ctx context.Context, collID string, req chroma.DeleteRequest) error {
	cid, err := chroma.ParseCollectionID(collID)
	if err != nil {
		return err
	}
	if err := chroma.CheckDelete(req); err != nil {
		return err
	}
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := s.collectionByID(ctx, tx, cid, "FOR UPDATE"); err != nil {
			return err
		}
		if req.IDs == nil && req.Where == nil && req.WhereDocument == nil {
			return nil
		}
		allowed, err := s.regexAllowed(ctx, tx, cid, req.IDs, req.Where, req.WhereDocument, req.MaxScanBytes)
		if err != nil {
			return err
		}
		var a sqlArgs
		_, err = tx.Exec(ctx, `DELETE FROM chroma_records WHERE `+filterSQL(cid, req.IDs, req.Where, req.WhereDocument, allowed, &a), a...)
		return err
	})
}

// Count returns the number of records.
func (s *Store) Count(ctx context.Context, collID string) (int, error) {
	cid, err := chroma.ParseCollectionID(collID)
	if err != nil {
		return 0, err
	}
	var n *int
	err = s.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM chroma_records WHERE collection = $1)
		FROM chroma_collections WHERE id = $1`, cid).Scan(&n)
	if err == pgx.ErrNoRows {
		return 0, chroma.CollectionNotFoundByID(cid)
	}
	if err != nil {
		return 0, s.mapErr(err)
	}
	return *n, nil
}

// recordColumns lists the columns of a result row for the fields res includes.
func recordColumns(emb, doc, uri, meta bool) string {
	cols := "id"
	if emb {
		cols += ", embedding::text"
	}
	if doc {
		cols += ", document"
	}
	if uri || meta {
		cols += ", uri"
	}
	if meta {
		cols += ", metadata, float_keys"
	}
	return cols
}

// scanRecord reads one row of recordColumns into res; extra are scanned
// first (a query's distance).
func scanRecord(rows pgx.Rows, res *chroma.GetResult, extra ...any) error {
	var id string
	var emb *string
	var doc, uri *string
	var md, fk []byte
	dest := append(extra, &id)
	if res.Embeddings != nil {
		dest = append(dest, &emb)
	}
	if res.Documents != nil {
		dest = append(dest, &doc)
	}
	if res.URIs != nil || res.Metadatas != nil {
		dest = append(dest, &uri)
	}
	if res.Metadatas != nil {
		dest = append(dest, &md, &fk)
	}
	if err := rows.Scan(dest...); err != nil {
		return err
	}
	res.IDs = append(res.IDs, id)
	if res.Embeddings != nil {
		var v []float32
		if emb != nil {
			var err error
			if v, err = pgvector.Parse(*emb); err != nil {
				return err
			}
		}
		res.Embeddings = append(res.Embeddings, v)
	}
	if res.Documents != nil {
		res.Documents = append(res.Documents, doc)
	}
	if res.URIs != nil {
		res.URIs = append(res.URIs, uri)
	}
	if res.Metadatas != nil {
		m, err := decodeMetadata(md, fk)
		if err != nil {
			return err
		}
		res.Metadatas = append(res.Metadatas, chroma.ResultMetadata(m, uri))
	}
	return nil
}

// Get returns records in insertion order after filtering, offset and limit.
func (s *Store) Get(ctx context.Context, collID string, req chroma.GetRequest) (*chroma.GetResult, error) {
	cid, err := chroma.ParseCollectionID(collID)
	if err != nil {
		return nil, err
	}
	res, err := chroma.CheckGet(req)
	if err != nil {
		return nil, err
	}
	err = s.inReadTx(ctx, func(tx pgx.Tx) error {
		if _, err := s.collectionByID(ctx, tx, cid, ""); err != nil {
			return err
		}
		allowed, err := s.regexAllowed(ctx, tx, cid, req.IDs, req.Where, req.WhereDocument, req.MaxScanBytes)
		if err != nil {
			return err
		}
		var a sqlArgs
		q := `SELECT ` + recordColumns(res.Embeddings != nil, res.Documents != nil, res.URIs != nil, res.Metadatas != nil) +
			` FROM chroma_records WHERE ` + filterSQL(cid, req.IDs, req.Where, req.WhereDocument, allowed, &a) + ` ORDER BY seq`
		if req.Limit != nil {
			q += " LIMIT " + a.add(int64(*req.Limit))
		}
		q += " OFFSET " + a.add(int64(req.Offset))
		budget := chroma.NewAnswerBudget(req.MaxAnswerBytes)
		return readBounded(ctx, tx, q, a, req.MaxAnswerBytes > 0, budget, func(rows pgx.Rows) (bool, error) {
			if err := scanRecord(rows, res); err != nil {
				return false, err
			}
			return budget.Spend(res), nil
		})
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// readBounded reads the rows of query q with scan, which reads one row
// and reports whether the result is now over budget; it stops there (the
// result is then cut short, and the caller refuses it). Closing a query's
// rows early still reads every remaining row off the connection, so a
// query that may return many rows (cursor) is read through a cursor, a
// batch at a time, each batch about as many rows as the budget has room
// for at the average row size so far: the rows past the budget stay in
// the server.
func readBounded(ctx context.Context, tx pgx.Tx, q string, a sqlArgs, cursor bool, budget *chroma.AnswerBudget, scan func(pgx.Rows) (over bool, err error)) error {
	read := func(rows pgx.Rows) (n int64, over bool, err error) {
		defer rows.Close()
		for rows.Next() {
			n++
			if over, err = scan(rows); err != nil || over {
				return n, over, err
			}
		}
		return n, false, rows.Err()
	}
	if !cursor {
		rows, err := tx.Query(ctx, q, a...)
		if err != nil {
			return err
		}
		_, _, err = read(rows)
		return err
	}
	if _, err := tx.Exec(ctx, "DECLARE chroma_rows NO SCROLL CURSOR FOR "+q, a...); err != nil {
		return err
	}
	start, total := budget.Used(), int64(0)
	for batch := int64(1); ; {
		// Described on every call: the same FETCH text returns the
		// columns of whichever cursor is open, so it is not cached.
		rows, err := tx.Query(ctx, "FETCH "+strconv.FormatInt(batch, 10)+" FROM chroma_rows", pgx.QueryExecModeDescribeExec)
		if err != nil {
			return err
		}
		n, over, err := read(rows)
		if total += n; err != nil || over {
			return err // the transaction's end closes the cursor
		}
		if n < batch {
			_, err := tx.Exec(ctx, "CLOSE chroma_rows")
			return err
		}
		avg := max((budget.Used()-start)/total, 1)
		batch = min(max(budget.Left()/avg+1, 1), 1024)
	}
}

// inReadTx runs fn in a read-only transaction with one snapshot
// (REPEATABLE READ), so a read's statements agree with each other.
func (s *Store) inReadTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, fn)
	return s.mapErr(err)
}

// Query returns, for each query embedding, the NResults nearest records
// among those matching the filters, by ascending distance.
func (s *Store) Query(ctx context.Context, collID string, req chroma.QueryRequest) (*chroma.QueryResult, error) {
	cid, err := chroma.ParseCollectionID(collID)
	if err != nil {
		return nil, err
	}
	qa, err := chroma.CheckQuery(req)
	if err != nil {
		return nil, err
	}
	k, dim, res := qa.K, qa.Dim, chroma.NewQueryResult(qa.Include, qa.Included, len(req.Embeddings))
	err = s.inReadTx(ctx, func(tx pgx.Tx) error {
		c, err := s.collectionByID(ctx, tx, cid, "")
		if err != nil {
			return err
		}
		if err := chroma.CheckQueryVectors(c, req, dim); err != nil {
			return err
		}
		if req.IDs != nil {
			var found int
			if err := tx.QueryRow(ctx, `SELECT count(*) FROM chroma_records WHERE collection = $1 AND id = ANY($2)`, cid, req.IDs).Scan(&found); err != nil {
				return err
			}
			distinct := slices.Clone(req.IDs)
			slices.Sort(distinct)
			if found != len(slices.Compact(distinct)) {
				return chroma.UnknownQueryID()
			}
		}
		allowed, err := s.regexAllowed(ctx, tx, cid, req.IDs, req.Where, req.WhereDocument, req.MaxScanBytes)
		if err != nil {
			return err
		}
		var a sqlArgs
		filter := filterSQL(cid, req.IDs, req.Where, req.WhereDocument, allowed, &a)
		exact := true
		if k > 0 && c.Dimension > 0 && c.Dimension <= maxIndexedDim {
			var n int
			if err := tx.QueryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM chroma_records WHERE `+filter+` LIMIT `+
				strconv.Itoa(s.opts.ExactMax+1)+`) AS t`, a...).Scan(&n); err != nil {
				return err
			}
			exact = n <= s.opts.ExactMax
		}
		if !exact {
			if err := s.setSearchParams(ctx, tx, c, k); err != nil {
				return err
			}
		}
		budget := chroma.NewAnswerBudget(req.MaxAnswerBytes)
		over := false
		for _, q := range req.Embeddings {
			if over {
				break
			}
			row := &chroma.GetResult{IDs: []string{}}
			if res.Embeddings != nil {
				row.Embeddings = [][]float32{}
			}
			if res.Documents != nil {
				row.Documents = []*string{}
			}
			if res.URIs != nil {
				row.URIs = []*string{}
			}
			if res.Metadatas != nil {
				row.Metadatas = []chroma.Metadata{}
			}
			var dists []float32
			if res.Distances != nil {
				dists = []float32{}
			}
			if k > 0 && c.Dimension > 0 {
				qa := append(sqlArgs(nil), a...)
				order, dist := distanceSQL(c, qa.add(pgvector.Text(q)))
				if exact {
					// An expression the index cannot serve: a full sort, exact.
					order = "(" + order + ") + 0, seq"
				}
				stmt := `SELECT ` + dist + `, ` + recordColumns(res.Embeddings != nil, res.Documents != nil, res.URIs != nil, res.Metadatas != nil) +
					` FROM chroma_records WHERE ` + filter + ` ORDER BY ` + order + ` LIMIT ` + strconv.Itoa(k)
				// A few rows are read as they come, more through a cursor.
				err := readBounded(ctx, tx, stmt, qa, req.MaxAnswerBytes > 0 && k > 16, budget, func(rows pgx.Rows) (bool, error) {
					var d float64
					if err := scanRecord(rows, row, &d); err != nil {
						return false, err
					}
					if dists != nil {
						dists = append(dists, float32(d))
					}
					over = budget.Spend(row) // cut short: the caller refuses it
					return over, nil
				})
				if err != nil {
					return err
				}
			}
			res.AppendRow(row, dists)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// setSearchParams sets the transaction's HNSW search parameters: a beam of
// BeamFactor x ef_search (at least k, at most pgvector's 1000) and, where
// pgvector has them, iterative scans in strict order so that filtered
// queries keep collecting rows until they have k. Whether the HNSW index
// is used is PostgreSQL's plan (it is, once the collection is large enough
// for a graph walk to cost less than a sort).
func (s *Store) setSearchParams(ctx context.Context, tx pgx.Tx, c chroma.Collection, k int) error {
	ef := int(math.Round(s.opts.BeamFactor * float64(c.Config.HNSW.EfSearch)))
	ef = min(max(ef, k, 1), 1000)
	if _, err := tx.Exec(ctx, `SELECT set_config('hnsw.ef_search', $1, true)`, strconv.Itoa(ef)); err != nil {
		return err
	}
	if s.iterative {
		if _, err := tx.Exec(ctx, `SELECT set_config('hnsw.iterative_scan', 'strict_order', true)`); err != nil {
			return err
		}
	}
	return nil
}
