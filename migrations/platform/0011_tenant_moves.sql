-- Moving a garden between placements (`kultiva tenant move`, src/tenancy/transfer/moving.rs).
-- The garden stays `active` throughout (lists, the tool server and feeds keep seeing it; reads
-- keep going to the source until the switch); these two columns record a move in progress, so
-- a move interrupted at any step is finished or rolled back by running the command again.
--   moving_to  : set while the schema is being copied to that placement (placement = source).
--   moved_from : set by the switch (placement = target) until the source schema is dropped.
-- Every change of a tenant row is announced on the cache feed (0008), these included.
ALTER TABLE platform.tenants
    ADD COLUMN moving_to  text,
    ADD COLUMN moved_from text,
    ADD CONSTRAINT tenants_one_move_step CHECK (moving_to IS NULL OR moved_from IS NULL);
