-- cairn on PostgreSQL, format 7: breadcrumb marks per repository, as in
-- the embedded store (engine/migrations/0008_breadcrumb_repos.sql).
-- Frozen: change the schema with a new numbered file, never by editing this one.
--
-- repo is the top directory of the repository a message's breadcrumbs
-- were checked in; '' marks a message that recorded no repository and was
-- not found in the one checked at head (no mark). Marks cached before were
-- computed against whichever repository the checking process ran in: the
-- cache is derived data, dropped here and refilled by the next checks.
DELETE FROM breadcrumb_marks;
ALTER TABLE breadcrumb_marks ADD COLUMN repo text NOT NULL DEFAULT '';
DROP INDEX breadcrumb_marks_head;
CREATE INDEX breadcrumb_marks_repo ON breadcrumb_marks (repo, head);
