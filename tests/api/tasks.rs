//! Tasks: create, list, get, patch, the states of domain 2.7, recurrence (the next occurrence
//! on completion, a recurrence that never fires), phase-entry tasks, the HST check, member
//! assignment, roles, two tenants, the calendar events and the `list_tasks` tool.

use kultiva::auth::Role;
use kultiva::tenancy::TenantTx;
use reqwest::Method;
use serde_json::{Value, json};
use time::{Duration, OffsetDateTime};

use crate::garden::*;
use crate::support::{TestApp, assert_error, detail_fields};

const TOMATO: &str = "Fixtura tomatoides";

fn tasks_path(t: &kultiva::tenancy::TenantRecord) -> String {
    format!("/api/v1/t/{}/tasks", t.slug)
}

async fn patch(app: &TestApp, path: &str, body: Value) -> (u16, Value) {
    let res = app.rest().patch(path, &body).await;
    let s = res.status().as_u16();
    (s, res.json().await.unwrap_or(Value::Null))
}

async fn act(app: &TestApp, base: &str, k: &str, action: &str) -> (u16, Value) {
    post(
        app,
        &format!("{base}/{k}/status"),
        json!({"action": action}),
    )
    .await
}

fn day(offset: i64) -> String {
    let d = OffsetDateTime::now_utc().date() + Duration::days(offset);
    kultiva::garden::tasks::model::date_str(d)
}

#[tokio::test]
async fn tasks_states_checklist_and_patch() {
    let app = TestApp::spawn().await;
    let t = app.tenant("tasks").await;
    let base = tasks_path(&t);

    let (s, task) = post(
        &app,
        &base,
        json!({"name": "Clean the tent", "due_on": "2026-06-01", "priority": "high",
               "checklist": [{"text": "Wipe walls"}, {"text": "Check fans", "done": false}]}),
    )
    .await;
    assert_eq!(s, 201, "{task}");
    assert_eq!(task["status"], "pending");
    assert_eq!(task["category"], "maintenance");
    assert_eq!(task["due_on"], "2026-06-01");
    assert_eq!(task["checklist"][1]["text"], "Check fans");
    assert_eq!(
        task["allowed_actions"],
        json!(["start", "complete", "skip"])
    );
    let k = key(&task);

    let (s, got) = get_json(&app, &format!("{base}/{k}")).await;
    assert_eq!((s, got["name"].as_str()), (200, Some("Clean the tent")));
    let (s, page) = get_json(&app, &format!("{base}?status=pending")).await;
    assert_eq!((s, page["total"].as_i64()), (200, Some(1)));
    let (s, page) = get_json(&app, &format!("{base}?status=completed")).await;
    assert_eq!((s, page["total"].as_i64()), (200, Some(0)));
    let (s, page) = get_json(
        &app,
        &format!("{base}?due_from=2026-05-01&due_to=2026-06-01"),
    )
    .await;
    assert_eq!((s, page["total"].as_i64()), (200, Some(1)));

    // Filters: bad ones and dates in the wrong order are 422 naming the query field.
    let res = app
        .get(&format!("{base}?due_from=2026-06-02&due_to=2026-06-01"))
        .await;
    let err = assert_error(res, 422, "VALIDATION_ERROR").await;
    assert_eq!(detail_fields(&err), ["query.due_to"]);
    let res = app.get(&format!("{base}?status=done&plant=x")).await;
    let err = assert_error(res, 422, "VALIDATION_ERROR").await;
    assert_eq!(detail_fields(&err), ["query.status", "query.plant"]);

    // Checklist ticked through a patch; a bad patch writes nothing.
    let (s, p) = patch(
        &app,
        &format!("{base}/{k}"),
        json!({"checklist": [{"text": "Wipe walls", "done": true}, {"text": "Check fans"}],
               "due_on": "2026-06-02"}),
    )
    .await;
    assert_eq!(s, 200, "{p}");
    assert_eq!(p["checklist"][0]["done"], true);
    assert_eq!(p["due_on"], "2026-06-02");
    let (s, _) = patch(&app, &format!("{base}/{k}"), json!({"checklist": null})).await;
    assert_eq!(s, 422);
    let (s, _) = patch(&app, &format!("{base}/{k}"), json!({"priority": "urgent"})).await;
    assert_eq!(s, 422);
    let (_, got) = get_json(&app, &format!("{base}/{k}")).await;
    assert_eq!(got["priority"], "high");
    assert_eq!(got["checklist"][0]["done"], true);

    // States: start → complete; then start is refused; reopen → pending; skip; delete.
    let (s, r) = act(&app, &base, &k, "start").await;
    assert_eq!(
        (s, r["task"]["status"].as_str()),
        (200, Some("in_progress"))
    );
    assert!(r["task"]["started_at"].is_string());
    let (s, r) = act(&app, &base, &k, "start").await;
    assert_eq!(
        (s, r["error_code"].as_str()),
        (422, Some("INVALID_STATUS_TRANSITION")),
        "{r}"
    );
    assert_eq!(r["details"][0]["field"], "body.action");
    let (s, r) = post(
        &app,
        &format!("{base}/{k}/status"),
        json!({"action": "complete", "notes": "all clean"}),
    )
    .await;
    assert_eq!((s, r["task"]["status"].as_str()), (200, Some("completed")));
    assert_eq!(r["task"]["completion_notes"], "all clean");
    assert!(r["next_occurrence"].is_null());
    // A completed task cannot be deleted.
    let res = app.rest().delete(&format!("{base}/{k}")).await;
    assert_error(res, 422, "INVALID_STATUS_TRANSITION").await;
    let (s, r) = act(&app, &base, &k, "reopen").await;
    assert_eq!((s, r["task"]["status"].as_str()), (200, Some("pending")));
    assert_eq!(r["task"]["reopened_from_status"], "completed");
    assert!(r["task"]["completed_at"].is_null());
    let (s, r) = act(&app, &base, &k, "fail").await;
    assert_eq!(
        (s, r["error_code"].as_str()),
        (422, Some("INVALID_STATUS_TRANSITION"))
    );
    let (s, r) = act(&app, &base, &k, "skip").await;
    assert_eq!((s, r["task"]["status"].as_str()), (200, Some("skipped")));
    let (s, _) = post(
        &app,
        &format!("{base}/{k}/status"),
        json!({"action": "finish"}),
    )
    .await;
    assert_eq!(s, 422);
    let res = app.rest().delete(&format!("{base}/{k}")).await;
    assert_eq!(res.status().as_u16(), 204);
    let res = app.get(&format!("{base}/{k}")).await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    let res = app.get(&format!("{base}/not-a-key")).await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    assert_eq!(count(&app, &t, "tasks").await, 0);
}

#[tokio::test]
async fn tasks_recurrence_next_occurrence_and_never_firing() {
    let app = TestApp::spawn().await;
    let t = app.tenant("taskrec").await;
    let base = tasks_path(&t);

    // Bad input: each is 422 naming the field, and nothing is written.
    let tomato = species(&app, TOMATO).await;
    let p = plant(&app, &t, json!({"species_key": tomato})).await;
    let pk = key(&p);
    for (body, field) in [
        (
            json!({"name": "x", "due_on": "2026-06-10",
                   "recurrence": {"kind": "weekly", "end_on": "2026-06-01"}}),
            "body.recurrence.end_on",
        ),
        (
            json!({"name": "x", "recurrence": {"kind": "daily"}}),
            "body.due_on",
        ),
        (
            json!({"name": "x", "due_on": "2026-06-10", "recurrence": {"kind": "every_n_days"}}),
            "body.recurrence.every_days",
        ),
        (
            json!({"name": "x", "due_on": "2026-06-10",
                   "recurrence": {"kind": "every_n_days", "every_days": 0}}),
            "body.recurrence.every_days",
        ),
        (
            json!({"name": "x", "recurrence": {"kind": "phase_entry", "phase": "fx_flowering"}}),
            "body.recurrence.phase",
        ),
        (
            json!({"name": "x", "plant_key": pk,
                   "recurrence": {"kind": "phase_entry", "phase": "no_such_phase"}}),
            "body.recurrence.phase",
        ),
        (
            json!({"name": "x", "recurrence": {"kind": "hourly"}}),
            "body.recurrence.kind",
        ),
        (
            json!({"name": "x", "recurrence": {"kind": "daily", "cron": "* * *"}, "due_on": "2026-01-01"}),
            "body.recurrence.cron",
        ),
        (json!({"name": "", "due_on": "soon"}), "body.name"),
        (json!({"name": "x", "category": "dancing"}), "body.category"),
        (
            json!({"name": "x", "checklist": [{"text": ""}]}),
            "body.checklist[0].text",
        ),
        (json!({"name": "x", "extra": 1}), "body.extra"),
    ] {
        let res = app.post_json(&base, &body).await;
        let err = assert_error(res, 422, "VALIDATION_ERROR").await;
        assert!(
            detail_fields(&err).iter().any(|f| f == field),
            "{body}: {err}"
        );
    }
    let res = app
        .post_json(
            &base,
            &json!({"name": "x", "plant_key": uuid::Uuid::now_v7()}),
        )
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    assert_eq!(count(&app, &t, "tasks").await, 0);

    // Weekly from 2026-06-01 until 2026-06-10: completing gives 06-08 (checklist reset), then
    // nothing (06-15 is past the end).
    let (s, task) = post(
        &app,
        &base,
        json!({"name": "Check pH", "due_on": "2026-06-01", "checklist": [{"text": "Probe", "done": true}],
               "recurrence": {"kind": "weekly", "end_on": "2026-06-10"}}),
    )
    .await;
    assert_eq!(s, 201, "{task}");
    assert_eq!(task["recurrence"]["kind"], "weekly");
    assert_eq!(task["recurrence"]["end_on"], "2026-06-10");
    let (s, r) = act(&app, &base, &key(&task), "complete").await;
    assert_eq!(s, 200, "{r}");
    let next = &r["next_occurrence"];
    assert_eq!(next["status"], "pending");
    assert_eq!(next["due_on"], "2026-06-08");
    assert_eq!(next["checklist"][0]["done"], false);
    assert_eq!(next["previous_key"], task["key"]);
    let (s, r) = act(&app, &base, &key(next), "complete").await;
    assert_eq!(s, 200);
    assert!(r["next_occurrence"].is_null(), "{r}");
    assert_eq!(count(&app, &t, "tasks").await, 2);

    // Every 3 days: the next occurrence is 3 days on.
    let (_, task) = post(
        &app,
        &base,
        json!({"name": "Mist", "due_on": "2026-06-01",
               "recurrence": {"kind": "every_n_days", "every_days": 3}}),
    )
    .await;
    let (_, r) = act(&app, &base, &key(&task), "complete").await;
    assert_eq!(r["next_occurrence"]["due_on"], "2026-06-04");
    // Daily.
    let (_, task) = post(
        &app,
        &base,
        json!({"name": "Look", "due_on": "2026-06-01", "recurrence": {"kind": "daily"}}),
    )
    .await;
    let (_, r) = act(&app, &base, &key(&task), "complete").await;
    assert_eq!(r["next_occurrence"]["due_on"], "2026-06-02");
    let daily = key(&r["next_occurrence"]);

    // A patch that would leave the recurrence without a due day is refused.
    let (s, _) = patch(&app, &format!("{base}/{daily}"), json!({"due_on": null})).await;
    assert_eq!(s, 422);

    // The calendar: the daily task on its day and its projected occurrences in the window.
    let mut tx = TenantTx::read(&app.state, &t).await.expect("tx");
    let from = time::macros::date!(2026 - 06 - 02);
    let to = time::macros::date!(2026 - 06 - 05);
    let events = kultiva::garden::tasks::service::calendar_events(&mut tx, from, to)
        .await
        .expect("events");
    let daily_events: Vec<&str> = events
        .iter()
        .filter(|e| e.uid.contains(&daily))
        .map(|e| e.uid.as_str())
        .collect();
    assert_eq!(
        daily_events,
        [
            format!("task:{daily}"),
            format!("task:{daily}:2026-06-03"),
            format!("task:{daily}:2026-06-04"),
            format!("task:{daily}:2026-06-05"),
        ]
    );
    assert!(
        events
            .iter()
            .all(|e| e.kind == "task" && e.date >= from && e.date <= to)
    );
    // The every-3-days one (next due 06-04) appears once, the completed ones not at all.
    assert_eq!(events.iter().filter(|e| e.title == "Mist").count(), 1);
    assert!(events.iter().all(|e| e.title != "Check pH"));
    let none = kultiva::garden::tasks::service::calendar_events(&mut tx, to, from)
        .await
        .expect("events");
    assert!(none.is_empty());
}

#[tokio::test]
async fn tasks_phase_entry_and_training_checks() {
    let app = TestApp::spawn().await;
    let t = app.tenant("taskhst").await;
    let base = tasks_path(&t);
    let tomato = species(&app, TOMATO).await;
    let ph = phases(&app, &tomato).await;
    let p = plant(
        &app,
        &t,
        json!({"species_key": tomato, "name": "Hst tomato"}),
    )
    .await;
    let pk = key(&p);

    // A phase-entry task waits (dormant) until the plant enters flowering.
    let (s, task) = post(
        &app,
        &base,
        json!({"name": "Tie up the stems", "plant_key": pk,
               "recurrence": {"kind": "phase_entry", "phase": ph[2]}}),
    )
    .await;
    assert_eq!(s, 201, "{task}");
    assert_eq!(task["status"], "dormant");
    assert_eq!(task["allowed_actions"], json!([]));
    let (s, r) = act(&app, &base, &key(&task), "start").await;
    assert_eq!(
        (s, r["error_code"].as_str()),
        (422, Some("INVALID_STATUS_TRANSITION"))
    );
    // Topping while vegetative is fine; completing it starts the recovery time.
    let (s, top) = post(
        &app,
        &base,
        json!({"name": "Topping", "category": "training", "plant_key": pk}),
    )
    .await;
    assert_eq!(s, 201);
    for target in [&ph[1], &ph[2]] {
        let (s, body) = post(
            &app,
            &format!("{}{pk}/phase-transitions", plants_path(&t)),
            json!({"target_phase_key": target}),
        )
        .await;
        assert_eq!(s, 200, "{body}");
        if target == &ph[1] {
            let (s, r) = act(&app, &base, &key(&top), "complete").await;
            assert_eq!(s, 200, "{r}");
            // FIM right after topping: the plant still recovers.
            let (_, fim) = post(
                &app,
                &base,
                json!({"name": "FIM", "category": "training", "plant_key": pk}),
            )
            .await;
            let (s, r) = act(&app, &base, &key(&fim), "start").await;
            assert_eq!(
                (s, r["error_code"].as_str()),
                (422, Some("HST_VIOLATION")),
                "{r}"
            );
            assert!(
                r["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("recovering"))
            );
            let (_, still) = get_json(&app, &format!("{base}/{}", key(&fim))).await;
            assert_eq!(still["status"], "pending");
        }
    }
    // In flowering the dormant task is due, and topping is refused.
    let (_, got) = get_json(&app, &format!("{base}/{}", key(&task))).await;
    assert_eq!(got["status"], "pending");
    let (_, late) = post(
        &app,
        &base,
        json!({"name": "topping again", "category": "training", "plant_key": pk}),
    )
    .await;
    let (s, r) = act(&app, &base, &key(&late), "complete").await;
    assert_eq!(
        (s, r["error_code"].as_str()),
        (422, Some("HST_VIOLATION")),
        "{r}"
    );
    let (_, still) = get_json(&app, &format!("{base}/{}", key(&late))).await;
    assert_eq!(still["status"], "pending");
    // Not a training category: not checked.
    let (_, obs) = post(
        &app,
        &base,
        json!({"name": "Topping photo", "category": "observation", "plant_key": pk}),
    )
    .await;
    let (s, _) = act(&app, &base, &key(&obs), "complete").await;
    assert_eq!(s, 200);
    // Completing the phase-entry task creates the next one, dormant until the next entry.
    let (s, r) = act(&app, &base, &key(&task), "complete").await;
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["next_occurrence"]["status"], "dormant");
    assert_eq!(r["next_occurrence"]["recurrence"]["phase"], ph[2].as_str());
    let (_, page) = get_json(&app, &format!("{base}?status=dormant")).await;
    assert_eq!(page["total"], 1);
    // Archived plants take no new tasks.
    let (s, _) = post(
        &app,
        &format!("{}{pk}/archive", plants_path(&t)),
        json!({"reason": "died"}),
    )
    .await;
    assert_eq!(s, 200);
    let res = app
        .post_json(&base, &json!({"name": "x", "plant_key": pk}))
        .await;
    let err = assert_error(res, 422, "VALIDATION_ERROR").await;
    assert_eq!(detail_fields(&err), ["body.plant_key"]);
}

#[tokio::test]
async fn tasks_roles_assignment_and_two_tenants() {
    let app = TestApp::full().await;
    let a = app.tenant("taskrolea").await;
    let b = app.tenant("taskroleb").await;
    let base = tasks_path(&a);
    let viewer = app.member(&a, Role::Viewer).await;
    let grower = app.member(&a, Role::Grower).await;
    let admin_b = app.member(&b, Role::Admin).await;
    let stranger = app.user("taskstranger").await;

    // Viewer cannot write; stranger does not see the garden.
    let body = json!({"name": "Water", "due_on": day(0)});
    let res = app.rest_as(&viewer).post(&base, &body).await;
    assert_error(res, 403, "FORBIDDEN").await;
    let res = app.rest_as(&stranger).post(&base, &body).await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    // Assigning to someone who is not a member of the garden: 422 naming the field.
    let bad = json!({"name": "Water", "assigned_to": stranger.key});
    let res = app.rest_as(&grower).post(&base, &bad).await;
    let err = assert_error(res, 422, "VALIDATION_ERROR").await;
    assert_eq!(detail_fields(&err), ["body.assigned_to"]);
    let bad = json!({"name": "Water", "assigned_to": admin_b.key});
    let res = app.rest_as(&grower).post(&base, &bad).await;
    assert_error(res, 422, "VALIDATION_ERROR").await;
    assert_eq!(count(&app, &a, "tasks").await, 0);

    let good = json!({"name": "Water", "assigned_to": viewer.key, "due_on": day(1)});
    let res = app.rest_as(&grower).post(&base, &good).await;
    assert_eq!(res.status().as_u16(), 201);
    let task: Value = res.json().await.expect("json");
    assert_eq!(task["assigned_to"], viewer.key.as_str());
    let k = key(&task);
    // Viewer reads; viewer cannot move, patch or delete.
    for path in [base.clone(), format!("{base}/{k}")] {
        let res = app.rest_as(&viewer).get(&path).await;
        assert_eq!(res.status().as_u16(), 200, "{path}");
    }
    let res = app
        .rest_as(&viewer)
        .post(&format!("{base}/{k}/status"), &json!({"action": "start"}))
        .await;
    assert_error(res, 403, "FORBIDDEN").await;
    let res = app
        .rest_as(&viewer)
        .patch(&format!("{base}/{k}"), &json!({"name": "x"}))
        .await;
    assert_error(res, 403, "FORBIDDEN").await;
    let res = app.rest_as(&viewer).delete(&format!("{base}/{k}")).await;
    assert_error(res, 403, "FORBIDDEN").await;
    // Reassigning to a non-member through a patch is refused too.
    let res = app
        .rest_as(&grower)
        .patch(
            &format!("{base}/{k}"),
            &json!({"assigned_to": stranger.key}),
        )
        .await;
    assert_error(res, 422, "VALIDATION_ERROR").await;

    // Garden B sees nothing of A: its list is empty, A's task key is 404 on every route.
    let base_b = tasks_path(&b);
    let res = app.rest_as(&admin_b).get(&base_b).await;
    let page: Value = res.json().await.expect("json");
    assert_eq!(page["total"], 0);
    for (m, path, body) in [
        (Method::GET, format!("{base_b}/{k}"), None),
        (
            Method::PATCH,
            format!("{base_b}/{k}"),
            Some(json!({"name": "y"})),
        ),
        (
            Method::POST,
            format!("{base_b}/{k}/status"),
            Some(json!({"action": "start"})),
        ),
        (Method::DELETE, format!("{base_b}/{k}"), None),
    ] {
        let res = app.rest_as(&admin_b).send(m, &path, body.as_ref()).await;
        assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    }
    let res = app.rest_as(&grower).get(&format!("{base}/{k}")).await;
    let still: Value = res.json().await.expect("json");
    assert_eq!(
        (still["status"].as_str(), still["name"].as_str()),
        (Some("pending"), Some("Water"))
    );
}

#[tokio::test]
async fn tasks_list_tool() {
    let app = crate::mcp_tools::app().await;
    let a = app.tenant("taskmcpa").await;
    let b = app.tenant("taskmcpb").await;
    let vk = crate::mcp_tools::scoped_key(&app, &a, Role::Viewer).await;
    let bk = crate::mcp_tools::scoped_key(&app, &b, Role::Admin).await;
    let base = tasks_path(&a);
    let gk = crate::mcp_tools::scoped_key(&app, &a, Role::Grower).await;
    for name in ["Prune", "Repot"] {
        let res = app
            .rest_auth(Some(&crate::mcp_tools::bearer(&gk)))
            .post(&base, &json!({"name": name, "due_on": "2026-06-01"}))
            .await;
        assert_eq!(res.status().as_u16(), 201);
    }
    let (s, out) = crate::mcp_tools::call(&app, &vk, "list_tasks", json!({})).await;
    assert_eq!(s, 200, "{out}");
    assert_eq!(out["data"]["total"], 2);
    assert!(out["data"]["items"][0]["task_key"].is_string());
    let (s, out) =
        crate::mcp_tools::call(&app, &vk, "list_tasks", json!({"status": "completed"})).await;
    assert_eq!((s, out["data"]["total"].as_i64()), (200, Some(0)));
    let (s, out) = crate::mcp_tools::call(&app, &vk, "list_tasks", json!({"status": "done"})).await;
    assert_eq!(
        (s, out["error_code"].as_str()),
        (422, Some("validation.error"))
    );
    // Another garden's key addressing A: not found.
    let (s, out) =
        crate::mcp_tools::call(&app, &bk, "list_tasks", json!({"tenant": a.slug.as_str()})).await;
    assert_eq!((s, out["error_code"].as_str()), (404, Some("not_found")));
    let (s, out) = crate::mcp_tools::call(&app, &bk, "list_tasks", json!({})).await;
    assert_eq!((s, out["data"]["total"].as_i64()), (200, Some(0)));
}

/// Today's open tasks (`open_tasks_due_by`, one read statement): due on or before the day,
/// in progress before pending, at most `per_status` of each; undated, later, done and other
/// gardens' tasks are not among them; a dormant phase-entry task whose plant entered its phase
/// is woken as `list_tasks` wakes it.
#[tokio::test]
async fn todays_open_tasks_are_due_in_progress_first_and_wake_the_dormant() {
    let app = TestApp::spawn().await;
    let t = app.tenant("tasktoday").await;
    let other = app.tenant("tasktoday2").await;
    let base = tasks_path(&t);
    let today = OffsetDateTime::now_utc().date();
    let mut made = std::collections::HashMap::new();
    for (name, due) in [
        ("started yesterday", Some(day(-1))),
        ("pending last week", Some(day(-7))),
        ("pending today", Some(day(0))),
        ("pending tomorrow", Some(day(1))),
        ("undated", None),
        ("done yesterday", Some(day(-1))),
    ] {
        let mut body = json!({"name": name});
        if let Some(d) = due {
            body["due_on"] = json!(d);
        }
        let (s, task) = post(&app, &base, body).await;
        assert_eq!(s, 201, "{task}");
        made.insert(name, key(&task));
    }
    assert_eq!(
        act(&app, &base, &made["started yesterday"], "start")
            .await
            .0,
        200
    );
    assert_eq!(
        act(&app, &base, &made["done yesterday"], "complete")
            .await
            .0,
        200
    );
    let (s, _) = post(
        &app,
        &tasks_path(&other),
        json!({"name": "other garden", "due_on": day(-1)}),
    )
    .await;
    assert_eq!(s, 201);

    let names = |tasks: &[kultiva::garden::tasks::model::Task]| {
        tasks.iter().map(|t| t.name.clone()).collect::<Vec<_>>()
    };
    let open = kultiva::garden::tasks::service::open_tasks_due_by(&app.state, &t, today, 50)
        .await
        .expect("open tasks");
    assert_eq!(
        names(&open),
        ["started yesterday", "pending last week", "pending today"]
    );
    let one = kultiva::garden::tasks::service::open_tasks_due_by(&app.state, &t, today, 1)
        .await
        .expect("open tasks");
    assert_eq!(names(&one), ["started yesterday", "pending last week"]);

    // A phase-entry task waits; once its plant enters the phase, reading Today's list wakes it.
    let tomato = species(&app, TOMATO).await;
    let ph = phases(&app, &tomato).await;
    let p = plant(
        &app,
        &t,
        json!({"species_key": tomato, "name": "Wake tomato"}),
    )
    .await;
    let (s, waiting) = post(
        &app,
        &base,
        json!({"name": "Tie up", "plant_key": key(&p),
               "recurrence": {"kind": "phase_entry", "phase": ph[1]}}),
    )
    .await;
    assert_eq!(
        (s, waiting["status"].as_str()),
        (201, Some("dormant")),
        "{waiting}"
    );
    let (s, body) = post(
        &app,
        &format!("{}{}/phase-transitions", plants_path(&t), key(&p)),
        json!({"target_phase_key": ph[1]}),
    )
    .await;
    assert_eq!(s, 200, "{body}");
    kultiva::garden::tasks::service::open_tasks_due_by(&app.state, &t, today, 50)
        .await
        .expect("open tasks");
    let mut tx = TenantTx::read(&app.state, &t).await.expect("tx");
    let id = uuid::Uuid::parse_str(&key(&waiting)).expect("key");
    let status: String =
        sqlx::query_scalar(tx.sql("SELECT status FROM tenant.tasks WHERE id = $1"))
            .bind(id)
            .fetch_one(tx.conn())
            .await
            .expect("status");
    assert_eq!(status, "pending");
}
