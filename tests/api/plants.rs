//! Plant instances through REST and the tool server: create, read, list with filters and
//! paging, update, archive, move (rotation and companion checks), substrate, roles, two
//! tenants, rejected requests writing nothing, and the one-query-per-page list.

use kultiva::auth::Role;
use kultiva::garden::statements;
use serde_json::{Value, json};

use crate::garden::*;
use crate::support::rest_tool as mcp_call;
use crate::support::{TestApp, assert_error, detail_fields};

const TOMATO: &str = "Fixtura tomatoides";
const HYBRID: &str = "Fixtura × hybrida";
const PERENNIAL: &str = "Probus perennis";
const OBSCURA: &str = "Mockia obscura";

#[tokio::test]
async fn plants_create_get_list_and_update() {
    let app = TestApp::spawn().await;
    let t = app.tenant("plants").await;
    let tomato = species(&app, TOMATO).await;
    let tomato_phases = phases(&app, &tomato).await;
    let (site, loc, slots) = bed(&app, &t, "Box one", 3).await;

    let p = plant(
        &app,
        &t,
        json!({"species_key": tomato, "name": " Tom 1 ", "location_key": loc,
               "slot_key": slots[0], "planted_on": "2025-04-01", "notes": "first"}),
    )
    .await;
    assert_eq!(p["name"], "Tom 1");
    assert_eq!(p["species"]["key"], tomato);
    assert_eq!(p["species"]["scientific_name"], TOMATO);
    assert_eq!(p["site_key"], site.to_string());
    assert_eq!(p["location_key"], loc.to_string());
    assert_eq!(p["slot_key"], slots[0].to_string());
    assert_eq!(p["slot_code"], "BOXONE_1");
    assert_eq!(p["planted_on"], "2025-04-01");
    assert_eq!(p["removed_on"], Value::Null);
    assert_eq!(p["archived"], false);
    // Starts in the first phase of its sequence.
    assert_eq!(p["phase_state"], "in_phase");
    assert_eq!(p["current_phase_key"], tomato_phases[0]);
    assert_eq!(p["phase"]["phase_key"], tomato_phases[0]);
    assert_eq!(p["phase"]["day_count"], 0);
    assert_eq!(p["phase"]["cycle_number"], 1);
    assert_eq!(
        p["phase"]["expected_remaining_days"],
        p["phase"]["expected_duration_days"]
    );
    assert_eq!(p["phase"]["next_phase_key"], tomato_phases[1]);
    let key = key(&p);

    let (s, got) = get_json(&app, &format!("{}{key}", plants_path(&t))).await;
    assert_eq!(s, 200);
    assert_eq!(got["key"], key.as_str());
    assert_eq!(got["phase_state"], "in_phase");

    // A second plant: defaults (no place, name from the species).
    let perennial = species(&app, PERENNIAL).await;
    let q = plant(
        &app,
        &t,
        json!({"species_key": perennial, "phase_key": null}),
    )
    .await;
    assert_eq!(q["name"], "Probe bean", "the common name by default");
    assert_eq!(q["phase_state"], "never_initialised");
    assert_eq!(q["current_phase_key"], Value::Null);
    assert_eq!(q["phase"], Value::Null);

    // List and filters.
    let base = plants_path(&t);
    let (_, page) = get_json(&app, &base).await;
    assert_eq!(page["total"], 2);
    assert_eq!(page["skip"], 0);
    assert_eq!(page["limit"], 100);
    assert_eq!(page["items"][0]["key"], key.as_str());
    assert_eq!(page["items"][0]["species_name"], TOMATO);
    assert_eq!(page["items"][0]["current_phase_key"], tomato_phases[0]);
    for (query, want) in [
        ("name=tom", 1),
        ("name=TOM%201", 1),
        ("name=zzz", 0),
        ("name=%25", 0),
        (&format!("species={perennial}") as &str, 1),
        (&format!("location={loc}"), 1),
        (&format!("site={site}"), 1),
        (&format!("slot={}", slots[0]), 1),
        (&format!("phase={}", tomato_phases[0]), 1),
        ("status=active", 2),
        ("status=died", 0),
        ("archived=true", 0),
        ("archived=any", 2),
    ] {
        let (s, page) = get_json(&app, &format!("{base}?{query}")).await;
        assert_eq!(s, 200, "{query}: {page}");
        assert_eq!(page["total"], want, "{query}: {page}");
        assert_eq!(
            page["items"].as_array().map(Vec::len),
            Some(want as usize),
            "{query}"
        );
    }
    // Paging: bounds are 422, a page past the end is empty but counts.
    let (_, page) = get_json(&app, &format!("{base}?skip=1&limit=1")).await;
    assert_eq!(page["items"][0]["key"], q["key"]);
    let (_, page) = get_json(&app, &format!("{base}?skip=5")).await;
    assert_eq!(
        (page["total"].clone(), page["items"].clone()),
        (json!(2), json!([]))
    );
    for bad in [
        "limit=0",
        "limit=201",
        "skip=-1",
        "limit=x",
        "status=gone",
        "archived=maybe",
        "location=nope",
    ] {
        let res = app.get(&format!("{base}?{bad}")).await;
        assert_error(res, 422, "VALIDATION_ERROR").await;
    }

    // PATCH: omitted fields stay, null clears.
    let res = app
        .client
        .patch(app.url(&format!("{base}{key}")))
        .json(&json!({"name": "Tom one", "notes": null}))
        .send()
        .await
        .expect("sent");
    assert_eq!(res.status().as_u16(), 200);
    let patched: Value = res.json().await.expect("json");
    assert_eq!(patched["name"], "Tom one");
    assert_eq!(patched["notes"], Value::Null);
    assert_eq!(patched["planted_on"], "2025-04-01");
    // Place and phase are their own operations: not patchable.
    let res = app
        .client
        .patch(app.url(&format!("{base}{key}")))
        .json(&json!({"slot_key": slots[1], "planted_on": "2999-01-01"}))
        .send()
        .await
        .expect("sent");
    let body = assert_error(res, 422, "VALIDATION_ERROR").await;
    let mut fields = detail_fields(&body);
    fields.sort();
    assert_eq!(fields, ["body.planted_on", "body.slot_key"]);
}

#[tokio::test]
async fn plants_bad_input_is_refused_and_writes_nothing() {
    let app = TestApp::spawn().await;
    let t = app.tenant("plantsbad").await;
    let tomato = species(&app, TOMATO).await;
    let (_, loc, slots) = bed(&app, &t, "Bad box", 2).await;
    let (_, other_loc, other_slots) = bed(&app, &t, "Other box", 1).await;
    let used = batch(&app, &t, "used soil", 1).await;
    let base = plants_path(&t);
    let unknown = uuid::Uuid::now_v7();

    let cases: Vec<(Value, u16, &str, Vec<&str>)> = vec![
        (json!({}), 422, "VALIDATION_ERROR", vec!["body.species_key"]),
        (
            json!({"species_key": tomato, "planted_on": "2999-01-01", "location_key": "x",
                   "bogus": 1, "name": ""}),
            422,
            "VALIDATION_ERROR",
            vec![
                "body.bogus",
                "body.location_key",
                "body.name",
                "body.planted_on",
            ],
        ),
        (
            json!({"species_key": tomato, "planted_on": "2025-02-30"}),
            422,
            "VALIDATION_ERROR",
            vec!["body.planted_on"],
        ),
        (
            json!({"species_key": tomato, "planted_on": "1850-01-01"}),
            422,
            "VALIDATION_ERROR",
            vec!["body.planted_on"],
        ),
        (
            json!({"species_key": unknown.to_string()}),
            404,
            "ENTITY_NOT_FOUND",
            vec![],
        ),
        (
            json!({"species_key": "not-a-key"}),
            404,
            "ENTITY_NOT_FOUND",
            vec![],
        ),
        (
            json!({"species_key": tomato, "cultivar_key": unknown.to_string()}),
            404,
            "ENTITY_NOT_FOUND",
            vec![],
        ),
        (
            json!({"species_key": tomato, "location_key": unknown}),
            404,
            "ENTITY_NOT_FOUND",
            vec![],
        ),
        (
            json!({"species_key": tomato, "slot_key": unknown}),
            404,
            "ENTITY_NOT_FOUND",
            vec![],
        ),
        (
            json!({"species_key": tomato, "substrate_batch_key": unknown}),
            404,
            "ENTITY_NOT_FOUND",
            vec![],
        ),
        (
            json!({"species_key": tomato, "location_key": loc, "slot_key": other_slots[0]}),
            422,
            "VALIDATION_ERROR",
            vec!["body.slot_key"],
        ),
        (
            json!({"species_key": tomato, "location_key": other_loc, "substrate_batch_key": used}),
            422,
            "SUBSTRATE_EXHAUSTED",
            vec![],
        ),
        (
            json!({"species_key": tomato, "phase_key": unknown.to_string()}),
            422,
            "VALIDATION_ERROR",
            vec!["body.phase_key"],
        ),
    ];
    for (body, status, code, fields) in cases {
        let res = app.post_json(&base, &body).await;
        let err = assert_error(res, status, code).await;
        if !fields.is_empty() {
            let mut got = detail_fields(&err);
            got.sort();
            assert_eq!(got, fields, "{body}");
        }
    }
    assert_eq!(count(&app, &t, "plants").await, 0);
    assert_eq!(count(&app, &t, "plant_phase_history").await, 0);
    assert_eq!(count(&app, &t, "slot_placements").await, 0);

    // A full slot.
    plant(
        &app,
        &t,
        json!({"species_key": tomato, "slot_key": slots[0]}),
    )
    .await;
    let res = app
        .post_json(&base, &json!({"species_key": tomato, "slot_key": slots[0]}))
        .await;
    let err = assert_error(res, 422, "VALIDATION_ERROR").await;
    assert_eq!(detail_fields(&err), ["body.slot_key"]);
    assert_eq!(count(&app, &t, "plants").await, 1);
    // Malformed JSON and a wrong content type.
    let res = app
        .client
        .post(app.url(&base))
        .header("content-type", "application/json")
        .body("{")
        .send()
        .await
        .expect("sent");
    assert_error(res, 400, "MALFORMED_REQUEST").await;
    // Unknown plant keys.
    for k in [unknown.to_string(), "nope".to_owned()] {
        assert_error(
            app.get(&format!("{base}{k}")).await,
            404,
            "ENTITY_NOT_FOUND",
        )
        .await;
    }
    assert_eq!(count(&app, &t, "plants").await, 1);
}

#[tokio::test]
async fn plants_rotation_and_companion_checks() {
    let app = TestApp::spawn().await;
    let t = app.tenant("plantsrot").await;
    let tomato = species(&app, TOMATO).await;
    let hybrid = species(&app, HYBRID).await;
    let perennial = species(&app, PERENNIAL).await;
    let obscura = species(&app, OBSCURA).await;
    let (_, loc, slots) = bed(&app, &t, "Rot box", 4).await;
    let base = plants_path(&t);

    // A tomato in slot 1, then archived: the slot is free but remembers the family.
    let tom = plant(
        &app,
        &t,
        json!({"species_key": tomato, "slot_key": slots[0]}),
    )
    .await;
    let (s, _) = post(
        &app,
        &format!("{base}{}/archive", key(&tom)),
        json!({"reason": "died"}),
    )
    .await;
    assert_eq!(s, 200);
    let res = app
        .post_json(
            &base,
            &json!({"species_key": hybrid, "location_key": loc, "slot_key": slots[0]}),
        )
        .await;
    let err = assert_error(res, 422, "ROTATION_VIOLATION").await;
    assert_eq!(detail_fields(&err), ["body.slot_key"]);
    assert!(
        err["message"]
            .as_str()
            .is_some_and(|m| m.contains("3 years")),
        "{err}"
    );
    assert_eq!(count(&app, &t, "plants").await, 1);
    // Another family is fine there (and a good successor is no problem either).
    let per = plant(
        &app,
        &t,
        json!({"species_key": perennial, "slot_key": slots[0]}),
    )
    .await;

    // Companions: a tomato in slot 3; Mockia obscura next to it (slot 4 or 2) is refused.
    let tom2 = plant(
        &app,
        &t,
        json!({"species_key": tomato, "slot_key": slots[2]}),
    )
    .await;
    let res = app
        .post_json(
            &base,
            &json!({"species_key": obscura, "slot_key": slots[3]}),
        )
        .await;
    let err = assert_error(res, 422, "INCOMPATIBLE_COMPANION").await;
    assert!(
        err["message"]
            .as_str()
            .is_some_and(|m| m.contains(&key(&tom2))),
        "{err}"
    );
    assert_eq!(count(&app, &t, "plants").await, 3);
    // Not adjacent (slot 1 neighbours slot 2 only): allowed... slot 1 is taken; use no slot.
    let obs = plant(
        &app,
        &t,
        json!({"species_key": obscura, "location_key": loc}),
    )
    .await;
    // Moving it next to the tomato is refused the same way, and changes nothing.
    let (s, err) = post(
        &app,
        &format!("{base}{}/location", key(&obs)),
        json!({"slot_key": slots[1]}),
    )
    .await;
    assert_eq!(
        (s, err["error_code"].as_str()),
        (422, Some("INCOMPATIBLE_COMPANION")),
        "{err}"
    );
    let (_, still) = get_json(&app, &format!("{base}{}", key(&obs))).await;
    assert_eq!(still["slot_key"], Value::Null);
    assert_eq!(count(&app, &t, "slot_placements").await, 3);
    // Moving the perennial away from slot 1 and back: its own history does not block it.
    let (s, moved) = post(
        &app,
        &format!("{base}{}/location", key(&per)),
        json!({"slot_key": slots[3]}),
    )
    .await;
    assert_eq!(s, 200, "{moved}");
    let (s, moved) = post(
        &app,
        &format!("{base}{}/location", key(&per)),
        json!({"location_key": loc, "slot_key": slots[0]}),
    )
    .await;
    assert_eq!(s, 200, "{moved}");
    assert_eq!(moved["slot_key"], slots[0].to_string());
    // The same slot again is refused.
    let (s, _) = post(
        &app,
        &format!("{base}{}/location", key(&per)),
        json!({"slot_key": slots[0]}),
    )
    .await;
    assert_eq!(s, 422);
}

#[tokio::test]
async fn plants_archive_move_and_substrate() {
    let app = TestApp::spawn().await;
    let t = app.tenant("plantsarc").await;
    let tomato = species(&app, TOMATO).await;
    let (site, loc, slots) = bed(&app, &t, "Arc box", 2).await;
    let (_, far_loc, _) = bed(&app, &t, "Far box", 1).await;
    let base = plants_path(&t);
    let p = plant(
        &app,
        &t,
        json!({"species_key": tomato, "slot_key": slots[0]}),
    )
    .await;
    let k = key(&p);

    // Move: to the other slot, then to a location of another site named with this site.
    let (s, moved) = post(
        &app,
        &format!("{base}{k}/location"),
        json!({"slot_key": slots[1]}),
    )
    .await;
    assert_eq!(s, 200, "{moved}");
    assert_eq!(moved["slot_key"], slots[1].to_string());
    let (s, err) = post(
        &app,
        &format!("{base}{k}/location"),
        json!({"site_key": site, "location_key": far_loc}),
    )
    .await;
    assert_eq!(
        (s, err["error_code"].as_str()),
        (422, Some("VALIDATION_ERROR")),
        "{err}"
    );
    let (s, _) = post(&app, &format!("{base}{k}/location"), json!({})).await;
    assert_eq!(s, 422);
    let (s, moved) = post(
        &app,
        &format!("{base}{k}/location"),
        json!({"location_key": far_loc}),
    )
    .await;
    assert_eq!(s, 200);
    assert_eq!(
        (moved["location_key"].clone(), moved["slot_key"].clone()),
        (json!(far_loc), Value::Null)
    );
    let _ = loc;

    // Substrate: a fresh batch is fine, a used-up one is SUBSTRATE_EXHAUSTED.
    let fresh = batch(&app, &t, "fresh soil", 0).await;
    let used = batch(&app, &t, "spent soil", 1).await;
    let (s, got) = post(
        &app,
        &format!("{base}{k}/substrate"),
        json!({"substrate_batch_key": fresh}),
    )
    .await;
    assert_eq!(s, 200, "{got}");
    assert_eq!(got["substrate_batch_key"], fresh.to_string());
    let (s, err) = post(
        &app,
        &format!("{base}{k}/substrate"),
        json!({"substrate_batch_key": used}),
    )
    .await;
    assert_eq!(
        (s, err["error_code"].as_str()),
        (422, Some("SUBSTRATE_EXHAUSTED"))
    );
    let (s, _) = post(
        &app,
        &format!("{base}{k}/substrate"),
        json!({"substrate_key": "tenant:nothing"}),
    )
    .await;
    assert_eq!(s, 404);
    let (_, got) = get_json(&app, &format!("{base}{k}")).await;
    assert_eq!(got["substrate_batch_key"], fresh.to_string());

    // Archive: leaves the default list, shows with archived or its status; never twice.
    let (s, err) = post(
        &app,
        &format!("{base}{k}/archive"),
        json!({"reason": "eaten"}),
    )
    .await;
    assert_eq!(
        (s, err["error_code"].as_str()),
        (422, Some("VALIDATION_ERROR"))
    );
    let (s, arch) = post(
        &app,
        &format!("{base}{k}/archive"),
        json!({"reason": "given_away"}),
    )
    .await;
    assert_eq!(s, 200);
    assert_eq!(arch["archived"], true);
    assert_eq!(arch["archive_reason"], "given_away");
    assert!(arch["removed_on"].is_string());
    let (_, page) = get_json(&app, &base).await;
    assert_eq!(page["total"], 0);
    let (_, page) = get_json(&app, &format!("{base}?archived=true")).await;
    assert_eq!(page["total"], 1);
    let (_, page) = get_json(&app, &format!("{base}?status=given_away")).await;
    assert_eq!(page["total"], 1);
    let (s, err) = post(
        &app,
        &format!("{base}{k}/archive"),
        json!({"reason": "died"}),
    )
    .await;
    assert_eq!(
        (s, err["error_code"].as_str()),
        (409, Some("STATE_CONFLICT"))
    );
    let (s, _) = post(
        &app,
        &format!("{base}{k}/location"),
        json!({"slot_key": slots[0]}),
    )
    .await;
    assert_eq!(s, 409);
    // Still there (never hard-deleted).
    let (s, _) = get_json(&app, &format!("{base}{k}")).await;
    assert_eq!(s, 200);
}

#[tokio::test]
async fn plants_role_matrix() {
    let app = TestApp::full().await;
    let t = app.tenant("plantsrole").await;
    let tomato = species(&app, TOMATO).await;
    let base = plants_path(&t);
    let viewer = app.member(&t, Role::Viewer).await;
    let grower = app.member(&t, Role::Grower).await;
    let admin = app.member(&t, Role::Admin).await;
    let stranger = app.user("stranger").await;
    let body = json!({"species_key": tomato});

    let res = app.rest_as(&viewer).post(&base, &body).await;
    assert_error(res, 403, "FORBIDDEN").await;
    let res = app.rest_as(&stranger).post(&base, &body).await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    assert_eq!(count(&app, &t, "plants").await, 0);
    let mut keys = Vec::new();
    for who in [&grower, &admin] {
        let res = app.rest_as(who).post(&base, &body).await;
        assert_eq!(res.status().as_u16(), 201);
        let v: Value = res.json().await.expect("json");
        keys.push(key(&v));
    }
    let k = &keys[0];
    for who in [&viewer, &grower, &admin] {
        for path in [
            base.clone(),
            format!("{base}{k}"),
            format!("{base}{k}/phase"),
            format!("{base}{k}/phase-history"),
        ] {
            let res = app.rest_as(who).get(&path).await;
            assert_eq!(res.status().as_u16(), 200, "{path}");
        }
    }
    for path in [
        base.clone(),
        format!("{base}{k}"),
        format!("{base}{k}/phase"),
    ] {
        let res = app.rest_as(&stranger).get(&path).await;
        assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    }
    // Writes on a plant: viewer 403, stranger 404, nothing changes.
    for (path, body) in [
        (format!("{base}{k}/archive"), json!({"reason": "died"})),
        (
            format!("{base}{k}/substrate"),
            json!({"substrate_key": "tenant:x"}),
        ),
        (
            format!("{base}{k}/location"),
            json!({"location_key": uuid::Uuid::now_v7()}),
        ),
        (
            format!("{base}{k}/phase-transitions"),
            json!({"target_phase_key": "x"}),
        ),
    ] {
        let res = app.rest_as(&viewer).post(&path, &body).await;
        assert_error(res, 403, "FORBIDDEN").await;
        let res = app.rest_as(&stranger).post(&path, &body).await;
        assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    }
    let res = app
        .rest_as(&viewer)
        .patch(&format!("{base}{k}"), &json!({"name": "x"}))
        .await;
    assert_error(res, 403, "FORBIDDEN").await;
    let res = app
        .rest_as(&grower)
        .post(&format!("{base}{k}/archive"), &json!({"reason": "died"}))
        .await;
    assert_eq!(res.status().as_u16(), 200);
}

#[tokio::test]
async fn plants_two_tenants_see_nothing_of_each_other() {
    let app = TestApp::spawn().await;
    let a = app.tenant("planta").await;
    let b = app.tenant("plantb").await;
    let tomato = species(&app, TOMATO).await;
    let (site_a, loc_a, slots_a) = bed(&app, &a, "A box", 1).await;
    let batch_a = batch(&app, &a, "a soil", 0).await;
    let pa = plant(
        &app,
        &a,
        json!({"species_key": tomato, "slot_key": slots_a[0]}),
    )
    .await;
    let ka = key(&pa);
    let phases_t = phases(&app, &tomato).await;
    let pb = plant(&app, &b, json!({"species_key": tomato})).await;
    let base_b = plants_path(&b);

    for path in [
        format!("{base_b}{ka}"),
        format!("{base_b}{ka}/phase"),
        format!("{base_b}{ka}/phase-history"),
    ] {
        assert_error(app.get(&path).await, 404, "ENTITY_NOT_FOUND").await;
    }
    for (path, body) in [
        (format!("{base_b}{ka}/archive"), json!({"reason": "died"})),
        (
            format!("{base_b}{ka}/location"),
            json!({"location_key": loc_a}),
        ),
        (
            format!("{base_b}{ka}/substrate"),
            json!({"substrate_batch_key": batch_a}),
        ),
        (
            format!("{base_b}{ka}/phase-transitions"),
            json!({"target_phase_key": phases_t[1]}),
        ),
    ] {
        let res = app.post_json(&path, &body).await;
        assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    }
    // A's places and batch used in B: not found, and B's plant stays where it was.
    let kb = key(&pb);
    for body in [
        json!({"location_key": loc_a}),
        json!({"slot_key": slots_a[0]}),
        json!({"site_key": site_a, "location_key": loc_a}),
    ] {
        let res = app
            .post_json(&format!("{base_b}{kb}/location"), &body)
            .await;
        assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    }
    let res = app
        .post_json(
            &base_b,
            &json!({"species_key": tomato, "substrate_batch_key": batch_a}),
        )
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    let (_, page) = get_json(&app, &base_b).await;
    assert_eq!(page["total"], 1);
    assert!(!page.to_string().contains(&ka));
    let (_, page) = get_json(&app, &format!("{base_b}?location={loc_a}")).await;
    assert_eq!(page["total"], 0);
    // A is untouched.
    let (_, still) = get_json(&app, &format!("{}{ka}", plants_path(&a))).await;
    assert_eq!(still["archived"], false);
    assert_eq!(still["current_phase_key"], phases_t[0]);
}

/// The list is ONE statement on the tenant's schema and ONE catalogue lookup per page,
/// whatever the page size (no query per plant), read from the garden statement counter.
#[tokio::test]
async fn plants_list_is_one_query_per_page() {
    let app = TestApp::spawn().await;
    let t = app.tenant("plantsq").await;
    let tomato = species(&app, TOMATO).await;
    let perennial = species(&app, PERENNIAL).await;
    let (_, loc, _) = bed(&app, &t, "Q box", 0).await;
    for i in 0..30 {
        let s = if i % 2 == 0 { &tomato } else { &perennial };
        plant(
            &app,
            &t,
            json!({"species_key": s, "location_key": loc, "name": format!("Q{i}")}),
        )
        .await;
    }
    let base = plants_path(&t);
    for (query, n) in [
        ("limit=1", 1),
        ("limit=10", 10),
        ("limit=30", 30),
        ("limit=200&name=%20", 30),
    ] {
        statements::watch(t.id);
        let (s, page) = get_json(&app, &format!("{base}?{query}")).await;
        assert_eq!(s, 200);
        assert_eq!(page["items"].as_array().map(Vec::len), Some(n));
        assert!(
            page["items"]
                .as_array()
                .expect("items")
                .iter()
                .all(|p| p["species_name"].is_string())
        );
        let c = statements::read(t.id);
        assert_eq!((c.tenant, c.catalogue), (1, 1), "{query}: {c:?}");
    }
    // A page past the end needs the count: one more tenant statement, no catalogue lookup.
    statements::watch(t.id);
    let (_, page) = get_json(&app, &format!("{base}?skip=100")).await;
    assert_eq!(page["total"], 30);
    assert_eq!(
        statements::read(t.id),
        statements::Counts {
            tenant: 2,
            catalogue: 0,
            transactions: 0
        }
    );
}

// ---------------------------------------------------------------------------------------------
// The tool server.

#[tokio::test]
async fn plants_mcp_tools() {
    let app = TestApp::full_env(&[("MCP_SERVER_ENABLED", "true")]).await;
    let a = app.tenant("plantmcpa").await;
    let b = app.tenant("plantmcpb").await;
    let tomato = species(&app, TOMATO).await;
    let obscura = species(&app, OBSCURA).await;
    let ph = phases(&app, &tomato).await;
    let (site, loc, slots) = bed(&app, &a, "Mcp box", 3).await;
    let batch_a = batch(&app, &a, "mcp soil", 0).await;
    let grower = app.member(&a, Role::Grower).await;
    let viewer = app.member(&a, Role::Viewer).await;
    let gk = app.api_key(&grower, Some(a.slug.as_str())).await;
    let vk = app.api_key(&viewer, Some(a.slug.as_str())).await;
    let other = app.member(&b, Role::Admin).await;
    let ok_b = app.api_key(&other, Some(b.slug.as_str())).await;

    let res = app
        .rest_as(&grower)
        .post(
            &plants_path(&a),
            &json!({"species_key": tomato, "name": "Mcp tomato", "slot_key": slots[0]}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 201);
    let p: Value = res.json().await.expect("json");
    let k = key(&p);

    let (s, list) = mcp_call(&app, &vk, "list_plants", json!({"query": "mcp"})).await;
    assert_eq!(s, 200, "{list}");
    assert_eq!(list["data"]["matched"], 1);
    assert_eq!(list["data"]["total_in_tenant"], 1);
    assert_eq!(list["data"]["items"][0]["plant_key"], k.as_str());
    let (s, got) = mcp_call(&app, &vk, "get_plant", json!({"plant_key": k})).await;
    assert_eq!(s, 200);
    assert_eq!(got["data"]["phase_state"], "in_phase");
    assert_eq!(got["data"]["current_phase_key"], ph[0]);
    assert!(
        got["summary"]
            .as_str()
            .is_some_and(|s| s.contains("Mcp tomato"))
    );
    let (s, at) = mcp_call(
        &app,
        &vk,
        "list_plants_at_location",
        json!({"site_key": site}),
    )
    .await;
    assert_eq!((s, at["data"]["total"].clone()), (200, json!(1)), "{at}");
    let (s, _) = mcp_call(&app, &vk, "list_plants_at_location", json!({})).await;
    assert_eq!(s, 422);
    let (s, st) = mcp_call(&app, &vk, "get_plant_phase_status", json!({"plant_key": k})).await;
    assert_eq!(s, 200);
    assert_eq!(st["data"]["allowed_targets"], json!([ph[1], ph[2]]));

    // Writes: viewer denied; dry runs change nothing; real runs do, with the history actor.
    let (s, body) = mcp_call(
        &app,
        &vk,
        "transition_plant_phase",
        json!({"plant_key": k, "target_phase_key": ph[1]}),
    )
    .await;
    assert_eq!(
        (s, body["error_code"].as_str()),
        (403, Some("permission.denied"))
    );
    let (s, dry) = mcp_call(
        &app,
        &gk,
        "transition_plant_phase",
        json!({"plant_key": k, "target_phase_key": ph[1], "dry_run": true}),
    )
    .await;
    assert_eq!(s, 200, "{dry}");
    assert_eq!(dry["dry_run"], true);
    assert_eq!(count(&app, &a, "plant_phase_history").await, 1);
    let (s, done) = mcp_call(
        &app,
        &gk,
        "transition_plant_phase",
        json!({"plant_key": k, "target_phase_key": ph[1], "reason": "leaves out"}),
    )
    .await;
    assert_eq!(s, 200, "{done}");
    assert_eq!(done["data"]["current_phase_key"], ph[1]);
    assert_eq!(done["data"]["transition"], "forward");
    let (s, back) = mcp_call(
        &app,
        &gk,
        "transition_plant_phase",
        json!({"plant_key": k, "target_phase_key": ph[0]}),
    )
    .await;
    assert_eq!(
        (s, back["error_code"].as_str()),
        (422, Some("validation.error")),
        "{back}"
    );
    let (_, hist) = mcp_call(
        &app,
        &vk,
        "get_plant_phase_history",
        json!({"plant_key": k}),
    )
    .await;
    assert_eq!(hist["data"]["total"], 2);
    assert_eq!(hist["data"]["items"][1]["reason"], "leaves out");
    assert_eq!(
        hist["data"]["items"][1]["actor"],
        format!("mcp:{}", grower.key)
    );

    let (s, moved) = mcp_call(
        &app,
        &gk,
        "set_plant_location",
        json!({"plant_key": k, "location_key": loc, "slot_key": slots[2]}),
    )
    .await;
    assert_eq!(s, 200, "{moved}");
    assert_eq!(moved["data"]["slot_key"], slots[2].to_string());
    let res = app
        .rest_as(&grower)
        .post(
            &plants_path(&a),
            &json!({"species_key": obscura, "location_key": loc}),
        )
        .await;
    let obs: Value = res.json().await.expect("json");
    let (s, refused) = mcp_call(
        &app,
        &gk,
        "set_plant_location",
        json!({"plant_key": key(&obs), "slot_key": slots[1]}),
    )
    .await;
    assert_eq!(
        (s, refused["error_code"].as_str()),
        (422, Some("validation.error")),
        "{refused}"
    );
    let (s, sub) = mcp_call(
        &app,
        &gk,
        "set_plant_substrate",
        json!({"plant_key": k, "substrate_batch_key": batch_a}),
    )
    .await;
    assert_eq!(s, 200, "{sub}");
    let (s, arch) = mcp_call(
        &app,
        &gk,
        "archive_plant",
        json!({"plant_key": k, "termination_type": "died", "dry_run": true}),
    )
    .await;
    assert_eq!((s, arch["data"]["archived"].clone()), (200, json!(true)));
    let (_, still) = mcp_call(&app, &vk, "get_plant", json!({"plant_key": k})).await;
    assert_eq!(still["data"]["archived"], false);
    let (s, arch) = mcp_call(
        &app,
        &gk,
        "archive_plant",
        json!({"plant_key": k, "termination_type": "died", "idempotency_key": "arch-1"}),
    )
    .await;
    assert_eq!(s, 200);
    assert_eq!(arch["data"]["archive_reason"], "died");
    let (s, again) = mcp_call(
        &app,
        &gk,
        "archive_plant",
        json!({"plant_key": k, "termination_type": "died", "idempotency_key": "arch-1"}),
    )
    .await;
    assert_eq!((s, again["idempotent_replay"].clone()), (200, json!(true)));

    // Another garden's key: A's plant key and places are not found there, never denied.
    for (tool, args) in [
        ("get_plant", json!({"plant_key": k})),
        ("get_plant_phase_status", json!({"plant_key": k})),
        ("get_plant_phase_history", json!({"plant_key": k})),
        ("list_plants_at_location", json!({"location_key": loc})),
        ("archive_plant", json!({"plant_key": k})),
        (
            "set_plant_location",
            json!({"plant_key": k, "location_key": loc}),
        ),
        (
            "set_plant_substrate",
            json!({"plant_key": k, "substrate_batch_key": batch_a}),
        ),
        (
            "transition_plant_phase",
            json!({"plant_key": k, "target_phase_key": ph[2]}),
        ),
    ] {
        let (s, body) = mcp_call(&app, &ok_b, tool, args.clone()).await;
        assert_eq!(
            (s, body["error_code"].as_str()),
            (404, Some("not_found")),
            "{tool}: {body}"
        );
        let mut in_a = args;
        in_a["tenant"] = json!(a.slug.as_str());
        let (s, body) = mcp_call(&app, &ok_b, tool, in_a).await;
        assert_eq!(
            (s, body["error_code"].as_str()),
            (404, Some("not_found")),
            "{tool}: {body}"
        );
    }
    let (_, list_b) = mcp_call(
        &app,
        &ok_b,
        "list_plants",
        json!({"include_archived": true}),
    )
    .await;
    assert_eq!(list_b["data"]["total_in_tenant"], 0);
}

/// The list's filters are checked as the document states them: an empty key filter (`slot=`)
/// is malformed like any other bad key, an enum filter takes only its values, a text filter
/// at most 100 characters as sent. Each bad one is a 422 naming `query.<filter>`.
#[tokio::test]
async fn plants_list_filters_are_checked_as_documented() {
    let app = TestApp::spawn().await;
    let t = app.tenant("plantsq").await;
    let tomato = species(&app, TOMATO).await;
    plant(&app, &t, json!({"species_key": tomato})).await;
    let base = plants_path(&t);
    let simple = uuid::Uuid::now_v7().simple().to_string();
    let long = "a".repeat(101);
    for (query, field) in [
        ("slot=".to_owned(), "query.slot"),
        ("site=".to_owned(), "query.site"),
        (format!("location={simple}"), "query.location"),
        ("run=%20".to_owned(), "query.run"),
        ("status=".to_owned(), "query.status"),
        ("status=%20active".to_owned(), "query.status"),
        ("archived=".to_owned(), "query.archived"),
        (format!("name={long}"), "query.name"),
        (format!("species=x{}", "%20".repeat(100)), "query.species"),
        ("phase=a%01".to_owned(), "query.phase"),
    ] {
        let res = app.get(&format!("{base}?{query}")).await;
        let err = assert_error(res, 422, "VALIDATION_ERROR").await;
        assert_eq!(detail_fields(&err), [field], "{query}");
    }
    // Blank text filters mean none; the documented values work.
    for query in ["name=%20", "status=active&archived=any", "archived=false"] {
        let (status, page) = get_json(&app, &format!("{base}?{query}")).await;
        assert_eq!(status, 200, "{query}: {page}");
        assert_eq!(page["total"], 1, "{query}");
    }
}

/// A PATCH with null for a field that cannot be cleared is refused and changes nothing; the
/// clearable fields clear with null; notes keep several lines, as on create.
#[tokio::test]
async fn plants_patch_null_rules_follow_the_document() {
    let app = TestApp::spawn().await;
    let t = app.tenant("plantsnull").await;
    let tomato = species(&app, TOMATO).await;
    let p = plant(
        &app,
        &t,
        json!({"species_key": tomato, "name": "Tom", "planted_on": "2025-04-01",
               "notes": "first"}),
    )
    .await;
    let path = format!("{}{}", plants_path(&t), key(&p));
    let patch = |body: Value| {
        let (app, path) = (&app, &path);
        async move {
            app.client
                .patch(app.url(path))
                .json(&body)
                .send()
                .await
                .expect("sent")
        }
    };
    let err = assert_error(
        patch(json!({"name": null, "notes": "changed"})).await,
        422,
        "VALIDATION_ERROR",
    )
    .await;
    assert_eq!(detail_fields(&err), ["body.name"]);
    let (_, got) = get_json(&app, &path).await;
    assert_eq!(got["name"], "Tom");
    assert_eq!(got["notes"], "first", "a refused PATCH changes nothing");

    let res = patch(json!({"notes": "line one\nline two", "planted_on": null})).await;
    assert_eq!(res.status().as_u16(), 200);
    let got: Value = res.json().await.expect("json");
    assert_eq!(got["notes"], "line one\nline two");
    assert_eq!(got["planted_on"], Value::Null);
    assert_eq!(got["name"], "Tom");

    // Keys: blank, too long (as sent) or with control characters are refused.
    for (body, field) in [
        (json!({"cultivar_key": "   "}), "body.cultivar_key"),
        (
            json!({"cultivar_key": "a".repeat(101)}),
            "body.cultivar_key",
        ),
    ] {
        let err = assert_error(patch(body.clone()).await, 422, "VALIDATION_ERROR").await;
        assert_eq!(detail_fields(&err), [field], "{body}");
    }
    let base = plants_path(&t);
    for (body, field) in [
        (
            json!({"species_key": format!("{tomato}{}", " ".repeat(100))}),
            "body.species_key",
        ),
        (json!({"species_key": "a\u{1}b"}), "body.species_key"),
        (json!({"species_key": tomato, "name": null}), "body.name"),
        (
            json!({"species_key": tomato, "slot_key": uuid::Uuid::now_v7().simple().to_string()}),
            "body.slot_key",
        ),
    ] {
        let err = assert_error(app.post_json(&base, &body).await, 422, "VALIDATION_ERROR").await;
        assert_eq!(detail_fields(&err), [field], "{body}");
    }
    // Moving needs a location or a slot, not null.
    for body in [json!({}), json!({"location_key": null, "slot_key": null})] {
        let (status, err) = post(&app, &format!("{path}/location"), body.clone()).await;
        assert_eq!(status, 422, "{body}: {err}");
        assert_eq!(detail_fields(&err), ["body.location_key"]);
    }
    assert_eq!(count(&app, &t, "plants").await, 1);
}

const STONE: &str = "Lithopsis fixturae";

/// Issue 24: rotation and companion checks advise. A conflict that needs it is refused until
/// the body acknowledges it (and then recorded on the plant); co-planting in a slot for several
/// and pots are not rotation questions; folklore conflicts only warn; validate-planting shows it
/// all; a non-boolean flag is a 422 naming the field; nothing is written on a refusal.
#[tokio::test]
async fn plants_rotation_and_companions_advise() {
    let app = TestApp::spawn().await;
    let t = app.tenant("plantsadv").await;
    let tomato = species(&app, TOMATO).await;
    let hybrid = species(&app, HYBRID).await;
    let perennial = species(&app, PERENNIAL).await;
    let obscura = species(&app, OBSCURA).await;
    let stone = species(&app, STONE).await;
    let (_, _, slots) = bed(&app, &t, "Adv box", 4).await;
    let base = plants_path(&t);
    let preview = format!("{base}validate-planting");

    // Tomato stood in slot 1 (archived): the slot remembers its family.
    let tom = plant(
        &app,
        &t,
        json!({"species_key": tomato, "slot_key": slots[0]}),
    )
    .await;
    let (s, _) = post(
        &app,
        &format!("{base}{}/archive", key(&tom)),
        json!({"reason": "died"}),
    )
    .await;
    assert_eq!(s, 200);

    // The preview says what a create would meet.
    let (s, review) = post(
        &app,
        &preview,
        json!({"species_key": hybrid, "slot_key": slots[0]}),
    )
    .await;
    assert_eq!(s, 200, "{review}");
    assert_eq!(review["allowed"], false);
    assert_eq!(
        review["needs_acknowledgement"],
        json!(["acknowledge_rotation"])
    );
    assert_eq!(review["rotation"]["window_years"], 3);
    assert_eq!(review["rotation"]["findings"][0]["level"], "critical");
    assert_eq!(
        review["rotation"]["findings"][0]["needs_acknowledgement"],
        true
    );
    assert_eq!(count(&app, &t, "plants").await, 1);

    // Without the flag: refused, with the way through named; nothing written.
    let res = app
        .post_json(&base, &json!({"species_key": hybrid, "slot_key": slots[0]}))
        .await;
    let err = assert_error(res, 422, "ROTATION_VIOLATION").await;
    assert_eq!(detail_fields(&err), ["body.slot_key"]);
    assert!(
        err["message"]
            .as_str()
            .is_some_and(|m| m.contains("acknowledge_rotation")),
        "{err}"
    );
    // A flag that is not a boolean: 422 naming it, nothing written.
    for bad in [json!("yes"), json!(1), Value::Null] {
        let res = app
            .post_json(
                &base,
                &json!({"species_key": hybrid, "slot_key": slots[0], "acknowledge_rotation": bad}),
            )
            .await;
        let err = assert_error(res, 422, "VALIDATION_ERROR").await;
        assert_eq!(detail_fields(&err), ["body.acknowledge_rotation"], "{bad}");
    }
    let res = app
        .post_json(
            &base,
            &json!({"species_key": hybrid, "slot_key": slots[0], "acknowledge_companions": "no"}),
        )
        .await;
    let err = assert_error(res, 422, "VALIDATION_ERROR").await;
    assert_eq!(detail_fields(&err), ["body.acknowledge_companions"]);
    assert_eq!(count(&app, &t, "plants").await, 1);
    assert_eq!(count(&app, &t, "slot_placements").await, 1);

    // Acknowledged: planted, and the acknowledgement is recorded and read back.
    let hyb = plant(
        &app,
        &t,
        json!({"species_key": hybrid, "slot_key": slots[0], "acknowledge_rotation": true}),
    )
    .await;
    assert_eq!(
        hyb["placement_acknowledgements"][0]["code"],
        "ROTATION_VIOLATION"
    );
    assert_eq!(
        hyb["placement_acknowledgements"][0]["slot_key"],
        slots[0].to_string()
    );
    let (_, read) = get_json(&app, &format!("{base}{}", key(&hyb))).await;
    assert_eq!(
        read["placement_acknowledgements"],
        hyb["placement_acknowledgements"]
    );
    assert_eq!(read["placement_warnings"], json!([]));
    // A flag without a conflict records nothing.
    let (_, _, spare) = bed(&app, &t, "Adv spare", 1).await;
    let plain = plant(
        &app,
        &t,
        json!({"species_key": perennial, "slot_key": spare[0], "acknowledge_rotation": true}),
    )
    .await;
    assert_eq!(plain["placement_acknowledgements"], json!([]));

    // Co-planting: a slot for three; a second Fixturaceae placed beside the first this season.
    exec(
        &app,
        &t,
        "UPDATE {schema}.slots SET capacity = 3 WHERE id = $1",
        slots[1],
    )
    .await;
    plant(
        &app,
        &t,
        json!({"species_key": tomato, "slot_key": slots[1]}),
    )
    .await;
    let mate = plant(
        &app,
        &t,
        json!({"species_key": hybrid, "slot_key": slots[1]}),
    )
    .await;
    assert_eq!(mate["placement_acknowledgements"], json!([]));

    // A pot gets fresh substrate: no rotation check at all.
    let (_, pot_loc, pot) = bed(&app, &t, "Adv pot", 1).await;
    exec(
        &app,
        &t,
        "UPDATE {schema}.locations SET kind = 'container' WHERE id = $1",
        pot_loc,
    )
    .await;
    let first = plant(&app, &t, json!({"species_key": tomato, "slot_key": pot[0]})).await;
    let (s, _) = post(
        &app,
        &format!("{base}{}/archive", key(&first)),
        json!({"reason": "died"}),
    )
    .await;
    assert_eq!(s, 200);
    let (_, review) = post(
        &app,
        &preview,
        json!({"species_key": hybrid, "slot_key": pot[0]}),
    )
    .await;
    assert_eq!(review["allowed"], true, "{review}");
    assert!(review["rotation"]["exempt"].is_string(), "{review}");
    plant(&app, &t, json!({"species_key": hybrid, "slot_key": pot[0]})).await;

    // Folklore conflict (traditional): planted, with a warning; nothing to acknowledge.
    plant(
        &app,
        &t,
        json!({"species_key": stone, "slot_key": slots[2]}),
    )
    .await;
    let (_, review) = post(
        &app,
        &preview,
        json!({"species_key": perennial, "slot_key": slots[3]}),
    )
    .await;
    assert_eq!(review["allowed"], true, "{review}");
    assert_eq!(
        review["companions"]["conflicts"][0]["evidence"],
        "traditional"
    );
    assert_eq!(
        review["companions"]["conflicts"][0]["needs_acknowledgement"],
        false
    );
    let bean = plant(
        &app,
        &t,
        json!({"species_key": perennial, "slot_key": slots[3]}),
    )
    .await;
    assert!(
        bean["placement_warnings"].as_array().is_some_and(|w| w
            .iter()
            .any(|m| m.as_str().is_some_and(|m| m.contains("traditional")))),
        "{bean}"
    );
    assert_eq!(bean["placement_acknowledgements"], json!([]));

    // Established conflict: refused without the flag (nothing written), planted with it.
    let (_, _, two) = bed(&app, &t, "Adv two", 2).await;
    plant(&app, &t, json!({"species_key": tomato, "slot_key": two[0]})).await;
    let before = count(&app, &t, "plants").await;
    let (_, review) = post(
        &app,
        &preview,
        json!({"species_key": obscura, "slot_key": two[1]}),
    )
    .await;
    assert_eq!(
        review["needs_acknowledgement"],
        json!(["acknowledge_companions"])
    );
    assert_eq!(
        review["companions"]["conflicts"][0]["evidence"],
        "established"
    );
    assert!(review["companions"]["conflicts"][0]["source"].is_string());
    let res = app
        .post_json(&base, &json!({"species_key": obscura, "slot_key": two[1]}))
        .await;
    let err = assert_error(res, 422, "INCOMPATIBLE_COMPANION").await;
    assert!(
        err["message"]
            .as_str()
            .is_some_and(|m| m.contains("acknowledge_companions")),
        "{err}"
    );
    assert_eq!(count(&app, &t, "plants").await, before);
    let obs = plant(
        &app,
        &t,
        json!({"species_key": obscura, "slot_key": two[1], "acknowledge_companions": true}),
    )
    .await;
    assert_eq!(
        obs["placement_acknowledgements"][0]["code"],
        "INCOMPATIBLE_COMPANION"
    );
    assert_eq!(count(&app, &t, "plants").await, before + 1);

    // Preview input errors: 422 naming the field, 404 for unknown places.
    let res = app
        .post_json(&preview, &json!({"species_key": hybrid}))
        .await;
    let err = assert_error(res, 422, "VALIDATION_ERROR").await;
    assert_eq!(detail_fields(&err), ["body.slot_key"]);
    let res = app
        .post_json(
            &preview,
            &json!({"species_key": hybrid, "slot_key": uuid::Uuid::now_v7()}),
        )
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
}

/// The move tool takes the same flags and gives the same answers as the REST move; the preview
/// tool answers what the preview route answers.
#[tokio::test]
async fn plants_mcp_acknowledgements_match_rest() {
    let app = TestApp::full_env(&[("MCP_SERVER_ENABLED", "true")]).await;
    let a = app.tenant("plantmcpack").await;
    let tomato = species(&app, TOMATO).await;
    let obscura = species(&app, OBSCURA).await;
    let (_, loc, slots) = bed(&app, &a, "Ack box", 3).await;
    let grower = app.member(&a, Role::Grower).await;
    let gk = app.api_key(&grower, Some(a.slug.as_str())).await;
    let rest = |body: Value, path: String| {
        let app = &app;
        let bearer = grower.bearer();
        async move {
            let res = app.rest_auth(Some(&bearer)).post(&path, &body).await;
            let status = res.status().as_u16();
            (status, res.json::<Value>().await.expect("json"))
        }
    };
    let base = plants_path(&a);
    let (s, _) = rest(
        json!({"species_key": tomato, "slot_key": slots[0]}),
        base.clone(),
    )
    .await;
    assert_eq!(s, 201);
    let (s, obs) = rest(
        json!({"species_key": obscura, "location_key": loc}),
        base.clone(),
    )
    .await;
    assert_eq!(s, 201, "{obs}");
    let k = key(&obs);

    // The same preview on both faces.
    let (s, via_rest) = rest(
        json!({"plant_key": k, "slot_key": slots[1]}),
        format!("{base}validate-planting"),
    )
    .await;
    assert_eq!(s, 200, "{via_rest}");
    let (s, via_tool) = mcp_call(
        &app,
        &gk,
        "validate_planting",
        json!({"plant_key": k, "slot_key": slots[1]}),
    )
    .await;
    assert_eq!(s, 200, "{via_tool}");
    assert_eq!(via_tool["data"], via_rest);
    assert_eq!(
        via_rest["needs_acknowledgement"],
        json!(["acknowledge_companions"])
    );

    // Refused on both faces without the flag; a bad flag names the field.
    let (s, refused) = rest(json!({"slot_key": slots[1]}), format!("{base}{k}/location")).await;
    assert_eq!(
        (s, refused["error_code"].as_str()),
        (422, Some("INCOMPATIBLE_COMPANION"))
    );
    let (s, refused) = mcp_call(
        &app,
        &gk,
        "set_plant_location",
        json!({"plant_key": k, "slot_key": slots[1]}),
    )
    .await;
    assert_eq!(
        (s, refused["error_code"].as_str()),
        (422, Some("validation.error")),
        "{refused}"
    );
    let (s, bad) = mcp_call(
        &app,
        &gk,
        "set_plant_location",
        json!({"plant_key": k, "slot_key": slots[1], "acknowledge_companions": "yes"}),
    )
    .await;
    assert_eq!(s, 422, "{bad}");
    assert!(bad.to_string().contains("acknowledge_companions"), "{bad}");
    let (s, bad) = rest(
        json!({"slot_key": slots[1], "acknowledge_companions": "yes"}),
        format!("{base}{k}/location"),
    )
    .await;
    assert_eq!(s, 422, "{bad}");
    assert_eq!(detail_fields(&bad), ["body.acknowledge_companions"]);
    let (_, still) = mcp_call(&app, &gk, "get_plant", json!({"plant_key": k})).await;
    assert_eq!(still["data"]["slot_key"], Value::Null);

    // Acknowledged through the tool: moved and recorded, as the REST move would.
    let (s, moved) = mcp_call(
        &app,
        &gk,
        "set_plant_location",
        json!({"plant_key": k, "slot_key": slots[1], "acknowledge_companions": true}),
    )
    .await;
    assert_eq!(s, 200, "{moved}");
    assert_eq!(
        moved["data"]["placement_acknowledgements"][0]["code"],
        "INCOMPATIBLE_COMPANION"
    );
}
