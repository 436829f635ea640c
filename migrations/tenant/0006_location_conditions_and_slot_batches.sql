-- Garden I, remaining gaps: the conditions of a location (domain 1.6 and the get_location tool of
-- domain 4.2) and the substrate batch filling a slot (domain 1.7: batches are assigned to slots).

-- Unknown conditions stay null: "not frost exposed" is a fact a grower states, never a default.
-- climate_zone is a USDA hardiness zone as the catalogue names them (1a … 13b).
ALTER TABLE locations
    ADD COLUMN frost_exposed   boolean,
    ADD COLUMN climate_zone    text CHECK (climate_zone ~ '^(1[0-3]|[1-9])[ab]$'),
    ADD COLUMN light_situation text CHECK (light_situation IN ('full_sun', 'partial_shade', 'shade')),
    ADD COLUMN area_sqm        double precision CHECK (area_sqm >= 0 AND area_sqm <= 100000);

-- What is in the slot's soil. A batch in a slot cannot be deleted (the application answers 409
-- before the restriction would fire).
ALTER TABLE slots
    ADD COLUMN substrate_batch_id uuid REFERENCES substrate_batches (id) ON DELETE RESTRICT;
CREATE INDEX slots_batch_idx ON slots (substrate_batch_id) WHERE substrate_batch_id IS NOT NULL;
