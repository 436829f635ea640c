//! Helpers for the garden tests (plants, phases, runs): fixture species and their phases,
//! places built through the places service, batches, and counts read straight from a tenant's
//! schema (to assert what a rejected request did NOT write).

use kultiva::garden::places::model::{Neighbours, NewLocation, NewSlot};
use kultiva::garden::places::service as places;
use kultiva::tenancy::TenantRecord;
use serde_json::Value;
use uuid::Uuid;

pub use crate::support::key_of as key;
use crate::support::{JsonReply, TestApp};

/// A fixture species' key by scientific name (the fixture catalogue is loaded first).
pub async fn species(app: &TestApp, scientific_name: &str) -> String {
    crate::catalog::seeded(app).await;
    let sql = "SELECT id::text FROM platform.catalog_records WHERE kind = 'species' AND name = $1";
    sqlx::query_scalar(sql)
        .bind(scientific_name)
        .fetch_one(app.state.platform_pool())
        .await
        .unwrap_or_else(|e| panic!("species {scientific_name}: {e}"))
}

/// The phase keys of the sequence a species runs on now, in order.
pub async fn phases(app: &TestApp, species_key: &str) -> Vec<String> {
    kultiva::catalog::species::service::phase_sequence_of(&app.state, species_key)
        .await
        .expect("sequence")
        .sequence
        .entries
        .iter()
        .map(|e| e.phase_key.clone())
        .collect()
}

/// A site (through the REST route), a location in it and `slots` slots in one row
/// (`{CODE}_1`, `{CODE}_2` …), each the neighbour of the next. Returns (site, location, slots).
pub async fn bed(
    app: &TestApp,
    tenant: &TenantRecord,
    name: &str,
    slots: usize,
) -> (Uuid, Uuid, Vec<Uuid>) {
    // Through the sites service: the same use case as the REST route, in any service mode.
    let site_id = kultiva::garden::sites::service::create_site(
        &app.state,
        tenant,
        &kultiva::garden::sites::model::NewSite {
            name: format!("{name} site"),
            kind: kultiva::garden::sites::model::SiteKind::Balcony,
            description: None,
            climate_zone: None,
            latitude: None,
            longitude: None,
        },
    )
    .await
    .expect("site")
    .key;
    let location = location_in(app, tenant, site_id, name).await;
    let code = name
        .to_uppercase()
        .replace(|c: char| !c.is_ascii_alphanumeric(), "");
    let mut ids = Vec::new();
    for i in 1..=slots {
        let slot = places::create_slot(
            &app.state,
            tenant,
            &NewSlot {
                location_id: location,
                code: format!("{code}_{i}"),
                capacity: 1,
                position_x: Some(i as i64),
                position_y: Some(1),
            },
        )
        .await
        .expect("slot");
        ids.push(slot.key);
    }
    for pair in ids.windows(2) {
        places::set_neighbours(
            &app.state,
            tenant,
            &pair[0].to_string(),
            &Neighbours {
                neighbour_keys: vec![pair[1]],
            },
        )
        .await
        .expect("neighbours");
    }
    // set_neighbours replaces the set: give middle slots both sides again.
    for i in 1..ids.len().saturating_sub(1) {
        places::set_neighbours(
            &app.state,
            tenant,
            &ids[i].to_string(),
            &Neighbours {
                neighbour_keys: vec![ids[i - 1], ids[i + 1]],
            },
        )
        .await
        .expect("neighbours");
    }
    (site_id, location, ids)
}

pub async fn location_in(app: &TestApp, tenant: &TenantRecord, site: Uuid, name: &str) -> Uuid {
    places::create_location(
        &app.state,
        tenant,
        &NewLocation {
            site_id: site,
            parent_id: None,
            name: name.to_owned(),
            kind: Some("bed"),
            description: None,
            conditions: Default::default(),
        },
    )
    .await
    .expect("location")
    .location
    .key
}

/// A substrate batch row (soil, not reusable) used for `cycles_used` cycles.
pub async fn batch(app: &TestApp, tenant: &TenantRecord, label: &str, cycles_used: i32) -> Uuid {
    let id = Uuid::now_v7();
    let sql = format!(
        "INSERT INTO {}.substrate_batches (id, substrate_key, label, cycles_used) \
         VALUES ($1, 'tenant:none', $2, $3)",
        tenant.schema_name.quoted()
    );
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(id)
        .bind(label)
        .bind(cycles_used)
        .execute(app.state.platform_pool())
        .await
        .expect("batch");
    id
}

/// `SELECT count(*) FROM <tenant>.<table>` (table names from the tests only).
pub async fn count(app: &TestApp, tenant: &TenantRecord, table: &str) -> i64 {
    let sql = format!(
        "SELECT count(*) FROM {}.{table}",
        tenant.schema_name.quoted()
    );
    sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
        .fetch_one(app.state.platform_pool())
        .await
        .expect("count")
}

/// Runs one statement on the tenant's schema (test setup of states no route produces).
pub async fn exec(app: &TestApp, tenant: &TenantRecord, sql: &str, id: Uuid) {
    let sql = sql.replace("{schema}", &tenant.schema_name.quoted());
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(id)
        .execute(app.state.platform_pool())
        .await
        .expect("setup statement");
}

pub fn plants_path(tenant: &TenantRecord) -> String {
    format!("/api/v1/t/{}/plant-instances/", tenant.slug)
}

/// Creates a plant (light mode) and returns its JSON (asserts 201).
pub async fn plant(app: &TestApp, tenant: &TenantRecord, body: Value) -> Value {
    let res = app.post_json(&plants_path(tenant), &body).await;
    let status = res.status().as_u16();
    let v: Value = res.json().await.expect("json");
    assert_eq!(status, 201, "create plant {body}: {v}");
    v
}

pub async fn get_json(app: &TestApp, path: &str) -> (u16, Value) {
    app.rest().get(path).await.status_json().await
}

pub async fn post(app: &TestApp, path: &str, body: Value) -> (u16, Value) {
    app.rest().post(path, &body).await.status_json().await
}
