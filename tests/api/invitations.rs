//! Invitations (adding a member asks the invited address first): the same answer for known and
//! unknown addresses, nobody becomes a member without accepting, answers are single-use and by
//! the invited address only, invitations expire, roles stay within the inviter's own, and a
//! key limited to one garden cannot answer for the account. The mailed-link flow of an address
//! without an account is in `mail.rs` (it needs the SMTP sink).

use serde_json::{Value, json};
use uuid::Uuid;

use kultiva::auth::accounts::email_tokens::{self, Purpose};

use crate::support::{PASSWORD, TestApp, TestUser, assert_error, unique_slug};

/// An organisation garden of `owner` (admin): its slug.
pub async fn garden(app: &TestApp, owner: &TestUser) -> String {
    let slug = unique_slug("inv");
    let res = app
        .rest_as(owner)
        .post(
            "/api/v1/tenants",
            &json!({"slug": slug, "name": "Shared garden"}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 201);
    slug
}

async fn invite(
    app: &TestApp,
    by: &TestUser,
    slug: &str,
    email: &str,
    role: &str,
) -> reqwest::Response {
    app.rest_as(by)
        .post(
            &format!("/api/v1/tenants/{slug}/members"),
            &json!({"email": email, "role": role}),
        )
        .await
}

/// Confirms the user's address through the real route (which, verification being optional,
/// ends the earlier sessions) and logs in again.
pub async fn confirmed(app: &TestApp, user: &TestUser) -> TestUser {
    let id = user.id();
    let token = email_tokens::issue(app.state.platform_pool(), id, Purpose::VerifyEmail)
        .await
        .expect("token");
    let res = app
        .post_json("/api/v1/auth/verify-email", &json!({"token": token}))
        .await;
    assert_eq!(res.status().as_u16(), 200);
    TestUser {
        key: user.key.clone(),
        email: user.email.clone(),
        session: app.login(&user.email, PASSWORD).await,
    }
}

async fn my_invitations(app: &TestApp, user: &TestUser) -> Vec<Value> {
    let res = app.rest_as(user).get("/api/v1/users/me/invitations").await;
    assert_eq!(res.status().as_u16(), 200);
    res.json::<Value>()
        .await
        .expect("json")
        .as_array()
        .cloned()
        .expect("array")
}

/// Confirms `user`'s address, accepts the open invitation to `slug` from the account, and
/// returns the user with a fresh session.
pub async fn accept_as(app: &TestApp, user: &TestUser, slug: &str) -> TestUser {
    let user = confirmed(app, user).await;
    let invitation = my_invitations(app, &user)
        .await
        .into_iter()
        .find(|i| i["tenant_slug"] == slug)
        .expect("an invitation to the garden");
    let key = invitation["key"].as_str().expect("key");
    let res = app
        .rest_as(&user)
        .post_empty(&format!("/api/v1/users/me/invitations/{key}/accept"))
        .await;
    assert_eq!(res.status().as_u16(), 200);
    user
}

async fn members(app: &TestApp, owner: &TestUser, slug: &str) -> Vec<Value> {
    app.rest_as(owner)
        .get(&format!("/api/v1/tenants/{slug}/members"))
        .await
        .json::<Value>()
        .await
        .expect("json")
        .as_array()
        .cloned()
        .expect("array")
}

async fn invitation_mails(app: &TestApp, recipient: &str) -> i64 {
    sqlx::query_scalar(
        "SELECT count(*) FROM platform.mail_outbox WHERE recipient = $1 AND kind = 'invitation'",
    )
    .bind(recipient)
    .fetch_one(app.state.platform_pool())
    .await
    .expect("count")
}

#[tokio::test]
async fn known_and_unknown_addresses_get_the_same_answer_and_nobody_joins_unasked() {
    let app = TestApp::full().await;
    let owner = app.user("owner").await;
    let slug = garden(&app, &owner).await;
    let known = app.user("known").await;
    let unknown = format!("{}@example.test", unique_slug("unknown"));
    let mut shapes = Vec::new();
    for email in [known.email.as_str(), unknown.as_str()] {
        let res = invite(&app, &owner, &slug, email, "grower").await;
        assert_eq!(res.status().as_u16(), 202, "{email}");
        let body: Value = res.json().await.expect("json");
        assert_eq!(body["email"], email);
        assert_eq!(body["role"], "grower");
        assert_eq!(body["status"], "pending");
        assert_eq!(body["tenant_slug"], slug.as_str());
        let mut keys: Vec<String> = body.as_object().expect("object").keys().cloned().collect();
        keys.sort();
        shapes.push(keys);
        assert_eq!(invitation_mails(&app, email).await, 1, "mailed to {email}");
    }
    assert_eq!(shapes[0], shapes[1], "one shape for both");
    // Nobody became a member.
    assert_eq!(members(&app, &owner, &slug).await.len(), 1);
    // The admin sees both open invitations; a second invitation to a pending address is 409.
    let res = app
        .rest_as(&owner)
        .get(&format!("/api/v1/tenants/{slug}/invitations"))
        .await;
    let open: Value = res.json().await.expect("json");
    assert_eq!(open.as_array().map(Vec::len), Some(2), "{open}");
    let res = invite(&app, &owner, &slug, &unknown, "viewer").await;
    assert_error(res, 409, "DUPLICATE_ENTRY").await;
}

#[tokio::test]
async fn the_invited_account_accepts_once_and_gets_the_role() {
    let app = TestApp::full().await;
    let owner = app.user("owner").await;
    let slug = garden(&app, &owner).await;
    let friend = app.user("friend").await;
    assert_eq!(
        invite(&app, &owner, &slug, &friend.email, "grower")
            .await
            .status()
            .as_u16(),
        202
    );

    // An unconfirmed address (anyone could have registered it) cannot answer from the account.
    let res = app
        .rest_as(&friend)
        .get("/api/v1/users/me/invitations")
        .await;
    assert_error(res, 403, "EMAIL_NOT_VERIFIED").await;

    let friend = confirmed(&app, &friend).await;
    let open = my_invitations(&app, &friend).await;
    assert_eq!(open.len(), 1, "{open:?}");
    let key = open[0]["key"].as_str().expect("key").to_owned();
    // Someone else (confirmed too) cannot answer it.
    let stranger = confirmed(&app, &app.user("stranger").await).await;
    let path = format!("/api/v1/users/me/invitations/{key}/accept");
    let res = app.rest_as(&stranger).post_empty(&path).await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;

    let res = app.rest_as(&friend).post_empty(&path).await;
    assert_eq!(res.status().as_u16(), 200);
    let member: Value = res.json().await.expect("json");
    assert_eq!(member["role"], "grower");
    assert_eq!(member["user_key"], friend.key.as_str());
    // Single use.
    let res = app.rest_as(&friend).post_empty(&path).await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    assert_eq!(members(&app, &owner, &slug).await.len(), 2);
    assert!(my_invitations(&app, &friend).await.is_empty());
    // The member can now read the garden.
    let res = app
        .rest_as(&friend)
        .get(&format!("/api/v1/tenants/{slug}"))
        .await;
    assert_eq!(res.status().as_u16(), 200);
    // Inviting a member again is 409.
    let res = invite(&app, &owner, &slug, &friend.email, "viewer").await;
    assert_error(res, 409, "DUPLICATE_ENTRY").await;
}

#[tokio::test]
async fn declined_withdrawn_and_expired_invitations_grant_nothing() {
    let app = TestApp::full().await;
    let owner = app.user("owner").await;
    let slug = garden(&app, &owner).await;
    let friend = confirmed(&app, &app.user("friend").await).await;

    // Declined.
    assert_eq!(
        invite(&app, &owner, &slug, &friend.email, "viewer")
            .await
            .status()
            .as_u16(),
        202
    );
    let key = my_invitations(&app, &friend).await[0]["key"]
        .as_str()
        .expect("key")
        .to_owned();
    let res = app
        .rest_as(&friend)
        .post_empty(&format!("/api/v1/users/me/invitations/{key}/decline"))
        .await;
    assert_eq!(res.status().as_u16(), 204);
    let res = app
        .rest_as(&friend)
        .post_empty(&format!("/api/v1/users/me/invitations/{key}/accept"))
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;

    // Withdrawn by the admin.
    let res = invite(&app, &owner, &slug, &friend.email, "viewer").await;
    let key = res.json::<Value>().await.expect("json")["key"]
        .as_str()
        .expect("key")
        .to_owned();
    let res = app
        .rest_as(&owner)
        .delete(&format!("/api/v1/tenants/{slug}/invitations/{key}"))
        .await;
    assert_eq!(res.status().as_u16(), 204);
    assert!(my_invitations(&app, &friend).await.is_empty());

    // Expired.
    let res = invite(&app, &owner, &slug, &friend.email, "viewer").await;
    let key = res.json::<Value>().await.expect("json")["key"]
        .as_str()
        .expect("key")
        .to_owned();
    sqlx::query(
        "UPDATE platform.invitations SET expires_at = now() - interval '1 second' WHERE id = $1",
    )
    .bind(Uuid::parse_str(&key).expect("uuid"))
    .execute(app.state.platform_pool())
    .await
    .expect("expire");
    assert!(my_invitations(&app, &friend).await.is_empty());
    let res = app
        .rest_as(&friend)
        .post_empty(&format!("/api/v1/users/me/invitations/{key}/accept"))
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    // An expired invitation does not block a new one.
    assert_eq!(
        invite(&app, &owner, &slug, &friend.email, "viewer")
            .await
            .status()
            .as_u16(),
        202
    );
    assert_eq!(members(&app, &owner, &slug).await.len(), 1, "nobody joined");
}

#[tokio::test]
async fn roles_stay_within_the_inviters_and_scoped_keys_cannot_answer() {
    let app = TestApp::full().await;
    let owner = app.user("owner").await;
    let slug = garden(&app, &owner).await;
    // A grower cannot invite; an admin cannot grant above admin (no such role) and the
    // invitation carries the role asked for.
    let grower = app.user("grower").await;
    assert_eq!(
        invite(&app, &owner, &slug, &grower.email, "grower")
            .await
            .status()
            .as_u16(),
        202
    );
    let grower = accept_as(&app, &grower, &slug).await;
    let res = invite(&app, &grower, &slug, "someone@example.test", "viewer").await;
    assert_error(res, 403, "FORBIDDEN").await;
    let res = app
        .rest_as(&grower)
        .get(&format!("/api/v1/tenants/{slug}/invitations"))
        .await;
    assert_error(res, 403, "FORBIDDEN").await;
    // Another garden's admin sees nothing of this one.
    let outsider = app.user("outsider").await;
    let res = invite(&app, &outsider, &slug, "someone@example.test", "viewer").await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;

    // A key limited to one garden cannot answer invitations for the account.
    let friend = confirmed(&app, &app.user("friend").await).await;
    assert_eq!(
        invite(&app, &owner, &slug, &friend.email, "viewer")
            .await
            .status()
            .as_u16(),
        202
    );
    let personal: Value = app
        .rest_as(&friend)
        .get("/api/v1/tenants")
        .await
        .json()
        .await
        .expect("json");
    let own = personal["items"][0]["slug"]
        .as_str()
        .expect("slug")
        .to_owned();
    let scoped = format!("Bearer {}", app.api_key(&friend, Some(&own)).await);
    let res = app
        .rest_auth(Some(&scoped))
        .get("/api/v1/users/me/invitations")
        .await;
    assert_error(res, 403, "FORBIDDEN").await;
    let res = app
        .rest_auth(Some(&scoped))
        .post("/api/v1/invitations/accept", &json!({"token": "x"}))
        .await;
    assert_error(res, 403, "FORBIDDEN").await;
}

#[tokio::test]
async fn a_wrong_token_accepts_nothing() {
    let app = TestApp::full().await;
    let user = app.user("tok").await;
    let res = app
        .rest_as(&user)
        .post(
            "/api/v1/invitations/accept",
            &json!({"token": "A".repeat(43)}),
        )
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    let res = app
        .rest()
        .post("/api/v1/invitations/accept", &json!({"token": "A"}))
        .await;
    assert_error(res, 401, "UNAUTHORIZED").await;
}
