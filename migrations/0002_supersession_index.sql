-- Deleting or re-pointing a memory makes SQLite look up rows that reference it through superseded_by;
-- without an index that is a full scan per purged memory.
CREATE INDEX memories_superseded ON memories (superseded_by) WHERE superseded_by IS NOT NULL;
