-- Plants (Garden I): plant instances and where they stand. The plants capability owns this file
-- and extends it (phase history, planting runs, placement history); the columns created here are
-- the contract other capabilities read (a site, location, slot or batch with live plants in it
-- cannot be deleted) and are not renamed or dropped.
CREATE TABLE plants (
    id                 uuid        PRIMARY KEY,
    name               text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 120),
    species_key        text        NOT NULL,
    cultivar_key       text,
    location_id        uuid        REFERENCES locations (id) ON DELETE RESTRICT,
    slot_id            uuid        REFERENCES slots (id) ON DELETE RESTRICT,
    substrate_batch_id uuid        REFERENCES substrate_batches (id) ON DELETE RESTRICT,
    planted_on         date,
    -- Set when the plant is archived (disposed, given away, died); never hard-deleted.
    archived_at        timestamptz,
    archive_reason     text        CHECK (archive_reason IN ('disposed', 'given_away', 'died')),
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    CHECK ((archived_at IS NULL) = (archive_reason IS NULL))
);
CREATE INDEX plants_location_idx ON plants (location_id) WHERE archived_at IS NULL;
CREATE INDEX plants_slot_idx ON plants (slot_id) WHERE archived_at IS NULL;
CREATE INDEX plants_batch_idx ON plants (substrate_batch_id) WHERE archived_at IS NULL;
