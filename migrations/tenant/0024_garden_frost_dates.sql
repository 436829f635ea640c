-- The garden's own average frost dates (`MM-DD`, a day of every year) and its hemisphere, which
-- the sowing calendar prefers to a hardiness zone's estimate. Null hemisphere is north.
ALTER TABLE garden_settings
    ADD COLUMN last_spring_frost text
        CHECK (last_spring_frost ~ '^(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$'),
    ADD COLUMN first_autumn_frost text
        CHECK (first_autumn_frost ~ '^(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$'),
    ADD COLUMN hemisphere text CHECK (hemisphere IN ('north', 'south'));
