-- cairn format 9: a message can supersede an earlier one.
-- Frozen: change the schema with a new numbered file, never by editing this one.
--
-- supersedes is the id of the message this one corrects or replaces
-- (NULL for none). The superseded message leaves search and recall by
-- default and its reads name the message that replaced it (the row whose
-- supersedes is its id). A message is superseded at most once: a later
-- correction supersedes the correction. Deleting the newer message
-- deletes the link with it (the older one is current again); deleting the
-- older one clears the link (SET NULL).
ALTER TABLE messages ADD COLUMN supersedes INTEGER REFERENCES messages(id) ON DELETE SET NULL;
CREATE UNIQUE INDEX messages_supersedes ON messages (supersedes) WHERE supersedes IS NOT NULL;
