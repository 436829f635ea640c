-- A deleted garden's photo folder (issue 25): written in the same transaction that deletes the
-- garden's registry row, so the files of a garden that is gone are always either removed or
-- still named here. `src/garden/photos/cleanup.rs` removes `<storage>/<tenant id>/` and then
-- the row. No foreign key: the tenant row is gone by design.
CREATE TABLE platform.photo_storage_deletions (
    tenant_id  uuid        PRIMARY KEY,
    storage    text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
