-- Who made a service account (the person whose access token created it). Taking an account
-- back (password reset, first confirmation of its address) deactivates the service accounts
-- it made; removing or demoting a member ends those it made in that garden. Service accounts
-- from before this column, and those made by the operator CLI, have no maker.
ALTER TABLE platform.users
    ADD COLUMN created_by uuid REFERENCES platform.users (id) ON DELETE SET NULL;
CREATE INDEX users_created_by_idx ON platform.users (created_by) WHERE created_by IS NOT NULL;
