-- A counter that every change of an entity or an alias raises (added, renamed, deleted, also by a cascade).
-- Recall caches the names it looks for in a question under this counter. The highest id and the alias count
-- it used before could come back to the same pair: a purge deletes the newest entity and the next one gets
-- its id again, so a purged name went on naming the new entity and the new name named nothing.
CREATE TABLE entity_version (
    id       INTEGER PRIMARY KEY CHECK (id = 1),
    version  INTEGER NOT NULL
);
INSERT INTO entity_version (id, version) VALUES (1, 0);

CREATE TRIGGER entities_added AFTER INSERT ON entities
BEGIN UPDATE entity_version SET version = version + 1; END;
CREATE TRIGGER entities_changed AFTER UPDATE ON entities
BEGIN UPDATE entity_version SET version = version + 1; END;
CREATE TRIGGER entities_deleted AFTER DELETE ON entities
BEGIN UPDATE entity_version SET version = version + 1; END;
CREATE TRIGGER entity_aliases_added AFTER INSERT ON entity_aliases
BEGIN UPDATE entity_version SET version = version + 1; END;
CREATE TRIGGER entity_aliases_changed AFTER UPDATE ON entity_aliases
BEGIN UPDATE entity_version SET version = version + 1; END;
CREATE TRIGGER entity_aliases_deleted AFTER DELETE ON entity_aliases
BEGIN UPDATE entity_version SET version = version + 1; END;
