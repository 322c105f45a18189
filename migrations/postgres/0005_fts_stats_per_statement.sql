-- fts_stats (each table's row and token totals) is kept per statement rather than per row: a row trigger updates
-- the one totals row once per row written, and many rows written in one transaction (a bulk load, a store
-- copy) leave that row a chain of versions each update has to walk, so a load took time quadratic in its size.
-- A statement that changes no totals (access counts, importance) writes nothing.
DROP TRIGGER memories_fts_counted ON memories;
DROP TRIGGER episodes_fts_counted ON episodes;
DROP FUNCTION bowerbird_fts_counted();

CREATE FUNCTION bowerbird_fts_counted_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE fts_stats
    SET rows = fts_stats.rows + added.n, tokens = fts_stats.tokens + added.tokens
    FROM (SELECT count(*) AS n, coalesce(sum(fts_len), 0) AS tokens FROM new_rows) added
    WHERE fts_stats.tbl = TG_TABLE_NAME AND added.n > 0;
    RETURN NULL;
END;
$$;

CREATE FUNCTION bowerbird_fts_counted_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE fts_stats
    SET rows = fts_stats.rows - gone.n, tokens = fts_stats.tokens - gone.tokens
    FROM (SELECT count(*) AS n, coalesce(sum(fts_len), 0) AS tokens FROM old_rows) gone
    WHERE fts_stats.tbl = TG_TABLE_NAME AND gone.n > 0;
    RETURN NULL;
END;
$$;

CREATE FUNCTION bowerbird_fts_counted_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE fts_stats
    SET tokens = fts_stats.tokens + delta.tokens
    FROM (
        SELECT coalesce(sum(n.fts_len - o.fts_len), 0) AS tokens
        FROM old_rows o
        JOIN new_rows n ON n.id = o.id
    ) delta
    WHERE fts_stats.tbl = TG_TABLE_NAME AND delta.tokens <> 0;
    RETURN NULL;
END;
$$;

CREATE TRIGGER memories_fts_counted_added AFTER INSERT ON memories
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bowerbird_fts_counted_added();
CREATE TRIGGER memories_fts_counted_removed AFTER DELETE ON memories
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION bowerbird_fts_counted_removed();
CREATE TRIGGER memories_fts_counted_changed AFTER UPDATE ON memories
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION bowerbird_fts_counted_changed();
CREATE TRIGGER episodes_fts_counted_added AFTER INSERT ON episodes
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bowerbird_fts_counted_added();
CREATE TRIGGER episodes_fts_counted_removed AFTER DELETE ON episodes
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION bowerbird_fts_counted_removed();
CREATE TRIGGER episodes_fts_counted_changed AFTER UPDATE ON episodes
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION bowerbird_fts_counted_changed();
