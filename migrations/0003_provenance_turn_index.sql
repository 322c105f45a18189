-- Recall looks up which memories were extracted from a candidate episode's turn (to demote the turns that
-- stated a superseded fact); without an index that is a scan of every memory in scope per episode.
CREATE INDEX memory_provenance_turn ON memory_provenance (session_id, turn_index);
