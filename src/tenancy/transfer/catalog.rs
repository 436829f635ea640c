//! What a garden schema holds, read from PostgreSQL's catalogue (so a table added by a later
//! migration is copied without touching this code): its tables with their columns, in an order
//! where every table comes after the tables its foreign keys point to, and its sequences.

use std::collections::{BTreeMap, BTreeSet};

use sqlx::{PgConnection, Row};

use super::{TransferError, quote_ident};
use crate::tenancy::SchemaName;
use crate::tenancy::tx::{CLOSED_WRITE_GATE, WRITE_GATE};

/// A table and the columns a copy carries (stored columns in table order; generated columns
/// are computed again by the receiving table).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    pub name: String,
    pub columns: Vec<String>,
}

impl Table {
    /// `COPY (SELECT …) TO STDOUT`: the select form also reads a partitioned table whole.
    pub fn copy_out_sql(&self, schema: &SchemaName) -> String {
        format!(
            "COPY (SELECT {} FROM {}.{}) TO STDOUT",
            self.column_list(),
            schema.quoted(),
            quote_ident(&self.name)
        )
    }

    pub fn copy_in_sql(&self, schema: &SchemaName) -> String {
        format!(
            "COPY {}.{} ({}) FROM STDIN",
            schema.quoted(),
            quote_ident(&self.name),
            self.column_list()
        )
    }

    fn column_list(&self) -> String {
        self.columns
            .iter()
            .map(|c| quote_ident(c))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// A sequence and where it stands (`None`: never used).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sequence {
    pub name: String,
    pub last_value: Option<i64>,
}

impl Sequence {
    /// Puts a copy's sequence where the original stood.
    pub fn restore_sql(&self, schema: &SchemaName) -> Option<String> {
        let qualified = format!("{}.{}", schema.quoted(), quote_ident(&self.name));
        self.last_value.map(|value| {
            format!(
                "SELECT setval('{}', {value}, true)",
                qualified.replace('\'', "''")
            )
        })
    }
}

/// The schema's tables (migration ledger excluded), every table after those it refers to.
pub async fn ordered_tables(
    conn: &mut PgConnection,
    schema: &SchemaName,
) -> Result<Vec<Table>, TransferError> {
    let rows = sqlx::query(
        "SELECT c.relname::text AS name, \
                array_agg(a.attname::text ORDER BY a.attnum) AS columns \
         FROM pg_class c \
         JOIN pg_namespace n ON n.oid = c.relnamespace \
         JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 \
                            AND NOT a.attisdropped AND a.attgenerated = '' \
         WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT c.relispartition \
           AND c.relname <> ALL ($2) \
         GROUP BY c.relname",
    )
    .bind(schema.as_str())
    .bind(vec![WRITE_GATE, CLOSED_WRITE_GATE])
    .fetch_all(&mut *conn)
    .await?;
    let tables = rows
        .iter()
        .map(|r| {
            Ok(Table {
                name: r.try_get("name")?,
                columns: r.try_get("columns")?,
            })
        })
        .collect::<Result<Vec<_>, sqlx::Error>>()?;
    let edges: Vec<(String, String)> = sqlx::query_as(
        "SELECT src.relname::text, dst.relname::text \
         FROM pg_constraint k \
         JOIN pg_class src ON src.oid = k.conrelid \
         JOIN pg_class dst ON dst.oid = k.confrelid \
         JOIN pg_namespace n ON n.oid = src.relnamespace \
         WHERE k.contype = 'f' AND n.nspname = $1 AND dst.relnamespace = src.relnamespace",
    )
    .bind(schema.as_str())
    .fetch_all(&mut *conn)
    .await?;
    in_dependency_order(tables, &edges)
}

/// The schema's sequences and where each stands.
pub async fn sequences(
    conn: &mut PgConnection,
    schema: &SchemaName,
) -> Result<Vec<Sequence>, sqlx::Error> {
    let rows: Vec<(String, Option<i64>)> = sqlx::query_as(
        "SELECT sequencename::text, last_value FROM pg_sequences \
         WHERE schemaname = $1 ORDER BY sequencename",
    )
    .bind(schema.as_str())
    .fetch_all(conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(name, last_value)| Sequence { name, last_value })
        .collect())
}

/// Orders tables so that each follows every table its foreign keys point to (a table that
/// points to itself is fine: `COPY` checks its rows at the end of the statement). Ties go by
/// name, so the order is stable. A cycle between tables cannot be loaded in any order.
pub fn in_dependency_order(
    tables: Vec<Table>,
    edges: &[(String, String)],
) -> Result<Vec<Table>, TransferError> {
    let mut waiting_on: BTreeMap<String, BTreeSet<String>> = tables
        .iter()
        .map(|t| (t.name.clone(), BTreeSet::new()))
        .collect();
    for (from, to) in edges {
        if from != to
            && waiting_on.contains_key(to)
            && let Some(set) = waiting_on.get_mut(from)
        {
            set.insert(to.clone());
        }
    }
    let mut by_name: BTreeMap<String, Table> =
        tables.into_iter().map(|t| (t.name.clone(), t)).collect();
    let mut ordered = Vec::with_capacity(by_name.len());
    while !waiting_on.is_empty() {
        let ready: Vec<String> = waiting_on
            .iter()
            .filter(|(_, deps)| deps.is_empty())
            .map(|(name, _)| name.clone())
            .collect();
        if ready.is_empty() {
            let cycle: Vec<_> = waiting_on.keys().cloned().collect();
            return Err(TransferError::Refused(format!(
                "the foreign keys of tables {} form a cycle; they cannot be copied in order",
                cycle.join(", ")
            )));
        }
        for name in ready {
            waiting_on.remove(&name);
            for deps in waiting_on.values_mut() {
                deps.remove(&name);
            }
            if let Some(table) = by_name.remove(&name) {
                ordered.push(table);
            }
        }
    }
    Ok(ordered)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(name: &str) -> Table {
        Table {
            name: name.to_owned(),
            columns: vec!["id".to_owned()],
        }
    }

    fn e(from: &str, to: &str) -> (String, String) {
        (from.to_owned(), to.to_owned())
    }

    fn names(tables: &[Table]) -> Vec<&str> {
        tables.iter().map(|t| t.name.as_str()).collect()
    }

    #[test]
    fn every_table_follows_what_it_refers_to() {
        let tables = vec![
            t("plants"),
            t("slots"),
            t("sites"),
            t("locations"),
            t("notes"),
        ];
        let edges = [
            e("plants", "slots"),
            e("plants", "locations"),
            e("slots", "locations"),
            e("locations", "sites"),
            e("locations", "locations"),
            e("plants", "elsewhere"),
        ];
        let ordered = in_dependency_order(tables, &edges).expect("ordered");
        assert_eq!(
            names(&ordered),
            ["notes", "sites", "locations", "slots", "plants"]
        );
    }

    #[test]
    fn a_cycle_is_refused_by_name() {
        let err = in_dependency_order(vec![t("a"), t("b"), t("c")], &[e("a", "b"), e("b", "a")])
            .expect_err("cycle");
        assert!(err.to_string().contains("a, b"), "{err}");
    }

    #[test]
    fn copy_statements_quote_every_name() {
        let schema = SchemaName::parse("t_0123456789abcdef0123456789abcdef").expect("schema");
        let table = Table {
            name: "plants".into(),
            columns: vec!["id".into(), "name".into()],
        };
        assert_eq!(
            table.copy_out_sql(&schema),
            "COPY (SELECT \"id\", \"name\" FROM \"t_0123456789abcdef0123456789abcdef\".\"plants\") TO STDOUT"
        );
        assert_eq!(
            table.copy_in_sql(&schema),
            "COPY \"t_0123456789abcdef0123456789abcdef\".\"plants\" (\"id\", \"name\") FROM STDIN"
        );
        let seq = Sequence {
            name: "n".into(),
            last_value: Some(7),
        };
        assert_eq!(
            seq.restore_sql(&schema).as_deref(),
            Some("SELECT setval('\"t_0123456789abcdef0123456789abcdef\".\"n\"', 7, true)")
        );
    }
}
