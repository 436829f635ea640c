-- The tool server's audit log: one row per tool call (success, error, denied, dry run, replay).
-- Arguments are never stored, only the SHA-256 of their canonical JSON. Rows older than 90 days
-- are deleted by the audit worker of every serving process.
CREATE TABLE platform.mcp_audit_log (
    id             bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id     uuid        NOT NULL,
    api_key_id     uuid,
    tenant_id      uuid,
    tool_name      text        NOT NULL CHECK (char_length(tool_name) BETWEEN 1 AND 100),
    input_hash     text        NOT NULL CHECK (input_hash ~ '^[0-9a-f]{64}$'),
    response_bytes integer     NOT NULL CHECK (response_bytes >= 0),
    duration_ms    integer     NOT NULL CHECK (duration_ms >= 0),
    status         text        NOT NULL
                               CHECK (status IN ('ok', 'error', 'denied', 'dry_run', 'replay')),
    error_class    text        CHECK (char_length(error_class) <= 100),
    created_at     timestamptz NOT NULL DEFAULT now(),
    CHECK ((status IN ('ok', 'dry_run', 'replay')) = (error_class IS NULL))
);

-- A caller's own history, newest first.
CREATE INDEX mcp_audit_log_account_idx ON platform.mcp_audit_log (account_id, created_at DESC, id DESC);
-- The retention purge.
CREATE INDEX mcp_audit_log_created_idx ON platform.mcp_audit_log (created_at);
