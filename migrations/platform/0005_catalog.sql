-- Master-data catalogue: global records every garden reads (species, families, cultivars,
-- pests, diseases, treatments, phases and sequences, kits, glossary, zones, companions,
-- rotation rules, overwintering profiles). One document table keyed by kind: the fields of a
-- kind are checked by its field table in the application (src/catalog/kinds), so the many
-- sparsely filled columns of the domain do not become hundreds of nullable SQL columns.

CREATE TABLE platform.catalog_records (
    id          uuid        PRIMARY KEY,
    kind        text        NOT NULL CHECK (kind ~ '^[a-z_]{1,40}$'),
    -- Display name and its normalised form (lower case, whitespace folded, × = x); the natural
    -- key of seed and import upserts. Scoped kinds prefix it with their scope's key.
    name        text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 400),
    name_norm   text        NOT NULL CHECK (char_length(name_norm) BETWEEN 1 AND 400),
    -- Normalised names, common names and aliases: what `q` searches.
    search_text text        NOT NULL DEFAULT '',
    data        jsonb       NOT NULL CHECK (jsonb_typeof(data) = 'object'),
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (kind, name_norm)
);
-- Filters are containment tests on the document.
CREATE INDEX catalog_records_data_idx ON platform.catalog_records USING gin (data jsonb_path_ops);

-- References between records (a species' family, a treatment's targets, a kit's species, a
-- species' bound phase sequence). A record still referenced cannot be deleted.
CREATE TABLE platform.catalog_links (
    owner_id  uuid    NOT NULL REFERENCES platform.catalog_records (id) ON DELETE CASCADE,
    field     text    NOT NULL,
    position  integer NOT NULL,
    target_id uuid    NOT NULL REFERENCES platform.catalog_records (id) ON DELETE RESTRICT,
    PRIMARY KEY (owner_id, field, target_id)
);
CREATE INDEX catalog_links_target_idx ON platform.catalog_links (target_id, field);

-- Knowledge search: the long texts of records (species profiles and care guides, glossary
-- definitions, pest and disease texts), one row per section and language, with a weighted
-- full-text vector in the language's configuration.
CREATE TABLE platform.knowledge_documents (
    record_id uuid NOT NULL REFERENCES platform.catalog_records (id) ON DELETE CASCADE,
    section   text NOT NULL,
    language  text NOT NULL CHECK (language IN ('de', 'en')),
    title     text NOT NULL,
    body      text NOT NULL,
    tsv       tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector(CASE language WHEN 'de' THEN 'german'::regconfig ELSE 'english'::regconfig END, title), 'A')
        || setweight(to_tsvector(CASE language WHEN 'de' THEN 'german'::regconfig ELSE 'english'::regconfig END, body), 'B')
    ) STORED,
    PRIMARY KEY (record_id, section, language)
);
CREATE INDEX knowledge_documents_tsv_idx ON platform.knowledge_documents USING gin (tsv);

-- CSV imports of master data: the uploaded file, its preview with row errors, and what
-- confirming did.
CREATE TABLE platform.catalog_imports (
    id           uuid        PRIMARY KEY,
    kind         text        NOT NULL,
    status       text        NOT NULL CHECK (status IN ('previewed', 'confirmed')),
    csv          text        NOT NULL,
    row_count    integer     NOT NULL CHECK (row_count >= 0),
    errors       jsonb       NOT NULL,
    preview      jsonb       NOT NULL,
    summary      jsonb,
    created_at   timestamptz NOT NULL DEFAULT now(),
    confirmed_at timestamptz
);
CREATE INDEX catalog_imports_created_idx ON platform.catalog_imports (created_at DESC);
