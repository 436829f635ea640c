-- Diary entries, their photos and the analysis queue (issue 15). Fixed before the diary and the
-- photo rooms were built side by side: `src/garden/diary` owns `diary_entries` (with the
-- analysis columns), `src/garden/photos` owns `diary_photos` (its rendition jobs are one platform table,
-- `platform.photo_rendition_jobs`, so one worker query serves every garden).

-- One diary entry about a plant or a planting run (or the garden as a whole when neither).
CREATE TABLE diary_entries (
    id                   uuid        PRIMARY KEY,
    plant_id             uuid        REFERENCES plants (id) ON DELETE CASCADE,
    run_id               uuid        REFERENCES planting_runs (id) ON DELETE CASCADE,
    -- Copied from the plant when written, so the species filter is one indexed column.
    species_key          text,
    entry_type           text        NOT NULL CHECK (entry_type IN (
                             'observation', 'measurement', 'care', 'problem', 'harvest',
                             'milestone', 'note')),
    text                 text        NOT NULL CHECK (char_length(text) BETWEEN 1 AND 10000),
    tags                 text[]      NOT NULL DEFAULT '{}',
    -- Typed by a human: recognised keys ec_ms_cm, ph, temperature_c, humidity_percent,
    -- height_cm, leaf_count; any further key is kept.
    measurements         jsonb       NOT NULL DEFAULT '{}'::jsonb,
    entry_date           date        NOT NULL,
    -- The platform user (or service account) who wrote it, and how.
    author_id            uuid        NOT NULL,
    author_kind          text        NOT NULL CHECK (author_kind IN ('user', 'service')),
    -- The face it came through: `rest` (the web UI, a person) or `mcp` (add_plant_diary_entry,
    -- an agent). Entries of the tool server are never queued for analysis (the check below).
    written_via          text        NOT NULL DEFAULT 'rest' CHECK (written_via IN ('rest', 'mcp')),
    created_at           timestamptz NOT NULL DEFAULT now(),
    updated_at           timestamptz NOT NULL DEFAULT now(),

    -- The analysis queue (specification, "Diary analysis"). NULL: never marked.
    analysis_state       text        CHECK (analysis_state IN ('requested', 'in_progress', 'completed', 'failed')),
    analysis_consent_at  timestamptz,
    analysis_requested_by uuid,
    analysis_requested_at timestamptz,
    -- SHA-256 of the lease token (the raw token is shown once, to the claimer).
    lease_token_hash     bytea,
    lease_holder         uuid,
    lease_expires_at     timestamptz,
    -- {status, summary, findings[], disclaimer, submitted_by, submitted_at}
    analysis_result      jsonb,
    analysed_at          timestamptz,
    CHECK (analysis_state IS NULL OR analysis_consent_at IS NOT NULL),
    CHECK (analysis_state IS NULL OR written_via = 'rest'),
    CHECK ((analysis_state = 'in_progress') = (lease_token_hash IS NOT NULL AND lease_expires_at IS NOT NULL))
);
CREATE INDEX diary_entries_order_idx ON diary_entries (entry_date DESC, created_at DESC, id);
CREATE INDEX diary_entries_plant_idx ON diary_entries (plant_id, entry_date DESC) WHERE plant_id IS NOT NULL;
CREATE INDEX diary_entries_run_idx ON diary_entries (run_id, entry_date DESC) WHERE run_id IS NOT NULL;
CREATE INDEX diary_entries_species_idx ON diary_entries (species_key) WHERE species_key IS NOT NULL;
CREATE INDEX diary_entries_tags_idx ON diary_entries USING gin (tags);
-- The work queue: requested entries, and in-progress ones whose lease may have run out.
CREATE INDEX diary_entries_queue_idx ON diary_entries (analysis_requested_at, id)
    WHERE analysis_state IN ('requested', 'in_progress');

-- A photo of a diary entry. The original and its renditions live in storage under generated
-- keys; the row says what exists.
CREATE TABLE diary_photos (
    id                   uuid        PRIMARY KEY,
    entry_id             uuid        NOT NULL REFERENCES diary_entries (id) ON DELETE CASCADE,
    -- Order within the entry (the order `get_diary_entry_photos` delivers them in).
    position             integer     NOT NULL CHECK (position >= 0),
    content_type         text        NOT NULL CHECK (content_type IN ('image/jpeg', 'image/png', 'image/webp')),
    byte_size            bigint      NOT NULL CHECK (byte_size > 0),
    width                integer     NOT NULL CHECK (width > 0),
    height               integer     NOT NULL CHECK (height > 0),
    original_key         text        NOT NULL,
    -- NULL until the rendition job wrote them.
    rendition_512_key    text,
    rendition_512_bytes  bigint,
    rendition_1280_key   text,
    rendition_1280_bytes bigint,
    -- pending (no renditions yet), ready, unavailable (the job gave up).
    rendition_status     text        NOT NULL DEFAULT 'pending'
                                     CHECK (rendition_status IN ('pending', 'ready', 'unavailable')),
    exif_stripped        boolean     NOT NULL DEFAULT false,
    uploaded_by          uuid        NOT NULL,
    created_at           timestamptz NOT NULL DEFAULT now(),
    UNIQUE (entry_id, position)
);
