-- Tanks and watering (Garden II): tanks with their fills and maintenance log, and watering /
-- feeding events of plants and runs (domain 1.10, 1.13). A tank's current state (volume, EC,
-- pH) lives on the tank row and is changed only in the transaction that writes the fill or the
-- feeding that changes it.
CREATE TABLE tanks (
    id                    uuid             PRIMARY KEY,
    name                  text             NOT NULL CHECK (char_length(name) BETWEEN 1 AND 120),
    kind                  text             NOT NULL
                          CHECK (kind IN ('nutrient', 'irrigation', 'reservoir', 'recirculation', 'stock_solution')),
    volume_liters         double precision NOT NULL CHECK (volume_liters > 0 AND volume_liters <= 100000),
    location_id           uuid             REFERENCES locations (id) ON DELETE RESTRICT,
    notes                 text             CHECK (char_length(notes) <= 2000),
    -- Current state: null until the first fill.
    current_volume_liters double precision CHECK (current_volume_liters >= 0 AND current_volume_liters <= volume_liters),
    current_ec_ms         double precision CHECK (current_ec_ms BETWEEN 0 AND 10),
    current_ph            double precision CHECK (current_ph BETWEEN 0 AND 14),
    created_at            timestamptz      NOT NULL DEFAULT now(),
    updated_at            timestamptz      NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX tanks_name_uq ON tanks (lower(name));
CREATE INDEX tanks_order_idx ON tanks (created_at, id);
CREATE INDEX tanks_location_idx ON tanks (location_id);

CREATE TABLE tank_fills (
    id            uuid             PRIMARY KEY,
    tank_id       uuid             NOT NULL REFERENCES tanks (id) ON DELETE CASCADE,
    fill_type     text             NOT NULL CHECK (fill_type IN ('full_change', 'top_up', 'adjustment')),
    volume_liters double precision NOT NULL CHECK (volume_liters >= 0 AND volume_liters <= 100000),
    ec_ms         double precision CHECK (ec_ms BETWEEN 0 AND 10),
    ph            double precision CHECK (ph BETWEEN 0 AND 14),
    water_source  text             CHECK (water_source IN ('tap', 'osmose', 'rainwater', 'distilled', 'well', 'mixed')),
    water_temp_c  double precision CHECK (water_temp_c BETWEEN 0 AND 50),
    notes         text             CHECK (char_length(notes) <= 2000),
    -- The tank's volume after this fill.
    volume_after_liters double precision NOT NULL CHECK (volume_after_liters >= 0),
    filled_at     timestamptz      NOT NULL,
    actor         text             NOT NULL CHECK (char_length(actor) BETWEEN 1 AND 200),
    created_at    timestamptz      NOT NULL DEFAULT now()
);
CREATE INDEX tank_fills_tank_idx ON tank_fills (tank_id, filled_at DESC, id DESC);

CREATE TABLE tank_maintenance (
    id               uuid        PRIMARY KEY,
    tank_id          uuid        NOT NULL REFERENCES tanks (id) ON DELETE CASCADE,
    maintenance_type text        NOT NULL CHECK (maintenance_type IN
                     ('water_change', 'cleaning', 'sanitization', 'calibration', 'filter_change', 'pump_inspection')),
    performed_at     timestamptz NOT NULL,
    notes            text        CHECK (char_length(notes) <= 2000),
    actor            text        NOT NULL CHECK (char_length(actor) BETWEEN 1 AND 200),
    created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX tank_maintenance_tank_idx ON tank_maintenance (tank_id, maintenance_type, performed_at DESC);

-- One watering or feeding: of some plants, of a run's plants, optionally from a tank.
CREATE TABLE watering_events (
    id                    uuid             PRIMARY KEY,
    occurred_at           timestamptz      NOT NULL,
    application_method    text             NOT NULL
                          CHECK (application_method IN ('fertigation', 'drench', 'foliar', 'top_dress')),
    is_supplemental       boolean          NOT NULL DEFAULT false,
    run_id                uuid             REFERENCES planting_runs (id) ON DELETE SET NULL,
    tank_id               uuid             REFERENCES tanks (id) ON DELETE SET NULL,
    -- The tank's last fill when the event drew from it (stored, not a constraint).
    tank_fill_id          uuid,
    volume_liters         double precision NOT NULL CHECK (volume_liters > 0 AND volume_liters <= 10000),
    ec_before_ms          double precision CHECK (ec_before_ms BETWEEN 0 AND 10),
    ec_after_ms           double precision CHECK (ec_after_ms BETWEEN 0 AND 10),
    ph_before             double precision CHECK (ph_before BETWEEN 0 AND 14),
    ph_after              double precision CHECK (ph_after BETWEEN 0 AND 14),
    runoff_ec_ms          double precision CHECK (runoff_ec_ms BETWEEN 0 AND 10),
    runoff_ph             double precision CHECK (runoff_ph BETWEEN 0 AND 14),
    runoff_volume_liters  double precision CHECK (runoff_volume_liters >= 0 AND runoff_volume_liters <= volume_liters),
    -- `[{fertilizer_key, ml_applied}]`, keys stored as given.
    fertilizers_used      jsonb            NOT NULL DEFAULT '[]'::jsonb,
    -- The runoff analysis (domain 2.13) computed when the event was recorded.
    runoff_analysis       jsonb,
    notes                 text             CHECK (char_length(notes) <= 2000),
    actor                 text             NOT NULL CHECK (char_length(actor) BETWEEN 1 AND 200),
    created_at            timestamptz      NOT NULL DEFAULT now()
);
CREATE INDEX watering_events_time_idx ON watering_events (occurred_at DESC, id DESC);
CREATE INDEX watering_events_run_idx ON watering_events (run_id, occurred_at DESC);
CREATE INDEX watering_events_tank_idx ON watering_events (tank_id, occurred_at DESC);

CREATE TABLE watering_event_plants (
    event_id uuid NOT NULL REFERENCES watering_events (id) ON DELETE CASCADE,
    plant_id uuid NOT NULL REFERENCES plants (id) ON DELETE CASCADE,
    PRIMARY KEY (event_id, plant_id)
);
CREATE INDEX watering_event_plants_plant_idx ON watering_event_plants (plant_id, event_id);
