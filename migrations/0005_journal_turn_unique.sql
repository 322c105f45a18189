-- One journal row per (session, turn index): concurrent writers of one session each get their own index.
-- Older files may hold clashes (two writers counted from the same number and the later turn's episodes were
-- dropped as duplicates). Each clashing row after the first moves to the end of its session; a moved row that
-- was already curated loses its partial episodes and is curated again at its new index.
-- Failed rows are never given up on: they go back to pending and are retried with a growing pause (retry_at).

ALTER TABLE journal ADD COLUMN retry_at REAL;

CREATE TEMP TABLE journal_moves AS
SELECT j.id AS id,
       (SELECT max(m.turn_index) FROM journal m WHERE m.session_id = j.session_id)
         + row_number() OVER (PARTITION BY j.session_id ORDER BY j.id) AS turn_index
FROM journal j
WHERE EXISTS (SELECT 1 FROM journal k
              WHERE k.session_id = j.session_id AND k.turn_index = j.turn_index AND k.id < j.id);

DELETE FROM embeddings WHERE kind = 'episode' AND item_id IN
    (SELECT id FROM episodes WHERE journal_id IN (SELECT id FROM journal_moves));

DELETE FROM episodes WHERE journal_id IN (SELECT id FROM journal_moves);

UPDATE journal
SET turn_index = (SELECT mv.turn_index FROM journal_moves mv WHERE mv.id = journal.id),
    status = 'pending',
    processed_at = NULL
WHERE id IN (SELECT id FROM journal_moves);

DROP TABLE journal_moves;

UPDATE journal SET status = 'pending' WHERE status = 'failed';

DROP INDEX journal_session;

CREATE UNIQUE INDEX journal_session_turn ON journal (session_id, turn_index);
