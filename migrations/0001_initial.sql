-- The whole data model: memories, episodes, entities, edges, vectors, journal, audit, bulletins.
-- Times are Unix epoch seconds (REAL). JSON columns hold text produced by json.dumps.

CREATE TABLE memories (
    id             INTEGER PRIMARY KEY,
    scope          TEXT    NOT NULL,
    type           TEXT    NOT NULL CHECK (type IN ('identity', 'goal', 'decision', 'todo',
                       'procedure', 'preference', 'fact', 'pattern', 'event', 'observation')),
    content        TEXT    NOT NULL CHECK (length(content) > 0),
    summary        TEXT,
    subject        TEXT,
    content_hash   TEXT    NOT NULL,
    importance     REAL    NOT NULL CHECK (importance >= 0 AND importance <= 1),
    confidence     REAL    NOT NULL DEFAULT 1.0 CHECK (confidence >= 0 AND confidence <= 1),
    access_count   INTEGER NOT NULL DEFAULT 0,
    created_at     REAL    NOT NULL,
    updated_at     REAL    NOT NULL,
    accessed_at    REAL,
    valid_from     REAL,
    valid_until    REAL,
    superseded_by  INTEGER REFERENCES memories (id) ON DELETE SET NULL,
    forgotten      INTEGER NOT NULL DEFAULT 0 CHECK (forgotten IN (0, 1)),
    forgotten_at   REAL,
    low_since      REAL,
    source         TEXT    NOT NULL CHECK (source IN ('turn', 'compaction', 'tool', 'import', 'mirror')),
    session_id     TEXT,
    tags           TEXT    NOT NULL DEFAULT '[]',
    metadata       TEXT    NOT NULL DEFAULT '{}'
);
CREATE INDEX memories_scope_live ON memories (scope, forgotten, type);
CREATE INDEX memories_hash ON memories (scope, content_hash);
CREATE INDEX memories_subject ON memories (scope, subject) WHERE subject IS NOT NULL;
CREATE INDEX memories_created ON memories (created_at);

-- Which captured turns a memory came from (several when merged or extracted from many turns).
CREATE TABLE memory_provenance (
    memory_id   INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    session_id  TEXT    NOT NULL,
    turn_index  INTEGER NOT NULL,
    episode_id  INTEGER REFERENCES episodes (id) ON DELETE SET NULL,
    journal_id  INTEGER REFERENCES journal (id) ON DELETE SET NULL,
    PRIMARY KEY (memory_id, session_id, turn_index)
);

CREATE TABLE episodes (
    id           INTEGER PRIMARY KEY,
    scope        TEXT    NOT NULL,
    session_id   TEXT    NOT NULL,
    turn_index   INTEGER NOT NULL,
    chunk_index  INTEGER NOT NULL DEFAULT 0,
    role         TEXT    NOT NULL,
    content      TEXT    NOT NULL,
    created_at   REAL    NOT NULL,
    journal_id   INTEGER REFERENCES journal (id) ON DELETE SET NULL,
    UNIQUE (scope, session_id, turn_index, role, chunk_index)
);
CREATE INDEX episodes_session ON episodes (session_id, turn_index);
CREATE INDEX episodes_scope ON episodes (scope, created_at);

CREATE TABLE entities (
    id          INTEGER PRIMARY KEY,
    scope       TEXT NOT NULL,
    name        TEXT NOT NULL,
    norm        TEXT NOT NULL,
    kind        TEXT NOT NULL DEFAULT 'thing',
    created_at  REAL NOT NULL,
    UNIQUE (scope, norm)
);

CREATE TABLE entity_aliases (
    entity_id  INTEGER NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    alias      TEXT    NOT NULL,
    norm       TEXT    NOT NULL,
    PRIMARY KEY (entity_id, norm)
);
CREATE INDEX entity_aliases_norm ON entity_aliases (norm);

CREATE TABLE memory_entities (
    memory_id  INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    entity_id  INTEGER NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    PRIMARY KEY (memory_id, entity_id)
);
CREATE INDEX memory_entities_entity ON memory_entities (entity_id);

CREATE TABLE episode_entities (
    episode_id  INTEGER NOT NULL REFERENCES episodes (id) ON DELETE CASCADE,
    entity_id   INTEGER NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    PRIMARY KEY (episode_id, entity_id)
);
CREATE INDEX episode_entities_entity ON episode_entities (entity_id);

CREATE TABLE edges (
    id          INTEGER PRIMARY KEY,
    src_id      INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    dst_id      INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    relation    TEXT    NOT NULL CHECK (relation IN ('updates', 'caused_by', 'result_of',
                    'related_to', 'part_of', 'contradicts')),
    weight      REAL    NOT NULL DEFAULT 1.0,
    created_at  REAL    NOT NULL,
    CHECK (src_id <> dst_id),
    UNIQUE (src_id, dst_id, relation)
);
CREATE INDEX edges_dst ON edges (dst_id);

-- One vector per memory or episode for the model that made it.
CREATE TABLE embeddings (
    kind     TEXT    NOT NULL CHECK (kind IN ('memory', 'episode')),
    item_id  INTEGER NOT NULL,
    model    TEXT    NOT NULL,
    dim      INTEGER NOT NULL,
    vector   BLOB    NOT NULL,
    PRIMARY KEY (kind, item_id)
) WITHOUT ROWID;
CREATE INDEX embeddings_model ON embeddings (model, kind);

-- Vectors keyed by sha256(model + text): unchanged text is never embedded twice.
CREATE TABLE embedding_cache (
    hash        TEXT    PRIMARY KEY,
    model       TEXT    NOT NULL,
    dim         INTEGER NOT NULL,
    vector      BLOB    NOT NULL,
    created_at  REAL    NOT NULL
) WITHOUT ROWID;

CREATE TABLE journal (
    id                 INTEGER PRIMARY KEY,
    scope              TEXT    NOT NULL,
    session_id         TEXT    NOT NULL,
    turn_index         INTEGER NOT NULL,
    platform           TEXT    NOT NULL DEFAULT '',
    source             TEXT    NOT NULL DEFAULT 'turn',
    user_content       TEXT    NOT NULL DEFAULT '',
    assistant_content  TEXT    NOT NULL DEFAULT '',
    created_at         REAL    NOT NULL,
    status             TEXT    NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done', 'failed')),
    attempts           INTEGER NOT NULL DEFAULT 0,
    error              TEXT,
    processed_at       REAL
);
CREATE INDEX journal_pending ON journal (status, id);
CREATE INDEX journal_session ON journal (session_id, turn_index);

CREATE TABLE audit_log (
    id          INTEGER PRIMARY KEY,
    memory_id   INTEGER,
    action      TEXT NOT NULL,
    reason      TEXT NOT NULL DEFAULT '',
    actor       TEXT NOT NULL DEFAULT '',
    created_at  REAL NOT NULL,
    details     TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX audit_memory ON audit_log (memory_id, id);

CREATE TABLE bulletins (
    id          INTEGER PRIMARY KEY,
    scope       TEXT NOT NULL,
    text        TEXT NOT NULL,
    hash        TEXT NOT NULL,
    state_hash  TEXT NOT NULL,
    generator   TEXT NOT NULL,
    created_at  REAL NOT NULL
);
CREATE INDEX bulletins_scope ON bulletins (scope, id);

-- Small key/value state: maintenance cursors, last run times, import markers.
CREATE TABLE meta (
    key    TEXT PRIMARY KEY,
    value  TEXT NOT NULL
) WITHOUT ROWID;

CREATE VIRTUAL TABLE memories_fts USING fts5 (
    content, summary, tags,
    content = 'memories', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, content, summary, tags)
    VALUES (new.id, new.content, coalesce(new.summary, ''), new.tags);
END;

CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, content, summary, tags)
    VALUES ('delete', old.id, old.content, coalesce(old.summary, ''), old.tags);
END;

CREATE TRIGGER memories_fts_update AFTER UPDATE OF content, summary, tags ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, content, summary, tags)
    VALUES ('delete', old.id, old.content, coalesce(old.summary, ''), old.tags);
    INSERT INTO memories_fts (rowid, content, summary, tags)
    VALUES (new.id, new.content, coalesce(new.summary, ''), new.tags);
END;

CREATE VIRTUAL TABLE episodes_fts USING fts5 (
    content,
    content = 'episodes', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER episodes_fts_insert AFTER INSERT ON episodes BEGIN
    INSERT INTO episodes_fts (rowid, content) VALUES (new.id, new.content);
END;

CREATE TRIGGER episodes_fts_delete AFTER DELETE ON episodes BEGIN
    INSERT INTO episodes_fts (episodes_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;

CREATE TRIGGER episodes_fts_update AFTER UPDATE OF content ON episodes BEGIN
    INSERT INTO episodes_fts (episodes_fts, rowid, content) VALUES ('delete', old.id, old.content);
    INSERT INTO episodes_fts (rowid, content) VALUES (new.id, new.content);
END;
