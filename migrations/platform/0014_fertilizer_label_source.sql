-- Every global fertiliser names where its analysis was read (`label_source` in its document:
-- the maker's label or data sheet, or the salt's chemistry), because doses and EC budgets are
-- computed from those figures. The column mirrors the document so the database itself refuses a
-- fertiliser without one; the application refuses it first with a 422 on body.label_source
-- (catalogue writes) and the seed check refuses a seed entry without it.
ALTER TABLE platform.catalog_records
    ADD COLUMN label_source text
        GENERATED ALWAYS AS (CASE WHEN kind = 'fertilizer' THEN data ->> 'label_source' END) STORED;

-- NOT VALID: rows written before this release are checked when they are next written (the next
-- `kultiva seed` rewrites every seeded fertiliser with its source); new rows are checked now.
-- A missing source is NULL, and a CHECK passes on NULL: hence the coalesce.
ALTER TABLE platform.catalog_records
    ADD CONSTRAINT catalog_fertilizer_label_source
        CHECK (kind <> 'fertilizer' OR coalesce(char_length(btrim(label_source)), 0) > 0) NOT VALID;
