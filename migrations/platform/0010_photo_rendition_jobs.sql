-- Rendition work for diary photos of every garden (issue 15): one queue in the platform schema,
-- so workers claim across gardens with one `FOR UPDATE SKIP LOCKED` statement; a job names the
-- garden by tenant id and the photo by its id in that garden's `diary_photos`.
--
-- `storage` names the photo storage the original was written to (for the local directory:
-- `local:<absolute path>`); a worker claims only jobs of the storage it reaches itself.
-- A claim sets `locked_until` (the lease) and counts the attempt; success deletes the job; a
-- failure frees it for a later `run_after` (backing off); the last allowed failure parks it at
-- `run_after = 'infinity'` with its `last_error` and marks the photo unavailable.
CREATE TABLE platform.photo_rendition_jobs (
    id           uuid        PRIMARY KEY,
    tenant_id    uuid        NOT NULL REFERENCES platform.tenants (id) ON DELETE CASCADE,
    photo_id     uuid        NOT NULL,
    storage      text        NOT NULL,
    attempts     integer     NOT NULL DEFAULT 0,
    run_after    timestamptz NOT NULL DEFAULT now(),
    locked_until timestamptz,
    last_error   text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (tenant_id, photo_id)
);
CREATE INDEX photo_rendition_jobs_due_idx ON platform.photo_rendition_jobs (storage, run_after);
