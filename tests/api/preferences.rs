//! `/user-preferences`: defaults, PUT (every field), PATCH (some), 422 with the field, per user.

use reqwest::Method;
use serde_json::{Value, json};

use crate::support::{TestApp, detail_fields};

const PATH: &str = "/api/v1/user-preferences";

fn full() -> Value {
    json!({"units": "imperial", "locale": "de-DE", "timezone": "Europe/Berlin",
           "experience_level": "advanced", "notify_email": false, "notify_push": true,
           "notify_care_due": true, "notify_digest": "weekly", "digest_hour": 6})
}

#[tokio::test]
async fn preferences_per_user() {
    let app = TestApp::full().await;
    let a = app.user("prefa").await;
    let b = app.user("prefb").await;
    let (s, d) = app.rest_as(&a).call(Method::GET, PATH, None).await;
    assert_eq!(s, 200);
    assert_eq!(
        d,
        json!({"units": "metric", "locale": "en", "timezone": "UTC", "experience_level": "beginner",
               "notify_email": true, "notify_push": false, "notify_care_due": true, "notify_digest": "daily",
               "digest_hour": 7})
    );
    let (s, p) = app.rest_as(&a).call(Method::PUT, PATH, Some(&full())).await;
    assert_eq!((s, p.clone()), (200, full()));
    let (_, got) = app.rest_as(&a).call(Method::GET, PATH, None).await;
    assert_eq!(got, full());
    // B is untouched.
    let (_, other) = app.rest_as(&b).call(Method::GET, PATH, None).await;
    assert_eq!(other["units"], "metric");

    // PATCH changes what it names.
    let (s, p) = app
        .rest_as(&a)
        .call(
            Method::PATCH,
            PATH,
            Some(&json!({"units": "metric", "notify_digest": "off"})),
        )
        .await;
    assert_eq!(s, 200);
    let mut want = full();
    want["units"] = json!("metric");
    want["notify_digest"] = json!("off");
    assert_eq!(p, want);

    // Bad values: 422 with the fields, nothing stored.
    let (s, body) = app.rest_as(&a).call(Method::PATCH, PATH, Some(&json!({"units": "furlongs", "locale": "German", "timezone": "not a zone", "notify_push": "yes",
                    "experience_level": null, "colour": "green"})))
    .await;
    assert_eq!(s, 422);
    let mut fields = detail_fields(&body);
    fields.sort();
    assert_eq!(
        fields,
        [
            "body.colour",
            "body.experience_level",
            "body.locale",
            "body.notify_push",
            "body.timezone",
            "body.units"
        ]
    );
    // PUT needs every field.
    let (s, body) = app
        .rest_as(&a)
        .call(Method::PUT, PATH, Some(&json!({"units": "metric"})))
        .await;
    assert_eq!(s, 422);
    assert_eq!(detail_fields(&body).len(), 7);
    let (_, got) = app.rest_as(&a).call(Method::GET, PATH, None).await;
    assert_eq!(got, want);

    // No credential: 401.
    let res = app.rest().get(PATH).await;
    assert_eq!(res.status().as_u16(), 401);
}
