-- Alerts (issue 40): a reading outside the range the plant's current phase asks for, a sensor
-- gone silent, and (later) a frost night at a site. One row per opening; `resolved_at` is set
-- when the cause ends, and the row stays as history.
CREATE TABLE alerts (
    id uuid PRIMARY KEY,
    kind text NOT NULL CHECK (kind IN ('out_of_range', 'sensor_silent', 'frost')),
    -- What it concerns, as far as the kind has it: an out_of_range alert has the plant and the
    -- sensor (and the sensor's place), a sensor_silent one the sensor, a frost one the site and
    -- the plant. A sensor's alerts go with it.
    plant_id uuid REFERENCES plants (id) ON DELETE CASCADE,
    sensor_id uuid REFERENCES sensors (id) ON DELETE CASCADE,
    location_id uuid REFERENCES locations (id) ON DELETE CASCADE,
    site_id uuid REFERENCES sites (id) ON DELETE CASCADE,
    tank_id uuid REFERENCES tanks (id) ON DELETE CASCADE,
    -- The metric judged: a sensor metric, or `vpd_kpa` derived from temperature and humidity,
    -- or (frost) the forecast low's `temperature_c`.
    metric text NOT NULL,
    -- The reading that opened it (for sensor_silent: the last one heard, if any).
    value double precision,
    measured_at timestamptz,
    -- The range it broke and where that range comes from (a plan entry, a VPD chart, …).
    range_min double precision,
    range_max double precision,
    range_source text,
    -- Kind-specific facts (the silent threshold, the frost night and low, the VPD's pair).
    detail jsonb NOT NULL DEFAULT '{}'::jsonb,
    opened_at timestamptz NOT NULL DEFAULT now(),
    resolved_at timestamptz,
    CHECK (resolved_at IS NULL OR resolved_at >= opened_at)
);
-- At most one open alert per cause: repeated scans find it instead of opening another.
CREATE UNIQUE INDEX alerts_open_once ON alerts (kind, coalesce(sensor_id, '00000000-0000-0000-0000-000000000000'::uuid),
    coalesce(plant_id, '00000000-0000-0000-0000-000000000000'::uuid), coalesce(site_id, '00000000-0000-0000-0000-000000000000'::uuid), metric)
    WHERE resolved_at IS NULL;
CREATE INDEX alerts_recent ON alerts (opened_at DESC, id DESC);
CREATE INDEX alerts_plant ON alerts (plant_id) WHERE plant_id IS NOT NULL;
CREATE INDEX alerts_sensor ON alerts (sensor_id) WHERE sensor_id IS NOT NULL;
