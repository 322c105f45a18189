-- Each posting carries its row's token count, so bm25 is summed from the postings alone: the rows a query's words
-- occur in are no longer each opened for their length (a thousand heap reads for a common word at 100K memories),
-- only the best few are, to see that they are live. Rebuilt from the rows' tsvectors.
TRUNCATE fts_postings;
ALTER TABLE fts_postings ADD COLUMN fts_len integer NOT NULL;
ALTER TABLE fts_postings DROP CONSTRAINT fts_postings_pkey;
ALTER TABLE fts_postings ADD PRIMARY KEY (tbl, lexeme, scope, item_id) INCLUDE (hits_a, hits_b, hits_c, fts_len);

DROP FUNCTION bowerbird_fts_postings(text, text, bigint, tsvector);
CREATE FUNCTION bowerbird_fts_postings(of_table text, of_scope text, of_id bigint, fts tsvector, fts_len integer)
RETURNS TABLE (
    tbl text, lexeme text, scope text, item_id bigint, hits_a integer, hits_b integer, hits_c integer,
    fts_len integer
)
LANGUAGE sql IMMUTABLE AS $$
    SELECT of_table, u.lexeme, of_scope, of_id,
           coalesce(cardinality(array_positions(u.weights, 'A')), 0),
           coalesce(cardinality(array_positions(u.weights, 'B')), 0),
           coalesce(cardinality(array_positions(u.weights, 'C')), 0),
           coalesce(fts_len, 0)
    FROM unnest(fts) AS u
$$;

INSERT INTO fts_postings
SELECT p.* FROM memories m, bowerbird_fts_postings('memories', m.scope, m.id, m.fts, m.fts_len) AS p;
INSERT INTO fts_postings
SELECT p.* FROM episodes e, bowerbird_fts_postings('episodes', e.scope, e.id, e.fts, e.fts_len) AS p;

CREATE OR REPLACE FUNCTION bowerbird_fts_postings_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO fts_postings
    SELECT p.* FROM new_rows n, bowerbird_fts_postings(TG_TABLE_NAME, n.scope, n.id, n.fts, n.fts_len) AS p;
    RETURN NULL;
END;
$$;

CREATE OR REPLACE FUNCTION bowerbird_fts_postings_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM fts_postings p
    USING old_rows o JOIN new_rows n ON n.id = o.id
    WHERE (o.fts, o.fts_len, o.scope) IS DISTINCT FROM (n.fts, n.fts_len, n.scope)
      AND p.tbl = TG_TABLE_NAME AND p.item_id = o.id;
    INSERT INTO fts_postings
    SELECT p.*
    FROM old_rows o
    JOIN new_rows n ON n.id = o.id,
    bowerbird_fts_postings(TG_TABLE_NAME, n.scope, n.id, n.fts, n.fts_len) AS p
    WHERE (o.fts, o.fts_len, o.scope) IS DISTINCT FROM (n.fts, n.fts_len, n.scope);
    RETURN NULL;
END;
$$;
