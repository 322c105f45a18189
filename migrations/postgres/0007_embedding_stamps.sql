-- A host may keep a small scope's vectors in memory and rank them itself (store/postgres/held.py). To stay in step
-- with every host's writes it needs to know, cheaply, what changed in a scope since it read it:
-- * each vector row carries a stamp from one sequence, new each time the row is written. Writers run one at a time
--   (the writers' advisory lock), so stamps commit in order: a reader that has seen stamp S has seen every row
--   stamped below it. Rows stored before this step have none; a host reads those when it reads a scope whole.
-- * each (scope, kind) counts the rows that have left it (deleted, or rewritten into another scope); a host reads
--   a scope again whole when that count has moved.
-- The count is kept only on deletes and moves, so the many inserts of a bulk load do not rewrite one row each.
CREATE SEQUENCE embedding_stamps;
ALTER TABLE embeddings ADD COLUMN stamp bigint;
ALTER TABLE embeddings ALTER COLUMN stamp SET DEFAULT nextval('embedding_stamps');
CREATE INDEX embeddings_scope_stamp ON embeddings (scope, kind, stamp);

CREATE FUNCTION bowerbird_embedding_restamped() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.stamp := nextval('embedding_stamps');
    RETURN NEW;
END;
$$;
CREATE TRIGGER embeddings_restamped BEFORE UPDATE ON embeddings
    FOR EACH ROW EXECUTE FUNCTION bowerbird_embedding_restamped();

CREATE TABLE embedding_scopes (
    scope  text   NOT NULL,
    kind   text   NOT NULL,
    gone   bigint NOT NULL,
    PRIMARY KEY (scope, kind)
);

CREATE FUNCTION bowerbird_embeddings_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO embedding_scopes (scope, kind, gone)
    SELECT scope, kind, count(*) FROM old_rows GROUP BY scope, kind
    ON CONFLICT (scope, kind) DO UPDATE SET gone = embedding_scopes.gone + excluded.gone;
    RETURN NULL;
END;
$$;

CREATE FUNCTION bowerbird_embeddings_moved() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO embedding_scopes (scope, kind, gone)
    SELECT o.scope, o.kind, count(*)
    FROM old_rows o
    JOIN new_rows n ON n.kind = o.kind AND n.item_id = o.item_id
    WHERE n.scope <> o.scope
    GROUP BY o.scope, o.kind
    ON CONFLICT (scope, kind) DO UPDATE SET gone = embedding_scopes.gone + excluded.gone;
    RETURN NULL;
END;
$$;

CREATE TRIGGER embeddings_removed AFTER DELETE ON embeddings
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION bowerbird_embeddings_removed();
CREATE TRIGGER embeddings_moved AFTER UPDATE ON embeddings
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION bowerbird_embeddings_moved();
