//! Issue 15's "done when", as a new user would go: a garden admin makes a service account
//! through REST and hands its key to an agent; a grower writes a diary entry about a sick
//! plant, uploads a photo (with a GPS tag) and marks the entry for analysis; the background
//! worker renders the photo; the agent, over JSON-RPC with that key, finds the entry in the
//! queue, claims it, receives the photo as a WebP image block (no GPS anywhere), submits its
//! findings; the grower reads the analysis with the server's disclaimer. Nothing of it is
//! visible from another garden.

use kultiva::auth::Role;
use kultiva::garden::diary::model::DISCLAIMER;
use reqwest::Method;
use serde_json::{Value, json};
use std::time::Duration;

use crate::mcp_tools::Rpc;
use crate::photos::{app_with, has_gps, jpeg_with_gps, storage_dir, webp_dimensions};
use crate::support::TestUser;

async fn rest(
    app: &crate::support::TestApp,
    who: &TestUser,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let res = app.rest_as(who).send(method, path, body.as_ref()).await;
    let s = res.status().as_u16();
    (s, res.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn an_agent_analyses_a_growers_photo_diary_entry() {
    let dir = storage_dir();
    let app = app_with(&dir, &[("PHOTO_RENDITION_WORKERS", "1")]).await;
    let t = app.tenant("walkdiary").await;
    let other = app.tenant("walkdiaryb").await;
    let admin = app.member(&t, Role::Admin).await;
    let grower = app.member(&t, Role::Grower).await;
    let base = format!("/api/v1/t/{}", t.slug);

    // The admin makes a service account for the agent; the raw key is shown once.
    let (s, account) = rest(
        &app,
        &admin,
        Method::POST,
        &format!("{base}/service-accounts"),
        Some(json!({"name": "Leaf doctor", "role": "grower"})),
    )
    .await;
    assert_eq!(s, 201, "{account}");
    let agent_key = account["raw_key"].as_str().expect("raw key").to_owned();

    // The grower writes the entry, uploads a photo taken with a phone (GPS in its EXIF) and
    // marks the entry for analysis, with consent.
    let (s, entry) = rest(
        &app,
        &grower,
        Method::POST,
        &format!("{base}/diary-entries"),
        Some(
            json!({"text": "Yellow spots on the lower leaves since Tuesday.",
                    "entry_type": "problem", "tags": ["leaves"]}),
        ),
    )
    .await;
    assert_eq!(s, 201, "{entry}");
    let entry_key = entry["key"].as_str().expect("key").to_owned();
    let jpeg = jpeg_with_gps(2000, 1500);
    assert!(has_gps(&jpeg), "the input carries a GPS position");
    let res = app
        .client
        .post(app.url(&format!("{base}/diary-entries/{entry_key}/photos")))
        .header("authorization", grower.bearer())
        .header("content-type", "image/jpeg")
        .body(jpeg)
        .send()
        .await
        .expect("upload");
    assert_eq!(res.status().as_u16(), 201);
    let photo: Value = res.json().await.expect("json");
    let photo_key = photo["key"].as_str().expect("photo key").to_owned();
    let (s, marked) = rest(
        &app,
        &grower,
        Method::POST,
        &format!("{base}/diary-entries/{entry_key}/analysis"),
        Some(json!({"consent": true})),
    )
    .await;
    assert_eq!(s, 200, "{marked}");
    assert_eq!(marked["analysis_state"], "requested");

    // The worker renders the photo off the request path.
    let mut ready = false;
    for _ in 0..150 {
        let (_, list) = rest(
            &app,
            &grower,
            Method::GET,
            &format!("{base}/diary-entries/{entry_key}/photos"),
            None,
        )
        .await;
        if list["items"][0]["rendition_status"] == "ready" {
            ready = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(ready, "the rendition worker rendered the photo");

    // The agent: the diary tools are listed; the queue holds the entry (without its text).
    let mut rpc = Rpc::open(&app, &agent_key).await;
    let listed = rpc.request("tools/list", json!({})).await;
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    for tool in [
        "list_pending_diary_analyses",
        "claim_diary_analysis",
        "get_diary_entry",
        "get_diary_entry_photos",
        "submit_diary_analysis",
    ] {
        assert!(names.contains(&tool), "{tool} listed");
    }
    let queue = rpc.call("list_pending_diary_analyses", json!({})).await;
    assert_eq!(queue["isError"], false, "{queue}");
    let items = queue["structuredContent"]["data"]["items"]
        .as_array()
        .expect("items")
        .clone();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["entry_key"], entry_key.as_str());
    assert!(!queue.to_string().contains("Yellow spots"));

    // Claim, read, look at the photo.
    let claim = rpc
        .call("claim_diary_analysis", json!({"entry_key": entry_key}))
        .await;
    assert_eq!(claim["isError"], false, "{claim}");
    let token = claim["structuredContent"]["data"]["lease_token"]
        .as_str()
        .expect("lease token")
        .to_owned();
    let read = rpc
        .call("get_diary_entry", json!({"entry_key": entry_key}))
        .await;
    let data = &read["structuredContent"]["data"];
    assert_eq!(
        data["text"],
        "Yellow spots on the lower leaves since Tuesday."
    );
    assert_eq!(data["photos"][0]["key"], photo_key.as_str());
    assert_eq!(data["pending"], json!([]));
    let photos = rpc
        .call("get_diary_entry_photos", json!({"entry_key": entry_key}))
        .await;
    assert_eq!(photos["isError"], false, "{photos}");
    let content = photos["content"].as_array().expect("content");
    assert_eq!(content.len(), 2, "a text block and one image");
    assert_eq!(content[1]["type"], "image");
    assert_eq!(content[1]["mimeType"], "image/webp");
    use base64::Engine;
    let webp = base64::engine::general_purpose::STANDARD
        .decode(content[1]["data"].as_str().expect("data"))
        .expect("base64");
    assert_eq!(webp_dimensions(&webp), (1280, 960));
    assert!(!has_gps(&webp), "no GPS in what the agent receives");

    // Submit; a second submit with the same token is refused.
    let args = json!({"entry_key": entry_key, "lease_token": token, "status": "completed",
        "summary": "Early septoria leaf spot on the lower leaves.",
        "findings": [{"finding": "septoria leaf spot", "confidence": 0.7,
                      "category": "disease", "detail": "round spots with dark rims"}]});
    let done = rpc.call("submit_diary_analysis", args.clone()).await;
    assert_eq!(done["isError"], false, "{done}");
    let again = rpc.call("submit_diary_analysis", args).await;
    assert_eq!(again["isError"], true);
    assert_eq!(
        again["structuredContent"]["error_code"],
        "conflict.not_claimed"
    );

    // The grower sees the analysis, with the server's disclaimer.
    let (s, analysis) = rest(
        &app,
        &grower,
        Method::GET,
        &format!("{base}/diary-entries/{entry_key}/analysis"),
        None,
    )
    .await;
    assert_eq!(s, 200, "{analysis}");
    assert_eq!(analysis["analysis_state"], "completed");
    let result = &analysis["result"];
    assert_eq!(
        result["summary"],
        "Early septoria leaf spot on the lower leaves."
    );
    assert_eq!(result["findings"][0]["confidence"], 0.7);
    assert_eq!(result["disclaimer"], DISCLAIMER);

    // Another garden's admin sees none of it; the agent's key does not reach that garden.
    let outsider = app.member(&other, Role::Admin).await;
    let (s, _) = rest(
        &app,
        &outsider,
        Method::GET,
        &format!("/api/v1/t/{}/diary-entries/{entry_key}", other.slug),
        None,
    )
    .await;
    assert_eq!(s, 404);
    let foreign = rpc
        .call(
            "get_diary_entry",
            json!({"entry_key": entry_key, "tenant": other.slug.as_str()}),
        )
        .await;
    assert_eq!(foreign["isError"], true);
    let _ = std::fs::remove_dir_all(&dir);
}
