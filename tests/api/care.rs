//! Care reminders: profiles derived from species and family, due reminders grouped by
//! urgency, confirm and snooze (a reminder of another plant is refused), the adaptive
//! interval, the care log, care tasks completed by a confirmation, overwintering from the
//! catalogue, roles, two tenants, the calendar events and the three care tools.

use kultiva::auth::Role;
use kultiva::rules::care::{Hemisphere, next_month_start, watering_interval};
use kultiva::tenancy::TenantTx;
use reqwest::Method;
use serde_json::{Value, json};
use time::{Duration, OffsetDateTime};

use crate::garden::*;
use crate::support::{TestApp, assert_error, detail_fields};

const TOMATO: &str = "Fixtura tomatoides";
const PERENNIAL: &str = "Probus perennis";

fn care_path(t: &kultiva::tenancy::TenantRecord) -> String {
    format!("/api/v1/t/{}/care-reminders", t.slug)
}

fn today() -> time::Date {
    OffsetDateTime::now_utc().date()
}

fn ds(d: time::Date) -> String {
    kultiva::garden::tasks::model::date_str(d)
}

/// The reminder of a type in a plant's care answer.
fn reminder<'a>(care: &'a Value, kind: &str) -> &'a Value {
    care["reminders"]
        .as_array()
        .and_then(|l| l.iter().find(|r| r["reminder_type"] == kind))
        .unwrap_or_else(|| panic!("no {kind} reminder in {care}"))
}

fn types_in(group: &Value) -> Vec<String> {
    let mut v: Vec<String> = group
        .as_array()
        .map(|l| {
            l.iter()
                .filter_map(|r| r["reminder_type"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v.dedup();
    v
}

#[tokio::test]
async fn care_profiles_due_confirm_snooze_and_log() {
    let app = TestApp::spawn().await;
    let t = app.tenant("care").await;
    let base = care_path(&t);
    let tomato = species(&app, TOMATO).await;
    let p1 = plant(&app, &t, json!({"species_key": tomato, "name": "Care one"})).await;
    let p2 = plant(&app, &t, json!({"species_key": tomato, "name": "Care two"})).await;
    let (k1, k2) = (key(&p1), key(&p2));

    // Profiles are derived on first read: the fixture family maps to no style, the species
    // has no watering interval → tropical defaults (7 d, winter × 1.5, repot 24 months).
    let (s, care) = get_json(&app, &format!("{base}/plants/{k1}")).await;
    assert_eq!(s, 200, "{care}");
    let prof = &care["profile"];
    assert_eq!(prof["care_style"], "tropical");
    assert_eq!(prof["source"], "default");
    assert_eq!(prof["watering_interval_days"], 7);
    assert_eq!(prof["winter_watering_multiplier"], 1.5);
    assert_eq!(prof["repotting_interval_months"], 24);
    let water = reminder(&care, "watering");
    assert_eq!(water["due_on"], ds(today()));
    assert_eq!(water["urgency"], "due_today");
    // Repotting one interval (24 × 30 days) after the profile.
    assert_eq!(
        reminder(&care, "repotting")["due_on"],
        ds(today() + Duration::days(720))
    );
    assert_eq!(count(&app, &t, "care_profiles").await, 2);

    // Actionable: overdue and due today only; repotting is not_due and hidden.
    let (s, due) = get_json(&app, &base).await;
    assert_eq!(s, 200, "{due}");
    assert_eq!(due["urgency"], "actionable");
    assert!(due.get("upcoming").is_none_or(Value::is_null));
    let today_types = types_in(&due["due_today"]);
    assert!(today_types.contains(&"watering".to_owned()), "{due}");
    assert!(today_types.contains(&"pest_check".to_owned()));
    assert!(!today_types.contains(&"repotting".to_owned()));
    let (_, all) = get_json(&app, &format!("{base}?urgency=all")).await;
    assert!(
        types_in(&all["not_due"]).contains(&"repotting".to_owned()),
        "{all}"
    );
    let res = app.get(&format!("{base}?urgency=soonish")).await;
    let err = assert_error(res, 422, "VALIDATION_ERROR").await;
    assert_eq!(detail_fields(&err), ["query.urgency"]);

    // Confirming with another plant's key: 422 naming the field, nothing written.
    let wk = water["reminder_key"].as_str().expect("key").to_owned();
    let (s, err) = post(
        &app,
        &format!("{base}/{wk}/confirm"),
        json!({"plant_key": k2}),
    )
    .await;
    assert_eq!(
        (s, err["error_code"].as_str()),
        (422, Some("VALIDATION_ERROR")),
        "{err}"
    );
    assert_eq!(detail_fields(&err), ["body.plant_key"]);
    for (body, field) in [
        (json!({}), "body.plant_key"),
        (
            json!({"plant_key": k1, "confirmed_on": ds(today() + Duration::days(1))}),
            "body.confirmed_on",
        ),
        (
            json!({"plant_key": k1, "confirmed_on": "yesterday"}),
            "body.confirmed_on",
        ),
        (json!({"plant_key": k1, "bogus": 1}), "body.bogus"),
    ] {
        let res = app.post_json(&format!("{base}/{wk}/confirm"), &body).await;
        let err = assert_error(res, 422, "VALIDATION_ERROR").await;
        assert_eq!(detail_fields(&err), [field], "{body}");
    }
    let res = app
        .post_json(
            &format!("{base}/{}/confirm", uuid::Uuid::now_v7()),
            &json!({"plant_key": k1}),
        )
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    assert_eq!(count(&app, &t, "care_confirmations").await, 0);

    // A care task of the plant is completed by the confirmation.
    let (s, task) = post(
        &app,
        &format!("/api/v1/t/{}/tasks", t.slug),
        json!({"name": "Care one — watering", "category": "care_reminder", "plant_key": k1}),
    )
    .await;
    assert_eq!(s, 201);

    // Confirm: next due one interval later, logged.
    let (s, out) = post(
        &app,
        &format!("{base}/{wk}/confirm"),
        json!({"plant_key": k1, "notes": "1 l"}),
    )
    .await;
    assert_eq!(s, 200, "{out}");
    let interval = i64::from(watering_interval(
        // The fixture plant's first phase waters every 3 days: the phase's interval comes first.
        Some(3),
        7,
        None,
        1.5,
        today(),
        Hemisphere::North,
    ));
    assert_eq!(
        out["reminder"]["due_on"],
        ds(today() + Duration::days(interval))
    );
    assert_eq!(out["reminder"]["interval_days"], interval);
    assert_eq!(out["entry"]["action"], "confirmed");
    assert_eq!(out["entry"]["interval_at_time_days"], interval);
    assert_eq!(out["completed_task_keys"], json!([task["key"]]));
    let (_, task_now) = get_json(&app, &format!("/api/v1/t/{}/tasks/{}", t.slug, key(&task))).await;
    assert_eq!(task_now["status"], "completed");
    let (_, due) = get_json(&app, &base).await;
    let still: Vec<&Value> = due["due_today"]
        .as_array()
        .expect("group")
        .iter()
        .filter(|r| r["plant_key"] == k1.as_str() && r["reminder_type"] == "watering")
        .collect();
    assert!(still.is_empty(), "confirmed watering is no longer due");

    // Snooze the pest check 3 days; bad days are 422.
    let (_, care) = get_json(&app, &format!("{base}/plants/{k1}")).await;
    let pk = reminder(&care, "pest_check")["reminder_key"]
        .as_str()
        .expect("key")
        .to_owned();
    let res = app
        .post_json(
            &format!("{base}/{pk}/snooze"),
            &json!({"plant_key": k1, "days": 0}),
        )
        .await;
    assert_error(res, 422, "VALIDATION_ERROR").await;
    let (s, out) = post(
        &app,
        &format!("{base}/{pk}/snooze"),
        json!({"plant_key": k1, "days": 3}),
    )
    .await;
    assert_eq!(s, 200, "{out}");
    assert_eq!(out["reminder"]["due_on"], ds(today() + Duration::days(3)));
    assert_eq!(out["reminder"]["urgency"], "not_due");
    assert_eq!(out["entry"]["action"], "snoozed");
    assert_eq!(out["entry"]["snooze_days"], 3);

    // The log: newest first, filtered by type; bad filters 422; unknown plant 404.
    let (s, log) = get_json(&app, &format!("{base}/plants/{k1}/log")).await;
    assert_eq!(s, 200);
    let actions: Vec<&str> = log
        .as_array()
        .expect("list")
        .iter()
        .filter_map(|e| e["action"].as_str())
        .collect();
    assert_eq!(actions, ["snoozed", "confirmed"]);
    let (_, log) = get_json(
        &app,
        &format!("{base}/plants/{k1}/log?reminder_type=watering"),
    )
    .await;
    assert_eq!(log.as_array().map(Vec::len), Some(1));
    assert_eq!(log[0]["notes"], "1 l");
    let res = app
        .get(&format!(
            "{base}/plants/{k1}/log?reminder_type=singing&limit=0"
        ))
        .await;
    let err = assert_error(res, 422, "VALIDATION_ERROR").await;
    assert_eq!(detail_fields(&err), ["query.reminder_type", "query.limit"]);
    let res = app
        .get(&format!("{base}/plants/{}/log", uuid::Uuid::now_v7()))
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    let res = app
        .get(&format!("{base}/plants/{}", uuid::Uuid::now_v7()))
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    let (_, log2) = get_json(&app, &format!("{base}/plants/{k2}/log")).await;
    assert_eq!(log2, json!([]));

    // An archived plant's reminders leave the list.
    let (s, _) = post(
        &app,
        &format!("{}{k2}/archive", plants_path(&t)),
        json!({"reason": "died"}),
    )
    .await;
    assert_eq!(s, 200);
    let (_, all) = get_json(&app, &format!("{base}?urgency=all")).await;
    assert!(!all.to_string().contains(&k2));
}

/// Keys of a group's reminders, in the order listed.
fn keys_in(group: &Value) -> Vec<String> {
    group
        .as_array()
        .map(|l| {
            l.iter()
                .filter_map(|r| r["reminder_key"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// The due list pages each urgency group: `limit` per group, `skip` within each group in due
/// order, counts over all pages; bad paging is a 422 naming the parameter; the tool pages the
/// same way and says when a page is not the whole answer.
#[tokio::test]
async fn care_due_list_pages_each_group() {
    let app = TestApp::spawn().await;
    let t = app.tenant("carepage").await;
    let base = care_path(&t);
    let tomato = species(&app, TOMATO).await;
    for n in 0..4 {
        plant(
            &app,
            &t,
            json!({"species_key": tomato, "name": format!("Page {n}")}),
        )
        .await;
    }
    // Two plants' reminders fall overdue (the grower missed them).
    let (_, first) = get_json(&app, &format!("{base}?urgency=all&limit=500")).await;
    let mut tx = TenantTx::begin(&app.state, &t).await.expect("tx");
    sqlx::query(tx.sql(
        "UPDATE tenant.care_reminders SET due_on = due_on - 3 WHERE plant_id IN \
         (SELECT id FROM tenant.plants WHERE name IN ('Page 0', 'Page 1')) \
         AND reminder_type IN ('watering', 'pest_check')",
    ))
    .execute(tx.conn())
    .await
    .expect("overdue");
    tx.commit().await.expect("commit");
    let (s, full) = get_json(&app, &format!("{base}?urgency=all&limit=500")).await;
    assert_eq!(s, 200, "{full}");
    assert_eq!(full["total"], first["total"], "{full}");
    let mut sum = 0;
    for group in ["overdue", "due_today", "upcoming", "not_due"] {
        let n = keys_in(&full[group]).len() as i64;
        assert_eq!(full["counts"][group], n, "{group}: {full}");
        sum += n;
    }
    assert_eq!(full["total"], sum);
    assert_eq!(full["counts"]["overdue"], 4, "{full}");
    assert!(full["counts"]["due_today"].as_i64() >= Some(4), "{full}");

    // Pages of 3 per group walk each group in the full list's order, counts unchanged.
    for group in ["overdue", "due_today", "not_due"] {
        let all = keys_in(&full[group]);
        let mut walked = Vec::new();
        let mut skip = 0;
        while skip <= all.len() {
            let (s, page) =
                get_json(&app, &format!("{base}?urgency=all&limit=3&skip={skip}")).await;
            assert_eq!(s, 200, "{page}");
            assert_eq!(
                (page["skip"].as_i64(), page["limit"].as_i64()),
                (Some(skip as i64), Some(3))
            );
            assert_eq!(page["counts"], full["counts"]);
            assert_eq!(page["total"], full["total"]);
            let got = keys_in(&page[group]);
            assert!(got.len() <= 3, "{page}");
            walked.extend(got);
            skip += 3;
        }
        assert_eq!(walked, all, "{group}");
    }
    // One bucket asked: only its count and list.
    let (_, over) = get_json(&app, &format!("{base}?urgency=overdue&limit=1")).await;
    assert_eq!(over["counts"], json!({"overdue": 4}));
    assert_eq!(
        keys_in(&over["overdue"]),
        keys_in(&full["overdue"])[..1].to_vec()
    );
    assert!(over["due_today"].is_null());

    for (query, field) in [
        ("limit=0", "query.limit"),
        ("limit=501", "query.limit"),
        ("skip=-1", "query.skip"),
        ("limit=many", "query.limit"),
    ] {
        let res = app.get(&format!("{base}?{query}")).await;
        let err = assert_error(res, 422, "VALIDATION_ERROR").await;
        assert_eq!(detail_fields(&err), [field], "{query}");
    }

    // The tool: the same paging and counts; a partial page says how to get the rest.
    use crate::mcp_tools::{call, scoped_key};
    let app = crate::mcp_tools::app().await;
    let vk = scoped_key(&app, &t, Role::Viewer).await;
    let (s, out) = call(
        &app,
        &vk,
        "get_due_care_tasks",
        json!({"urgency": "actionable", "limit": 2, "offset": 2}),
    )
    .await;
    assert_eq!(s, 200, "{out}");
    assert_eq!(out["data"]["counts"]["overdue"], 4);
    assert_eq!(
        keys_in(&out["data"]["overdue"]),
        keys_in(&full["overdue"])[2..4].to_vec()
    );
    let summary = out["summary"].as_str().unwrap_or_default();
    assert!(
        summary.contains("4 overdue") && summary.contains("page with offset"),
        "{summary}"
    );
    let (s, err) = call(&app, &vk, "get_due_care_tasks", json!({"limit": 501})).await;
    assert_eq!(
        (s, err["error_code"].as_str()),
        (422, Some("validation.error")),
        "{err}"
    );
}

#[tokio::test]
async fn care_interval_adapts_to_the_grower() {
    let app = TestApp::spawn().await;
    let t = app.tenant("careadapt").await;
    let base = care_path(&t);
    let tomato = species(&app, TOMATO).await;
    let p = plant(&app, &t, json!({"species_key": tomato})).await;
    let k = key(&p);
    let (_, care) = get_json(&app, &format!("{base}/plants/{k}")).await;
    let wk = reminder(&care, "watering")["reminder_key"]
        .as_str()
        .expect("key")
        .to_owned();
    // Watered every 5 days instead of 7: after the third confirmation (gaps 5, 5) the learned
    // interval moves one day towards 5 (7 → 6); the fourth (gaps 5, 5, 5) → 5.
    let mut learned = Vec::new();
    for back in [15, 10, 5, 0] {
        let (s, out) = post(
            &app,
            &format!("{base}/{wk}/confirm"),
            json!({"plant_key": k, "confirmed_on": ds(today() - Duration::days(back))}),
        )
        .await;
        assert_eq!(s, 200, "{out}");
        learned.push(out["learned_interval_days"].clone());
    }
    assert_eq!(learned, [Value::Null, Value::Null, json!(6), json!(5)]);
    let (_, care) = get_json(&app, &format!("{base}/plants/{k}")).await;
    assert_eq!(care["profile"]["watering_interval_learned"], 5);
    let interval = i64::from(watering_interval(
        // The fixture plant's first phase waters every 3 days: the phase's interval comes first.
        Some(3),
        7,
        Some(5),
        1.5,
        today(),
        Hemisphere::North,
    ));
    assert_eq!(
        reminder(&care, "watering")["due_on"],
        ds(today() + Duration::days(interval))
    );
}

#[tokio::test]
async fn care_overwintering_from_the_catalogue_and_calendar() {
    let app = TestApp::spawn().await;
    let t = app.tenant("carewinter").await;
    let base = care_path(&t);
    let bean = species(&app, PERENNIAL).await;
    let tomato = species(&app, TOMATO).await;
    let p = plant(&app, &t, json!({"species_key": bean, "name": "Bean"})).await;
    let q = plant(&app, &t, json!({"species_key": tomato, "name": "Tom"})).await;
    let (_, care) = get_json(&app, &format!("{base}/plants/{}", key(&p))).await;
    assert_eq!(care["profile"]["winter_action"], "mulch");
    assert_eq!(care["profile"]["winter_action_month"], 11);
    assert_eq!(care["profile"]["spring_action"], "uncover");
    let winter = next_month_start(11, today());
    assert_eq!(reminder(&care, "overwintering")["due_on"], ds(winter));
    // No overwintering profile for the tomato: no such reminder, and confirming one is 422.
    let (_, care_q) = get_json(&app, &format!("{base}/plants/{}", key(&q))).await;
    assert!(
        types_in(&care_q["reminders"])
            .iter()
            .all(|t| t != "overwintering")
    );

    // The calendar: each reminder on its day and then one interval apart.
    let mut tx = TenantTx::read(&app.state, &t).await.expect("tx");
    let from = today();
    let to = today() + Duration::days(13);
    let events = kultiva::garden::care::service::calendar_events(&mut tx, from, to)
        .await
        .expect("events");
    let wk = reminder(&care_q, "watering")["reminder_key"]
        .as_str()
        .expect("key")
        .to_owned();
    let interval = i64::from(watering_interval(
        // The fixture plant's first phase waters every 3 days: the phase's interval comes first.
        Some(3),
        7,
        None,
        1.5,
        today(),
        Hemisphere::North,
    ));
    let mut want = vec![format!("care_reminder:{wk}:{}", ds(from))];
    let mut d = from + Duration::days(interval);
    while d <= to {
        want.push(format!("care_reminder:{wk}:{}", ds(d)));
        d += Duration::days(interval);
    }
    let got: Vec<String> = events
        .iter()
        .filter(|e| e.uid.contains(&wk))
        .map(|e| e.uid.clone())
        .collect();
    assert_eq!(got, want);
    assert!(
        events
            .iter()
            .all(|e| e.kind == "care_reminder" && e.date >= from && e.date <= to)
    );
    assert!(
        events
            .iter()
            .any(|e| e.plant_key.map(|k| k.to_string()) == Some(key(&p)))
    );
}

#[tokio::test]
async fn care_roles_and_two_tenants() {
    let app = TestApp::full().await;
    let a = app.tenant("careroa").await;
    let b = app.tenant("carerob").await;
    let tomato = species(&app, TOMATO).await;
    let admin = app.member(&a, Role::Admin).await;
    let viewer = app.member(&a, Role::Viewer).await;
    let grower = app.member(&a, Role::Grower).await;
    let admin_b = app.member(&b, Role::Admin).await;
    let res = app
        .rest_as(&admin)
        .post(
            &plants_path(&a),
            &json!({"species_key": tomato, "name": "Role plant"}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 201);
    let p: Value = res.json().await.expect("json");
    let k = key(&p);
    let base = care_path(&a);
    for path in [
        base.clone(),
        format!("{base}/plants/{k}"),
        format!("{base}/plants/{k}/log"),
    ] {
        let res = app.rest_as(&viewer).get(&path).await;
        assert_eq!(res.status().as_u16(), 200, "{path}");
    }
    let res = app
        .rest_as(&viewer)
        .get(&format!("{base}/plants/{k}"))
        .await;
    let care: Value = res.json().await.expect("json");
    let wk = reminder(&care, "watering")["reminder_key"]
        .as_str()
        .expect("key")
        .to_owned();
    let body = json!({"plant_key": k});
    for action in ["confirm", "snooze"] {
        let res = app
            .rest_as(&viewer)
            .post(&format!("{base}/{wk}/{action}"), &body)
            .await;
        assert_error(res, 403, "FORBIDDEN").await;
    }
    // B sees nothing of A: A's reminder and plant are 404 there, its list is empty.
    let base_b = care_path(&b);
    for (m, path, body) in [
        (Method::GET, format!("{base_b}/plants/{k}"), None),
        (Method::GET, format!("{base_b}/plants/{k}/log"), None),
        (
            Method::POST,
            format!("{base_b}/{wk}/confirm"),
            Some(body.clone()),
        ),
        (
            Method::POST,
            format!("{base_b}/{wk}/snooze"),
            Some(body.clone()),
        ),
    ] {
        let res = app.rest_as(&admin_b).send(m, &path, body.as_ref()).await;
        assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    }
    let res = app
        .rest_as(&admin_b)
        .get(&format!("{base_b}?urgency=all"))
        .await;
    let all_b: Value = res.json().await.expect("json");
    assert_eq!(all_b["total"], 0);
    assert_eq!(count(&app, &a, "care_confirmations").await, 0);
    let res = app
        .rest_as(&grower)
        .post(&format!("{base}/{wk}/confirm"), &body)
        .await;
    assert_eq!(res.status().as_u16(), 200);
    assert_eq!(count(&app, &a, "care_confirmations").await, 1);
}

#[tokio::test]
async fn care_tools_due_confirm_and_log() {
    use crate::mcp_tools::{call, scoped_key};
    let app = crate::mcp_tools::app().await;
    let a = app.tenant("caremcpa").await;
    let b = app.tenant("caremcpb").await;
    let tomato = species(&app, TOMATO).await;
    let gk = scoped_key(&app, &a, Role::Grower).await;
    let vk = scoped_key(&app, &a, Role::Viewer).await;
    let bk = scoped_key(&app, &b, Role::Admin).await;
    let new = kultiva::garden::plants::model::NewPlant {
        species_key: tomato,
        name: Some("Tool basil".into()),
        cultivar_key: None,
        location_key: None,
        slot_key: None,
        substrate_batch_key: None,
        planted_on: None,
        phase_key: None,
        notes: None,
        start_phase: kultiva::garden::plants::model::StartPhase::First,
    };
    let p = kultiva::garden::plants::service::create_plant(&app.state, &a, &new, "test", true)
        .await
        .expect("plant");
    let k = p.key.to_string();

    let (s, due) = call(&app, &vk, "get_due_care_tasks", json!({})).await;
    assert_eq!(s, 200, "{due}");
    assert_eq!(due["data"]["urgency"], "actionable");
    assert!(types_in(&due["data"]["due_today"]).contains(&"watering".to_owned()));
    assert!(due["data"].get("not_due").is_none());
    let (s, due) = call(&app, &vk, "get_due_care_tasks", json!({"urgency": "all"})).await;
    assert_eq!(s, 200);
    assert!(types_in(&due["data"]["not_due"]).contains(&"repotting".to_owned()));
    let (s, err) = call(&app, &vk, "get_due_care_tasks", json!({"urgency": "soon"})).await;
    assert_eq!(
        (s, err["error_code"].as_str()),
        (422, Some("validation.error"))
    );

    // Viewer cannot confirm; a dry run writes nothing; a real one shows in the log.
    let args = json!({"plant_key": k, "reminder_type": "watering", "notes": "by tool"});
    let (s, err) = call(&app, &vk, "confirm_care_task", args.clone()).await;
    assert_eq!(
        (s, err["error_code"].as_str()),
        (403, Some("permission.denied"))
    );
    let mut dry = args.clone();
    dry["dry_run"] = json!(true);
    let (s, out) = call(&app, &gk, "confirm_care_task", dry).await;
    assert_eq!(s, 200, "{out}");
    assert!(
        out["summary"]
            .as_str()
            .is_some_and(|s| s.contains("Dry run"))
    );
    assert_eq!(count(&app, &a, "care_confirmations").await, 0);
    let (s, out) = call(&app, &gk, "confirm_care_task", args.clone()).await;
    assert_eq!(s, 200, "{out}");
    let (s, log) = call(
        &app,
        &vk,
        "get_plant_care_log",
        json!({"plant_key": k, "reminder_type": "watering"}),
    )
    .await;
    assert_eq!(s, 200, "{log}");
    assert_eq!(log["data"]["items"][0]["action"], "confirmed");
    assert_eq!(log["data"]["items"][0]["notes"], "by tool");
    // The same confirmation is what REST shows.
    let res = app
        .rest_auth(Some(&crate::mcp_tools::bearer(&vk)))
        .get(&format!("{}/plants/{k}/log", care_path(&a)))
        .await;
    let rest_log: Value = res.json().await.expect("json");
    assert_eq!(
        rest_log[0]["entry_key"],
        log["data"]["items"][0]["entry_key"]
    );
    let (_, log) = call(
        &app,
        &vk,
        "get_plant_care_log",
        json!({"plant_key": k, "reminder_type": "pest_check"}),
    )
    .await;
    assert_eq!(log["data"]["items"], json!([]));

    // Idempotency: the same key twice confirms once.
    let once =
        json!({"plant_key": k, "reminder_type": "pest_check", "idempotency_key": "care-once-1"});
    let (s1, _) = call(&app, &gk, "confirm_care_task", once.clone()).await;
    let (s2, _) = call(&app, &gk, "confirm_care_task", once.clone()).await;
    assert_eq!((s1, s2), (200, 200));
    assert_eq!(count(&app, &a, "care_confirmations").await, 2);

    // Errors: no overwintering reminder for this plant; an unknown plant; another garden.
    let (s, err) = call(
        &app,
        &gk,
        "confirm_care_task",
        json!({"plant_key": k, "reminder_type": "overwintering"}),
    )
    .await;
    assert_eq!(
        (s, err["error_code"].as_str()),
        (422, Some("validation.error")),
        "{err}"
    );
    assert_eq!(err["details"][0]["field"], "reminder_type");
    let (s, err) = call(
        &app,
        &gk,
        "confirm_care_task",
        json!({"plant_key": uuid::Uuid::now_v7(), "reminder_type": "watering"}),
    )
    .await;
    assert_eq!((s, err["error_code"].as_str()), (404, Some("not_found")));
    for (tool, args) in [
        (
            "confirm_care_task",
            json!({"plant_key": k, "reminder_type": "watering"}),
        ),
        ("get_plant_care_log", json!({"plant_key": k})),
    ] {
        let (s, err) = call(&app, &bk, tool, args).await;
        assert_eq!(
            (s, err["error_code"].as_str()),
            (404, Some("not_found")),
            "{tool}"
        );
    }
    assert_eq!(count(&app, &a, "care_confirmations").await, 2);
    let (_, due_b) = call(&app, &bk, "get_due_care_tasks", json!({"urgency": "all"})).await;
    assert_eq!(due_b["data"]["total"], 0);
}

/// Issue 39: winter rest waters less, never not at all; only a dry rest (and dormancy, leaf
/// renewal) withholds watering, and says why. The fixture fern runs into `fx_winter_rest`, the
/// fixture stone into `fx_dry_rest`. REST and the care tool give the same answer, and another
/// garden sees neither plant.
#[tokio::test]
async fn care_winter_rest_waters_less_and_dry_rest_withholds() {
    use crate::mcp_tools::{call, scoped_key};
    let app = crate::mcp_tools::app().await;
    let a = app.tenant("carerest").await;
    let b = app.tenant("carerestb").await;
    let admin = app.member(&a, Role::Admin).await;
    let admin_b = app.member(&b, Role::Admin).await;
    let base = care_path(&a);
    let fern = species(&app, "Mockia filix").await;
    let stone = species(&app, "Lithopsis fixturae").await;
    let fern_rest = phases(&app, &fern).await[1].clone();
    let stone_rest = phases(&app, &stone).await[1].clone();
    let rest = app.rest_as(&admin);
    let create = |species: String, phase: String, name: &str| json!({"species_key": species, "phase_key": phase, "name": name});
    let res = rest
        .post(&plants_path(&a), &create(fern, fern_rest, "Resting fern"))
        .await;
    assert_eq!(res.status().as_u16(), 201);
    let fern_plant = key(&res.json::<Value>().await.expect("json"));
    let res = rest
        .post(&plants_path(&a), &create(stone, stone_rest, "Dry stone"))
        .await;
    assert_eq!(res.status().as_u16(), 201);
    let stone_plant = key(&res.json::<Value>().await.expect("json"));

    // The fern in winter rest keeps its watering reminder, due today, at its own interval
    // times the winter multiplier (not the phase's 5 days, not the summer 7), and nothing is
    // withheld.
    let res = rest.get(&format!("{base}/plants/{fern_plant}")).await;
    assert_eq!(res.status().as_u16(), 200);
    let care: Value = res.json().await.expect("json");
    let prof = &care["profile"];
    let own = prof["watering_interval_days"].as_i64().expect("interval");
    let mult = prof["winter_watering_multiplier"].as_f64().expect("mult");
    let winter = (own as f64 * mult).trunc() as i64;
    assert_eq!((own, winter), (7, 10), "{prof}");
    let water = reminder(&care, "watering");
    assert_eq!(water["interval_days"], winter, "{care}");
    assert_eq!(water["due_on"], ds(today()));
    assert!(care["watering_withheld"].is_null(), "{care}");

    // Confirmed, the next watering comes one winter interval later.
    let wk = water["reminder_key"].as_str().expect("key").to_owned();
    let res = rest
        .post(
            &format!("{base}/{wk}/confirm"),
            &json!({"plant_key": fern_plant}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let res = rest.get(&format!("{base}/plants/{fern_plant}")).await;
    let care: Value = res.json().await.expect("json");
    assert_eq!(
        reminder(&care, "watering")["due_on"],
        ds(today() + Duration::days(winter)),
        "{care}"
    );

    // The stone in dry rest: no watering reminder is due, and the answer says why.
    let res = rest.get(&format!("{base}/plants/{stone_plant}")).await;
    let care: Value = res.json().await.expect("json");
    let held = &care["watering_withheld"];
    assert_eq!(held["plant_key"], stone_plant.as_str(), "{care}");
    assert_eq!(held["phase"], "fx_dry_rest");
    assert!(
        held["reason"]
            .as_str()
            .is_some_and(|r| r.starts_with("dry rest")),
        "{held}"
    );
    let res = rest.get(&format!("{base}?urgency=all")).await;
    let due: Value = res.json().await.expect("json");
    let watering_of = |plant: &str| {
        ["overdue", "due_today", "upcoming", "not_due"]
            .iter()
            .flat_map(|g| due[*g].as_array().cloned().unwrap_or_default())
            .filter(|r| r["plant_key"] == plant && r["reminder_type"] == "watering")
            .count()
    };
    assert_eq!(watering_of(&stone_plant), 0, "{due}");
    assert_eq!(watering_of(&fern_plant), 1, "{due}");
    assert_eq!(due["watering_withheld_total"], 1, "{due}");
    assert_eq!(due["watering_withheld"][0]["plant_name"], "Dry stone");
    // The pest check still runs in both rests.
    assert!(
        types_in(&due["due_today"]).contains(&"pest_check".to_owned()),
        "{due}"
    );

    // The care tool says the same, with the reason in its summary.
    let vk = scoped_key(&app, &a, Role::Viewer).await;
    let (s, out) = call(&app, &vk, "get_due_care_tasks", json!({"urgency": "all"})).await;
    assert_eq!(s, 200, "{out}");
    assert_eq!(out["data"]["watering_withheld_total"], 1, "{out}");
    assert_eq!(
        out["data"]["watering_withheld"][0]["plant_key"],
        stone_plant.as_str()
    );
    assert!(
        out["summary"]
            .as_str()
            .is_some_and(|s| s.contains("Watering withheld for 1") && s.contains("Dry stone")),
        "{out}"
    );

    // Garden B sees neither plant, nothing withheld, and A's plant is 404 there.
    let rest_b = app.rest_as(&admin_b);
    let res = rest_b.get(&format!("{}?urgency=all", care_path(&b))).await;
    let due_b: Value = res.json().await.expect("json");
    assert_eq!(
        (
            due_b["total"].as_i64(),
            due_b["watering_withheld_total"].as_i64()
        ),
        (Some(0), Some(0)),
        "{due_b}"
    );
    let res = rest_b
        .get(&format!("{}/plants/{stone_plant}", care_path(&b)))
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
}
