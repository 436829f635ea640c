-- Companion rules carry how well they are supported (issue 24): `evidence` is `established`
-- (a documented mechanism; an incompatible pair then needs the grower's acknowledgement) or
-- `traditional` (garden lore: advice only). Pairs stored before had no such field: they read as
-- traditional, and say so, until the seed or an editor states otherwise.
UPDATE platform.catalog_records
   SET data = data || '{"evidence": "traditional"}'::jsonb, updated_at = now()
 WHERE kind = 'companion_pair' AND NOT (data ? 'evidence');
