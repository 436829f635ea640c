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
