-- The memory types are defined by one table in the code (hermes_bowerbird/types.py), not by the schema:
-- the CHECK listing them on memories.type goes, so a new type needs no migration. Every connection the
-- store opens adds temporary triggers built from that table that refuse any other type (store/memories.py).
--
-- SQLite cannot drop a CHECK in place, and rebuilding the table would also rebuild its keys, triggers and
-- full-text index (and a DROP TABLE fires the ON DELETE CASCADE of every table that references it). The
-- documented way to remove a CHECK constraint is to edit the table's stored SQL under writable_schema: the
-- file format does not change. RESET reloads this connection's schema; the table made and dropped after it
-- changes the schema version, so other open connections reload it too.

PRAGMA writable_schema = ON;

UPDATE sqlite_master
SET sql = replace(sql, ' CHECK (type IN (''identity'', ''goal'', ''decision'', ''todo'',
                       ''procedure'', ''preference'', ''fact'', ''pattern'', ''event'', ''observation''))', '')
WHERE type = 'table' AND name = 'memories';

PRAGMA writable_schema = RESET;

CREATE TABLE schema_reload (x INTEGER);

DROP TABLE schema_reload;

-- A file whose CHECK was written differently would keep it: fail this step (it rolls back) rather than
-- record it as done.
CREATE TEMP TABLE memories_type_check (left_in_schema INTEGER NOT NULL CHECK (left_in_schema = 0));

INSERT INTO memories_type_check
SELECT instr(sql, 'CHECK (type IN') FROM sqlite_master WHERE type = 'table' AND name = 'memories';

DROP TABLE memories_type_check;
