-- Notifications (issue 28): the digest's hour, the digest sent-record, the gardens with webhooks.

-- The local hour (0-23, the user's time zone) from which the day's digest is sent; default 07:00.
ALTER TABLE platform.user_preferences
    ADD COLUMN digest_hour smallint NOT NULL DEFAULT 7 CHECK (digest_hour BETWEEN 0 AND 23);

-- One row per user and local day a digest went out for. The primary key is what makes exactly
-- one replica (or one CLI run) send it: the sender inserts the row with ON CONFLICT DO NOTHING
-- in the same transaction as the outbox mail, and sends nothing when the row was there.
CREATE TABLE platform.digest_sent (
    user_id    uuid        NOT NULL REFERENCES platform.users (id) ON DELETE CASCADE,
    local_date date        NOT NULL,
    mail_id    uuid,
    items      integer     NOT NULL DEFAULT 0,
    sent_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, local_date)
);

-- Gardens that have (or had) a webhook endpoint: the delivery worker looks into these schemas
-- only. A row is added when a garden's first webhook is created and stays (cheap to poll).
CREATE TABLE platform.webhook_gardens (
    tenant_id  uuid        PRIMARY KEY REFERENCES platform.tenants (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now()
);
