-- Web Push (issue 28 item 6): a person's browser subscriptions, one row per push endpoint.
-- The endpoint URL is a capability of the push service (anyone holding it may send to the
-- browser, encrypted or not), and p256dh/auth are the browser's keys: the API never answers them
-- in full, and the personal export names the endpoint's host only.
CREATE TABLE platform.push_subscriptions (
    id            uuid        PRIMARY KEY,
    -- Erasure deletes the user row; the subscriptions go with it.
    user_id       uuid        NOT NULL REFERENCES platform.users (id) ON DELETE CASCADE,
    endpoint      text        NOT NULL,
    endpoint_host text        NOT NULL,
    -- The browser's P-256 public key (65 bytes, uncompressed point) and authentication secret
    -- (16 bytes), both base64url without padding as the Push API hands them out.
    p256dh        text        NOT NULL,
    auth          text        NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    last_sent_at  timestamptz,
    UNIQUE (user_id, endpoint)
);
CREATE INDEX push_subscriptions_user ON platform.push_subscriptions (user_id, created_at);
