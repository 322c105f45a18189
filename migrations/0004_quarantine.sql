-- Memories and episodes a write-time screen flagged (instructions, template tokens, fences, exfiltration links,
-- hidden characters): kept, shown to the user, never recalled or put in a prompt until released (row deleted).
CREATE TABLE quarantine (
    kind        TEXT    NOT NULL CHECK (kind IN ('memory', 'episode')),
    item_id     INTEGER NOT NULL,
    reason      TEXT    NOT NULL,
    created_at  REAL    NOT NULL,
    PRIMARY KEY (kind, item_id)
) WITHOUT ROWID;
