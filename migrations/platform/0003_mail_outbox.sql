-- The mail outbox: account mails are written here in the transaction that causes them (so a mail
-- exists only if that transaction commits) and delivered by a background worker in every serving
-- process. A worker claims due rows with FOR UPDATE SKIP LOCKED and leases them ('sending' with
-- next_attempt_at = lease end), so replicas never send one mail twice; a lease that runs out
-- (crashed worker) makes the row due again.
CREATE TABLE platform.mail_outbox (
    id              uuid        PRIMARY KEY,
    recipient       text        NOT NULL CHECK (char_length(recipient) BETWEEN 3 AND 254),
    subject         text        NOT NULL CHECK (char_length(subject) BETWEEN 1 AND 200),
    -- Holds one-time links: wiped once the mail is delivered, logged or given up.
    body_text       text        CHECK (char_length(body_text) <= 100000),
    kind            text        NOT NULL CHECK (kind ~ '^[a-z][a-z_]{0,39}$'),
    status          text        NOT NULL DEFAULT 'queued'
                                CHECK (status IN ('queued', 'sending', 'sent', 'logged', 'failed')),
    attempts        integer     NOT NULL DEFAULT 0 CHECK (attempts BETWEEN 0 AND 100),
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    last_error      text        CHECK (char_length(last_error) <= 1000),
    created_at      timestamptz NOT NULL DEFAULT now(),
    sent_at         timestamptz,
    CHECK ((status IN ('sent', 'logged')) = (sent_at IS NOT NULL)),
    CHECK (status NOT IN ('queued', 'sending') OR body_text IS NOT NULL),
    CHECK (status IN ('queued', 'sending') OR body_text IS NULL)
);

-- The worker's claim: due rows of the open states, oldest due first.
CREATE INDEX mail_outbox_due_idx ON platform.mail_outbox (next_attempt_at)
    WHERE status IN ('queued', 'sending');
-- Clean-up of finished rows by age.
CREATE INDEX mail_outbox_created_idx ON platform.mail_outbox (created_at);
