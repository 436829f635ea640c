-- Places (Garden I): locations become a tree under their site, slots sit inside a location.
-- Contract shared by the places and plants capabilities: the columns created here may gain
-- siblings but are not renamed or dropped.

-- A location may hang below another location of the same site (any depth). `depth` is 0 for a
-- location directly under its site; the application keeps it (and refuses cycles) on moves.
ALTER TABLE locations
    ADD COLUMN parent_id   uuid REFERENCES locations (id) ON DELETE RESTRICT,
    ADD COLUMN depth       integer NOT NULL DEFAULT 0 CHECK (depth >= 0),
    ADD COLUMN kind        text,
    ADD COLUMN description text CHECK (char_length(description) <= 2000),
    ADD CONSTRAINT locations_not_own_parent CHECK (parent_id IS NULL OR parent_id <> id);
CREATE INDEX locations_parent_idx ON locations (parent_id);
CREATE INDEX locations_site_idx ON locations (site_id, created_at, id);

-- A slot: one planting position in a location (a pot place, a square of a bed).
-- `code` is the grower's name for it (uppercase, contains `_`, e.g. BOX1_A1), unique per garden.
CREATE TABLE slots (
    id          uuid        PRIMARY KEY,
    location_id uuid        NOT NULL REFERENCES locations (id) ON DELETE RESTRICT,
    code        text        NOT NULL CHECK (code ~ '^[A-Z0-9]+(_[A-Z0-9]+)+$' AND char_length(code) <= 40),
    capacity    integer     NOT NULL DEFAULT 1 CHECK (capacity BETWEEN 1 AND 20),
    position_x  integer,
    position_y  integer,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX slots_code_uq ON slots (code);
CREATE INDEX slots_location_idx ON slots (location_id, position_y, position_x, code);

-- Adjacency of slots (companion checks look at neighbours). Stored once per pair, both
-- directions (the application writes both rows), so "neighbours of S" is one index lookup.
CREATE TABLE slot_neighbours (
    slot_id      uuid NOT NULL REFERENCES slots (id) ON DELETE CASCADE,
    neighbour_id uuid NOT NULL REFERENCES slots (id) ON DELETE CASCADE,
    PRIMARY KEY (slot_id, neighbour_id),
    CHECK (slot_id <> neighbour_id)
);

-- Added by the places capability (Garden I): the location kinds of the domain's location types,
-- and the reverse lookup of slot adjacency.
ALTER TABLE locations
    ADD CONSTRAINT locations_kind_check CHECK (kind IS NULL OR kind IN ('zone', 'home', 'garden',
        'greenhouse', 'building', 'room', 'balcony', 'terrace', 'tent', 'bed', 'shelf', 'container'));
CREATE INDEX slot_neighbours_neighbour_idx ON slot_neighbours (neighbour_id);
