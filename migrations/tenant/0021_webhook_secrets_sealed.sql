-- Webhook signing secrets sealed at rest (issue 28): a Fernet token under FERNET_KEY (or, when
-- it is unset, a key derived from JWT_SECRET_KEY), as identity-provider client secrets are
-- (src/auth/sealed.rs). SQL does not hold the key, so this migration cannot seal the existing
-- rows itself: it adds the sealed column and lets the raw one be empty; the delivery worker
-- seals every raw secret of a garden (and clears the raw column) at the start of its next
-- round over that garden, before it signs anything. New and rotated secrets are sealed from the
-- start. The check keeps a row from losing both.
ALTER TABLE webhooks ADD COLUMN secret_encrypted text;
ALTER TABLE webhooks ALTER COLUMN secret DROP NOT NULL;
ALTER TABLE webhooks ADD CONSTRAINT webhooks_secret_kept
    CHECK (secret IS NOT NULL OR secret_encrypted IS NOT NULL);
