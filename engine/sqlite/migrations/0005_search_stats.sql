-- Search counters for `cairn stats` (average search time): one row, added
-- to by every process when it flushes its own counts.
CREATE TABLE search_stats (
	id       INTEGER PRIMARY KEY CHECK (id = 1),
	searches INTEGER NOT NULL,
	total_us INTEGER NOT NULL
) STRICT;
INSERT INTO search_stats (id, searches, total_us) VALUES (1, 0, 0);
