-- Fertilisers and nutrient plans (Garden II): the garden's own fertilisers beside the global
-- catalogue ones, the garden's own nutrient plans (global templates are compiled into the
-- binary), their phase entries, and which plan a plant or a planting run follows.
-- Product and plan references are text keys: a global key (catalogue UUID of a fertiliser,
-- template key of a plan) or `tenant:<uuid>` of a row here; the application resolves both.

-- A fertiliser owned by the garden: the same fields as a global one (`doc`, checked against the
-- catalogue's field table by the application), its name as a column for uniqueness and order.
CREATE TABLE fertilizers (
    id          uuid        PRIMARY KEY,
    name        text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
    doc         jsonb       NOT NULL CHECK (jsonb_typeof(doc) = 'object'),
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX fertilizers_name_uq ON fertilizers (lower(name));

CREATE TABLE nutrient_plans (
    id                          uuid        PRIMARY KEY,
    name                        text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
    description                 text        CHECK (char_length(description) <= 2000),
    recommended_substrate_type  text,
    reference_substrate_type    text        NOT NULL DEFAULT 'soil',
    tags                        jsonb       NOT NULL DEFAULT '[]'::jsonb,
    -- The plan (template key or tenant:<uuid>) this one was cloned from; kept when the source goes.
    cloned_from_key             text        CHECK (char_length(cloned_from_key) <= 200),
    version                     integer     NOT NULL DEFAULT 1 CHECK (version >= 1),
    created_at                  timestamptz NOT NULL DEFAULT now(),
    updated_at                  timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX nutrient_plans_name_uq ON nutrient_plans (lower(name));

-- One phase entry of a plan: a window of plan weeks (counted from the plant's start) and what
-- the plant is fed in it.
CREATE TABLE nutrient_plan_phases (
    id               uuid             PRIMARY KEY,
    plan_id          uuid             NOT NULL REFERENCES nutrient_plans (id) ON DELETE CASCADE,
    phase_name       text             NOT NULL CHECK (phase_name IN
                         ('germination', 'seedling', 'vegetative', 'flowering', 'flushing', 'dormancy', 'harvest')),
    sequence_order   integer          NOT NULL CHECK (sequence_order >= 1),
    week_start       integer          NOT NULL CHECK (week_start BETWEEN 1 AND 520),
    week_end         integer          NOT NULL CHECK (week_end BETWEEN 1 AND 520),
    target_ec_ms     double precision CHECK (target_ec_ms BETWEEN 0 AND 10),
    reference_ec_ms  double precision CHECK (reference_ec_ms BETWEEN 0 AND 10),
    ph_min           double precision CHECK (ph_min BETWEEN 0 AND 14),
    ph_max           double precision CHECK (ph_max BETWEEN 0 AND 14),
    npk_ratio        jsonb,
    nutrients        jsonb,
    -- [{fertilizer_key, product_name, ml_per_liter}]
    products         jsonb            NOT NULL DEFAULT '[]'::jsonb,
    notes            text             CHECK (char_length(notes) <= 2000),
    CHECK (week_end >= week_start),
    CHECK (ph_min IS NULL OR ph_max IS NULL OR ph_min <= ph_max)
);
CREATE INDEX nutrient_plan_phases_plan_idx ON nutrient_plan_phases (plan_id, sequence_order, week_start);

-- The plan a plant or a run follows (one each; assigning again replaces it).
CREATE TABLE nutrient_plan_assignments (
    id          uuid        PRIMARY KEY,
    plant_id    uuid        UNIQUE REFERENCES plants (id) ON DELETE CASCADE,
    run_id      uuid        UNIQUE REFERENCES planting_runs (id) ON DELETE CASCADE,
    plan_key    text        NOT NULL CHECK (char_length(plan_key) BETWEEN 1 AND 200),
    assigned_at timestamptz NOT NULL DEFAULT now(),
    CHECK ((plant_id IS NULL) <> (run_id IS NULL))
);
CREATE INDEX nutrient_plan_assignments_plan_idx ON nutrient_plan_assignments (plan_key);
