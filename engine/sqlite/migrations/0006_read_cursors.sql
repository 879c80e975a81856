-- cairn format 6: read cursors, what each agent has read.
-- Frozen: change the schema with a new numbered file, never by editing this one.
--
-- A cursor says agent has read every message of its scope with an id up to
-- last_read_id. scope is '' (everything), 'channel:{channel id}' or
-- 'project:{project id}' (the channels whose project_id is that project).
-- A message is read by an agent when its id is at most the largest cursor
-- of the scopes it falls in. Message ids are AUTOINCREMENT, assigned under
-- SQLite's single write lock, so they grow in commit order and are never
-- reused: a cursor can never pass over a message committed after it.
CREATE TABLE read_cursors (
    agent        TEXT NOT NULL,
    scope        TEXT NOT NULL,
    last_read_id INTEGER NOT NULL CHECK (last_read_id >= 0),
    updated_at   INTEGER NOT NULL,                -- Unix ms
    PRIMARY KEY (agent, scope)
) STRICT, WITHOUT ROWID;
