-- Locations inside a site (a room, a bed, a shelf); slots hang below them later.
CREATE TABLE locations (
    id          uuid        PRIMARY KEY,
    site_id     uuid        NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    name        text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 120),
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX locations_site_name_uq ON locations (site_id, lower(name));
