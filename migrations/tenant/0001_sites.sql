-- Sites: the roots of a garden's places (an apartment, a garden, a greenhouse, ...).
-- Tenant migrations use unqualified names: they run with the tenant schema on the search path.
CREATE TABLE sites (
    id          uuid        PRIMARY KEY,
    name        text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 120),
    kind        text        NOT NULL CHECK (kind IN ('apartment', 'garden', 'balcony', 'greenhouse',
                                                     'windowsill', 'grow_tent')),
    description text        CHECK (char_length(description) <= 2000),
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX sites_name_uq ON sites (lower(name));
CREATE INDEX sites_created_idx ON sites (created_at, id);
