//! Webhooks (issue 28): endpoints only admins manage (created by a person, never an API key),
//! targets checked against SSRF, events written in the change's own transaction and delivered
//! to a local receiver that verifies Standard Webhooks signatures and fails on purpose, with
//! the same `webhook-id` on retries, and an endpoint disabled (its admins told by mail) after
//! the last attempt. Delivery tests use a database of their own: every test service runs a
//! delivery worker, and one with other settings must not take their deliveries.

use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, KeyInit, Mac};
use kultiva::auth::Role;
use kultiva::tenancy::TenantRecord;
use reqwest::Method;
use serde_json::{Value, json};
use sha2::Sha256;

use crate::garden::{count, phases, species};
use crate::support::{
    Options, Received, Receiver, TestApp, assert_error, detail_fields, sibling_database,
};

const TOMATO: &str = "Fixtura tomatoides";
const DEADLINE: Duration = Duration::from_secs(60);

/// A receiver answering the n-th request with `statuses[n]` (the last one after).
async fn receiver(statuses: Vec<u16>) -> Receiver {
    Receiver::start(
        move |n, _| *statuses.get(n).or(statuses.last()).unwrap_or(&200),
        "received!",
    )
    .await
}

fn hook_url(receiver: &Receiver) -> String {
    format!("{}/hook", receiver.origin())
}

/// Checks a request's Standard Webhooks signature with the shown secret.
fn verify(secret: &str, r: &Received) {
    let key = STANDARD
        .decode(secret.strip_prefix("whsec_").expect("whsec_ prefix"))
        .expect("base64 secret");
    let id = r.header("webhook-id").expect("webhook-id");
    let ts = r.header("webhook-timestamp").expect("webhook-timestamp");
    let sig = r.header("webhook-signature").expect("webhook-signature");
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).expect("key");
    mac.update(format!("{id}.{ts}.").as_bytes());
    mac.update(&r.body);
    let want = format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()));
    assert_eq!(sig, want, "signature of {id}");
    let ts: i64 = ts.parse().expect("unix seconds");
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    assert!((now - ts).abs() < 300, "timestamp {ts} is now");
}

fn hooks(t: &TenantRecord) -> String {
    format!("/api/v1/t/{}/webhooks", t.slug)
}

/// A light-mode service (the system user is admin) on a database of its own, delivering to
/// loopback with a fast retry schedule.
async fn delivery_app(test: &str, schedule: &str, extra: &[(&'static str, &str)]) -> TestApp {
    let db = sibling_database(&format!("webhooks_{test}")).await;
    let mut env = vec![
        ("DATABASE_URL", db),
        ("WEBHOOK_ALLOW_PRIVATE_TARGETS", "true".to_owned()),
        ("WEBHOOK_RETRY_SCHEDULE", schedule.to_owned()),
        ("WEBHOOK_POLL_MILLIS", "100".to_owned()),
    ];
    env.extend(extra.iter().map(|(k, v)| (*k, (*v).to_owned())));
    TestApp::spawn_with(Options {
        env,
        ..Options::default()
    })
    .await
}

async fn delivery_rows(app: &TestApp, t: &TenantRecord) -> Vec<(String, i32)> {
    let sql = format!(
        "SELECT status, attempts FROM {}.webhook_deliveries ORDER BY created_at, id",
        t.schema_name.quoted()
    );
    sqlx::query_as(sqlx::AssertSqlSafe(sql))
        .fetch_all(app.state.platform_pool())
        .await
        .expect("deliveries")
}

#[tokio::test]
async fn events_are_signed_delivered_in_order_and_retried_with_the_same_id() {
    let receiver = receiver(vec![500, 200]).await;
    let app = delivery_app("deliver", "0.3,0.3,0.3", &[]).await;
    let t = app.tenant("hooks").await;
    let tomato = species(&app, TOMATO).await;
    let ph = phases(&app, &tomato).await;

    let (s, created) = app.rest().call(Method::POST, &hooks(&t), Some(
            &json!({"url": hook_url(&receiver), "events": ["plant.created", "plant.phase_changed"],
                     "description": "home assistant"}),
        ))
    .await;
    assert_eq!(s, 201, "{created}");
    let secret = created["secret"].as_str().expect("secret").to_owned();
    assert!(secret.starts_with("whsec_"), "{secret}");
    let key = created["key"].as_str().expect("key").to_owned();
    assert_eq!(created["enabled"], true);
    // The secret is shown once: not by a read.
    let (s, one) = app
        .rest()
        .call(Method::GET, &format!("{}/{key}", hooks(&t)), None)
        .await;
    assert_eq!(s, 200);
    assert!(one.get("secret").is_none(), "{one}");

    // A plant: plant.created, delivered after one failure, with the same id both times.
    let (s, plant) = app
        .rest()
        .call(
            Method::POST,
            &crate::garden::plants_path(&t),
            Some(&json!({"species_key": tomato, "name": "Hooked tomato"})),
        )
        .await;
    assert_eq!(s, 201, "{plant}");
    let plant_key = plant["key"].as_str().expect("key").to_owned();
    let got = receiver.wait_for(2).await;
    assert_eq!(got[0].answered, 500);
    assert_eq!(got[1].answered, 200);
    for r in &got {
        verify(&secret, r);
    }
    assert_eq!(got[0].header("webhook-id"), got[1].header("webhook-id"));
    assert!(
        got[0]
            .header("webhook-id")
            .is_some_and(|id| id.starts_with("msg_"))
    );
    let body = got[1].json();
    assert_eq!(body["type"], "plant.created");
    assert_eq!(body["data"]["key"], plant_key.as_str());
    assert_eq!(body["data"]["garden"], t.slug.as_str());
    assert!(body["timestamp"].is_string(), "{body}");

    // A rolled-back change (a dry run of the same service) queues nothing.
    let before = count(&app, &t, "webhook_events").await;
    let dry = kultiva::garden::plants::service::transition(
        &app.state,
        &t,
        &plant_key,
        &serde_json::from_value(json!({"target_phase_key": ph[1]})).expect("body"),
        "test",
        false,
    )
    .await;
    assert!(dry.is_ok(), "{dry:?}");
    assert_eq!(count(&app, &t, "webhook_events").await, before);

    // The real change: plant.phase_changed, after the first one (in order).
    let (s, moved) = app
        .rest()
        .call(
            Method::POST,
            &format!(
                "{}{plant_key}/phase-transitions",
                crate::garden::plants_path(&t)
            ),
            Some(&json!({"target_phase_key": ph[1]})),
        )
        .await;
    assert_eq!(s, 200, "{moved}");
    let got = receiver.wait_for(3).await;
    verify(&secret, &got[2]);
    let body = got[2].json();
    assert_eq!(body["type"], "plant.phase_changed");
    assert_eq!(body["data"]["phase_key"], ph[1].as_str());
    assert_ne!(got[2].header("webhook-id"), got[0].header("webhook-id"));

    // An event nobody subscribed to queues nothing.
    let (s, _) = app
        .rest()
        .call(
            Method::POST,
            &format!("{}{plant_key}/archive", crate::garden::plants_path(&t)),
            Some(&json!({"reason": "died"})),
        )
        .await;
    assert_eq!(s, 200, "archive");
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(receiver.received().len(), 3);
    assert_eq!(count(&app, &t, "webhook_events").await, 2);

    // The deliveries listing: newest first, with every attempt.
    let (s, list) = app
        .rest()
        .call(
            Method::GET,
            &format!("{}/{key}/deliveries", hooks(&t)),
            None,
        )
        .await;
    assert_eq!(s, 200, "{list}");
    let items = list["items"].as_array().expect("items");
    assert_eq!(items.len(), 2);
    assert_eq!(items[1]["event_type"], "plant.created");
    assert_eq!(items[1]["status"], "delivered");
    assert_eq!(items[1]["attempts"], 2);
    let log = items[1]["attempt_log"].as_array().expect("log");
    assert_eq!(log.len(), 2);
    assert_eq!(log[0]["response_code"], 500);
    assert_eq!(log[1]["response_code"], 200);
    assert_eq!(log[1]["response_body"], "received!");
    assert_eq!(items[1]["message_id"].as_str(), got[0].header("webhook-id"));
    assert_eq!(
        delivery_rows(&app, &t).await,
        vec![("delivered".to_owned(), 2), ("delivered".to_owned(), 1)]
    );

    // Rotation: a new secret signs the next event; the old one no longer verifies.
    let (s, rotated) = app
        .rest()
        .call(
            Method::POST,
            &format!("{}/{key}/rotate-secret", hooks(&t)),
            None,
        )
        .await;
    assert_eq!(s, 200, "{rotated}");
    let new_secret = rotated["secret"].as_str().expect("secret").to_owned();
    assert_ne!(new_secret, secret);
    let (s, _) = app
        .rest()
        .call(
            Method::POST,
            &crate::garden::plants_path(&t),
            Some(&json!({"species_key": tomato})),
        )
        .await;
    assert_eq!(s, 201);
    let got = receiver.wait_for(4).await;
    verify(&new_secret, &got[3]);
    assert_eq!(got[3].json()["type"], "plant.created");
}

#[tokio::test]
async fn the_last_failed_attempt_disables_the_endpoint_and_mails_the_admins() {
    let sink = crate::mail::Sink::start().await;
    let receiver = receiver(vec![503]).await;
    let db = sibling_database("webhooks_disable").await;
    let app = crate::mail::mail_app(
        &db,
        &sink.url(),
        &[
            ("WEBHOOK_ALLOW_PRIVATE_TARGETS", "true"),
            ("WEBHOOK_RETRY_SCHEDULE", "0.2,0.2"),
            ("WEBHOOK_POLL_MILLIS", "100"),
        ],
    )
    .await;
    let t = app.tenant("hookfail").await;
    let admin = app.member(&t, Role::Admin).await;
    let grower = app.member(&t, Role::Grower).await;
    let tomato = species(&app, TOMATO).await;
    let (s, created) = app
        .rest_as(&admin)
        .call(
            Method::POST,
            &hooks(&t),
            Some(&json!({"url": hook_url(&receiver), "events": ["plant.created"]})),
        )
        .await;
    assert_eq!(s, 201, "{created}");
    let key = created["key"].as_str().expect("key").to_owned();
    let (s, _) = app
        .rest_as(&grower)
        .call(
            Method::POST,
            &crate::garden::plants_path(&t),
            Some(&json!({"species_key": tomato})),
        )
        .await;
    assert_eq!(s, 201);

    // Three attempts (the first and two retries), all with one id; then no more.
    let got = receiver.wait_for(3).await;
    assert!(
        got.iter()
            .all(|r| r.header("webhook-id") == got[0].header("webhook-id"))
    );
    let start = Instant::now();
    let mails = loop {
        let found: Vec<Value> = sink
            .messages_to(&admin.email)
            .into_iter()
            .filter(|m| m["subject"].as_str().is_some_and(|s| s.contains("webhook")))
            .collect();
        if !found.is_empty() {
            break found;
        }
        assert!(start.elapsed() < DEADLINE, "no mail to the admin");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(
        mails[0]["subject"]
            .as_str()
            .is_some_and(|s| s.contains("webhook") && s.contains("disabled")),
        "{}",
        mails[0]
    );
    assert!(mails[0]["text"].as_str().is_some_and(|t| t.contains(&key)));
    let (s, hook) = app
        .rest_as(&admin)
        .call(Method::GET, &format!("{}/{key}", hooks(&t)), None)
        .await;
    assert_eq!(s, 200);
    assert_eq!(hook["enabled"], false);
    assert!(
        hook["disabled_reason"]
            .as_str()
            .is_some_and(|r| r.contains("503")),
        "{hook}"
    );
    assert_eq!(
        delivery_rows(&app, &t).await,
        vec![("failed".to_owned(), 3)]
    );
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(
        receiver.received().len(),
        3,
        "nothing after the last attempt"
    );
    // Growers are not told (they cannot change webhooks).
    assert!(
        sink.messages_to(&grower.email)
            .iter()
            .all(|m| m["subject"].as_str().is_none_or(|s| !s.contains("webhook")))
    );

    // A disabled endpoint gets nothing new; enabling it again resumes.
    let (s, _) = app
        .rest_as(&grower)
        .call(
            Method::POST,
            &crate::garden::plants_path(&t),
            Some(&json!({"species_key": tomato})),
        )
        .await;
    assert_eq!(s, 201);
    assert_eq!(count(&app, &t, "webhook_events").await, 1);
}

#[tokio::test]
async fn only_admins_with_a_session_manage_webhooks_and_gardens_stay_apart() {
    let app = TestApp::full_env(&[("WEBHOOK_ALLOW_PRIVATE_TARGETS", "true")]).await;
    let a = app.tenant("hooka").await;
    let b = app.tenant("hookb").await;
    let admin = app.member(&a, Role::Admin).await;
    let grower = app.member(&a, Role::Grower).await;
    let viewer = app.member(&a, Role::Viewer).await;
    let admin_b = app.member(&b, Role::Admin).await;
    let body = json!({"url": "http://127.0.0.1:9/hook", "events": ["task.completed"]});

    for who in [&grower, &viewer] {
        let res = app.rest_as(who).post(&hooks(&a), &body).await;
        assert_error(res, 403, "FORBIDDEN").await;
        let res = app.rest_as(who).get(&hooks(&a)).await;
        assert_error(res, 403, "FORBIDDEN").await;
    }
    // An admin's API key cannot create one (a person must).
    let key = app.api_key(&admin, None).await;
    let res = app.rest_key(&key).post(&hooks(&a), &body).await;
    let err = assert_error(res, 403, "FORBIDDEN").await;
    assert_eq!(detail_fields(&err), vec!["authorization"]);
    assert_eq!(count(&app, &a, "webhooks").await, 0);

    let (s, created) = app
        .rest_as(&admin)
        .call(Method::POST, &hooks(&a), Some(&body))
        .await;
    assert_eq!(s, 201, "{created}");
    let hook = created["key"].as_str().expect("key").to_owned();
    // The key can read, but not rotate.
    let (s, list) = app.rest_key(&key).call(Method::GET, &hooks(&a), None).await;
    assert_eq!(s, 200);
    assert_eq!(list["items"].as_array().map(Vec::len), Some(1));
    assert!(list["items"][0].get("secret").is_none());
    let res = app
        .rest_key(&key)
        .post_empty(&format!("{}/{hook}/rotate-secret", hooks(&a)))
        .await;
    assert_error(res, 403, "FORBIDDEN").await;

    // B's admin: A's garden does not exist for them, and A's webhook is not in B.
    let res = app.rest_as(&admin_b).get(&hooks(&a)).await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    let res = app
        .rest_as(&admin_b)
        .get(&format!("{}/{hook}", hooks(&b)))
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    let (s, list) = app
        .rest_as(&admin_b)
        .call(Method::GET, &hooks(&b), None)
        .await;
    assert_eq!((s, list["items"].as_array().map(Vec::len)), (200, Some(0)));
    let res = app
        .rest_as(&admin_b)
        .delete(&format!("{}/{hook}", hooks(&b)))
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    assert_eq!(count(&app, &a, "webhooks").await, 1);

    // Update and delete by A's admin.
    let (s, changed) = app
        .rest_as(&admin)
        .call(
            Method::PATCH,
            &format!("{}/{hook}", hooks(&a)),
            Some(
                &json!({"enabled": false, "events": ["plant.created", "harvest.recorded"],
                     "description": "n8n"}),
            ),
        )
        .await;
    assert_eq!(s, 200, "{changed}");
    assert_eq!(changed["enabled"], false);
    assert_eq!(
        changed["events"],
        json!(["plant.created", "harvest.recorded"])
    );
    assert_eq!(changed["description"], "n8n");
    let res = app
        .rest_as(&admin)
        .patch(
            &format!("{}/{hook}", hooks(&a)),
            &json!({"events": ["plant.exploded"]}),
        )
        .await;
    let err = assert_error(res, 422, "VALIDATION_ERROR").await;
    assert_eq!(detail_fields(&err), vec!["body.events"]);
    let res = app
        .rest_as(&admin)
        .delete(&format!("{}/{hook}", hooks(&a)))
        .await;
    assert_eq!(res.status().as_u16(), 204);
    assert_eq!(count(&app, &a, "webhooks").await, 0);
    let res = app
        .rest_as(&admin)
        .get(&format!("{}/{hook}", hooks(&a)))
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
}

#[tokio::test]
async fn targets_that_could_reach_inside_are_refused_and_nothing_is_stored() {
    // Private targets not allowed (the default).
    let app = TestApp::spawn().await;
    let t = app.tenant("hookssrf").await;
    for url in [
        "http://hooks.example.org/x",
        "ftp://hooks.example.org/x",
        "https://127.0.0.1/x",
        "https://localhost:8443/x",
        "https://10.0.0.7/x",
        "https://192.168.1.20/x",
        "https://169.254.169.254/latest/meta-data",
        "https://[::1]/x",
        "https://[fd00::1]/x",
        "https://[::ffff:127.0.0.1]/x",
        "https://user:pw@hooks.example.org/x",
        "http://127.0.0.1:8080/x",
        "not a url",
    ] {
        let res = app
            .post_json(
                &hooks(&t),
                &json!({"url": url, "events": ["plant.created"]}),
            )
            .await;
        let err = assert_error(res, 422, "VALIDATION_ERROR").await;
        assert_eq!(detail_fields(&err), vec!["body.url"], "{url}: {err}");
    }
    // Loopback over http with the switch on is fine, but a private address still is not.
    let local = TestApp::spawn_env(&[("WEBHOOK_ALLOW_PRIVATE_TARGETS", "true")]).await;
    let res = local
        .post_json(
            &hooks(&t),
            &json!({"url": "https://10.1.2.3/x", "events": ["plant.created"]}),
        )
        .await;
    assert_error(res, 422, "VALIDATION_ERROR").await;
    let res = local
        .post_json(
            &hooks(&t),
            &json!({"url": "http://10.1.2.3/x", "events": ["plant.created"]}),
        )
        .await;
    assert_error(res, 422, "VALIDATION_ERROR").await;
    // Bad events and bodies.
    for body in [
        json!({"url": "https://hooks.example.org/x", "events": []}),
        json!({"url": "https://hooks.example.org/x", "events": ["plant.exploded"]}),
        json!({"url": "https://hooks.example.org/x", "events": "plant.created"}),
        json!({"url": "https://hooks.example.org/x"}),
        json!({"events": ["plant.created"]}),
    ] {
        let res = app.post_json(&hooks(&t), &body).await;
        assert_error(res, 422, "VALIDATION_ERROR").await;
    }
    assert_eq!(count(&app, &t, "webhooks").await, 0);
    let marked: i64 =
        sqlx::query_scalar("SELECT count(*) FROM platform.webhook_gardens WHERE tenant_id = $1")
            .bind(t.id)
            .fetch_one(app.state.platform_pool())
            .await
            .expect("count");
    assert_eq!(marked, 0, "a refused target marks nothing");
}

async fn secret_columns(
    app: &TestApp,
    t: &TenantRecord,
    key: &str,
) -> (Option<Vec<u8>>, Option<String>) {
    let sql = format!(
        "SELECT secret, secret_encrypted FROM {}.webhooks WHERE id = $1::uuid",
        t.schema_name.quoted()
    );
    sqlx::query_as(sqlx::AssertSqlSafe(sql))
        .bind(key)
        .fetch_one(app.state.platform_pool())
        .await
        .expect("webhook row")
}

#[tokio::test]
async fn signing_secrets_are_sealed_at_rest_and_raw_ones_are_sealed_by_the_worker() {
    let receiver = receiver(vec![200]).await;
    // FERNET_KEY set: secrets are sealed with it.
    let fernet_key = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
    let app = delivery_app("sealed", "0.3", &[("FERNET_KEY", fernet_key)]).await;
    let t = app.tenant("sealed").await;
    let tomato = species(&app, TOMATO).await;
    let (s, created) = app
        .rest()
        .call(
            Method::POST,
            &hooks(&t),
            Some(&json!({"url": hook_url(&receiver), "events": ["plant.created"]})),
        )
        .await;
    assert_eq!(s, 201, "{created}");
    let secret = created["secret"].as_str().expect("secret").to_owned();
    let key = created["key"].as_str().expect("key").to_owned();
    let raw = STANDARD
        .decode(secret.trim_start_matches("whsec_"))
        .expect("base64");
    let (stored_raw, sealed) = secret_columns(&app, &t, &key).await;
    assert!(stored_raw.is_none(), "no raw secret stored");
    let sealed = sealed.expect("sealed secret");
    assert!(!sealed.contains(secret.trim_start_matches("whsec_")));
    let opened = fernet::Fernet::new(fernet_key)
        .expect("key")
        .decrypt(&sealed)
        .expect("opens with FERNET_KEY");
    assert_eq!(opened, raw);

    // A row as tenant migration 0021 found it (raw, not sealed): the worker seals it before
    // signing, and the signature still verifies with the secret shown at creation.
    let sql = format!(
        "UPDATE {}.webhooks SET secret = $2, secret_encrypted = NULL WHERE id = $1::uuid",
        t.schema_name.quoted()
    );
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(&key)
        .bind(&raw)
        .execute(app.state.platform_pool())
        .await
        .expect("back to raw");
    let (s, plant) = app
        .rest()
        .call(
            Method::POST,
            &crate::garden::plants_path(&t),
            Some(&json!({"species_key": tomato, "name": "Sealed tomato"})),
        )
        .await;
    assert_eq!(s, 201, "{plant}");
    let got = receiver.wait_for(1).await;
    verify(&secret, &got[0]);
    // The worker's next round (every 100 ms here) at the latest has sealed it.
    let start = Instant::now();
    let (stored_raw, sealed) = loop {
        let columns = secret_columns(&app, &t, &key).await;
        if columns.0.is_none() || start.elapsed() > DEADLINE {
            break columns;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(stored_raw.is_none(), "the raw secret was cleared");
    let opened = fernet::Fernet::new(fernet_key)
        .expect("key")
        .decrypt(&sealed.expect("sealed"))
        .expect("opens");
    assert_eq!(opened, raw);
}

/// Demoting or removing the member who made a webhook ends it (disabled, with the reason in
/// its record); another admin's key cannot enable it again, the admin's session can, and so
/// becomes its maker.
#[tokio::test]
async fn demotion_and_removal_end_the_members_webhooks() {
    let app = TestApp::full_env(&[("WEBHOOK_ALLOW_PRIVATE_TARGETS", "true")]).await;
    let t = app.tenant("hookdemote").await;
    let owner = app.member(&t, Role::Admin).await;
    let deputy = app.member(&t, Role::Admin).await;
    let leaver = app.member(&t, Role::Admin).await;
    let body = json!({"url": "http://127.0.0.1:9/hook", "events": ["task.completed"]});
    let mut paths = Vec::new();
    for who in [&owner, &deputy, &leaver] {
        let (s, created) = app
            .rest_as(who)
            .call(Method::POST, &hooks(&t), Some(&body))
            .await;
        assert_eq!(s, 201, "{created}");
        paths.push(format!(
            "{}/{}",
            hooks(&t),
            created["key"].as_str().expect("key")
        ));
    }
    let members = format!("/api/v1/tenants/{}/members", t.slug);
    let (s, _) = app
        .rest_as(&owner)
        .call(
            Method::PATCH,
            &format!("{members}/{}", deputy.key),
            Some(&json!({"role": "grower"})),
        )
        .await;
    assert_eq!(s, 200);
    let (s, _) = app
        .rest_as(&owner)
        .call(Method::DELETE, &format!("{members}/{}", leaver.key), None)
        .await;
    assert_eq!(s, 204);
    let state = |path: String| {
        let app = &app;
        let owner = &owner;
        async move { app.rest_as(owner).call(Method::GET, &path, None).await.1 }
    };
    assert_eq!(
        state(paths[0].clone()).await["enabled"],
        true,
        "the owner's stays"
    );
    for (path, says) in [
        (&paths[1], "no longer an admin"),
        (&paths[2], "no longer a member"),
    ] {
        let now = state(path.clone()).await;
        assert_eq!(now["enabled"], false, "{now}");
        assert!(
            now["disabled_reason"]
                .as_str()
                .is_some_and(|r| r.contains(says)),
            "{now}"
        );
    }
    let key = app.api_key(&owner, None).await;
    let res = app
        .rest_key(&key)
        .patch(&paths[1], &json!({"enabled": true}))
        .await;
    let err = assert_error(res, 403, "FORBIDDEN").await;
    assert_eq!(detail_fields(&err), vec!["authorization"]);
    assert_eq!(state(paths[1].clone()).await["enabled"], false);
    let (s, now) = app
        .rest_as(&owner)
        .call(Method::PATCH, &paths[1], Some(&json!({"enabled": true})))
        .await;
    assert_eq!(s, 200, "{now}");
    assert_eq!(now["disabled_reason"], Value::Null);
    let maker: Option<uuid::Uuid> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "SELECT created_by FROM {}.webhooks WHERE id = $1",
        t.schema_name.quoted()
    )))
    .bind(uuid::Uuid::parse_str(paths[1].rsplit('/').next().expect("key")).expect("uuid"))
    .fetch_one(app.state.platform_pool())
    .await
    .expect("maker");
    assert_eq!(
        maker,
        Some(owner.id()),
        "the person who enabled it is its maker"
    );
}
