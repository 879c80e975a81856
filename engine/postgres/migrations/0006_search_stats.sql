-- cairn on PostgreSQL, format 6: search counts of every process, for
-- cairn stats (the data dir's search_stats row). Split over shards, as
-- keyword_stats, so that processes adding their counts rarely wait for
-- one another's row.
-- Frozen: change the schema with a new numbered file, never by editing this one.

CREATE TABLE search_stats (
    shard    integer PRIMARY KEY,
    searches bigint NOT NULL DEFAULT 0,
    total_us bigint NOT NULL DEFAULT 0
);
INSERT INTO search_stats (shard) SELECT generate_series(0, 15);
