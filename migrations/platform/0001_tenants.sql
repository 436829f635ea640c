-- The tenant registry: one row per garden, naming the schema and the server it lives on.
CREATE TABLE platform.tenants (
    id             uuid        PRIMARY KEY,
    slug           text        NOT NULL UNIQUE
                               CHECK (slug ~ '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$'),
    name           text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
    schema_name    text        NOT NULL UNIQUE CHECK (schema_name ~ '^t_[0-9a-f]{32}$'),
    placement      text        NOT NULL DEFAULT 'primary',
    schema_version bigint      NOT NULL DEFAULT 0 CHECK (schema_version >= 0),
    status         text        NOT NULL DEFAULT 'provisioning'
                               CHECK (status IN ('provisioning', 'active', 'suspended')),
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now()
);

-- Every migration run of a tenant schema: who triggered it, from which version to which.
CREATE TABLE platform.tenant_migrations (
    id           bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id    uuid        NOT NULL REFERENCES platform.tenants (id) ON DELETE CASCADE,
    from_version bigint      NOT NULL,
    to_version   bigint      NOT NULL,
    trigger      text        NOT NULL CHECK (trigger IN ('provision', 'on_demand', 'cli')),
    started_at   timestamptz NOT NULL,
    finished_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX tenant_migrations_tenant_idx ON platform.tenant_migrations (tenant_id, started_at);
