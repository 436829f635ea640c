-- Per-crop safety intervals and resistance by mode of action (issue 24).
-- An application copies, per plant, the interval that applies to the plant's crop and where it
-- comes from (the longest listed for its species, family or crop group, else the treatment's
-- longest), and the classes the resistance rule counts it under: the treatment's resistance
-- groups ("irac 3a"), else its active ingredient; none for releases of beneficial organisms.

ALTER TABLE ipm_applications
    ADD COLUMN resistance_groups text[] NOT NULL DEFAULT '{}';

ALTER TABLE ipm_application_plants
    ADD COLUMN safety_interval_days integer CHECK (safety_interval_days BETWEEN 0 AND 365),
    ADD COLUMN interval_source      text    CHECK (char_length(interval_source) <= 400),
    ADD COLUMN resistance_classes   text[]  NOT NULL DEFAULT '{}';

UPDATE ipm_application_plants ap
   SET safety_interval_days = a.safety_interval_days
  FROM ipm_applications a
 WHERE a.id = ap.application_id;
ALTER TABLE ipm_application_plants ALTER COLUMN safety_interval_days SET NOT NULL;

-- Intervals recorded with the catalogue's old, too short values (spinosad 3 days, copper 7, …)
-- are lengthened to the reference floor of their ingredient (domain 2.1): the safer value holds.
WITH floors (word, days) AS (
    VALUES ('pyrethr', 7), ('azadirachtin', 3), ('neem', 3), ('spinosad', 14),
           ('phosphorous acid', 21), ('phosphonate', 21), ('potassium salts of fatty acids', 1),
           ('potassium soap', 1), ('copper', 21), ('bordeaux', 21), ('sulphur', 7),
           ('sulfur', 7), ('paraffin', 7)
), need AS (
    SELECT a.id, max(f.days) AS days
      FROM ipm_applications a
      JOIN floors f ON lower(a.active_ingredient) LIKE '%' || f.word || '%'
     GROUP BY a.id
), lengthened AS (
    UPDATE ipm_application_plants ap
       SET safety_interval_days = need.days,
           safe_on = ap.applied_on + need.days,
           interval_source = 'Kultiva domain reference 2.1: raised to the floor of the ingredient'
      FROM need
     WHERE need.id = ap.application_id AND ap.safety_interval_days < need.days
    RETURNING ap.application_id, need.days
)
UPDATE ipm_applications a
   SET safety_interval_days = l.days
  FROM (SELECT DISTINCT application_id, days FROM lengthened) l
 WHERE a.id = l.application_id;

-- Earlier applications count under the groups of the seeded ingredients; releases of
-- beneficial organisms never count.
UPDATE ipm_application_plants
   SET resistance_classes = CASE
       WHEN ingredient_class IS NULL THEN '{}'::text[]
       WHEN ingredient_class ~ '(predatory|parasitic wasp|nematode|ladybird|lacewing|gall midge|mealybug destroyer)'
           THEN '{}'::text[]
       WHEN ingredient_class IN ('pyrethrins + rapeseed oil', 'deltamethrin') THEN '{irac 3a}'::text[]
       WHEN ingredient_class = 'spinosad' THEN '{irac 5}'::text[]
       WHEN ingredient_class = 'acetamiprid' THEN '{irac 4a}'::text[]
       WHEN ingredient_class = 'abamectin' THEN '{irac 6}'::text[]
       WHEN ingredient_class IN ('bacillus thuringiensis subsp. kurstaki', 'bacillus thuringiensis subsp. israelensis')
           THEN '{irac 11a}'::text[]
       WHEN ingredient_class = 'cydia pomonella granulovirus (cpgv)' THEN '{irac 31}'::text[]
       WHEN ingredient_class IN ('copper hydroxide', 'copper octanoate') THEN '{frac m1}'::text[]
       WHEN ingredient_class = 'sulphur' THEN '{frac m2}'::text[]
       WHEN ingredient_class IN ('tebuconazole', 'difenoconazole') THEN '{frac 3}'::text[]
       WHEN ingredient_class = 'azoxystrobin' THEN '{frac 11}'::text[]
       WHEN ingredient_class = 'fenhexamid' THEN '{frac 17}'::text[]
       WHEN ingredient_class = 'cyprodinil + fludioxonil' THEN '{frac 12,frac 9}'::text[]
       WHEN ingredient_class IN ('bacillus subtilis strain qst 713', 'trichoderma harzianum t-22')
           THEN '{frac bm02}'::text[]
       ELSE ARRAY[ingredient_class]
   END;
