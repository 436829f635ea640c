-- Rotation and companion conflicts a grower planted through on purpose (issue 24): each entry
-- {code, message, slot_key, acknowledged_at} is appended when a create or move carries
-- `acknowledge_rotation` / `acknowledge_companions` and the check found a conflict needing it.
ALTER TABLE plants
    ADD COLUMN placement_acknowledgements jsonb NOT NULL DEFAULT '[]'::jsonb
        CHECK (jsonb_typeof(placement_acknowledgements) = 'array');
