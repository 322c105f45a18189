-- Claims on journal rows: a curation worker takes the rows it is about to curate for a while (a lease), so that
-- several workers over one store (on several hosts of a shared server) do not all prepare the same rows. A
-- scope's rows stay in capture order: while one worker holds a live claim on a scope's pending row, the others
-- leave that scope's later rows alone. A worker that dies leaves its claims until they run out.
ALTER TABLE journal ADD COLUMN claimed_by TEXT;
ALTER TABLE journal ADD COLUMN claimed_until REAL;

CREATE INDEX journal_pending_scope ON journal (scope, id) WHERE status = 'pending';
