-- Webhooks (issue 28): endpoints, the event outbox and the delivery attempts of one garden.

-- An endpoint. The secret is the raw key (24 random bytes) shown once as `whsec_<base64>`;
-- it is needed to sign, so it is kept as is.
CREATE TABLE webhooks (
    id              uuid        PRIMARY KEY,
    url             text        NOT NULL CHECK (char_length(url) BETWEEN 1 AND 2000),
    events          text[]      NOT NULL,
    description     text        CHECK (description IS NULL OR char_length(description) <= 500),
    secret          bytea       NOT NULL CHECK (octet_length(secret) BETWEEN 24 AND 64),
    enabled         boolean     NOT NULL DEFAULT true,
    disabled_reason text,
    created_by      uuid,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);

-- The event outbox: written by the change's own transaction, only when an enabled endpoint
-- takes the event type (so a garden without webhooks writes nothing).
CREATE TABLE webhook_events (
    id         uuid        PRIMARY KEY,
    type       text        NOT NULL,
    payload    jsonb       NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- One delivery per event and endpoint; the worker takes the oldest pending one per endpoint
-- (in order), leases it (`locked_until`) and counts the attempt.
CREATE TABLE webhook_deliveries (
    id               uuid        PRIMARY KEY,
    event_id         uuid        NOT NULL REFERENCES webhook_events (id) ON DELETE CASCADE,
    webhook_id       uuid        NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    status           text        NOT NULL DEFAULT 'pending'
                                 CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts         integer     NOT NULL DEFAULT 0,
    next_attempt_at  timestamptz NOT NULL DEFAULT now(),
    locked_until     timestamptz,
    last_status_code integer,
    last_error       text,
    -- clock_timestamp(): events of one transaction keep their order.
    created_at       timestamptz NOT NULL DEFAULT clock_timestamp(),
    finished_at      timestamptz
);
CREATE INDEX webhook_deliveries_pending_idx ON webhook_deliveries (webhook_id, created_at, id)
    WHERE status = 'pending';
CREATE INDEX webhook_deliveries_recent_idx ON webhook_deliveries (webhook_id, created_at DESC);

-- Every attempt: when, how long, the answer's code and (clipped, kept for a bounded time) body.
CREATE TABLE webhook_attempts (
    id            uuid        PRIMARY KEY,
    delivery_id   uuid        NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    attempt       integer     NOT NULL,
    started_at    timestamptz NOT NULL DEFAULT now(),
    duration_ms   integer     NOT NULL,
    response_code integer,
    response_body text,
    error         text
);
CREATE INDEX webhook_attempts_delivery_idx ON webhook_attempts (delivery_id, attempt);
