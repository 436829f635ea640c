-- Cache invalidation: every committed change that an in-process cache of a replica may hold
-- is announced on the channel `kultiva_cache` (src/cache). NOTIFY is transactional: it is
-- delivered when (and only if) the writing transaction commits, so no replica reloads a row
-- before the change is visible, and every writer (services, the CLI, psql) announces it.
-- Payloads: u:<user>, m:<tenant>:<user>, t:<tenant>, k:<api key>, c (catalogue).

CREATE FUNCTION platform.cache_notify_row() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    r record;
BEGIN
    IF TG_OP = 'DELETE' THEN r := OLD; ELSE r := NEW; END IF;
    IF TG_TABLE_NAME = 'users' THEN
        PERFORM pg_notify('kultiva_cache', 'u:' || r.id);
    ELSIF TG_TABLE_NAME = 'memberships' THEN
        PERFORM pg_notify('kultiva_cache', 'm:' || r.tenant_id || ':' || r.user_id);
        IF TG_OP = 'UPDATE' AND (OLD.tenant_id, OLD.user_id) IS DISTINCT FROM (NEW.tenant_id, NEW.user_id) THEN
            PERFORM pg_notify('kultiva_cache', 'm:' || OLD.tenant_id || ':' || OLD.user_id);
        END IF;
    ELSIF TG_TABLE_NAME = 'tenants' THEN
        PERFORM pg_notify('kultiva_cache', 't:' || r.id);
    ELSIF TG_TABLE_NAME = 'api_keys' THEN
        PERFORM pg_notify('kultiva_cache', 'k:' || r.id);
    END IF;
    RETURN NULL;
END
$$;

-- Login failures (counters, lock) and the key's use stamp are not cached: no announcement,
-- so a password-guessing run does not flood every replica. Any other column, including
-- columns added later, is announced.
CREATE TRIGGER users_cache_notify
    AFTER UPDATE ON platform.users FOR EACH ROW
    WHEN ((to_jsonb(OLD) - ARRAY['failed_logins', 'lockouts', 'locked_until', 'updated_at'])
          IS DISTINCT FROM
          (to_jsonb(NEW) - ARRAY['failed_logins', 'lockouts', 'locked_until', 'updated_at']))
    EXECUTE FUNCTION platform.cache_notify_row();
CREATE TRIGGER users_cache_notify_delete
    AFTER DELETE ON platform.users FOR EACH ROW
    EXECUTE FUNCTION platform.cache_notify_row();

CREATE TRIGGER memberships_cache_notify
    AFTER UPDATE OR DELETE ON platform.memberships FOR EACH ROW
    EXECUTE FUNCTION platform.cache_notify_row();

CREATE TRIGGER tenants_cache_notify
    AFTER UPDATE OR DELETE ON platform.tenants FOR EACH ROW
    EXECUTE FUNCTION platform.cache_notify_row();

CREATE TRIGGER api_keys_cache_notify
    AFTER UPDATE ON platform.api_keys FOR EACH ROW
    WHEN ((to_jsonb(OLD) - 'last_used_at') IS DISTINCT FROM (to_jsonb(NEW) - 'last_used_at'))
    EXECUTE FUNCTION platform.cache_notify_row();
CREATE TRIGGER api_keys_cache_notify_delete
    AFTER DELETE ON platform.api_keys FOR EACH ROW
    EXECUTE FUNCTION platform.cache_notify_row();

-- The catalogue: one announcement per statement (a seed run sends a handful; PostgreSQL also
-- folds identical notifications of one transaction into one).
CREATE FUNCTION platform.cache_notify_catalog() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('kultiva_cache', 'c');
    RETURN NULL;
END
$$;

CREATE TRIGGER catalog_records_cache_notify
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON platform.catalog_records
    FOR EACH STATEMENT EXECUTE FUNCTION platform.cache_notify_catalog();
CREATE TRIGGER catalog_links_cache_notify
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON platform.catalog_links
    FOR EACH STATEMENT EXECUTE FUNCTION platform.cache_notify_catalog();
