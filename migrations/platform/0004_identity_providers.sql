-- OAuth 2.0 / OIDC identity providers offered on the login page. The client secret is kept only
-- as a Fernet token under FERNET_KEY (never in clear text, never returned by the API).

CREATE TABLE platform.identity_providers (
    slug                    text        PRIMARY KEY
                                        CHECK (slug ~ '^[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?$'),
    display_name            text        NOT NULL CHECK (char_length(display_name) BETWEEN 1 AND 100),
    icon_url                text        CHECK (char_length(icon_url) <= 2000),
    authorize_url           text        NOT NULL CHECK (char_length(authorize_url) <= 2000),
    token_url               text        NOT NULL CHECK (char_length(token_url) <= 2000),
    client_id               text        NOT NULL CHECK (char_length(client_id) BETWEEN 1 AND 200),
    client_secret_encrypted text        NOT NULL,
    scopes                  text        NOT NULL CHECK (char_length(scopes) BETWEEN 1 AND 500),
    created_at              timestamptz NOT NULL DEFAULT now()
);
