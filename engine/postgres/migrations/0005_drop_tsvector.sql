-- cairn on PostgreSQL, format 5: keyword search reads keyword_postings and
-- keyword_terms (format 4), so the messages' tsvector and its GIN index,
-- which every write kept and nothing read any more, go.
-- Frozen: change the schema with a new numbered file, never by editing this one.

DROP INDEX messages_tsv;
ALTER TABLE messages DROP COLUMN tsv;
