//! E-mail through a real SMTP server: an aiosmtpd sink (`tests/mail_sink.py`, from the venv that
//! `infra/test` exports as `KULTIVA_TEST_VENV`) on a loopback port receives what the delivery
//! worker sends, and the tests follow the links in those mails. Every test has a database of its
//! own, so no other test's worker (they all poll their database) takes its mails.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use uuid::Uuid;

use crate::support::{
    JsonReply, Options, PASSWORD, TestApp, assert_error, free_port, serve_command, session_of,
    sibling_database, unique_slug,
};

pub(crate) const FRONTEND: &str = "https://garden.example.test";
const FROM: &str = "Kultiva Test <mailer@kultiva.test>";
/// How long anything may take before a test gives up waiting (a hang guard, not a timing
/// assertion: everything finishes long before on a healthy machine).
const DEADLINE: Duration = Duration::from_secs(90);

/// The aiosmtpd sink as a child process; killed when dropped.
pub(crate) struct Sink {
    child: tokio::process::Child,
    dir: PathBuf,
    port: u16,
}

pub(crate) fn python() -> PathBuf {
    let venv = std::env::var("KULTIVA_TEST_VENV").unwrap_or_else(|_| {
        panic!(
            "KULTIVA_TEST_VENV is not set: the mail tests run an aiosmtpd SMTP sink from the \
             Python venv of tests/requirements.txt. Run infra/test, or in a shell: \
             `source infra/lib.sh && ensure_test_venv` and run the tests from there"
        )
    });
    let python = Path::new(&venv).join("bin").join("python");
    assert!(
        python.exists(),
        "KULTIVA_TEST_VENV={venv} has no bin/python; run `source infra/lib.sh && ensure_test_venv`"
    );
    python
}

impl Sink {
    pub(crate) async fn start() -> Self {
        Self::start_on(0).await
    }

    /// A sink on `port` (0: any free port).
    async fn start_on(port: u16) -> Self {
        let dir = std::env::temp_dir().join(format!("kultiva-mail-sink-{}", Uuid::new_v4()));
        std::fs::create_dir_all(&dir).expect("sink directory");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mail_sink.py");
        let mut child = tokio::process::Command::new(python())
            .arg(script)
            .args(["--host", "127.0.0.1", "--port", &port.to_string(), "--dir"])
            .arg(&dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("start the SMTP sink");
        let stdout = child.stdout.take().expect("sink stdout");
        let mut line = String::new();
        tokio::time::timeout(DEADLINE, BufReader::new(stdout).read_line(&mut line))
            .await
            .expect("the SMTP sink did not start")
            .expect("sink output");
        let port = line
            .trim()
            .strip_prefix("ready ")
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("unexpected sink output {line:?}"));
        Self { child, dir, port }
    }

    pub(crate) fn url(&self) -> String {
        format!("smtp://127.0.0.1:{}", self.port)
    }

    /// Every message received so far, oldest first.
    fn messages(&self) -> Vec<Value> {
        let mut names: Vec<PathBuf> = std::fs::read_dir(&self.dir)
            .expect("read sink directory")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        names.sort();
        names
            .iter()
            .map(|p| {
                let text = std::fs::read_to_string(p).expect("read message");
                serde_json::from_str(&text).expect("message json")
            })
            .collect()
    }

    pub(crate) fn messages_to(&self, recipient: &str) -> Vec<Value> {
        self.messages()
            .into_iter()
            .filter(|m| {
                m["envelope_to"]
                    .as_array()
                    .is_some_and(|to| to.iter().any(|t| t == recipient))
            })
            .collect()
    }

    /// Waits until `count` messages to `recipient` arrived and returns them.
    pub(crate) async fn wait_for(&self, recipient: &str, count: usize) -> Vec<Value> {
        let start = Instant::now();
        loop {
            let found = self.messages_to(recipient);
            if found.len() >= count {
                return found;
            }
            assert!(
                start.elapsed() < DEADLINE,
                "{count} mail(s) to {recipient} expected, {} arrived",
                found.len()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    pub(crate) async fn stop(mut self) {
        self.child.kill().await.expect("stop the sink");
    }
}

impl Drop for Sink {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A full-mode service on the test's own database, mailing through `smtp_url`.
pub(crate) async fn mail_app(db: &str, smtp_url: &str, extra: &[(&'static str, &str)]) -> TestApp {
    let mut env = vec![
        ("SERVICE_MODE", "full".to_owned()),
        ("DATABASE_URL", db.to_owned()),
        ("SMTP_URL", smtp_url.to_owned()),
        ("MAIL_FROM", FROM.to_owned()),
        ("FRONTEND_URL", FRONTEND.to_owned()),
    ];
    env.extend(extra.iter().map(|(k, v)| (*k, (*v).to_owned())));
    TestApp::spawn_with(Options {
        env,
        ..Options::default()
    })
    .await
}

pub(crate) async fn own_database(test: &str) -> String {
    sibling_database(&format!("mail_{test}")).await
}

pub(crate) fn address(label: &str) -> String {
    format!("{}@example.test", unique_slug(label))
}

/// The token of the link `{FRONTEND}{path}?token=…` in a mail's text.
pub(crate) fn link_token(mail: &Value, path: &str) -> String {
    let text = mail["text"].as_str().expect("plain text body");
    let prefix = format!("{FRONTEND}{path}?token=");
    let start = text
        .find(&prefix)
        .unwrap_or_else(|| panic!("no link {prefix}… in {text:?}"))
        + prefix.len();
    let token: String = text[start..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .collect();
    assert_eq!(
        token.len(),
        43,
        "a 32-byte token in URL-safe Base64: {text:?}"
    );
    token
}

/// Outbox rows of a recipient: (kind, status, attempts, body present).
async fn outbox(app: &TestApp, recipient: &str) -> Vec<(String, String, i32, bool)> {
    sqlx::query_as(
        "SELECT kind, status, attempts, body_text IS NOT NULL FROM platform.mail_outbox
         WHERE recipient = $1 ORDER BY created_at",
    )
    .bind(recipient)
    .fetch_all(app.state.platform_pool())
    .await
    .expect("outbox rows")
}

/// Waits until every outbox row of the recipients is finished (no longer queued or sending).
async fn wait_until_settled(app: &TestApp, recipients: &[String]) {
    let start = Instant::now();
    loop {
        let open: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM platform.mail_outbox
             WHERE recipient = ANY($1) AND status IN ('queued', 'sending')",
        )
        .bind(recipients)
        .fetch_one(app.state.platform_pool())
        .await
        .expect("open mails");
        if open == 0 {
            return;
        }
        assert!(start.elapsed() < DEADLINE, "{open} mail(s) still open");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn me(app: &TestApp, email: &str, password: &str) -> Value {
    let session = app.login(email, password).await;
    let res = app
        .rest_auth(Some(&format!("Bearer {}", session.access)))
        .get("/api/v1/users/me")
        .await;
    assert_eq!(res.status().as_u16(), 200);
    res.json().await.expect("me json")
}

#[tokio::test]
async fn the_verification_mail_arrives_and_its_link_confirms_the_address_once() {
    let sink = Sink::start().await;
    let app = mail_app(&own_database("verify").await, &sink.url(), &[]).await;
    let email = address("verify");
    assert_eq!(app.register(&email, PASSWORD).await.status().as_u16(), 201);

    let mails = sink.wait_for(&email, 1).await;
    let mail = &mails[0];
    assert_eq!(mail["envelope_from"], "mailer@kultiva.test");
    assert_eq!(mail["from"], FROM);
    assert_eq!(mail["to"], email);
    assert_eq!(mail["subject"], "Confirm your e-mail address for Kultiva");
    assert_eq!(mail["content_type"], "text/plain");
    assert!(
        mail["message_id"]
            .as_str()
            .is_some_and(|id| id.ends_with("@kultiva.test>")),
        "{mail}"
    );
    // The registrant's display name is not the mailbox owner's to read: not in the mail.
    assert!(
        mail["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("Hello,") && !t.contains("Tess Grower")),
        "{mail}"
    );
    let token = link_token(mail, "/auth/verify-email");

    assert_eq!(me(&app, &email, PASSWORD).await["email_verified"], false);
    let res = app
        .post_json("/api/v1/auth/verify-email", &json!({"token": token}))
        .await;
    assert_eq!(res.status().as_u16(), 200);
    assert_eq!(me(&app, &email, PASSWORD).await["email_verified"], true);

    // The link works once.
    let res = app
        .post_json("/api/v1/auth/verify-email", &json!({"token": token}))
        .await;
    assert_error(res, 422, "VALIDATION_ERROR").await;

    // Delivered once; the outbox row is marked sent and no longer holds the link.
    wait_until_settled(&app, std::slice::from_ref(&email)).await;
    assert_eq!(
        outbox(&app, &email).await,
        vec![("verify_email".to_owned(), "sent".to_owned(), 1, false)]
    );
    assert_eq!(sink.messages_to(&email).len(), 1);
}

#[tokio::test]
async fn required_verification_blocks_login_until_the_mailed_link_is_followed() {
    let sink = Sink::start().await;
    let app = mail_app(
        &own_database("required").await,
        &sink.url(),
        &[("REQUIRE_EMAIL_VERIFICATION", "true")],
    )
    .await;
    let email = address("required");
    assert_eq!(app.register(&email, PASSWORD).await.status().as_u16(), 201);
    let res = app.login_response(&email, PASSWORD, false).await;
    assert_error(res, 403, "EMAIL_NOT_VERIFIED").await;

    let mails = sink.wait_for(&email, 1).await;
    let token = link_token(&mails[0], "/auth/verify-email");
    // Still refused until the link is followed.
    let res = app.login_response(&email, PASSWORD, false).await;
    assert_error(res, 403, "EMAIL_NOT_VERIFIED").await;
    let res = app
        .post_json("/api/v1/auth/verify-email", &json!({"token": token}))
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let res = app.login_response(&email, PASSWORD, false).await;
    assert_eq!(res.status().as_u16(), 200);
    let session = session_of(res).await;
    assert!(!session.access.is_empty());
}

#[tokio::test]
async fn a_password_reset_goes_through_the_mailed_link() {
    let sink = Sink::start().await;
    let app = mail_app(&own_database("reset").await, &sink.url(), &[]).await;
    let email = address("reset");
    let unknown = address("nobody");
    assert_eq!(app.register(&email, PASSWORD).await.status().as_u16(), 201);
    sink.wait_for(&email, 1).await;

    // The unknown address first: the same answer, and (checked below) no row, no mail.
    let res = app
        .post_json(
            "/api/v1/auth/password-reset/request",
            &json!({"email": unknown}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 202);
    let unknown_answer: Value = res.json().await.expect("json");
    let res = app
        .post_json(
            "/api/v1/auth/password-reset/request",
            &json!({"email": email}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 202);
    let known_answer: Value = res.json().await.expect("json");
    assert_eq!(unknown_answer, known_answer);

    let mails = sink.wait_for(&email, 2).await;
    let mail = mails
        .iter()
        .find(|m| m["subject"] == "Reset your Kultiva password")
        .expect("reset mail");
    let token = link_token(mail, "/auth/reset-password");
    let res = app
        .post_json(
            "/api/v1/auth/password-reset/confirm",
            &json!({"token": token, "new_password": "a fresh garden secret"}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let res = app.login_response(&email, PASSWORD, false).await;
    assert_error(res, 401, "UNAUTHORIZED").await;
    let res = app
        .login_response(&email, "a fresh garden secret", false)
        .await;
    assert_eq!(res.status().as_u16(), 200);

    // The link works once.
    let res = app
        .post_json(
            "/api/v1/auth/password-reset/confirm",
            &json!({"token": token, "new_password": "yet another secret"}),
        )
        .await;
    assert_error(res, 422, "VALIDATION_ERROR").await;

    // Nothing was queued or sent for the unknown address.
    assert!(outbox(&app, &unknown).await.is_empty());
    assert!(sink.messages_to(&unknown).is_empty());
    wait_until_settled(&app, std::slice::from_ref(&email)).await;
    let kinds: Vec<(String, String)> = outbox(&app, &email)
        .await
        .into_iter()
        .map(|(kind, status, _, _)| (kind, status))
        .collect();
    assert_eq!(
        kinds,
        vec![
            ("verify_email".to_owned(), "sent".to_owned()),
            ("password_reset".to_owned(), "sent".to_owned()),
            // The notice of what the reset ended.
            ("password_reset_done".to_owned(), "sent".to_owned())
        ]
    );
}

#[tokio::test]
async fn a_rolled_back_registration_queues_no_mail() {
    let sink = Sink::start().await;
    let app = mail_app(&own_database("rollback").await, &sink.url(), &[]).await;
    let email = address("twice");
    assert_eq!(app.register(&email, PASSWORD).await.status().as_u16(), 201);
    let res = app.register(&email.to_uppercase(), PASSWORD).await;
    assert_error(res, 409, "DUPLICATE_ENTRY").await;
    sink.wait_for(&email, 1).await;
    wait_until_settled(&app, std::slice::from_ref(&email)).await;
    assert_eq!(outbox(&app, &email).await.len(), 1);
    assert_eq!(sink.messages_to(&email).len(), 1);

    // A mail queued in a transaction that rolls back never exists.
    let ghost = address("ghost");
    let mut tx = app.state.platform_pool().begin().await.expect("begin");
    kultiva::mail::enqueue(
        &mut tx,
        &kultiva::mail::OutgoingMail {
            recipient: ghost.clone(),
            subject: "never".into(),
            body_text: "never sent".into(),
            kind: "test".into(),
        },
    )
    .await
    .expect("enqueue");
    tx.rollback().await.expect("rollback");
    app.state.mail_wakeup();
    // A later mail in this database is delivered: the worker looked at the outbox after the
    // rollback, and the ghost never appeared.
    let later = address("later");
    assert_eq!(app.register(&later, PASSWORD).await.status().as_u16(), 201);
    sink.wait_for(&later, 1).await;
    assert!(outbox(&app, &ghost).await.is_empty());
    assert!(sink.messages_to(&ghost).is_empty());
}

#[tokio::test]
async fn a_mail_waits_in_the_outbox_while_the_smtp_server_is_down() {
    let port = free_port();
    let db = own_database("retry").await;
    let app = mail_app(&db, &format!("smtp://127.0.0.1:{port}"), &[]).await;
    let email = address("patient");
    assert_eq!(app.register(&email, PASSWORD).await.status().as_u16(), 201);

    // The attempt fails (nothing listens): the row stays queued, the attempt is counted, the
    // error kept and the body (with the link) still there for the next attempt.
    let start = Instant::now();
    loop {
        let rows = outbox(&app, &email).await;
        assert_eq!(rows.len(), 1);
        let (_, status, attempts, body) = &rows[0];
        if status == "queued" && *attempts >= 1 {
            assert!(body);
            break;
        }
        assert!(
            start.elapsed() < DEADLINE,
            "no failed attempt recorded: {rows:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (error, sent_at): (Option<String>, Option<time::OffsetDateTime>) =
        sqlx::query_as("SELECT last_error, sent_at FROM platform.mail_outbox WHERE recipient = $1")
            .bind(&email)
            .fetch_one(app.state.platform_pool())
            .await
            .expect("row");
    assert!(error.is_some_and(|e| !e.is_empty()));
    assert!(sent_at.is_none());

    // The server comes up; the retry falls due (moved forward instead of waiting out the
    // 30-second backoff) and the mail goes out.
    let sink = Sink::start_on(port).await;
    sqlx::query("UPDATE platform.mail_outbox SET next_attempt_at = now() WHERE recipient = $1")
        .bind(&email)
        .execute(app.state.platform_pool())
        .await
        .expect("due now");
    app.state.mail_wakeup();
    let mails = sink.wait_for(&email, 1).await;
    link_token(&mails[0], "/auth/verify-email");
    wait_until_settled(&app, std::slice::from_ref(&email)).await;
    let rows = outbox(&app, &email).await;
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].1, "sent");
    assert!(rows[0].2 >= 2, "{rows:?}");
    assert!(!rows[0].3, "the body is wiped once sent");
    assert_eq!(sink.messages_to(&email).len(), 1);
    sink.stop().await;
}

/// Waits until the recipient's only outbox row has `status`; returns (attempts, last_error,
/// body present).
async fn wait_for_status(app: &TestApp, recipient: &str, status: &str) -> (i32, String, bool) {
    let start = Instant::now();
    loop {
        let row: Option<(String, i32, Option<String>, bool)> = sqlx::query_as(
            "SELECT status, attempts, last_error, body_text IS NOT NULL
             FROM platform.mail_outbox WHERE recipient = $1",
        )
        .bind(recipient)
        .fetch_optional(app.state.platform_pool())
        .await
        .expect("row");
        if let Some((now, attempts, error, body)) = &row
            && now == status
        {
            return (*attempts, error.clone().unwrap_or_default(), *body);
        }
        assert!(
            start.elapsed() < DEADLINE,
            "{recipient} never reached {status}: {row:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_refused_recipient_fails_at_once_without_retries() {
    let sink = Sink::start().await;
    let app = mail_app(&own_database("bounce").await, &sink.url(), &[]).await;
    let email = format!("bounce-{}", address("x"));
    assert_eq!(app.register(&email, PASSWORD).await.status().as_u16(), 201);
    let (attempts, error, body) = wait_for_status(&app, &email, "failed").await;
    assert_eq!(attempts, 1);
    assert!(error.contains("550"), "{error}");
    assert!(!body, "the body is wiped once given up");
    // Other mails still go out.
    let fine = address("fine");
    assert_eq!(app.register(&fine, PASSWORD).await.status().as_u16(), 201);
    sink.wait_for(&fine, 1).await;
    assert!(sink.messages_to(&email).is_empty());
}

#[tokio::test]
async fn a_mail_is_given_up_after_the_last_attempt() {
    let port = free_port();
    let app = mail_app(
        &own_database("giveup").await,
        &format!("smtp://127.0.0.1:{port}"),
        &[],
    )
    .await;
    let email = address("hopeless");
    assert_eq!(app.register(&email, PASSWORD).await.status().as_u16(), 201);
    let (attempts, _, body) = wait_for_status(&app, &email, "queued").await;
    // Wait for the first failure (the row is queued before the first attempt too).
    let mut attempts = attempts;
    let start = Instant::now();
    while attempts < 1 {
        assert!(start.elapsed() < DEADLINE, "no attempt");
        tokio::time::sleep(Duration::from_millis(50)).await;
        attempts = wait_for_status(&app, &email, "queued").await.0;
    }
    assert!(body);
    // Skip ahead to the last attempt allowed, due now.
    sqlx::query(
        "UPDATE platform.mail_outbox SET attempts = $2 - 1, next_attempt_at = now()
         WHERE recipient = $1 AND status = 'queued'",
    )
    .bind(&email)
    .bind(kultiva::rules::mail::MAX_ATTEMPTS)
    .execute(app.state.platform_pool())
    .await
    .expect("skip ahead");
    app.state.mail_wakeup();
    let (attempts, error, body) = wait_for_status(&app, &email, "failed").await;
    assert_eq!(attempts, kultiva::rules::mail::MAX_ATTEMPTS);
    assert!(!error.is_empty());
    assert!(!body);
}

#[tokio::test]
async fn two_workers_on_one_database_send_each_mail_exactly_once() {
    let sink = Sink::start().await;
    let db = own_database("twoworkers").await;
    let first = mail_app(&db, &sink.url(), &[]).await;
    let second = mail_app(&db, &sink.url(), &[]).await;

    // Registrations through both services, plus a burst queued in one transaction and
    // announced to both workers at once.
    let mut recipients = Vec::new();
    for i in 0..6 {
        let app = if i % 2 == 0 { &first } else { &second };
        let email = address("pair");
        assert_eq!(app.register(&email, PASSWORD).await.status().as_u16(), 201);
        recipients.push(email);
    }
    let mut tx = first.state.platform_pool().begin().await.expect("begin");
    for _ in 0..30 {
        let email = address("burst");
        kultiva::mail::enqueue(
            &mut tx,
            &kultiva::mail::OutgoingMail {
                recipient: email.clone(),
                subject: "Burst".into(),
                body_text: "One of many.\n".into(),
                kind: "test".into(),
            },
        )
        .await
        .expect("enqueue");
        recipients.push(email);
    }
    tx.commit().await.expect("commit");
    first.state.mail_wakeup();
    second.state.mail_wakeup();

    for email in &recipients {
        sink.wait_for(email, 1).await;
    }
    wait_until_settled(&first, &recipients).await;
    // Every row is finished, so nothing else can still be on its way.
    for email in &recipients {
        assert_eq!(sink.messages_to(email).len(), 1, "{email}");
        let rows = outbox(&first, email).await;
        assert_eq!(rows.len(), 1, "{email}");
        assert_eq!((rows[0].1.as_str(), rows[0].2), ("sent", 1), "{email}");
    }
}

/// The real binary, without `SMTP_URL`, on the test's own database; its log lines are collected.
struct Server {
    child: tokio::process::Child,
    addr: String,
    logs: std::sync::Arc<std::sync::Mutex<String>>,
    client: reqwest::Client,
}

impl Server {
    async fn start(db: &str, debug: bool) -> Self {
        let addr = format!("127.0.0.1:{}", free_port());
        let mut child = serve_command(&[
            ("SERVICE_MODE", "full"),
            ("DATABASE_URL", db),
            ("BIND_ADDRESS", &addr),
            ("FRONTEND_URL", FRONTEND),
            ("DEBUG", if debug { "true" } else { "false" }),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn kultiva");
        let logs = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let stderr = child.stderr.take().expect("stderr");
        let sink = logs.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                if let Ok(mut all) = sink.lock() {
                    all.push_str(&line);
                    all.push('\n');
                }
            }
        });
        kultiva::tls::install_crypto_provider();
        let client = reqwest::Client::new();
        let start = Instant::now();
        loop {
            if let Ok(res) = client
                .get(format!("http://{addr}/api/v1/health/live"))
                .send()
                .await
                && res.status().is_success()
            {
                break;
            }
            assert!(start.elapsed() < DEADLINE, "the server did not come up");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Self {
            child,
            addr,
            logs,
            client,
        }
    }

    fn logs(&self) -> String {
        self.logs.lock().map(|l| l.clone()).unwrap_or_default()
    }

    async fn post(&self, path: &str, body: &Value) -> reqwest::Response {
        self.client
            .post(format!("http://{}{path}", self.addr))
            .json(body)
            .send()
            .await
            .expect("request sent")
    }

    /// Waits for the log line of the mail to `to` (shown redacted or not) and returns it.
    async fn mail_log_line(&self, shown_as: &str) -> Value {
        let start = Instant::now();
        loop {
            let found = self
                .logs()
                .lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .find(|l| l["to"] == shown_as);
            if let Some(line) = found {
                return line;
            }
            assert!(
                start.elapsed() < DEADLINE,
                "no mail log line for {shown_as}: {}",
                self.logs()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// SIGTERM; the server (and its mail worker) stop cleanly. Returns every log line.
    async fn stop(mut self) -> String {
        let pid = self.child.id().expect("pid");
        let killed = std::process::Command::new("sh")
            .args(["-c", &format!("kill -TERM {pid}")])
            .status()
            .expect("kill");
        assert!(killed.success());
        let status = tokio::time::timeout(DEADLINE, self.child.wait())
            .await
            .expect("exits")
            .expect("wait");
        assert!(status.success(), "exit status {status}");
        // The reader task sees end of file once the process is gone.
        let start = Instant::now();
        while !self.logs().contains("pools closed") && start.elapsed() < DEADLINE {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        self.logs()
    }
}

#[tokio::test]
async fn without_smtp_the_mail_is_logged_redacted_and_in_full_only_in_debug_mode() {
    let db = own_database("logged").await;

    // DEBUG=false: kind and a redacted recipient, never the address, the text or the link.
    let server = Server::start(&db, false).await;
    let quiet = address("quiet");
    let res = server
        .post(
            "/api/v1/auth/register",
            &json!({"email": quiet, "password": PASSWORD, "display_name": "Quiet"}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 201);
    let redacted = format!("q***@{}", quiet.split('@').nth(1).expect("domain"));
    let line = server.mail_log_line(&redacted).await;
    assert_eq!(line["kind"], "verify_email", "{line}");
    let logs = server.stop().await;
    assert!(!logs.contains(&quiet), "the address is in the log: {logs}");
    assert!(!logs.contains("token="), "a link is in the log: {logs}");
    assert!(
        !logs.contains("Hello Quiet"),
        "the text is in the log: {logs}"
    );
    assert!(logs.contains("mail delivery worker stopped"), "{logs}");

    // DEBUG=true (what infra/run sets): the whole mail, so the link can be followed from it.
    let server = Server::start(&db, true).await;
    let email = address("loud");
    let res = server
        .post(
            "/api/v1/auth/register",
            &json!({"email": email, "password": PASSWORD, "display_name": "Loud"}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 201);
    let line = server.mail_log_line(&email).await;
    assert_eq!(line["kind"], "verify_email", "{line}");
    assert_eq!(line["subject"], "Confirm your e-mail address for Kultiva");
    let token = link_token(&json!({"text": line["body"]}), "/auth/verify-email");
    let res = server
        .post("/api/v1/auth/verify-email", &json!({"token": token}))
        .await;
    assert_eq!(res.status().as_u16(), 200);
    server.stop().await;

    // Both rows are marked logged, their text wiped.
    let pool = sqlx::PgPool::connect(&db).await.expect("connect");
    for recipient in [&quiet, &email] {
        let n: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM platform.mail_outbox
             WHERE recipient = $1 AND status = 'logged' AND body_text IS NULL AND sent_at IS NOT NULL",
        )
        .bind(recipient)
        .fetch_one(&pool)
        .await
        .expect("count");
        assert_eq!(n, 1, "{recipient}");
    }
    pool.close().await;
}

#[tokio::test]
async fn concurrent_claims_never_hand_out_one_mail_twice() {
    // A database no service polls: only the claimers below touch its outbox.
    let db = own_database("claims").await;
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(10)
        .connect(&db)
        .await
        .expect("connect");
    kultiva::tenancy::migrate::migrate_platform(&pool)
        .await
        .expect("migrate");
    let mut tx = pool.begin().await.expect("begin");
    let mut queued = std::collections::BTreeSet::new();
    for _ in 0..60 {
        let id = kultiva::mail::enqueue(
            &mut tx,
            &kultiva::mail::OutgoingMail {
                recipient: address("claim"),
                subject: "Claim me".into(),
                body_text: "once\n".into(),
                kind: "test".into(),
            },
        )
        .await
        .expect("enqueue");
        queued.insert(id);
    }
    tx.commit().await.expect("commit");

    let claimers: Vec<_> = (0..8)
        .map(|_| {
            let pool = pool.clone();
            tokio::spawn(async move {
                let mut mine = Vec::new();
                loop {
                    let batch = kultiva::mail::outbox::claim_due(
                        &pool,
                        3,
                        Duration::from_secs(300),
                        kultiva::rules::mail::MAX_ATTEMPTS,
                    )
                    .await
                    .expect("claim");
                    if batch.is_empty() {
                        return mine;
                    }
                    mine.extend(batch);
                }
            })
        })
        .collect();
    let mut claimed = Vec::new();
    for claimer in claimers {
        claimed.extend(claimer.await.expect("claimer"));
    }
    let ids: Vec<Uuid> = claimed.iter().map(|c| c.id).collect();
    let distinct: std::collections::BTreeSet<Uuid> = ids.iter().copied().collect();
    let ours: std::collections::BTreeSet<Uuid> = distinct.intersection(&queued).copied().collect();
    assert_eq!(ours, queued, "every queued mail was claimed");
    assert_eq!(ids.len(), distinct.len(), "a mail was claimed twice");
    assert!(
        claimed
            .iter()
            .filter(|c| queued.contains(&c.id))
            .all(|c| c.attempts == 1)
    );
    pool.close().await;
}

#[tokio::test]
async fn an_invited_address_without_an_account_registers_and_accepts_with_the_mailed_link() {
    let sink = Sink::start().await;
    let app = mail_app(&own_database("invite").await, &sink.url(), &[]).await;
    let owner_email = address("owner");
    assert_eq!(
        app.register(&owner_email, PASSWORD).await.status().as_u16(),
        201
    );
    let owner = app.login(&owner_email, PASSWORD).await;
    let auth = format!("Bearer {}", owner.access);
    let slug = unique_slug("invited");
    let res = app
        .rest_auth(Some(&auth))
        .post(
            "/api/v1/tenants",
            &json!({"slug": slug, "name": "Allotment"}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 201);

    let newcomer = address("newcomer");
    let res = app
        .rest_auth(Some(&auth))
        .post(
            &format!("/api/v1/tenants/{slug}/members"),
            &json!({"email": newcomer, "role": "grower"}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 202);
    let mails = sink.wait_for(&newcomer, 1).await;
    assert!(
        mails[0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("register with this e-mail address first")),
        "{}",
        mails[0]
    );
    let token = link_token(&mails[0], "/invitations/accept");

    // Someone else's account cannot use the link.
    let other = address("other");
    assert_eq!(app.register(&other, PASSWORD).await.status().as_u16(), 201);
    let other = app.login(&other, PASSWORD).await;
    let res = app
        .rest_auth(Some(&format!("Bearer {}", other.access)))
        .post("/api/v1/invitations/accept", &json!({"token": token}))
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;

    // The invited address registers and accepts with the link's token, once.
    assert_eq!(
        app.register(&newcomer, PASSWORD).await.status().as_u16(),
        201
    );
    let session = app.login(&newcomer, PASSWORD).await;
    let bearer = format!("Bearer {}", session.access);
    let res = app
        .rest_auth(Some(&bearer))
        .post("/api/v1/invitations/accept", &json!({"token": token}))
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let member: Value = res.json().await.expect("json");
    assert_eq!(member["role"], "grower");
    let res = app
        .rest_auth(Some(&bearer))
        .get(&format!("/api/v1/tenants/{slug}"))
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let res = app
        .rest_auth(Some(&bearer))
        .post("/api/v1/invitations/accept", &json!({"token": token}))
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
}

/// The body of a JSON answer (asserting its status).
#[tokio::test]
async fn taking_an_account_back_by_password_reset_ends_everything_the_squatter_handed_out() {
    let sink = Sink::start().await;
    let app = mail_app(&own_database("takeback").await, &sink.url(), &[]).await;
    let victim = address("victim");
    let accomplice = address("accomplice");

    // The squatter registers the victim's address (verification is optional) and hands out
    // grants from the personal garden: an admin service account, a calendar feed, and an
    // admin invitation to an accomplice.
    assert_eq!(app.register(&victim, PASSWORD).await.status().as_u16(), 201);
    let squatter = app.login(&victim, PASSWORD).await;
    let bearer = format!("Bearer {}", squatter.access);
    let gardens = app.rest_auth(Some(&bearer)).get_ok("/api/v1/tenants").await;
    let slug = gardens["items"][0]["slug"]
        .as_str()
        .expect("the personal garden")
        .to_owned();
    let account = app
        .rest_auth(Some(&bearer))
        .create(
            &format!("/api/v1/t/{slug}/service-accounts"),
            &json!({"name": "Backup bot", "role": "admin"}),
        )
        .await;
    let bot_key = format!("Bearer {}", account["raw_key"].as_str().expect("raw key"));
    let sites = format!("/api/v1/t/{slug}/sites/");
    let res = app.rest_auth(Some(&bot_key)).get(&sites).await;
    assert_eq!(res.status().as_u16(), 200, "the bot works before");
    let feed = app
        .rest_auth(Some(&bearer))
        .post_empty(&format!("/api/v1/t/{slug}/calendar/feed"))
        .await
        .expect_json(201)
        .await;
    let feed_path = feed["path"].as_str().expect("feed path").to_owned();
    assert_eq!(app.get(&feed_path).await.status().as_u16(), 200);
    let res = app
        .rest_auth(Some(&bearer))
        .post(
            &format!("/api/v1/tenants/{slug}/members"),
            &json!({"email": accomplice, "role": "admin"}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 202);
    let invitation = sink.wait_for(&accomplice, 1).await;
    let invitation_token = link_token(&invitation[0], "/invitations/accept");

    // The owner resets the password through the mailed link.
    let res = app
        .post_json(
            "/api/v1/auth/password-reset/request",
            &json!({"email": victim}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 202);
    let mails = sink.wait_for(&victim, 2).await;
    let reset = mails
        .iter()
        .find(|m| m["subject"] == "Reset your Kultiva password")
        .expect("reset mail");
    let token = link_token(reset, "/auth/reset-password");
    let res = app
        .post_json(
            "/api/v1/auth/password-reset/confirm",
            &json!({"token": token, "new_password": "the owner's own secret"}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 200);

    // Nothing the squatter handed out works any more.
    let res = app.rest_auth(Some(&bot_key)).get(&sites).await;
    assert_error(res, 401, "INVALID_TOKEN").await;
    let res = app.get(&feed_path).await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    assert_eq!(
        app.register(&accomplice, PASSWORD).await.status().as_u16(),
        201
    );
    let helper = app.login(&accomplice, PASSWORD).await;
    let res = app
        .rest_auth(Some(&format!("Bearer {}", helper.access)))
        .post(
            "/api/v1/invitations/accept",
            &json!({"token": invitation_token}),
        )
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    let owner = app.login(&victim, "the owner's own secret").await;
    let res = app
        .rest_auth(Some(&format!("Bearer {}", owner.access)))
        .get(&format!("/api/v1/tenants/{slug}/members"))
        .await;
    let members = res.expect_json(200).await;
    let members = members.as_array().expect("members");
    assert!(
        members.iter().all(|m| m["email"] != accomplice.as_str()),
        "the accomplice never joined: {members:?}"
    );

    // The notice says what was ended.
    let mails = sink.wait_for(&victim, 3).await;
    let notice = mails
        .iter()
        .find(|m| m["subject"] == "Your Kultiva password was changed")
        .expect("the reset-done notice");
    let text = notice["text"].as_str().expect("text");
    for said in [
        "every session of the account signed out",
        "1 service account(s) made by your account deactivated",
        "> \"Backup bot\"",
        "1 calendar feed link(s) revoked",
        "1 pending invitation(s) sent from your account withdrawn",
    ] {
        assert!(text.contains(said), "{said:?} missing in {text:?}");
    }
}

#[tokio::test]
async fn the_first_confirmation_ends_the_squatters_grants_and_says_so() {
    let sink = Sink::start().await;
    let app = mail_app(&own_database("confirm_takeback").await, &sink.url(), &[]).await;
    let victim = address("victimc");
    assert_eq!(app.register(&victim, PASSWORD).await.status().as_u16(), 201);
    let squatter = app.login(&victim, PASSWORD).await;
    let bearer = format!("Bearer {}", squatter.access);
    let gardens = app.rest_auth(Some(&bearer)).get_ok("/api/v1/tenants").await;
    let slug = gardens["items"][0]["slug"]
        .as_str()
        .expect("slug")
        .to_owned();
    let feed = app
        .rest_auth(Some(&bearer))
        .post_empty(&format!("/api/v1/t/{slug}/calendar/feed"))
        .await
        .expect_json(201)
        .await;
    let feed_path = feed["path"].as_str().expect("path").to_owned();
    let verification = sink.wait_for(&victim, 1).await;
    let token = link_token(&verification[0], "/auth/verify-email");
    let res = app
        .post_json("/api/v1/auth/verify-email", &json!({"token": token}))
        .await;
    assert_eq!(res.status().as_u16(), 200);
    assert_error(app.get(&feed_path).await, 404, "ENTITY_NOT_FOUND").await;
    let mails = sink.wait_for(&victim, 2).await;
    let notice = mails
        .iter()
        .find(|m| m["subject"] == "Your e-mail address is confirmed on Kultiva")
        .expect("the confirmation notice");
    let text = notice["text"].as_str().expect("text");
    assert!(text.contains("1 calendar feed link(s) revoked"), "{text}");
}

#[tokio::test]
async fn invitation_mails_quote_user_text_and_link_nothing_of_it() {
    let sink = Sink::start().await;
    let app = mail_app(&own_database("invite_quote").await, &sink.url(), &[]).await;
    let owner_email = address("phisher");
    assert_eq!(
        app.register(&owner_email, PASSWORD).await.status().as_u16(),
        201
    );
    let owner = app.login(&owner_email, PASSWORD).await;
    let auth = format!("Bearer {}", owner.access);
    let slug = unique_slug("quoted");
    let bait = "Your account is locked! Log in at https://evil.example/login or www.evil.example \
                \"now\"";
    let res = app
        .rest_auth(Some(&auth))
        .post("/api/v1/tenants", &json!({"slug": slug, "name": bait}))
        .await;
    assert_eq!(res.status().as_u16(), 201);
    let res = app
        .rest_auth(Some(&auth))
        .patch(
            "/api/v1/users/me",
            &json!({"display_name": "Support at help@evil.example"}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let owner = app.login(&owner_email, PASSWORD).await;
    let auth = format!("Bearer {}", owner.access);
    let target = address("target");
    let res = app
        .rest_auth(Some(&auth))
        .post(
            &format!("/api/v1/tenants/{slug}/members"),
            &json!({"email": target, "role": "viewer"}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 202);
    let mail = &sink.wait_for(&target, 1).await[0];
    let text = mail["text"].as_str().expect("text");
    assert_eq!(
        mail["content_type"], "text/plain",
        "no HTML part to link in"
    );
    // The only link in the mail is Kultiva's own.
    assert_eq!(text.matches("://").count(), 1, "{text}");
    assert!(text.contains(&format!("{FRONTEND}/invitations/accept?token=")));
    assert!(!text.contains("evil.example"), "{text}");
    assert!(!text.contains("help@"), "{text}");
    assert!(
        text.contains(
            "> Garden: \"Your account is locked! Log in at https[:]//evil[.]example/login"
        ),
        "{text}"
    );
    assert!(
        text.contains("> Invited by: \"Support at help [at] evil[.]example\""),
        "{text}"
    );
}
