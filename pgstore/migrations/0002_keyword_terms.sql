-- cairn on PostgreSQL, format 2: per-term keyword statistics, so that a
-- keyword search reads each query term's document frequency instead of
-- counting it, and bounds the term's BM25 contribution (top-k pruning).
-- Frozen: change the schema with a new numbered file, never by editing this one.

-- For each stemmed term: how many messages hold it (df, summed over the
-- shards), the largest frequency it has in one message (max_tf) and the
-- shortest message holding it (min_len). max_tf and min_len are bounds:
-- a delete leaves them as they were, so they stay valid but may loosen.
-- Writes add to one shard chosen per transaction, so that concurrent
-- writers rarely wait for one another's rows; a shard's df may go
-- negative after deletes, only the sum means something.
CREATE TABLE keyword_terms (
    term    text NOT NULL,
    shard   integer NOT NULL,
    df      bigint NOT NULL,
    max_tf  integer NOT NULL,
    min_len integer NOT NULL,
    PRIMARY KEY (term, shard)
);

INSERT INTO keyword_terms (term, shard, df, max_tf, min_len)
SELECT t.term, 0, count(*), max(t.tf), min(m.doc_len)
FROM messages m CROSS JOIN LATERAL unnest(m.terms, m.tfs) AS t(term, tf)
GROUP BY t.term;

-- Inserts are counted by the writer, once per transaction (a row trigger
-- would update a frequent term's row once per message, and PostgreSQL
-- walks every earlier version of that row in the same transaction).
-- Deletes come from several paths and are rare: a statement trigger
-- subtracts what each statement deleted, in term order (the writers'
-- lock order).
CREATE FUNCTION keyword_terms_forget() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO keyword_terms (term, shard, df, max_tf, min_len)
    SELECT t.term, floor(random() * 16)::integer, -count(*), 0, 2147483647
    FROM gone CROSS JOIN LATERAL unnest(gone.terms) AS t(term)
    GROUP BY t.term ORDER BY t.term
    ON CONFLICT (term, shard) DO UPDATE SET df = keyword_terms.df + excluded.df;
    RETURN NULL;
END $$;

CREATE TRIGGER messages_keyword_terms AFTER DELETE ON messages
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION keyword_terms_forget();
