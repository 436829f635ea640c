-- Safety days are counted in the garden's calendar (issue 39): an application's first blocked
-- day is the local day of `applied_at` in the garden's time zone, its first allowed day that
-- day + the interval. Both depend on the zone (`PUT calendar/settings`) and are counted from
-- `applied_at` and `safety_interval_days` whenever they are read, so a change of the zone
-- re-counts every running interval at once. The UTC days stored so far are dropped (with the
-- indexes and the check that used them); the plant's applications are found by plant.
ALTER TABLE ipm_application_plants DROP COLUMN safe_on;
ALTER TABLE ipm_application_plants DROP COLUMN applied_on;
ALTER TABLE ipm_applications DROP COLUMN applied_on;
CREATE INDEX ipm_application_plants_by_plant_idx ON ipm_application_plants (plant_id);
