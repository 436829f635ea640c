//! Tanks through REST: create, fill, top up, adjust, maintenance log with due dates, current
//! state, bad input refused with nothing written, roles and two-tenant isolation.

use kultiva::auth::Role;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::garden::*;
use crate::support::{TestApp, assert_error, detail_fields};

fn tanks_path(t: &kultiva::tenancy::TenantRecord) -> String {
    format!("/api/v1/t/{}/tanks/", t.slug)
}

async fn tank(app: &TestApp, t: &kultiva::tenancy::TenantRecord, body: Value) -> Value {
    let (s, v) = post(app, &tanks_path(t), body.clone()).await;
    assert_eq!(s, 201, "create tank {body}: {v}");
    v
}

fn due<'a>(tank: &'a Value, kind: &str) -> &'a Value {
    tank["maintenance"]
        .as_array()
        .expect("maintenance")
        .iter()
        .find(|m| m["maintenance_type"] == kind)
        .unwrap_or_else(|| panic!("{kind} in {tank}"))
}

#[tokio::test]
async fn tanks_fill_top_up_adjust_and_maintain() {
    let app = TestApp::spawn().await;
    let t = app.tenant("tanks").await;
    let (_, loc, _) = bed(&app, &t, "Tank room", 0).await;
    let created = tank(
        &app,
        &t,
        json!({"name": " Main tank ", "kind": "nutrient", "volume_liters": 100, "location_key": loc}),
    )
    .await;
    assert_eq!(created["name"], "Main tank");
    assert_eq!(created["location_key"], loc.to_string());
    assert_eq!(created["state"]["current_volume_liters"], Value::Null);
    assert_eq!(created["state"]["age_days"], Value::Null);
    // Nutrient tank: water change every 7 days, never done: due 7 days after set-up.
    let today = time::OffsetDateTime::now_utc().date();
    assert_eq!(
        due(&created, "water_change")["next_due_on"],
        (today + time::Duration::days(7)).to_string()
    );
    assert_eq!(due(&created, "water_change")["status"], "ok");
    let k = key(&created);
    let base = format!("{}{k}", tanks_path(&t));

    // Full change: 80 L at EC 1.8, pH 6.0.
    let (s, filled) = post(
        &app,
        &format!("{base}/fills"),
        json!({"fill_type": "full_change", "volume_liters": 80, "ec_ms": 1.8, "ph": 6.0,
               "water_source": "osmose", "water_temp_c": 20}),
    )
    .await;
    assert_eq!(s, 201, "{filled}");
    let st = &filled["state"];
    assert_eq!(st["current_volume_liters"], 80.0);
    assert_eq!(st["fill_percent"], 80.0);
    assert_eq!(st["ec_ms"], 1.8);
    assert_eq!(st["ph"], 6.0);
    assert_eq!(st["age_days"], 0);
    assert_eq!(st["last_fill"]["fill_type"], "full_change");
    assert_eq!(st["last_fill"]["water_source"], "osmose");
    assert!(
        st["last_fill"]["actor"]
            .as_str()
            .is_some_and(|a| a.starts_with("user:"))
    );
    // The full change counts as the water change.
    assert!(due(&filled, "water_change")["last_performed_at"].is_string());

    // Top-up of 10 L without a measurement keeps EC and pH; an adjustment sets the pH.
    let (s, topped) = post(
        &app,
        &format!("{base}/fills"),
        json!({"fill_type": "top_up", "volume_liters": 10}),
    )
    .await;
    assert_eq!(s, 201);
    assert_eq!(topped["state"]["current_volume_liters"], 90.0);
    assert_eq!(topped["state"]["ec_ms"], 1.8);
    let (s, adjusted) = post(
        &app,
        &format!("{base}/fills"),
        json!({"fill_type": "adjustment", "ph": 5.8}),
    )
    .await;
    assert_eq!(s, 201);
    assert_eq!(adjusted["state"]["current_volume_liters"], 90.0);
    assert_eq!(adjusted["state"]["ph"], 5.8);
    assert_eq!(adjusted["state"]["ec_ms"], 1.8);

    let (s, fills) = get_json(&app, &format!("{base}/fills")).await;
    assert_eq!(s, 200);
    assert_eq!(fills["total"], 3);
    assert_eq!(fills["items"][0]["fill_type"], "adjustment");
    assert_eq!(fills["items"][2]["fill_type"], "full_change");

    // Maintenance log; the cleaning's next due date moves to its day + 14.
    let (s, m) = post(
        &app,
        &format!("{base}/maintenance"),
        json!({"maintenance_type": "cleaning", "notes": "scrubbed"}),
    )
    .await;
    assert_eq!(s, 201, "{m}");
    assert_eq!(m["maintenance_type"], "cleaning");
    let (_, log) = get_json(&app, &format!("{base}/maintenance")).await;
    assert_eq!(log["total"], 1);
    let (_, got) = get_json(&app, &base).await;
    assert_eq!(
        due(&got, "cleaning")["next_due_on"],
        (today + time::Duration::days(14)).to_string()
    );

    // Patch: rename, grow, clear the location; list shows it.
    let res = app
        .rest()
        .patch(
            &base,
            &json!({"name": "Tank A", "volume_liters": 120, "location_key": null}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let patched: Value = res.json().await.expect("json");
    assert_eq!(patched["name"], "Tank A");
    assert_eq!(patched["state"]["fill_percent"], 75.0);
    assert_eq!(patched["location_key"], Value::Null);
    let (_, page) = get_json(&app, &tanks_path(&t)).await;
    assert_eq!(page["total"], 1);
    assert_eq!(page["items"][0]["name"], "Tank A");

    // Delete: gone with its fills and log.
    let res = app.rest().delete(&base).await;
    assert_eq!(res.status().as_u16(), 204);
    assert_error(app.get(&base).await, 404, "ENTITY_NOT_FOUND").await;
    assert_eq!(count(&app, &t, "tank_fills").await, 0);
    assert_eq!(count(&app, &t, "tank_maintenance").await, 0);
}

#[tokio::test]
async fn tanks_maintenance_goes_overdue() {
    let app = TestApp::spawn().await;
    let t = app.tenant("tankdue").await;
    let v = tank(
        &app,
        &t,
        json!({"name": "Old", "kind": "recirculation", "volume_liters": 200}),
    )
    .await;
    let id = Uuid::parse_str(&key(&v)).expect("uuid");
    // Set up 20 days ago: water change (7) and cleaning (14) overdue; sanitization (30) is due
    // on day 30, 10 days ahead: ok. Calibration (30) likewise.
    exec(
        &app,
        &t,
        "UPDATE {schema}.tanks SET created_at = now() - interval '20 days' WHERE id = $1",
        id,
    )
    .await;
    let (_, got) = get_json(&app, &format!("{}{id}", tanks_path(&t))).await;
    assert_eq!(due(&got, "water_change")["status"], "overdue");
    assert_eq!(due(&got, "cleaning")["status"], "overdue");
    assert_eq!(due(&got, "sanitization")["status"], "ok");
    assert_eq!(due(&got, "filter_change")["interval_days"], 60);
    // Soonest due first.
    assert_eq!(got["maintenance"][0]["maintenance_type"], "water_change");
    // A water change logged today: no longer overdue.
    let (s, _) = post(
        &app,
        &format!("{}{id}/maintenance", tanks_path(&t)),
        json!({"maintenance_type": "water_change"}),
    )
    .await;
    assert_eq!(s, 201);
    let (_, got) = get_json(&app, &format!("{}{id}", tanks_path(&t))).await;
    assert_eq!(due(&got, "water_change")["status"], "ok");
}

#[tokio::test]
async fn tanks_bad_input_is_refused_and_writes_nothing() {
    let app = TestApp::spawn().await;
    let t = app.tenant("tankbad").await;
    let other = app.tenant("tankbad-o").await;
    let (_, other_loc, _) = bed(&app, &other, "Elsewhere", 0).await;
    let base = tanks_path(&t);
    for (body, field) in [
        (
            json!({"name": "T", "kind": "nutrient", "volume_liters": -5}),
            "body.volume_liters",
        ),
        (
            json!({"name": "T", "kind": "nutrient", "volume_liters": 0}),
            "body.volume_liters",
        ),
        (
            json!({"name": "T", "kind": "nutrient", "volume_liters": 1e7}),
            "body.volume_liters",
        ),
        (
            json!({"name": "T", "kind": "bathtub", "volume_liters": 10}),
            "body.kind",
        ),
        (
            json!({"kind": "nutrient", "volume_liters": 10}),
            "body.name",
        ),
        (
            json!({"name": "T", "kind": "nutrient", "volume_liters": 10, "colour": "blue"}),
            "body.colour",
        ),
    ] {
        let res = app.post_json(&base, &body).await;
        let v = assert_error(res, 422, "VALIDATION_ERROR").await;
        assert!(detail_fields(&v).contains(&field.to_owned()), "{body}: {v}");
    }
    // A location of another garden: 404, nothing written.
    let res = app
        .post_json(
            &base,
            &json!({"name": "T", "kind": "nutrient", "volume_liters": 10, "location_key": other_loc}),
        )
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    assert_eq!(count(&app, &t, "tanks").await, 0);

    let v = tank(
        &app,
        &t,
        json!({"name": "T", "kind": "nutrient", "volume_liters": 50}),
    )
    .await;
    let k = key(&v);
    let fills = format!("{base}{k}/fills");
    let (s, _) = post(
        &app,
        &fills,
        json!({"fill_type": "full_change", "volume_liters": 40, "ec_ms": 1.2, "ph": 6.1}),
    )
    .await;
    assert_eq!(s, 201);
    for (body, field) in [
        (
            json!({"fill_type": "full_change", "volume_liters": 40, "ec_ms": 11}),
            "body.ec_ms",
        ),
        (
            json!({"fill_type": "full_change", "volume_liters": 40, "ph": 14.5}),
            "body.ph",
        ),
        (
            json!({"fill_type": "full_change", "volume_liters": 40, "ph": -1}),
            "body.ph",
        ),
        (
            json!({"fill_type": "top_up", "volume_liters": -3}),
            "body.volume_liters",
        ),
        (json!({"fill_type": "top_up"}), "body.volume_liters"),
        (
            json!({"fill_type": "adjustment", "volume_liters": 1}),
            "body.ec_ms",
        ),
        // 40 + 20 > 50: it would overflow.
        (
            json!({"fill_type": "top_up", "volume_liters": 20}),
            "body.volume_liters",
        ),
        (
            json!({"fill_type": "full_change", "volume_liters": 51}),
            "body.volume_liters",
        ),
        (
            json!({"fill_type": "full_change", "volume_liters": 5, "water_source": "sea"}),
            "body.water_source",
        ),
    ] {
        let res = app.post_json(&fills, &body).await;
        let v = assert_error(res, 422, "VALIDATION_ERROR").await;
        assert!(detail_fields(&v).contains(&field.to_owned()), "{body}: {v}");
    }
    // Maintenance: unknown type, a future date.
    for body in [
        json!({"maintenance_type": "polishing"}),
        json!({"maintenance_type": "cleaning", "performed_at": "2999-01-01T00:00:00Z"}),
        json!({"maintenance_type": "cleaning", "performed_at": "yesterday"}),
    ] {
        let res = app
            .post_json(&format!("{base}{k}/maintenance"), &body)
            .await;
        assert_error(res, 422, "VALIDATION_ERROR").await;
    }
    // Capacity below what it holds; another garden's location on a patch.
    for (body, status) in [
        (json!({"volume_liters": 30}), 422),
        (json!({"location_key": other_loc}), 404),
        (json!({"kind": null}), 422),
    ] {
        let res = app.rest().patch(&format!("{base}{k}"), &body).await;
        assert_eq!(res.status().as_u16(), status, "{body}");
    }
    // Nothing of it was written: one fill, no log, state as after the first fill.
    assert_eq!(count(&app, &t, "tank_fills").await, 1);
    assert_eq!(count(&app, &t, "tank_maintenance").await, 0);
    let (_, got) = get_json(&app, &format!("{base}{k}")).await;
    assert_eq!(got["state"]["current_volume_liters"], 40.0);
    assert_eq!(got["state"]["ec_ms"], 1.2);
    assert_eq!(got["volume_liters"], 50.0);
    assert_eq!(got["kind"], "nutrient");
    // Unknown and malformed keys: 404.
    for path in [
        format!("{base}{}", Uuid::now_v7()),
        format!("{base}not-a-key"),
    ] {
        assert_error(app.get(&path).await, 404, "ENTITY_NOT_FOUND").await;
    }
    // A duplicate name: 409.
    let res = app
        .post_json(
            &base,
            &json!({"name": "t", "kind": "reservoir", "volume_liters": 10}),
        )
        .await;
    assert_error(res, 409, "DUPLICATE_ENTRY").await;
}

#[tokio::test]
async fn tanks_viewers_read_growers_write() {
    let app = TestApp::full().await;
    let t = app.tenant("tankrole").await;
    let viewer = app.member(&t, Role::Viewer).await;
    let grower = app.member(&t, Role::Grower).await;
    let stranger = app.user("tank-stranger").await;
    let base = tanks_path(&t);
    let body = json!({"name": "Role tank", "kind": "irrigation", "volume_liters": 30});
    let res = app.rest_as(&viewer).post(&base, &body).await;
    assert_error(res, 403, "FORBIDDEN").await;
    let res = app.rest_as(&stranger).post(&base, &body).await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    assert_eq!(count(&app, &t, "tanks").await, 0);
    let res = app.rest_as(&grower).post(&base, &body).await;
    assert_eq!(res.status().as_u16(), 201);
    let k = key(&res.json::<Value>().await.expect("json"));
    for path in [
        base.clone(),
        format!("{base}{k}"),
        format!("{base}{k}/fills"),
        format!("{base}{k}/maintenance"),
    ] {
        let res = app.rest_as(&viewer).get(&path).await;
        assert_eq!(res.status().as_u16(), 200, "{path}");
    }
    let fill = json!({"fill_type": "full_change", "volume_liters": 10});
    let res = app
        .rest_as(&viewer)
        .post(&format!("{base}{k}/fills"), &fill)
        .await;
    assert_error(res, 403, "FORBIDDEN").await;
    let res = app.rest_as(&viewer).delete(&format!("{base}{k}")).await;
    assert_error(res, 403, "FORBIDDEN").await;
    assert_eq!(count(&app, &t, "tank_fills").await, 0);
    let res = app
        .rest_as(&grower)
        .post(&format!("{base}{k}/fills"), &fill)
        .await;
    assert_eq!(res.status().as_u16(), 201);
}

#[tokio::test]
async fn tanks_two_gardens_see_nothing_of_each_other() {
    let app = TestApp::spawn().await;
    let a = app.tenant("tanka").await;
    let b = app.tenant("tankb").await;
    let ta = tank(
        &app,
        &a,
        json!({"name": "A tank", "kind": "nutrient", "volume_liters": 20}),
    )
    .await;
    let ka = key(&ta);
    let (_, page_b) = get_json(&app, &tanks_path(&b)).await;
    assert_eq!(page_b["total"], 0);
    let in_b = format!("{}{ka}", tanks_path(&b));
    assert_error(app.get(&in_b).await, 404, "ENTITY_NOT_FOUND").await;
    let res = app
        .post_json(
            &format!("{in_b}/fills"),
            &json!({"fill_type": "full_change", "volume_liters": 5}),
        )
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    let res = app.rest().delete(&in_b).await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    assert_eq!(count(&app, &a, "tanks").await, 1);
    assert_eq!(count(&app, &a, "tank_fills").await, 0);
}
