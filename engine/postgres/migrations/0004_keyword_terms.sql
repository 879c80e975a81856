-- cairn on PostgreSQL, format 4: an inverted index of the keyword terms
-- (postings with their frequencies) and per-term document counts, so that
-- a keyword search reads each query term's document frequency instead of
-- counting it, and scores from narrow index rows instead of each
-- message's term arrays.
-- Frozen: change the schema with a new numbered file, never by editing this one.

-- For each stemmed term: how many messages hold it (df, summed over the
-- shards); terms longer than a lexeme (2046 bytes) are left out here and
-- in the postings, as no query term is that long. Writes add to one shard chosen per transaction, so that concurrent
-- writers rarely wait for one another's rows; a shard's df may go
-- negative after deletes, only the sum means something.
CREATE TABLE keyword_terms (
    term    text NOT NULL,
    shard   integer NOT NULL,
    df      bigint NOT NULL,
    PRIMARY KEY (term, shard)
);

INSERT INTO keyword_terms (term, shard, df)
SELECT t.term, 0, count(*)
FROM messages m CROSS JOIN LATERAL unnest(m.terms) AS t(term)
WHERE octet_length(t.term) <= 2046
GROUP BY t.term;

-- One row per (term, message holding it): the term's frequency in the
-- message and the message's length, all a BM25 score needs, read by
-- index-only scans.
CREATE TABLE keyword_postings (
    term       text NOT NULL,
    message_id bigint NOT NULL,
    tf         integer NOT NULL,
    doc_len    integer NOT NULL,
    PRIMARY KEY (term, message_id) INCLUDE (tf, doc_len)
);

INSERT INTO keyword_postings (term, message_id, tf, doc_len)
SELECT t.term, m.id, t.tf, m.doc_len
FROM messages m CROSS JOIN LATERAL unnest(m.terms, m.tfs) AS t(term, tf)
WHERE octet_length(t.term) <= 2046;

-- Inserts are counted by the writer, once per transaction (a row trigger
-- would update a frequent term's row once per message, and PostgreSQL
-- walks every earlier version of that row in the same transaction).
-- Deletes come from several paths and are rare: a statement trigger
-- removes the postings of what each statement deleted and subtracts its
-- counts, in term order (the writers' lock order).
CREATE FUNCTION keyword_terms_forget() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM keyword_postings p
    USING (SELECT gone.id, t.term FROM gone CROSS JOIN LATERAL unnest(gone.terms) AS t(term)) d
    WHERE p.term = d.term AND p.message_id = d.id;
    INSERT INTO keyword_terms (term, shard, df)
    SELECT t.term, floor(random() * 16)::integer, -count(*)
    FROM gone CROSS JOIN LATERAL unnest(gone.terms) AS t(term)
    WHERE octet_length(t.term) <= 2046
    GROUP BY t.term ORDER BY t.term
    ON CONFLICT (term, shard) DO UPDATE SET df = keyword_terms.df + excluded.df;
    RETURN NULL;
END $$;

CREATE TRIGGER messages_keyword_terms AFTER DELETE ON messages
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION keyword_terms_forget();
