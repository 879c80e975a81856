-- cairn on PostgreSQL, format 8: a message can supersede an earlier one,
-- as in the embedded store (engine/migrations/0009_supersedes.sql).
-- Frozen: change the schema with a new numbered file, never by editing this one.
--
-- supersedes is the id of the message this one replaces (NULL for none);
-- a message is superseded at most once. Deleting the newer message deletes
-- the link with it; deleting the older one clears it.
ALTER TABLE messages ADD COLUMN supersedes bigint REFERENCES messages (id) ON DELETE SET NULL;
CREATE UNIQUE INDEX messages_supersedes ON messages (supersedes) WHERE supersedes IS NOT NULL;
