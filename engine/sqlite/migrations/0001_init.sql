-- cairn format 1: channels, agents, messages and the FTS5 keyword index.
-- Frozen: change the schema with a new numbered file, never by editing this one.

CREATE TABLE channels (
    id                     TEXT PRIMARY KEY,
    channel_type           TEXT NOT NULL CHECK (channel_type IN ('agent-notes', 'project', 'channel')),
    name                   TEXT NOT NULL,
    description            TEXT NOT NULL DEFAULT '',
    owner_agent_name       TEXT NOT NULL DEFAULT '',
    owner_agent_project_id TEXT NOT NULL DEFAULT '',
    project_id             TEXT NOT NULL DEFAULT '',
    message_count          INTEGER NOT NULL DEFAULT 0,
    last_message_at        INTEGER NOT NULL DEFAULT 0,
    created_at             INTEGER NOT NULL
) STRICT;

CREATE INDEX channels_project ON channels (project_id) WHERE project_id <> '';

CREATE TABLE agents (
    name          TEXT NOT NULL,
    project_id    TEXT NOT NULL DEFAULT '',
    description   TEXT NOT NULL DEFAULT '',
    message_count INTEGER NOT NULL DEFAULT 0,
    created_at    INTEGER NOT NULL,
    last_active   INTEGER NOT NULL,
    PRIMARY KEY (name, project_id)
) STRICT, WITHOUT ROWID;

CREATE TABLE messages (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    channel_id        TEXT NOT NULL REFERENCES channels (id),
    sender_id         TEXT NOT NULL,
    sender_project_id TEXT NOT NULL DEFAULT '',
    content           TEXT NOT NULL CHECK (length(content) > 0),
    content_hash      TEXT NOT NULL,
    confidence        REAL NOT NULL DEFAULT 0.5 CHECK (confidence >= 0.0 AND confidence <= 1.0),
    message_type      TEXT NOT NULL DEFAULT 'message',
    metadata          TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(metadata) AND json_type(metadata) = 'object'),
    mentions          TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(mentions) AND json_type(mentions) = 'array'),
    word_count        INTEGER NOT NULL DEFAULT 0,
    has_breadcrumbs   INTEGER NOT NULL DEFAULT 0 CHECK (has_breadcrumbs IN (0, 1)),
    created_at        INTEGER NOT NULL
) STRICT;

CREATE INDEX messages_channel_time ON messages (channel_id, created_at DESC);
CREATE INDEX messages_confidence   ON messages (confidence DESC);
CREATE INDEX messages_sender_time  ON messages (sender_id, created_at DESC);
CREATE INDEX messages_time         ON messages (created_at DESC);
-- Idempotent writes: one row per (content, channel, sender); also the content_hash lookup index.
CREATE UNIQUE INDEX messages_content_hash ON messages (content_hash, channel_id, sender_id);

CREATE VIRTUAL TABLE messages_fts USING fts5(content, content='messages', content_rowid='id', tokenize='porter unicode61');
