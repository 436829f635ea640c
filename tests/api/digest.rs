//! The digest mail (issue 28) through a real SMTP sink: what is due across a user's gardens,
//! in their language, at most once a day, nothing when nothing is due or the preferences say
//! no, the unsubscribe link without a login, the operator command and the scheduled job. Each
//! test has a database of its own (the digest reads every user of it).

use std::time::Duration;

use kultiva::auth::Role;
use kultiva::tenancy::TenantRecord;
use reqwest::Method;
use serde_json::{Value, json};

use crate::cli::kultiva;
use crate::mail::{Sink, mail_app};
use crate::support::{TestApp, TestUser, assert_error, sibling_database};

const FRONTEND: &str = "https://garden.example.test";

async fn prefs(app: &TestApp, who: &TestUser, body: Value) {
    let res = app
        .rest_as(who)
        .patch("/api/v1/user-preferences", &body)
        .await;
    assert_eq!(res.status().as_u16(), 200, "preferences {body}");
}

async fn task(app: &TestApp, t: &TenantRecord, who: &TestUser, name: &str, due: &str) {
    let res = app
        .rest_as(who)
        .post(
            &format!("/api/v1/t/{}/tasks", t.slug),
            &json!({"name": name, "due_on": due}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 201, "task {name}");
}

fn today() -> String {
    time::OffsetDateTime::now_utc().date().to_string()
}

async fn sent_rows(app: &TestApp, who: &TestUser) -> Vec<(i32, bool)> {
    sqlx::query_as(
        "SELECT s.items, s.mail_id IS NOT NULL FROM platform.digest_sent s
         JOIN platform.users u ON u.id = s.user_id WHERE u.email = $1",
    )
    .bind(&who.email)
    .fetch_all(app.state.platform_pool())
    .await
    .expect("sent rows")
}

fn send_cli(db: &str, sink: &Sink, args: &[&str]) -> String {
    let mut all = vec!["digest", "send"];
    all.extend_from_slice(args);
    let out = kultiva(
        &all,
        &[
            ("DATABASE_URL", db),
            ("SMTP_URL", &sink.url()),
            ("FRONTEND_URL", FRONTEND),
            ("SERVICE_MODE", "full"),
        ],
    );
    assert!(
        out.status.success(),
        "kultiva digest send: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The digest mails to an address (registration also mailed a verification link).
fn digests(sink: &Sink, to: &str) -> Vec<Value> {
    sink.messages_to(to)
        .into_iter()
        .filter(|m| {
            m["subject"]
                .as_str()
                .is_some_and(|s| s.starts_with("Kultiva:"))
        })
        .collect()
}

async fn wait_digests(sink: &Sink, to: &str, n: usize) -> Vec<Value> {
    let start = std::time::Instant::now();
    loop {
        let found = digests(sink, to);
        if found.len() >= n {
            return found;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{n} digest(s) to {to} expected"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn token_of(mail: &Value) -> String {
    let text = mail["text"].as_str().expect("text");
    let prefix = format!("{FRONTEND}/digest/unsubscribe?token=");
    let at = text.find(&prefix).expect("unsubscribe link") + prefix.len();
    text[at..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .collect()
}

#[tokio::test]
async fn the_cli_sends_one_digest_a_day_in_the_users_language_and_unsubscribing_needs_no_login() {
    let sink = Sink::start().await;
    let db = sibling_database("digest_cli").await;
    let app = mail_app(&db, &sink.url(), &[]).await;
    let garden = app.tenant("digestg").await;
    let other = app.tenant("digesth").await;
    let anna = app.member(&garden, Role::Admin).await;
    let idle = app.member(&other, Role::Grower).await;
    let off = app.member(&garden, Role::Grower).await;
    app.add_member(&other, anna.id(), Role::Viewer).await;
    prefs(
        &app,
        &anna,
        json!({"locale": "de", "timezone": "Europe/Berlin"}),
    )
    .await;
    prefs(&app, &off, json!({"notify_digest": "off"})).await;
    task(&app, &garden, &anna, "Tomaten ausgeizen", &today()).await;
    task(&app, &garden, &anna, "Rankhilfe bauen", "2026-01-10").await;
    task(&app, &other, &idle, "Nicht fällig", "2099-01-01").await;

    // --user: only that user; --all: whatever their hour.
    let out = send_cli(&db, &sink, &["--all", "--user", &anna.email]);
    assert!(out.contains("digests sent: 1"), "{out}");
    let mails = wait_digests(&sink, &anna.email, 1).await;
    let mail = &mails[0];
    let subject = mail["subject"].as_str().expect("subject");
    assert!(subject.contains("Aufgaben für heute"), "{subject}");
    let text = mail["text"].as_str().expect("text");
    assert!(text.starts_with("Guten Morgen"), "{text}");
    assert!(
        text.contains("Tomaten ausgeizen") && text.contains("Rankhilfe bauen"),
        "{text}"
    );
    assert!(!text.contains("Nicht fällig"), "{text}");
    assert!(
        text.contains(&format!("{FRONTEND}/gardens/{}/today", garden.slug)),
        "{text}"
    );
    assert_eq!(sent_rows(&app, &anna).await, vec![(2, true)]);

    // Everybody now: anna had hers today, idle has nothing due, off said no.
    // (The database outlives a run: users of earlier runs may be counted in its output.)
    let out = send_cli(&db, &sink, &["--all"]);
    assert!(out.contains("nothing to say: "), "{out}");
    let again = send_cli(&db, &sink, &["--all", "--user", &idle.email]);
    assert!(
        again.contains("digests sent: 0, nothing to say: 0, users due: 0"),
        "{again}"
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(digests(&sink, &anna.email).len(), 1, "once a day");
    assert!(digests(&sink, &idle.email).is_empty());
    assert!(digests(&sink, &off.email).is_empty());
    assert_eq!(sent_rows(&app, &idle).await, vec![(0, false)]);
    assert!(sent_rows(&app, &off).await.is_empty());

    // The link's token turns the digest off, without a login; a forged one does nothing.
    let token = token_of(mail);
    let res = app
        .post_json(
            "/api/v1/digest/unsubscribe",
            &json!({"token": format!("{token}x")}),
        )
        .await;
    assert_error(res, 422, "VALIDATION_ERROR").await;
    let res = app
        .post_json("/api/v1/digest/unsubscribe", &json!({"token": token}))
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let body: Value = res.json().await.expect("json");
    assert_eq!(body["notify_digest"], "off");
    let res = app.rest_as(&anna).get("/api/v1/user-preferences").await;
    let p: Value = res.json().await.expect("json");
    assert_eq!(p["notify_digest"], "off");
    assert_eq!(p["locale"], "de");
    // Tomorrow's run (the sent row moved back a day) sends nothing to her now.
    sqlx::query("UPDATE platform.digest_sent SET local_date = local_date - 1")
        .execute(app.state.platform_pool())
        .await
        .expect("move back");
    let out = send_cli(&db, &sink, &["--all", "--user", &anna.email]);
    assert!(out.contains("digests sent: 0"), "{out}");
    assert_eq!(digests(&sink, &anna.email).len(), 1);
}

#[tokio::test]
async fn the_scheduled_job_sends_at_the_chosen_hour_once_in_english() {
    let sink = Sink::start().await;
    let db = sibling_database("digest_job").await;
    // A service without the job first: the user and the due task exist before it runs.
    let setup = mail_app(&db, &sink.url(), &[]).await;
    let garden = setup.tenant("digestj").await;
    let bob = setup.member(&garden, Role::Grower).await;
    let late = setup.member(&garden, Role::Grower).await;
    let no_care = setup.member(&garden, Role::Grower).await;
    prefs(
        &setup,
        &bob,
        json!({"locale": "en-GB", "timezone": "UTC", "digest_hour": 0}),
    )
    .await;
    // Hour 23 in a zone where it is not 23 yet: not due now.
    let hour_now = time::OffsetDateTime::now_utc().hour();
    let later = if hour_now == 23 { 0 } else { 23 };
    prefs(
        &setup,
        &late,
        json!({"timezone": "UTC", "digest_hour": later}),
    )
    .await;
    prefs(
        &setup,
        &no_care,
        json!({"notify_care_due": false, "digest_hour": 0}),
    )
    .await;
    task(&setup, &garden, &bob, "Water the seedlings", &today()).await;
    let res = setup
        .rest_as(&bob)
        .patch("/api/v1/user-preferences", &json!({"digest_hour": 24}))
        .await;
    assert_error(res, 422, "VALIDATION_ERROR").await;
    drop(setup);

    // Two replicas with the job: one digest for bob.
    let env = [
        ("DIGEST_SCHEDULE", "true"),
        ("DIGEST_INTERVAL_SECONDS", "1"),
    ];
    let one = mail_app(&db, &sink.url(), &env).await;
    let two = mail_app(&db, &sink.url(), &env).await;
    let mails = wait_digests(&sink, &bob.email, 1).await;
    assert!(
        mails[0]["subject"]
            .as_str()
            .is_some_and(|s| s.contains("things to do today")),
        "{}",
        mails[0]
    );
    assert!(
        mails[0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("Water the seedlings") && t.contains("Unsubscribe"))
    );
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(digests(&sink, &bob.email).len(), 1);
    if later == 23 {
        assert!(digests(&sink, &late.email).is_empty());
        assert!(sent_rows(&one, &late).await.is_empty());
    }
    assert!(digests(&sink, &no_care.email).is_empty());
    assert!(sent_rows(&two, &no_care).await.is_empty());
}

/// A zone whose local day is not the UTC day right now, and that local day: UTC-12 before
/// noon UTC (yesterday there), UTC+14 from noon on (already tomorrow there).
fn other_day_zone() -> (&'static str, time::Date, bool) {
    let now = time::OffsetDateTime::now_utc();
    if now.hour() < 12 {
        (
            "Etc/GMT+12",
            (now - time::Duration::hours(12)).date(),
            false,
        )
    } else {
        (
            "Pacific/Kiritimati",
            (now + time::Duration::hours(14)).date(),
            true,
        )
    }
}

#[tokio::test]
async fn the_digest_names_ending_safety_intervals_and_ripe_plants_on_the_users_own_day() {
    let sink = Sink::start().await;
    let db = sibling_database("digest_content").await;
    let app = mail_app(&db, &sink.url(), &[]).await;
    // Three tomatoes in a phase that allows harvest.
    let w = crate::ipm::world(&app, "dgc", 3).await;
    let (sprayed, ripe) = (w.plants[0], w.plants[1]);
    let soap = crate::ipm::catalogue_key(&app, "treatment", crate::ipm::SOAP).await; // 3 days
    // Applied two UTC days ago: blocked through today (UTC), allowed tomorrow.
    let (s, a) = app
        .rest_as(&w.grower)
        .call(
            Method::POST,
            &crate::ipm::path(&w.t, "ipm/treatments"),
            Some(&json!({"treatment_key": soap, "plant_keys": [sprayed],
                     "applied_at": crate::ipm::days_ago(2)})),
        )
        .await;
    assert_eq!(s, 201, "{a}");
    for indicator in ["color", "size"] {
        let (s, o) = app
            .rest_as(&w.grower)
            .call(
                Method::POST,
                &crate::ipm::path(&w.t, "harvest/observations"),
                Some(&json!({"plant_key": ripe, "indicator_type": indicator,
                         "ripeness_assessment": "peak", "reliability_score": 1.0})),
            )
            .await;
        assert_eq!(s, 201, "{o}");
    }
    let state = &app.state;
    let send = |email: String| async move {
        kultiva::notify::digest::service::send_due(state, true, Some(&email))
            .await
            .expect("send")
    };

    // In UTC: the interval ends today and one plant is ripe; the others are not named.
    prefs(&app, &w.grower, json!({"timezone": "UTC", "locale": "en"})).await;
    let done = send(w.grower.email.clone()).await;
    assert_eq!((done.sent, done.empty), (1, 0), "{done:?}");
    let mail = wait_digests(&sink, &w.grower.email, 1).await.remove(0);
    // SMTP carries CRLF line ends.
    let text = mail["text"].as_str().expect("text").replace("\r\n", "\n");
    let tomorrow = (time::OffsetDateTime::now_utc().date() + time::Duration::days(1)).to_string();
    assert!(
        text.contains(&format!(
            "Safety intervals ending today:\n  - \"Tomato 0\": \"potassium fixturate\" \
             (harvest allowed from {tomorrow})\nReady"
        )),
        "{text}"
    );
    // Only the ripe plant (not the sprayed one, not the green one) is ready.
    assert!(
        text.contains("Ready to harvest:\n  - \"Tomato 1\"\nOpen:"),
        "{text}"
    );
    assert!(
        mail["subject"]
            .as_str()
            .is_some_and(|s| s.contains(&today()))
    );

    // In a zone where it is another day: the digest's day, the tasks due and the intervals
    // ending are that day's, not the UTC day's. German for a `de` locale.
    let (zone, local, ahead) = other_day_zone();
    prefs(&app, &w.admin, json!({"timezone": zone, "locale": "de"})).await;
    task(&app, &w.t, &w.admin, "Lokal heute", &local.to_string()).await;
    if !ahead {
        // Due on the UTC day, which is tomorrow there: not yet.
        task(&app, &w.t, &w.admin, "Erst morgen", &today()).await;
    }
    let done = send(w.admin.email.clone()).await;
    assert_eq!(done.sent, 1, "{done:?}");
    let mail = wait_digests(&sink, &w.admin.email, 1).await.remove(0);
    let text = mail["text"].as_str().expect("text").replace("\r\n", "\n");
    let subject = mail["subject"].as_str().expect("subject");
    assert!(subject.contains(&local.to_string()), "{zone}: {subject}");
    assert!(text.contains("Lokal heute"), "{zone}: {text}");
    assert!(!text.contains("Erst morgen"), "{zone}: {text}");
    assert!(text.contains("Erntereif:\n  - \"Tomato 1\"\n"), "{text}");
    assert!(
        !text.contains("Wartezeiten"),
        "not ending on {local}: {text}"
    );

    // Nothing to say (a garden with nothing due, nothing ripe): no mail, the day recorded.
    let quiet = app.tenant("dgquiet").await;
    let idle = app.member(&quiet, Role::Grower).await;
    task(&app, &quiet, &idle, "Nicht fällig", "2099-01-01").await;
    let done = send(idle.email.clone()).await;
    assert_eq!((done.sent, done.empty), (0, 1), "{done:?}");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(digests(&sink, &idle.email).is_empty());
    assert_eq!(sent_rows(&app, &idle).await, vec![(0, false)]);
}
