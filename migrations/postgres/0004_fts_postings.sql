-- Each row's lexemes with how often each column holds them, beside the row's scope: what FTS5 keeps in its own
-- index. A query's words are looked up here for the scopes searched only (never another user's rows), and bm25 is
-- summed from the counts without opening any row's tsvector. Kept by statement triggers from the rows' tsvectors
-- (hits_a/b/c count the positions labelled A, B, C: a memory's content, summary, tags; an episode's text).
CREATE TABLE fts_postings (
    tbl      text    NOT NULL,
    lexeme   text    NOT NULL,
    scope    text    NOT NULL,
    item_id  bigint  NOT NULL,
    hits_a   integer NOT NULL,
    hits_b   integer NOT NULL,
    hits_c   integer NOT NULL,
    PRIMARY KEY (tbl, lexeme, scope, item_id) INCLUDE (hits_a, hits_b, hits_c)
);
CREATE INDEX fts_postings_item ON fts_postings (tbl, item_id);

CREATE FUNCTION bowerbird_fts_postings(of_table text, of_scope text, of_id bigint, fts tsvector)
RETURNS TABLE (tbl text, lexeme text, scope text, item_id bigint, hits_a integer, hits_b integer, hits_c integer)
LANGUAGE sql IMMUTABLE AS $$
    SELECT of_table, u.lexeme, of_scope, of_id,
           coalesce(cardinality(array_positions(u.weights, 'A')), 0),
           coalesce(cardinality(array_positions(u.weights, 'B')), 0),
           coalesce(cardinality(array_positions(u.weights, 'C')), 0)
    FROM unnest(fts) AS u
$$;

INSERT INTO fts_postings
SELECT p.* FROM memories m, bowerbird_fts_postings('memories', m.scope, m.id, m.fts) AS p;
INSERT INTO fts_postings
SELECT p.* FROM episodes e, bowerbird_fts_postings('episodes', e.scope, e.id, e.fts) AS p;

CREATE FUNCTION bowerbird_fts_postings_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO fts_postings
    SELECT p.* FROM new_rows n, bowerbird_fts_postings(TG_TABLE_NAME, n.scope, n.id, n.fts) AS p;
    RETURN NULL;
END;
$$;

CREATE FUNCTION bowerbird_fts_postings_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM fts_postings p USING old_rows o WHERE p.tbl = TG_TABLE_NAME AND p.item_id = o.id;
    RETURN NULL;
END;
$$;

CREATE FUNCTION bowerbird_fts_postings_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM fts_postings p
    USING old_rows o JOIN new_rows n ON n.id = o.id
    WHERE (o.fts, o.scope) IS DISTINCT FROM (n.fts, n.scope) AND p.tbl = TG_TABLE_NAME AND p.item_id = o.id;
    INSERT INTO fts_postings
    SELECT p.*
    FROM old_rows o
    JOIN new_rows n ON n.id = o.id,
    bowerbird_fts_postings(TG_TABLE_NAME, n.scope, n.id, n.fts) AS p
    WHERE (o.fts, o.scope) IS DISTINCT FROM (n.fts, n.scope);
    RETURN NULL;
END;
$$;

CREATE TRIGGER memories_fts_postings_added AFTER INSERT ON memories
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bowerbird_fts_postings_added();
CREATE TRIGGER memories_fts_postings_removed AFTER DELETE ON memories
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION bowerbird_fts_postings_removed();
CREATE TRIGGER memories_fts_postings_changed AFTER UPDATE ON memories
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION bowerbird_fts_postings_changed();
CREATE TRIGGER episodes_fts_postings_added AFTER INSERT ON episodes
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bowerbird_fts_postings_added();
CREATE TRIGGER episodes_fts_postings_removed AFTER DELETE ON episodes
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION bowerbird_fts_postings_removed();
CREATE TRIGGER episodes_fts_postings_changed AFTER UPDATE ON episodes
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION bowerbird_fts_postings_changed();
