-- Diary entry titles and the agent's worker label on an analysis lease (domain 4.2:
-- `add_plant_diary_entry.title`, `claim_diary_analysis.worker_id`).

-- Control characters are named by code point (what the service refuses: Unicode's Cc): the
-- class `[[:cntrl:]]` depends on the database's locale.

-- An optional one-line title: stored trimmed, NULL when none (a blank title is none).
ALTER TABLE diary_entries
    ADD COLUMN title text CHECK (
        title IS NULL
        OR (char_length(title) BETWEEN 1 AND 200
            AND btrim(title) = title
            AND title !~ '[\x01-\x1f\x7f-\x9f]')
    );

-- The agent's own label for the worker holding the lease (free text, not a key). It belongs to
-- the lease: set by a claim, gone when the lease ends (submit, withdraw, a new request). A lease
-- that merely ran out keeps it until the next claim, but readers no longer show it.
ALTER TABLE diary_entries
    ADD COLUMN lease_worker_id text CHECK (
        lease_worker_id IS NULL
        OR (char_length(lease_worker_id) BETWEEN 1 AND 200
            AND lease_worker_id !~ '[\x01-\x1f\x7f-\x9f]'
            AND analysis_state = 'in_progress')
    );
