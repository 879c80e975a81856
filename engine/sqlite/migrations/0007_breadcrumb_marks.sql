-- cairn format 7: the breadcrumb marks cache.
-- Frozen: change the schema with a new numbered file, never by editing this one.
--
-- What a check of a message's breadcrumbs against a git repository found,
-- at the repository's HEAD commit head. Reads attach the marks only while
-- head is still the repository's HEAD; a check at a newer HEAD replaces
-- the row. worst is the worst state of the message's breadcrumbs: 0 all
-- valid (or checked for form only), 1 moved, 2 changed or gone. marks is a
-- JSON array of {kind, ref, state, moved_to?, reason?}. A message's row
-- goes with the message.
CREATE TABLE breadcrumb_marks (
    message_id INTEGER PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,
    head       TEXT NOT NULL,
    worst      INTEGER NOT NULL CHECK (worst BETWEEN 0 AND 2),
    marks      TEXT NOT NULL
) STRICT;

CREATE INDEX breadcrumb_marks_head ON breadcrumb_marks (head, worst);
