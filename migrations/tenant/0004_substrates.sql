-- Substrates (Garden I): tenant-owned substrates and mixes beside the global catalogue ones, and
-- the garden's batches of substrate with their usage cycles.
-- Contract shared by the substrates and plants capabilities: the columns created here may gain
-- siblings but are not renamed or dropped.

-- A tenant-owned substrate or mix. Global substrates live in the catalogue; a batch names its
-- substrate by `substrate_key`, which is either a global catalogue key or `tenant:<uuid>` of a row
-- here (the application resolves both).
CREATE TABLE substrates (
    id          uuid        PRIMARY KEY,
    name        text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 120),
    type        text        NOT NULL,
    is_mix      boolean     NOT NULL DEFAULT false,
    properties  jsonb       NOT NULL DEFAULT '{}'::jsonb,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX substrates_name_uq ON substrates (lower(name));

-- A batch of substrate in use in this garden: `cycles_used` counts completed growing cycles.
CREATE TABLE substrate_batches (
    id             uuid        PRIMARY KEY,
    substrate_key  text        NOT NULL CHECK (char_length(substrate_key) BETWEEN 1 AND 200),
    label          text        NOT NULL CHECK (char_length(label) BETWEEN 1 AND 120),
    volume_liters  numeric(10, 2) CHECK (volume_liters > 0),
    mixed_on       date,
    cycles_used    integer     NOT NULL DEFAULT 0 CHECK (cycles_used >= 0),
    ph_current     numeric(4, 2),
    ec_current_ms  numeric(6, 3),
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX substrate_batches_label_uq ON substrate_batches (lower(label));

-- Added by the substrates capability (Garden I): the reuse facts of the batch's substrate as
-- they were when the batch was made (a batch is physical material: later edits of a catalogue
-- substrate do not change it, and the reuse check needs no catalogue read), pH and EC readings
-- of a batch (the history the reuse rule looks at; `ph_current` / `ec_current_ms` hold the
-- latest), bounds of readings.
ALTER TABLE substrate_batches
    ADD COLUMN substrate_type   text    NOT NULL DEFAULT 'soil',
    ADD COLUMN reusable         boolean NOT NULL DEFAULT false,
    ADD COLUMN max_reuse_cycles integer NOT NULL DEFAULT 1 CHECK (max_reuse_cycles >= 1),
    ADD COLUMN ec_base_ms       numeric(6, 3) NOT NULL DEFAULT 0.5,
    ADD CONSTRAINT substrate_batches_ph_range CHECK (ph_current BETWEEN 0 AND 14),
    ADD CONSTRAINT substrate_batches_ec_range CHECK (ec_current_ms BETWEEN 0 AND 20);
CREATE TABLE substrate_batch_readings (
    id          uuid        PRIMARY KEY,
    batch_id    uuid        NOT NULL REFERENCES substrate_batches (id) ON DELETE CASCADE,
    ph          numeric(4, 2) CHECK (ph BETWEEN 0 AND 14),
    ec_ms       numeric(6, 3) CHECK (ec_ms BETWEEN 0 AND 20),
    measured_at timestamptz NOT NULL DEFAULT now(),
    CHECK (ph IS NOT NULL OR ec_ms IS NOT NULL)
);
CREATE INDEX substrate_batch_readings_batch_idx ON substrate_batch_readings (batch_id, measured_at, id);
CREATE INDEX substrate_batches_substrate_idx ON substrate_batches (substrate_key, created_at, id);
