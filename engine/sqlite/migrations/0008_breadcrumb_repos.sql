-- cairn format 8: breadcrumb marks per repository.
-- Frozen: change the schema with a new numbered file, never by editing this one.
--
-- A message's breadcrumbs are checked against the repository they were
-- written in (metadata breadcrumbs_repo, or the one a check adopted the
-- message into), whatever the working directory of the checking process.
-- repo is that repository's top directory; its HEAD at the check is head.
-- repo '' marks a message that recorded no repository and whose
-- breadcrumbs were not found in the repository checked at head: it has
-- no mark. The marks cached before this format were computed against
-- whichever repository the checking process ran in, so they are dropped:
-- the cache is derived data, refilled by the next check in each
-- repository.
DELETE FROM breadcrumb_marks;
ALTER TABLE breadcrumb_marks ADD COLUMN repo TEXT NOT NULL DEFAULT '';
DROP INDEX breadcrumb_marks_head;
CREATE INDEX breadcrumb_marks_repo ON breadcrumb_marks (repo, head);
