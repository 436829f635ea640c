//! Local accounts: registration, login, cookies, refresh rotation with reuse detection, CSRF,
//! logout, logout-all, lockout and password change.

use serde_json::{Value, json};

use crate::support::{
    PASSWORD, Session, TestApp, assert_error, detail_fields, session_of, set_cookies, unique_slug,
};

async fn user_count(app: &TestApp, email: &str) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM platform.users WHERE email = $1")
        .bind(email.to_lowercase())
        .fetch_one(app.state.platform_pool())
        .await
        .expect("count")
}

#[tokio::test]
async fn register_returns_the_user_record_and_a_personal_garden() {
    let app = TestApp::full().await;
    let email = format!("{}@Example.test", unique_slug("Reg"));
    let res = app.register(&email, PASSWORD).await;
    assert_eq!(res.status().as_u16(), 201);
    let user: Value = res.json().await.expect("json");
    assert_eq!(user["email"], email.to_lowercase());
    assert_eq!(user["display_name"], "Tess Grower");
    assert_eq!(user["email_verified"], false);
    assert_eq!(user["is_active"], true);
    assert_eq!(user["last_login_at"], Value::Null);
    assert_eq!(user["avatar_url"], Value::Null);
    assert!(user["locale"].is_string() && user["timezone"].is_string());
    assert!(user["created_at"].is_string());
    assert!(user.get("password_hash").is_none() && user.get("password").is_none());

    // The password is stored as an argon2id hash, never as sent.
    let stored: String =
        sqlx::query_scalar("SELECT password_hash FROM platform.users WHERE email = $1")
            .bind(email.to_lowercase())
            .fetch_one(app.state.platform_pool())
            .await
            .expect("hash");
    assert!(
        stored.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"),
        "{stored}"
    );

    // The personal tenant exists and the user is its admin.
    let session = app.login(&email, PASSWORD).await;
    let res = app
        .rest_auth(Some(&format!("Bearer {}", session.access)))
        .get("/api/v1/tenants/")
        .await;
    let page: Value = res.json().await.expect("json");
    assert_eq!(page["total"], 1, "{page}");
    assert_eq!(page["items"][0]["kind"], "personal");
    assert_eq!(page["items"][0]["role"], "admin");
    let slug = page["items"][0]["slug"].as_str().expect("slug").to_owned();
    let res = app
        .rest_auth(Some(&format!("Bearer {}", session.access)))
        .get(&format!("/api/v1/t/{slug}/sites/"))
        .await;
    assert_eq!(res.status().as_u16(), 200, "the personal garden serves");

    // The same address again (any case) is a duplicate and changes nothing.
    // Personal slugs start with the address's local part; parallel tests make other tenants.
    let local = email
        .to_lowercase()
        .split('@')
        .next()
        .unwrap_or_default()
        .to_owned();
    let personal_count = || async {
        sqlx::query_scalar::<_, i64>(
            "SELECT count(*) FROM platform.tenants WHERE slug LIKE $1 || '-%'",
        )
        .bind(&local)
        .fetch_one(app.state.platform_pool())
        .await
        .expect("count")
    };
    assert_eq!(personal_count().await, 1);
    let res = app.register(&email.to_uppercase(), PASSWORD).await;
    assert_error(res, 409, "DUPLICATE_ENTRY").await;
    assert_eq!(user_count(&app, &email).await, 1);
    assert_eq!(personal_count().await, 1, "no tenant made");
}

/// Registration is one unit: the account, its verification mail and its active personal
/// garden (with the account as admin) commit together. Concurrent registrations of one
/// address race past the early duplicate check into the final transaction: exactly one wins,
/// and the losers leave neither an account nor a garden (their prepared gardens are removed,
/// none stays `provisioning`).
#[tokio::test]
async fn registration_commits_the_account_and_its_personal_garden_together() {
    let app = TestApp::full().await;
    let email = format!("{}@example.test", unique_slug("unit"));
    let answers =
        futures_util::future::join_all((0..4).map(|_| app.register(&email, PASSWORD))).await;
    let mut statuses: Vec<u16> = answers.iter().map(|r| r.status().as_u16()).collect();
    statuses.sort_unstable();
    assert_eq!(statuses, vec![201, 409, 409, 409], "{statuses:?}");
    assert_eq!(user_count(&app, &email).await, 1);

    let local = email.split('@').next().unwrap_or_default().to_owned();
    let gardens: Vec<(String, String, Option<String>)> = sqlx::query_as(
        "SELECT t.status, t.kind, m.role FROM platform.tenants t \
         LEFT JOIN platform.memberships m ON m.tenant_id = t.id \
         AND m.user_id = (SELECT id FROM platform.users WHERE email = $2) \
         WHERE t.slug LIKE $1 || '-%'",
    )
    .bind(&local)
    .bind(&email)
    .fetch_all(app.state.platform_pool())
    .await
    .expect("gardens");
    assert_eq!(
        gardens,
        vec![(
            "active".to_owned(),
            "personal".to_owned(),
            Some("admin".to_owned())
        )],
        "exactly one garden: active, personal, the account admin"
    );
    // One verification mail, the winner's.
    let mails: i64 =
        sqlx::query_scalar("SELECT count(*) FROM platform.mail_outbox WHERE recipient = $1")
            .bind(&email)
            .fetch_one(app.state.platform_pool())
            .await
            .expect("mails");
    assert_eq!(mails, 1);
}

#[tokio::test]
async fn bad_registrations_are_422_per_field_and_write_nothing() {
    let app = TestApp::full().await;
    let email = format!("{}@example.test", unique_slug("bad"));
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (
            json!({"email": email, "password": "short", "display_name": "A"}),
            vec!["body.password"],
        ),
        (
            json!({"email": email, "password": "x".repeat(129), "display_name": "A"}),
            vec!["body.password"],
        ),
        (
            json!({"email": "not-an-address", "password": PASSWORD, "display_name": "A"}),
            vec!["body.email"],
        ),
        (
            json!({"email": email, "password": PASSWORD, "display_name": "   "}),
            vec!["body.display_name"],
        ),
        (
            json!({"email": email, "password": 1234567890, "display_name": "A"}),
            vec!["body.password"],
        ),
        (
            json!({"email": email, "password": PASSWORD}),
            vec!["body.display_name"],
        ),
        (
            json!({}),
            vec!["body.email", "body.password", "body.display_name"],
        ),
        (
            json!({"email": email, "password": PASSWORD, "display_name": "A", "role": "admin"}),
            vec!["body.role"],
        ),
        (
            json!({"email": email, "password": "ten chars\u{0}!", "display_name": "A"}),
            vec!["body.password"],
        ),
    ];
    for (body, fields) in cases {
        let res = app.post_json("/api/v1/auth/register", &body).await;
        let err = assert_error(res, 422, "VALIDATION_ERROR").await;
        let mut got = detail_fields(&err);
        got.sort();
        let mut want: Vec<String> = fields.iter().map(|f| (*f).to_owned()).collect();
        want.sort();
        assert_eq!(got, want, "{body}");
    }
    // Exactly 10 and 128 characters are fine (counted in characters, not bytes).
    assert_eq!(
        app.register(
            &format!("{}@example.test", unique_slug("ten")),
            "äöüäöüäöüä"
        )
        .await
        .status()
        .as_u16(),
        201
    );
    assert_eq!(
        app.register(
            &format!("{}@example.test", unique_slug("max")),
            &"ß".repeat(128)
        )
        .await
        .status()
        .as_u16(),
        201
    );
    let res = app
        .post_raw("/api/v1/auth/register", "application/json", "{not json")
        .await;
    assert_error(res, 400, "MALFORMED_REQUEST").await;
    assert_eq!(user_count(&app, &email).await, 0, "nothing written");
}

#[tokio::test]
async fn login_issues_a_jwt_and_the_two_cookies() {
    let app = TestApp::full().await;
    let user = app.user("login").await;
    let res = app.login_response(&user.email, PASSWORD, false).await;
    assert_eq!(res.status().as_u16(), 200);
    let cookies = set_cookies(&res);
    let (_, refresh_line) = cookies.get("svc_refresh").expect("refresh cookie");
    let line = refresh_line.to_lowercase();
    assert!(line.contains("httponly"), "{line}");
    assert!(line.contains("path=/api/v1/auth"), "{line}");
    assert!(line.contains("samesite=strict"), "{line}");
    assert!(line.contains("secure"), "{line}");
    assert!(
        !line.contains("max-age"),
        "session cookie without remember_me: {line}"
    );
    let (_, csrf_line) = cookies.get("svc_csrf").expect("csrf cookie");
    assert!(
        !csrf_line.to_lowercase().contains("httponly"),
        "script-readable"
    );
    let body: Value = res.json().await.expect("json");
    assert_eq!(body["token_type"], "bearer");
    assert_eq!(body["expires_in"], 900);
    let token = body["access_token"].as_str().expect("token");
    assert_eq!(token.split('.').count(), 3);

    let res = app.login_response(&user.email, PASSWORD, true).await;
    let cookies = set_cookies(&res);
    let line = cookies["svc_refresh"].1.to_lowercase();
    assert!(
        line.contains(&format!("max-age={}", 30 * 86400)),
        "remember_me: {line}"
    );

    let me: Value = app
        .rest_key(token)
        .get("/api/v1/users/me")
        .await
        .json()
        .await
        .expect("json");
    assert_eq!(me["email"], user.email);
    assert!(me["last_login_at"].is_string(), "last login recorded");
}

#[tokio::test]
async fn wrong_and_unknown_credentials_get_the_same_401() {
    let app = TestApp::full().await;
    let user = app.user("wrong").await;
    let wrong = app
        .login_response(&user.email, "wrong password!", false)
        .await;
    assert!(set_cookies(&wrong).is_empty(), "no cookies on failure");
    let a = assert_error(wrong, 401, "UNAUTHORIZED").await;
    let unknown = app
        .login_response(
            &format!("{}@example.test", unique_slug("ghost")),
            PASSWORD,
            false,
        )
        .await;
    let b = assert_error(unknown, 401, "UNAUTHORIZED").await;
    assert_eq!(a["message"], b["message"]);
    let res = app
        .post_json("/api/v1/auth/login", &json!({"email": user.email}))
        .await;
    assert_error(res, 422, "VALIDATION_ERROR").await;
}

#[tokio::test]
async fn five_failures_lock_the_account_and_the_lock_survives_a_restart() {
    let app = TestApp::full().await;
    let user = app.user("lock").await;
    for attempt in 1..=4 {
        let res = app
            .login_response(&user.email, "not the password", false)
            .await;
        assert_error(res, 401, "UNAUTHORIZED").await;
        let _ = attempt;
    }
    let res = app
        .login_response(&user.email, "not the password", false)
        .await;
    let body = assert_error(res, 423, "ACCOUNT_LOCKED").await;
    assert!(
        body["message"]
            .as_str()
            .expect("message")
            .contains("15 minutes"),
        "{body}"
    );
    // Even the right password is refused while locked.
    let res = app.login_response(&user.email, PASSWORD, false).await;
    assert_error(res, 423, "ACCOUNT_LOCKED").await;

    // A new process (same database) still sees the lock.
    let restarted = TestApp::full().await;
    let res = restarted.login_response(&user.email, PASSWORD, false).await;
    assert_error(res, 423, "ACCOUNT_LOCKED").await;

    // When the lock has run out, the next lock lasts twice as long.
    sqlx::query(
        "UPDATE platform.users SET locked_until = now() - interval '1 second' WHERE email = $1",
    )
    .bind(&user.email)
    .execute(app.state.platform_pool())
    .await
    .expect("expire lock");
    for _ in 0..4 {
        let res = app.login_response(&user.email, "still wrong!", false).await;
        assert_error(res, 401, "UNAUTHORIZED").await;
    }
    let res = app.login_response(&user.email, "still wrong!", false).await;
    let body = assert_error(res, 423, "ACCOUNT_LOCKED").await;
    assert!(
        body["message"].as_str().expect("m").contains("30 minutes"),
        "{body}"
    );
}

async fn refresh(app: &TestApp, session: &Session, csrf: Option<&str>) -> reqwest::Response {
    let mut req = app
        .client
        .post(app.url("/api/v1/auth/refresh"))
        .header("cookie", session.cookie_header());
    if let Some(csrf) = csrf {
        req = req.header("x-csrf-token", csrf);
    }
    req.send().await.expect("sent")
}

#[tokio::test]
async fn refresh_rotates_and_reuse_revokes_the_whole_family() {
    let app = TestApp::full().await;
    let user = app.user("rotate").await;
    let first = user.session.clone();
    let csrf = first.csrf.clone().expect("csrf");

    let res = refresh(&app, &first, Some(&csrf)).await;
    assert_eq!(res.status().as_u16(), 200);
    let second = session_of(res).await;
    assert_ne!(second.refresh, first.refresh, "rotated");
    assert_ne!(second.csrf, first.csrf, "csrf renewed");
    let res = app
        .rest_auth(Some(&format!("Bearer {}", second.access)))
        .get("/api/v1/users/me")
        .await;
    assert_eq!(res.status().as_u16(), 200);

    // The first token again: reuse. The family dies, the second token with it.
    let res = refresh(&app, &first, Some(&csrf)).await;
    assert_error(res, 401, "INVALID_TOKEN").await;
    let res = refresh(&app, &second, second.csrf.as_deref()).await;
    assert_error(res, 401, "INVALID_TOKEN").await;

    // A new login starts a new family that works.
    let third = app.login(&user.email, PASSWORD).await;
    assert_eq!(
        refresh(&app, &third, third.csrf.as_deref())
            .await
            .status()
            .as_u16(),
        200
    );
}

#[tokio::test]
async fn refresh_needs_the_csrf_header_and_a_well_formed_cookie() {
    let app = TestApp::full().await;
    let user = app.user("csrf").await;
    let session = user.session.clone();
    let res = refresh(&app, &session, None).await;
    assert_error(res, 403, "FORBIDDEN").await;
    let res = refresh(&app, &session, Some("some-other-value")).await;
    assert_error(res, 403, "FORBIDDEN").await;
    // The refused attempts did not rotate: the token still works once.
    assert_eq!(
        refresh(&app, &session, session.csrf.as_deref())
            .await
            .status()
            .as_u16(),
        200
    );

    for bad in [
        "",
        "garbage",
        "00000000-0000-0000-0000-000000000000.short",
        "x.y.z",
    ] {
        let broken = Session {
            refresh: Some(bad.to_owned()),
            ..session.clone()
        };
        let res = refresh(&app, &broken, session.csrf.as_deref()).await;
        assert_error(res, 401, "INVALID_TOKEN").await;
    }
    let unknown = Session {
        refresh: Some(format!("{}.{}", uuid::Uuid::new_v4(), "A".repeat(43))),
        ..session.clone()
    };
    let res = refresh(&app, &unknown, session.csrf.as_deref()).await;
    assert_error(res, 401, "INVALID_TOKEN").await;
}

#[tokio::test]
async fn two_concurrent_refreshes_with_one_token_succeed_once() {
    let app = TestApp::full().await;
    for _ in 0..3 {
        let user = app.user("race").await;
        let s = user.session.clone();
        let csrf = s.csrf.clone().expect("csrf");
        let (a, b) = tokio::join!(
            refresh(&app, &s, Some(&csrf)),
            refresh(&app, &s, Some(&csrf))
        );
        let mut statuses = [a.status().as_u16(), b.status().as_u16()];
        statuses.sort();
        assert_eq!(statuses, [200, 401]);
    }
}

#[tokio::test]
async fn logout_ends_this_session_and_logout_all_ends_every_token() {
    let app = TestApp::full().await;
    let user = app.user("logout").await;
    let other = app.login(&user.email, PASSWORD).await;

    // Logout needs CSRF too.
    let res = app
        .client
        .post(app.url("/api/v1/auth/logout"))
        .header("cookie", user.session.cookie_header())
        .send()
        .await
        .expect("sent");
    assert_error(res, 403, "FORBIDDEN").await;
    let res = app
        .client
        .post(app.url("/api/v1/auth/logout"))
        .header("cookie", user.session.cookie_header())
        .header("x-csrf-token", user.session.csrf.clone().expect("csrf"))
        .send()
        .await
        .expect("sent");
    assert_eq!(res.status().as_u16(), 204);
    let cleared = set_cookies(&res);
    assert_eq!(cleared["svc_refresh"].0, "", "refresh cookie deleted");
    assert!(
        cleared["svc_refresh"]
            .1
            .to_lowercase()
            .contains("max-age=0")
    );
    let res = refresh(&app, &user.session, user.session.csrf.as_deref()).await;
    assert_error(res, 401, "INVALID_TOKEN").await;
    // The other session is untouched by a plain logout.
    let other = session_of({
        let res = refresh(&app, &other, other.csrf.as_deref()).await;
        assert_eq!(res.status().as_u16(), 200);
        res
    })
    .await;

    // logout-all: bearer + CSRF; afterwards old access tokens and refresh tokens are dead.
    let res = app
        .client
        .post(app.url("/api/v1/auth/logout-all"))
        .header("authorization", format!("Bearer {}", other.access))
        .header("cookie", other.cookie_header())
        .send()
        .await
        .expect("sent");
    assert_error(res, 403, "FORBIDDEN").await;
    let res = app
        .client
        .post(app.url("/api/v1/auth/logout-all"))
        .header("authorization", format!("Bearer {}", other.access))
        .header("cookie", other.cookie_header())
        .header("x-csrf-token", other.csrf.clone().expect("csrf"))
        .send()
        .await
        .expect("sent");
    assert_eq!(res.status().as_u16(), 204);
    for token in [&user.session.access, &other.access] {
        let res = app.rest_key(token).get("/api/v1/users/me").await;
        assert_error(res, 401, "INVALID_TOKEN").await;
    }
    let res = refresh(&app, &other, other.csrf.as_deref()).await;
    assert_error(res, 401, "INVALID_TOKEN").await;
    let fresh = app.login(&user.email, PASSWORD).await;
    let res = app
        .rest_auth(Some(&format!("Bearer {}", fresh.access)))
        .get("/api/v1/users/me")
        .await;
    assert_eq!(res.status().as_u16(), 200, "a new login works");
}

#[tokio::test]
async fn profile_updates_are_partial_and_validated() {
    let app = TestApp::full().await;
    let user = app.user("profile").await;
    let auth = user.bearer();
    let res = app
        .rest_auth(Some(&auth))
        .patch(
            "/api/v1/users/me",
            &json!({"locale": "de", "timezone": "Europe/Berlin"}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let me: Value = res.json().await.expect("json");
    assert_eq!(me["locale"], "de");
    assert_eq!(me["timezone"], "Europe/Berlin");
    assert_eq!(me["display_name"], "Tess Grower", "omitted field unchanged");

    let res = app
        .rest_auth(Some(&auth))
        .patch(
            "/api/v1/users/me",
            &json!({"avatar_url": "https://img.example/a.png"}),
        )
        .await;
    let me: Value = res.json().await.expect("json");
    assert_eq!(me["avatar_url"], "https://img.example/a.png");
    assert_eq!(me["locale"], "de");
    let res = app
        .rest_auth(Some(&auth))
        .patch("/api/v1/users/me", &json!({"avatar_url": null}))
        .await;
    let me: Value = res.json().await.expect("json");
    assert_eq!(me["avatar_url"], Value::Null, "null clears");

    for (body, field) in [
        (json!({"display_name": null}), "body.display_name"),
        (
            json!({"display_name": "x".repeat(121)}),
            "body.display_name",
        ),
        (json!({"locale": "German"}), "body.locale"),
        (json!({"timezone": "not a zone"}), "body.timezone"),
        (
            json!({"avatar_url": "javascript:alert(1)"}),
            "body.avatar_url",
        ),
        (json!({"email": "new@example.test"}), "body.email"),
    ] {
        let res = app
            .rest_auth(Some(&auth))
            .patch("/api/v1/users/me", &body)
            .await;
        let err = assert_error(res, 422, "VALIDATION_ERROR").await;
        assert_eq!(detail_fields(&err), vec![field.to_owned()], "{body}");
    }
    let me: Value = app
        .rest_auth(Some(&auth))
        .get("/api/v1/users/me")
        .await
        .json()
        .await
        .expect("json");
    assert_eq!(me["locale"], "de", "rejected updates changed nothing");
    assert_eq!(me["email"], user.email);
}

#[tokio::test]
async fn password_change_checks_the_old_one_and_ends_every_session() {
    let app = TestApp::full().await;
    let user = app.user("pwchange").await;
    let auth = user.bearer();
    let res = app
        .rest_auth(Some(&auth))
        .post(
            "/api/v1/users/me/password",
            &json!({"current_password": "wrong one!!", "new_password": "a brand new secret"}),
        )
        .await;
    let err = assert_error(res, 422, "VALIDATION_ERROR").await;
    assert_eq!(detail_fields(&err), vec!["body.current_password"]);
    let res = app
        .rest_auth(Some(&auth))
        .post(
            "/api/v1/users/me/password",
            &json!({"current_password": PASSWORD, "new_password": "short"}),
        )
        .await;
    assert_error(res, 422, "VALIDATION_ERROR").await;
    // Nothing changed so far: the old password still logs in.
    app.login(&user.email, PASSWORD).await;

    let res = app
        .rest_auth(Some(&auth))
        .post(
            "/api/v1/users/me/password",
            &json!({"current_password": PASSWORD, "new_password": "a brand new secret"}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 204);
    let res = app.rest_auth(Some(&auth)).get("/api/v1/users/me").await;
    assert_error(res, 401, "INVALID_TOKEN").await;
    let res = app.login_response(&user.email, PASSWORD, false).await;
    assert_error(res, 401, "UNAUTHORIZED").await;
    app.login(&user.email, "a brand new secret").await;
}

#[tokio::test]
async fn require_email_verification_blocks_login_until_confirmed() {
    let app = TestApp::full_env(&[("REQUIRE_EMAIL_VERIFICATION", "true")]).await;
    let email = format!("{}@example.test", unique_slug("unverified"));
    assert_eq!(app.register(&email, PASSWORD).await.status().as_u16(), 201);
    let res = app.login_response(&email, PASSWORD, false).await;
    assert!(set_cookies(&res).is_empty());
    assert_error(res, 403, "EMAIL_NOT_VERIFIED").await;
    // A wrong password is still just a wrong password (nothing revealed about verification).
    let res = app.login_response(&email, "wrong password", false).await;
    assert_error(res, 401, "UNAUTHORIZED").await;
}
