-- cairn format 4: an index in exactly the filter-only listing's order (newest, then most confident,
-- then newest id), so a listing reads the first rows of the index instead of sorting the table.
-- Frozen: change the schema with a new numbered file, never by editing this one.
CREATE INDEX messages_recent ON messages (created_at DESC, confidence DESC, id DESC);
