-- cairn on PostgreSQL, format 2: the agents' read cursors and the
-- breadcrumb marks cache, as in the embedded store.
-- Frozen: change the schema with a new numbered file, never by editing this one.

-- An agent's cursor of one scope: '' (every channel), 'channel:ID' or
-- 'project:P'. Cursors only move forward.
CREATE TABLE read_cursors (
    agent        text NOT NULL,
    scope        text NOT NULL,
    last_read_id bigint NOT NULL CHECK (last_read_id >= 0),
    updated_at   bigint NOT NULL,
    PRIMARY KEY (agent, scope)
);

-- A message's breadcrumbs checked at one git HEAD: the marks (JSON array)
-- and the worst state (0 valid, 1 moved, 2 changed or gone).
CREATE TABLE breadcrumb_marks (
    message_id bigint PRIMARY KEY REFERENCES messages (id) ON DELETE CASCADE,
    head       text NOT NULL,
    worst      integer NOT NULL CHECK (worst BETWEEN 0 AND 2),
    marks      text NOT NULL CHECK (jsonb_typeof(marks::jsonb) = 'array')
);

CREATE INDEX breadcrumb_marks_head ON breadcrumb_marks (head, worst);
