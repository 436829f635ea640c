-- Every pre-harvest interval names its label (issue 39): an entry of `safety_intervals` now
-- carries `product`, `authority`, optional `registration` and `label_crop` (checked by
-- src/catalog/ipm/model.rs) instead of one free `source` sentence, and nothing cites Kultiva.
-- Entries stored before this change have only the sentence, which cannot be split into a
-- product, an authority and a crop without guessing, and most of them cite Kultiva itself
-- (migration 0012 wrote "Kultiva catalogue value …" and "Kultiva domain reference …"). They
-- are removed: a treatment with no label entry for a crop is refused for it (never guessed),
-- the seed brings the seeded treatments back with their labels, and an administrator
-- re-enters other intervals with theirs. `safety_interval_days` stays the longest of what is
-- left (0 when nothing is). Catalogue caches hear the change (trigger of migration 0008).

WITH entries AS (
    SELECT r.id, x.e, x.ord,
           x.e ? 'product' AND x.e ? 'authority' AND x.e ? 'label_crop'
               AND x.e::text !~* 'kultiva' AS labelled
      FROM platform.catalog_records r,
           jsonb_array_elements(r.data -> 'safety_intervals') WITH ORDINALITY AS x(e, ord)
     WHERE r.kind = 'treatment'
       AND jsonb_typeof(r.data -> 'safety_intervals') = 'array'
), kept AS (
    SELECT id,
           coalesce(jsonb_agg(e ORDER BY ord) FILTER (WHERE labelled), '[]'::jsonb) AS list,
           coalesce(max((e ->> 'days')::integer) FILTER (WHERE labelled), 0) AS longest,
           bool_and(labelled) AS unchanged
      FROM entries
     GROUP BY id
)
UPDATE platform.catalog_records r
   SET data = CASE WHEN kept.list = '[]'::jsonb THEN r.data - 'safety_intervals'
                   ELSE r.data || jsonb_build_object('safety_intervals', kept.list) END
              || jsonb_build_object('safety_interval_days', kept.longest),
       updated_at = now()
  FROM kept
 WHERE r.id = kept.id
   AND NOT kept.unchanged;
