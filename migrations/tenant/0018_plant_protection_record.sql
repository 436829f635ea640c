-- The plant-protection record (issue 29; Regulation (EU) 2023/564): what an application record
-- needs beyond what it had. Copied when the application is made, as the rest of its facts are:
-- the product's authorisation number from the catalogue, the growth stage (given as a BBCH code,
-- or per plant the principal stage its phase is), the treated area, and the reason (the pests
-- and diseases treated, catalogue keys).
ALTER TABLE ipm_applications
    ADD COLUMN authorisation_number text CHECK (char_length(authorisation_number) BETWEEN 1 AND 50),
    ADD COLUMN bbch_code text CHECK (bbch_code ~ '^[0-9]{2}$'),
    ADD COLUMN treated_area_m2 double precision CHECK (treated_area_m2 > 0 AND treated_area_m2 <= 1000000),
    ADD COLUMN target_pest_keys text[] NOT NULL DEFAULT '{}',
    ADD COLUMN target_disease_keys text[] NOT NULL DEFAULT '{}';
-- Per treated plant: the crop's EPPO code (from its species) and the BBCH principal stage.
ALTER TABLE ipm_application_plants
    ADD COLUMN eppo_code text CHECK (eppo_code ~ '^[0-9A-Z]{5,6}$'),
    ADD COLUMN bbch_principal smallint CHECK (bbch_principal BETWEEN 0 AND 9);
-- The garden's time zone (IANA name): dated records and exports are in it; null is UTC.
ALTER TABLE garden_settings
    ADD COLUMN timezone text CHECK (char_length(timezone) BETWEEN 1 AND 64);
