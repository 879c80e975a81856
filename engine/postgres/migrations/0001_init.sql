-- cairn on PostgreSQL, format 1: channels, agents, messages with their
-- keyword terms, vector sets and the vector outbox.
-- Frozen: change the schema with a new numbered file, never by editing this one.

CREATE TABLE channels (
    id                     text PRIMARY KEY,
    channel_type           text NOT NULL CHECK (channel_type IN ('agent-notes', 'project', 'channel')),
    name                   text NOT NULL,
    description            text NOT NULL DEFAULT '',
    owner_agent_name       text NOT NULL DEFAULT '',
    owner_agent_project_id text NOT NULL DEFAULT '',
    project_id             text NOT NULL DEFAULT '',
    message_count          bigint NOT NULL DEFAULT 0,
    last_message_at        bigint NOT NULL DEFAULT 0,
    created_at             bigint NOT NULL
);

CREATE INDEX channels_project ON channels (project_id) WHERE project_id <> '';

CREATE TABLE agents (
    name          text NOT NULL,
    project_id    text NOT NULL DEFAULT '',
    description   text NOT NULL DEFAULT '',
    message_count bigint NOT NULL DEFAULT 0,
    created_at    bigint NOT NULL,
    last_active   bigint NOT NULL,
    PRIMARY KEY (name, project_id)
);

CREATE INDEX agents_lower_name ON agents (lower(name));

-- Ids come from an identity sequence: unique across processes, never
-- reused (a rolled-back insert leaves a gap, as SQLite's AUTOINCREMENT
-- never reuses a deleted id).
CREATE TABLE messages (
    id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    channel_id        text NOT NULL REFERENCES channels (id),
    -- the channel's type (it never changes), kept here for filters
    channel_type      text NOT NULL,
    sender_id         text NOT NULL,
    sender_project_id text NOT NULL DEFAULT '',
    content           text NOT NULL CHECK (length(content) > 0),
    content_hash      text NOT NULL,
    confidence        double precision NOT NULL DEFAULT 0.5 CHECK (confidence >= 0.0 AND confidence <= 1.0),
    message_type      text NOT NULL DEFAULT 'message',
    -- kept as written (text), checked as JSON
    metadata          text NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(metadata::jsonb) = 'object'),
    mentions          text NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(mentions::jsonb) = 'array'),
    word_count        integer NOT NULL DEFAULT 0,
    has_breadcrumbs   boolean NOT NULL DEFAULT false,
    created_at        bigint NOT NULL,
    -- BM25 inputs: the distinct stemmed terms (cairn's 'porter unicode61'
    -- tokenizer, run in the cairn process), their frequencies, the length
    -- in tokens, and the terms as a tsvector for the GIN index.
    terms             text[] NOT NULL,
    tfs               integer[] NOT NULL,
    doc_len           integer NOT NULL,
    tsv               tsvector NOT NULL
);

CREATE INDEX messages_channel_time ON messages (channel_id, created_at DESC);
CREATE INDEX messages_sender_time  ON messages (sender_id, created_at DESC);
CREATE INDEX messages_time         ON messages (created_at DESC);
-- Idempotent writes: one row per (content, channel, sender).
CREATE UNIQUE INDEX messages_content_hash ON messages (content_hash, channel_id, sender_id);
CREATE INDEX messages_tsv ON messages USING gin (tsv);

-- Document count and token total for BM25, split over shards so that
-- concurrent writers rarely wait for one another's row.
CREATE TABLE keyword_stats (
    shard  integer PRIMARY KEY,
    docs   bigint NOT NULL DEFAULT 0,
    tokens bigint NOT NULL DEFAULT 0
);
INSERT INTO keyword_stats (shard) SELECT generate_series(0, 15);

-- A vector set is the vectors of one embedding model (model_id, dim),
-- kept in the table vectors_{id} with an HNSW index (cosine).
CREATE TABLE vector_sets (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    model_id     text NOT NULL CHECK (length(model_id) > 0),
    dim          integer NOT NULL CHECK (dim > 0),
    state        text NOT NULL CHECK (state IN ('building', 'active', 'retired')),
    created_at   bigint NOT NULL,
    activated_at bigint NOT NULL DEFAULT 0
);

-- For every live set and message exactly one of: an outbox row, or a row
-- in vectors_{set}. Both go with the message (ON DELETE CASCADE).
CREATE TABLE vector_outbox (
    set_id      bigint NOT NULL REFERENCES vector_sets (id) ON DELETE CASCADE,
    message_id  bigint NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
    lease_until bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (set_id, message_id)
);

CREATE INDEX vector_outbox_message ON vector_outbox (message_id);
