//! Running on a Citus coordinator (README "Citus"): gardens are Citus distributed schemas
//! (schema-based sharding), the `platform` schema stays an ordinary schema of the coordinator.
//!
//! Nothing here is configured: a placement is a Citus coordinator when its database has the
//! `citus` extension, and the same binary runs unchanged on plain PostgreSQL (every function
//! here either asks first or is harmless there).
//!
//! - **Platform migrations** run with `citus.enable_schema_based_sharding` and
//!   `citus.enable_ddl_propagation` off for their session: `CREATE SCHEMA IF NOT EXISTS
//!   platform` would otherwise make the registry a distributed schema, and Citus would send
//!   the platform's functions and types to the workers as whole multi-statement strings.
//!   On plain PostgreSQL these are placeholder settings nobody reads.
//! - **Tenant migrations** create the garden's schema with schema-based sharding on (so it is
//!   a distributed schema placed on a worker) and run each migration one statement at a time
//!   in its transaction ([`split_statements`]): Citus propagates every DDL statement on a
//!   distributed schema to the worker and refuses a string of several. The ledger
//!   (`_sqlx_migrations`) keeps sqlx's shape and checksums, so a schema migrated here is one
//!   sqlx would accept.
//! - **Moves** between workers are `citus_schema_move` ([`schema_move`]).

use std::time::Instant;

use sqlx::migrate::Migration;
use sqlx::{Connection, PgConnection};

use super::names::SchemaName;

/// True when the database of this connection is a Citus coordinator (or worker): the
/// `citus` extension is installed in it.
pub async fn is_citus(conn: &mut PgConnection) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')")
        .fetch_one(conn)
        .await
}

/// Session settings for the platform's migrations: the platform schema and everything in it
/// stay local to the coordinator. Placeholders on plain PostgreSQL.
pub async fn keep_platform_local(conn: &mut PgConnection) -> Result<(), sqlx::Error> {
    sqlx::raw_sql(
        "SET citus.enable_schema_based_sharding = off; SET citus.enable_ddl_propagation = off",
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// Session settings for a garden's migrations on Citus: its schema becomes a distributed
/// schema, and the one trigger of the tenant schema (`photo_file_outbox_enqueue`, which
/// writes a table of the same schema, so of the same shard group on the same worker) is
/// allowed on its distributed table.
pub async fn distribute_tenant_schemas(conn: &mut PgConnection) -> Result<(), sqlx::Error> {
    sqlx::raw_sql(
        "SET citus.enable_schema_based_sharding = on; SET citus.enable_unsafe_triggers = on",
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// What a byte of SQL text is: code, inside a quote (string, quoted identifier, dollar
/// quote), or inside a comment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lexeme {
    Code,
    Quoted,
    Comment,
}

/// Classifies every byte of `sql` (see [`Lexeme`]); the quote characters themselves are
/// `Quoted`.
fn classify(sql: &str) -> Vec<Lexeme> {
    let bytes = sql.as_bytes();
    let mut kinds = vec![Lexeme::Code; bytes.len()];
    let mut i = 0;
    let mark = |kinds: &mut [Lexeme], from: usize, to: usize, kind| {
        for k in &mut kinds[from..to.min(bytes.len())] {
            *k = kind;
        }
    };
    while i < bytes.len() {
        let from = i;
        match bytes[i] {
            b'-' if bytes.get(i + 1) == Some(&b'-') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                mark(kinds.as_mut_slice(), from, i, Lexeme::Comment);
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                let mut depth = 1;
                i += 2;
                while i < bytes.len() && depth > 0 {
                    if bytes[i] == b'/' && bytes.get(i + 1) == Some(&b'*') {
                        depth += 1;
                        i += 2;
                    } else if bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/') {
                        depth -= 1;
                        i += 2;
                    } else {
                        i += 1;
                    }
                }
                mark(kinds.as_mut_slice(), from, i, Lexeme::Comment);
                continue;
            }
            b'\'' => {
                // E'…' strings take backslash escapes; standard strings only ''.
                let escapes = i > 0 && matches!(bytes[i - 1], b'E' | b'e');
                i += 1;
                while i < bytes.len() {
                    if escapes && bytes[i] == b'\\' {
                        i += 2;
                        continue;
                    }
                    if bytes[i] == b'\'' {
                        if bytes.get(i + 1) == Some(&b'\'') {
                            i += 2;
                            continue;
                        }
                        break;
                    }
                    i += 1;
                }
                i += 1;
                mark(kinds.as_mut_slice(), from, i, Lexeme::Quoted);
                continue;
            }
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += 1;
                }
                i += 1;
                mark(kinds.as_mut_slice(), from, i, Lexeme::Quoted);
                continue;
            }
            b'$' => {
                // $tag$ … $tag$ (the tag: letters, digits, underscores, not starting with a
                // digit; `$1` is a parameter, not a quote).
                let tag_end = bytes[i + 1..]
                    .iter()
                    .position(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
                    .map(|p| i + 1 + p);
                if let Some(end) = tag_end
                    && bytes[end] == b'$'
                    && !bytes.get(i + 1).is_some_and(u8::is_ascii_digit)
                {
                    let tag = &sql[i..=end];
                    i = match sql[end + 1..].find(tag) {
                        Some(close) => end + 1 + close + tag.len(),
                        None => bytes.len(),
                    };
                    mark(kinds.as_mut_slice(), from, i, Lexeme::Quoted);
                    continue;
                }
            }
            _ => {}
        }
        i += 1;
    }
    kinds
}

/// Splits `sql` at every byte `at` that is code outside parentheses; pieces that hold only
/// whitespace and comments are left out, the others trimmed.
fn split_top_level(sql: &str, at: u8) -> Vec<&str> {
    let kinds = classify(sql);
    let bytes = sql.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    let mut depth = 0i32;
    let mut has_code = false;
    for (i, (&b, &kind)) in bytes.iter().zip(&kinds).enumerate() {
        match kind {
            Lexeme::Comment => continue,
            Lexeme::Quoted => has_code = true,
            Lexeme::Code => match b {
                b'(' => {
                    depth += 1;
                    has_code = true;
                }
                b')' => {
                    depth -= 1;
                    has_code = true;
                }
                b if b == at && depth == 0 => {
                    if has_code {
                        out.push(sql[start..i].trim());
                    }
                    start = i + 1;
                    has_code = false;
                }
                b if !b.is_ascii_whitespace() => has_code = true,
                _ => {}
            },
        }
    }
    if has_code {
        out.push(sql[start..].trim());
    }
    out
}

/// Splits a migration file into its statements, at every `;` outside quotes, dollar quotes and
/// comments. Statements that are only whitespace and comments are left out.
pub fn split_statements(sql: &str) -> Vec<&str> {
    split_top_level(sql, b';')
}

/// The statements Citus runs for one statement of a migration file. Citus refuses an
/// `ALTER TABLE` on a distributed table that adds a constraint beside other subcommands
/// ("cannot execute ADD CONSTRAINT command with other subcommands"), so an `ALTER TABLE` of
/// several subcommands becomes one `ALTER TABLE` per subcommand, in order, in the same
/// transaction: the same end state. Every other statement is kept as it is.
pub fn citus_statements(statement: &str) -> Vec<String> {
    // Leading comments are not part of the command.
    let kinds = classify(statement);
    let code_start = statement
        .bytes()
        .zip(&kinds)
        .position(|(b, k)| *k != Lexeme::Comment && !b.is_ascii_whitespace())
        .unwrap_or(statement.len());
    let body = &statement[code_start..];
    let words: Vec<&str> = body.split_whitespace().take(6).collect();
    let upper: Vec<String> = words.iter().map(|w| w.to_ascii_uppercase()).collect();
    if upper.len() < 4 || upper[0] != "ALTER" || upper[1] != "TABLE" {
        return vec![statement.to_owned()];
    }
    // ALTER TABLE [IF EXISTS] [ONLY] name <subcommands>
    let mut name_at = 2;
    if upper[2] == "IF" && upper.get(3).map(String::as_str) == Some("EXISTS") {
        name_at = 4;
    }
    if upper.get(name_at).map(String::as_str) == Some("ONLY") {
        name_at += 1;
    }
    let Some(name) = words.get(name_at) else {
        return vec![statement.to_owned()];
    };
    if name.contains('"') || name.contains(',') || name.contains('(') {
        return vec![statement.to_owned()];
    }
    let head_len = body
        .match_indices(*name)
        .next()
        .map_or(0, |(at, _)| at + name.len());
    let head = &body[..head_len];
    let table = name.rsplit('.').next().unwrap_or(name);
    let parts = split_top_level(&body[head_len..], b',');
    if parts.len() < 2 {
        let part = parts.first().copied().unwrap_or_default();
        return match name_column_constraints(table, part) {
            Some(named) => vec![format!("{head} {named}")],
            None => vec![statement.to_owned()],
        };
    }
    parts
        .into_iter()
        .map(|part| {
            let part = name_column_constraints(table, part).unwrap_or_else(|| part.to_owned());
            format!("{head} {part}")
        })
        .collect()
}

/// Words outside quotes, comments and parentheses, with their byte offsets.
fn top_level_words(sql: &str) -> Vec<(usize, &str)> {
    let kinds = classify(sql);
    let bytes = sql.as_bytes();
    let mut words = Vec::new();
    let mut depth = 0i32;
    let mut i = 0;
    while i < bytes.len() {
        if kinds[i] != Lexeme::Code {
            i += 1;
            continue;
        }
        match bytes[i] {
            b'(' => depth += 1,
            b')' => depth -= 1,
            b if b.is_ascii_alphabetic() || b == b'_' => {
                let start = i;
                while i < bytes.len()
                    && kinds[i] == Lexeme::Code
                    && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_' || bytes[i] == b'$')
                {
                    i += 1;
                }
                if depth == 0 {
                    words.push((start, &sql[start..i]));
                }
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    words
}

/// PostgreSQL's name for a constraint it names itself (`makeObjectName`: `table_column_label`,
/// the longer of table and column shortened until it fits in 63 bytes).
fn default_constraint_name(table: &str, column: &str, label: &str) -> String {
    let (mut t, mut c) = (table.len(), column.len());
    let avail = 63 - (label.len() + 1) - 1;
    while t + c > avail {
        if t > c {
            t -= 1;
        } else {
            c -= 1;
        }
    }
    let cut = |s: &str, n: usize| {
        let mut n = n;
        while !s.is_char_boundary(n) {
            n -= 1;
        }
        s[..n].to_owned()
    };
    format!("{}_{}_{label}", cut(table, t), cut(column, c))
}

/// An `ADD COLUMN` subcommand whose column constraints (`CHECK`, `REFERENCES`, `UNIQUE`) have
/// no name, with the names PostgreSQL would give them written in: Citus refuses unnamed
/// constraints there ("all constraints in Citus must have explicit names"), and the names are
/// the ones the same migration gets on plain PostgreSQL, so both schemas agree. `None` when
/// there is nothing to name.
fn name_column_constraints(table: &str, part: &str) -> Option<String> {
    let words = top_level_words(part);
    let upper: Vec<String> = words.iter().map(|(_, w)| w.to_ascii_uppercase()).collect();
    if upper.first().map(String::as_str) != Some("ADD") {
        return None;
    }
    let mut at = 1;
    if upper.get(at).map(String::as_str) == Some("COLUMN") {
        at += 1;
    }
    if upper.get(at).map(String::as_str) == Some("IF") {
        at += 3;
    }
    if matches!(
        upper.get(at).map(String::as_str),
        Some("CONSTRAINT" | "CHECK" | "UNIQUE" | "PRIMARY" | "FOREIGN" | "EXCLUDE")
    ) {
        return None; // ADD [CONSTRAINT] …: a table constraint, not a column
    }
    let column = words.get(at)?.1;
    let mut inserts = Vec::new();
    for (k, word) in upper.iter().enumerate().skip(at + 1) {
        let label = match word.as_str() {
            "CHECK" => "check",
            "REFERENCES" => "fkey",
            "UNIQUE" => "key",
            _ => continue,
        };
        let named = k >= 2 && upper[k - 2] == "CONSTRAINT";
        if !named {
            inserts.push((words[k].0, default_constraint_name(table, column, label)));
        }
    }
    if inserts.is_empty() {
        return None;
    }
    let mut out = part.to_owned();
    for (offset, name) in inserts.into_iter().rev() {
        out.insert_str(offset, &format!("CONSTRAINT {name} "));
    }
    Some(out)
}

/// The ledger sqlx keeps, in its own shape (`sqlx::migrate`'s Postgres table).
pub async fn ensure_ledger(conn: &mut PgConnection, table: &str) -> Result<(), sqlx::Error> {
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "CREATE TABLE IF NOT EXISTS {table} (
            version BIGINT PRIMARY KEY,
            description TEXT NOT NULL,
            installed_on TIMESTAMPTZ NOT NULL DEFAULT now(),
            success BOOLEAN NOT NULL,
            checksum BYTEA NOT NULL,
            execution_time BIGINT NOT NULL
        )"
    )))
    .execute(conn)
    .await?;
    Ok(())
}

/// Applies `migrations` above the ledger's version up to `target`, each in a transaction of
/// its own, one statement at a time, and records it in the ledger as sqlx would.
pub async fn apply_split(
    conn: &mut PgConnection,
    table: &str,
    migrations: &[Migration],
    target: i64,
) -> Result<(), sqlx::Error> {
    ensure_ledger(conn, table).await?;
    let applied: Vec<i64> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "SELECT version FROM {table} WHERE success ORDER BY version"
    )))
    .fetch_all(&mut *conn)
    .await?;
    for migration in migrations {
        if migration.version > target
            || applied.contains(&migration.version)
            || migration.migration_type.is_down_migration()
        {
            continue;
        }
        let started = Instant::now();
        let mut tx = conn.begin().await?;
        for statement in split_statements(migration.sql.as_str()) {
            for command in citus_statements(statement) {
                sqlx::raw_sql(sqlx::AssertSqlSafe(command))
                    .execute(&mut *tx)
                    .await?;
            }
        }
        let elapsed = i64::try_from(started.elapsed().as_nanos()).unwrap_or(i64::MAX);
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "INSERT INTO {table} (version, description, success, checksum, execution_time)
             VALUES ($1, $2, TRUE, $3, $4)"
        )))
        .bind(migration.version)
        .bind(&*migration.description)
        .bind(&*migration.checksum)
        .bind(elapsed)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
    }
    Ok(())
}

/// A Citus node as `citus_schema_move` names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    pub host: String,
    pub port: i32,
}

impl std::str::FromStr for Node {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (host, port) = s
            .rsplit_once(':')
            .ok_or_else(|| format!("{s:?} is not host:port"))?;
        let port = port
            .parse::<u16>()
            .map_err(|_| format!("{s:?}: the port is not a number from 1 to 65535"))?;
        if host.is_empty() || port == 0 {
            return Err(format!("{s:?} is not host:port"));
        }
        Ok(Self {
            host: host.to_owned(),
            port: i32::from(port),
        })
    }
}

impl std::fmt::Display for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.host, self.port)
    }
}

/// The worker holding a distributed schema (`None`: not a distributed schema).
pub async fn schema_node(
    conn: &mut PgConnection,
    schema: &SchemaName,
) -> Result<Option<Node>, sqlx::Error> {
    let row: Option<(String, i32)> = sqlx::query_as(
        "SELECT n.nodename::text, n.nodeport
           FROM pg_dist_schema s
           JOIN pg_dist_partition p ON p.colocationid = s.colocationid
           JOIN pg_dist_shard sh ON sh.logicalrelid = p.logicalrelid
           JOIN pg_dist_placement pl ON pl.shardid = sh.shardid
           JOIN pg_dist_node n ON n.groupid = pl.groupid
          WHERE s.schemaid = $1::text::regnamespace
          LIMIT 1",
    )
    .bind(schema.as_str())
    .fetch_optional(conn)
    .await?;
    Ok(row.map(|(host, port)| Node { host, port }))
}

/// What a Citus move did.
#[derive(Debug, Clone)]
pub struct SchemaMove {
    pub from: Node,
    pub to: Node,
    pub elapsed: std::time::Duration,
}

#[derive(Debug, thiserror::Error)]
pub enum SchemaMoveError {
    #[error("schema {0} is not a distributed schema of this Citus cluster")]
    NotDistributed(String),
    #[error("{0} is not an active worker of this Citus cluster")]
    UnknownNode(String),
    #[error("the garden is already on {0}")]
    AlreadyThere(String),
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
}

/// Moves a distributed schema to another worker with `citus_schema_move` (logical replication:
/// reads and writes go on during the copy; Citus blocks writes only for the final catch-up and
/// switch of its metadata). Runs on the caller's session, which should hold the garden's
/// migration lock, so no migration changes the schema under the move.
pub async fn schema_move(
    conn: &mut PgConnection,
    schema: &SchemaName,
    to: &Node,
) -> Result<SchemaMove, SchemaMoveError> {
    let from = schema_node(conn, schema)
        .await?
        .ok_or_else(|| SchemaMoveError::NotDistributed(schema.to_string()))?;
    let known: bool = sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM pg_dist_node
                         WHERE nodename = $1 AND nodeport = $2 AND isactive
                           AND noderole = 'primary' AND shouldhaveshards)",
    )
    .bind(&to.host)
    .bind(to.port)
    .fetch_one(&mut *conn)
    .await?;
    if !known {
        return Err(SchemaMoveError::UnknownNode(to.to_string()));
    }
    if from == *to {
        return Err(SchemaMoveError::AlreadyThere(to.to_string()));
    }
    let started = Instant::now();
    sqlx::query("SELECT citus_schema_move($1::text::regnamespace, $2, $3)")
        .bind(schema.as_str())
        .bind(&to.host)
        .bind(to.port)
        .execute(&mut *conn)
        .await?;
    Ok(SchemaMove {
        from,
        to: to.clone(),
        elapsed: started.elapsed(),
    })
}

/// What `kultiva tenant move <slug> --to-node host:port` did.
#[derive(Debug, Clone)]
pub struct GardenMove {
    pub slug: String,
    pub schema: SchemaName,
    pub moved: SchemaMove,
}

#[derive(Debug, thiserror::Error)]
pub enum GardenMoveError {
    #[error("no tenant with slug {0}")]
    NotFound(String),
    #[error("tenant {0} is not active; only active gardens move")]
    NotActive(String),
    #[error(
        "placement {0:?} is not a Citus coordinator (no citus extension); use --to <placement> \
         to move between plain PostgreSQL servers"
    )]
    NotCitus(String),
    #[error("placement {0:?} is not configured")]
    UnknownPlacement(String),
    #[error(transparent)]
    Move(#[from] SchemaMoveError),
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
}

/// Moves a garden to another Citus worker with `citus_schema_move`, under the garden's
/// migration lock (a migration waits for the move; a move waits for a migration). The
/// registry does not change: the garden stays on its placement, the coordinator, and Citus
/// routes its statements to the new worker from the moment its metadata switches.
pub async fn move_garden(
    state: &crate::state::AppState,
    slug: &super::TenantSlug,
    to: &Node,
) -> Result<GardenMove, GardenMoveError> {
    let tenant = super::registry::find_by_slug(state.platform_pool(), slug)
        .await?
        .ok_or_else(|| GardenMoveError::NotFound(slug.to_string()))?;
    if tenant.status != super::TenantStatus::Active {
        return Err(GardenMoveError::NotActive(slug.to_string()));
    }
    let placement = state
        .placements()
        .get(&tenant.placement)
        .ok_or_else(|| GardenMoveError::UnknownPlacement(tenant.placement.clone()))?;
    let mut conn = placement.dedicated().await?;
    let result = async {
        if !is_citus(&mut conn).await? {
            return Err(GardenMoveError::NotCitus(tenant.placement.clone()));
        }
        super::migrate::take_lock(&mut conn, &tenant.schema_name).await?;
        Ok(schema_move(&mut conn, &tenant.schema_name, to).await?)
    }
    .await;
    if let Err(err) = conn.close().await {
        tracing::warn!(error = %err, "closing the move connection failed");
    }
    let moved = result?;
    tracing::info!(tenant = %tenant.slug, schema = %tenant.schema_name, from = %moved.from,
        to = %moved.to, ms = moved.elapsed.as_millis() as u64, "garden moved by citus_schema_move");
    Ok(GardenMove {
        slug: tenant.slug.to_string(),
        schema: tenant.schema_name,
        moved,
    })
}

#[cfg(test)]
mod tests {
    use super::split_statements;

    #[test]
    fn splits_at_top_level_semicolons_only() {
        let sql = "-- a comment; with a semicolon\n\
                   CREATE TABLE a (x text DEFAULT 'a;b', \"we;ird\" int);\n\
                   /* block; /* nested; */ still */\n\
                   CREATE FUNCTION f() RETURNS trigger LANGUAGE plpgsql AS $$\n\
                   BEGIN EXECUTE format('x %I', $1); RETURN OLD; END\n$$;\n\
                   SELECT E'it\\'s; fine', 'it''s; fine', $tag$;$tag$;\n\
                   -- trailing comment only\n";
        let got = split_statements(sql);
        assert_eq!(got.len(), 3, "{got:#?}");
        assert!(got[0].starts_with("-- a comment") && got[0].ends_with("int)"));
        assert!(got[1].contains("RETURN OLD; END\n$$"));
        assert!(got[2].ends_with("$tag$;$tag$"));
    }

    #[test]
    fn every_tenant_and_platform_migration_splits_into_whole_statements() {
        for dir in ["migrations/tenant", "migrations/platform"] {
            for entry in std::fs::read_dir(dir).expect("migrations") {
                let path = entry.expect("entry").path();
                let sql = std::fs::read_to_string(&path).expect("read");
                for statement in split_statements(&sql) {
                    assert!(!statement.is_empty(), "{}", path.display());
                    assert!(!statement.ends_with(';'), "{}", path.display());
                }
            }
        }
    }

    #[test]
    fn an_alter_table_of_several_subcommands_becomes_one_per_subcommand() {
        let got = super::citus_statements(
            "-- why\nALTER TABLE locations\n    ADD COLUMN parent_id uuid REFERENCES locations (id),\n    \
             ADD COLUMN depth integer NOT NULL DEFAULT 0 CHECK (depth >= 0), -- a, comment\n    \
             ADD CONSTRAINT c CHECK (kind IN ('a,b', 'c'))",
        );
        assert_eq!(
            got,
            [
                "ALTER TABLE locations ADD COLUMN parent_id uuid \
                 CONSTRAINT locations_parent_id_fkey REFERENCES locations (id)",
                "ALTER TABLE locations ADD COLUMN depth integer NOT NULL DEFAULT 0 \
                 CONSTRAINT locations_depth_check CHECK (depth >= 0)",
                "ALTER TABLE locations -- a, comment\n    ADD CONSTRAINT c CHECK (kind IN ('a,b', 'c'))",
            ]
        );
        let one = "ALTER TABLE IF EXISTS ONLY plants ADD COLUMN x int";
        assert_eq!(super::citus_statements(one), [one]);
        assert_eq!(
            super::citus_statements("ALTER TABLE sites ADD COLUMN z text CHECK (z ~ '^a')"),
            ["ALTER TABLE sites ADD COLUMN z text CONSTRAINT sites_z_check CHECK (z ~ '^a')"]
        );
        let named = "ALTER TABLE sites ADD COLUMN z text CONSTRAINT mine CHECK (z <> '')";
        assert_eq!(super::citus_statements(named), [named]);
        assert_eq!(
            super::default_constraint_name(&"t".repeat(40), &"c".repeat(40), "check").len(),
            63
        );
        let other = "CREATE TABLE a (x int, y int)";
        assert_eq!(super::citus_statements(other), [other]);
    }

    #[test]
    fn nodes_parse_as_host_and_port() {
        let node: super::Node = "10.0.0.7:5432".parse().expect("node");
        assert_eq!((node.host.as_str(), node.port), ("10.0.0.7", 5432));
        assert!("nohost".parse::<super::Node>().is_err());
        assert!("h:0".parse::<super::Node>().is_err());
        assert!("h:99999".parse::<super::Node>().is_err());
    }
}
