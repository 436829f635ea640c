//! Web Push (issue 28 item 6): subscriptions under `/users/me/push-subscriptions` with the
//! webhooks' target checks, the VAPID public key, and the digest sent as a push message to a
//! local push service that checks the VAPID token and decrypts the message itself (RFC 8291,
//! aes128gcm, with the subscription's private key: not the sender's code). A 410 from the
//! push service removes the subscription; the personal export names the push service's host
//! only, and erasure deletes the subscriptions.

use std::time::Duration;

use aes_gcm::aead::Aead;
use aes_gcm::{Aes128Gcm, KeyInit, Nonce};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hkdf::Hkdf;
use kultiva::auth::Role;
use p256::ecdsa::signature::Verifier as _;
use p256::elliptic_curve::sec1::ToEncodedPoint as _;
use reqwest::Method;
use serde_json::{Value, json};
use sha2::Sha256;
use uuid::Uuid;

use crate::support::{Receiver, TestApp, TestUser, assert_error, detail_fields};

const SUBSCRIPTIONS: &str = "/api/v1/users/me/push-subscriptions";

/// A push service on loopback: `/gone/…` answers 410, everything else 201.
async fn push_service() -> Receiver {
    Receiver::start(
        |_, path| if path.starts_with("/gone/") { 410 } else { 201 },
        "",
    )
    .await
}

/// A browser's side of a subscription: its P-256 key pair and authentication secret.
struct Browser {
    secret: p256::SecretKey,
    auth: [u8; 16],
}

impl Browser {
    fn new() -> Self {
        let mut bytes = [0u8; 32];
        bytes[..16].copy_from_slice(Uuid::new_v4().as_bytes());
        bytes[16..].copy_from_slice(Uuid::new_v4().as_bytes());
        let mut auth = [0u8; 16];
        auth.copy_from_slice(Uuid::new_v4().as_bytes());
        Self {
            secret: p256::SecretKey::from_slice(&bytes).expect("a scalar"),
            auth,
        }
    }

    fn public(&self) -> Vec<u8> {
        self.secret
            .public_key()
            .as_affine()
            .to_encoded_point(false)
            .as_bytes()
            .to_vec()
    }

    fn subscription(&self, endpoint: &str) -> Value {
        json!({
            "endpoint": endpoint,
            "expirationTime": null,
            "keys": {
                "p256dh": URL_SAFE_NO_PAD.encode(self.public()),
                "auth": URL_SAFE_NO_PAD.encode(self.auth),
            },
        })
    }

    /// RFC 8291 decryption of an aes128gcm body of one record, as a user agent does it.
    fn decrypt(&self, body: &[u8]) -> Vec<u8> {
        assert!(body.len() > 21 + 65 + 16, "body too short: {}", body.len());
        let salt = &body[..16];
        let id_len = usize::from(body[20]);
        assert_eq!(id_len, 65, "the key id is the sender's public key");
        let sender = p256::PublicKey::from_sec1_bytes(&body[21..21 + id_len]).expect("key id");
        let ciphertext = &body[21 + id_len..];
        let shared =
            p256::ecdh::diffie_hellman(self.secret.to_nonzero_scalar(), sender.as_affine());
        let mut info = b"WebPush: info\0".to_vec();
        info.extend_from_slice(&self.public());
        info.extend_from_slice(sender.as_affine().to_encoded_point(false).as_bytes());
        let mut ikm = [0u8; 32];
        Hkdf::<Sha256>::new(Some(&self.auth[..]), shared.raw_secret_bytes().as_slice())
            .expand(&info, &mut ikm)
            .expect("ikm");
        let prk = Hkdf::<Sha256>::new(Some(salt), &ikm);
        let mut cek = [0u8; 16];
        prk.expand(b"Content-Encoding: aes128gcm\0", &mut cek)
            .expect("cek");
        let mut nonce = [0u8; 12];
        prk.expand(b"Content-Encoding: nonce\0", &mut nonce)
            .expect("nonce");
        let mut plain = Aes128Gcm::new_from_slice(&cek)
            .expect("key")
            .decrypt(Nonce::from_slice(&nonce), ciphertext)
            .expect("the message decrypts with the subscription's keys");
        // The last record ends with the delimiter 0x02, then padding zeros.
        while plain.last() == Some(&0) {
            plain.pop();
        }
        assert_eq!(plain.pop(), Some(2), "last-record delimiter");
        plain
    }
}

/// Checks `Authorization: vapid t=<JWT>, k=<key>`: the key is the one the API hands out, the
/// ES256 signature verifies with it, the audience is the push service's origin.
fn check_vapid(header: &str, public_key: &str, origin: &str) {
    let rest = header.strip_prefix("vapid ").expect("vapid scheme");
    let mut token = "";
    let mut key = "";
    for part in rest.split(',') {
        let part = part.trim();
        if let Some(t) = part.strip_prefix("t=") {
            token = t;
        } else if let Some(k) = part.strip_prefix("k=") {
            key = k;
        }
    }
    assert_eq!(key, public_key, "k= is the published VAPID key");
    let (signing_input, signature) = token.rsplit_once('.').expect("a JWT");
    let (head, claims) = signing_input.split_once('.').expect("a JWT");
    let head: Value =
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(head).expect("b64")).expect("json");
    assert_eq!(head["alg"], "ES256");
    let claims: Value =
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(claims).expect("b64")).expect("json");
    assert_eq!(claims["aud"], origin);
    assert!(
        claims["sub"]
            .as_str()
            .is_some_and(|s| s.starts_with("mailto:")),
        "{claims}"
    );
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let exp = claims["exp"].as_i64().expect("exp");
    assert!(exp > now && exp <= now + 24 * 3600, "exp within a day");
    let verifying =
        p256::ecdsa::VerifyingKey::from_sec1_bytes(&URL_SAFE_NO_PAD.decode(key).expect("key b64"))
            .expect("a P-256 key");
    let signature =
        p256::ecdsa::Signature::from_slice(&URL_SAFE_NO_PAD.decode(signature).expect("sig b64"))
            .expect("r || s");
    verifying
        .verify(signing_input.as_bytes(), &signature)
        .expect("the VAPID token is signed with the published key");
}

async fn rows_of(app: &TestApp, who: &TestUser) -> i64 {
    sqlx::query_scalar(
        "SELECT count(*) FROM platform.push_subscriptions s
         JOIN platform.users u ON u.id = s.user_id WHERE u.email = $1",
    )
    .bind(&who.email)
    .fetch_one(app.state.platform_pool())
    .await
    .expect("count")
}

#[tokio::test]
async fn subscriptions_are_checked_and_the_digest_arrives_encrypted_with_a_vapid_token() {
    let push = push_service().await;
    let metrics_token = "push-test-metrics-token-0123456789abcdef";
    let app = TestApp::full_env(&[
        ("WEBHOOK_ALLOW_PRIVATE_TARGETS", "true"),
        ("METRICS_TOKEN", metrics_token),
    ])
    .await;
    let t = app.tenant("pushg").await;
    let anna = app.member(&t, Role::Grower).await;
    let other = app.user("pusho").await;

    // The key a browser subscribes with; a caller is needed.
    let res = app.get("/api/v1/push/vapid-public-key").await;
    assert_error(res, 401, "UNAUTHORIZED").await;
    let (s, key) = app
        .rest_as(&anna)
        .call(Method::GET, "/api/v1/push/vapid-public-key", None)
        .await;
    assert_eq!(s, 200, "{key}");
    let public_key = key["public_key"].as_str().expect("public_key").to_owned();
    assert_eq!(
        URL_SAFE_NO_PAD.decode(&public_key).map(|b| b.len()).ok(),
        Some(65)
    );

    // Refused: clear text to a public host, a private address, keys that are no keys,
    // an unknown field. Nothing stored.
    let browser = Browser::new();
    let ok_endpoint = format!("{}/push/{}", push.origin(), Uuid::new_v4());
    let mut bad_keys = browser.subscription(&ok_endpoint);
    bad_keys["keys"]["p256dh"] = json!(URL_SAFE_NO_PAD.encode([4u8; 65]));
    bad_keys["keys"]["auth"] = json!("c2hvcnQ");
    let mut extra = browser.subscription(&ok_endpoint);
    extra["channel"] = json!("x");
    for (body, field) in [
        (
            browser.subscription("http://push.example.com/x"),
            "body.endpoint",
        ),
        (browser.subscription("https://10.0.0.7/x"), "body.endpoint"),
        (
            browser.subscription("https://169.254.169.254/x"),
            "body.endpoint",
        ),
        (bad_keys, "body.keys.auth"),
        (extra, "body.channel"),
    ] {
        let res = app.rest_as(&anna).post(SUBSCRIPTIONS, &body).await;
        let err = assert_error(res, 422, "VALIDATION_ERROR").await;
        assert!(detail_fields(&err).contains(&field.to_owned()), "{err}");
    }
    assert_eq!(rows_of(&app, &anna).await, 0);

    // Two browsers: one whose push service will say 410 (gone).
    let (s, sub) = app
        .rest_as(&anna)
        .call(
            Method::POST,
            SUBSCRIPTIONS,
            Some(&browser.subscription(&ok_endpoint)),
        )
        .await;
    assert_eq!(s, 201, "{sub}");
    assert_eq!(sub["endpoint_host"], "127.0.0.1");
    assert!(
        sub.get("endpoint").is_none() && sub.get("keys").is_none(),
        "{sub}"
    );
    let kept_key = sub["key"].as_str().expect("key").to_owned();
    let gone_browser = Browser::new();
    let gone_endpoint = format!("{}/gone/{}", push.origin(), Uuid::new_v4());
    let (s, _) = app
        .rest_as(&anna)
        .call(
            Method::POST,
            SUBSCRIPTIONS,
            Some(&gone_browser.subscription(&gone_endpoint)),
        )
        .await;
    assert_eq!(s, 201);
    let (s, list) = app
        .rest_as(&anna)
        .call(Method::GET, SUBSCRIPTIONS, None)
        .await;
    assert_eq!((s, list["total"].as_i64()), (200, Some(2)), "{list}");
    assert!(
        !list.to_string().contains("/push/"),
        "no endpoint path in {list}"
    );
    let (_, theirs) = app
        .rest_as(&other)
        .call(Method::GET, SUBSCRIPTIONS, None)
        .await;
    assert_eq!(theirs["total"], 0);

    // The digest as a push only (mail off): due today in her zone.
    let res = app
        .rest_as(&anna)
        .patch(
            "/api/v1/user-preferences",
            &json!({"notify_push": true, "notify_email": false, "timezone": "UTC"}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let today = time::OffsetDateTime::now_utc().date().to_string();
    let (s, _) = app
        .rest_as(&anna)
        .call(
            Method::POST,
            &format!("/api/v1/t/{}/tasks", t.slug),
            Some(&json!({"name": "Repot the basil", "due_on": today})),
        )
        .await;
    assert_eq!(s, 201);
    let done = kultiva::notify::digest::service::send_due(&app.state, true, Some(&anna.email))
        .await
        .expect("send");
    assert_eq!(done.sent, 1, "{done:?}");
    let got = push.wait_for(2).await;
    let delivered = got
        .iter()
        .find(|r| r.path.starts_with("/push/"))
        .expect("a request to the kept subscription");
    assert_eq!(delivered.header("content-encoding"), Some("aes128gcm"));
    assert!(
        delivered
            .header("ttl")
            .is_some_and(|v| v.parse::<u64>().is_ok())
    );
    check_vapid(
        delivered.header("authorization").expect("authorization"),
        &public_key,
        &push.origin(),
    );
    let message: Value = serde_json::from_slice(&browser.decrypt(&delivered.body)).expect("json");
    assert_eq!(message["type"], "digest");
    assert_eq!(message["day"], today.as_str());
    assert_eq!(message["body"], "1 tasks", "{message}");
    assert!(
        message["url"]
            .as_str()
            .is_some_and(|u| u.ends_with(&format!("/gardens/{}/today", t.slug))),
        "{message}"
    );
    // The other browser's copy decrypts with its own keys only.
    let gone = got
        .iter()
        .find(|r| r.path.starts_with("/gone/"))
        .expect("gone");
    let other_copy: Value =
        serde_json::from_slice(&gone_browser.decrypt(&gone.body)).expect("json");
    assert_eq!(other_copy["title"], message["title"]);
    // 410: that subscription is gone; the other one has its last send.
    let (_, list) = app
        .rest_as(&anna)
        .call(Method::GET, SUBSCRIPTIONS, None)
        .await;
    assert_eq!(list["total"], 1, "{list}");
    assert_eq!(list["items"][0]["key"], kept_key.as_str());
    assert!(list["items"][0]["last_sent_at"].is_string(), "{list}");
    // /metrics counts both outcomes (this test's process sends no other push message).
    let res = app
        .get_with(
            "/metrics",
            &[("authorization", &format!("Bearer {metrics_token}"))],
        )
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let scrape = res.text().await.expect("text");
    for line in [
        "kultiva_push_messages_total{outcome=\"delivered\"} 1",
        "kultiva_push_messages_total{outcome=\"gone\"} 1",
    ] {
        assert!(scrape.lines().any(|l| l == line), "{line} in\n{scrape}");
    }
    assert!(scrape.contains("kultiva_digest_mails_total"), "{scrape}");
    assert!(
        scrape.contains("kultiva_webhook_outbox_pending"),
        "{scrape}"
    );
    // No mail (notify_email off), and nothing more the same day.
    let mails: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM platform.mail_outbox WHERE recipient = $1 AND kind = 'digest'",
    )
    .bind(&anna.email)
    .fetch_one(app.state.platform_pool())
    .await
    .expect("count");
    assert_eq!(mails, 0);
    let again = kultiva::notify::digest::service::send_due(&app.state, true, Some(&anna.email))
        .await
        .expect("send");
    assert_eq!(again.sent, 0);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(push.received().len(), 2);

    // Only the owner deletes; then it is gone.
    let one = format!("{SUBSCRIPTIONS}/{kept_key}");
    let res = app.rest_as(&other).delete(&one).await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    let res = app.rest_as(&anna).delete(&one).await;
    assert_eq!(res.status().as_u16(), 204);
    let res = app.rest_as(&anna).delete(&one).await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    assert_eq!(rows_of(&app, &anna).await, 0);

    // The personal export lists a subscription by its push service's host, nothing more;
    // erasure deletes it.
    let (s, _) = app
        .rest_as(&anna)
        .call(
            Method::POST,
            SUBSCRIPTIONS,
            Some(&browser.subscription(&ok_endpoint)),
        )
        .await;
    assert_eq!(s, 201);
    let res = app.rest_as(&anna).get("/api/v1/users/me/export").await;
    assert_eq!(res.status().as_u16(), 200);
    let doc: Value = serde_json::from_slice(&res.bytes().await.expect("body")).expect("json");
    let subs = &doc["push_subscriptions"];
    assert_eq!(subs.as_array().map(Vec::len), Some(1), "{subs}");
    assert_eq!(subs[0]["endpoint_host"], "127.0.0.1");
    let text = doc.to_string();
    let p256dh = URL_SAFE_NO_PAD.encode(browser.public());
    assert!(
        !text.contains("/push/") && !text.contains(&p256dh),
        "no endpoint path or key"
    );
    let res = app
        .rest_as(&anna)
        .send(
            Method::DELETE,
            "/api/v1/users/me",
            Some(&json!({"password": crate::support::PASSWORD})),
        )
        .await;
    assert!(res.status().is_success(), "erased: {}", res.status());
    assert_eq!(rows_of(&app, &anna).await, 0);
}

/// Item 7 of issue 43: a subscription made with an account-wide API key kept the account's
/// digests going to whoever held the key. Now a subscription needs a session (a key is 403
/// and stores nothing), and a take-back deletes every subscription of the account.
#[tokio::test]
async fn a_subscription_needs_a_session_and_ends_with_a_take_back() {
    use kultiva::auth::accounts::email_tokens::{self, Purpose};
    let push = push_service().await;
    let app = TestApp::full_env(&[("WEBHOOK_ALLOW_PRIVATE_TARGETS", "true")]).await;
    let anna = app.user("pushkey").await;
    let browser = Browser::new();
    let endpoint = format!("{}/push/{}", push.origin(), Uuid::new_v4());
    let key = app.api_key(&anna, None).await;
    let res = app
        .rest_key(&key)
        .post(SUBSCRIPTIONS, &browser.subscription(&endpoint))
        .await;
    let err = assert_error(res, 403, "FORBIDDEN").await;
    assert_eq!(err["details"][0]["code"], "person_required", "{err}");
    assert_eq!(rows_of(&app, &anna).await, 0, "nothing stored");

    let (s, created) = app
        .rest_as(&anna)
        .call(
            Method::POST,
            SUBSCRIPTIONS,
            Some(&browser.subscription(&endpoint)),
        )
        .await;
    assert_eq!(s, 201, "{created}");
    assert_eq!(rows_of(&app, &anna).await, 1);
    // Reading and deleting one's own stays open to a key (it grants nothing).
    let (s, _) = app
        .rest_key(&key)
        .call(Method::GET, SUBSCRIPTIONS, None)
        .await;
    assert_eq!(s, 200);

    // The owner of the address takes the account back: the subscription is gone.
    let token = email_tokens::issue(app.state.platform_pool(), anna.id(), Purpose::PasswordReset)
        .await
        .expect("token");
    let res = app
        .post_json(
            "/api/v1/auth/password-reset/confirm",
            &json!({"token": token, "new_password": "the owner's own secret"}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 200);
    assert_eq!(rows_of(&app, &anna).await, 0);
    assert!(push.received().is_empty(), "nothing was pushed");
}
