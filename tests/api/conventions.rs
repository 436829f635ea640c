//! HTTP conventions every route shares: error record, security headers, CORS, request ids.

use serde_json::{Value, json};

use crate::support::{TestApp, assert_error, detail_fields, header, header_values};

const SECURITY_HEADERS: &[(&str, &str)] = &[
    ("x-content-type-options", "nosniff"),
    ("x-frame-options", "DENY"),
    ("referrer-policy", "strict-origin-when-cross-origin"),
    (
        "permissions-policy",
        "camera=(), microphone=(), geolocation=()",
    ),
];

fn assert_security_headers(res: &reqwest::Response, hsts: bool) {
    for (name, value) in SECURITY_HEADERS {
        assert_eq!(
            header(res, name).as_deref(),
            Some(*value),
            "{name} on {}",
            res.url()
        );
    }
    assert_eq!(
        res.headers().contains_key("strict-transport-security"),
        hsts,
        "HSTS on {}",
        res.url()
    );
}

#[tokio::test]
async fn unknown_route_is_a_json_404_record() {
    let app = TestApp::spawn().await;
    let res = app.get("/api/v1/no-such-thing").await;
    let body = assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    assert_eq!(body["path"], "/api/v1/no-such-thing");
    assert_eq!(body["method"], "GET");
    // Outside the API prefix too.
    assert_error(app.get("/").await, 404, "ENTITY_NOT_FOUND").await;
}

#[tokio::test]
async fn wrong_method_is_405_with_allow() {
    let app = TestApp::spawn().await;
    let res = app
        .client
        .delete(app.url("/api/v1/health/live"))
        .send()
        .await
        .expect("sent");
    let allow = header(&res, "allow").unwrap_or_default().to_owned();
    assert!(allow.contains("GET"), "Allow: {allow}");
    let body = assert_error(res, 405, "METHOD_NOT_ALLOWED").await;
    assert_eq!(body["method"], "DELETE");
}

#[tokio::test]
async fn security_headers_on_every_response() {
    let app = TestApp::spawn().await;
    let tenant = app.tenant("hdr").await;
    let site_path = format!("/api/v1/t/{}/sites/", tenant.slug);
    let ok = app.get("/api/v1/health/live").await;
    assert_security_headers(&ok, true);
    let not_found = app.get("/api/v1/missing").await;
    assert_security_headers(&not_found, true);
    let invalid = app.post_json(&site_path, &json!({})).await;
    assert_eq!(invalid.status().as_u16(), 422);
    assert_security_headers(&invalid, true);
    let malformed = app.post_raw(&site_path, "application/json", "{").await;
    assert_eq!(malformed.status().as_u16(), 400);
    assert_security_headers(&malformed, true);
    let docs = app.get("/api/v1/docs/").await;
    assert_security_headers(&docs, true);
}

#[tokio::test]
async fn no_hsts_in_debug_mode() {
    let app = TestApp::spawn_env(&[("DEBUG", "true")]).await;
    let res = app.get("/api/v1/health/live").await;
    assert_security_headers(&res, false);
    let res = app.get("/api/v1/missing").await;
    assert_security_headers(&res, false);
}

#[tokio::test]
async fn cors_preflight_from_an_allowed_origin() {
    let app = TestApp::spawn().await;
    let tenant = app.tenant("cors").await;
    let res = app
        .client
        .request(
            reqwest::Method::OPTIONS,
            app.url(&format!("/api/v1/t/{}/sites/", tenant.slug)),
        )
        .header("origin", "http://localhost:5173")
        .header("access-control-request-method", "POST")
        .header(
            "access-control-request-headers",
            "content-type,x-csrf-token",
        )
        .send()
        .await
        .expect("sent");
    assert_eq!(res.status().as_u16(), 204);
    assert_eq!(
        header(&res, "access-control-allow-origin").as_deref(),
        Some("http://localhost:5173")
    );
    assert_eq!(
        header(&res, "access-control-allow-credentials").as_deref(),
        Some("true")
    );
    let methods = header(&res, "access-control-allow-methods").unwrap_or_default();
    assert!(methods.contains("POST"), "{methods}");
    let headers = header(&res, "access-control-allow-headers")
        .unwrap_or_default()
        .to_lowercase();
    assert!(
        headers.contains("x-csrf-token") && headers.contains("content-type"),
        "{headers}"
    );
    let vary = header_values(&res, "vary");
    assert!(vary.iter().any(|v| v.contains("origin")), "{vary:?}");
    assert_security_headers(&res, true);
    // Nothing was created by the preflight.
    assert_eq!(app.site_count(&tenant).await, 0);
}

#[tokio::test]
async fn cors_refuses_a_foreign_origin() {
    let app = TestApp::spawn().await;
    let preflight = app
        .client
        .request(reqwest::Method::OPTIONS, app.url("/api/v1/health/live"))
        .header("origin", "https://evil.example")
        .header("access-control-request-method", "GET")
        .send()
        .await
        .expect("sent");
    assert!(
        !preflight
            .headers()
            .contains_key("access-control-allow-origin")
    );
    let vary: Vec<String> = header_values(&preflight, "vary");
    assert!(vary.iter().any(|v| v.contains("origin")), "{vary:?}");

    let simple = app
        .get_with("/api/v1/health/live", &[("origin", "https://evil.example")])
        .await;
    assert_eq!(simple.status().as_u16(), 200);
    assert!(!simple.headers().contains_key("access-control-allow-origin"));
    // A prefix or suffix of an allowed origin is not the origin.
    let tricky = app
        .get_with(
            "/api/v1/health/live",
            &[("origin", "http://localhost:5173.evil.example")],
        )
        .await;
    assert!(!tricky.headers().contains_key("access-control-allow-origin"));
}

#[tokio::test]
async fn cors_origins_come_from_configuration() {
    let app = TestApp::spawn_env(&[("CORS_ORIGINS", "https://app.kultiva.example")]).await;
    let allowed = app
        .get_with(
            "/api/v1/health/live",
            &[("origin", "https://app.kultiva.example")],
        )
        .await;
    assert_eq!(
        header(&allowed, "access-control-allow-origin").as_deref(),
        Some("https://app.kultiva.example")
    );
    let default_gone = app
        .get_with(
            "/api/v1/health/live",
            &[("origin", "http://localhost:3000")],
        )
        .await;
    assert!(
        !default_gone
            .headers()
            .contains_key("access-control-allow-origin")
    );
}

#[tokio::test]
async fn request_ids_are_echoed_or_made() {
    let app = TestApp::spawn().await;
    let res = app.get("/api/v1/health/live").await;
    let made = header(&res, "x-request-id")
        .as_deref()
        .expect("request id")
        .to_owned();
    assert!(uuid::Uuid::parse_str(&made).is_ok(), "{made}");
    let res = app
        .get_with("/api/v1/missing", &[("x-request-id", "edge-42.abc_9")])
        .await;
    assert_eq!(
        header(&res, "x-request-id").as_deref(),
        Some("edge-42.abc_9")
    );
    // Text that could forge log lines is replaced, not echoed.
    let res = app
        .client
        .get(app.url("/api/v1/health/live"))
        .header("x-request-id", "x\" injected=1")
        .send()
        .await
        .expect("sent");
    let replaced = header(&res, "x-request-id")
        .as_deref()
        .expect("id")
        .to_owned();
    assert!(uuid::Uuid::parse_str(&replaced).is_ok(), "{replaced}");
}

#[tokio::test]
async fn malformed_json_is_400_and_writes_nothing() {
    let app = TestApp::spawn().await;
    let tenant = app.tenant("badjson").await;
    let path = format!("/api/v1/t/{}/sites/", tenant.slug);
    for body in ["{", "{\"name\": \"x\",}", "nul", "\u{feff}{}", ""] {
        let res = app.post_raw(&path, "application/json", body).await;
        let err = assert_error(res, 400, "MALFORMED_REQUEST").await;
        assert_eq!(err["details"][0]["field"], "body");
        assert_eq!(err["details"][0]["code"], "json_invalid");
    }
    assert_eq!(app.site_count(&tenant).await, 0);
}

#[tokio::test]
async fn invalid_fields_are_422_with_one_detail_each() {
    let app = TestApp::spawn().await;
    let tenant = app.tenant("fields").await;
    let path = format!("/api/v1/t/{}/sites/", tenant.slug);

    let res = app
        .post_json(
            &path,
            &json!({"kind": "castle", "description": 7, "colour": "red"}),
        )
        .await;
    let body = assert_error(res, 422, "VALIDATION_ERROR").await;
    assert_eq!(
        detail_fields(&body),
        ["body.name", "body.kind", "body.description", "body.colour"]
    );
    let codes: Vec<&str> = body["details"]
        .as_array()
        .expect("details")
        .iter()
        .filter_map(|d| d["code"].as_str())
        .collect();
    assert_eq!(
        codes,
        ["missing", "value_error", "type_error", "extra_forbidden"]
    );
    assert!(
        body["details"]
            .as_array()
            .expect("details")
            .iter()
            .all(|d| d["reason"].as_str().is_some_and(|r| !r.is_empty()))
    );

    let res = app
        .post_json(&path, &json!({"name": "x".repeat(121), "kind": "garden"}))
        .await;
    let body = assert_error(res, 422, "VALIDATION_ERROR").await;
    assert_eq!(body["details"][0]["field"], "body.name");
    assert_eq!(body["details"][0]["code"], "string_too_long");

    let res = app
        .post_json(&path, &json!({"name": 5, "kind": ["garden"]}))
        .await;
    let body = assert_error(res, 422, "VALIDATION_ERROR").await;
    assert_eq!(detail_fields(&body), ["body.name", "body.kind"]);

    let res = app.post_json(&path, &json!(["not", "an", "object"])).await;
    let body = assert_error(res, 422, "VALIDATION_ERROR").await;
    assert_eq!(detail_fields(&body), ["body"]);

    // NUL cannot be stored in PostgreSQL text: a clear 422, never a 500.
    let res = app
        .post_json(&path, &json!({"name": "a\u{0}b", "kind": "garden"}))
        .await;
    assert_error(res, 422, "VALIDATION_ERROR").await;

    assert_eq!(
        app.site_count(&tenant).await,
        0,
        "no row written by rejected requests"
    );
}

#[tokio::test]
async fn wrong_content_type_and_oversized_bodies_are_refused() {
    let app = TestApp::spawn_env(&[("MAX_BODY_BYTES", "2048")]).await;
    let tenant = app.tenant("size").await;
    let path = format!("/api/v1/t/{}/sites/", tenant.slug);

    let res = app
        .post_raw(&path, "text/plain", r#"{"name":"a","kind":"garden"}"#)
        .await;
    assert_error(res, 415, "UNSUPPORTED_MEDIA_TYPE").await;

    let big = json!({"name": "a", "kind": "garden", "description": "x".repeat(4000)}).to_string();
    let res = app.post_raw(&path, "application/json", big.clone()).await;
    assert_error(res, 413, "PAYLOAD_TOO_LARGE").await;

    // Without a Content-Length (chunked), the limit holds as the body streams in.
    let stream = futures_util::stream::iter(
        big.into_bytes()
            .chunks(512)
            .map(|c| Ok::<_, std::io::Error>(c.to_vec()))
            .collect::<Vec<_>>(),
    );
    let res = app
        .post_raw(
            &path,
            "application/json",
            reqwest::Body::wrap_stream(stream),
        )
        .await;
    assert_error(res, 413, "PAYLOAD_TOO_LARGE").await;

    assert_eq!(app.site_count(&tenant).await, 0);
}

#[tokio::test]
async fn internal_errors_show_only_the_error_id() {
    let app = TestApp::spawn().await;
    // A tenant whose placement is not configured: the request fails inside the service.
    let slug = crate::support::unique_slug("broken");
    let id = uuid::Uuid::now_v7();
    sqlx::query(
        "INSERT INTO platform.tenants (id, slug, name, schema_name, placement, schema_version, status) \
         VALUES ($1, $2, 'Broken', $3, 'nowhere', $4, 'active')",
    )
    .bind(id)
    .bind(&slug)
    .bind(format!("t_{}", id.simple()))
    .bind(kultiva::tenancy::migrate::latest_tenant_version())
    .execute(app.state.platform_pool())
    .await
    .expect("insert broken tenant");

    let res = app.get(&format!("/api/v1/t/{slug}/sites/")).await;
    assert_security_headers(&res, true);
    let body = assert_error(res, 500, "INTERNAL_ERROR").await;
    assert_eq!(body["message"], "internal error");
    assert_eq!(body["details"], json!([]));
    let text = body.to_string();
    assert!(
        !text.contains("nowhere") && !text.contains("placement"),
        "cause leaked: {text}"
    );

    sqlx::query("DELETE FROM platform.tenants WHERE id = $1")
        .bind(id)
        .execute(app.state.platform_pool())
        .await
        .expect("cleanup");
}

#[tokio::test]
async fn pagination_bounds_are_422_not_clamped() {
    let app = TestApp::spawn().await;
    let tenant = app.tenant("page").await;
    for i in 0..3 {
        app.create_site(&tenant, &format!("Site {i}")).await;
    }
    let base = format!("/api/v1/t/{}/sites/", tenant.slug);
    let page: Value = app
        .get(&format!("{base}?skip=1&limit=1"))
        .await
        .json()
        .await
        .expect("json");
    assert_eq!(page["total"], 3);
    assert_eq!(page["skip"], 1);
    assert_eq!(page["limit"], 1);
    assert_eq!(page["items"].as_array().map(Vec::len), Some(1));
    assert_eq!(page["items"][0]["name"], "Site 1");

    let page: Value = app
        .get(&format!("{base}?skip=10"))
        .await
        .json()
        .await
        .expect("json");
    assert_eq!(page["total"], 3);
    assert_eq!(page["items"], json!([]));

    let page: Value = app
        .get(&format!("{base}?limit=200"))
        .await
        .json()
        .await
        .expect("json");
    assert_eq!(page["items"].as_array().map(Vec::len), Some(3));

    for (query, field) in [
        ("limit=201", "query.limit"),
        ("limit=0", "query.limit"),
        ("skip=-1", "query.skip"),
        ("limit=abc", "query.limit"),
    ] {
        let res = app.get(&format!("{base}?{query}")).await;
        let body = assert_error(res, 422, "VALIDATION_ERROR").await;
        assert_eq!(detail_fields(&body), [field], "{query}");
    }
}
