//! Places: sites (update, delete), locations as a tree (create, list, get, move with the
//! subtree, cycles refused, delete), slots (capacity, adjacency, delete), what stands in the
//! way of a delete, the placement contract the plants capability calls, roles, tenant
//! isolation and the place tools (`get_location`, `create_site`).

use kultiva::auth::Role;
use kultiva::error::ErrorCode;
use kultiva::garden::places::service::{assert_batch_usable, placement_target};
use kultiva::tenancy::TenantTx;
use kultiva::tenancy::registry::TenantRecord;
use reqwest::Method;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::garden::count;
pub(crate) use crate::support::rest_tool as tool;
use crate::support::{JsonReply, Rest, TestApp, assert_error, detail_fields, key_of};

/// A plant row standing in a place (the plants capability owns the table and its API; the
/// places rules only read it).
pub(crate) async fn insert_plant(
    app: &TestApp,
    tenant: &TenantRecord,
    location: &str,
    slot: Option<&str>,
    batch: Option<&str>,
    archived: bool,
) -> Uuid {
    let id = Uuid::now_v7();
    let sql = format!(
        "INSERT INTO {}.plants (id, name, species_key, location_id, slot_id, substrate_batch_id, \
         archived_at, archive_reason) VALUES ($1, 'Basil', 'ocimum-basilicum', $2, $3, $4, \
         CASE WHEN $5 THEN now() END, CASE WHEN $5 THEN 'died' END)",
        tenant.schema_name.quoted()
    );
    let key = |k: Option<&str>| k.map(|k| Uuid::parse_str(k).expect("uuid"));
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(id)
        .bind(key(Some(location)))
        .bind(key(slot))
        .bind(key(batch))
        .bind(archived)
        .execute(app.state.platform_pool())
        .await
        .expect("plant row");
    id
}

/// One `tools/call` over JSON-RPC in a fresh session: the tool result.
pub(crate) async fn rpc_call(app: &TestApp, key: &str, name: &str, args: Value) -> Value {
    crate::mcp_tools::Rpc::open(app, key)
        .await
        .request("tools/call", json!({"name": name, "arguments": args}))
        .await
}

/// Rows of the place tables: (sites, locations, slots, slot neighbours).
async fn counts(app: &TestApp, tenant: &TenantRecord) -> (i64, i64, i64, i64) {
    (
        count(app, tenant, "sites").await,
        count(app, tenant, "locations").await,
        count(app, tenant, "slots").await,
        count(app, tenant, "slot_neighbours").await,
    )
}

struct Garden<'a> {
    rest: Rest<'a>,
    base: String,
}

impl Garden<'_> {
    fn new<'a>(app: &'a TestApp, tenant: &TenantRecord) -> Garden<'a> {
        let base = format!("/api/v1/t/{}", tenant.slug);
        Garden {
            rest: app.rest().under(&base),
            base,
        }
    }

    async fn req(&self, method: Method, path: &str, body: Option<Value>) -> reqwest::Response {
        self.rest.send(method, path, body.as_ref()).await
    }

    async fn post(&self, path: &str, body: Value) -> Value {
        self.rest.create(path, &body).await
    }

    async fn get(&self, path: &str) -> Value {
        self.rest.get_ok(path).await
    }

    async fn patch(&self, path: &str, body: Value) -> reqwest::Response {
        self.rest.patch(path, &body).await
    }

    async fn delete(&self, path: &str) -> reqwest::Response {
        self.rest.delete(path).await
    }

    async fn site(&self, name: &str) -> String {
        key_of(
            &self
                .post("/sites/", json!({"name": name, "kind": "balcony"}))
                .await,
        )
    }

    async fn location(&self, site: &str, parent: Option<&str>, name: &str) -> String {
        key_of(&self
            .post(
                "/locations/",
                json!({"site_key": site, "parent_key": parent, "name": name, "kind": "container"}),
            )
            .await)
    }

    async fn slot(&self, location: &str, code: &str, capacity: i64) -> String {
        key_of(
            &self
                .post(
                    "/slots/",
                    json!({"location_key": location, "code": code, "capacity": capacity}),
                )
                .await,
        )
    }
}

#[tokio::test]
async fn places_site_location_slot_tree() {
    let app = TestApp::spawn().await;
    let tenant = app.tenant("places").await;
    let g = Garden::new(&app, &tenant);

    // Sites: update and the listing.
    let balcony = g.site("Balcony").await;
    let patched = g
        .patch(
            &format!("/sites/{balcony}"),
            json!({"name": "South balcony", "description": "sunny"}),
        )
        .await
        .expect_json(200)
        .await;
    assert_eq!(patched["name"], "South balcony");
    assert_eq!(patched["kind"], "balcony");
    assert_eq!(patched["description"], "sunny");
    let patched = g
        .patch(
            &format!("/sites/{balcony}"),
            json!({"kind": "garden", "description": null}),
        )
        .await
        .expect_json(200)
        .await;
    assert_eq!(
        (patched["kind"].clone(), patched["description"].clone()),
        (json!("garden"), Value::Null)
    );

    // A tree: balcony > box 1 > left half; box 2.
    let box1 = g
        .post(
            "/locations/",
            json!({"site_key": balcony, "name": " Box 1 ", "kind": "container", "description": "80 cm"}),
        )
        .await;
    assert_eq!(box1["name"], "Box 1");
    assert_eq!(box1["depth"], 0);
    assert_eq!(box1["parent_key"], Value::Null);
    assert_eq!(box1["site_key"], balcony.as_str());
    assert_eq!(box1["children"], json!([]));
    let box1 = key_of(&box1);
    let left = g.location(&balcony, Some(&box1), "Left half").await;
    let box2 = g.location(&balcony, None, "Box 2").await;

    // Slots with positions and capacity; adjacency is symmetric.
    let a1 = g
        .post(
            "/slots/",
            json!({"location_key": box1, "code": "BOX1_A1", "position_x": 0, "position_y": 0}),
        )
        .await;
    assert_eq!(a1["capacity"], 1);
    assert_eq!(a1["live_plants"], 0);
    assert_eq!(a1["neighbour_keys"], json!([]));
    let a1 = key_of(&a1);
    let a2 = g.slot(&box1, "BOX1_A2", 2).await;
    let a3 = g.slot(&box1, "BOX1_A3", 20).await;
    let s = g
        .req(
            Method::PUT,
            &format!("/slots/{a2}/neighbours"),
            Some(json!({"neighbour_keys": [a1, a3, a1]})),
        )
        .await
        .expect_json(200)
        .await;
    let mut want = vec![a1.clone(), a3.clone()];
    want.sort();
    assert_eq!(s["neighbour_keys"], json!(want));
    assert_eq!(
        g.get(&format!("/slots/{a1}")).await["neighbour_keys"],
        json!([a2])
    );
    assert_eq!(
        g.get(&format!("/slots/{a3}")).await["neighbour_keys"],
        json!([a2])
    );
    // Replacing the set removes the reverse links too.
    g.req(
        Method::PUT,
        &format!("/slots/{a2}/neighbours"),
        Some(json!({"neighbour_keys": [a3]})),
    )
    .await
    .expect_json(200)
    .await;
    assert_eq!(
        g.get(&format!("/slots/{a1}")).await["neighbour_keys"],
        json!([])
    );
    assert_eq!(count(&app, &tenant, "slot_neighbours").await, 2);

    // Get: children and slots in position order.
    let detail = g.get(&format!("/locations/{box1}")).await;
    assert_eq!(detail["children"][0]["key"], left.as_str());
    assert_eq!(detail["children"][0]["depth"], 1);
    let codes: Vec<&str> = detail["slots"]
        .as_array()
        .expect("slots")
        .iter()
        .filter_map(|s| s["code"].as_str())
        .collect();
    assert_eq!(codes, ["BOX1_A1", "BOX1_A2", "BOX1_A3"]);

    // Lists and their filters; paging bounds.
    let all = g.get("/locations/").await;
    assert_eq!(all["total"], 3);
    let top = g
        .get(&format!("/locations/?site_key={balcony}&limit=1"))
        .await;
    assert_eq!(
        (top["total"].clone(), top["items"].as_array().map(Vec::len)),
        (json!(3), Some(1))
    );
    let below = g.get(&format!("/locations/?parent_key={box1}")).await;
    assert_eq!(below["total"], 1);
    assert_eq!(below["items"][0]["key"], left.as_str());
    let slots = g.get(&format!("/slots/?location_key={box1}&skip=2")).await;
    assert_eq!(slots["total"], 3);
    assert_eq!(slots["items"][0]["code"], "BOX1_A3");
    assert_eq!(
        g.get(&format!("/slots/?location_key={box2}")).await["total"],
        0
    );
    for q in [
        "/locations/?limit=201",
        "/locations/?skip=-1",
        "/locations/?site_key=x",
        "/slots/?limit=0",
        "/slots/?location_key=1",
    ] {
        let err = assert_error(g.req(Method::GET, q, None).await, 422, "VALIDATION_ERROR").await;
        assert_eq!(err["details"].as_array().map(Vec::len), Some(1), "{q}");
    }
    let err = assert_error(
        g.req(Method::GET, "/locations/?limit=0&parent_key=zz", None)
            .await,
        422,
        "VALIDATION_ERROR",
    )
    .await;
    assert_eq!(detail_fields(&err), ["query.limit", "query.parent_key"]);

    // Move box 1 below box 2: the subtree follows (depths shift).
    let moved = g
        .patch(
            &format!("/locations/{box1}"),
            json!({"parent_key": box2, "name": "Box 1a"}),
        )
        .await
        .expect_json(200)
        .await;
    assert_eq!(
        (moved["depth"].clone(), moved["parent_key"].clone()),
        (json!(1), json!(box2))
    );
    assert_eq!(moved["name"], "Box 1a");
    assert_eq!(g.get(&format!("/locations/{left}")).await["depth"], 2);
    // A cycle (box 2 below its own grandchild) is refused and changes nothing.
    let err = assert_error(
        g.patch(&format!("/locations/{box2}"), json!({"parent_key": left}))
            .await,
        422,
        "VALIDATION_ERROR",
    )
    .await;
    assert_eq!(detail_fields(&err), ["body.parent_key"]);
    assert_error(
        g.patch(&format!("/locations/{box2}"), json!({"parent_key": box2}))
            .await,
        422,
        "VALIDATION_ERROR",
    )
    .await;
    assert_eq!(g.get(&format!("/locations/{box2}")).await["depth"], 0);
    // Back to the top.
    let top = g
        .patch(&format!("/locations/{box1}"), json!({"parent_key": null}))
        .await
        .expect_json(200)
        .await;
    assert_eq!(top["depth"], 0);
    assert_eq!(g.get(&format!("/locations/{left}")).await["depth"], 1);

    // Move to another site: refused while a slot has a neighbour outside the subtree...
    let greenhouse = g.site("Greenhouse").await;
    let b1 = g.slot(&box2, "BOX2_B1", 1).await;
    g.req(
        Method::PUT,
        &format!("/slots/{b1}/neighbours"),
        Some(json!({"neighbour_keys": [a1]})),
    )
    .await
    .expect_json(200)
    .await;
    assert_error(
        g.patch(
            &format!("/locations/{box1}"),
            json!({"site_key": greenhouse}),
        )
        .await,
        409,
        "STATE_CONFLICT",
    )
    .await;
    assert_eq!(
        g.get(&format!("/locations/{box1}")).await["site_key"],
        balcony.as_str()
    );
    // ...then moves with the subtree, directly under the new site.
    g.req(
        Method::PUT,
        &format!("/slots/{b1}/neighbours"),
        Some(json!({"neighbour_keys": []})),
    )
    .await
    .expect_json(200)
    .await;
    let moved = g
        .patch(
            &format!("/locations/{box1}"),
            json!({"site_key": greenhouse}),
        )
        .await
        .expect_json(200)
        .await;
    assert_eq!(moved["site_key"], greenhouse.as_str());
    assert_eq!(
        g.get(&format!("/locations/{left}")).await["site_key"],
        greenhouse.as_str()
    );
    // Neighbours stay within a site.
    let err = assert_error(
        g.req(
            Method::PUT,
            &format!("/slots/{b1}/neighbours"),
            Some(json!({"neighbour_keys": [a1]})),
        )
        .await,
        422,
        "VALIDATION_ERROR",
    )
    .await;
    assert_eq!(detail_fields(&err), ["body.neighbour_keys"]);

    // Slot update: code, capacity, position cleared.
    let s = g
        .patch(
            &format!("/slots/{a3}"),
            json!({"code": "BOX1_Z9", "capacity": 4, "position_x": null}),
        )
        .await
        .expect_json(200)
        .await;
    assert_eq!(
        (
            s["code"].clone(),
            s["capacity"].clone(),
            s["position_x"].clone()
        ),
        (json!("BOX1_Z9"), json!(4), Value::Null)
    );

    // Deletes: a site with locations and a location with children are refused.
    assert_error(
        g.delete(&format!("/sites/{greenhouse}")).await,
        409,
        "STATE_CONFLICT",
    )
    .await;
    assert_error(
        g.delete(&format!("/locations/{box1}")).await,
        409,
        "STATE_CONFLICT",
    )
    .await;
    assert_eq!(count(&app, &tenant, "locations").await, 3);
    let res = g.delete(&format!("/slots/{a1}")).await;
    assert_eq!(res.status().as_u16(), 204);
    assert_error(
        g.req(Method::GET, &format!("/slots/{a1}"), None).await,
        404,
        "ENTITY_NOT_FOUND",
    )
    .await;
    assert_eq!(
        g.delete(&format!("/locations/{left}"))
            .await
            .status()
            .as_u16(),
        204
    );
    // A location's empty slots go with it.
    assert_eq!(
        g.delete(&format!("/locations/{box1}"))
            .await
            .status()
            .as_u16(),
        204
    );
    assert_eq!(count(&app, &tenant, "slots").await, 1);
    assert_eq!(
        g.delete(&format!("/sites/{greenhouse}"))
            .await
            .status()
            .as_u16(),
        204
    );
    assert_error(
        g.req(Method::GET, &format!("/sites/{greenhouse}"), None)
            .await,
        404,
        "ENTITY_NOT_FOUND",
    )
    .await;
    for path in [
        format!("/locations/{box1}"),
        format!("/sites/{greenhouse}"),
        format!("/slots/{a1}"),
        "/slots/nope".to_owned(),
    ] {
        assert_error(g.delete(&path).await, 404, "ENTITY_NOT_FOUND").await;
    }
}

#[tokio::test]
async fn places_bad_input_is_refused_and_writes_nothing() {
    let app = TestApp::spawn().await;
    let tenant = app.tenant("placebad").await;
    let g = Garden::new(&app, &tenant);
    let site = g.site("Balcony").await;
    let other_site = g.site("Garden").await;
    let foreign_parent = g.location(&other_site, None, "Bed").await;
    let box1 = g.location(&site, None, "Box").await;
    let slot = g.slot(&box1, "BOX_A1", 2).await;
    let before = counts(&app, &tenant).await;

    // A parent in another site: 422 naming the field.
    let err = assert_error(
        g.req(
            Method::POST,
            "/locations/",
            Some(json!({"site_key": site, "parent_key": foreign_parent, "name": "X"})),
        )
        .await,
        422,
        "VALIDATION_ERROR",
    )
    .await;
    assert_eq!(detail_fields(&err), ["body.parent_key"]);
    // Every invalid field at once.
    let err = assert_error(
        g.req(
            Method::POST,
            "/locations/",
            Some(json!({"site_key": "nope", "name": " ", "kind": "cellar", "x": 1})),
        )
        .await,
        422,
        "VALIDATION_ERROR",
    )
    .await;
    assert_eq!(
        detail_fields(&err),
        ["body.site_key", "body.name", "body.kind", "body.x"]
    );
    // Unknown site or parent: 404; a duplicate name in the site: 409.
    assert_error(
        g.req(
            Method::POST,
            "/locations/",
            Some(json!({"site_key": Uuid::now_v7(), "name": "X"})),
        )
        .await,
        404,
        "ENTITY_NOT_FOUND",
    )
    .await;
    assert_error(
        g.req(
            Method::POST,
            "/locations/",
            Some(json!({"site_key": site, "parent_key": Uuid::now_v7(), "name": "X"})),
        )
        .await,
        404,
        "ENTITY_NOT_FOUND",
    )
    .await;
    assert_error(
        g.req(
            Method::POST,
            "/locations/",
            Some(json!({"site_key": site, "name": "BOX"})),
        )
        .await,
        409,
        "DUPLICATE_ENTRY",
    )
    .await;
    // Moving under a parent of another site without changing the site: 422.
    let err = assert_error(
        g.patch(
            &format!("/locations/{box1}"),
            json!({"parent_key": foreign_parent}),
        )
        .await,
        422,
        "VALIDATION_ERROR",
    )
    .await;
    assert_eq!(detail_fields(&err), ["body.parent_key"]);
    assert_error(
        g.patch(
            &format!("/locations/{box1}"),
            json!({"site_key": Uuid::now_v7()}),
        )
        .await,
        404,
        "ENTITY_NOT_FOUND",
    )
    .await;
    let err = assert_error(
        g.patch(
            &format!("/locations/{box1}"),
            json!({"site_key": null, "name": null}),
        )
        .await,
        422,
        "VALIDATION_ERROR",
    )
    .await;
    assert_eq!(detail_fields(&err), ["body.site_key", "body.name"]);

    // Slots: code pattern, capacity bounds (negative too), duplicates, unknown location.
    let err = assert_error(
        g.req(
            Method::POST,
            "/slots/",
            Some(json!({"location_key": box1, "code": "box a1", "capacity": 0, "position_x": -1})),
        )
        .await,
        422,
        "VALIDATION_ERROR",
    )
    .await;
    assert_eq!(
        detail_fields(&err),
        ["body.code", "body.capacity", "body.position_x"]
    );
    for capacity in [-3, 21] {
        let err = assert_error(
            g.req(
                Method::POST,
                "/slots/",
                Some(json!({"location_key": box1, "code": "BOX_A9", "capacity": capacity})),
            )
            .await,
            422,
            "VALIDATION_ERROR",
        )
        .await;
        assert_eq!(detail_fields(&err), ["body.capacity"]);
    }
    assert_error(
        g.req(
            Method::POST,
            "/slots/",
            Some(json!({"location_key": box1, "code": "BOX_A1"})),
        )
        .await,
        409,
        "DUPLICATE_ENTRY",
    )
    .await;
    assert_error(
        g.req(
            Method::POST,
            "/slots/",
            Some(json!({"location_key": Uuid::now_v7(), "code": "BOX_A9"})),
        )
        .await,
        404,
        "ENTITY_NOT_FOUND",
    )
    .await;
    let other = g.slot(&box1, "BOX_A2", 1).await;
    let before = (before.0, before.1, before.2 + 1, before.3);
    assert_error(
        g.patch(&format!("/slots/{other}"), json!({"code": "BOX_A1"}))
            .await,
        409,
        "DUPLICATE_ENTRY",
    )
    .await;
    let err = assert_error(
        g.patch(
            &format!("/slots/{other}"),
            json!({"capacity": null, "code": "A"}),
        )
        .await,
        422,
        "VALIDATION_ERROR",
    )
    .await;
    assert_eq!(detail_fields(&err), ["body.code", "body.capacity"]);
    // Neighbours: itself, unknown, not a list.
    let err = assert_error(
        g.req(
            Method::PUT,
            &format!("/slots/{slot}/neighbours"),
            Some(json!({"neighbour_keys": [slot]})),
        )
        .await,
        422,
        "VALIDATION_ERROR",
    )
    .await;
    assert_eq!(detail_fields(&err), ["body.neighbour_keys"]);
    assert_error(
        g.req(
            Method::PUT,
            &format!("/slots/{slot}/neighbours"),
            Some(json!({"neighbour_keys": [other, Uuid::now_v7()]})),
        )
        .await,
        404,
        "ENTITY_NOT_FOUND",
    )
    .await;
    assert_error(
        g.req(
            Method::PUT,
            &format!("/slots/{slot}/neighbours"),
            Some(json!({"neighbour_keys": "all"})),
        )
        .await,
        422,
        "VALIDATION_ERROR",
    )
    .await;
    // Sites: a taken name, a null kind.
    assert_error(
        g.patch(&format!("/sites/{site}"), json!({"name": "GARDEN"}))
            .await,
        409,
        "DUPLICATE_ENTRY",
    )
    .await;
    let err = assert_error(
        g.patch(&format!("/sites/{site}"), json!({"kind": null, "name": ""}))
            .await,
        422,
        "VALIDATION_ERROR",
    )
    .await;
    assert_eq!(detail_fields(&err), ["body.name", "body.kind"]);
    // Malformed JSON and a wrong content type.
    let res = app
        .post_raw(
            &format!("{}/slots/", g.base),
            "application/json",
            "{\"code\": ",
        )
        .await;
    assert_error(res, 400, "MALFORMED_REQUEST").await;
    let res = app
        .post_raw(&format!("{}/locations/", g.base), "text/plain", "x")
        .await;
    assert_error(res, 415, "UNSUPPORTED_MEDIA_TYPE").await;

    assert_eq!(counts(&app, &tenant).await, before, "nothing was written");
    let s = g.get(&format!("/sites/{site}")).await;
    assert_eq!(s["name"], "Balcony");
    let b = g.get(&format!("/locations/{box1}")).await;
    assert_eq!(
        (b["name"].clone(), b["parent_key"].clone()),
        (json!("Box"), Value::Null)
    );
}

#[tokio::test]
async fn places_plants_block_deletes_and_the_placement_contract() {
    let app = TestApp::spawn().await;
    let tenant = app.tenant("placeplant").await;
    let g = Garden::new(&app, &tenant);
    let site = g.site("Balcony").await;
    let box1 = g.location(&site, None, "Box 1").await;
    let box2 = g.location(&site, None, "Box 2").await;
    let a1 = g.slot(&box1, "BOX1_A1", 2).await;
    let a2 = g.slot(&box1, "BOX1_A2", 1).await;
    let b1 = g.slot(&box2, "BOX2_B1", 1).await;
    g.req(
        Method::PUT,
        &format!("/slots/{a1}/neighbours"),
        Some(json!({"neighbour_keys": [a2]})),
    )
    .await
    .expect_json(200)
    .await;
    let loc = |k: &str| Uuid::parse_str(k).expect("uuid");

    // The contract: a location alone, a slot with its capacity, plants and neighbours.
    let mut tx = TenantTx::begin(&app.state, &tenant).await.expect("tx");
    let t = placement_target(&mut tx, loc(&box1), None)
        .await
        .expect("target");
    assert_eq!(t.location.site_key, loc(&site));
    assert!(t.slot.is_none());
    let t = placement_target(&mut tx, loc(&box1), Some(loc(&a1)))
        .await
        .expect("target");
    let slot = t.slot.expect("slot");
    assert_eq!(
        (slot.capacity, slot.live_plants, slot.neighbour_keys),
        (2, 0, vec![loc(&a2)])
    );
    let err = placement_target(&mut tx, Uuid::now_v7(), None)
        .await
        .expect_err("unknown");
    assert_eq!(err.code(), ErrorCode::EntityNotFound);
    let err = placement_target(&mut tx, loc(&box1), Some(Uuid::now_v7()))
        .await
        .expect_err("unknown slot");
    assert_eq!(err.code(), ErrorCode::EntityNotFound);
    let err = placement_target(&mut tx, loc(&box1), Some(loc(&b1)))
        .await
        .expect_err("other location");
    assert_eq!(err.code(), ErrorCode::ValidationError);
    assert_eq!(err.details()[0].field, "body.slot_key");
    tx.rollback().await.expect("rollback");

    // Plants stand in A1 (one live, one archived) and in box 2 without a slot.
    insert_plant(&app, &tenant, &box1, Some(&a1), None, false).await;
    insert_plant(&app, &tenant, &box1, Some(&a2), None, true).await;
    let mut tx = TenantTx::begin(&app.state, &tenant).await.expect("tx");
    let t = placement_target(&mut tx, loc(&box1), Some(loc(&a1)))
        .await
        .expect("room left");
    assert_eq!(t.slot.expect("slot").live_plants, 1);
    tx.rollback().await.expect("rollback");
    insert_plant(&app, &tenant, &box1, Some(&a1), None, false).await;
    let mut tx = TenantTx::begin(&app.state, &tenant).await.expect("tx");
    let err = placement_target(&mut tx, loc(&box1), Some(loc(&a1)))
        .await
        .expect_err("full");
    assert_eq!(err.code(), ErrorCode::ValidationError);
    assert!(err.details()[0].reason.contains("full"), "{err:?}");
    // An archived plant does not take a place.
    placement_target(&mut tx, loc(&box1), Some(loc(&a2)))
        .await
        .expect("archived ones leave");
    tx.rollback().await.expect("rollback");
    insert_plant(&app, &tenant, &box2, None, None, false).await;

    let slot = g.get(&format!("/slots/{a1}")).await;
    assert_eq!(slot["live_plants"], 2);
    assert_eq!(g.get(&format!("/locations/{box2}")).await["live_plants"], 1);
    // Capacity cannot drop below the live plants.
    let err = assert_error(
        g.patch(&format!("/slots/{a1}"), json!({"capacity": 1}))
            .await,
        422,
        "VALIDATION_ERROR",
    )
    .await;
    assert_eq!(detail_fields(&err), ["body.capacity"]);
    // Deletes are refused while plants (or an archived plant's history) stand there.
    assert_error(
        g.delete(&format!("/slots/{a1}")).await,
        409,
        "STATE_CONFLICT",
    )
    .await;
    let err = assert_error(
        g.delete(&format!("/slots/{a2}")).await,
        409,
        "STATE_CONFLICT",
    )
    .await;
    assert!(
        err["message"]
            .as_str()
            .is_some_and(|m| m.contains("archived"))
    );
    assert_error(
        g.delete(&format!("/locations/{box1}")).await,
        409,
        "STATE_CONFLICT",
    )
    .await;
    let err = assert_error(
        g.delete(&format!("/locations/{box2}")).await,
        409,
        "STATE_CONFLICT",
    )
    .await;
    assert!(
        err["message"]
            .as_str()
            .is_some_and(|m| m.contains("live plant"))
    );
    assert_error(
        g.delete(&format!("/sites/{site}")).await,
        409,
        "STATE_CONFLICT",
    )
    .await;
    assert_eq!(
        (
            count(&app, &tenant, "sites").await,
            count(&app, &tenant, "locations").await,
            count(&app, &tenant, "slots").await
        ),
        (1, 2, 3)
    );
    // An empty slot in a location with plants can go.
    assert_eq!(
        g.delete(&format!("/slots/{b1}")).await.status().as_u16(),
        204
    );

    // The batch half of the contract.
    let coco = crate::substrates::global_substrate(&app, "coco", 5.8, true, 2).await;
    let peat = crate::substrates::global_substrate(&app, "peat", 5.5, false, 1).await;
    let batches = "/substrate-batches/".to_owned();
    let fresh_peat = key_of(
        &g.post(&batches, json!({"substrate_key": peat, "label": "Peat"}))
            .await,
    );
    let used_peat = key_of(
        &g.post(
            &batches,
            json!({"substrate_key": peat, "label": "Old peat", "cycles_used": 1}),
        )
        .await,
    );
    let coco_batch = key_of(
        &g.post(
            &batches,
            json!({"substrate_key": coco, "label": "Coco", "cycles_used": 2}),
        )
        .await,
    );
    let worn = key_of(
        &g.post(
            &batches,
            json!({"substrate_key": coco, "label": "Worn", "cycles_used": 3}),
        )
        .await,
    );
    let mut tx = TenantTx::begin(&app.state, &tenant).await.expect("tx");
    assert_batch_usable(&mut tx, loc(&fresh_peat))
        .await
        .expect("a fresh batch");
    assert_batch_usable(&mut tx, loc(&coco_batch))
        .await
        .expect("within the limit");
    for exhausted in [&used_peat, &worn] {
        let err = assert_batch_usable(&mut tx, loc(exhausted))
            .await
            .expect_err("exhausted");
        assert_eq!(err.code(), ErrorCode::SubstrateExhausted);
        assert_eq!(err.code().status().as_u16(), 422);
    }
    let err = assert_batch_usable(&mut tx, Uuid::now_v7())
        .await
        .expect_err("unknown");
    assert_eq!(err.code(), ErrorCode::EntityNotFound);
    tx.rollback().await.expect("rollback");
    // Live plants in a batch are shown on it.
    insert_plant(&app, &tenant, &box2, None, Some(&coco_batch), false).await;
    assert_eq!(
        g.get(&format!("{batches}{coco_batch}")).await["live_plants"],
        1
    );
}

#[tokio::test]
async fn places_roles_and_tenant_isolation() {
    let app = TestApp::full().await;
    let a = app.tenant("placea").await;
    let b = app.tenant("placeb").await;
    let viewer = app.rest_as(&app.member(&a, Role::Viewer).await);
    let grower = app.rest_as(&app.member(&a, Role::Grower).await);
    let admin = app.rest_as(&app.member(&a, Role::Admin).await);
    let b_admin = app.rest_as(&app.member(&b, Role::Admin).await);
    let sa = format!("/api/v1/t/{}", a.slug);
    let sb = format!("/api/v1/t/{}", b.slug);
    let site = key_of(
        &admin
            .create(
                &format!("{sa}/sites/"),
                &json!({"name": "Roof", "kind": "garden"}),
            )
            .await,
    );
    let loc = key_of(
        &admin
            .create(
                &format!("{sa}/locations/"),
                &json!({"site_key": site, "name": "Bed"}),
            )
            .await,
    );
    let slot = key_of(
        &admin
            .create(
                &format!("{sa}/slots/"),
                &json!({"location_key": loc, "code": "BED_1", "capacity": 3}),
            )
            .await,
    );
    let slot2 = key_of(
        &admin
            .create(
                &format!("{sa}/slots/"),
                &json!({"location_key": loc, "code": "BED_2"}),
            )
            .await,
    );

    // Setup writes (sites, locations, slots) are the admin's: viewer and grower get 403 and
    // nothing changes.
    let writes: Vec<(Method, String, Option<Value>)> = vec![
        (
            Method::POST,
            format!("{sa}/sites/"),
            Some(json!({"name": "Other", "kind": "garden"})),
        ),
        (
            Method::PATCH,
            format!("{sa}/sites/{site}"),
            Some(json!({"name": "Renamed"})),
        ),
        (Method::DELETE, format!("{sa}/sites/{site}"), None),
        (
            Method::POST,
            format!("{sa}/locations/"),
            Some(json!({"site_key": site, "name": "Other"})),
        ),
        (
            Method::PATCH,
            format!("{sa}/locations/{loc}"),
            Some(json!({"name": "Renamed"})),
        ),
        (Method::DELETE, format!("{sa}/locations/{loc}"), None),
        (
            Method::POST,
            format!("{sa}/slots/"),
            Some(json!({"location_key": loc, "code": "BED_9"})),
        ),
        (
            Method::PATCH,
            format!("{sa}/slots/{slot}"),
            Some(json!({"capacity": 5})),
        ),
        (Method::DELETE, format!("{sa}/slots/{slot}"), None),
        (
            Method::PUT,
            format!("{sa}/slots/{slot}/neighbours"),
            Some(json!({"neighbour_keys": [slot2]})),
        ),
    ];
    for who in [&viewer, &grower] {
        for (method, path, body) in &writes {
            let res = who.send(method.clone(), path, body.clone().as_ref()).await;
            assert_error(res, 403, "FORBIDDEN").await;
        }
    }
    // A non-member: 404 for every route, reads too.
    for (method, path, body) in &writes {
        assert_error(
            b_admin
                .send(method.clone(), path, body.clone().as_ref())
                .await,
            404,
            "ENTITY_NOT_FOUND",
        )
        .await;
    }
    let reads = [
        format!("{sa}/sites/{site}"),
        format!("{sa}/locations/"),
        format!("{sa}/locations/{loc}"),
        format!("{sa}/slots/"),
        format!("{sa}/slots/{slot}"),
    ];
    for path in &reads {
        assert_error(b_admin.get(path).await, 404, "ENTITY_NOT_FOUND").await;
        for who in [&viewer, &grower, &admin] {
            who.get_ok(path).await;
        }
    }
    assert_eq!(
        (
            count(&app, &a, "sites").await,
            count(&app, &a, "locations").await,
            count(&app, &a, "slots").await,
            count(&app, &a, "slot_neighbours").await
        ),
        (1, 1, 2, 0)
    );
    assert_eq!(
        viewer.get_ok(&format!("{sa}/sites/{site}")).await["name"],
        "Roof"
    );
    // The admin may do all of it.
    admin
        .put(
            &format!("{sa}/slots/{slot}/neighbours"),
            &json!({"neighbour_keys": [slot2]}),
        )
        .await
        .expect_json(200)
        .await;
    admin
        .patch(&format!("{sa}/locations/{loc}"), &json!({"name": "Bed 1"}))
        .await
        .expect_json(200)
        .await;

    // A's keys in B's paths find nothing, and B's own lists stay empty.
    let b_site = key_of(
        &b_admin
            .create(
                &format!("{sb}/sites/"),
                &json!({"name": "Yard", "kind": "garden"}),
            )
            .await,
    );
    let b_loc = key_of(
        &b_admin
            .create(
                &format!("{sb}/locations/"),
                &json!({"site_key": b_site, "name": "Yard bed"}),
            )
            .await,
    );
    for (method, path, body) in [
        (Method::GET, format!("{sb}/sites/{site}"), None),
        (Method::GET, format!("{sb}/locations/{loc}"), None),
        (Method::GET, format!("{sb}/slots/{slot}"), None),
        (
            Method::PATCH,
            format!("{sb}/locations/{loc}"),
            Some(json!({"name": "x"})),
        ),
        (Method::DELETE, format!("{sb}/slots/{slot}"), None),
        (Method::DELETE, format!("{sb}/sites/{site}"), None),
        (
            Method::POST,
            format!("{sb}/locations/"),
            Some(json!({"site_key": site, "name": "Sneaky"})),
        ),
        (
            Method::POST,
            format!("{sb}/locations/"),
            Some(json!({"site_key": b_site, "parent_key": loc, "name": "Sneaky"})),
        ),
        (
            Method::PATCH,
            format!("{sb}/locations/{b_loc}"),
            Some(json!({"parent_key": loc})),
        ),
        (
            Method::POST,
            format!("{sb}/slots/"),
            Some(json!({"location_key": loc, "code": "SNEAK_1"})),
        ),
    ] {
        assert_error(
            b_admin.send(method, &path, body.as_ref()).await,
            404,
            "ENTITY_NOT_FOUND",
        )
        .await;
    }
    let listed = b_admin
        .get_ok(&format!("{sb}/locations/?site_key={site}"))
        .await;
    assert_eq!(listed["total"], 0);
    let listed = b_admin
        .get_ok(&format!("{sb}/slots/?location_key={loc}"))
        .await;
    assert_eq!(listed["total"], 0);
    assert_eq!(
        (
            count(&app, &b, "locations").await,
            count(&app, &b, "slots").await
        ),
        (1, 0)
    );
    assert_eq!(count(&app, &a, "locations").await, 1);
}

#[tokio::test]
async fn place_tools_over_rest_face_and_json_rpc() {
    let app = TestApp::full_env(&[("MCP_SERVER_ENABLED", "true")]).await;
    let a = app.tenant("placetl").await;
    let b = app.tenant("placetlb").await;
    let admin_user = app.member(&a, Role::Admin).await;
    let admin = app.api_key(&admin_user, Some(a.slug.as_str())).await;
    let grower = app
        .api_key(&app.member(&a, Role::Grower).await, Some(a.slug.as_str()))
        .await;
    let viewer = app
        .api_key(&app.member(&a, Role::Viewer).await, Some(a.slug.as_str()))
        .await;
    let outsider = app
        .api_key(&app.member(&b, Role::Admin).await, Some(b.slug.as_str()))
        .await;

    // create_site: setup (admin only), dry run writes nothing, idempotent replay.
    let args = json!({"name": "Tool balcony", "kind": "balcony"});
    for key in [&viewer, &grower] {
        let (status, err) = tool(&app, key, "create_site", args.clone()).await;
        assert_eq!(
            (status, err["error_code"].as_str()),
            (403, Some("permission.denied"))
        );
    }
    let mut dry = args.clone();
    dry["dry_run"] = json!(true);
    let (status, d) = tool(&app, &admin, "create_site", dry).await;
    assert_eq!(status, 200, "{d}");
    assert_eq!(d["dry_run"], true);
    assert!(d["data"].get("site_key").is_none());
    assert_eq!(count(&app, &a, "sites").await, 0);
    let mut real = args.clone();
    real["idempotency_key"] = json!("site-1");
    let (status, made) = tool(&app, &admin, "create_site", real.clone()).await;
    assert_eq!(status, 200, "{made}");
    assert_eq!(made["data"]["kind"], "balcony");
    let site = made["data"]["site_key"].as_str().expect("key").to_owned();
    let (_, again) = tool(&app, &admin, "create_site", real).await;
    assert_eq!(again["idempotent_replay"], true);
    assert_eq!(count(&app, &a, "sites").await, 1);
    let (status, err) = tool(&app, &admin, "create_site", json!({"name": "TOOL BALCONY"})).await;
    assert_eq!(
        (status, err["error_code"].as_str()),
        (409, Some("conflict.state"))
    );
    let (status, err) = tool(
        &app,
        &admin,
        "create_site",
        json!({"name": "x", "kind": "cave"}),
    )
    .await;
    assert_eq!(
        (status, err["error_code"].as_str()),
        (422, Some("validation.error"))
    );
    assert_eq!(count(&app, &a, "sites").await, 1);

    // get_location over the place built on REST.
    let rest = |method: Method, path: String, body: Value| {
        let app = &app;
        let bearer = admin_user.bearer();
        async move {
            app.rest_auth(Some(&bearer))
                .send(method, &path, Some(&body))
                .await
        }
    };
    let sa = format!("/api/v1/t/{}", a.slug);
    let loc = key_of(
        &rest(
            Method::POST,
            format!("{sa}/locations/"),
            json!({"site_key": site, "name": "Box", "kind": "container"}),
        )
        .await
        .expect_json(201)
        .await,
    );
    rest(
        Method::POST,
        format!("{sa}/locations/"),
        json!({"site_key": site, "parent_key": loc, "name": "Left"}),
    )
    .await
    .expect_json(201)
    .await;
    for code in ["BOX_A1", "BOX_A2"] {
        rest(
            Method::POST,
            format!("{sa}/slots/"),
            json!({"location_key": loc, "code": code, "capacity": 2}),
        )
        .await
        .expect_json(201)
        .await;
    }
    let (status, got) = tool(&app, &viewer, "get_location", json!({"location_key": loc})).await;
    assert_eq!(status, 200, "{got}");
    assert_eq!(got["data"]["name"], "Box");
    assert_eq!(got["data"]["site_name"], "Tool balcony");
    assert_eq!(got["data"]["children"][0]["name"], "Left");
    assert_eq!(got["data"]["slots"][1]["code"], "BOX_A2");
    assert_eq!(got["data"]["slots"][1]["free"], 2);
    assert!(
        got["summary"]
            .as_str()
            .is_some_and(|s| s.contains("4 free")),
        "{got}"
    );
    assert_eq!(got["links"][0]["url"], format!("{sa}/locations/{loc}"));
    // Another garden's key, a malformed key, an unknown one: not_found.
    for (key, args) in [
        (&outsider, json!({"location_key": loc})),
        (&viewer, json!({"location_key": "nope"})),
        (&viewer, json!({"location_key": Uuid::now_v7()})),
    ] {
        let (status, err) = tool(&app, key, "get_location", args).await;
        assert_eq!(
            (status, err["error_code"].as_str()),
            (404, Some("not_found"))
        );
        assert!(!err.to_string().contains("Tool balcony"));
    }
    let (status, err) = tool(
        &app,
        &outsider,
        "get_location",
        json!({"location_key": loc, "tenant": a.slug.as_str()}),
    )
    .await;
    assert_eq!(
        (status, err["error_code"].as_str()),
        (404, Some("not_found"))
    );

    // The same over JSON-RPC.
    let r = rpc_call(&app, &viewer, "get_location", json!({"location_key": loc})).await;
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(
        r["structuredContent"]["data"]["slots"]
            .as_array()
            .map(Vec::len),
        Some(2)
    );
    let r = rpc_call(
        &app,
        &outsider,
        "get_location",
        json!({"location_key": loc}),
    )
    .await;
    assert_eq!(r["isError"], true);
    assert_eq!(r["structuredContent"]["error_code"], "not_found");
    let r = rpc_call(&app, &grower, "create_site", json!({"name": "Nope"})).await;
    assert_eq!(r["structuredContent"]["error_code"], "permission.denied");
    assert_eq!(count(&app, &a, "sites").await, 1);
}

#[tokio::test]
async fn placements_into_one_slot_serialise_on_its_lock() {
    let app = TestApp::spawn().await;
    let tenant = app.tenant("placelock").await;
    let g = Garden::new(&app, &tenant);
    let site = g.site("Balcony").await;
    let pot = g.location(&site, None, "Pot").await;
    let slot = g.slot(&pot, "POT_1", 1).await;
    let (loc, slot) = (
        Uuid::parse_str(&pot).expect("uuid"),
        Uuid::parse_str(&slot).expect("uuid"),
    );

    // The first placement holds the slot until its transaction ends...
    let mut first = TenantTx::begin(&app.state, &tenant).await.expect("tx");
    placement_target(&mut first, loc, Some(slot))
        .await
        .expect("room for one");
    let state = app.state.clone();
    let t2 = tenant.clone();
    let second = tokio::spawn(async move {
        let mut tx = TenantTx::begin(&state, &t2).await.expect("tx");
        let outcome = placement_target(&mut tx, loc, Some(slot)).await.map(|_| ());
        tx.rollback().await.expect("rollback");
        outcome
    });
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(
        !second.is_finished(),
        "the second placement waits for the slot"
    );
    let insert = first.sql(
        "INSERT INTO tenant.plants (id, name, species_key, location_id, slot_id) \
         VALUES ($1, 'Tomato', 'solanum-lycopersicum', $2, $3)",
    );
    sqlx::query(insert)
        .bind(Uuid::now_v7())
        .bind(loc)
        .bind(slot)
        .execute(first.conn())
        .await
        .expect("plant");
    first.commit().await.expect("commit");
    // ...so the second sees the slot full: exactly one placement wins.
    let err = second.await.expect("task").expect_err("full");
    assert_eq!(err.code(), ErrorCode::ValidationError);
    assert_eq!(count(&app, &tenant, "plants").await, 1);
}

/// The conditions of a location (frost, climate zone, light, area) as a stored row reads them.
async fn conditions_row(app: &TestApp, tenant: &TenantRecord, loc: &str) -> Value {
    let sql = format!(
        "SELECT json_build_object('frost_exposed', frost_exposed, 'climate_zone', climate_zone, \
         'light_situation', light_situation, 'area_sqm', area_sqm, 'updated_at', updated_at) \
         FROM {}.locations WHERE id = $1",
        tenant.schema_name.quoted()
    );
    sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
        .bind(Uuid::parse_str(loc).expect("uuid"))
        .fetch_one(app.state.platform_pool())
        .await
        .expect("row")
}

#[tokio::test]
async fn location_conditions_create_patch_clear_and_refusals() {
    let app = TestApp::spawn().await;
    let tenant = app.tenant("loccond").await;
    let g = Garden::new(&app, &tenant);
    let site = g.site("Balcony").await;

    // Created with every condition; the answer and a later read show them.
    let made = g
        .post(
            "/locations/",
            json!({"site_key": site, "name": "Box 1", "kind": "container",
                   "frost_exposed": true, "climate_zone": "7b",
                   "light_situation": "full_sun", "area_sqm": 0.75}),
        )
        .await;
    let loc = key_of(&made);
    let got = g.get(&format!("/locations/{loc}")).await;
    for body in [&made, &got] {
        assert_eq!(body["frost_exposed"], true);
        assert_eq!(body["climate_zone"], "7b");
        assert_eq!(body["light_situation"], "full_sun");
        assert_eq!(body["area_sqm"], 0.75);
    }
    // Without them: null, never a default ("not frost exposed" is a fact, not a guess).
    let bare = g
        .post("/locations/", json!({"site_key": site, "name": "Box 2"}))
        .await;
    for field in [
        "frost_exposed",
        "climate_zone",
        "light_situation",
        "area_sqm",
    ] {
        assert_eq!(bare[field], Value::Null, "{field}");
    }
    let listed = g.get(&format!("/locations/?site_key={site}")).await;
    assert_eq!(listed["items"][0]["climate_zone"], "7b");

    // PATCH: omitted stays, a value replaces, null clears.
    let patched = g
        .patch(
            &format!("/locations/{loc}"),
            json!({"frost_exposed": false, "area_sqm": null}),
        )
        .await
        .expect_json(200)
        .await;
    assert_eq!(patched["frost_exposed"], false);
    assert_eq!(patched["area_sqm"], Value::Null);
    assert_eq!(patched["climate_zone"], "7b");
    assert_eq!(patched["light_situation"], "full_sun");
    assert_eq!(patched["name"], "Box 1");
    let patched = g
        .patch(
            &format!("/locations/{loc}"),
            json!({"light_situation": "partial_shade", "climate_zone": "13a", "area_sqm": 0}),
        )
        .await
        .expect_json(200)
        .await;
    assert_eq!(patched["light_situation"], "partial_shade");
    assert_eq!(patched["climate_zone"], "13a");
    assert_eq!(patched["area_sqm"], 0.0);
    assert_eq!(patched["frost_exposed"], false);

    // Bad values: one 422 naming every bad field, nothing written (create or patch).
    let before_rows = count(&app, &tenant, "locations").await;
    let before = conditions_row(&app, &tenant, &loc).await;
    let bad = json!({"frost_exposed": "yes", "climate_zone": "14a",
                     "light_situation": "dark", "area_sqm": -1});
    let want = [
        "body.frost_exposed",
        "body.climate_zone",
        "body.light_situation",
        "body.area_sqm",
    ];
    let mut create = bad.clone();
    create["site_key"] = json!(site);
    create["name"] = json!("Box 3");
    let res = g.req(Method::POST, "/locations/", Some(create)).await;
    let body = assert_error(res, 422, "VALIDATION_ERROR").await;
    let mut fields = detail_fields(&body);
    fields.sort();
    let mut sorted = want.to_vec();
    sorted.sort();
    assert_eq!(fields, sorted);
    assert_eq!(count(&app, &tenant, "locations").await, before_rows);
    let res = g.patch(&format!("/locations/{loc}"), bad).await;
    let body = assert_error(res, 422, "VALIDATION_ERROR").await;
    assert_eq!(detail_fields(&body).len(), 4, "{body}");
    for (field, value) in [
        ("climate_zone", json!("7c")),
        ("climate_zone", json!("0a")),
        ("climate_zone", json!("07a")),
        ("climate_zone", json!(7)),
        ("climate_zone", json!("")),
        ("area_sqm", json!(100_001)),
        ("area_sqm", json!("big")),
        ("frost_exposed", json!(1)),
        ("light_situation", json!("FULL_SUN")),
    ] {
        let res = g
            .patch(&format!("/locations/{loc}"), json!({ field: value }))
            .await;
        let body = assert_error(res, 422, "VALIDATION_ERROR").await;
        assert_eq!(detail_fields(&body), [format!("body.{field}")], "{value}");
    }
    assert_eq!(
        conditions_row(&app, &tenant, &loc).await,
        before,
        "no refused patch changed the row"
    );
}

#[tokio::test]
async fn slot_substrate_batch_assign_show_clear_and_refusals() {
    let app = TestApp::spawn().await;
    let tenant = app.tenant("slotbatch").await;
    let g = Garden::new(&app, &tenant);
    let site = g.site("Balcony").await;
    let loc = g.location(&site, None, "Box").await;
    let slot = g.slot(&loc, "BOX_A1", 1).await;
    let sub = g
        .post(
            "/substrates/",
            json!({"name": "Coco wash", "type": "coco", "reusable": true, "max_reuse_cycles": 3}),
        )
        .await;
    let batch = key_of(
        &g.post(
            "/substrate-batches/",
            json!({"substrate_key": sub["key"], "label": "Coco 1"}),
        )
        .await,
    );
    let fresh = g.get(&format!("/slots/{slot}")).await;
    assert_eq!(fresh["substrate_batch_key"], Value::Null);

    // Assign: the slot, its location and the slot list show it.
    let path = format!("/slots/{slot}/substrate-batch");
    let set = g
        .req(Method::PUT, &path, Some(json!({"batch_key": batch})))
        .await
        .expect_json(200)
        .await;
    assert_eq!(set["substrate_batch_key"], batch.as_str());
    let at = g.get(&format!("/locations/{loc}")).await;
    assert_eq!(at["slots"][0]["substrate_batch_key"], batch.as_str());
    let list = g.get(&format!("/slots/?location_key={loc}")).await;
    assert_eq!(list["items"][0]["substrate_batch_key"], batch.as_str());
    // Assigning counts no cycle.
    let b = g.get(&format!("/substrate-batches/{batch}")).await;
    assert_eq!(b["cycles_used"], 0);

    // Refusals change nothing.
    let exhausted = crate::garden::batch(&app, &tenant, "Old soil", 1).await;
    let res = g
        .req(Method::PUT, &path, Some(json!({"batch_key": exhausted})))
        .await;
    assert_error(res, 422, "SUBSTRATE_EXHAUSTED").await;
    let res = g
        .req(
            Method::PUT,
            &path,
            Some(json!({"batch_key": Uuid::now_v7()})),
        )
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    for body in [
        json!({}),
        json!({"batch_key": "nope"}),
        json!({"batch_key": batch, "extra": 1}),
    ] {
        let res = g.req(Method::PUT, &path, Some(body.clone())).await;
        let err = assert_error(res, 422, "VALIDATION_ERROR").await;
        assert!(!detail_fields(&err).is_empty(), "{body}: {err}");
    }
    let res = g
        .req(
            Method::PUT,
            &format!("/slots/{}/substrate-batch", Uuid::now_v7()),
            Some(json!({"batch_key": batch})),
        )
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    let still = g.get(&format!("/slots/{slot}")).await;
    assert_eq!(still["substrate_batch_key"], batch.as_str());

    // A batch in a slot cannot be deleted; emptied, it can.
    let res = g.delete(&format!("/substrate-batches/{batch}")).await;
    let err = assert_error(res, 409, "STATE_CONFLICT").await;
    assert!(err["message"].to_string().contains("BOX_A1"), "{err}");
    let cleared = g
        .req(Method::PUT, &path, Some(json!({"batch_key": null})))
        .await
        .expect_json(200)
        .await;
    assert_eq!(cleared["substrate_batch_key"], Value::Null);
    let res = g.delete(&format!("/substrate-batches/{batch}")).await;
    assert_eq!(res.status().as_u16(), 204);
    // The slot may be deleted while it holds a batch (the batch stays).
    let batch2 = key_of(
        &g.post(
            "/substrate-batches/",
            json!({"substrate_key": sub["key"], "label": "Coco 2"}),
        )
        .await,
    );
    g.req(Method::PUT, &path, Some(json!({"batch_key": batch2})))
        .await
        .expect_json(200)
        .await;
    assert_eq!(
        g.delete(&format!("/slots/{slot}")).await.status().as_u16(),
        204
    );
    g.get(&format!("/substrate-batches/{batch2}")).await;
}

#[tokio::test]
async fn get_location_tool_shows_conditions_and_slot_batches() {
    let app = TestApp::full_env(&[("MCP_SERVER_ENABLED", "true")]).await;
    let a = app.tenant("loctool").await;
    let admin_user = app.member(&a, Role::Admin).await;
    let viewer = app
        .api_key(&app.member(&a, Role::Viewer).await, Some(a.slug.as_str()))
        .await;
    let bearer = admin_user.bearer();
    let sa = format!("/api/v1/t/{}", a.slug);
    let post = |path: String, body: Value| {
        let app = &app;
        let bearer = bearer.clone();
        async move { app.rest_auth(Some(&bearer)).create(&path, &body).await }
    };
    let site = key_of(
        &post(
            format!("{sa}/sites/"),
            json!({"name": "Roof", "kind": "balcony"}),
        )
        .await,
    );
    let unknown = key_of(
        &post(
            format!("{sa}/locations/"),
            json!({"site_key": site, "name": "Corner"}),
        )
        .await,
    );
    let loc = key_of(
        &post(
            format!("{sa}/locations/"),
            json!({"site_key": site, "name": "Box", "frost_exposed": true,
               "climate_zone": "8a", "light_situation": "shade", "area_sqm": 1.5}),
        )
        .await,
    );
    let slot = key_of(
        &post(
            format!("{sa}/slots/"),
            json!({"location_key": loc, "code": "BOX_1"}),
        )
        .await,
    );
    let sub = post(
        format!("{sa}/substrates/"),
        json!({"name": "Potting soil", "type": "soil"}),
    )
    .await;
    let batch = key_of(
        &post(
            format!("{sa}/substrate-batches/"),
            json!({"substrate_key": sub["key"], "label": "Soil 1"}),
        )
        .await,
    );
    let res = app
        .rest_auth(Some(&bearer))
        .put(
            &format!("{sa}/slots/{slot}/substrate-batch"),
            &json!({"batch_key": batch}),
        )
        .await;
    res.expect_json(200).await;

    let (status, got) = tool(&app, &viewer, "get_location", json!({"location_key": loc})).await;
    assert_eq!(status, 200, "{got}");
    let d = &got["data"];
    assert_eq!(d["frost_exposed"], true);
    assert_eq!(d["climate_zone"], "8a");
    assert_eq!(d["light_situation"], "shade");
    assert_eq!(d["area_sqm"], 1.5);
    assert_eq!(d["slots"][0]["substrate_batch_key"], batch.as_str());
    assert!(
        got["summary"]
            .as_str()
            .is_some_and(|s| s.contains("Frost exposed")),
        "{got}"
    );
    // Unrecorded conditions are present and null (unknown, not "no").
    let (_, got) = tool(
        &app,
        &viewer,
        "get_location",
        json!({"location_key": unknown}),
    )
    .await;
    let d = got["data"].as_object().expect("data");
    for field in [
        "frost_exposed",
        "climate_zone",
        "light_situation",
        "area_sqm",
    ] {
        assert_eq!(d.get(field), Some(&Value::Null), "{field}: {got}");
    }
}
