-- iCal feeds: one secret per member and garden. Only the SHA-256 of the token is kept; the
-- token is shown once (create, rotate). A feed whose member left the garden is not served
-- (the feed route joins the membership), and it goes with the tenant or the user.
CREATE TABLE platform.calendar_feeds (
    id         uuid        PRIMARY KEY,
    tenant_id  uuid        NOT NULL REFERENCES platform.tenants (id) ON DELETE CASCADE,
    user_id    uuid        NOT NULL REFERENCES platform.users (id) ON DELETE CASCADE,
    token_hash bytea       NOT NULL UNIQUE CHECK (octet_length(token_hash) = 32),
    created_at timestamptz NOT NULL DEFAULT now(),
    rotated_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (tenant_id, user_id)
);
CREATE INDEX calendar_feeds_user_idx ON platform.calendar_feeds (user_id);

-- Per-user preferences; a user without a row has the defaults.
CREATE TABLE platform.user_preferences (
    user_id            uuid        PRIMARY KEY REFERENCES platform.users (id) ON DELETE CASCADE,
    units              text        NOT NULL CHECK (units IN ('metric', 'imperial')),
    locale             text        NOT NULL CHECK (locale ~ '^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$' AND char_length(locale) <= 35),
    timezone           text        NOT NULL CHECK (char_length(timezone) BETWEEN 1 AND 64),
    experience_level   text        NOT NULL CHECK (experience_level IN ('beginner', 'intermediate', 'advanced', 'expert')),
    notify_email       boolean     NOT NULL,
    notify_push        boolean     NOT NULL,
    notify_care_due    boolean     NOT NULL,
    notify_digest      text        NOT NULL CHECK (notify_digest IN ('off', 'daily', 'weekly')),
    updated_at         timestamptz NOT NULL DEFAULT now()
);
