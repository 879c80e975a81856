-- cairn format 2: imported agent sessions.
-- Frozen: change the schema with a new numbered file, never by editing this one.
--
-- A session's records are rows of session_messages in file order (seq). The
-- record's content (Claude Code's message.content) is stored once per
-- distinct value in session_contents, keyed by the SHA-256 of its canonical
-- JSON, and referenced from every session that contains it. Its searchable
-- text is split into chunks; each chunk is an ordinary message (channel
-- 'claude-code', so it is in FTS5 and gets a vector like any message) and
-- session_chunks maps it back to the content and so to every session record
-- holding it.

CREATE TABLE sessions (
    id            TEXT PRIMARY KEY,               -- session UUID, lower case
    source        TEXT NOT NULL DEFAULT 'claude-code',
    project       TEXT NOT NULL DEFAULT '',       -- Claude Code project folder name
    cwd           TEXT NOT NULL DEFAULT '',
    git_branch    TEXT NOT NULL DEFAULT '',
    message_count INTEGER NOT NULL DEFAULT 0,
    first_at      INTEGER NOT NULL DEFAULT 0,     -- Unix ms of the first timestamped record
    last_at       INTEGER NOT NULL DEFAULT 0,
    imported_at   INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL
) STRICT;

CREATE INDEX sessions_project ON sessions (project, last_at DESC);

CREATE TABLE session_contents (
    hash    TEXT PRIMARY KEY,                     -- hex SHA-256 of content
    content TEXT NOT NULL,                        -- canonical JSON (string or array of blocks)
    text    TEXT NOT NULL,                        -- extracted searchable text
    tokens  INTEGER NOT NULL                      -- token estimate of text (engine/chunk)
) STRICT;

CREATE TABLE session_messages (
    session_id   TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    seq          INTEGER NOT NULL,                -- 1-based order of import (file order)
    key          TEXT NOT NULL,                   -- uuid, or summary:<hash> for summary records
    uuid         TEXT NOT NULL DEFAULT '',
    parent_uuid  TEXT NOT NULL DEFAULT '',
    type         TEXT NOT NULL,                   -- user, assistant, system, summary
    role         TEXT NOT NULL,
    created_at   INTEGER NOT NULL DEFAULT 0,      -- Unix ms; 0 for summary records
    is_sidechain INTEGER NOT NULL DEFAULT 0 CHECK (is_sidechain IN (0, 1)),
    is_compact   INTEGER NOT NULL DEFAULT 0 CHECK (is_compact IN (0, 1)),
    content_hash TEXT REFERENCES session_contents (hash),
    envelope     TEXT NOT NULL CHECK (json_valid(envelope)),  -- canonical record without its content
    PRIMARY KEY (session_id, seq),
    UNIQUE (session_id, key)
) STRICT;

CREATE INDEX session_messages_content ON session_messages (content_hash);

CREATE TABLE session_chunks (
    content_hash TEXT NOT NULL REFERENCES session_contents (hash) ON DELETE CASCADE,
    idx          INTEGER NOT NULL,
    start_byte   INTEGER NOT NULL,                -- text[start_byte:end_byte]
    end_byte     INTEGER NOT NULL,
    tokens       INTEGER NOT NULL,
    message_id   INTEGER REFERENCES messages (id) ON DELETE SET NULL,
    PRIMARY KEY (content_hash, idx)
) STRICT, WITHOUT ROWID;

CREATE INDEX session_chunks_message ON session_chunks (message_id);

-- Where an incremental import resumes: one row per imported file.
CREATE TABLE session_files (
    path        TEXT PRIMARY KEY,                 -- absolute path at import time
    end_offset  INTEGER NOT NULL,                 -- bytes consumed (complete lines)
    lines       INTEGER NOT NULL,                 -- lines consumed
    head_sha256 TEXT NOT NULL,                    -- SHA-256 of the first min(end_offset, 64 KiB) bytes
    imported_at INTEGER NOT NULL
) STRICT;
