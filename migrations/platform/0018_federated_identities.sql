-- Sign-in with OpenID providers: where a provider's endpoints come from, whether it takes new
-- logins, and the accounts' federated identities.

-- `issuer`: the OpenID issuer; with `authorize_url`, `token_url` and `jwks_url` all empty the
-- endpoints come from `{issuer}/.well-known/openid-configuration` (discovery), otherwise all
-- three are given. Rows from before (no issuer) cannot complete a login until one is set.
ALTER TABLE platform.identity_providers
    ALTER COLUMN authorize_url DROP NOT NULL,
    ALTER COLUMN token_url DROP NOT NULL,
    ADD COLUMN issuer            text CHECK (char_length(issuer) <= 2000),
    ADD COLUMN jwks_url          text CHECK (char_length(jwks_url) <= 2000),
    -- How the service authenticates at the token endpoint; NULL: as discovery announces
    -- (client_secret_basic when offered), else client_secret_basic.
    ADD COLUMN token_auth_method text
        CHECK (token_auth_method IN ('client_secret_basic', 'client_secret_post')),
    -- A disabled provider is not offered and finishes no login, also none already started.
    ADD COLUMN enabled           boolean     NOT NULL DEFAULT true,
    ADD COLUMN updated_at        timestamptz NOT NULL DEFAULT now(),
    ADD CONSTRAINT identity_providers_endpoints CHECK (
        (authorize_url IS NULL AND token_url IS NULL AND jwks_url IS NULL)
        OR (authorize_url IS NOT NULL AND token_url IS NOT NULL AND jwks_url IS NOT NULL)
    );

-- One account's sign-in at one provider: the provider's stable subject identifier (`sub`).
-- No provider tokens are kept; `email` is what the provider said at the last login, shown to
-- the user only. A provider with identities cannot be deleted (disable it instead): its users
-- would lose a way to sign in without being asked.
CREATE TABLE platform.federated_identities (
    id            uuid        PRIMARY KEY,
    user_id       uuid        NOT NULL REFERENCES platform.users (id) ON DELETE CASCADE,
    provider      text        NOT NULL REFERENCES platform.identity_providers (slug) ON DELETE RESTRICT,
    subject       text        NOT NULL CHECK (char_length(subject) BETWEEN 1 AND 255),
    email         text        CHECK (char_length(email) <= 254),
    created_at    timestamptz NOT NULL DEFAULT now(),
    last_login_at timestamptz,
    UNIQUE (provider, subject)
);
CREATE INDEX federated_identities_user_idx ON platform.federated_identities (user_id, created_at);
