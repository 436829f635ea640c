-- Sensors (issue 40): garden records that measure one metric at exactly one place (a location,
-- a site or a tank), and their readings.
CREATE TABLE sensors (
    id uuid PRIMARY KEY,
    name text NOT NULL,
    metric text NOT NULL CHECK (metric IN ('temperature_c', 'humidity_percent', 'ec_ms_cm', 'ph',
        'ppfd_umol_m2_s', 'co2_ppm', 'soil_moisture_percent', 'water_temperature_c', 'light_lux')),
    -- A sensor belongs to its place: it goes with it.
    location_id uuid REFERENCES locations (id) ON DELETE CASCADE,
    site_id uuid REFERENCES sites (id) ON DELETE CASCADE,
    tank_id uuid REFERENCES tanks (id) ON DELETE CASCADE,
    source text NOT NULL CHECK (source IN ('http', 'mqtt', 'home_assistant')),
    topic text,
    expected_interval_minutes integer CHECK (expected_interval_minutes BETWEEN 1 AND 10080),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    CHECK (num_nonnulls(location_id, site_id, tank_id) = 1),
    CHECK ((source = 'http') = (topic IS NULL))
);
CREATE UNIQUE INDEX sensors_name ON sensors (lower(name));
CREATE INDEX sensors_location ON sensors (location_id) WHERE location_id IS NOT NULL;
CREATE INDEX sensors_site ON sensors (site_id) WHERE site_id IS NOT NULL;
CREATE INDEX sensors_tank ON sensors (tank_id) WHERE tank_id IS NOT NULL;

-- Raw readings, one table per calendar month (UTC) under a declaratively partitioned parent:
-- the 90-day retention drops whole months instead of deleting row by row. The key (sensor,
-- instant) makes a repeated reading a no-op (`ON CONFLICT DO NOTHING`). Month partitions are
-- created by the service before a batch is inserted (`garden::sensors::repo::ensure_months`);
-- the default partition only catches rows copied in by a garden import, and the service moves
-- them into their month when it creates that month. Plain PostgreSQL partitioning, which Citus
-- supports for tables of a distributed schema.
CREATE TABLE sensor_readings (
    sensor_id uuid NOT NULL REFERENCES sensors (id) ON DELETE CASCADE,
    measured_at timestamptz NOT NULL,
    value double precision NOT NULL,
    PRIMARY KEY (sensor_id, measured_at)
) PARTITION BY RANGE (measured_at);
CREATE INDEX sensor_readings_time ON sensor_readings USING brin (measured_at);
CREATE TABLE sensor_readings_default PARTITION OF sensor_readings DEFAULT;

-- Hourly roll-ups (UTC hours), kept for good: charts older than the raw readings read these.
-- Kept up to date by the statement that stores readings (only newly stored rows count).
CREATE TABLE sensor_readings_hourly (
    sensor_id uuid NOT NULL REFERENCES sensors (id) ON DELETE CASCADE,
    hour timestamptz NOT NULL,
    min_value double precision NOT NULL,
    max_value double precision NOT NULL,
    sum_value double precision NOT NULL,
    count bigint NOT NULL CHECK (count > 0),
    PRIMARY KEY (sensor_id, hour)
);
