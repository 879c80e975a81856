-- cairn format 3: vector sets and the vector outbox.
-- Frozen: change the schema with a new numbered file, never by editing this one.
--
-- A vector set is one vecstore collection of message vectors made by one
-- embedding model (model_id, dim). At most one set is 'active' (it answers
-- semantic queries); a 'building' set is being filled (first model, model
-- switch or rebuild) and becomes active when its outbox is empty; the set it
-- replaces is dropped then.
--
-- Invariant, for every set S that is not retired and every message m:
-- exactly one of (a) a vector_outbox row (S, m) or (b) a record "m" in S's
-- collection. Writes add the outbox rows in the transaction that stores the
-- message; the worker removes a row only after the vector is durable in
-- vecstore. Deleting a message turns its rows into op 1 (delete).

CREATE TABLE vector_sets (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    model_id     TEXT NOT NULL CHECK (length(model_id) > 0),
    dim          INTEGER NOT NULL CHECK (dim > 0),
    collection   TEXT NOT NULL UNIQUE,          -- vecstore collection name (tenant default_tenant, database cairn)
    state        TEXT NOT NULL CHECK (state IN ('building', 'active', 'retired')),
    created_at   INTEGER NOT NULL,              -- Unix ms
    activated_at INTEGER NOT NULL DEFAULT 0
) STRICT;

CREATE UNIQUE INDEX vector_sets_one_active ON vector_sets (state) WHERE state = 'active';
CREATE UNIQUE INDEX vector_sets_one_building_per_model ON vector_sets (model_id) WHERE state = 'building';

CREATE TABLE vector_outbox (
    set_id      INTEGER NOT NULL REFERENCES vector_sets (id) ON DELETE CASCADE,
    message_id  INTEGER NOT NULL,               -- messages.id (no foreign key: deletions are recorded here)
    op          INTEGER NOT NULL DEFAULT 0 CHECK (op IN (0, 1)),  -- 0 embed and upsert, 1 delete
    lease_until INTEGER NOT NULL DEFAULT 0,     -- Unix ms; a worker owns the row until then
    PRIMARY KEY (set_id, message_id)
) STRICT, WITHOUT ROWID;

-- Term statistics of the keyword index (read-only view, no storage): the
-- keyword search drops query terms found in a large share of the messages,
-- which add almost nothing to BM25 but make FTS5 score most rows.
CREATE VIRTUAL TABLE messages_fts_vocab USING fts5vocab(messages_fts, 'row');
