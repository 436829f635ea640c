-- Garden-wide settings (one row): the hardiness zone the sowing calendar uses.
CREATE TABLE garden_settings (
    id             boolean     PRIMARY KEY DEFAULT true CHECK (id),
    hardiness_zone text        CHECK (hardiness_zone ~ '^(1[0-3]|[1-9])[ab]$'),
    updated_at     timestamptz NOT NULL DEFAULT now()
);

-- The starter kit a garden was set up with (one row: a kit is applied once per garden), and
-- what applying it created.
CREATE TABLE onboarding_kits (
    id          boolean     PRIMARY KEY DEFAULT true CHECK (id),
    kit_key     text        NOT NULL CHECK (char_length(kit_key) BETWEEN 1 AND 100),
    kit_slug    text        NOT NULL CHECK (char_length(kit_slug) BETWEEN 1 AND 100),
    site_id     uuid        REFERENCES sites (id) ON DELETE SET NULL,
    location_id uuid        REFERENCES locations (id) ON DELETE SET NULL,
    plant_ids   uuid[]      NOT NULL DEFAULT '{}',
    applied_by  text        NOT NULL CHECK (char_length(applied_by) BETWEEN 1 AND 200),
    applied_at  timestamptz NOT NULL DEFAULT now()
);
