-- Pest and disease management and harvest (Garden III, ipm14).
-- Catalogue facts a legal rule depends on (the treatment's name, active ingredient and
-- pre-harvest interval) are copied onto the application when it is recorded: a later change of
-- the catalogue never shortens or lengthens an interval that already runs.

-- An inspection of one plant or of one location (then it concerns every plant there).
CREATE TABLE ipm_inspections (
    id                       uuid        PRIMARY KEY,
    plant_id                 uuid        REFERENCES plants (id) ON DELETE CASCADE,
    location_id              uuid        REFERENCES locations (id) ON DELETE CASCADE,
    inspector                text        NOT NULL CHECK (char_length(inspector) BETWEEN 1 AND 200),
    inspected_at             timestamptz NOT NULL,
    pressure_level           text        NOT NULL
                                         CHECK (pressure_level IN ('none', 'low', 'medium', 'high', 'critical')),
    symptoms_observed        text[]      NOT NULL DEFAULT '{}',
    -- [{symptom, pest_key, disease_key, severity, confidence, affected_plant_part,
    --   affected_share, rationale}], checked by the service (keys against the catalogue).
    findings                 jsonb       NOT NULL DEFAULT '[]',
    detected_pest_keys       text[]      NOT NULL DEFAULT '{}',
    detected_disease_keys    text[]      NOT NULL DEFAULT '{}',
    environmental_conditions jsonb,
    -- Keys of photos (the diary issue stores them); only referenced here.
    photo_refs               text[]      NOT NULL DEFAULT '{}',
    notes                    text        CHECK (char_length(notes) <= 2000),
    created_by               text        NOT NULL CHECK (char_length(created_by) BETWEEN 1 AND 200),
    created_at               timestamptz NOT NULL DEFAULT now(),
    CHECK ((plant_id IS NULL) <> (location_id IS NULL))
);
CREATE INDEX ipm_inspections_plant_idx ON ipm_inspections (plant_id, inspected_at DESC, id) WHERE plant_id IS NOT NULL;
CREATE INDEX ipm_inspections_location_idx ON ipm_inspections (location_id, inspected_at DESC, id) WHERE location_id IS NOT NULL;
CREATE INDEX ipm_inspections_order_idx ON ipm_inspections (inspected_at DESC, id);

-- A treatment applied to plants (named, or every live plant of a location).
CREATE TABLE ipm_applications (
    id                      uuid        PRIMARY KEY,
    treatment_key           text        NOT NULL,
    treatment_name          text        NOT NULL CHECK (char_length(treatment_name) BETWEEN 1 AND 200),
    treatment_type          text        NOT NULL,
    -- As the catalogue spells it, and normalised (the resistance rule's class).
    active_ingredient       text,
    ingredient_class        text,
    safety_interval_days    integer     NOT NULL CHECK (safety_interval_days BETWEEN 0 AND 365),
    location_id             uuid        REFERENCES locations (id) ON DELETE SET NULL,
    applied_at              timestamptz NOT NULL,
    -- The garden day of `applied_at` (UTC): the first day of the interval.
    applied_on              date        NOT NULL,
    dose                    double precision CHECK (dose > 0),
    dose_unit               text        CHECK (dose_unit IN ('ml_per_l', 'g_per_l', 'ml', 'g', 'count')),
    water_volume_liters     double precision CHECK (water_volume_liters > 0),
    method                  text        NOT NULL CHECK (method IN ('spray', 'drench', 'granular', 'release', 'cultural')),
    applied_by              text        NOT NULL CHECK (char_length(applied_by) BETWEEN 1 AND 200),
    notes                   text        CHECK (char_length(notes) <= 2000),
    -- The resistance warning was overridden explicitly (and how many earlier applications of
    -- the class the window held for the most-treated plant).
    resistance_acknowledged boolean     NOT NULL DEFAULT false,
    resistance_count        integer     NOT NULL DEFAULT 0,
    created_by              text        NOT NULL CHECK (char_length(created_by) BETWEEN 1 AND 200),
    created_at              timestamptz NOT NULL DEFAULT now(),
    CHECK ((dose IS NULL) = (dose_unit IS NULL))
);
CREATE INDEX ipm_applications_order_idx ON ipm_applications (applied_at DESC, id);

-- The plants an application touched, with the first day a harvest is allowed again
-- (`safe_on` = applied_on + safety_interval_days; the day before it is the last blocked day).
CREATE TABLE ipm_application_plants (
    application_id uuid NOT NULL REFERENCES ipm_applications (id) ON DELETE CASCADE,
    plant_id       uuid NOT NULL REFERENCES plants (id) ON DELETE CASCADE,
    applied_on     date NOT NULL,
    safe_on        date NOT NULL CHECK (safe_on >= applied_on),
    ingredient_class text,
    PRIMARY KEY (application_id, plant_id)
);
CREATE INDEX ipm_application_plants_plant_idx ON ipm_application_plants (plant_id, safe_on);
CREATE INDEX ipm_application_plants_class_idx ON ipm_application_plants (plant_id, ingredient_class, applied_on)
    WHERE ingredient_class IS NOT NULL;

-- Ripeness observations of a plant by indicator (domain 2.10 readiness).
CREATE TABLE harvest_observations (
    id                       uuid        PRIMARY KEY,
    plant_id                 uuid        NOT NULL REFERENCES plants (id) ON DELETE CASCADE,
    indicator_type           text        NOT NULL CHECK (indicator_type IN
                                         ('trichome', 'color', 'brix', 'size', 'days_since_flowering',
                                          'days_since_sowing', 'aroma', 'texture', 'foliage')),
    ripeness_assessment      text        NOT NULL CHECK (ripeness_assessment IN ('immature', 'approaching', 'peak', 'overripe')),
    reliability_score        double precision NOT NULL DEFAULT 0.5 CHECK (reliability_score BETWEEN 0 AND 1),
    days_to_harvest_estimate integer     CHECK (days_to_harvest_estimate BETWEEN 0 AND 365),
    observed_at              timestamptz NOT NULL,
    notes                    text        CHECK (char_length(notes) <= 2000),
    created_by               text        NOT NULL,
    created_at               timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX harvest_observations_plant_idx ON harvest_observations (plant_id, indicator_type, observed_at DESC);

-- Harvest batches of one plant (the run is the plant's run when it was harvested).
CREATE TABLE harvest_batches (
    id                     uuid        PRIMARY KEY,
    plant_id               uuid        NOT NULL REFERENCES plants (id) ON DELETE CASCADE,
    run_id                 uuid        REFERENCES planting_runs (id) ON DELETE SET NULL,
    label                  text        NOT NULL CHECK (char_length(label) BETWEEN 1 AND 100),
    harvest_date           date        NOT NULL,
    harvest_type           text        NOT NULL DEFAULT 'final' CHECK (harvest_type IN ('partial', 'final', 'continuous')),
    wet_weight_g           double precision NOT NULL CHECK (wet_weight_g > 0),
    estimated_dry_weight_g double precision CHECK (estimated_dry_weight_g >= 0),
    actual_dry_weight_g    double precision CHECK (actual_dry_weight_g >= 0),
    appearance_score       double precision CHECK (appearance_score BETWEEN 0 AND 100),
    aroma_score            double precision CHECK (aroma_score BETWEEN 0 AND 100),
    color_score            double precision CHECK (color_score BETWEEN 0 AND 100),
    defects                text[]      NOT NULL DEFAULT '{}',
    quality_score          double precision CHECK (quality_score BETWEEN 0 AND 100),
    quality_grade          text        CHECK (quality_grade IN ('a_plus', 'a', 'b', 'c', 'd')),
    harvester              text        NOT NULL CHECK (char_length(harvester) BETWEEN 1 AND 200),
    notes                  text        CHECK (char_length(notes) <= 2000),
    created_at             timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX harvest_batches_plant_idx ON harvest_batches (plant_id, harvest_date);
CREATE INDEX harvest_batches_run_idx ON harvest_batches (run_id) WHERE run_id IS NOT NULL;
CREATE INDEX harvest_batches_date_idx ON harvest_batches (harvest_date, id);
