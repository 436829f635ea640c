//! The role matrix: for every tenant route, viewer / grower / admin / non-member / anonymous get
//! the right answer, and a member of tenant A never sees tenant B.

use reqwest::Method;
use serde_json::{Value, json};

use crate::support::{TestApp, assert_error};
use kultiva::auth::Role;

#[derive(Clone, Copy, Debug)]
enum Caller {
    Viewer,
    Grower,
    Admin,
    Stranger,
    Anonymous,
}

#[tokio::test]
async fn every_tenant_route_answers_by_role() {
    let app = TestApp::full().await;
    let tenant = app.tenant("matrix").await;
    let viewer = app.member(&tenant, Role::Viewer).await;
    let grower = app.member(&tenant, Role::Grower).await;
    let admin = app.member(&tenant, Role::Admin).await;
    let stranger = app.user("stranger").await;
    let bearer = |c: Caller| match c {
        Caller::Viewer => Some(viewer.bearer()),
        Caller::Grower => Some(grower.bearer()),
        Caller::Admin => Some(admin.bearer()),
        Caller::Stranger => Some(stranger.bearer()),
        Caller::Anonymous => None,
    };
    let slug = tenant.slug.as_str();
    let site = app_site(&app, &admin.bearer(), slug).await;
    let routes: Vec<(Method, String, Option<Value>, [u16; 5])> = vec![
        // (method, path, body, [viewer, grower, admin, stranger, anonymous])
        (
            Method::GET,
            format!("/api/v1/t/{slug}/sites/"),
            None,
            [200, 200, 200, 404, 401],
        ),
        (
            Method::GET,
            format!("/api/v1/t/{slug}/sites/{site}"),
            None,
            [200, 200, 200, 404, 401],
        ),
        (
            Method::POST,
            format!("/api/v1/t/{slug}/sites/"),
            Some(json!({"kind": "balcony", "name": "N"})),
            [403, 403, 201, 404, 401],
        ),
        (
            Method::GET,
            format!("/api/v1/tenants/{slug}"),
            None,
            [200, 200, 200, 404, 401],
        ),
        (
            Method::GET,
            format!("/api/v1/tenants/{slug}/members"),
            None,
            [200, 200, 200, 404, 401],
        ),
        (
            Method::PATCH,
            format!("/api/v1/tenants/{slug}"),
            Some(json!({"name": "Renamed"})),
            [403, 403, 200, 404, 401],
        ),
        (
            Method::POST,
            format!("/api/v1/tenants/{slug}/members"),
            Some(json!({"email": "nobody@example.test", "role": "viewer"})),
            [403, 403, 202, 404, 401],
        ),
        (
            Method::PATCH,
            format!("/api/v1/tenants/{slug}/members/{}", viewer.key),
            Some(json!({"role": "viewer"})),
            [403, 403, 200, 404, 401],
        ),
    ];
    for (method, path, body, expected) in routes {
        for (i, caller) in [
            Caller::Viewer,
            Caller::Grower,
            Caller::Admin,
            Caller::Stranger,
            Caller::Anonymous,
        ]
        .into_iter()
        .enumerate()
        {
            let mut body = body.clone();
            if let Some(Value::Object(map)) = body.as_mut()
                && map.contains_key("kind")
            {
                map.insert("name".into(), json!(format!("Site by {caller:?}")));
            }
            let res = app
                .rest_auth(bearer(caller).as_deref())
                .send(method.clone(), &path, body.as_ref())
                .await;
            assert_eq!(
                res.status().as_u16(),
                expected[i],
                "{method} {path} as {caller:?}"
            );
        }
    }
    // Refused writes wrote nothing: only the admin's site (plus the setup one) exists.
    assert_eq!(app.site_count(&tenant).await, 2);
}

async fn app_site(app: &TestApp, auth: &str, slug: &str) -> String {
    let res = app
        .rest_auth(Some(auth))
        .post(
            &format!("/api/v1/t/{slug}/sites/"),
            &json!({"name": "Setup", "kind": "garden"}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 201);
    let site: Value = res.json().await.expect("json");
    site["key"].as_str().expect("key").to_owned()
}

#[tokio::test]
async fn a_member_of_a_never_sees_b() {
    let app = TestApp::full().await;
    let a = app.tenant("iso-a").await;
    let b = app.tenant("iso-b").await;
    let admin_a = app.member(&a, Role::Admin).await;
    let admin_b = app.member(&b, Role::Admin).await;
    app_site(&app, &admin_b.bearer(), b.slug.as_str()).await;
    let missing = format!("/api/v1/t/{}/sites/", crate::support::unique_slug("ghost"));
    let foreign = format!("/api/v1/t/{}/sites/", b.slug);
    let r1 = app.rest_as(&admin_a).get(&missing).await;
    let r2 = app.rest_as(&admin_a).get(&foreign).await;
    let e1 = assert_error(r1, 404, "ENTITY_NOT_FOUND").await;
    let e2 = assert_error(r2, 404, "ENTITY_NOT_FOUND").await;
    assert_eq!(
        e1["message"], e2["message"],
        "a foreign tenant looks like a missing one"
    );
    let res = app
        .rest_as(&admin_a)
        .get(&format!("/api/v1/tenants/{}", b.slug))
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    let res = app
        .rest_as(&admin_a)
        .post(&foreign, &json!({"name": "Intruder", "kind": "garden"}))
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    assert_eq!(app.site_count(&b).await, 1, "nothing written into B");
}

#[tokio::test]
async fn membership_management_keeps_one_admin() {
    let app = TestApp::full().await;
    let owner = app.user("owner").await;
    let res = app
        .rest_as(&owner)
        .post(
            "/api/v1/tenants/",
            &json!({"slug": crate::support::unique_slug("org"), "name": "Community garden"}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 201);
    let tenant: Value = res.json().await.expect("json");
    assert_eq!(tenant["role"], "admin");
    assert_eq!(tenant["kind"], "organisation");
    let slug = tenant["slug"].as_str().expect("slug").to_owned();

    // The only admin can neither leave nor be demoted.
    let me = format!("/api/v1/tenants/{slug}/members/{}", owner.key);
    let res = app
        .rest_as(&owner)
        .patch(&me, &json!({"role": "grower"}))
        .await;
    assert_error(res, 409, "STATE_CONFLICT").await;
    let res = app.rest_as(&owner).delete(&me).await;
    assert_error(res, 409, "STATE_CONFLICT").await;

    // Invite a member by e-mail (accepted with the mailed token), promote, then the first
    // admin may step down.
    let friend = app.user("friend").await;
    let res = app
        .rest_as(&owner)
        .post(
            &format!("/api/v1/tenants/{slug}/members"),
            &json!({"email": friend.email, "role": "grower"}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 202);
    let friend = crate::invitations::accept_as(&app, &friend, &slug).await;
    let res = app
        .rest_as(&owner)
        .post(
            &format!("/api/v1/tenants/{slug}/members"),
            &json!({"email": friend.email, "role": "viewer"}),
        )
        .await;
    assert_error(res, 409, "DUPLICATE_ENTRY").await; // already a member
    let res = app
        .rest_as(&owner)
        .post(
            &format!("/api/v1/tenants/{slug}/members"),
            &json!({"email": friend.email, "role": "owner"}),
        )
        .await;
    assert_error(res, 422, "VALIDATION_ERROR").await;
    let friend_path = format!("/api/v1/tenants/{slug}/members/{}", friend.key);
    let res = app
        .rest_as(&owner)
        .patch(&friend_path, &json!({"role": "admin"}))
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let res = app
        .rest_as(&owner)
        .patch(&me, &json!({"role": "viewer"}))
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let members: Value = app
        .rest_as(&friend)
        .get(&format!("/api/v1/tenants/{slug}/members"))
        .await
        .json()
        .await
        .expect("json");
    assert_eq!(members.as_array().map(Vec::len), Some(2));
    // The viewer may leave by itself; then the tenant is gone for it.
    let res = app.rest_as(&owner).delete(&me).await;
    assert_eq!(res.status().as_u16(), 204);
    let res = app
        .rest_as(&owner)
        .get(&format!("/api/v1/tenants/{slug}"))
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;

    // Personal gardens cannot be deleted; organisation gardens can, by an admin.
    let personal: Value = app
        .rest_as(&friend)
        .get("/api/v1/tenants/")
        .await
        .json()
        .await
        .expect("json");
    let personal_slug = personal["items"]
        .as_array()
        .expect("items")
        .iter()
        .find(|t| t["kind"] == "personal")
        .and_then(|t| t["slug"].as_str())
        .expect("personal")
        .to_owned();
    let res = app
        .rest_as(&friend)
        .delete(&format!("/api/v1/tenants/{personal_slug}"))
        .await;
    assert_error(res, 409, "STATE_CONFLICT").await;
    let res = app
        .rest_as(&friend)
        .delete(&format!("/api/v1/tenants/{slug}"))
        .await;
    assert_eq!(res.status().as_u16(), 204);
    let gone: i64 = sqlx::query_scalar("SELECT count(*) FROM platform.tenants WHERE slug = $1")
        .bind(&slug)
        .fetch_one(app.state.platform_pool())
        .await
        .expect("count");
    assert_eq!(gone, 0);
}

#[tokio::test]
async fn tenant_creation_validates_and_refuses_taken_slugs() {
    let app = TestApp::full().await;
    let user = app.user("creator").await;
    let taken = app.tenant("taken").await;
    let fresh = crate::support::unique_slug("fresh");
    let memberships = || async {
        sqlx::query_scalar::<_, i64>(
            "SELECT count(*) FROM platform.memberships WHERE user_id = $1::uuid",
        )
        .bind(&user.key)
        .fetch_one(app.state.platform_pool())
        .await
        .expect("count")
    };
    let before = memberships().await;
    for (body, status) in [
        (json!({"slug": taken.slug.as_str(), "name": "Mine"}), 409),
        (json!({"slug": "Bad Slug", "name": "Mine"}), 422),
        (json!({"slug": "admin", "name": "Mine"}), 422),
        (json!({"slug": fresh}), 422),
        (json!({"slug": fresh, "name": ""}), 422),
    ] {
        let res = app.rest_as(&user).post("/api/v1/tenants/", &body).await;
        assert_eq!(res.status().as_u16(), status, "{body}");
    }
    assert_eq!(
        memberships().await,
        before,
        "nothing created for the caller"
    );
    let made: i64 = sqlx::query_scalar("SELECT count(*) FROM platform.tenants WHERE slug = $1")
        .bind(&fresh)
        .fetch_one(app.state.platform_pool())
        .await
        .expect("count");
    assert_eq!(made, 0);
}
