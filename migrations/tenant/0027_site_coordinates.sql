-- Weather (issue 40): a site's coordinates (WGS 84 degrees, both or neither), the forecast
-- readings of origin `weather` fetched for it, and frost alerts once per plant and night.
ALTER TABLE sites
    ADD COLUMN latitude double precision CHECK (latitude BETWEEN -90 AND 90),
    ADD COLUMN longitude double precision CHECK (longitude BETWEEN -180 AND 180),
    ADD CONSTRAINT sites_coordinates_together CHECK ((latitude IS NULL) = (longitude IS NULL));

-- Hourly forecast values of a site (`WEATHER_URL`), one row per (site, metric, hour): a later
-- poll of the same hour replaces the value (a newer forecast) instead of adding a row. Small
-- (48 rows per site and day), so a plain table of the garden's schema (which Citus places
-- whole with the schema); kept as long as raw sensor readings (90 days).
CREATE TABLE weather_readings (
    site_id uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    metric text NOT NULL CHECK (metric IN ('temperature_c', 'humidity_percent')),
    measured_at timestamptz NOT NULL,
    value double precision NOT NULL,
    fetched_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (site_id, metric, measured_at)
);
CREATE INDEX weather_readings_time ON weather_readings USING brin (measured_at);

-- One open alert per cause; a frost alert's cause includes its night (`detail.night`), so two
-- frost nights of one plant are two alerts. Other kinds have no night: unchanged for them.
DROP INDEX alerts_open_once;
CREATE UNIQUE INDEX alerts_open_once ON alerts (kind, coalesce(sensor_id, '00000000-0000-0000-0000-000000000000'::uuid),
    coalesce(plant_id, '00000000-0000-0000-0000-000000000000'::uuid), coalesce(site_id, '00000000-0000-0000-0000-000000000000'::uuid), metric,
    coalesce(detail ->> 'night', ''))
    WHERE resolved_at IS NULL;
