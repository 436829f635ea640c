-- Invitations: adding a member to a garden asks the invited address first. An admin invites an
-- e-mail address with a role (up to the admin's own); the answer does not depend on whether an
-- account with that address exists. The invited person accepts (or declines) from their account;
-- the mailed link carries a one-time token of which only the SHA-256 is stored. A pending
-- invitation expires (INVITATION_EXPIRE_DAYS) and is used up by its first answer.
CREATE TABLE platform.invitations (
    id          uuid        PRIMARY KEY,
    tenant_id   uuid        NOT NULL REFERENCES platform.tenants (id) ON DELETE CASCADE,
    email       text        NOT NULL CHECK (email = lower(email) AND char_length(email) BETWEEN 3 AND 254),
    role        text        NOT NULL CHECK (role IN ('viewer', 'grower', 'admin')),
    token_hash  bytea       NOT NULL UNIQUE CHECK (octet_length(token_hash) = 32),
    invited_by  uuid        REFERENCES platform.users (id) ON DELETE SET NULL,
    status      text        NOT NULL DEFAULT 'pending'
                            CHECK (status IN ('pending', 'accepted', 'declined', 'revoked')),
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    answered_at timestamptz,
    CHECK ((status = 'pending') = (answered_at IS NULL))
);
-- One open invitation per garden and address.
CREATE UNIQUE INDEX invitations_one_pending ON platform.invitations (tenant_id, email)
    WHERE status = 'pending';
CREATE INDEX invitations_email_idx ON platform.invitations (email) WHERE status = 'pending';

-- The per-account garden cap (MAX_GARDENS_PER_ACCOUNT) counts the gardens an account created
-- (its personal garden included); gardens from before this column count for nobody.
ALTER TABLE platform.tenants
    ADD COLUMN created_by uuid REFERENCES platform.users (id) ON DELETE SET NULL;
CREATE INDEX tenants_created_by_idx ON platform.tenants (created_by) WHERE created_by IS NOT NULL;
