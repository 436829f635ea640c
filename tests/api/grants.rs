//! Grants need a person and live no longer than their maker's authority: calendar feeds,
//! invitations, role changes, removals and service accounts are refused to API keys; a feed
//! ends with its member's removal or deactivation; removing or demoting a member ends the
//! service accounts and invitations it made in that garden; any member may revoke their own
//! feed; member addresses are for admins; invitation budgets per inviter and per garden. The
//! take-back through the mailed reset link is in `mail.rs` (it needs the SMTP sink).

use kultiva::auth::Role;
use reqwest::Method;
use serde_json::{Value, json};

use crate::support::{TestApp, TestUser, assert_rate_limited};

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
