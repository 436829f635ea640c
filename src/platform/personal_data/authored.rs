//! The garden tables that name the person who wrote a row. The personal export reads these rows;
//! the erasure of an account rewrites the names in gardens that stay with others. Keeping the
//! two on one list means a record kind added here is exported and erased alike.
//!
//! Rows name their author in two ways: an actor text (`user:<id>` from REST, `mcp:<id>` from the
//! tool server; see `garden::plants::routes::actor`) or an account id (diary entries, photos).

use uuid::Uuid;

/// The actor text an erased person's rows carry afterwards.
pub const ERASED_ACTOR: &str = "deleted_user";

/// The author kind of a diary entry whose author was erased (its `author_id` becomes nil).
pub const ERASED_AUTHOR_KIND: &str = "deleted";

/// One garden table and the columns that name a person.
#[derive(Debug, Clone, Copy)]
pub struct AuthoredTable {
    pub table: &'static str,
    /// The SQL type of the primary key `id` (rows are read back by id).
    pub id_type: &'static str,
    /// Text columns holding an actor (`user:<id>`, `mcp:<id>`).
    pub actor_columns: &'static [&'static str],
    /// uuid columns holding an account id.
    pub account_columns: &'static [&'static str],
    /// Columns never exported (secrets).
    pub secret_columns: &'static [&'static str],
}

const fn by_actor(table: &'static str, columns: &'static [&'static str]) -> AuthoredTable {
    AuthoredTable {
        table,
        id_type: "uuid",
        actor_columns: columns,
        account_columns: &[],
        secret_columns: &[],
    }
}

pub const AUTHORED: &[AuthoredTable] = &[
    by_actor("plant_phase_history", &["actor"]),
    by_actor("watering_events", &["actor"]),
    by_actor("tank_fills", &["actor"]),
    by_actor("tank_maintenance", &["actor"]),
    by_actor("ipm_inspections", &["created_by"]),
    by_actor("ipm_applications", &["applied_by", "created_by"]),
    by_actor("harvest_observations", &["created_by"]),
    by_actor("tasks", &["created_by"]),
    by_actor("care_confirmations", &["actor"]),
    AuthoredTable {
        table: "onboarding_kits",
        id_type: "boolean",
        actor_columns: &["applied_by"],
        account_columns: &[],
        secret_columns: &[],
    },
    AuthoredTable {
        table: "diary_entries",
        id_type: "uuid",
        actor_columns: &[],
        account_columns: &["author_id", "analysis_requested_by"],
        secret_columns: &[],
    },
    AuthoredTable {
        table: "diary_photos",
        id_type: "uuid",
        actor_columns: &[],
        account_columns: &["uploaded_by"],
        secret_columns: &[],
    },
    // The endpoints a garden admin made; the signing secret stays out of any export.
    AuthoredTable {
        table: "webhooks",
        id_type: "uuid",
        actor_columns: &[],
        account_columns: &["created_by"],
        secret_columns: &["secret", "secret_encrypted"],
    },
];

/// The actor texts a person's rows carry.
pub fn actor_texts(user: Uuid) -> Vec<String> {
    vec![format!("user:{user}"), format!("mcp:{user}")]
}

/// What an erase statement binds as `$1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bind {
    /// [`actor_texts`] (`text[]`).
    ActorTexts,
    /// The account id (`uuid`).
    Account,
}

impl AuthoredTable {
    /// The row as JSON text without its secret columns (`r` is the row alias).
    pub fn row_json(&self) -> String {
        let mut json = "to_jsonb(r)".to_owned();
        for column in self.secret_columns {
            json.push_str(&format!(" - '{column}'"));
        }
        format!("({json})::text")
    }

    /// The condition selecting the person's rows: `$1` is the actor texts (`text[]`), `$2` the
    /// account id (`uuid`).
    pub fn condition(&self) -> String {
        let actors = self.actor_columns.iter().map(|c| format!("{c} = ANY($1)"));
        let accounts = self.account_columns.iter().map(|c| format!("{c} = $2"));
        actors.chain(accounts).collect::<Vec<_>>().join(" OR ")
    }

    /// The statements that take the person's name off the table's rows, in the schema
    /// `schema` (quoted), each with the one value it binds as `$1`.
    pub fn erase_statements(&self, schema: &str) -> Vec<(String, Bind)> {
        let table = format!("{schema}.{}", self.table);
        let mut statements: Vec<(String, Bind)> = self
            .actor_columns
            .iter()
            .map(|c| {
                let sql = format!("UPDATE {table} SET {c} = '{ERASED_ACTOR}' WHERE {c} = ANY($1)");
                (sql, Bind::ActorTexts)
            })
            .collect();
        for column in self.account_columns {
            let sql = match (self.table, *column) {
                // The entry stays with the garden, written by "a deleted user".
                ("diary_entries", "author_id") => format!(
                    "UPDATE {table} SET author_id = '00000000-0000-0000-0000-000000000000', \
                     author_kind = '{ERASED_AUTHOR_KIND}' \
                     WHERE author_id = $1 AND author_kind = 'user'"
                ),
                // Who asked for an analysis is nobody else's business.
                ("diary_entries", "analysis_requested_by") => format!(
                    "UPDATE {table} SET analysis_requested_by = NULL \
                     WHERE analysis_requested_by = $1"
                ),
                (_, c) => format!(
                    "UPDATE {table} SET {c} = '00000000-0000-0000-0000-000000000000' \
                     WHERE {c} = $1"
                ),
            };
            statements.push((sql, Bind::Account));
        }
        statements
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_named_column_is_read_and_erased() {
        for t in AUTHORED {
            let condition = t.condition();
            let erase: Vec<String> = t
                .erase_statements("\"s\"")
                .into_iter()
                .map(|(sql, _)| sql)
                .collect();
            let erase = erase.join(";");
            for c in t.actor_columns.iter().chain(t.account_columns) {
                assert!(condition.contains(&format!("{c} =")), "{}.{c}", t.table);
                assert!(erase.contains(&format!("{c} =")), "{}.{c}", t.table);
            }
            assert!(!condition.is_empty(), "{}", t.table);
        }
    }
}
