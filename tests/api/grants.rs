//! Grants need a person and live no longer than their maker's authority: calendar feeds,
//! invitations, role changes, removals and service accounts are refused to API keys; a feed
//! ends with its member's removal or deactivation; removing or demoting a member ends the
//! service accounts and invitations it made in that garden; any member may revoke their own
//! feed; member addresses are for admins; invitation budgets per inviter and per garden. The
//! take-back through the mailed reset link is in `mail.rs` (it needs the SMTP sink).

use kultiva::auth::Role;
use reqwest::Method;
use serde_json::{Value, json};

use crate::support::{Receiver, TestApp, TestUser, assert_rate_limited};

fn key_auth(key: &str) -> String {
    format!("Bearer {key}")
}

async fn feed_status(app: &TestApp, path: &str) -> u16 {
    app.get(path).await.status().as_u16()
}

async fn create_feed(app: &TestApp, slug: &str, who: &TestUser) -> String {
    let (s, body) = app
        .rest_as(who)
        .call(
            Method::POST,
            &format!("/api/v1/t/{slug}/calendar/feed"),
            None,
        )
        .await;
    assert_eq!(s, 201, "{body}");
    body["path"].as_str().expect("path").to_owned()
}

async fn pending_invitations(app: &TestApp, tenant: uuid::Uuid) -> i64 {
    sqlx::query_scalar(
        "SELECT count(*) FROM platform.invitations WHERE tenant_id = $1 AND status = 'pending'",
    )
    .bind(tenant)
    .fetch_one(app.state.platform_pool())
    .await
    .expect("count")
}

async fn role_of(app: &TestApp, tenant: uuid::Uuid, user: &TestUser) -> Option<Role> {
    let id = user.id();
    kultiva::directory::memberships::repo::role_in(app.state.platform_pool(), tenant, id)
        .await
        .expect("role")
}

async fn assert_person_required(status_and_body: (u16, Value)) {
    let (s, body) = status_and_body;
    assert_eq!(s, 403, "{body}");
    assert_eq!(body["error_code"], "FORBIDDEN", "{body}");
    assert!(
        body["message"]
            .as_str()
            .is_some_and(|m| m.contains("not an API key")),
        "{body}"
    );
    assert_eq!(body["details"][0]["code"], "person_required", "{body}");
}

#[tokio::test]
async fn an_api_key_grants_nothing_not_even_an_admins() {
    let app = TestApp::full().await;
    let t = app.tenant("grantkey").await;
    let admin = app.member(&t, Role::Admin).await;
    let grower = app.member(&t, Role::Grower).await;
    let key = key_auth(&app.api_key(&admin, None).await);
    let slug = t.slug.as_str();

    // A calendar feed: neither created nor rotated with a key; nothing stored.
    for path in ["calendar/feed", "calendar/feed/rotate"] {
        let path = format!("/api/v1/t/{slug}/{path}");
        assert_person_required(
            app.rest_auth(Some(&key))
                .call(Method::POST, &path, None)
                .await,
        )
        .await;
    }
    let feeds: i64 =
        sqlx::query_scalar("SELECT count(*) FROM platform.calendar_feeds WHERE tenant_id = $1")
            .bind(t.id)
            .fetch_one(app.state.platform_pool())
            .await
            .expect("count");
    assert_eq!(feeds, 0);

    // An invitation: refused, no row, no mail.
    let members = format!("/api/v1/tenants/{slug}/members");
    let invited = format!("{}@example.test", crate::support::unique_slug("keyinv"));
    let body = json!({"email": invited, "role": "admin"});
    assert_person_required(
        app.rest_auth(Some(&key))
            .call(Method::POST, &members, Some(&body))
            .await,
    )
    .await;
    assert_eq!(pending_invitations(&app, t.id).await, 0);

    // A role change and a removal: refused, nothing changed.
    let grower_path = format!("{members}/{}", grower.key);
    let body = json!({"role": "admin"});
    assert_person_required(
        app.rest_auth(Some(&key))
            .call(Method::PATCH, &grower_path, Some(&body))
            .await,
    )
    .await;
    assert_eq!(role_of(&app, t.id, &grower).await, Some(Role::Grower));
    assert_person_required(
        app.rest_auth(Some(&key))
            .call(Method::DELETE, &grower_path, None)
            .await,
    )
    .await;
    assert_eq!(role_of(&app, t.id, &grower).await, Some(Role::Grower));

    // A service account: refused.
    let accounts = format!("/api/v1/t/{slug}/service-accounts");
    let body = json!({"name": "Bot", "role": "admin"});
    let (s, _) = app
        .rest_auth(Some(&key))
        .call(Method::POST, &accounts, Some(&body))
        .await;
    assert_eq!(s, 403);

    // The same admin with an access token may.
    let body = json!({"role": "admin"});
    let (s, _) = app
        .rest_as(&admin)
        .call(Method::PATCH, &grower_path, Some(&body))
        .await;
    assert_eq!(s, 200);
    create_feed(&app, slug, &admin).await;
}

#[tokio::test]
async fn a_feed_ends_with_its_members_removal_or_deactivation() {
    let app = TestApp::full().await;
    let t = app.tenant("grantfeed").await;
    let admin = app.member(&t, Role::Admin).await;
    let leaver = app.member(&t, Role::Grower).await;
    let sleeper = app.member(&t, Role::Grower).await;
    let slug = t.slug.as_str();
    let leaver_feed = create_feed(&app, slug, &leaver).await;
    let sleeper_feed = create_feed(&app, slug, &sleeper).await;
    assert_eq!(feed_status(&app, &leaver_feed).await, 200);

    // Removed, then added back: the old link stays dead.
    let (s, _) = app
        .rest_as(&admin)
        .call(
            Method::DELETE,
            &format!("/api/v1/tenants/{slug}/members/{}", leaver.key),
            None,
        )
        .await;
    assert_eq!(s, 204);
    assert_eq!(feed_status(&app, &leaver_feed).await, 404);
    let id = leaver.id();
    app.add_member(&t, id, Role::Grower).await;
    assert_eq!(feed_status(&app, &leaver_feed).await, 404, "not revived");

    // Deactivated: the feed stops, and reactivation does not bring it back.
    let operator = app.platform_admin().await;
    for action in ["deactivate", "reactivate"] {
        let (s, body) = app
            .rest_as(&operator)
            .call(
                Method::POST,
                &format!("/api/v1/admin/users/{}/{action}", sleeper.key),
                None,
            )
            .await;
        assert_eq!(s, 200, "{body}");
        assert_eq!(feed_status(&app, &sleeper_feed).await, 404, "{action}");
    }
}

#[tokio::test]
async fn a_deactivated_members_feed_is_refused_even_while_its_row_exists() {
    let app = TestApp::full().await;
    let t = app.tenant("grantfeed2").await;
    let grower = app.member(&t, Role::Grower).await;
    let feed = create_feed(&app, t.slug.as_str(), &grower).await;
    // Deactivated behind the service's back (no grant clean-up ran): the lookup still refuses.
    sqlx::query("UPDATE platform.users SET is_active = false WHERE id = $1::uuid")
        .bind(&grower.key)
        .execute(app.state.platform_pool())
        .await
        .expect("deactivate");
    assert_eq!(feed_status(&app, &feed).await, 404);
}

#[tokio::test]
async fn a_member_demoted_to_viewer_revokes_their_own_feed() {
    let app = TestApp::full().await;
    let t = app.tenant("grantview").await;
    let admin = app.member(&t, Role::Admin).await;
    let grower = app.member(&t, Role::Grower).await;
    let slug = t.slug.as_str();
    let feed = create_feed(&app, slug, &grower).await;
    let (s, _) = app
        .rest_as(&admin)
        .call(
            Method::PATCH,
            &format!("/api/v1/tenants/{slug}/members/{}", grower.key),
            Some(&json!({"role": "viewer"})),
        )
        .await;
    assert_eq!(s, 200);
    assert_eq!(
        feed_status(&app, &feed).await,
        200,
        "a viewer's feed is fine"
    );
    let path = format!("/api/v1/t/{slug}/calendar/feed");
    let (s, body) = app.rest_as(&grower).call(Method::DELETE, &path, None).await;
    assert_eq!(s, 204, "{body}");
    assert_eq!(feed_status(&app, &feed).await, 404);
    // Creating one stays a grower's.
    let (s, _) = app.rest_as(&grower).call(Method::POST, &path, None).await;
    assert_eq!(s, 403);
}

/// A second admin of `t` makes a service account (admin) and an invitation; returns the
/// account's raw key.
async fn admin_hands_out(app: &TestApp, slug: &str, admin: &TestUser) -> String {
    let (s, account) = app
        .rest_as(admin)
        .call(
            Method::POST,
            &format!("/api/v1/t/{slug}/service-accounts"),
            Some(&json!({"name": "Deputy bot", "role": "admin"})),
        )
        .await;
    assert_eq!(s, 201, "{account}");
    let invited = format!("{}@example.test", crate::support::unique_slug("deputy"));
    let (s, _) = app
        .rest_as(admin)
        .call(
            Method::POST,
            &format!("/api/v1/tenants/{slug}/members"),
            Some(&json!({"email": invited, "role": "admin"})),
        )
        .await;
    assert_eq!(s, 202);
    key_auth(account["raw_key"].as_str().expect("raw key"))
}

#[tokio::test]
async fn demoting_or_removing_an_admin_ends_what_it_made_in_the_garden() {
    let app = TestApp::full().await;
    let t = app.tenant("grantdemote").await;
    let owner = app.member(&t, Role::Admin).await;
    let slug = t.slug.as_str();
    let sites = format!("/api/v1/t/{slug}/sites/");

    // Demoted to grower: the admin's service account and invitation end.
    let deputy = app.member(&t, Role::Admin).await;
    let bot = admin_hands_out(&app, slug, &deputy).await;
    assert_eq!(
        app.rest_auth(Some(&bot))
            .call(Method::GET, &sites, None)
            .await
            .0,
        200
    );
    assert_eq!(pending_invitations(&app, t.id).await, 1);
    let (s, _) = app
        .rest_as(&owner)
        .call(
            Method::PATCH,
            &format!("/api/v1/tenants/{slug}/members/{}", deputy.key),
            Some(&json!({"role": "grower"})),
        )
        .await;
    assert_eq!(s, 200);
    assert_eq!(
        app.rest_auth(Some(&bot))
            .call(Method::GET, &sites, None)
            .await
            .0,
        401
    );
    assert_eq!(pending_invitations(&app, t.id).await, 0);

    // Removed: its service account, invitation and feed end; nobody else's do.
    let owners_bot = admin_hands_out(&app, slug, &owner).await;
    let second = app.member(&t, Role::Admin).await;
    let bot = admin_hands_out(&app, slug, &second).await;
    let feed = create_feed(&app, slug, &second).await;
    assert_eq!(pending_invitations(&app, t.id).await, 2);
    let (s, _) = app
        .rest_as(&owner)
        .call(
            Method::DELETE,
            &format!("/api/v1/tenants/{slug}/members/{}", second.key),
            None,
        )
        .await;
    assert_eq!(s, 204);
    assert_eq!(
        app.rest_auth(Some(&bot))
            .call(Method::GET, &sites, None)
            .await
            .0,
        401
    );
    assert_eq!(feed_status(&app, &feed).await, 404);
    assert_eq!(
        pending_invitations(&app, t.id).await,
        1,
        "the owner's stays"
    );
    assert_eq!(
        app.rest_auth(Some(&owners_bot))
            .call(Method::GET, &sites, None)
            .await
            .0,
        200
    );
    let (_, accounts) = app
        .rest_as(&owner)
        .call(
            Method::GET,
            &format!("/api/v1/t/{slug}/service-accounts"),
            None,
        )
        .await;
    let names: Vec<&str> = accounts["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|a| a["name"].as_str())
        .collect();
    assert_eq!(names, ["Deputy bot"], "only the owner's bot is left");
}

#[tokio::test]
async fn member_addresses_are_shown_to_admins_only() {
    let app = TestApp::full().await;
    let t = app.tenant("grantmail").await;
    let admin = app.member(&t, Role::Admin).await;
    let grower = app.member(&t, Role::Grower).await;
    let viewer = app.member(&t, Role::Viewer).await;
    let path = format!("/api/v1/tenants/{}/members", t.slug);
    let grower_key = key_auth(&app.api_key(&grower, None).await);
    let admin_key = key_auth(&app.api_key(&admin, None).await);
    let emails = |body: &Value| -> Vec<Option<String>> {
        body.as_array()
            .expect("members")
            .iter()
            .map(|m| m["email"].as_str().map(str::to_owned))
            .collect()
    };
    for (who, auth, sees_all) in [
        (&admin, admin.bearer(), true),
        (&admin, admin_key, true),
        (&grower, grower.bearer(), false),
        (&grower, grower_key, false),
        (&viewer, viewer.bearer(), false),
    ] {
        let (s, body) = app
            .rest_auth(Some(&auth))
            .call(Method::GET, &path, None)
            .await;
        assert_eq!(s, 200);
        let shown = emails(&body);
        assert_eq!(shown.len(), 3);
        let visible: Vec<&String> = shown.iter().flatten().collect();
        if sees_all {
            assert_eq!(visible.len(), 3, "{body}");
        } else {
            assert_eq!(visible, [&who.email], "only the caller's own: {body}");
            assert!(
                body.as_array()
                    .expect("members")
                    .iter()
                    .all(|m| m["display_name"].is_string()),
                "{body}"
            );
        }
    }
}

#[tokio::test]
async fn invitations_have_budgets_per_inviter_and_per_garden() {
    let app = TestApp::full_env(&[
        ("INVITATIONS_PER_INVITER_PER_HOUR", "2"),
        ("INVITATIONS_PER_GARDEN_PER_HOUR", "3"),
    ])
    .await;
    let t = app.tenant("grantbudget").await;
    let first = app.member(&t, Role::Admin).await;
    let second = app.member(&t, Role::Admin).await;
    let path = format!("/api/v1/tenants/{}/members", t.slug);
    // This run's addresses only (the mail outbox is shared by every run on the database).
    let run = crate::support::unique_slug("budget");
    let invite = |who: &TestUser| {
        let email = format!("{run}-{}@example.test", crate::support::unique_slug("m"));
        let auth = who.bearer();
        let app = &app;
        let path = path.clone();
        async move {
            app.rest_auth(Some(&auth))
                .post(&path, &json!({"email": email, "role": "viewer"}))
                .await
        }
    };
    assert_eq!(invite(&first).await.status().as_u16(), 202);
    assert_eq!(invite(&first).await.status().as_u16(), 202);
    // The inviter's budget is spent; another admin of the garden still has its own.
    let (seconds, error) = assert_rate_limited(invite(&first).await).await;
    assert!(error.contains("per inviting account"), "{error}");
    assert!(
        seconds <= 3600,
        "the hour window says when it ends: {seconds}"
    );
    assert_eq!(invite(&second).await.status().as_u16(), 202);
    // The garden's budget (3) is spent too.
    let (_, error) = assert_rate_limited(invite(&second).await).await;
    assert!(error.contains("per garden"), "{error}");
    assert_eq!(
        pending_invitations(&app, t.id).await,
        3,
        "nothing stored when refused"
    );
    let mails: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM platform.mail_outbox WHERE kind = 'invitation' AND recipient LIKE $1",
    )
    .bind(format!("{run}-%"))
    .fetch_one(app.state.platform_pool())
    .await
    .expect("count");
    assert!(mails <= 3, "{mails} invitation mails");
}

/// Every table of the platform schema and of a garden's schema, read from the live catalogue,
/// is classified in `directory::grants` (ended by the take-back, or not a grant, with a
/// reason), and every classified table exists: a new kind of grant cannot be forgotten.
#[tokio::test]
async fn every_table_is_classified_for_the_take_back() {
    use kultiva::directory::grants::{Grant, PLATFORM_TABLES, TENANT_TABLES};
    let app = TestApp::full().await;
    let t = app.tenant("grantcat").await;
    let tables = |schema: String| {
        let pool = app.state.platform_pool().clone();
        async move {
            let mut names: Vec<String> = sqlx::query_scalar(
                "SELECT table_name::text FROM information_schema.tables
                 WHERE table_schema = $1 AND table_type = 'BASE TABLE' ORDER BY 1",
            )
            .bind(schema)
            .fetch_all(&pool)
            .await
            .expect("catalogue");
            names.sort();
            names
        }
    };
    for (schema, classified) in [
        ("platform".to_owned(), PLATFORM_TABLES),
        (t.schema_name.as_str().to_owned(), TENANT_TABLES),
    ] {
        let live = tables(schema.clone()).await;
        assert!(live.len() > 5, "{schema}: {live:?}");
        let unclassified: Vec<&String> = live
            .iter()
            .filter(|n| !classified.iter().any(|(c, _)| c == n))
            .collect();
        assert!(
            unclassified.is_empty(),
            "tables of {schema} not classified in directory::grants (ended by the take-back, \
             or not a grant and why): {unclassified:?}"
        );
        let stale: Vec<&str> = classified
            .iter()
            .map(|(c, _)| *c)
            .filter(|c| !live.iter().any(|n| n == c))
            .collect();
        assert!(
            stale.is_empty(),
            "classified but not in {schema}: {stale:?}"
        );
        for (name, grant) in classified {
            let why = match grant {
                Grant::Ended(w) | Grant::NotAGrant(w) => w,
            };
            assert!(!why.trim().is_empty(), "{name} needs a reason");
        }
    }
}

/// A full-mode service on a database of its own (its delivery worker must not take other
/// tests' deliveries), delivering to loopback, polling fast.
async fn takeback_app(test: &str) -> TestApp {
    let db = crate::support::sibling_database(&format!("grants_{test}")).await;
    TestApp::spawn_with(crate::support::Options {
        env: vec![
            ("SERVICE_MODE", "full".to_owned()),
            ("DATABASE_URL", db),
            ("WEBHOOK_ALLOW_PRIVATE_TARGETS", "true".to_owned()),
            ("WEBHOOK_POLL_MILLIS", "100".to_owned()),
            ("WEBHOOK_RETRY_SCHEDULE", "0.2".to_owned()),
        ],
        ..crate::support::Options::default()
    })
    .await
}

/// The owner resets the password with a reset link (the token as the mail would carry it).
async fn owner_resets(app: &TestApp, owner: &TestUser, password: &str) {
    use kultiva::auth::accounts::email_tokens::{self, Purpose};
    let token = email_tokens::issue(
        app.state.platform_pool(),
        owner.id(),
        Purpose::PasswordReset,
    )
    .await
    .expect("token");
    let res = app
        .post_json(
            "/api/v1/auth/password-reset/confirm",
            &json!({"token": token, "new_password": password}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 200);
}

async fn outbox_kinds(app: &TestApp, recipient: &str) -> Vec<String> {
    sqlx::query_scalar(
        "SELECT kind FROM platform.mail_outbox WHERE recipient = $1 ORDER BY created_at",
    )
    .bind(recipient)
    .fetch_all(app.state.platform_pool())
    .await
    .expect("outbox")
}

/// Items 2 and 3 of issue 43, end to end: the squatter's webhook and the accomplice it
/// admitted survived the take-back, and an API key could re-point the webhook. Now: keys
/// cannot change where events go; the take-back disables the squatter's webhook (and the
/// accomplice's, who is removed and mailed), nothing is delivered afterwards, the accomplice
/// cannot evict the owner or come back through the used invitation, and the owner is admin.
#[tokio::test]
async fn a_take_back_ends_the_squatters_webhooks_and_the_members_it_admitted() {
    let receiver = Receiver::start(|_, _| 200, "ok").await;
    let app = takeback_app("takeback").await;
    let tomato = crate::garden::species(&app, "Fixtura tomatoides").await;
    let squatter = app.user("victim").await;
    let gardens = app.rest_as(&squatter).get_ok("/api/v1/tenants").await;
    let slug = gardens["items"][0]["slug"]
        .as_str()
        .expect("the personal garden")
        .to_owned();
    let hooks = format!("/api/v1/t/{slug}/webhooks");
    let plants = format!("/api/v1/t/{slug}/plant-instances/");
    let hook_body = |path: &str| json!({"url": format!("{}/{path}", receiver.origin()), "events": ["plant.created"]});

    // The squatter's webhook, and an accomplice admitted as admin with its own.
    let (s, hook) = app
        .rest_as(&squatter)
        .call(Method::POST, &hooks, Some(&hook_body("squatter")))
        .await;
    assert_eq!(s, 201, "{hook}");
    let hook_path = format!("{hooks}/{}", hook["key"].as_str().expect("key"));
    let accomplice = app.user("accomplice").await;
    let (s, _) = app
        .rest_as(&squatter)
        .call(
            Method::POST,
            &format!("/api/v1/tenants/{slug}/members"),
            Some(&json!({"email": accomplice.email, "role": "admin"})),
        )
        .await;
    assert_eq!(s, 202);
    let accomplice = crate::invitations::accept_as(&app, &accomplice, &slug).await;
    let (s, theirs) = app
        .rest_as(&accomplice)
        .call(Method::POST, &hooks, Some(&hook_body("accomplice")))
        .await;
    assert_eq!(s, 201, "{theirs}");
    let theirs_path = format!("{hooks}/{}", theirs["key"].as_str().expect("key"));

    // An admin's API key cannot re-point, re-subscribe or enable a webhook; nothing changes.
    let key = key_auth(&app.api_key(&squatter, None).await);
    for body in [
        json!({"url": format!("{}/elsewhere", receiver.origin())}),
        json!({"events": ["plant.created", "harvest.recorded"]}),
        json!({"enabled": true}),
    ] {
        assert_person_required(
            app.rest_auth(Some(&key))
                .call(Method::PATCH, &hook_path, Some(&body))
                .await,
        )
        .await;
    }
    let (s, same) = app
        .rest_as(&squatter)
        .call(Method::GET, &hook_path, None)
        .await;
    assert_eq!(s, 200);
    assert_eq!(same["url"], hook["url"], "{same}");
    assert_eq!(same["events"], json!(["plant.created"]));
    // A description alone is no grant.
    let (s, _) = app
        .rest_auth(Some(&key))
        .call(
            Method::PATCH,
            &hook_path,
            Some(&json!({"description": "mine"})),
        )
        .await;
    assert_eq!(s, 200);

    // Before the take-back both deliver.
    let (s, _) = app
        .rest_as(&squatter)
        .call(Method::POST, &plants, Some(&json!({"species_key": tomato})))
        .await;
    assert_eq!(s, 201);
    let got = receiver.wait_for(2).await;
    let mut paths: Vec<&str> = got.iter().map(|r| r.path.as_str()).collect();
    paths.sort_unstable();
    assert_eq!(paths, ["/accomplice", "/squatter"]);

    owner_resets(&app, &squatter, "the owner's own secret").await;
    let owner = TestUser {
        key: squatter.key.clone(),
        email: squatter.email.clone(),
        session: app.login(&squatter.email, "the owner's own secret").await,
    };
    let tenant = kultiva::tenancy::registry::find_by_slug(
        app.state.platform_pool(),
        &kultiva::tenancy::TenantSlug::parse(&slug).expect("slug"),
    )
    .await
    .expect("registry")
    .expect("garden");

    // The accomplice is out: it cannot evict the owner, who is still the admin.
    let (s, body) = app
        .rest_as(&accomplice)
        .call(
            Method::DELETE,
            &format!("/api/v1/tenants/{slug}/members/{}", owner.key),
            None,
        )
        .await;
    assert_eq!(s, 404, "{body}");
    assert_eq!(role_of(&app, tenant.id, &owner).await, Some(Role::Admin));
    assert_eq!(role_of(&app, tenant.id, &accomplice).await, None);
    let (s, _) = app
        .rest_as(&accomplice)
        .call(Method::GET, &hooks, None)
        .await;
    assert_eq!(s, 404);
    // The used invitation does not let it back in.
    let (_, mine) = app
        .rest_as(&accomplice)
        .call(Method::GET, "/api/v1/users/me/invitations", None)
        .await;
    assert_eq!(mine.as_array().map(Vec::len), Some(0), "{mine}");
    assert_eq!(role_of(&app, tenant.id, &accomplice).await, None);
    // Told why; the owner got the notice.
    assert!(
        outbox_kinds(&app, &accomplice.email)
            .await
            .contains(&"membership_ended_take_back".to_owned())
    );
    assert!(
        outbox_kinds(&app, &owner.email)
            .await
            .contains(&"password_reset_done".to_owned())
    );

    // Both webhooks are disabled, with reasons the owner sees.
    for (path, says) in [
        (&hook_path, "taken back"),
        (&theirs_path, "no longer a member"),
    ] {
        let (s, now) = app.rest_as(&owner).call(Method::GET, path, None).await;
        assert_eq!(s, 200);
        assert_eq!(now["enabled"], false, "{now}");
        assert!(
            now["disabled_reason"]
                .as_str()
                .is_some_and(|r| r.contains(says)),
            "{now}"
        );
    }
    // The squatter's old session and key re-enable nothing.
    for auth in [squatter.bearer(), key] {
        let (s, _) = app
            .rest_auth(Some(&auth))
            .call(Method::PATCH, &hook_path, Some(&json!({"enabled": true})))
            .await;
        assert_eq!(s, 401);
    }

    // The owner's next plant goes nowhere: no event queued, nothing received.
    let (s, _) = app
        .rest_as(&owner)
        .call(Method::POST, &plants, Some(&json!({"species_key": tomato})))
        .await;
    assert_eq!(s, 201);
    tokio::time::sleep(std::time::Duration::from_millis(800)).await;
    assert_eq!(receiver.received().len(), 2, "nothing after the take-back");
    assert_eq!(
        crate::garden::count(&app, &tenant, "webhook_events").await,
        1
    );
}

/// A webhook the take-back did not reach (its garden did not answer; here: the epoch bumped
/// behind the service's back) never delivers: the worker refuses it, disables it with the
/// reason and fails its delivery.
#[tokio::test]
async fn the_worker_refuses_a_webhook_whose_maker_was_taken_back_since() {
    let receiver = Receiver::start(|_, _| 200, "ok").await;
    let app = takeback_app("epoch").await;
    let tomato = crate::garden::species(&app, "Fixtura tomatoides").await;
    let t = app.tenant("grantepoch").await;
    let admin = app.member(&t, Role::Admin).await;
    let grower = app.member(&t, Role::Grower).await;
    let hooks = format!("/api/v1/t/{}/webhooks", t.slug);
    let (s, hook) = app
        .rest_as(&admin)
        .call(
            Method::POST,
            &hooks,
            Some(&json!({"url": format!("{}/h", receiver.origin()), "events": ["plant.created"]})),
        )
        .await;
    assert_eq!(s, 201, "{hook}");
    sqlx::query("UPDATE platform.users SET grants_epoch = grants_epoch + 1 WHERE id = $1")
        .bind(admin.id())
        .execute(app.state.platform_pool())
        .await
        .expect("epoch");
    let (s, _) = app
        .rest_as(&grower)
        .call(
            Method::POST,
            &crate::garden::plants_path(&t),
            Some(&json!({"species_key": tomato})),
        )
        .await;
    assert_eq!(s, 201);
    let path = format!("{hooks}/{}", hook["key"].as_str().expect("key"));
    let start = std::time::Instant::now();
    let now = loop {
        let (_, now) = app.rest_as(&admin).call(Method::GET, &path, None).await;
        if now["enabled"] == false {
            break now;
        }
        assert!(start.elapsed().as_secs() < 60, "not disabled: {now}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    assert!(
        now["disabled_reason"]
            .as_str()
            .is_some_and(|r| r.contains("taken back")),
        "{now}"
    );
    let (_, deliveries) = app
        .rest_as(&admin)
        .call(Method::GET, &format!("{path}/deliveries"), None)
        .await;
    assert_eq!(deliveries["items"][0]["status"], "failed", "{deliveries}");
    assert!(receiver.received().is_empty(), "nothing was sent");

    // The admin enabling it again becomes its maker (current epoch): it delivers again.
    let (s, _) = app
        .rest_as(&admin)
        .call(Method::PATCH, &path, Some(&json!({"enabled": true})))
        .await;
    assert_eq!(s, 200);
    let (s, _) = app
        .rest_as(&grower)
        .call(
            Method::POST,
            &crate::garden::plants_path(&t),
            Some(&json!({"species_key": tomato})),
        )
        .await;
    assert_eq!(s, 201);
    receiver.wait_for(1).await;
    tokio::time::sleep(std::time::Duration::from_millis(600)).await;
    assert_eq!(
        receiver.received().len(),
        1,
        "only the new event, not the dropped one"
    );
}
