//! The analysis queue on the tool server: the pending list (text withheld), claim under a lease
//! (default 15 minutes, at most 60; a second claimer is `conflict.already_claimed`), submit
//! with the lease token (`conflict.not_claimed`, `conflict.lease_expired`; summary required
//! when completed; confidences 0..1; the server's disclaimer), an expired lease back in the
//! queue, 8 concurrent claims with exactly one holder, another garden's key, and the agent's
//! own entries (`add_plant_diary_entry`, `list_diary_entries`); the arguments of domain 4.2:
//! entry titles, a claim's `worker_id` and `lease_seconds`, `include_stale`, a submission's
//! actions, photos, model, recipe and error, and `photo_ids` of `get_diary_entry_photos`.

use kultiva::auth::Role;
use kultiva::garden::diary::model::DISCLAIMER;
use reqwest::Method;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::diary::{app, entries, write};
use crate::garden::{count, exec};
use crate::ipm::{World, path, tool, world};
use crate::mcp_tools::scoped_key;
use crate::support::TestApp;

/// An entry the grower wrote and marked for analysis; its key.
async fn marked(app: &TestApp, w: &World, text: &str) -> String {
    let e = write(
        app,
        w,
        &w.grower,
        json!({"text": text, "plant_key": w.plants[0],
                                           "measurements": {"ph": 5.1}}),
    )
    .await;
    let key = e["key"].as_str().expect("key").to_owned();
    let (s, v) = app
        .rest_as(&w.grower)
        .call(
            Method::POST,
            &path(&w.t, &format!("diary-entries/{key}/analysis")),
            Some(&json!({"consent": true})),
        )
        .await;
    assert_eq!(s, 200, "{v}");
    key
}

async fn analysis_of(app: &TestApp, w: &World, key: &str) -> Value {
    let (s, v) = app
        .rest_as(&w.viewer)
        .call(
            Method::GET,
            &path(&w.t, &format!("diary-entries/{key}/analysis")),
            None,
        )
        .await;
    assert_eq!(s, 200, "{v}");
    v
}

async fn fails(
    app: &TestApp,
    key: &str,
    name: &str,
    args: Value,
    status: u16,
    code: &str,
) -> Value {
    let (s, v) = tool(app, key, name, args.clone()).await;
    assert_eq!(
        (s, v["error_code"].as_str()),
        (status, Some(code)),
        "{name} {args}: {v}"
    );
    v
}

async fn ok(app: &TestApp, key: &str, name: &str, args: Value) -> Value {
    let (s, v) = tool(app, key, name, args.clone()).await;
    assert_eq!(s, 200, "{name} {args}: {v}");
    v
}

/// The stored analysis columns of an entry (what a refused call must leave alone).
async fn stored(
    app: &TestApp,
    w: &World,
    key: &str,
) -> (Option<String>, Option<Vec<u8>>, Option<Value>) {
    let sql = format!(
        "SELECT analysis_state, lease_token_hash, analysis_result FROM {}.diary_entries WHERE id = $1",
        w.t.schema_name.quoted()
    );
    sqlx::query_as(sqlx::AssertSqlSafe(sql))
        .bind(Uuid::parse_str(key).expect("uuid"))
        .fetch_one(app.state.platform_pool())
        .await
        .expect("row")
}

#[tokio::test]
async fn analysis_queue_claim_and_submit() {
    let app = app().await;
    let w = world(&app, "dqueue", 1).await;
    let agent = scoped_key(&app, &w.t, Role::Grower).await;
    let viewer = scoped_key(&app, &w.t, Role::Viewer).await;
    let key = marked(&app, &w, "Brown spots, spreading since Monday.").await;
    let unmarked = write(&app, &w, &w.grower, json!({"text": "Not for the agent."})).await;
    let unmarked = unmarked["key"].as_str().expect("key").to_owned();

    // The queue: only the marked entry, no text.
    let q = ok(&app, &viewer, "list_pending_diary_analyses", json!({})).await;
    assert_eq!(q["data"]["total"], 1);
    let item = &q["data"]["items"][0];
    assert_eq!(item["entry_key"], key);
    assert_eq!(item["lease_lapsed"], false);
    assert!(item.get("text").is_none() && !q.to_string().contains("Brown spots"));
    // The entry itself, with its text and measurements, for any reader.
    let e = ok(&app, &viewer, "get_diary_entry", json!({"entry_key": key})).await;
    assert_eq!(e["data"]["text"], "Brown spots, spreading since Monday.");
    assert_eq!(e["data"]["measurements"]["ph"], 5.1);
    assert_eq!(e["data"]["environment"], json!([]));
    assert_eq!(e["data"]["environment_status"], "no_source");
    assert_eq!(e["data"]["analysis"]["analysis_state"], "requested");

    // A viewer may not claim; a dry run takes no lease; a lease over 60 minutes is refused.
    fails(
        &app,
        &viewer,
        "claim_diary_analysis",
        json!({"entry_key": key}),
        403,
        "permission.denied",
    )
    .await;
    let dry = ok(
        &app,
        &agent,
        "claim_diary_analysis",
        json!({"entry_key": key, "dry_run": true}),
    )
    .await;
    assert_eq!(dry["data"]["lease_token"], Value::Null);
    assert_eq!(dry["data"]["lease_minutes"], 15);
    fails(
        &app,
        &agent,
        "claim_diary_analysis",
        json!({"entry_key": key, "lease_minutes": 61}),
        422,
        "validation.error",
    )
    .await;
    assert_eq!(stored(&app, &w, &key).await.0.as_deref(), Some("requested"));
    // Not in the queue: never marked.
    fails(
        &app,
        &agent,
        "claim_diary_analysis",
        json!({"entry_key": unmarked}),
        409,
        "conflict.state",
    )
    .await;
    // Submit before any claim: not claimed.
    fails(
        &app,
        &agent,
        "submit_diary_analysis",
        json!({"entry_key": key, "lease_token": "x", "status": "completed", "summary": "s"}),
        409,
        "conflict.not_claimed",
    )
    .await;

    // The claim: a token shown once, 15 minutes by default.
    let c = ok(
        &app,
        &agent,
        "claim_diary_analysis",
        json!({"entry_key": key}),
    )
    .await;
    let token = c["data"]["lease_token"].as_str().expect("token").to_owned();
    assert_eq!(c["data"]["lease_minutes"], 15);
    let until = time::OffsetDateTime::parse(
        c["data"]["lease_expires_at"].as_str().expect("expiry"),
        &time::format_description::well_known::Rfc3339,
    )
    .expect("rfc3339");
    let left = until - time::OffsetDateTime::now_utc();
    assert!(
        left > time::Duration::minutes(14) && left <= time::Duration::minutes(15),
        "{left}"
    );
    let (_, hash, _) = stored(&app, &w, &key).await;
    assert_ne!(
        hash.as_deref(),
        Some(token.as_bytes()),
        "only a digest is stored"
    );
    assert!(
        !ok(&app, &viewer, "get_diary_entry", json!({"entry_key": key}))
            .await
            .to_string()
            .contains(&token)
    );
    // In progress: out of the queue, a second claimer is refused.
    let q = ok(&app, &viewer, "list_pending_diary_analyses", json!({})).await;
    assert_eq!(q["data"]["total"], 0);
    let other_agent = scoped_key(&app, &w.t, Role::Admin).await;
    fails(
        &app,
        &other_agent,
        "claim_diary_analysis",
        json!({"entry_key": key}),
        409,
        "conflict.already_claimed",
    )
    .await;
    assert_eq!(
        analysis_of(&app, &w, &key).await["analysis_state"],
        "in_progress"
    );

    // Bad submits change nothing.
    let before = stored(&app, &w, &key).await;
    for (args, code) in [
        (
            json!({"entry_key": key, "lease_token": token, "status": "completed"}),
            "validation.error",
        ),
        (
            json!({"entry_key": key, "lease_token": token, "status": "completed", "summary": "s",
                "findings": [{"finding": "mites", "confidence": 1.5}]}),
            "validation.error",
        ),
        (
            json!({"entry_key": key, "lease_token": token, "status": "completed", "summary": "s",
                "findings": [{"finding": "mites"}]}),
            "validation.error",
        ),
        (
            json!({"entry_key": key, "lease_token": token, "status": "completed", "summary": "s",
                "disclaimer": "none"}),
            "validation.error",
        ),
        (
            json!({"entry_key": key, "lease_token": token, "status": "done", "summary": "s"}),
            "validation.error",
        ),
        (
            json!({"entry_key": key, "lease_token": "wrong", "status": "completed", "summary": "s"}),
            "conflict.lease_expired",
        ),
    ] {
        let status = if code == "validation.error" { 422 } else { 409 };
        fails(&app, &agent, "submit_diary_analysis", args, status, code).await;
    }
    // A dry run checks and stores nothing (the lease still runs).
    let good = json!({"entry_key": key, "lease_token": token, "status": "completed",
                      "summary": "Likely spider mites.",
                      "findings": [{"finding": "spider mites", "confidence": 0.8, "category": "pest",
                                    "detail": "fine webbing"},
                                   {"finding": "low pH", "confidence": 0.0}]});
    let mut dry = good.clone();
    dry["dry_run"] = json!(true);
    let d = ok(&app, &agent, "submit_diary_analysis", dry).await;
    assert_eq!(d["data"]["result"]["disclaimer"], DISCLAIMER);
    assert_eq!(
        stored(&app, &w, &key).await,
        before,
        "bad and dry submits change nothing"
    );

    // The holder submits in time: completed, with the server's disclaimer.
    let s = ok(&app, &agent, "submit_diary_analysis", good.clone()).await;
    assert_eq!(s["data"]["analysis_state"], "completed");
    let a = analysis_of(&app, &w, &key).await;
    assert_eq!(a["analysis_state"], "completed");
    assert_eq!(a["lease_expires_at"], Value::Null);
    let r = &a["result"];
    assert_eq!(r["status"], "completed");
    assert_eq!(r["summary"], "Likely spider mites.");
    assert_eq!(r["disclaimer"], DISCLAIMER);
    assert_eq!(r["findings"][0]["confidence"], 0.8);
    assert_eq!(r["findings"][0]["category"], "pest");
    assert_eq!(r["findings"][1]["confidence"], 0.0);
    assert!(
        r["submitted_by"]
            .as_str()
            .is_some_and(|b| b.starts_with("mcp:"))
    );
    let (_, hash, _) = stored(&app, &w, &key).await;
    assert_eq!(hash, None, "the lease ended");
    // Submitting twice, claiming a completed entry: refused, nothing changed.
    let after = stored(&app, &w, &key).await;
    fails(
        &app,
        &agent,
        "submit_diary_analysis",
        good,
        409,
        "conflict.not_claimed",
    )
    .await;
    fails(
        &app,
        &agent,
        "claim_diary_analysis",
        json!({"entry_key": key}),
        409,
        "conflict.state",
    )
    .await;
    assert_eq!(stored(&app, &w, &key).await, after);
    let (_, page) = app
        .rest_as(&w.viewer)
        .call(
            Method::GET,
            &format!("{}?analysis_state=completed", entries(&w.t)),
            None,
        )
        .await;
    assert_eq!(page["total"], 1);

    // A failed analysis needs no summary; withdrawing ends a lease (the submit then finds none).
    let second = marked(&app, &w, "Second entry.").await;
    let c = ok(
        &app,
        &agent,
        "claim_diary_analysis",
        json!({"entry_key": second, "lease_minutes": 60}),
    )
    .await;
    assert_eq!(c["data"]["lease_minutes"], 60);
    let t2 = c["data"]["lease_token"].clone();
    let (st, _) = app
        .rest_as(&w.grower)
        .call(
            Method::DELETE,
            &path(&w.t, &format!("diary-entries/{second}/analysis")),
            None,
        )
        .await;
    assert_eq!(st, 204);
    fails(
        &app,
        &agent,
        "submit_diary_analysis",
        json!({"entry_key": second, "lease_token": t2, "status": "failed", "error": "gone"}),
        409,
        "conflict.not_claimed",
    )
    .await;
    let third = marked(&app, &w, "Third entry.").await;
    let c = ok(
        &app,
        &agent,
        "claim_diary_analysis",
        json!({"entry_key": third}),
    )
    .await;
    // A failure without a reason is refused (4.2: error required if failed), nothing stored.
    let token3 = c["data"]["lease_token"].clone();
    let before = stored(&app, &w, &third).await;
    let v = fails(
        &app,
        &agent,
        "submit_diary_analysis",
        json!({"entry_key": third, "lease_token": token3, "status": "failed"}),
        422,
        "validation.error",
    )
    .await;
    assert_eq!(v["details"][0]["field"], "error", "{v}");
    assert_eq!(stored(&app, &w, &third).await, before);
    let f = ok(
        &app,
        &agent,
        "submit_diary_analysis",
        json!({"entry_key": third, "lease_token": token3, "status": "failed",
               "error": "The photos are too dark."}),
    )
    .await;
    assert_eq!(f["data"]["analysis_state"], "failed");
    assert_eq!(f["data"]["result"]["summary"], Value::Null);
    assert_eq!(f["data"]["result"]["error"], "The photos are too dark.");
    assert_eq!(f["data"]["result"]["disclaimer"], DISCLAIMER);
}

#[tokio::test]
async fn an_expired_lease_goes_back_to_the_queue() {
    let app = app().await;
    let w = world(&app, "dlease", 1).await;
    let agent = scoped_key(&app, &w.t, Role::Grower).await;
    let late = scoped_key(&app, &w.t, Role::Grower).await;
    let key = marked(&app, &w, "Wilting.").await;
    let c = ok(
        &app,
        &agent,
        "claim_diary_analysis",
        json!({"entry_key": key, "lease_minutes": 1}),
    )
    .await;
    let old = c["data"]["lease_token"].as_str().expect("token").to_owned();
    // The lease runs out (moved into the past in the test database).
    let id = Uuid::parse_str(&key).expect("uuid");
    exec(
        &app,
        &w.t,
        "UPDATE {schema}.diary_entries SET lease_expires_at = now() - interval '1 second' WHERE id = $1",
        id,
    )
    .await;
    // Back in the queue, and read as requested.
    let q = ok(&app, &agent, "list_pending_diary_analyses", json!({})).await;
    assert_eq!(q["data"]["total"], 1);
    assert_eq!(q["data"]["items"][0]["lease_lapsed"], true);
    assert_eq!(
        analysis_of(&app, &w, &key).await["analysis_state"],
        "requested"
    );
    let (_, page) = app
        .rest_as(&w.viewer)
        .call(
            Method::GET,
            &format!("{}?analysis_state=requested", entries(&w.t)),
            None,
        )
        .await;
    assert_eq!(page["total"], 1);
    // The old holder's submit: lease expired, nothing stored.
    let before = stored(&app, &w, &key).await;
    let submit = |token: &str| json!({"entry_key": key, "lease_token": token, "status": "completed", "summary": "s"});
    fails(
        &app,
        &agent,
        "submit_diary_analysis",
        submit(&old),
        409,
        "conflict.lease_expired",
    )
    .await;
    assert_eq!(stored(&app, &w, &key).await, before);
    // Another agent takes it over; the old token stays refused, the new one is accepted.
    let c = ok(
        &app,
        &late,
        "claim_diary_analysis",
        json!({"entry_key": key}),
    )
    .await;
    assert_eq!(c["data"]["took_over_lapsed_lease"], true);
    let new = c["data"]["lease_token"].as_str().expect("token").to_owned();
    assert_ne!(new, old);
    fails(
        &app,
        &agent,
        "submit_diary_analysis",
        submit(&old),
        409,
        "conflict.lease_expired",
    )
    .await;
    fails(
        &app,
        &agent,
        "claim_diary_analysis",
        json!({"entry_key": key}),
        409,
        "conflict.already_claimed",
    )
    .await;
    let s = ok(&app, &late, "submit_diary_analysis", submit(&new)).await;
    assert_eq!(s["data"]["analysis_state"], "completed");
}

#[tokio::test]
async fn concurrent_claims_have_exactly_one_holder() {
    let app = app().await;
    let w = world(&app, "dconc", 1).await;
    let key = marked(&app, &w, "Race me.").await;
    let mut agents = Vec::new();
    for _ in 0..8 {
        agents.push(scoped_key(&app, &w.t, Role::Grower).await);
    }
    let calls = agents.iter().map(|k| {
        let app = &app;
        let key = key.clone();
        async move { tool(app, k, "claim_diary_analysis", json!({"entry_key": key})).await }
    });
    let results = futures_util::future::join_all(calls).await;
    let won: Vec<&Value> = results
        .iter()
        .filter(|(s, _)| *s == 200)
        .map(|(_, v)| v)
        .collect();
    let lost: Vec<&Value> = results
        .iter()
        .filter(|(s, _)| *s != 200)
        .map(|(_, v)| v)
        .collect();
    assert_eq!(won.len(), 1, "{results:?}");
    assert_eq!(lost.len(), 7);
    for v in lost {
        assert_eq!(v["error_code"], "conflict.already_claimed", "{v}");
    }
    // The stored lease is the winner's.
    let token = won[0]["data"]["lease_token"].as_str().expect("token");
    let (state, hash, _) = stored(&app, &w, &key).await;
    assert_eq!(state.as_deref(), Some("in_progress"));
    let digest = kultiva::auth::secrets::SecretHash::of(token);
    assert_eq!(hash.as_deref(), Some(&digest.as_bytes()[..]));
}

#[tokio::test]
async fn the_queue_is_per_garden() {
    let app = app().await;
    let a = world(&app, "dqisoa", 1).await;
    let b = world(&app, "dqisob", 1).await;
    let key = marked(&app, &a, "A only.").await;
    let in_a = scoped_key(&app, &a.t, Role::Grower).await;
    let token = ok(
        &app,
        &in_a,
        "claim_diary_analysis",
        json!({"entry_key": key}),
    )
    .await["data"]["lease_token"]
        .as_str()
        .expect("token")
        .to_owned();
    let before = stored(&app, &a, &key).await;
    let outsider = scoped_key(&app, &b.t, Role::Admin).await;
    let submit =
        json!({"entry_key": key, "lease_token": token, "status": "completed", "summary": "x"});
    // B's key with A's entry key (in B) and addressing A: not found, nothing of A changes.
    for args in [
        submit.clone(),
        json!({"entry_key": key, "lease_token": token, "status": "completed", "summary": "x",
               "tenant": a.t.slug.as_str()}),
    ] {
        fails(
            &app,
            &outsider,
            "submit_diary_analysis",
            args,
            404,
            "not_found",
        )
        .await;
    }
    for name in ["claim_diary_analysis", "get_diary_entry"] {
        let (s, v) = tool(&app, &outsider, name, json!({"entry_key": key})).await;
        assert_eq!(
            (s, v["error_code"].as_str()),
            (404, Some("not_found")),
            "{name}: {v}"
        );
        assert!(!v.to_string().contains("A only."));
    }
    let q = ok(&app, &outsider, "list_pending_diary_analyses", json!({})).await;
    assert_eq!(q["data"]["total"], 0);
    assert_eq!(stored(&app, &a, &key).await, before);
    // A's own agent still holds it.
    let s = ok(&app, &in_a, "submit_diary_analysis", submit).await;
    assert_eq!(s["data"]["analysis_state"], "completed");
}

#[tokio::test]
async fn agents_write_and_list_diary_entries() {
    let app = app().await;
    let w = world(&app, "dagent", 2).await;
    let agent = scoped_key(&app, &w.t, Role::Grower).await;
    let viewer = scoped_key(&app, &w.t, Role::Viewer).await;
    let p = w.plants[0].to_string();
    // A viewer writes nothing; a dry run stores nothing; bad input is refused.
    // Tags as a JSON array (repeats dropped, lower case), text in paragraphs.
    let args = json!({"plant_key": p, "text": "Pinched the side shoots.\n\nTied up the stem.",
                      "entry_type": "care", "tags": ["pruning", "Week 3", "pruning"]});
    fails(
        &app,
        &viewer,
        "add_plant_diary_entry",
        args.clone(),
        403,
        "permission.denied",
    )
    .await;
    let mut dry = args.clone();
    dry["dry_run"] = json!(true);
    let d = ok(&app, &agent, "add_plant_diary_entry", dry).await;
    assert_eq!(d["dry_run"], true);
    assert!(d["data"].get("entry_key").is_none());
    for (bad, status, code) in [
        (json!({"plant_key": p}), 422, "validation.error"),
        (
            json!({"plant_key": p, "text": "x", "entry_type": "diary"}),
            422,
            "validation.error",
        ),
        (
            json!({"plant_key": p, "text": "x", "entry_date": "2999-01-01"}),
            422,
            "validation.error",
        ),
        (
            json!({"plant_key": p, "text": "x", "photos": []}),
            422,
            "validation.error",
        ),
        (
            json!({"plant_key": Uuid::now_v7(), "text": "x"}),
            404,
            "not_found",
        ),
        (json!({"plant_key": "nope", "text": "x"}), 404, "not_found"),
        (
            json!({"plant_key": p, "text": "x", "tags": "pruning, week 3"}),
            422,
            "validation.error",
        ),
        (
            json!({"plant_key": p, "text": "x\u{7}"}),
            422,
            "validation.error",
        ),
    ] {
        fails(&app, &agent, "add_plant_diary_entry", bad, status, code).await;
    }
    assert_eq!(count(&app, &w.t, "diary_entries").await, 0);
    // Written, with idempotency: a replay returns the first result and writes no second row.
    let mut keyed = args.clone();
    keyed["idempotency_key"] = json!("diary-1");
    let first = ok(&app, &agent, "add_plant_diary_entry", keyed.clone()).await;
    assert_eq!(first["data"]["tags"], json!(["pruning", "week 3"]));
    assert_eq!(
        first["data"]["text"],
        "Pinched the side shoots.\n\nTied up the stem."
    );
    assert_eq!(first["data"]["entry_type"], "care");
    assert_eq!(first["data"]["written_via"], "mcp");
    assert_eq!(first["data"]["analysis_state"], Value::Null);
    let again = ok(&app, &agent, "add_plant_diary_entry", keyed).await;
    assert_eq!(again["idempotent_replay"], true);
    assert_eq!(again["data"]["entry_key"], first["data"]["entry_key"]);
    assert_eq!(count(&app, &w.t, "diary_entries").await, 1);
    // Never queued.
    let q = ok(&app, &agent, "list_pending_diary_analyses", json!({})).await;
    assert_eq!(q["data"]["total"], 0);

    // The list: newest first, text withheld, the filters of the REST route.
    write(
        &app,
        &w,
        &w.grower,
        json!({"text": "Old observation.", "plant_key": w.plants[1],
                                      "entry_type": "observation", "entry_date": "2026-01-10",
                                      "tags": ["pruning"]}),
    )
    .await;
    let marked_key = marked(&app, &w, "Please look.").await;
    let all = ok(&app, &viewer, "list_diary_entries", json!({})).await;
    assert_eq!(all["data"]["total"], 3);
    assert!(!all.to_string().contains("Pinched") && !all.to_string().contains("Please look"));
    let list = |args: Value| {
        let app = &app;
        let viewer = &viewer;
        async move {
            let v = ok(app, viewer, "list_diary_entries", args).await;
            v["data"]["items"]
                .as_array()
                .expect("items")
                .iter()
                .map(|i| i["entry_key"].as_str().expect("key").to_owned())
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(
        list(json!({"analysis_state": "requested"})).await,
        std::slice::from_ref(&marked_key)
    );
    assert_eq!(list(json!({"entry_type": "observation"})).await.len(), 1);
    assert_eq!(list(json!({"tag": "PRUNING"})).await.len(), 2);
    assert_eq!(list(json!({"plant_key": w.plants[1]})).await.len(), 1);
    assert_eq!(
        list(json!({"date_from": "2026-01-01", "date_to": "2026-01-31"}))
            .await
            .len(),
        1
    );
    let species = first["data"]["species_key"].clone();
    assert_eq!(list(json!({"species_key": species})).await.len(), 3);
    assert_eq!(list(json!({"limit": 1, "offset": 1})).await.len(), 1);
    fails(
        &app,
        &viewer,
        "list_diary_entries",
        json!({"query": "Pinched"}),
        422,
        "validation.error",
    )
    .await;
    fails(
        &app,
        &viewer,
        "list_diary_entries",
        json!({"date_from": "2026-02-01", "date_to": "2026-01-01"}),
        422,
        "validation.error",
    )
    .await;
    fails(
        &app,
        &viewer,
        "list_diary_entries",
        json!({"plant_key": Uuid::now_v7()}),
        404,
        "not_found",
    )
    .await;
}

/// The worker label stored with an entry's lease (what a reader must no longer see once the
/// lease ends).
async fn stored_worker(app: &TestApp, w: &World, key: &str) -> Option<String> {
    let sql = format!(
        "SELECT lease_worker_id FROM {}.diary_entries WHERE id = $1",
        w.t.schema_name.quoted()
    );
    sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
        .bind(Uuid::parse_str(key).expect("uuid"))
        .fetch_one(app.state.platform_pool())
        .await
        .expect("row")
}

#[tokio::test]
async fn titles_written_by_the_tool_show_everywhere() {
    let app = app().await;
    let w = world(&app, "dtitle", 1).await;
    let agent = scoped_key(&app, &w.t, Role::Grower).await;
    let viewer = scoped_key(&app, &w.t, Role::Viewer).await;
    let p = w.plants[0].to_string();
    // The schema states the bounds the tool enforces.
    let listing = kultiva::mcp::tools::ALL
        .iter()
        .find(|t| t.name == "add_plant_diary_entry")
        .expect("tool")
        .listing(true);
    let title = &listing["inputSchema"]["properties"]["title"];
    assert_eq!(
        (title["maxLength"].as_u64(), title["pattern"].is_string()),
        (Some(200), true)
    );
    // Two lines, too long, blank, not a string: refused naming the argument with what it
    // expects and an example; nothing stored.
    for bad in [
        json!("Week 3\nmore"),
        json!("x".repeat(201)),
        json!("  "),
        json!(7),
    ] {
        let v = fails(
            &app,
            &agent,
            "add_plant_diary_entry",
            json!({"plant_key": p, "text": "x", "title": bad}),
            422,
            "validation.error",
        )
        .await;
        let d = &v["details"][0];
        assert_eq!(d["field"], "title", "{v}");
        assert!(d["expected"].is_string() && !d["example"].is_null(), "{v}");
    }
    let d = ok(
        &app,
        &agent,
        "add_plant_diary_entry",
        json!({"plant_key": p, "text": "Tied up.", "title": "Week 3", "dry_run": true}),
    )
    .await;
    assert_eq!(d["data"]["title"], "Week 3");
    assert_eq!(count(&app, &w.t, "diary_entries").await, 0);

    // Written (trimmed): the REST entry and list, and both read tools show it.
    let e = ok(
        &app,
        &agent,
        "add_plant_diary_entry",
        json!({"plant_key": p, "text": "Tied up the stem.", "title": "  Week 3: tied up "}),
    )
    .await;
    assert_eq!(e["data"]["title"], "Week 3: tied up");
    let key = e["data"]["entry_key"].as_str().expect("key").to_owned();
    let (s, rest) = app
        .rest_as(&w.viewer)
        .call(Method::GET, &crate::diary::entry_path(&w.t, &key), None)
        .await;
    assert_eq!((s, rest["title"].as_str()), (200, Some("Week 3: tied up")));
    let (_, page) = app
        .rest_as(&w.viewer)
        .call(Method::GET, &entries(&w.t), None)
        .await;
    assert_eq!(page["items"][0]["title"], "Week 3: tied up");
    let l = ok(&app, &viewer, "list_diary_entries", json!({})).await;
    assert_eq!(l["data"]["items"][0]["title"], "Week 3: tied up");
    assert!(!l.to_string().contains("Tied up the stem"), "text withheld");
    let g = ok(&app, &viewer, "get_diary_entry", json!({"entry_key": key})).await;
    assert_eq!(g["data"]["title"], "Week 3: tied up");
    // Without one: null everywhere.
    let n = ok(
        &app,
        &agent,
        "add_plant_diary_entry",
        json!({"plant_key": p, "text": "No title."}),
    )
    .await;
    assert_eq!(n["data"]["title"], Value::Null);
    let untitled = n["data"]["entry_key"].as_str().expect("key");
    let (_, rest) = app
        .rest_as(&w.viewer)
        .call(Method::GET, &crate::diary::entry_path(&w.t, untitled), None)
        .await;
    assert_eq!(rest["title"], Value::Null);
    assert_eq!(count(&app, &w.t, "diary_entries").await, 2);
}

#[tokio::test]
async fn claims_name_their_worker_and_ask_in_seconds() {
    let app = app().await;
    let w = world(&app, "dworker", 1).await;
    let agent = scoped_key(&app, &w.t, Role::Grower).await;
    let other = scoped_key(&app, &w.t, Role::Grower).await;
    let key = marked(&app, &w, "Curled leaves.").await;

    // The schema says "not both" without a root combinator.
    let listing = kultiva::mcp::tools::ALL
        .iter()
        .find(|t| t.name == "claim_diary_analysis")
        .expect("tool")
        .listing(true);
    let schema = &listing["inputSchema"];
    assert_eq!(
        schema["not"],
        json!({"required": ["lease_seconds", "lease_minutes"]}),
        "{schema}"
    );
    assert_eq!(schema["properties"]["lease_seconds"]["maximum"], 3600);
    assert_eq!(schema["properties"]["lease_seconds"]["default"], 900);
    assert_eq!(schema["properties"]["worker_id"]["maxLength"], 200);
    // Both lengths at once, out of range, a worker label of two lines: refused, no lease.
    for (args, field) in [
        (
            json!({"entry_key": key, "lease_seconds": 120, "lease_minutes": 2}),
            "lease_minutes",
        ),
        (
            json!({"entry_key": key, "lease_seconds": 3601}),
            "lease_seconds",
        ),
        (
            json!({"entry_key": key, "lease_seconds": 0}),
            "lease_seconds",
        ),
        (json!({"entry_key": key, "worker_id": "a\nb"}), "worker_id"),
        (
            json!({"entry_key": key, "worker_id": "w".repeat(201)}),
            "worker_id",
        ),
    ] {
        let v = fails(
            &app,
            &agent,
            "claim_diary_analysis",
            args.clone(),
            422,
            "validation.error",
        )
        .await;
        assert_eq!(v["details"][0]["field"], field, "{args}: {v}");
        assert!(v["details"][0]["expected"].is_string(), "{v}");
    }
    assert_eq!(stored(&app, &w, &key).await.0.as_deref(), Some("requested"));
    assert_eq!(stored_worker(&app, &w, &key).await, None);

    // 90 seconds for worker "vision-7": the answer, the entry and the REST analysis show it.
    let c = ok(
        &app,
        &agent,
        "claim_diary_analysis",
        json!({"entry_key": key, "lease_seconds": 90, "worker_id": " vision-7 "}),
    )
    .await;
    assert_eq!(c["data"]["lease_seconds"], 90);
    assert_eq!(c["data"]["lease_minutes"], 1.5);
    assert_eq!(c["data"]["worker_id"], "vision-7");
    let until = time::OffsetDateTime::parse(
        c["data"]["lease_expires_at"].as_str().expect("expiry"),
        &time::format_description::well_known::Rfc3339,
    )
    .expect("rfc3339");
    let left = until - time::OffsetDateTime::now_utc();
    assert!(
        left > time::Duration::seconds(60) && left <= time::Duration::seconds(90),
        "{left}"
    );
    let token = c["data"]["lease_token"].as_str().expect("token").to_owned();
    let g = ok(&app, &other, "get_diary_entry", json!({"entry_key": key})).await;
    assert_eq!(g["data"]["analysis"]["worker_id"], "vision-7");
    assert_eq!(analysis_of(&app, &w, &key).await["worker_id"], "vision-7");
    // Another agent is told who holds it; nothing of the lease changes.
    let v = fails(
        &app,
        &other,
        "claim_diary_analysis",
        json!({"entry_key": key, "worker_id": "intruder"}),
        409,
        "conflict.already_claimed",
    )
    .await;
    // (The REST face of the tools carries a tool error's object details as `data`.)
    assert_eq!(v["data"]["worker_id"], "vision-7", "{v}");
    assert!(
        v["data"]["lease_expires_at"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z')),
        "{v}"
    );
    assert_eq!(
        stored_worker(&app, &w, &key).await.as_deref(),
        Some("vision-7")
    );
    // The submit ends the lease and the label with it.
    ok(
        &app,
        &agent,
        "submit_diary_analysis",
        json!({"entry_key": key, "lease_token": token, "status": "completed", "summary": "Aphids."}),
    )
    .await;
    let a = analysis_of(&app, &w, &key).await;
    assert_eq!(
        (&a["worker_id"], &a["lease_expires_at"]),
        (&Value::Null, &Value::Null)
    );
    assert_eq!(stored_worker(&app, &w, &key).await, None);

    // lease_minutes still works; a lapsed lease no longer shows its worker, and a claim
    // taking it over without a label shows none (not the old one).
    let second = marked(&app, &w, "Drooping.").await;
    let c = ok(
        &app,
        &agent,
        "claim_diary_analysis",
        json!({"entry_key": second, "lease_minutes": 2, "worker_id": "slow-worker"}),
    )
    .await;
    assert_eq!(
        (
            c["data"]["lease_seconds"].as_i64(),
            c["data"]["lease_minutes"].as_i64()
        ),
        (Some(120), Some(2))
    );
    exec(
        &app,
        &w.t,
        "UPDATE {schema}.diary_entries SET lease_expires_at = now() - interval '1 second' WHERE id = $1",
        Uuid::parse_str(&second).expect("uuid"),
    )
    .await;
    let g = ok(
        &app,
        &other,
        "get_diary_entry",
        json!({"entry_key": second}),
    )
    .await;
    assert_eq!(g["data"]["analysis"]["analysis_state"], "requested");
    assert_eq!(g["data"]["analysis"]["worker_id"], Value::Null);
    assert_eq!(
        analysis_of(&app, &w, &second).await["worker_id"],
        Value::Null
    );
    let c = ok(
        &app,
        &other,
        "claim_diary_analysis",
        json!({"entry_key": second}),
    )
    .await;
    assert_eq!(c["data"]["took_over_lapsed_lease"], true);
    assert_eq!(c["data"]["worker_id"], Value::Null);
    assert_eq!(c["data"]["lease_seconds"], 900);
    assert_eq!(
        analysis_of(&app, &w, &second).await["worker_id"],
        Value::Null
    );
    assert_eq!(stored_worker(&app, &w, &second).await, None);
    // Withdrawing ends a lease and its label.
    let third = marked(&app, &w, "Spots.").await;
    ok(
        &app,
        &agent,
        "claim_diary_analysis",
        json!({"entry_key": third, "worker_id": "w-3"}),
    )
    .await;
    let (st, _) = app
        .rest_as(&w.grower)
        .call(
            Method::DELETE,
            &path(&w.t, &format!("diary-entries/{third}/analysis")),
            None,
        )
        .await;
    assert_eq!(st, 204);
    assert_eq!(stored_worker(&app, &w, &third).await, None);
}

#[tokio::test]
async fn the_queue_can_leave_out_lapsed_leases() {
    let app = app().await;
    let w = world(&app, "dstale", 1).await;
    let agent = scoped_key(&app, &w.t, Role::Grower).await;
    let fresh = marked(&app, &w, "Never claimed.").await;
    let lapsed = marked(&app, &w, "Claimed, then forgotten.").await;
    let held = marked(&app, &w, "Held.").await;
    for key in [&lapsed, &held] {
        ok(
            &app,
            &agent,
            "claim_diary_analysis",
            json!({"entry_key": key}),
        )
        .await;
    }
    exec(
        &app,
        &w.t,
        "UPDATE {schema}.diary_entries SET lease_expires_at = now() - interval '1 second' WHERE id = $1",
        Uuid::parse_str(&lapsed).expect("uuid"),
    )
    .await;
    let keys = |v: &Value| -> Vec<String> {
        v["data"]["items"]
            .as_array()
            .expect("items")
            .iter()
            .map(|i| i["entry_key"].as_str().expect("key").to_owned())
            .collect()
    };
    // Default (true): the never-claimed and the lapsed one, never the held one.
    for args in [json!({}), json!({"include_stale": true})] {
        let q = ok(&app, &agent, "list_pending_diary_analyses", args).await;
        assert_eq!(keys(&q), [fresh.clone(), lapsed.clone()], "{q}");
        assert_eq!(q["data"]["total"], 2);
    }
    // false: only entries never claimed; the lapsed one stays claimable all the same.
    let q = ok(
        &app,
        &agent,
        "list_pending_diary_analyses",
        json!({"include_stale": false}),
    )
    .await;
    assert_eq!(keys(&q), std::slice::from_ref(&fresh), "{q}");
    assert_eq!(q["data"]["total"], 1);
    assert_eq!(q["data"]["items"][0]["lease_lapsed"], false);
    assert_eq!(q["data"]["items"][0]["title"], Value::Null);
    fails(
        &app,
        &agent,
        "list_pending_diary_analyses",
        json!({"include_stale": "no"}),
        422,
        "validation.error",
    )
    .await;
    let c = ok(
        &app,
        &agent,
        "claim_diary_analysis",
        json!({"entry_key": lapsed}),
    )
    .await;
    assert_eq!(c["data"]["took_over_lapsed_lease"], true);
}

/// A garden with photo storage: an entry the grower wrote and marked with two rendered
/// photos, and another entry of the same garden with one (a photo that is not the first's).
async fn photographed(app: &TestApp, prefix: &str) -> (World, String, Vec<String>, String) {
    let w = world(app, prefix, 1).await;
    let key = marked(app, &w, "Look at the leaves.").await;
    let mut mine = Vec::new();
    for _ in 0..2 {
        mine.push(
            crate::photos::rendered_photo(app, &w.t, &key)
                .await
                .to_string(),
        );
    }
    let other = crate::photos::diary_entry(app, &w.t).await.to_string();
    let foreign = crate::photos::rendered_photo(app, &w.t, &other)
        .await
        .to_string();
    (w, key, mine, foreign)
}

#[tokio::test]
async fn submissions_carry_actions_photos_model_recipe_and_error() {
    let dir = crate::photos::storage_dir();
    let app = crate::photos::app_with(&dir, &[]).await;
    let (w, key, photos, foreign) = photographed(&app, "dsubmit").await;
    let agent = scoped_key(&app, &w.t, Role::Grower).await;
    let c = ok(
        &app,
        &agent,
        "claim_diary_analysis",
        json!({"entry_key": key}),
    )
    .await;
    let token = c["data"]["lease_token"].as_str().expect("token").to_owned();
    let base = json!({"entry_key": key, "lease_token": token, "status": "completed",
                      "summary": "Aphids on the undersides."});
    let with = |extra: Value| {
        let mut args = base.clone();
        for (k, v) in extra.as_object().expect("object") {
            args[k] = v.clone();
        }
        args
    };

    // Refused, each naming its argument; nothing stored, the lease still runs.
    let before = stored(&app, &w, &key).await;
    let stranger = Uuid::now_v7().to_string();
    let v = fails(
        &app,
        &agent,
        "submit_diary_analysis",
        with(json!({"analyzed_photo_ids": [photos[0], foreign, stranger]})),
        422,
        "validation.error",
    )
    .await;
    let named: Vec<String> = v["details"]
        .as_array()
        .expect("details")
        .iter()
        .map(|d| {
            assert_eq!(d["field"], "analyzed_photo_ids", "{v}");
            d["reason"].as_str().expect("reason").to_owned()
        })
        .collect();
    assert_eq!(named.len(), 2, "{v}");
    assert!(
        named[0].contains(&foreign) && named[1].contains(&stranger),
        "{v}"
    );
    assert!(
        !v.to_string().contains(&photos[0]),
        "a photo of the entry is not named: {v}"
    );
    let six: Vec<String> = (0..6).map(|_| Uuid::now_v7().to_string()).collect();
    let eleven: Vec<String> = (0..11).map(|i| format!("Spray, round {i}")).collect();
    for (extra, field) in [
        (json!({"analyzed_photo_ids": six}), "analyzed_photo_ids"),
        (
            json!({"analyzed_photo_ids": ["photo-1"]}),
            "analyzed_photo_ids",
        ),
        (
            json!({"analyzed_photo_ids": photos[0]}),
            "analyzed_photo_ids",
        ),
        (
            json!({"recommended_actions": eleven}),
            "recommended_actions",
        ),
        (
            json!({"recommended_actions": ["x".repeat(501)]}),
            "recommended_actions",
        ),
        (json!({"model": "m".repeat(201)}), "model"),
        (json!({"recipe_version": "v".repeat(51)}), "recipe_version"),
        (json!({"error": "e".repeat(2001)}), "error"),
        (json!({"error": "Not failed at all."}), "error"),
    ] {
        let v = fails(
            &app,
            &agent,
            "submit_diary_analysis",
            with(extra.clone()),
            422,
            "validation.error",
        )
        .await;
        assert_eq!(v["details"][0]["field"], field, "{extra}: {v}");
    }
    // failed without a reason (neither error nor summary).
    let v = fails(
        &app,
        &agent,
        "submit_diary_analysis",
        json!({"entry_key": key, "lease_token": token, "status": "failed",
               "recommended_actions": ["Retake the photos."]}),
        422,
        "validation.error",
    )
    .await;
    assert_eq!(v["details"][0]["field"], "error", "{v}");
    assert_eq!(
        stored(&app, &w, &key).await,
        before,
        "refused submits store nothing"
    );

    // Accepted: every field shown by the REST analysis and get_diary_entry.
    let s = ok(
        &app,
        &agent,
        "submit_diary_analysis",
        with(json!({
            "recommended_actions": ["Rinse the undersides.", "Check again in 3 days."],
            "analyzed_photo_ids": [photos[1], photos[0].to_uppercase(), photos[1]],
            "model": "vision-large-2", "recipe_version": "2026.05-a",
        })),
    )
    .await;
    let want = json!({
        "recommended_actions": ["Rinse the undersides.", "Check again in 3 days."],
        "analyzed_photo_ids": [photos[1], photos[0]],
        "model": "vision-large-2", "recipe_version": "2026.05-a", "error": null,
    });
    let rest = analysis_of(&app, &w, &key).await;
    let viewer = scoped_key(&app, &w.t, Role::Viewer).await;
    let tool = ok(&app, &viewer, "get_diary_entry", json!({"entry_key": key})).await;
    for result in [
        &s["data"]["result"],
        &rest["result"],
        &tool["data"]["analysis"]["result"],
    ] {
        for (k, v) in want.as_object().expect("object") {
            assert_eq!(&result[k], v, "{k}: {result}");
        }
        assert_eq!(result["disclaimer"], DISCLAIMER);
    }

    // failed: `error` is the reason; a summary alone is still accepted (older agents).
    for (extra, summary, error) in [
        (
            json!({"error": "The photos are blurred."}),
            Value::Null,
            json!("The photos are blurred."),
        ),
        (
            json!({"summary": "Could not tell."}),
            json!("Could not tell."),
            Value::Null,
        ),
    ] {
        let entry = marked(&app, &w, "Another look.").await;
        let c = ok(
            &app,
            &agent,
            "claim_diary_analysis",
            json!({"entry_key": entry}),
        )
        .await;
        let mut args = json!({"entry_key": entry, "lease_token": c["data"]["lease_token"],
                              "status": "failed", "model": "vision-large-2"});
        for (k, v) in extra.as_object().expect("object") {
            args[k] = v.clone();
        }
        ok(&app, &agent, "submit_diary_analysis", args).await;
        let r = &analysis_of(&app, &w, &entry).await["result"];
        assert_eq!(
            (&r["status"], &r["summary"], &r["error"]),
            (&json!("failed"), &summary, &error),
            "{r}"
        );
        assert_eq!(r["model"], "vision-large-2");
        assert_eq!(r["recommended_actions"], json!([]));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn chosen_photos_are_delivered_and_strangers_refused() {
    let dir = crate::photos::storage_dir();
    let app = crate::photos::app_with(&dir, &[]).await;
    let (w, key, photos, foreign) = photographed(&app, "dphotoids").await;
    let other_garden = world(&app, "dphotoidsb", 0).await;
    let elsewhere = crate::photos::diary_entry(&app, &other_garden.t)
        .await
        .to_string();
    let outside = crate::photos::rendered_photo(&app, &other_garden.t, &elsewhere)
        .await
        .to_string();
    let viewer = scoped_key(&app, &w.t, Role::Viewer).await;
    let delivered = |v: &Value| -> Vec<String> {
        v["data"]["photos"]
            .as_array()
            .expect("photos")
            .iter()
            .map(|p| p["photo_key"].as_str().expect("key").to_owned())
            .collect()
    };
    // One of two: only it, one image.
    let v = ok(
        &app,
        &viewer,
        "get_diary_entry_photos",
        json!({"entry_key": key, "photo_ids": [photos[1]], "size": 512}),
    )
    .await;
    assert_eq!(delivered(&v), [photos[1].clone()]);
    assert_eq!(v["images"].as_array().map(Vec::len), Some(1), "{v}");
    assert_eq!(v["data"]["total"], 1);
    // Both, asked in another order and twice: the entry's order, once each.
    let v = ok(
        &app,
        &viewer,
        "get_diary_entry_photos",
        json!({"entry_key": key, "photo_ids": [photos[1], photos[0], photos[1]], "size": 512}),
    )
    .await;
    assert_eq!(delivered(&v), photos);
    assert_eq!(v["images"].as_array().map(Vec::len), Some(2));
    // A photo of another entry, of another garden, or of nothing: validation.error naming
    // it, and no image at all (the entry's own photo in the same call is not delivered).
    for stranger in [foreign.clone(), outside.clone(), Uuid::now_v7().to_string()] {
        let (s, v) = tool(
            &app,
            &viewer,
            "get_diary_entry_photos",
            json!({"entry_key": key, "photo_ids": [photos[0], stranger]}),
        )
        .await;
        assert_eq!(
            (s, v["error_code"].as_str()),
            (422, Some("validation.error")),
            "{v}"
        );
        assert_eq!(v["details"].as_array().map(Vec::len), Some(1), "{v}");
        assert_eq!(v["details"][0]["field"], "photo_ids");
        assert!(
            v["details"][0]["reason"]
                .as_str()
                .is_some_and(|r| r.contains(&stranger)),
            "{v}"
        );
        assert!(
            v["message"].as_str().is_some_and(|m| m.contains(&stranger)),
            "{v}"
        );
        assert!(
            v.get("images").is_none_or(Value::is_null),
            "nothing delivered: {v}"
        );
    }
    // Malformed lists: the table refuses them with what it expects.
    for bad in [json!([]), json!(["not-a-uuid"]), json!(photos[0])] {
        let v = fails(
            &app,
            &viewer,
            "get_diary_entry_photos",
            json!({"entry_key": key, "photo_ids": bad}),
            422,
            "validation.error",
        )
        .await;
        assert_eq!(v["details"][0]["field"], "photo_ids", "{v}");
        assert!(v["details"][0]["expected"].is_string(), "{v}");
    }
    // Another garden's key with this entry stays not_found, whatever photo_ids says.
    let outsider = scoped_key(&app, &other_garden.t, Role::Viewer).await;
    fails(
        &app,
        &outsider,
        "get_diary_entry_photos",
        json!({"entry_key": key, "photo_ids": [photos[0]]}),
        404,
        "not_found",
    )
    .await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// Arguments that make every diary tool succeed in `tenant` (for the tool matrix): a plant, a
/// marked entry (claims are dry runs there) and a claimed one (its lease token for the
/// submit's dry run).
pub async fn tool_args(
    app: &TestApp,
    tenant: &kultiva::tenancy::TenantRecord,
) -> Vec<(&'static str, Value)> {
    use kultiva::garden::diary::model::{EntryInput, EntryType};
    use kultiva::garden::diary::service::{self, Author, Marker};
    let tomato = crate::garden::species(app, "Fixtura tomatoides").await;
    let last = crate::garden::phases(app, &tomato)
        .await
        .pop()
        .expect("phase");
    let new = kultiva::garden::plants::model::NewPlant {
        species_key: tomato,
        name: Some("Diary tomato".into()),
        cultivar_key: None,
        location_key: None,
        slot_key: None,
        substrate_batch_key: None,
        planted_on: None,
        phase_key: Some(last.clone()),
        notes: None,
        start_phase: kultiva::garden::plants::model::StartPhase::Phase(last),
    };
    let plant =
        kultiva::garden::plants::service::create_plant(&app.state, tenant, &new, "test", true)
            .await
            .expect("plant")
            .key;
    let author = Uuid::now_v7();
    let mut keys = Vec::new();
    for text in ["Matrix entry to claim.", "Matrix entry to submit."] {
        let input = EntryInput {
            title: None,
            text: text.into(),
            entry_type: EntryType::Observation,
            tags: vec!["matrix".into()],
            plant_key: Some(plant),
            run_key: None,
            entry_date: None,
            measurements: serde_json::Map::new(),
        };
        let who = Author {
            id: author,
            kind: "user",
            via: "rest",
        };
        let e = service::create_entry(&app.state, tenant, &input, &who, true)
            .await
            .expect("entry");
        let key = e.key.to_string();
        let marker = Marker {
            id: author,
            light: false,
            signed_in_person: true,
        };
        service::request_analysis(&app.state, tenant, &key, &marker)
            .await
            .expect("marked");
        keys.push(key);
    }
    let lease = service::claim(
        &app.state,
        tenant,
        &keys[1],
        Uuid::now_v7(),
        3600,
        None,
        true,
    )
    .await
    .map_err(|e| format!("{e:?}"))
    .expect("claimed");
    vec![
        ("list_diary_entries", json!({"tag": "matrix"})),
        ("get_diary_entry", json!({"entry_key": keys[0]})),
        (
            "add_plant_diary_entry",
            json!({"plant_key": plant, "text": "Matrix note."}),
        ),
        ("list_pending_diary_analyses", json!({})),
        ("claim_diary_analysis", json!({"entry_key": keys[0]})),
        (
            "submit_diary_analysis",
            json!({"entry_key": keys[1], "lease_token": lease.lease_token, "status": "completed",
                   "summary": "Matrix summary.", "findings": [{"finding": "none", "confidence": 0.5}]}),
        ),
    ]
}
