-- Issue 26, the reference's tool arguments:
-- a site's USDA hardiness zone (`create_site.climate_zone`; `get_sowing_calendar.site_key` moves
-- the calendar to it), as locations already have one;
ALTER TABLE sites
    ADD COLUMN climate_zone text CHECK (climate_zone ~ '^(1[0-3]|[1-9])[ab]$');
-- the warning a forced backward phase transition leaves (`force: true`, domain 2.11 (b)).
ALTER TABLE plant_phase_history
    ADD COLUMN warning text CHECK (char_length(warning) BETWEEN 1 AND 500);
