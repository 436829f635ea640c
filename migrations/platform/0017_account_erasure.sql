-- Erasure of an account (issue 29): an account without a password confirms its erasure with a
-- one-time link mailed to its address, kept like the other e-mail tokens (digest only).
ALTER TABLE platform.email_tokens DROP CONSTRAINT email_tokens_purpose_check;
ALTER TABLE platform.email_tokens ADD CONSTRAINT email_tokens_purpose_check
    CHECK (purpose IN ('verify_email', 'password_reset', 'confirm_erasure'));
