-- Pre-harvest intervals per crop, with sources (issue 24). A treatment record now lists its
-- intervals in `safety_intervals` ([{species_key | family_key | crop_group, days, source}],
-- checked by src/catalog/ipm/model.rs) and `safety_interval_days` is the longest of them. The
-- seed replaces the seeded treatments with label sources; this migration makes every record
-- stored before it safe and valid at once: intervals below the reference floor of their
-- ingredient (domain 2.1) are raised to it, and each positive interval gets an entry naming
-- where it came from. Catalogue caches hear the change (trigger of migration 0008).

WITH floors (word, days) AS (
    VALUES ('pyrethr', 7), ('azadirachtin', 3), ('neem', 3), ('spinosad', 14),
           ('phosphorous acid', 21), ('phosphonate', 21), ('potassium salts of fatty acids', 1),
           ('potassium soap', 1), ('copper', 21), ('bordeaux', 21), ('sulphur', 7),
           ('sulfur', 7), ('paraffin', 7)
), raised AS (
    SELECT r.id,
           greatest((r.data ->> 'safety_interval_days')::integer, coalesce(max(f.days), 0)) AS days,
           coalesce(max(f.days), 0) > (r.data ->> 'safety_interval_days')::integer AS floored
      FROM platform.catalog_records r
      LEFT JOIN floors f ON lower(r.data ->> 'active_ingredient') LIKE '%' || f.word || '%'
     WHERE r.kind = 'treatment'
       AND NOT (r.data ? 'safety_intervals')
       AND jsonb_typeof(r.data -> 'safety_interval_days') = 'number'
       AND (r.data ->> 'safety_interval_days')::integer > 0
     GROUP BY r.id, r.data
)
UPDATE platform.catalog_records r
   SET data = r.data || jsonb_build_object(
           'safety_interval_days', raised.days,
           'safety_intervals', jsonb_build_array(jsonb_build_object(
               'days', raised.days,
               'source', CASE WHEN raised.floored
                   THEN 'Kultiva domain reference 2.1 (seeded intervals of ipm.yaml): raised to the floor of the ingredient'
                   ELSE 'Kultiva catalogue value recorded before sources were kept; check the product label'
               END))),
       updated_at = now()
  FROM raised
 WHERE r.id = raised.id;
