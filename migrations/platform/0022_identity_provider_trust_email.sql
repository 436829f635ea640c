-- Whether a provider's `email_verified` may join a sign-in to an existing, confirmed local
-- account with the same address, and confirm the address of an account it opens. Off by
-- default: a provider that lets its users set their own address (the "nOAuth" class) must
-- not take over local accounts. The platform admin turns it on for providers that confirm
-- addresses themselves.
ALTER TABLE platform.identity_providers
    ADD COLUMN trust_email boolean NOT NULL DEFAULT false;
