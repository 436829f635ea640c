-- Identity: accounts, tenant memberships, API keys and one-time e-mail tokens.
-- Refresh-token families live in Redis (short-lived, shared between replicas); everything that
-- must survive a restart (lockout counters, the logout-all cut-off) lives here.

CREATE TABLE platform.users (
    id                 uuid        PRIMARY KEY,
    -- Lower-cased at write time; service accounts have none.
    email              text        UNIQUE CHECK (email = lower(email) AND char_length(email) BETWEEN 3 AND 254),
    display_name       text        NOT NULL CHECK (char_length(display_name) BETWEEN 1 AND 120),
    account_type       text        NOT NULL DEFAULT 'user'
                                   CHECK (account_type IN ('user', 'service', 'system')),
    password_hash      text,
    email_verified     boolean     NOT NULL DEFAULT false,
    is_active          boolean     NOT NULL DEFAULT true,
    avatar_url         text,
    locale             text        NOT NULL DEFAULT 'en',
    timezone           text        NOT NULL DEFAULT 'UTC',
    last_login_at      timestamptz,
    -- Access tokens carry the generation they were issued under; logout-all and a password
    -- change bump it, which ends every access token issued before.
    token_generation   integer     NOT NULL DEFAULT 0,
    failed_logins      integer     NOT NULL DEFAULT 0,
    lockouts           integer     NOT NULL DEFAULT 0,
    locked_until       timestamptz,
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    CHECK (account_type <> 'user' OR email IS NOT NULL),
    CHECK (account_type = 'user' OR password_hash IS NULL)
);

-- Light mode's system user is one of a kind.
CREATE UNIQUE INDEX users_one_system ON platform.users (account_type) WHERE account_type = 'system';

-- What a tenant is for: a user's own garden, a shared organisation garden, the platform
-- operators' tenant (its admins administer the platform), or light mode's default garden.
ALTER TABLE platform.tenants
    ADD COLUMN kind text NOT NULL DEFAULT 'organisation'
        CHECK (kind IN ('personal', 'organisation', 'platform', 'default'));
CREATE UNIQUE INDEX tenants_one_platform ON platform.tenants (kind) WHERE kind = 'platform';
CREATE UNIQUE INDEX tenants_one_default ON platform.tenants (kind) WHERE kind = 'default';

CREATE TABLE platform.memberships (
    tenant_id  uuid        NOT NULL REFERENCES platform.tenants (id) ON DELETE CASCADE,
    user_id    uuid        NOT NULL REFERENCES platform.users (id) ON DELETE CASCADE,
    role       text        NOT NULL CHECK (role IN ('viewer', 'grower', 'admin')),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, user_id)
);
CREATE INDEX memberships_user_idx ON platform.memberships (user_id);

CREATE TABLE platform.api_keys (
    id              uuid        PRIMARY KEY,
    user_id         uuid        NOT NULL REFERENCES platform.users (id) ON DELETE CASCADE,
    label           text        NOT NULL CHECK (char_length(label) BETWEEN 1 AND 100),
    key_prefix      text        NOT NULL,
    -- SHA-256 of the raw key; the key itself is never stored.
    key_hash        bytea       NOT NULL UNIQUE CHECK (octet_length(key_hash) = 32),
    tenant_scope_id uuid        REFERENCES platform.tenants (id) ON DELETE CASCADE,
    created_at      timestamptz NOT NULL DEFAULT now(),
    last_used_at    timestamptz,
    revoked_at      timestamptz
);
CREATE INDEX api_keys_user_idx ON platform.api_keys (user_id, created_at);

-- One-time tokens sent by e-mail (verification, password reset); only their hash is stored.
CREATE TABLE platform.email_tokens (
    token_hash bytea       PRIMARY KEY CHECK (octet_length(token_hash) = 32),
    user_id    uuid        NOT NULL REFERENCES platform.users (id) ON DELETE CASCADE,
    purpose    text        NOT NULL CHECK (purpose IN ('verify_email', 'password_reset')),
    expires_at timestamptz NOT NULL,
    used_at    timestamptz,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX email_tokens_user_idx ON platform.email_tokens (user_id, purpose);
