//! Self-service service accounts: `/api/v1/t/{slug}/service-accounts` (garden admins).

use kultiva::auth::Role;
use kultiva::tenancy::registry::TenantRecord;
use serde_json::{Value, json};

use crate::mcp_tools::{Rpc, bearer};
use crate::support::{TestApp, TestUser, assert_error, unique_slug};

async fn app() -> TestApp {
    TestApp::full_env(&[("MCP_SERVER_ENABLED", "true")]).await
}

fn path(tenant: &TenantRecord) -> String {
    format!("/api/v1/t/{}/service-accounts", tenant.slug)
}

/// Service accounts that are members of the garden (straight from the database).
async fn accounts_in(app: &TestApp, tenant: &TenantRecord) -> i64 {
    sqlx::query_scalar(
        "SELECT count(*) FROM platform.memberships m JOIN platform.users u ON u.id = m.user_id
         WHERE m.tenant_id = $1 AND u.account_type = 'service'",
    )
    .bind(tenant.id)
    .fetch_one(app.state.platform_pool())
    .await
    .expect("count")
}

/// Accounts of this name (test names are unique; other tests run in parallel).
async fn named(app: &TestApp, name: &str) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM platform.users WHERE display_name = $1")
        .bind(name)
        .fetch_one(app.state.platform_pool())
        .await
        .expect("count")
}

async fn create(app: &TestApp, admin: &TestUser, tenant: &TenantRecord, body: Value) -> Value {
    let res = app.rest_as(admin).post(&path(tenant), &body).await;
    assert_eq!(res.status().as_u16(), 201, "{body}");
    res.json().await.expect("json")
}

async fn list(app: &TestApp, who: &TestUser, tenant: &TenantRecord) -> Value {
    let res = app.rest_as(who).get(&path(tenant)).await;
    assert_eq!(res.status().as_u16(), 200);
    res.json().await.expect("json")
}

/// Status of a tool-server initialize with this key.
async fn mcp_status(app: &TestApp, key: &str) -> u16 {
    app.client
        .post(app.url("/api/v1/mcp"))
        .header("authorization", bearer(key))
        .header("accept", "application/json")
        .json(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                      "params": {"protocolVersion": "2025-06-18"}}))
        .send()
        .await
        .expect("sent")
        .status()
        .as_u16()
}

#[tokio::test]
async fn service_accounts_need_the_admin_role_and_an_access_token() {
    let app = app().await;
    let tenant = app.tenant("sa-roles").await;
    let admin = app.member(&tenant, Role::Admin).await;
    let existing = create(
        &app,
        &admin,
        &tenant,
        json!({"name": "Existing bot", "role": "viewer"}),
    )
    .await;
    let existing_key = existing["key"].as_str().expect("key").to_owned();
    let sneaky = format!("Sneaky bot {}", unique_slug("s"));
    let body = json!({"name": sneaky, "role": "viewer"});

    for role in [Role::Viewer, Role::Grower] {
        let who = app.member(&tenant, role).await;
        let auth = who.bearer();
        let res = app.rest_auth(Some(&auth)).post(&path(&tenant), &body).await;
        assert_error(res, 403, "FORBIDDEN").await;
        let res = app.rest_auth(Some(&auth)).get(&path(&tenant)).await;
        assert_error(res, 403, "FORBIDDEN").await;
        let res = app
            .rest_auth(Some(&auth))
            .delete(&format!("{}/{existing_key}", path(&tenant)))
            .await;
        assert_error(res, 403, "FORBIDDEN").await;
    }
    // The admin's own API key cannot mint service accounts (nor list or revoke them): a leaked
    // key cannot make itself permanent.
    let admin_key = app.api_key(&admin, None).await;
    let res = app
        .rest_auth(Some(&bearer(&admin_key)))
        .post(&path(&tenant), &body)
        .await;
    let refused = assert_error(res, 403, "FORBIDDEN").await;
    assert!(
        refused["message"]
            .as_str()
            .unwrap_or("")
            .contains("access token"),
        "{refused}"
    );
    let res = app
        .rest_auth(Some(&bearer(&admin_key)))
        .get(&path(&tenant))
        .await;
    assert_error(res, 403, "FORBIDDEN").await;
    // Anonymous: 401.
    let res = app.rest().get(&path(&tenant)).await;
    assert_eq!(res.status().as_u16(), 401);

    // Nothing was created, nothing revoked.
    assert_eq!(named(&app, &sneaky).await, 0);
    assert_eq!(accounts_in(&app, &tenant).await, 1);
    assert_eq!(list(&app, &admin, &tenant).await["total"], 1);
    assert_eq!(
        mcp_status(&app, existing["raw_key"].as_str().expect("raw")).await,
        200
    );
}

#[tokio::test]
async fn bodies_are_checked_and_roles_are_capped() {
    let app = app().await;
    let tenant = app.tenant("sa-body").await;
    let admin = app.member(&tenant, Role::Admin).await;
    for (body, field) in [
        (json!({"name": "Bot", "role": "owner"}), "role"),
        (json!({"name": "Bot", "role": "superadmin"}), "role"),
        (json!({"name": "Bot"}), "role"),
        (json!({"role": "viewer"}), "name"),
        (json!({"name": "   ", "role": "viewer"}), "name"),
        (json!({"name": "x".repeat(101), "role": "viewer"}), "name"),
        (
            json!({"name": "Bot", "role": "viewer", "raw_key": "svc_mine"}),
            "raw_key",
        ),
        (
            json!({"name": "Bot", "role": "viewer", "tenant": "other"}),
            "tenant",
        ),
    ] {
        let res = app.rest_as(&admin).post(&path(&tenant), &body).await;
        let err = assert_error(res, 422, "VALIDATION_ERROR").await;
        assert!(
            err["details"].as_array().is_some_and(|d| d
                .iter()
                .any(|d| d["field"].as_str().is_some_and(|f| f.ends_with(field)))),
            "{body}: {err}"
        );
    }
    let res = app
        .client
        .post(app.url(&path(&tenant)))
        .header("authorization", admin.bearer())
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .expect("sent");
    assert_error(res, 400, "MALFORMED_REQUEST").await;
    assert_eq!(accounts_in(&app, &tenant).await, 0, "nothing created");

    // Roles up to the caller's own: an admin grants every role, admin included.
    for role in ["viewer", "grower", "admin"] {
        let made = create(
            &app,
            &admin,
            &tenant,
            json!({"name": format!("{role} bot"), "role": role}),
        )
        .await;
        assert_eq!(made["role"], role);
        assert_eq!(made["is_active"], true);
    }
    assert_eq!(accounts_in(&app, &tenant).await, 3);
}

#[tokio::test]
async fn the_raw_key_is_shown_once_and_works_on_the_tool_server() {
    let app = app().await;
    let tenant = app.tenant("sa-key").await;
    let admin = app.member(&tenant, Role::Admin).await;
    let made = create(
        &app,
        &admin,
        &tenant,
        json!({"name": "  Greenhouse bot ", "role": "grower"}),
    )
    .await;
    let raw = made["raw_key"].as_str().expect("raw_key").to_owned();
    assert!(raw.starts_with("svc_") && raw.len() == 47, "{raw}");
    assert_eq!(made["name"], "Greenhouse bot");
    assert_eq!(made["role"], "grower");
    assert!(made["created_at"].is_string());
    let keys = made["api_keys"].as_array().expect("api_keys");
    assert_eq!(keys.len(), 1);
    assert_eq!(keys[0]["key_prefix"], &raw[..12]);
    assert_eq!(keys[0]["tenant_scope"], tenant.slug.as_str());
    // Only the hash is stored.
    let stored: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM platform.api_keys WHERE user_id = $1::uuid AND key_prefix = $2",
    )
    .bind(made["key"].as_str().expect("key"))
    .bind(&raw[..12])
    .fetch_one(app.state.platform_pool())
    .await
    .expect("count");
    assert_eq!(stored, 1);

    // The key works on the tool server, with the role it was given, in this garden only.
    let mut rpc = Rpc::open(&app, &raw).await;
    let gardens = rpc.call("list_tenants", json!({})).await;
    assert_eq!(gardens["isError"], false, "{gardens}");
    let items = gardens["structuredContent"]["data"]["items"]
        .as_array()
        .expect("items")
        .clone();
    assert_eq!(items.len(), 1, "{items:?}");
    assert_eq!(items[0]["slug"], tenant.slug.as_str());
    assert_eq!(items[0]["role"], "grower");
    let res = app
        .post_json(
            "/api/v1/auth/service-accounts/validate",
            &json!({"api_key": raw}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let ctx: Value = res.json().await.expect("json");
    assert_eq!(ctx["service_account_key"], made["key"]);

    // The listing never shows the raw key; it shows name, role, creation and key prefixes,
    // and the last use once recorded (written in the background after the call).
    let mut listed = Value::Null;
    for _ in 0..50 {
        let res = app.rest_as(&admin).get(&path(&tenant)).await;
        assert_eq!(res.status().as_u16(), 200);
        let text = res.text().await.expect("text");
        assert!(!text.contains(&raw[12..]), "raw key in the listing: {text}");
        assert!(!text.contains("raw_key"), "{text}");
        listed = serde_json::from_str(&text).expect("json");
        if listed["items"][0]["last_used_at"].is_string() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(listed["total"], 1, "{listed}");
    let item = &listed["items"][0];
    assert_eq!(item["key"], made["key"]);
    assert_eq!(item["name"], "Greenhouse bot");
    assert_eq!(item["role"], "grower");
    assert_eq!(item["created_at"], made["created_at"]);
    assert_eq!(item["api_keys"][0]["key_prefix"], &raw[..12]);
    assert!(item["last_used_at"].is_string(), "{item}");
    // Human members are not service accounts.
    assert!(
        listed["items"]
            .as_array()
            .expect("items")
            .iter()
            .all(|i| i["key"] != admin.key.as_str())
    );
    // Pagination.
    let res = app
        .rest_as(&admin)
        .get(&format!("{}?skip=1&limit=1", path(&tenant)))
        .await;
    let page: Value = res.json().await.expect("json");
    assert_eq!(page["total"], 1);
    assert_eq!(page["items"], json!([]));
    let res = app
        .rest_as(&admin)
        .get(&format!("{}?limit=0", path(&tenant)))
        .await;
    assert_error(res, 422, "VALIDATION_ERROR").await;
}

#[tokio::test]
async fn a_revoked_service_account_key_gets_401() {
    let app = app().await;
    let tenant = app.tenant("sa-revoke").await;
    let admin = app.member(&tenant, Role::Admin).await;
    let keep = create(
        &app,
        &admin,
        &tenant,
        json!({"name": "Keeper", "role": "viewer"}),
    )
    .await;
    let gone = create(
        &app,
        &admin,
        &tenant,
        json!({"name": "Leaver", "role": "admin"}),
    )
    .await;
    let gone_raw = gone["raw_key"].as_str().expect("raw").to_owned();
    let gone_key = gone["key"].as_str().expect("key").to_owned();
    assert_eq!(mcp_status(&app, &gone_raw).await, 200);

    for bad in [
        "not-a-uuid",
        "00000000-0000-0000-0000-000000000000",
        admin.key.as_str(),
    ] {
        let res = app
            .rest_as(&admin)
            .delete(&format!("{}/{bad}", path(&tenant)))
            .await;
        assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    }
    // A human member is not revoked through this route.
    assert_eq!(
        app.rest_as(&admin)
            .get(&format!("/api/v1/tenants/{}", tenant.slug))
            .await
            .status()
            .as_u16(),
        200
    );

    let res = app
        .rest_as(&admin)
        .delete(&format!("{}/{gone_key}", path(&tenant)))
        .await;
    assert_eq!(res.status().as_u16(), 204);
    // The key is refused at once (the caches forgot it), on the tool server and on REST.
    assert_eq!(mcp_status(&app, &gone_raw).await, 401);
    let res = app
        .rest_auth(Some(&bearer(&gone_raw)))
        .get(&format!("/api/v1/t/{}/sites", tenant.slug))
        .await;
    assert_eq!(res.status().as_u16(), 401);
    // Membership gone, account deactivated, every key revoked.
    assert_eq!(accounts_in(&app, &tenant).await, 1);
    let (active, open_keys): (bool, i64) = sqlx::query_as(
        "SELECT u.is_active, (SELECT count(*) FROM platform.api_keys k
                               WHERE k.user_id = u.id AND k.revoked_at IS NULL)
         FROM platform.users u WHERE u.id = $1::uuid",
    )
    .bind(&gone_key)
    .fetch_one(app.state.platform_pool())
    .await
    .expect("account");
    assert!(!active);
    assert_eq!(open_keys, 0);
    let listed = list(&app, &admin, &tenant).await;
    assert_eq!(listed["total"], 1);
    assert_eq!(listed["items"][0]["key"], keep["key"]);
    // Again: 404; the other account still works.
    let res = app
        .rest_as(&admin)
        .delete(&format!("{}/{gone_key}", path(&tenant)))
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    assert_eq!(
        mcp_status(&app, keep["raw_key"].as_str().expect("raw")).await,
        200
    );
}

#[tokio::test]
async fn admins_of_another_garden_cannot_see_or_revoke_the_accounts() {
    let app = app().await;
    let a = app.tenant("sa-iso-a").await;
    let b = app.tenant("sa-iso-b").await;
    let admin_a = app.member(&a, Role::Admin).await;
    let admin_b = app.member(&b, Role::Admin).await;
    let in_a = create(
        &app,
        &admin_a,
        &a,
        json!({"name": "A bot", "role": "grower"}),
    )
    .await;
    let in_b = create(
        &app,
        &admin_b,
        &b,
        json!({"name": "B bot", "role": "grower"}),
    )
    .await;
    let a_key = in_a["key"].as_str().expect("key").to_owned();

    // B's admin sees only B's account; A's garden is 404 for B's admin.
    let listed = list(&app, &admin_b, &b).await;
    assert_eq!(listed["total"], 1);
    assert_eq!(listed["items"][0]["key"], in_b["key"]);
    let res = app.rest_as(&admin_b).get(&path(&a)).await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    for url in [
        format!("{}/{a_key}", path(&b)),
        format!("{}/{a_key}", path(&a)),
    ] {
        let res = app.rest_as(&admin_b).delete(&url).await;
        assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    }
    let res = app
        .rest_as(&admin_b)
        .post(&path(&a), &json!({"name": "Intruder", "role": "viewer"}))
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    assert_eq!(accounts_in(&app, &a).await, 1);
    assert_eq!(
        mcp_status(&app, in_a["raw_key"].as_str().expect("raw")).await,
        200
    );
    // A's key does not reach B.
    let mut rpc = Rpc::open(&app, in_a["raw_key"].as_str().expect("raw")).await;
    let refused = rpc
        .call("list_tenants", json!({"tenant": b.slug.as_str()}))
        .await;
    assert_eq!(refused["isError"], true, "{refused}");
    assert_eq!(refused["structuredContent"]["error_code"], "not_found");

    // An account with gardens elsewhere (given by the operator): revoking it in A ends A's
    // membership and A's keys; its access to B stays.
    kultiva::platform::operator::add_membership(&app.state, &a_key, b.slug.as_str(), Role::Viewer)
        .await
        .expect("membership in B");
    let b_side = kultiva::platform::operator::create_service_account(
        &app.state,
        "Operator bot",
        b.slug.as_str(),
        Role::Viewer,
    )
    .await
    .expect("operator account");
    kultiva::platform::operator::add_membership(
        &app.state,
        &b_side.0.key.to_string(),
        a.slug.as_str(),
        Role::Viewer,
    )
    .await
    .expect("membership in A");
    let res = app
        .rest_as(&admin_a)
        .delete(&format!("{}/{a_key}", path(&a)))
        .await;
    assert_eq!(res.status().as_u16(), 204);
    assert_eq!(
        mcp_status(&app, in_a["raw_key"].as_str().expect("raw")).await,
        401,
        "the key limited to A is revoked"
    );
    let listed_b = list(&app, &admin_b, &b).await;
    assert!(
        listed_b["items"]
            .as_array()
            .expect("items")
            .iter()
            .any(|i| i["key"] == a_key.as_str() && i["is_active"] == true),
        "{listed_b}"
    );
    // The operator's unlimited key: removed from A, it still works in B and no longer in A.
    let op_raw = b_side.1.raw_key.expect("raw");
    let res = app
        .rest_as(&admin_a)
        .delete(&format!("{}/{}", path(&a), b_side.0.key))
        .await;
    assert_eq!(res.status().as_u16(), 204);
    for (garden, want) in [(&a, 404), (&b, 200)] {
        let res = app
            .rest_auth(Some(&bearer(&op_raw)))
            .get(&format!("/api/v1/t/{}/sites", garden.slug))
            .await;
        assert_eq!(res.status().as_u16(), want, "{}", garden.slug);
    }
}

#[tokio::test]
async fn the_document_states_the_routes_with_closed_bounded_bodies() {
    let app = app().await;
    let doc: Value = app
        .get("/api/v1/openapi.json")
        .await
        .json()
        .await
        .expect("json");
    let list = &doc["paths"]["/api/v1/t/{slug}/service-accounts"];
    let one = &doc["paths"]["/api/v1/t/{slug}/service-accounts/{account_key}"];
    for op in [&list["get"], &list["post"], &one["delete"]] {
        assert_eq!(op["x-min-role"], "admin", "{op}");
        assert!(op["responses"]["403"].is_object() && op["responses"]["404"].is_object());
    }
    assert!(list["post"]["responses"]["201"].is_object());
    assert!(one["delete"]["responses"]["204"].is_object());
    let body = &doc["components"]["schemas"]["ServiceAccountCreate"];
    assert_eq!(body["additionalProperties"], false, "{body}");
    assert_eq!(body["required"], json!(["name", "role"]), "{body}");
    assert_eq!(body["properties"]["name"]["minLength"], 1);
    assert_eq!(body["properties"]["name"]["maxLength"], 100);
    let answer = &doc["components"]["schemas"]["ServiceAccount"]["properties"];
    assert!(
        answer["raw_key"].is_object() && answer["api_keys"].is_object(),
        "{answer}"
    );
}
