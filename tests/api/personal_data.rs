//! A person's own data: the personal export (`GET /users/me/export`) and the erasure of an
//! account (`DELETE /users/me`, `POST /users/me/erasure-confirmation`,
//! `DELETE /admin/users/{user_key}`), end to end over HTTP against PostgreSQL and Redis.

use std::path::Path;

use kultiva::auth::Role;
use kultiva::tenancy::TenantRecord;
use reqwest::Method;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::photos::{app_with, encode, picture, storage_dir};
use crate::support::{PASSWORD, TestApp, TestUser, assert_error, session_of, unique_slug};

const EXPORT: &str = "/api/v1/users/me/export";
const ME: &str = "/api/v1/users/me";

async fn export_of(app: &TestApp, auth: &str) -> reqwest::Response {
    app.rest_auth(Some(auth)).get(EXPORT).await
}

async fn erase(app: &TestApp, who: &TestUser, body: &Value) -> reqwest::Response {
    app.rest_as(who).send(Method::DELETE, ME, Some(body)).await
}

/// The personal garden registration made for the user.
async fn personal_garden(app: &TestApp, user: &TestUser) -> TenantRecord {
    let slug: String = sqlx::query_scalar(
        "SELECT t.slug FROM platform.tenants t JOIN platform.memberships m ON m.tenant_id = t.id
         WHERE m.user_id = $1 AND t.kind = 'personal'",
    )
    .bind(user.id())
    .fetch_one(app.state.platform_pool())
    .await
    .expect("personal garden");
    let slug = kultiva::tenancy::TenantSlug::parse(&slug).expect("slug");
    kultiva::tenancy::registry::find_by_slug(app.state.platform_pool(), &slug)
        .await
        .expect("read")
        .expect("tenant")
}

async fn post(app: &TestApp, who: &TestUser, path: &str, body: Value) -> Value {
    let res = app.rest_as(who).post(path, &body).await;
    let status = res.status().as_u16();
    let body: Value = res.json().await.unwrap_or(Value::Null);
    assert!((200..=202).contains(&status), "{path}: {status} {body}");
    body
}

async fn diary_entry(app: &TestApp, who: &TestUser, t: &TenantRecord, text: &str) -> String {
    let entry = post(
        app,
        who,
        &format!("/api/v1/t/{}/diary-entries", t.slug),
        json!({"text": text}),
    )
    .await;
    entry["key"].as_str().expect("key").to_owned()
}

async fn task(app: &TestApp, who: &TestUser, t: &TenantRecord, name: &str) -> String {
    let task = post(
        app,
        who,
        &format!("/api/v1/t/{}/tasks", t.slug),
        json!({"name": name}),
    )
    .await;
    task["key"].as_str().expect("key").to_owned()
}

async fn photo(app: &TestApp, who: &TestUser, t: &TenantRecord, entry: &str) -> String {
    let png = encode(&picture(64, 48), image::ImageFormat::Png);
    let res = app
        .client
        .post(app.url(&format!(
            "/api/v1/t/{}/diary-entries/{entry}/photos",
            t.slug
        )))
        .header("authorization", who.bearer())
        .header("content-type", "image/png")
        .body(png)
        .send()
        .await
        .expect("upload");
    assert_eq!(res.status().as_u16(), 201);
    let body: Value = res.json().await.expect("json");
    body["key"].as_str().expect("key").to_owned()
}

async fn scalar_in(app: &TestApp, t: &TenantRecord, sql: &str, key: &str) -> String {
    let sql = sql.replace("{s}", &t.schema_name.quoted());
    sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
        .bind(Uuid::parse_str(key).expect("uuid"))
        .fetch_one(app.state.platform_pool())
        .await
        .expect("row")
}

async fn users_with_email(app: &TestApp, email: &str) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM platform.users WHERE email = $1")
        .bind(email)
        .fetch_one(app.state.platform_pool())
        .await
        .expect("count")
}

/// Waits for the audit row of `action` by `account` (the audit worker writes in batches).
async fn audited(app: &TestApp, account: Uuid, action: &str) {
    for _ in 0..100 {
        let n: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM platform.mcp_audit_log WHERE account_id = $1 AND tool_name = $2",
        )
        .bind(account)
        .bind(action)
        .fetch_one(app.state.platform_pool())
        .await
        .expect("count");
        if n > 0 {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("no audit row {action} for {account}");
}

fn dir_has(dir: &Path, tenant: Uuid) -> bool {
    dir.join(tenant.to_string()).exists()
}

#[tokio::test]
async fn the_export_holds_the_person_and_no_secret() {
    let app = TestApp::full_env(&[
        ("MCP_SERVER_ENABLED", "true"),
        ("WEBHOOK_ALLOW_PRIVATE_TARGETS", "true"),
    ])
    .await;
    let anna = app.user("anna").await;
    let home = personal_garden(&app, &anna).await;
    // A shared garden where Anna grows, beside someone else.
    let shared = app.tenant("shared").await;
    app.add_member(&shared, anna.id(), Role::Grower).await;
    let bert = app.member(&shared, Role::Admin).await;

    let raw_key = app.api_key(&anna, None).await;
    let service_account = post(
        &app,
        &anna,
        &format!("/api/v1/t/{}/service-accounts", home.slug),
        json!({"name": "Anna's bot", "role": "viewer"}),
    )
    .await;
    let feed = post(
        &app,
        &anna,
        &format!("/api/v1/t/{}/calendar/feed", home.slug),
        json!({}),
    )
    .await;
    let invitee = format!("{}@example.test", unique_slug("invitee"));
    post(
        &app,
        &anna,
        &format!("/api/v1/tenants/{}/members", home.slug),
        json!({"email": invitee, "role": "viewer"}),
    )
    .await;
    let webhook = post(
        &app,
        &anna,
        &format!("/api/v1/t/{}/webhooks", home.slug),
        json!({"url": "http://127.0.0.1:9/hook", "events": ["plant.created"]}),
    )
    .await;
    let webhook_secret = webhook["secret"].as_str().expect("secret").to_owned();
    let mine = diary_entry(&app, &anna, &home, "Anna's own note").await;
    let there = diary_entry(&app, &anna, &shared, "Anna's note in the shared garden").await;
    let bert_note = diary_entry(&app, &bert, &shared, "Bert's private thoughts").await;
    let anna_task = task(&app, &anna, &shared, "Anna's task").await;
    let bert_task = task(&app, &bert, &shared, "Bert's task").await;

    let res = export_of(&app, &anna.bearer()).await;
    assert_eq!(res.status().as_u16(), 200);
    let disposition = crate::support::header(&res, "content-disposition").expect("attachment");
    assert!(disposition.starts_with("attachment; filename=\"kultiva-personal-export-"));
    assert_eq!(
        crate::support::header(&res, "cache-control").as_deref(),
        Some("no-store")
    );
    let text = res.text().await.expect("body");
    let doc: Value = serde_json::from_str(&text).expect("one JSON document");

    assert_eq!(doc["format"], "kultiva.personal_export");
    assert_eq!(doc["account"]["key"], anna.key.as_str());
    assert_eq!(doc["account"]["email"], anna.email.as_str());
    assert!(doc["preferences"].is_null() || doc["preferences"].is_object());
    let slugs: Vec<&str> = doc["memberships"]
        .as_array()
        .expect("memberships")
        .iter()
        .map(|m| m["slug"].as_str().expect("slug"))
        .collect();
    assert!(slugs.contains(&home.slug.as_str()) && slugs.contains(&shared.slug.as_str()));
    assert_eq!(doc["identities"], json!([]), "no provider sign-in linked");
    let keys = doc["api_keys"].as_array().expect("api keys");
    assert_eq!(keys.len(), 1);
    assert_eq!(keys[0]["label"], "test key");
    assert!(raw_key.starts_with(keys[0]["key_prefix"].as_str().expect("prefix")));
    assert_eq!(doc["service_accounts"][0]["display_name"], "Anna's bot");
    assert_eq!(
        doc["service_accounts"][0]["key"],
        service_account["key"].clone()
    );
    assert_eq!(doc["calendar_feeds"][0]["tenant_slug"], home.slug.as_str());
    assert_eq!(doc["invitations_sent"][0]["role"], "viewer");
    assert_eq!(doc["sessions"].as_array().expect("sessions").len(), 1);
    assert!(doc["sessions"][0]["opened_at"].is_string());
    assert!(doc["audit"].is_array());

    let garden = |slug: &str| {
        doc["gardens"]
            .as_array()
            .expect("gardens")
            .iter()
            .find(|g| g["slug"] == slug)
            .cloned()
            .expect("garden in the export")
    };
    let keys_of = |g: &Value, table: &str| -> Vec<String> {
        g["records"][table]
            .as_array()
            .unwrap_or_else(|| panic!("{table}"))
            .iter()
            .map(|r| r["id"].as_str().expect("id").to_owned())
            .collect()
    };
    assert_eq!(
        keys_of(&garden(home.slug.as_str()), "diary_entries"),
        vec![mine]
    );
    let shared_doc = garden(shared.slug.as_str());
    assert_eq!(shared_doc["role"], "grower");
    assert_eq!(keys_of(&shared_doc, "diary_entries"), vec![there]);
    assert_eq!(keys_of(&shared_doc, "tasks"), vec![anna_task]);
    // Nobody else's records, nobody else's address.
    for other in [&bert_note, &bert_task] {
        assert!(!text.contains(other.as_str()), "{other} leaked");
    }
    assert!(!text.contains("Bert's private thoughts"));
    assert!(!text.contains(&bert.email));
    assert!(!text.contains(&invitee), "the invitee's address is theirs");
    // No secret: not the key, its digest, the password hash, a refresh token or the feed token.
    let digest = kultiva::auth::secrets::SecretHash::of(&raw_key).to_hex();
    let feed_token = feed["token"].as_str().expect("feed token");
    let refresh = anna.session.refresh.clone().expect("refresh cookie");
    let refresh_secret = refresh.split('.').nth(1).expect("secret part");
    let webhook_secret = webhook_secret.trim_start_matches("whsec_");
    for secret in [
        raw_key.as_str(),
        digest.as_str(),
        feed_token,
        refresh_secret,
        webhook_secret,
        "$argon2",
    ] {
        assert!(!text.contains(secret), "a secret is in the export");
    }
    assert!(!text.contains("password_hash") && !text.contains("key_hash"));

    // The export is audited.
    audited(&app, anna.id(), "http.personal_export").await;

    // An API key cannot take it; nobody without a credential can.
    let res = export_of(&app, &format!("Bearer {raw_key}")).await;
    assert_error(res, 403, "FORBIDDEN").await;
    let res = app.get(EXPORT).await;
    assert_error(res, 401, "UNAUTHORIZED").await;
}

#[tokio::test]
async fn the_export_is_in_the_hourly_transfer_budget() {
    let app = TestApp::full_env(&[("GARDEN_TRANSFERS_PER_ACCOUNT_PER_HOUR", "1")]).await;
    let anna = app.user("budget").await;
    assert_eq!(export_of(&app, &anna.bearer()).await.status().as_u16(), 200);
    let (seconds, _) =
        crate::support::assert_rate_limited(export_of(&app, &anna.bearer()).await).await;
    assert!(seconds <= 3600);
}

#[tokio::test]
async fn erasure_removes_the_account_its_gardens_and_files_and_keeps_shared_records() {
    let dir = storage_dir();
    let app = app_with(&dir, &[]).await;
    let anna = app.user("erased").await;
    let home = personal_garden(&app, &anna).await;
    let shared = app.tenant("kept").await;
    app.add_member(&shared, anna.id(), Role::Grower).await;
    let bert = app.member(&shared, Role::Admin).await;

    let raw_key = app.api_key(&anna, None).await;
    let home_entry = diary_entry(&app, &anna, &home, "At home").await;
    photo(&app, &anna, &home, &home_entry).await;
    let shared_entry = diary_entry(&app, &anna, &shared, "In the shared garden").await;
    let shared_photo = photo(&app, &anna, &shared, &shared_entry).await;
    let shared_task = task(&app, &anna, &shared, "Water the beans").await;
    assert!(dir_has(&dir, home.id) && dir_has(&dir, shared.id));

    // A wrong password changes nothing.
    let res = erase(&app, &anna, &json!({"password": "not the password"})).await;
    let body = assert_error(res, 422, "VALIDATION_ERROR").await;
    assert_eq!(body["details"][0]["field"], "body.password");
    let res = erase(&app, &anna, &json!({})).await;
    assert_error(res, 422, "VALIDATION_ERROR").await;
    let res = erase(
        &app,
        &anna,
        &json!({"password": PASSWORD, "confirmation_token": "x"}),
    )
    .await;
    assert_error(res, 422, "VALIDATION_ERROR").await;
    // An API key cannot erase the account it belongs to.
    let res = app
        .rest_key(&raw_key)
        .send(Method::DELETE, ME, Some(&json!({"password": PASSWORD})))
        .await;
    assert_error(res, 403, "FORBIDDEN").await;
    assert_eq!(users_with_email(&app, &anna.email).await, 1);
    assert_eq!(
        app.get_with(ME, &[("authorization", &anna.bearer())])
            .await
            .status()
            .as_u16(),
        200
    );

    let res = erase(&app, &anna, &json!({"password": PASSWORD})).await;
    assert_eq!(res.status().as_u16(), 200);
    let cleared = crate::support::set_cookies(&res);
    assert!(
        cleared.contains_key("svc_refresh"),
        "the refresh cookie is cleared"
    );
    let erased: Value = res.json().await.expect("json");
    assert_eq!(erased["gardens_dropped"], json!([home.slug.as_str()]));
    assert_eq!(erased["gardens_left"], json!([shared.slug.as_str()]));

    // The account is gone, with its credentials.
    assert_eq!(users_with_email(&app, &anna.email).await, 0);
    let res = app.get_with(ME, &[("authorization", &anna.bearer())]).await;
    assert_eq!(res.status().as_u16(), 401);
    let res = app
        .get_with(ME, &[("authorization", &format!("Bearer {raw_key}"))])
        .await;
    assert_eq!(res.status().as_u16(), 401);
    let res = app
        .client
        .post(app.url("/api/v1/auth/refresh"))
        .header("cookie", anna.session.cookie_header())
        .header("x-csrf-token", anna.session.csrf.clone().expect("csrf"))
        .send()
        .await
        .expect("refresh");
    assert_eq!(res.status().as_u16(), 401);
    let res = app.login_response(&anna.email, PASSWORD, false).await;
    assert_eq!(res.status().as_u16(), 401);
    for table in [
        "memberships",
        "api_keys",
        "email_tokens",
        "calendar_feeds",
        "user_preferences",
    ] {
        let n: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "SELECT count(*) FROM platform.{table} WHERE user_id = $1"
        )))
        .bind(anna.id())
        .fetch_one(app.state.platform_pool())
        .await
        .expect("count");
        assert_eq!(n, 0, "{table}");
    }

    // The personal garden is dropped with its schema and its photo files.
    assert!(
        kultiva::tenancy::registry::find_by_id(app.state.platform_pool(), home.id)
            .await
            .expect("read")
            .is_none()
    );
    let schemas: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM information_schema.schemata WHERE schema_name = $1",
    )
    .bind(home.schema_name.as_str())
    .fetch_one(app.state.platform_pool())
    .await
    .expect("count");
    assert_eq!(schemas, 0);
    assert!(
        !dir_has(&dir, home.id),
        "the dropped garden's photos are gone"
    );

    // The shared garden keeps the records (and the photo with its entry), by a deleted user.
    let sql = "SELECT author_kind || ' ' || author_id FROM {s}.diary_entries WHERE id = $1";
    assert_eq!(
        scalar_in(&app, &shared, sql, &shared_entry).await,
        "deleted 00000000-0000-0000-0000-000000000000"
    );
    let sql = "SELECT uploaded_by::text FROM {s}.diary_photos WHERE id = $1";
    assert_eq!(
        scalar_in(&app, &shared, sql, &shared_photo).await,
        "00000000-0000-0000-0000-000000000000"
    );
    let sql = "SELECT created_by FROM {s}.tasks WHERE id = $1";
    assert_eq!(
        scalar_in(&app, &shared, sql, &shared_task).await,
        "deleted_user"
    );
    assert!(dir_has(&dir, shared.id), "the kept photo's files stay");
    let res = app
        .get_with(
            &format!("/api/v1/t/{}/diary-entries/{shared_entry}", shared.slug),
            &[("authorization", &bert.bearer())],
        )
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let entry: Value = res.json().await.expect("json");
    assert_eq!(entry["author_kind"], "deleted");
    assert!(!entry.to_string().contains(&anna.key));

    // The erasure is audited, and the address can register again.
    audited(&app, anna.id(), "http.account_erasure").await;
    let rows: i64 =
        sqlx::query_scalar("SELECT count(*) FROM platform.mcp_audit_log WHERE account_id = $1")
            .bind(anna.id())
            .fetch_one(app.state.platform_pool())
            .await
            .expect("count");
    assert_eq!(rows, 1, "only the erasure's own row names the old id");
    let res = app.register(&anna.email, PASSWORD).await;
    assert_eq!(res.status().as_u16(), 201);
    let again: Value = res.json().await.expect("json");
    assert_ne!(again["key"], anna.key.as_str());
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_shared_garden_without_another_admin_blocks_the_erasure() {
    let app = TestApp::full().await;
    let anna = app.user("soleadmin").await;
    let shared = app.tenant("needsadmin").await;
    app.add_member(&shared, anna.id(), Role::Admin).await;
    let carl = app.member(&shared, Role::Grower).await;
    let entry = diary_entry(&app, &anna, &shared, "Still mine").await;

    let res = erase(&app, &anna, &json!({"password": PASSWORD})).await;
    let body = assert_error(res, 409, "STATE_CONFLICT").await;
    let details = body["details"].as_array().expect("details");
    assert_eq!(details.len(), 1, "{body}");
    assert_eq!(details[0]["field"], format!("gardens.{}", shared.slug));
    assert_eq!(details[0]["code"], "sole_admin");
    // Nothing changed: the account, its personal garden, its records.
    assert_eq!(users_with_email(&app, &anna.email).await, 1);
    let home = personal_garden(&app, &anna).await;
    assert_eq!(home.kind, kultiva::tenancy::TenantKind::Personal);
    let sql = "SELECT author_kind FROM {s}.diary_entries WHERE id = $1";
    assert_eq!(scalar_in(&app, &shared, sql, &entry).await, "user");
    app.login(&anna.email, PASSWORD).await;

    // Another admin named: the erasure goes through and the garden stays with Carl.
    let res = app
        .rest_as(&anna)
        .patch(
            &format!("/api/v1/tenants/{}/members/{}", shared.slug, carl.key),
            &json!({"role": "admin"}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let res = erase(&app, &anna, &json!({"password": PASSWORD})).await;
    assert_eq!(res.status().as_u16(), 200);
    let erased: Value = res.json().await.expect("json");
    assert_eq!(erased["gardens_left"], json!([shared.slug.as_str()]));
    let sql = "SELECT author_kind FROM {s}.diary_entries WHERE id = $1";
    assert_eq!(scalar_in(&app, &shared, sql, &entry).await, "deleted");
}

#[tokio::test]
async fn platform_admins_erase_accounts_and_nobody_else_does() {
    let app = TestApp::full().await;
    let admin = app.platform_admin().await;
    let dora = app.user("dora").await;
    let eve = app.user("eve").await;
    let path = format!("/api/v1/admin/users/{}", dora.key);

    let res = app.rest_as(&eve).delete(&path).await;
    assert_error(res, 403, "FORBIDDEN").await;
    assert_eq!(users_with_email(&app, &dora.email).await, 1);
    let res = app
        .rest_as(&admin)
        .delete(&format!("/api/v1/admin/users/{}", admin.key))
        .await;
    assert_error(res, 403, "FORBIDDEN").await;
    let res = app
        .rest_as(&admin)
        .delete(&format!("/api/v1/admin/users/{}", Uuid::new_v4()))
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;

    let home = personal_garden(&app, &dora).await;
    let res = app.rest_as(&admin).delete(&path).await;
    assert_eq!(res.status().as_u16(), 200);
    let erased: Value = res.json().await.expect("json");
    assert_eq!(erased["gardens_dropped"], json!([home.slug.as_str()]));
    assert_eq!(users_with_email(&app, &dora.email).await, 0);
    let res = app.get_with(ME, &[("authorization", &dora.bearer())]).await;
    assert_eq!(res.status().as_u16(), 401);
    audited(&app, admin.id(), "http.admin_account_erasure").await;
    // Gone is gone: a second erasure is 404.
    let res = app.rest_as(&admin).delete(&path).await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
}

#[tokio::test]
async fn an_account_without_a_password_confirms_by_mailed_link() {
    use crate::mail::{FRONTEND, Sink, link_token, mail_app, own_database};
    let sink = Sink::start().await;
    let db = own_database("erasure_link").await;
    let app = mail_app(&db, &sink.url(), &[]).await;
    let email = format!("{}@example.test", unique_slug("nopass"));
    assert_eq!(app.register(&email, PASSWORD).await.status().as_u16(), 201);
    let res = app.login_response(&email, PASSWORD, false).await;
    let session = session_of(res).await;
    let bearer = format!("Bearer {}", session.access);
    // As an account made through an identity provider has it: no password.
    sqlx::query("UPDATE platform.users SET password_hash = NULL WHERE email = $1")
        .bind(&email)
        .execute(app.state.platform_pool())
        .await
        .expect("no password");
    app.state.caches().forget_user(
        sqlx::query_scalar("SELECT id FROM platform.users WHERE email = $1")
            .bind(&email)
            .fetch_one(app.state.platform_pool())
            .await
            .expect("id"),
    );

    let res = app
        .rest_auth(Some(&bearer))
        .send(Method::DELETE, ME, Some(&json!({"password": PASSWORD})))
        .await;
    let body = assert_error(res, 422, "VALIDATION_ERROR").await;
    assert!(
        body["details"][0]["reason"]
            .as_str()
            .expect("reason")
            .contains("confirmation_token")
    );
    let res = app
        .rest_auth(Some(&bearer))
        .send(
            Method::DELETE,
            ME,
            Some(&json!({"confirmation_token": "made-up"})),
        )
        .await;
    assert_error(res, 422, "VALIDATION_ERROR").await;
    assert_eq!(users_with_email(&app, &email).await, 1);

    let res = app
        .rest_auth(Some(&bearer))
        .post_empty("/api/v1/users/me/erasure-confirmation")
        .await;
    assert_eq!(res.status().as_u16(), 202);
    // The verification mail of the registration, then the link.
    let mails = sink.wait_for(&email, 2).await;
    let mail = mails
        .iter()
        .find(|m| {
            m["subject"]
                .as_str()
                .is_some_and(|s| s.contains("deletion"))
        })
        .expect("the confirmation mail");
    let token = link_token(mail, "/account/erase");
    assert!(
        mail["text"]
            .as_str()
            .expect("text")
            .contains(&format!("{FRONTEND}/account/erase?token="))
    );

    let res = app
        .rest_auth(Some(&bearer))
        .send(
            Method::DELETE,
            ME,
            Some(&json!({"confirmation_token": token})),
        )
        .await;
    assert_eq!(res.status().as_u16(), 200);
    assert_eq!(users_with_email(&app, &email).await, 0);
    // The last mail says so; the link is used up with the account.
    let mails = sink.wait_for(&email, 3).await;
    assert!(
        mails
            .iter()
            .any(|m| m["subject"] == "Your Kultiva account was deleted")
    );
    sink.stop().await;
}
