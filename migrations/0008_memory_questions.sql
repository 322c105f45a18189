-- The questions a user would ask to get a memory back, in the user's voice ("who do I report to?"), written at
-- curation by the language model or by the rules of curation/questions.py. Each has a vector of its own (kind
-- 'question' in embeddings): a question asked later is matched to these, which a sentence model does far better
-- than matching it to the statement. A memory's questions go with it when it is purged.
CREATE TABLE memory_questions (
    id          INTEGER PRIMARY KEY,
    memory_id   INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    text        TEXT    NOT NULL CHECK (length(text) > 0),
    origin      TEXT    NOT NULL CHECK (origin IN ('model', 'rules')),
    created_at  REAL    NOT NULL,
    UNIQUE (memory_id, text)
);

-- The vectors table names the kinds it holds; a table cannot change its CHECK in place, so it is made again with
-- the new kind and its rows copied (no trigger or key refers to it).
CREATE TABLE embeddings_next (
    kind     TEXT    NOT NULL CHECK (kind IN ('memory', 'episode', 'question')),
    item_id  INTEGER NOT NULL,
    model    TEXT    NOT NULL,
    dim      INTEGER NOT NULL,
    vector   BLOB    NOT NULL,
    PRIMARY KEY (kind, item_id)
) WITHOUT ROWID;

INSERT INTO embeddings_next (kind, item_id, model, dim, vector)
SELECT kind, item_id, model, dim, vector FROM embeddings;

DROP TABLE embeddings;

ALTER TABLE embeddings_next RENAME TO embeddings;

CREATE INDEX embeddings_model ON embeddings (model, kind);
