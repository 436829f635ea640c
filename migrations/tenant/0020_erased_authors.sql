-- Erasure of an account (issue 29): a diary entry whose author erased their account stays with
-- the garden, written by `deleted` (author_id is then the nil UUID).
ALTER TABLE diary_entries DROP CONSTRAINT diary_entries_author_kind_check;
ALTER TABLE diary_entries ADD CONSTRAINT diary_entries_author_kind_check
    CHECK (author_kind IN ('user', 'service', 'deleted'));
