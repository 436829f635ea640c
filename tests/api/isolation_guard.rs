//! The isolation guard, generated from the API itself.
//!
//! Routes: every route the live router serves under `/api/v1/t/{slug}/` (walked from
//! `kultiva::app::api_router`, so a route missing from the OpenAPI document is caught too),
//! with its minimum role from the document's `x-min-role` (see `src/http/roles.rs`). For each:
//! a non-member (JWT, unscoped API key, and a key scoped to another of the caller's gardens)
//! gets the 404 an unknown slug gets, body for body; an anonymous caller 401; a path id of
//! another garden 404; a viewer on a write and the role just below the minimum 403; and the
//! refused requests change nothing in either garden (every table of both schemas compared).
//! Then the minimum role itself is not refused (so `x-min-role` cannot overstate the handler).
//!
//! Tools: every tool of `tools/list` (which must be the whole registry), arguments generated
//! from its input schema: a tenant the caller is not a member of is `not_found`; another
//! garden's record in any `*_key`/`*_id` argument is `not_found` (and the caller's own is
//! found); a viewer on `mcp.write`/`mcp.setup` and a grower on `mcp.setup` are
//! `permission.denied`. (`mcp_tools::mcp_tools_tenant_isolation_matrix` checks the successful
//! calls of every role and that refusals leak nothing of the garden.)
//!
//! What a new route or tool needs here: nothing, unless it brings a path parameter or a key
//! argument never seen before; then one arm in [`make`] (how to create such a record in a
//! garden), or one name in [`SHARED_KEYS`] for catalogue keys. Anything missing fails the test
//! with the route's or tool's name.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use kultiva::auth::Role;
use kultiva::config::ServiceMode;
use kultiva::tenancy::registry::TenantRecord;
use reqwest::Method;
use salvo::routing::FilterInfo;
use serde_json::{Value, json};

use crate::mcp_tools::{self, Rpc, bearer, scoped_key};
use crate::support::{TestApp, TestUser, unique_slug};

// ---------------------------------------------------------------------------------------------
// Fixtures: the one place a new path parameter or key argument is taught to the guard.
// ---------------------------------------------------------------------------------------------

/// Creates a record of the kind a path parameter or tool argument names, in `garden`, through
/// the API, and returns its key. One arm per parameter name; `None`: the guard does not know it
/// yet (the test then fails naming the route or tool). `ids` holds what was made so far in this
/// garden: a record that lives inside another takes its parent from there (making it first
/// when missing), so one set of ids fits every nested path.
async fn make(
    app: &TestApp,
    garden: &Garden,
    name: &str,
    ids: &mut HashMap<String, String>,
) -> Option<String> {
    if let Some(id) = ids.get(name) {
        return Some(id.clone());
    }
    let created = match name {
        "site_key" => {
            let body =
                json!({"name": format!("Guard site {}", unique_slug("s")), "kind": "balcony"});
            garden.post(app, "sites", body).await
        }
        // A record inside another one makes its parent first.
        "location_key" => {
            let site = Box::pin(make(app, garden, "site_key", ids)).await?;
            let body = json!({"site_key": site, "name": format!("Guard box {}", unique_slug("l"))});
            garden.post(app, "locations", body).await
        }
        "slot_key" => {
            let location = Box::pin(make(app, garden, "location_key", ids)).await?;
            let code = format!("G_{}", unique_slug("s").replace('-', "").to_uppercase());
            let code: String = code.chars().take(20).collect();
            let body = json!({"location_key": location, "code": code, "capacity": 4});
            garden.post(app, "slots", body).await
        }
        "account_key" => {
            let body = json!({"name": format!("Guard bot {}", unique_slug("a")), "role": "viewer"});
            garden.post(app, "service-accounts", body).await
        }
        "substrate_key" => {
            let body = json!({"name": format!("Guard soil {}", unique_slug("m")), "type": "soil"});
            garden.post(app, "substrates", body).await
        }
        "batch_key" | "substrate_batch_key" => {
            let substrate = Box::pin(make(app, garden, "substrate_key", ids)).await?;
            let body = json!({"substrate_key": substrate, "label": format!("Guard batch {}", unique_slug("b"))});
            garden.post(app, "substrate-batches", body).await
        }
        "plant_key" => {
            let species = shared_value(app, &garden.keys[&Role::Admin], "species_key").await?;
            let slot = Box::pin(make(app, garden, "slot_key", ids)).await?;
            let location = ids.get("location_key").cloned();
            let body = json!({"species_key": species, "name": "Guard plant",
                              "location_key": location, "slot_key": slot});
            let plant = garden.post(app, "plant-instances", body).await;
            // Its care profile is derived on the first care read; made here, before any
            // snapshot, so the care tools' reads and dry runs find it.
            let path = format!(
                "/api/v1/t/{}/care-reminders/plants/{}",
                garden.slug(),
                plant["key"].as_str().unwrap_or_default()
            );
            let res = app.rest_auth(Some(&garden.admin.bearer())).get(&path).await;
            assert_eq!(
                res.status().as_u16(),
                200,
                "care profile of the guard plant"
            );
            plant
        }
        "run_id" | "run_key" => {
            let body = json!({"name": format!("Guard run {}", unique_slug("r"))});
            garden.post(app, "planting-runs", body).await
        }
        "task_key" => {
            let body = json!({"name": format!("Guard task {}", unique_slug("t"))});
            garden.post(app, "tasks", body).await
        }
        // A care reminder of the garden's plant (reminders are made with the plant's profile).
        "reminder_key" => {
            let plant = Box::pin(make(app, garden, "plant_key", ids)).await?;
            let path = format!("/api/v1/t/{}/care-reminders/plants/{plant}", garden.slug());
            let res = app.rest_auth(Some(&garden.admin.bearer())).get(&path).await;
            let care: Value = res.json().await.expect("json");
            let reminder = care["reminders"]
                .as_array()?
                .iter()
                .find(|r| r["reminder_type"] == "watering")?;
            json!({"key": reminder["reminder_key"]})
        }
        "inspection_key" => {
            let plant = Box::pin(make(app, garden, "plant_key", ids)).await?;
            garden
                .post(app, "ipm/inspections", json!({"plant_key": plant}))
                .await
        }
        "application_key" => {
            let plant = Box::pin(make(app, garden, "plant_key", ids)).await?;
            let treatment = shared_value(app, &garden.keys[&Role::Admin], "treatment_key").await?;
            let body = json!({"treatment_key": treatment, "plant_keys": [plant]});
            garden.post(app, "ipm/treatments", body).await
        }
        "harvest_batch_key" => {
            let plant = Box::pin(make(app, garden, "plant_key", ids)).await?;
            // The day before: the guard's treatment fixture runs a safety interval from today.
            let yesterday = time::OffsetDateTime::now_utc().date() - time::Duration::days(1);
            let body = json!({"plant_key": plant, "wet_weight_g": 1,
                              "harvest_date": yesterday.to_string()});
            garden.post(app, "harvest/batches", body).await
        }
        "fertilizer_key" => {
            let body =
                crate::garden_fertilizers::own_body(&format!("Guard feed {}", unique_slug("f")));
            garden.post(app, "fertilizers", body).await
        }
        "plan_key" => {
            let body = json!({"name": format!("Guard plan {}", unique_slug("p")),
                              "phases": [{"phase_name": "vegetative", "week_start": 1, "week_end": 4}]});
            garden.post(app, "nutrient-plans", body).await
        }
        "tank_key" => {
            let body = json!({"name": format!("Guard tank {}", unique_slug("t")),
                              "kind": "nutrient", "volume_liters": 50});
            garden.post(app, "tanks", body).await
        }
        "sensor_key" => {
            let body = json!({"name": format!("Guard sensor {}", unique_slug("n")),
                              "metric": "ph", "source": "http",
                              "site_key": Box::pin(make(app, garden, "site_key", ids)).await?});
            garden.post(app, "sensors", body).await
        }
        "tank_fill_event_key" => {
            let tank = Box::pin(make(app, garden, "tank_key", ids)).await?;
            let body = json!({"fill_type": "full_change", "volume_liters": 10});
            // The answer is the tank after the fill; the fill is its last one.
            let filled = garden.post(app, &format!("tanks/{tank}/fills"), body).await;
            json!({"key": filled["state"]["last_fill"]["key"]})
        }
        "event_key" => {
            let plant = Box::pin(make(app, garden, "plant_key", ids)).await?;
            let body = json!({"plant_keys": [plant], "volume_liters": 1.0});
            garden.post(app, "watering-events", body).await
        }
        // Written by the garden's grower: only an entry's author (or an admin) edits it and
        // only its author marks it, so the grower (the routes' x-min-role) is let through.
        "entry_key" => {
            let path = format!("/api/v1/t/{}/diary-entries", garden.slug());
            let body = json!({"text": format!("Guard entry {}", unique_slug("d"))});
            let res = app
                .rest_auth(Some(&garden.grower.bearer()))
                .post(&path, &body)
                .await;
            assert_eq!(res.status().as_u16(), 201, "fixture POST {path}");
            res.json().await.expect("json")
        }
        // A photo of an entry, rendered before any snapshot (a rendition landing later would
        // change the garden between two of the guard's comparisons).
        "photo_key" => {
            let entry = Box::pin(make(app, garden, "entry_key", ids)).await?;
            json!({"key": crate::photos::rendered_photo(app, &garden.tenant, &entry).await})
        }
        // Disabled at once: no event of the guard's own requests is queued or delivered between
        // two of its snapshots.
        "webhook_key" => {
            let body = json!({"url": "http://127.0.0.1:9/guard", "events": ["task.completed"]});
            let created = garden.post(app, "webhooks", body).await;
            let key = created["key"].as_str().expect("key");
            let path = format!("/api/v1/t/{}/webhooks/{key}", garden.slug());
            let res = app
                .rest_auth(Some(&garden.admin.bearer()))
                .patch(&path, &json!({"enabled": false}))
                .await;
            assert_eq!(res.status().as_u16(), 200, "fixture PATCH {path}");
            created
        }
        _ => return None,
    };
    let key = created["key"].as_str().expect("created record has a key");
    ids.insert(name.to_owned(), key.to_owned());
    Some(key.to_owned())
}

/// A valid body, made of garden A's own records, for the writes whose handler validates its
/// body before it looks up the record in its path (an empty body gets 422 there, which proves
/// nothing about that record): with it, another garden's record in the path must answer 404.
/// One arm per such operation; a missing one fails the test naming the operation.
fn valid_body(op: &str, ids: &HashMap<String, String>, shared: &Shared) -> Option<Value> {
    let id = |name: &str| ids.get(name).cloned().unwrap_or_default();
    Some(match op {
        "archive_plant" => json!({"reason": "died"}),
        "set_plant_location" => {
            json!({"location_key": id("location_key"), "slot_key": id("slot_key")})
        }
        "set_plant_substrate" => json!({"substrate_batch_key": id("batch_key")}),
        "transition_plant_phase" => json!({"target_phase_key": shared.phase}),
        "change_planting_run_status" => json!({"status": "active"}),
        "add_planting_run_plants" => json!({"plant_keys": [id("plant_key")]}),
        "create_planting_run_plants" => {
            json!({"species_key": shared.species, "id_prefix": "GRD", "quantity": 1})
        }
        "set_slot_neighbours" => json!({"neighbour_keys": []}),
        // Emptying the slot is valid for any slot: the path's slot decides.
        "set_slot_substrate_batch" => json!({"batch_key": null}),
        "change_task_status" => json!({"action": "skip"}),
        "confirm_care_reminder" | "snooze_care_reminder" => {
            json!({"plant_key": id("plant_key")})
        }
        "set_nutrient_plan_phase_targets" => json!({"phase": "vegetative", "target_ec_ms": 1.0}),
        "assign_nutrient_plan" => json!({"plant_key": id("plant_key")}),
        "update_tank" => json!({"notes": "guard"}),
        "update_sensor" => json!({"name": "Guard sensor renamed"}),
        "record_sensor_readings" => {
            json!({"readings": [{"value": 6.0, "measured_at": "2026-01-01T00:00:00Z"}]})
        }
        "fill_tank" => json!({"fill_type": "full_change", "volume_liters": 1}),
        "log_tank_maintenance" => json!({"maintenance_type": "cleaning"}),
        "update_diary_entry" => json!({"text": "guard"}),
        "request_diary_analysis" => json!({"consent": true}),
        _ => return None,
    })
}

/// Catalogue keys the valid bodies name.
struct Shared {
    species: String,
    phase: String,
}

/// Tool arguments that name shared catalogue records (the same in every garden), so no other
/// garden's version exists to try.
const SHARED_KEYS: &[&str] = &[
    "species_key",
    "cultivar_key",
    "pest_key",
    "disease_key",
    "treatment_key",
    "sequence_key",
    // Phase keys name entries of the catalogue's phase sequences.
    "phase_key",
    "target_phase_key",
];

/// A real catalogue record for a shared key argument, for calls that must get past it to
/// reach a garden key (the fixture catalogue is seeded).
async fn shared_value(app: &TestApp, admin: &str, name: &str) -> Option<String> {
    let (path, field) = match name {
        "species_key" => ("/api/v1/species?q=fixtura%20tomatoides", "key"),
        // The fixture's chemical treatment (3-day interval).
        "treatment_key" => ("/api/v1/ipm/treatments?q=fixture%20soap", "key"),
        // A phase of the sequence the fixture species (the guard's plants) runs on.
        "target_phase_key" | "phase_key" => {
            let species = Box::pin(shared_value(app, admin, "species_key")).await?;
            let sequence =
                kultiva::catalog::species::service::phase_sequence_of(&app.state, &species)
                    .await
                    .ok()?;
            return sequence
                .sequence
                .entries
                .last()
                .map(|e| e.phase_key.clone());
        }
        _ => return None,
    };
    let res = app.rest_auth(Some(&bearer(admin))).get(path).await;
    let page: Value = res.json().await.ok()?;
    page["items"][0][field].as_str().map(str::to_owned)
}

/// A garden with one member of each role (JWT sessions and scoped API keys).
struct Garden {
    tenant: TenantRecord,
    admin: TestUser,
    grower: TestUser,
    viewer: TestUser,
    keys: BTreeMap<Role, String>,
}

impl Garden {
    async fn new(app: &TestApp, prefix: &str) -> Self {
        let tenant = app.tenant(prefix).await;
        let admin = app.member(&tenant, Role::Admin).await;
        let grower = app.member(&tenant, Role::Grower).await;
        let viewer = app.member(&tenant, Role::Viewer).await;
        let mut keys = BTreeMap::new();
        for (role, user) in [
            (Role::Admin, &admin),
            (Role::Grower, &grower),
            (Role::Viewer, &viewer),
        ] {
            keys.insert(role, app.api_key(user, Some(tenant.slug.as_str())).await);
        }
        Self {
            tenant,
            admin,
            grower,
            viewer,
            keys,
        }
    }

    fn slug(&self) -> &str {
        self.tenant.slug.as_str()
    }

    fn user(&self, role: Role) -> &TestUser {
        match role {
            Role::Admin => &self.admin,
            Role::Grower => &self.grower,
            Role::Viewer => &self.viewer,
        }
    }

    /// Creates a record as the garden's admin (`rest` below `/t/{slug}/`).
    async fn post(&self, app: &TestApp, rest: &str, body: Value) -> Value {
        let path = format!("/api/v1/t/{}/{rest}", self.slug());
        let res = app
            .rest_auth(Some(&self.admin.bearer()))
            .post(&path, &body)
            .await;
        let status = res.status().as_u16();
        let body: Value = res.json().await.expect("json");
        assert_eq!(status, 201, "fixture POST {path}: {body}");
        body
    }
}

/// Every row of every table of a garden's schema, as a digest per table: refused requests
/// must leave it unchanged (inserts, updates and deletes alike).
async fn snapshot(app: &TestApp, tenant: &TenantRecord) -> BTreeMap<String, (i64, String)> {
    let pool = app.state.platform_pool();
    let tables: Vec<String> = sqlx::query_scalar(
        "SELECT table_name::text FROM information_schema.tables \
         WHERE table_schema = $1 AND table_type = 'BASE TABLE'",
    )
    .bind(tenant.schema_name.as_str())
    .fetch_all(pool)
    .await
    .expect("tables");
    let mut out = BTreeMap::new();
    for table in tables {
        let sql = format!(
            "SELECT count(*), coalesce(md5(string_agg(r::text, '|' ORDER BY r::text)), '') \
             FROM {}.\"{}\" AS r",
            tenant.schema_name.quoted(),
            table.replace('"', "\"\"")
        );
        let row: (i64, String) = sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .fetch_one(pool)
            .await
            .expect("table digest");
        out.insert(table, row);
    }
    out
}

/// The tables whose rows differ between two snapshots, with their row counts.
fn changed(was: &BTreeMap<String, (i64, String)>, is: &BTreeMap<String, (i64, String)>) -> String {
    let tables: BTreeSet<&String> = was.keys().chain(is.keys()).collect();
    tables
        .into_iter()
        .filter(|t| was.get(*t) != is.get(*t))
        .map(|t| {
            let rows = |m: &BTreeMap<String, (i64, String)>| m.get(t).map_or(0, |r| r.0);
            format!("{t} ({} -> {} rows)", rows(was), rows(is))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

// ---------------------------------------------------------------------------------------------
// Routes
// ---------------------------------------------------------------------------------------------

/// A route as the live router serves it: method, path (OpenAPI spelling), handler.
#[derive(Debug)]
struct Served {
    method: Option<String>,
    path: String,
    handler: &'static str,
}

/// `{id:num}` → `{id}`, as the OpenAPI document spells a parameter.
fn normalize(segment: &str) -> String {
    match segment.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
        Some(inner) => format!("{{{}}}", inner.split([':', '|']).next().unwrap_or(inner)),
        None => segment.to_owned(),
    }
}

fn walk(router: &salvo::Router, path: &[String], method: Option<String>, out: &mut Vec<Served>) {
    let mut path = path.to_vec();
    let mut method = method;
    for filter in router.filters() {
        match filter.info() {
            FilterInfo::Path(p) => {
                path.extend(p.split('/').filter(|s| !s.is_empty()).map(normalize))
            }
            FilterInfo::Method(m) => method = Some(m.as_str().to_lowercase()),
            _ => {}
        }
    }
    if let Some(goal) = &router.goal {
        out.push(Served {
            method: method.clone(),
            path: format!("/{}", path.join("/")),
            handler: goal.type_name(),
        });
    }
    for child in router.routers() {
        walk(child, &path, method.clone(), out);
    }
}

/// Every garden route of the live router.
fn garden_routes() -> Vec<Served> {
    let mut all = Vec::new();
    walk(
        &kultiva::app::api_router(ServiceMode::Full),
        &[],
        None,
        &mut all,
    );
    all.retain(|r| r.path.starts_with("/api/v1/t/{slug}/"));
    all
}

/// One documented garden operation, ready to call.
#[derive(Debug, Clone)]
struct Operation {
    name: String,
    method: Method,
    path: String,
    params: Vec<String>,
    min_role: Role,
}

impl Operation {
    fn writes(&self) -> bool {
        !matches!(self.method, Method::GET | Method::HEAD | Method::OPTIONS)
    }

    fn url(&self, slug: &str, ids: &HashMap<String, String>) -> String {
        let mut url = self.path.replace("{slug}", slug);
        for (name, id) in ids {
            url = url.replace(&format!("{{{name}}}"), id);
        }
        url
    }

    /// Writes carry an empty JSON object: every refusal by role must come before the body is
    /// read.
    fn body(&self) -> Option<Value> {
        matches!(self.method, Method::POST | Method::PUT | Method::PATCH).then(|| json!({}))
    }
}

/// Status and JSON body (Null when the body is not JSON).
async fn send(app: &TestApp, op: &Operation, url: &str, auth: Option<&str>) -> (u16, Value) {
    send_body(app, op, url, auth, op.body()).await
}

async fn send_body(
    app: &TestApp,
    op: &Operation,
    url: &str,
    auth: Option<&str>,
    body: Option<Value>,
) -> (u16, Value) {
    app.rest_auth(auth)
        .call(op.method.clone(), url, body.as_ref())
        .await
}

/// What two error answers must share to be indistinguishable.
fn face(body: &Value) -> Value {
    json!([body["error_code"], body["message"], body["details"]])
}

#[tokio::test]
async fn isolation_guard_covers_every_garden_route() {
    let app = mcp_tools::app().await;
    let a = Garden::new(&app, "guard-a").await;
    let b = Garden::new(&app, "guard-b").await;
    // Not a member of A: the admin of B (JWT and an unscoped key), and an admin of A whose
    // key is scoped to B.
    let outsider = &b.admin;
    let outsider_key = app.api_key(outsider, None).await;
    let elsewhere = app.member(&a.tenant, Role::Admin).await;
    app.add_member(&b.tenant, elsewhere.id(), Role::Viewer)
        .await;
    let elsewhere_key = app.api_key(&elsewhere, Some(b.slug())).await;
    let ghost = unique_slug("ghost");

    let doc: Value = app
        .get("/api/v1/openapi.json")
        .await
        .json()
        .await
        .expect("openapi json");
    let mut failures = Vec::new();
    let mut ops = Vec::new();
    let served = garden_routes();
    assert!(
        served.iter().any(|r| r.path == "/api/v1/t/{slug}/sites"),
        "the walk finds the garden routes: {served:?}"
    );
    for route in &served {
        let Some(method) = &route.method else {
            failures.push(format!(
                "{} ({}) answers every method: give it a method",
                route.path, route.handler
            ));
            continue;
        };
        let documented = &doc["paths"][&route.path][method];
        let name = documented["operationId"]
            .as_str()
            .map_or_else(|| route.handler.to_owned(), str::to_owned);
        if !documented.is_object() {
            failures.push(format!(
                "{} {} ({}) is served but not in the OpenAPI document: use #[endpoint]",
                method.to_uppercase(),
                route.path,
                route.handler
            ));
            continue;
        }
        let Some(min_role) = documented["x-min-role"].as_str().and_then(Role::parse) else {
            failures.push(format!("{name}: no x-min-role in the OpenAPI document"));
            continue;
        };
        let params: Vec<String> = route
            .path
            .split('/')
            .filter_map(|s| s.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
            .filter(|p| *p != "slug")
            .map(str::to_owned)
            .collect();
        ops.push(Operation {
            name,
            method: Method::from_bytes(method.to_uppercase().as_bytes()).expect("method"),
            path: route.path.clone(),
            params,
            min_role,
        });
    }

    let shared = {
        let key = &a.keys[&Role::Admin];
        Shared {
            species: shared_value(&app, key, "species_key")
                .await
                .expect("species"),
            phase: shared_value(&app, key, "target_phase_key")
                .await
                .expect("phase"),
        }
    };

    // Each garden gets one record per path parameter; a parameter without a maker fails.
    let mut ids_a = HashMap::new();
    let mut ids_b = HashMap::new();
    let all_params: BTreeSet<&String> = ops.iter().flat_map(|o| &o.params).collect();
    for param in all_params {
        let in_a = make(&app, &a, param, &mut ids_a).await;
        let in_b = make(&app, &b, param, &mut ids_b).await;
        match (in_a, in_b) {
            (Some(_), Some(_)) => {}
            _ => {
                let users: Vec<&str> = ops
                    .iter()
                    .filter(|o| o.params.contains(param))
                    .map(|o| o.name.as_str())
                    .collect();
                failures.push(format!(
                    "path parameter {{{param}}} of {users:?}: add a fixture maker for it to \
                     isolation_guard::make"
                ));
            }
        }
    }
    ops.retain(|o| o.params.iter().all(|p| ids_a.contains_key(p)));

    // Refusals: nothing may change in either garden (compared after each operation).
    let mut before = (
        snapshot(&app, &a.tenant).await,
        snapshot(&app, &b.tenant).await,
    );
    for op in &ops {
        let own = op.url(a.slug(), &ids_a);
        let unknown = op.url(&ghost, &ids_a);
        let label = format!("{} ({} {})", op.name, op.method, op.path);

        // Non-members: the same 404 as a slug that does not exist.
        for (who, auth) in [
            ("non-member JWT", outsider.bearer()),
            ("non-member API key", bearer(&outsider_key)),
            ("key scoped to another garden", bearer(&elsewhere_key)),
        ] {
            let (status, body) = send(&app, op, &own, Some(&auth)).await;
            let (_, missing) = send(&app, op, &unknown, Some(&auth)).await;
            if status != 404 || body["error_code"] != "ENTITY_NOT_FOUND" {
                failures.push(format!("{label}, {who}: {status} {body}, want 404"));
            } else if face(&body) != face(&missing) {
                failures.push(format!(
                    "{label}, {who}: {body} differs from the unknown slug's {missing}"
                ));
            }
        }
        let (status, _) = send(&app, op, &own, None).await;
        if status != 401 {
            failures.push(format!("{label}, anonymous: {status}, want 401"));
        }

        // Another garden's record in the path, as A's admin (with a valid body where the
        // handler reads the body first).
        for param in &op.params {
            let mut mixed = ids_a.clone();
            mixed.insert(param.clone(), ids_b[param].clone());
            let url = op.url(a.slug(), &mixed);
            let body = valid_body(&op.name, &ids_a, &shared).or_else(|| op.body());
            let (status, body) = send_body(&app, op, &url, Some(&a.admin.bearer()), body).await;
            if status != 404 || body["error_code"] != "ENTITY_NOT_FOUND" {
                let hint = if status == 422 {
                    " (the body was validated before the record was looked up: add a valid \
                     body for it to isolation_guard::valid_body)"
                } else {
                    ""
                };
                failures.push(format!(
                    "{label}: {{{param}}} of another garden answered {status} {body}, \
                     want 404{hint}"
                ));
            }
        }

        // Roles below the minimum (a viewer writes nothing).
        let below: Vec<Role> = [Role::Viewer, Role::Grower]
            .into_iter()
            .filter(|r| *r < op.min_role)
            .collect();
        if op.writes() && op.min_role == Role::Viewer {
            // A write open to viewers (`http::roles::COMPUTE_ONLY`) must persist nothing: the
            // viewer's call runs here, inside the write check below.
            let (status, body) = send(&app, op, &own, Some(&a.viewer.bearer())).await;
            if matches!(status, 401 | 403 | 404) || status >= 500 {
                failures.push(format!("{label}, viewer (its x-min-role): {status} {body}"));
            }
        }
        for role in below {
            let (status, body) = send(&app, op, &own, Some(&a.user(role).bearer())).await;
            if status != 403 || body["error_code"] != "FORBIDDEN" {
                let hint = if status == 422 {
                    " (the body was validated before the role check)"
                } else {
                    ""
                };
                failures.push(format!(
                    "{label}, {}: {status} {body}, want 403 (x-min-role {}){hint}",
                    role.as_str(),
                    op.min_role.as_str()
                ));
            }
        }
        let after = (
            snapshot(&app, &a.tenant).await,
            snapshot(&app, &b.tenant).await,
        );
        for (garden, was, is) in [("A", &before.0, &after.0), ("B", &before.1, &after.1)] {
            if was != is {
                failures.push(format!(
                    "{label}: requests that must write nothing changed garden {garden}: {}",
                    changed(was, is)
                ));
            }
        }
        before = after;
    }

    // The minimum role itself is let through, with the garden's own records (fresh ones:
    // a delete may succeed here).
    for op in &ops {
        let mut fresh = HashMap::new();
        for param in &op.params {
            make(&app, &a, param, &mut fresh).await;
        }
        let url = op.url(a.slug(), &fresh);
        let (status, body) = send(&app, op, &url, Some(&a.user(op.min_role).bearer())).await;
        if matches!(status, 401 | 403 | 404) || status >= 500 {
            failures.push(format!(
                "{} ({} {}), {} (its x-min-role) with its own garden's records: {status} {body}",
                op.name,
                op.method,
                op.path,
                op.min_role.as_str()
            ));
        }
    }

    assert!(
        failures.is_empty(),
        "isolation guard, routes:\n{}",
        failures.join("\n")
    );
}

// ---------------------------------------------------------------------------------------------
// Tools
// ---------------------------------------------------------------------------------------------

/// A value of a property that passes the argument table.
fn sample(property: &Value) -> Value {
    if let Some(first) = property["enum"].as_array().and_then(|v| v.first()) {
        return first.clone();
    }
    // A moment or a day (a reading's measured_at): a valid one in the past.
    match property["format"].as_str() {
        Some("date-time") => return json!("2026-01-01T00:00:00Z"),
        Some("date") => return json!("2026-01-01"),
        _ => {}
    }
    match property["type"].as_str() {
        Some("integer") | Some("number") => property["minimum"].clone(),
        Some("boolean") => property.get("default").cloned().unwrap_or(json!(false)),
        // A list of records (e.g. a mix's components): as few as allowed, each with its
        // required fields.
        Some("array") => {
            let count = property["minItems"].as_u64().unwrap_or(1).max(1);
            json!(
                (0..count)
                    .map(|_| sample(&property["items"]))
                    .collect::<Vec<_>>()
            )
        }
        Some("object") => {
            let required = property["required"].as_array().cloned().unwrap_or_default();
            let fields = required
                .iter()
                .filter_map(Value::as_str)
                .map(|name| (name.to_owned(), sample(&property["properties"][name])))
                .collect::<serde_json::Map<_, _>>();
            Value::Object(fields)
        }
        _ => {
            let min = property["minLength"].as_u64().unwrap_or(1) as usize;
            let max = property["maxLength"].as_u64().unwrap_or(100) as usize;
            let base = "0190f3c1-7a2b-7c3d-8e4f-a0b1c2d3e4f5";
            let mut s: String = base.chars().take(max).collect();
            while s.chars().count() < min {
                s.push('x');
            }
            json!(s)
        }
    }
}

/// Arguments named like keys that name no record: free labels the caller chooses
/// (`claim_diary_analysis.worker_id` is the agent's own name for its worker).
const LABELS: &[&str] = &["idempotency_key", "worker_id"];

/// An argument naming a record.
fn is_key(name: &str) -> bool {
    (name.ends_with("_key") || name.ends_with("_id")) && !LABELS.contains(&name)
}

fn refused(status: u16, body: &Value, want: (u16, &str)) -> bool {
    status == want.0 && body["error_code"] == want.1
}

#[tokio::test]
async fn isolation_guard_covers_every_tool() {
    let app = mcp_tools::app().await;
    let a = Garden::new(&app, "guard-ta").await;
    let b = Garden::new(&app, "guard-tb").await;
    let padmin = app.platform_admin().await;
    let padmin_key = app.api_key(&padmin, None).await;
    let outsider_key = app.api_key(&b.admin, None).await;
    let platform: TenantRecord = {
        let id: uuid::Uuid =
            sqlx::query_scalar("SELECT id FROM platform.tenants WHERE kind = 'platform'")
                .fetch_one(app.state.platform_pool())
                .await
                .expect("platform garden");
        kultiva::tenancy::registry::find_by_id(app.state.platform_pool(), id)
            .await
            .expect("lookup")
            .expect("platform garden")
    };
    let mut platform_keys = BTreeMap::new();
    for role in [Role::Viewer, Role::Grower] {
        platform_keys.insert(role, scoped_key(&app, &platform, role).await);
    }

    // The enumeration: tools/list as the platform admin, who is shown every tool, and that is
    // the whole registry.
    let mut rpc = Rpc::open(&app, &padmin_key).await;
    let listed = rpc.request("tools/list", json!({})).await;
    let tools = listed["tools"].as_array().expect("tools").clone();
    let names: BTreeSet<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    let registry: BTreeSet<&str> = kultiva::mcp::tools::ALL.iter().map(|t| t.name).collect();
    assert_eq!(names, registry, "tools/list shows the whole registry");

    // One record per garden key argument in each garden, made before the snapshot.
    let mut failures = Vec::new();
    let mut own_ids: HashMap<String, String> = HashMap::new();
    let mut foreign_ids: HashMap<String, String> = HashMap::new();
    let garden_args: BTreeSet<String> = tools
        .iter()
        .filter_map(|t| t["inputSchema"]["properties"].as_object())
        .flat_map(|p| p.keys())
        .filter(|n| is_key(n) && !SHARED_KEYS.contains(&n.as_str()))
        .cloned()
        .collect();
    for arg in &garden_args {
        let own = make(&app, &a, arg, &mut own_ids).await;
        let foreign = make(&app, &b, arg, &mut foreign_ids).await;
        match (own, foreign) {
            (Some(_), Some(_)) => {}
            _ => {
                let users: Vec<&str> = tools
                    .iter()
                    .filter(|t| t["inputSchema"]["properties"].get(arg).is_some())
                    .filter_map(|t| t["name"].as_str())
                    .collect();
                failures.push(format!(
                    "argument {arg} of {users:?} names a garden record: add a fixture maker \
                     for it to isolation_guard::make (or, for a catalogue key, to SHARED_KEYS)"
                ));
            }
        }
    }
    // A list of garden keys (fertilizer_keys) takes A's own record of its singular, where the
    // guard can make one; the either/or groups below need it to reach the tool's other keys.
    let listed: BTreeSet<String> = tools
        .iter()
        .filter_map(|t| t["inputSchema"]["properties"].as_object())
        .flat_map(|p| p.keys())
        .filter_map(|n| n.strip_suffix('s'))
        .filter(|one| is_key(one) && !SHARED_KEYS.contains(one) && !garden_args.contains(*one))
        .map(str::to_owned)
        .collect();
    for one in &listed {
        // No maker for it: the group samples a value instead.
        let _ = make(&app, &a, one, &mut own_ids).await;
    }
    let before = (
        snapshot(&app, &a.tenant).await,
        snapshot(&app, &b.tenant).await,
    );
    for listing in &tools {
        let name = listing["name"].as_str().expect("name");
        let tool = kultiva::mcp::registry::find(name).expect("registered");
        let schema = &listing["inputSchema"];
        let props = schema["properties"].as_object().expect("properties");
        let required: BTreeSet<&str> = schema["required"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        // Valid arguments: required ones sampled from the schema, garden keys from garden A.
        let mut base = serde_json::Map::new();
        for (arg, property) in props {
            if required.contains(arg.as_str()) {
                let value = own_ids
                    .get(arg)
                    .map_or_else(|| sample(property), |id| json!(id));
                base.insert(arg.clone(), value);
            }
        }
        // An either/or rule takes its first argument, so the call is valid and reaches the
        // tenant and record checks.
        for rule in tool.rules {
            if let kultiva::mcp::args::ArgRule::AtLeastOne(names)
            | kultiva::mcp::args::ArgRule::ExactlyOne(names) = *rule
                && !names.iter().any(|n| base.contains_key(*n))
            {
                // A garden record of A's where the rule allows one (alone or as a list of
                // one), else the first sampled.
                let own = |n: &str| {
                    own_ids.get(n).map(|id| json!(id)).or_else(|| {
                        let one = n.strip_suffix('s')?;
                        own_ids.get(one).map(|id| json!([id]))
                    })
                };
                let first = names
                    .iter()
                    .copied()
                    .find(|n| own(n).is_some())
                    .unwrap_or(names[0]);
                let value = own(first).unwrap_or_else(|| sample(&props[first]));
                base.insert(first.to_owned(), value);
            }
        }
        let garden_keys: Vec<&String> = props
            .keys()
            .filter(|n| garden_args.contains(n.as_str()))
            .collect();
        let in_garden = |mut args: serde_json::Map<String, Value>, slug: &str| {
            args.insert("tenant".into(), json!(slug));
            Value::Object(args)
        };
        let own_garden = if tool.scope == kultiva::mcp::registry::Scope::Platform {
            platform.slug.as_str()
        } else {
            a.slug()
        };

        // A garden the caller is not a member of: as nonexistent as an unknown slug.
        let (status, body) =
            mcp_tools::call(&app, &outsider_key, name, in_garden(base.clone(), a.slug())).await;
        let (_, missing) = mcp_tools::call(
            &app,
            &outsider_key,
            name,
            in_garden(base.clone(), &unique_slug("ghost")),
        )
        .await;
        if !refused(status, &body, (404, "not_found")) {
            failures.push(format!(
                "{name}, non-member: {status} {body}, want not_found"
            ));
        } else if face(&body) != face(&missing) {
            failures.push(format!(
                "{name}, non-member: {body} differs from an unknown garden's {missing}"
            ));
        }

        // Another garden's record in each key argument, the rest A's own: not_found; A's own
        // record in its place is found.
        for arg in &garden_keys {
            let (Some(own), Some(foreign)) = (own_ids.get(*arg), foreign_ids.get(*arg)) else {
                continue;
            };
            // The other garden keys of the tool are A's own records (a tool may need one of
            // several, such as a location or a slot), so the call reaches the one swapped.
            let mut args = base.clone();
            for other in garden_keys.iter().filter(|k| **k != *arg) {
                if let Some(v) = own_ids.get(*other) {
                    args.insert((*other).clone(), json!(v));
                }
            }
            // Exactly one of a group: the swapped argument stands alone in its group; another
            // group keeps the member the valid arguments chose.
            for rule in tool.rules {
                if let kultiva::mcp::args::ArgRule::ExactlyOne(names) = *rule {
                    let keep = if names.contains(&arg.as_str()) {
                        Some(arg.as_str())
                    } else {
                        names.iter().copied().find(|n| base.contains_key(*n))
                    };
                    if let Some(keep) = keep {
                        for other in names.iter().filter(|n| **n != keep) {
                            args.remove(*other);
                        }
                    }
                }
            }
            // Required catalogue keys beside it must be real, or the call stops at them.
            for other in props.keys().filter(|k| SHARED_KEYS.contains(&k.as_str())) {
                if !required.contains(other.as_str()) {
                    continue;
                }
                match shared_value(&app, &a.keys[&Role::Admin], other).await {
                    Some(v) => {
                        args.insert(other.clone(), json!(v));
                    }
                    None => failures.push(format!(
                        "{name}: needs a real {other} to reach {arg}: add it to \
                         isolation_guard::shared_value"
                    )),
                }
            }
            let admin = &a.keys[&Role::Admin];
            let dry_runs: &[bool] = if tool.writes() {
                &[true, false]
            } else {
                &[false]
            };
            for dry in dry_runs {
                let mut call = args.clone();
                call.insert((*arg).clone(), json!(foreign));
                if tool.writes() {
                    call.insert("dry_run".into(), json!(dry));
                }
                let (status, body) =
                    mcp_tools::call(&app, admin, name, in_garden(call, own_garden)).await;
                if !refused(status, &body, (404, "not_found")) {
                    failures.push(format!(
                        "{name}: {arg} of another garden (dry_run {dry}) answered {status} \
                         {body}, want not_found"
                    ));
                }
            }
            let mut control = args.clone();
            control.insert((*arg).clone(), json!(own));
            if tool.writes() {
                control.insert("dry_run".into(), json!(true));
            }
            let (status, body) =
                mcp_tools::call(&app, admin, name, in_garden(control, own_garden)).await;
            if status == 404 || status == 403 || status >= 500 {
                failures.push(format!(
                    "{name}: its own garden's {arg} answered {status} {body}: the guard's \
                     not_found above proves nothing"
                ));
            }
        }

        // Roles without the permission, in the garden the tool binds.
        let keys_here = |role: Role| {
            if tool.scope == kultiva::mcp::registry::Scope::Platform {
                platform_keys[&role].clone()
            } else {
                a.keys[&role].clone()
            }
        };
        let weaker: Vec<Role> = [Role::Viewer, Role::Grower]
            .into_iter()
            .filter(|r| !tool.permission.granted_to(*r))
            .collect();
        for role in weaker {
            let (status, body) = mcp_tools::call(
                &app,
                &keys_here(role),
                name,
                in_garden(base.clone(), own_garden),
            )
            .await;
            if !refused(status, &body, (403, "permission.denied")) {
                failures.push(format!(
                    "{name} ({}), {}: {status} {body}, want permission.denied",
                    tool.permission.as_str(),
                    role.as_str()
                ));
            }
        }
    }
    let after = (
        snapshot(&app, &a.tenant).await,
        snapshot(&app, &b.tenant).await,
    );
    for (garden, was, is) in [("A", &before.0, &after.0), ("B", &before.1, &after.1)] {
        if was != is {
            failures.push(format!(
                "refused and dry-run tool calls changed garden {garden}: {}",
                changed(was, is)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "isolation guard, tools:\n{}",
        failures.join("\n")
    );
}
