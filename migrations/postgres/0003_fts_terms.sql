-- How many rows of each table hold each lexeme: FTS5's document frequency, which a query word's idf needs. Kept
-- exact by statement triggers as rows come, go or get a new tsvector, so a search reads one indexed row per word
-- instead of counting every row that holds it (thousands for a common word). A lexeme no row holds any more
-- stays with 0.
CREATE TABLE fts_terms (
    tbl     text   NOT NULL,
    lexeme  text   NOT NULL,
    rows    bigint NOT NULL,
    PRIMARY KEY (tbl, lexeme)
);

INSERT INTO fts_terms (tbl, lexeme, rows)
SELECT 'memories', lexeme, count(*)
FROM memories, unnest(tsvector_to_array(fts)) AS lexeme
GROUP BY lexeme;

INSERT INTO fts_terms (tbl, lexeme, rows)
SELECT 'episodes', lexeme, count(*)
FROM episodes, unnest(tsvector_to_array(fts)) AS lexeme
GROUP BY lexeme;

-- new_rows / old_rows are the statement's transition tables; lexemes are taken in order so that two writers
-- lock the rows they share in the same order
CREATE FUNCTION bowerbird_fts_terms_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO fts_terms (tbl, lexeme, rows)
    SELECT TG_TABLE_NAME, lexeme, count(*)
    FROM new_rows, unnest(tsvector_to_array(new_rows.fts)) AS lexeme
    GROUP BY lexeme
    ORDER BY lexeme
    ON CONFLICT (tbl, lexeme) DO UPDATE SET rows = fts_terms.rows + excluded.rows;
    RETURN NULL;
END;
$$;

CREATE FUNCTION bowerbird_fts_terms_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE fts_terms t
    SET rows = t.rows - gone.n
    FROM (
        SELECT lexeme, count(*) AS n
        FROM old_rows, unnest(tsvector_to_array(old_rows.fts)) AS lexeme
        GROUP BY lexeme
        ORDER BY lexeme
    ) gone
    WHERE t.tbl = TG_TABLE_NAME AND t.lexeme = gone.lexeme;
    RETURN NULL;
END;
$$;

-- an update changes the counts only where a row's tsvector changed (not for access counts, importance...)
CREATE FUNCTION bowerbird_fts_terms_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    WITH changed AS (
        SELECT o.fts AS before, n.fts AS after
        FROM old_rows o
        JOIN new_rows n ON n.id = o.id
        WHERE o.fts IS DISTINCT FROM n.fts
    ), delta AS (
        SELECT lexeme, sum(n) AS n
        FROM (
            SELECT lexeme, -1 AS n FROM changed, unnest(tsvector_to_array(changed.before)) AS lexeme
            UNION ALL
            SELECT lexeme, 1 AS n FROM changed, unnest(tsvector_to_array(changed.after)) AS lexeme
        ) moves
        GROUP BY lexeme
        HAVING sum(n) <> 0
    )
    INSERT INTO fts_terms (tbl, lexeme, rows)
    SELECT TG_TABLE_NAME, lexeme, n
    FROM delta
    ORDER BY lexeme
    ON CONFLICT (tbl, lexeme) DO UPDATE SET rows = fts_terms.rows + excluded.rows;
    RETURN NULL;
END;
$$;

CREATE TRIGGER memories_fts_terms_added AFTER INSERT ON memories
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bowerbird_fts_terms_added();
CREATE TRIGGER memories_fts_terms_removed AFTER DELETE ON memories
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION bowerbird_fts_terms_removed();
CREATE TRIGGER memories_fts_terms_changed AFTER UPDATE ON memories
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION bowerbird_fts_terms_changed();
CREATE TRIGGER episodes_fts_terms_added AFTER INSERT ON episodes
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bowerbird_fts_terms_added();
CREATE TRIGGER episodes_fts_terms_removed AFTER DELETE ON episodes
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION bowerbird_fts_terms_removed();
CREATE TRIGGER episodes_fts_terms_changed AFTER UPDATE ON episodes
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION bowerbird_fts_terms_changed();
