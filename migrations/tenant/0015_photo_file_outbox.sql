-- Photo files that must go (issue 25): a photo row deleted by any path (the photo route, its
-- entry deleted, the entry's plant or run deleted by cascade) leaves its id here, in the same
-- transaction as the delete, so a crash between the commit and the file removal leaves a
-- record, never a forgotten file. `src/garden/photos/cleanup.rs` removes the files and then the
-- row (right after the delete, and again on its periodic sweep).
CREATE TABLE photo_file_outbox (
    photo_id   uuid        PRIMARY KEY,
    deleted_at timestamptz NOT NULL DEFAULT now()
);

-- The trigger names its own schema (TG_TABLE_SCHEMA): requests run without a search_path.
CREATE FUNCTION photo_file_outbox_enqueue() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('INSERT INTO %I.photo_file_outbox (photo_id) VALUES ($1) ON CONFLICT DO NOTHING',
                   TG_TABLE_SCHEMA)
        USING OLD.id;
    RETURN OLD;
END
$$;

CREATE TRIGGER diary_photos_file_outbox
    AFTER DELETE ON diary_photos
    FOR EACH ROW EXECUTE FUNCTION photo_file_outbox_enqueue();
