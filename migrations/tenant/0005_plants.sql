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

-- Plants capability (Garden I): the columns and tables below extend the contract above.
-- `substrate_key`: a substrate named without a batch (a catalogue key or `tenant:<uuid>`).
-- `current_phase_key` is the phase definition key of the open phase-history row (kept in step
-- with it in the same transaction); the sequence itself is never copied: it is read from the
-- catalogue at request time, so rebinding a species moves every plant without a migration.
ALTER TABLE plants
    ADD COLUMN substrate_key            text CHECK (char_length(substrate_key) BETWEEN 1 AND 200),
    ADD COLUMN current_phase_key        text,
    ADD COLUMN current_phase_started_at timestamptz,
    ADD COLUMN current_cycle            integer CHECK (current_cycle >= 1),
    ADD COLUMN notes                    text CHECK (char_length(notes) <= 2000),
    ADD CONSTRAINT plants_phase_pair CHECK ((current_phase_key IS NULL) = (current_phase_started_at IS NULL));
-- List filters and default order (created_at, id); archived plants leave default listings.
CREATE INDEX plants_live_order_idx ON plants (created_at, id) WHERE archived_at IS NULL;
CREATE INDEX plants_order_idx ON plants (created_at, id);
CREATE INDEX plants_species_idx ON plants (species_key);
CREATE INDEX plants_phase_idx ON plants (current_phase_key);
CREATE INDEX plants_name_idx ON plants (lower(name) text_pattern_ops);

-- Every phase a plant went through. At most one open row (exited_at IS NULL) per plant.
CREATE TABLE plant_phase_history (
    id           uuid        PRIMARY KEY,
    plant_id     uuid        NOT NULL REFERENCES plants (id) ON DELETE CASCADE,
    phase_key    text        NOT NULL CHECK (char_length(phase_key) BETWEEN 1 AND 100),
    -- The phase's name when it was entered (the catalogue may later rename or drop it).
    phase_name   text        NOT NULL DEFAULT '' CHECK (char_length(phase_name) <= 200),
    sequence_key text        NOT NULL CHECK (char_length(sequence_key) BETWEEN 1 AND 100),
    cycle_number integer     NOT NULL CHECK (cycle_number >= 1),
    entered_at   timestamptz NOT NULL,
    exited_at    timestamptz CHECK (exited_at IS NULL OR exited_at >= entered_at),
    reason       text        NOT NULL CHECK (char_length(reason) BETWEEN 1 AND 200),
    -- Who made the change: `user:<uuid>`, `api_key:<uuid>`, `mcp:<account uuid>`, `system`.
    actor        text        NOT NULL CHECK (char_length(actor) BETWEEN 1 AND 200)
);
CREATE INDEX plant_phase_history_plant_idx ON plant_phase_history (plant_id, entered_at, id);
CREATE UNIQUE INDEX plant_phase_history_one_open_uq ON plant_phase_history (plant_id) WHERE exited_at IS NULL;

-- Every placement of a plant in a slot, with dates: the crop-rotation check reads what stood
-- in a slot within the window, including plants since moved away or archived.
CREATE TABLE slot_placements (
    id          uuid        PRIMARY KEY,
    slot_id     uuid        NOT NULL REFERENCES slots (id) ON DELETE CASCADE,
    plant_id    uuid        NOT NULL REFERENCES plants (id) ON DELETE CASCADE,
    species_key text        NOT NULL,
    placed_on   date        NOT NULL,
    removed_on  date,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX slot_placements_slot_idx ON slot_placements (slot_id, placed_on);
CREATE INDEX slot_placements_plant_idx ON slot_placements (plant_id) WHERE removed_on IS NULL;

-- Planting runs: a group of plants grown together (domain 2.6 states).
CREATE TABLE planting_runs (
    id                 uuid        PRIMARY KEY,
    name               text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
    run_type           text        NOT NULL DEFAULT 'monoculture' CHECK (run_type IN ('monoculture', 'clone')),
    status             text        NOT NULL DEFAULT 'planned'
                                   CHECK (status IN ('planned', 'active', 'harvesting', 'completed', 'cancelled')),
    location_id        uuid        REFERENCES locations (id) ON DELETE RESTRICT,
    substrate_batch_id uuid        REFERENCES substrate_batches (id) ON DELETE RESTRICT,
    planned_quantity   integer     CHECK (planned_quantity BETWEEN 1 AND 10000),
    planned_start_date date,
    started_at         timestamptz,
    completed_at       timestamptz,
    notes              text        CHECK (char_length(notes) <= 2000),
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX planting_runs_status_idx ON planting_runs (status, created_at, id);
CREATE INDEX planting_runs_order_idx ON planting_runs (created_at, id);

-- What a run grows: species, optional cultivar, how many, and the id prefix of its plants.
CREATE TABLE planting_run_entries (
    id           uuid        PRIMARY KEY,
    run_id       uuid        NOT NULL REFERENCES planting_runs (id) ON DELETE CASCADE,
    species_key  text        NOT NULL,
    cultivar_key text,
    quantity     integer     NOT NULL CHECK (quantity BETWEEN 1 AND 10000),
    id_prefix    text        NOT NULL CHECK (id_prefix ~ '^[A-Z]{2,5}$'),
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX planting_run_entries_run_idx ON planting_run_entries (run_id);

-- The plants of a run (a plant belongs to at most one run).
CREATE TABLE planting_run_plants (
    run_id   uuid        NOT NULL REFERENCES planting_runs (id) ON DELETE CASCADE,
    plant_id uuid        NOT NULL UNIQUE REFERENCES plants (id) ON DELETE CASCADE,
    added_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, plant_id)
);
