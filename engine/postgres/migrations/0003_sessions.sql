-- cairn on PostgreSQL, format 3: imported Claude Code sessions, as in the
-- embedded store (its migrations/0002_sessions.sql): sessions, their
-- records, each distinct content once, the chunks of a content stored as
-- searchable messages, and where each file's import stopped.
-- Frozen: change the schema with a new numbered file, never by editing this one.

CREATE TABLE sessions (
    id            text PRIMARY KEY,
    source        text NOT NULL DEFAULT 'claude-code',
    project       text NOT NULL DEFAULT '',
    cwd           text NOT NULL DEFAULT '',
    git_branch    text NOT NULL DEFAULT '',
    message_count integer NOT NULL DEFAULT 0,
    first_at      bigint NOT NULL DEFAULT 0,
    last_at       bigint NOT NULL DEFAULT 0,
    imported_at   bigint NOT NULL,
    updated_at    bigint NOT NULL
);

CREATE INDEX sessions_project ON sessions (project, last_at DESC);

CREATE TABLE session_contents (
    hash    text PRIMARY KEY,
    content text NOT NULL,
    text    text NOT NULL,
    tokens  integer NOT NULL
);

CREATE TABLE session_messages (
    session_id   text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    seq          integer NOT NULL,
    key          text NOT NULL,
    uuid         text NOT NULL DEFAULT '',
    parent_uuid  text NOT NULL DEFAULT '',
    type         text NOT NULL,
    role         text NOT NULL,
    created_at   bigint NOT NULL DEFAULT 0,
    is_sidechain boolean NOT NULL DEFAULT false,
    is_compact   boolean NOT NULL DEFAULT false,
    content_hash text REFERENCES session_contents (hash),
    -- json, not jsonb: a record may hold \u0000, which jsonb refuses
    envelope     text NOT NULL CHECK (json_typeof(envelope::json) = 'object'),
    PRIMARY KEY (session_id, seq),
    UNIQUE (session_id, key)
);

CREATE INDEX session_messages_content ON session_messages (content_hash);

CREATE TABLE session_chunks (
    content_hash text NOT NULL REFERENCES session_contents (hash) ON DELETE CASCADE,
    idx          integer NOT NULL,
    start_byte   integer NOT NULL,
    end_byte     integer NOT NULL,
    tokens       integer NOT NULL,
    message_id   bigint REFERENCES messages (id) ON DELETE SET NULL,
    PRIMARY KEY (content_hash, idx)
);

CREATE INDEX session_chunks_message ON session_chunks (message_id);

CREATE TABLE session_files (
    path        text PRIMARY KEY,
    end_offset  bigint NOT NULL,
    lines       integer NOT NULL,
    head_sha256 text NOT NULL,
    imported_at bigint NOT NULL
);
