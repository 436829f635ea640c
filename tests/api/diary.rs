//! The diary on the REST face: entries about a plant, a run or the garden (newest first, text
//! withheld from lists, the list filters), photos and pending renditions in reads, edits and
//! deletes by the author or an admin, bad input that writes nothing, two-tenant isolation, and
//! the marking path of the analysis queue (author only, signed in, with consent; never an
//! entry of the tool server; not in light mode; withdrawing).

use kultiva::auth::Role;
use kultiva::tenancy::TenantRecord;
use reqwest::Method;
use serde_json::{Value, json};
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use crate::garden::{count, exec};
use crate::ipm::{World, path, tool, world};
use crate::support::{TestApp, detail_fields};

pub async fn app() -> TestApp {
    TestApp::full_env(&[("MCP_SERVER_ENABLED", "true")]).await
}

pub fn entries(t: &TenantRecord) -> String {
    path(t, "diary-entries")
}

pub fn entry_path(t: &TenantRecord, key: &str) -> String {
    path(t, &format!("diary-entries/{key}"))
}

/// Writes an entry as `who` (asserts 201) and returns it.
pub async fn write(app: &TestApp, w: &World, who: &crate::support::TestUser, body: Value) -> Value {
    let (s, v) = app
        .rest_as(who)
        .call(Method::POST, &entries(&w.t), Some(&body))
        .await;
    assert_eq!(s, 201, "write {body}: {v}");
    v
}

fn day(n: i64) -> String {
    (OffsetDateTime::now_utc().date() - Duration::days(n)).to_string()
}

fn keys(page: &Value) -> Vec<String> {
    page["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| i["key"].as_str().expect("key").to_owned())
        .collect()
}

async fn run(app: &TestApp, w: &World) -> String {
    let (s, v) = app
        .rest_as(&w.grower)
        .call(
            Method::POST,
            &path(&w.t, "planting-runs"),
            Some(&json!({"name": "Diary run"})),
        )
        .await;
    assert_eq!(s, 201, "{v}");
    v["key"].as_str().expect("run key").to_owned()
}

#[tokio::test]
async fn diary_entries_are_written_read_and_listed_with_filters() {
    let app = app().await;
    let w = world(&app, "diaryrw", 2).await;
    let (p0, p1) = (w.plants[0].to_string(), w.plants[1].to_string());
    let run = run(&app, &w).await;

    let first = write(
        &app,
        &w,
        &w.grower,
        json!({"text": "  Leaves yellowing at the bottom.\nChecked the roots.  ",
               "entry_type": "problem", "tags": ["Yellow", "roots", "yellow"],
               "plant_key": p0, "entry_date": day(3),
               "measurements": {"ph": 6.2, "ec_ms_cm": 1.4, "leaf_count": 12,
                                "smell": "earthy", "flowering": false}}),
    )
    .await;
    assert_eq!(
        first["text"],
        "Leaves yellowing at the bottom.\nChecked the roots."
    );
    assert_eq!(first["entry_type"], "problem");
    assert_eq!(first["tags"], json!(["yellow", "roots"]));
    assert_eq!(first["plant_key"], p0);
    assert_eq!(first["run_key"], Value::Null);
    assert!(
        first["species_key"].is_string(),
        "species copied from the plant"
    );
    assert_eq!(first["measurements"]["ph"], 6.2);
    assert_eq!(first["measurements"]["smell"], "earthy");
    assert_eq!(first["entry_date"], day(3));
    assert_eq!(first["written_via"], "rest");
    assert_eq!(first["author_kind"], "user");
    assert_eq!(first["author_key"], w.grower.key);
    assert_eq!(first["environment"], json!([]));
    assert_eq!(first["environment_status"], "no_source");
    assert_eq!(first["photos"], json!([]));
    assert_eq!(first["pending"], json!([]));
    assert_eq!(first["analysis_state"], Value::Null);

    // Defaults: a note of today about the garden.
    let garden = write(&app, &w, &w.admin, json!({"text": "Watered everything."})).await;
    assert_eq!(garden["entry_type"], "note");
    assert_eq!(garden["entry_date"], day(0));
    assert_eq!(garden["plant_key"], Value::Null);
    assert_eq!(garden["species_key"], Value::Null);
    let about_run = write(
        &app,
        &w,
        &w.grower,
        json!({"text": "Run sown.", "entry_type": "milestone", "run_key": run,
               "entry_date": day(1), "tags": ["sowing"]}),
    )
    .await;
    let other_plant = write(
        &app,
        &w,
        &w.grower,
        json!({"text": "Second plant fine.", "entry_type": "observation",
               "plant_key": p1, "entry_date": day(3), "tags": ["yellow"]}),
    )
    .await;
    let k = |v: &Value| v["key"].as_str().expect("key").to_owned();

    // Newest first: entry date, then when written; the text is withheld.
    let (s, page) = app
        .rest_as(&w.viewer)
        .call(Method::GET, &entries(&w.t), None)
        .await;
    assert_eq!(s, 200, "{page}");
    assert_eq!(page["total"], 4);
    assert_eq!(
        keys(&page),
        [k(&garden), k(&about_run), k(&other_plant), k(&first)]
    );
    for item in page["items"].as_array().expect("items") {
        assert!(item.get("text").is_none(), "text withheld: {item}");
        assert_eq!(item["photo_count"], 0);
    }
    let filtered = |q: &'static str| {
        let url = format!("{}?{q}", entries(&w.t));
        let app = &app;
        let viewer = &w.viewer;
        async move {
            let (s, page) = app.rest_as(viewer).call(Method::GET, &url, None).await;
            assert_eq!(s, 200, "{q}: {page}");
            keys(&page)
        }
    };
    let plant_q: &'static str = Box::leak(format!("plant={p0}").into_boxed_str());
    assert_eq!(filtered(plant_q).await, [k(&first)]);
    let run_q: &'static str = Box::leak(format!("run={run}").into_boxed_str());
    assert_eq!(filtered(run_q).await, [k(&about_run)]);
    let species_q: &'static str = Box::leak(
        format!(
            "species={}",
            first["species_key"].as_str().expect("species")
        )
        .into_boxed_str(),
    );
    assert_eq!(filtered(species_q).await, [k(&other_plant), k(&first)]);
    assert_eq!(filtered("entry_type=milestone").await, [k(&about_run)]);
    assert_eq!(filtered("tag=YELLOW").await, [k(&other_plant), k(&first)]);
    let range: &'static str = Box::leak(format!("from={}&to={}", day(2), day(1)).into_boxed_str());
    assert_eq!(filtered(range).await, [k(&about_run)]);
    assert!(filtered("analysis_state=requested").await.is_empty());
    let (_, page) = app
        .rest_as(&w.viewer)
        .call(
            Method::GET,
            &format!("{}?limit=1&skip=1", entries(&w.t)),
            None,
        )
        .await;
    assert_eq!(
        (page["total"].clone(), keys(&page)),
        (json!(4), vec![k(&about_run)])
    );

    // Photos (the photo room writes them): descriptors in reads, renditions not ready pending.
    let id = Uuid::parse_str(&k(&first)).expect("uuid");
    for (pos, status) in [(0, "ready"), (1, "pending"), (2, "unavailable")] {
        let sql = format!(
            "INSERT INTO {{schema}}.diary_photos (id, entry_id, position, content_type, byte_size, \
             width, height, original_key, rendition_status, uploaded_by, rendition_512_key) \
             VALUES (gen_random_uuid(), $1, {pos}, 'image/jpeg', 1000, 800, 600, 'o/{pos}', \
             '{status}', gen_random_uuid(), {})",
            if status == "ready" { "'r/512'" } else { "NULL" }
        );
        exec(&app, &w.t, &sql, id).await;
    }
    let (s, one) = app
        .rest_as(&w.viewer)
        .call(Method::GET, &entry_path(&w.t, &k(&first)), None)
        .await;
    assert_eq!(s, 200, "{one}");
    assert_eq!(one["text"], first["text"]);
    assert_eq!(one["photos"].as_array().expect("photos").len(), 3);
    assert_eq!(one["photos"][0]["renditions"], json!([512]));
    let pending: Vec<&str> = one["pending"]
        .as_array()
        .expect("pending")
        .iter()
        .map(|p| p["status"].as_str().expect("status"))
        .collect();
    assert_eq!(pending, ["thumbnail_pending", "unavailable"]);
    assert_eq!(one["pending"][0]["key"], one["photos"][1]["key"]);
    let (_, page) = app
        .rest_as(&w.viewer)
        .call(Method::GET, plant_q_url(&w, &p0).as_str(), None)
        .await;
    assert_eq!(page["items"][0]["photo_count"], 3);
}

fn plant_q_url(w: &World, plant: &str) -> String {
    format!("{}?plant={plant}", entries(&w.t))
}

#[tokio::test]
async fn diary_bad_input_writes_nothing() {
    let app = app().await;
    let w = world(&app, "diarybad", 1).await;
    let other = world(&app, "diarybadb", 1).await;
    let p = w.plants[0].to_string();
    let long = "x".repeat(10_001);
    let tags: Vec<String> = (0..21).map(|i| format!("t{i}")).collect();
    for (body, field) in [
        (json!({}), "body.text"),
        (json!({"text": "   "}), "body.text"),
        (json!({"text": long}), "body.text"),
        (json!({"text": "a\u{0}b"}), "body.text"),
        (
            json!({"text": "ok", "entry_type": "diary"}),
            "body.entry_type",
        ),
        (json!({"text": "ok", "tags": tags}), "body.tags"),
        (json!({"text": "ok", "tags": [""]}), "body.tags[0]"),
        (json!({"text": "ok", "plant_key": "nope"}), "body.plant_key"),
        (
            json!({"text": "ok", "plant_key": p, "run_key": p}),
            "body.run_key",
        ),
        (
            json!({"text": "ok", "entry_date": day(-1)}),
            "body.entry_date",
        ),
        (
            json!({"text": "ok", "entry_date": "2026-02-30"}),
            "body.entry_date",
        ),
        (
            json!({"text": "ok", "measurements": {"ph": 15}}),
            "body.measurements.ph",
        ),
        (
            json!({"text": "ok", "measurements": {"leaf_count": 2.5}}),
            "body.measurements.leaf_count",
        ),
        (
            json!({"text": "ok", "measurements": {"Bad Key": 1}}),
            "body.measurements.Bad Key",
        ),
        (
            json!({"text": "ok", "measurements": {"x": [1]}}),
            "body.measurements.x",
        ),
        (
            json!({"text": "ok", "measurements": [1]}),
            "body.measurements",
        ),
        (json!({"text": "ok", "author_key": p}), "body.author_key"),
        (
            json!({"text": "ok", "analysis_state": "requested"}),
            "body.analysis_state",
        ),
    ] {
        let (s, v) = app
            .rest_as(&w.grower)
            .call(Method::POST, &entries(&w.t), Some(&body))
            .await;
        assert_eq!(
            (s, v["error_code"].as_str()),
            (422, Some("VALIDATION_ERROR")),
            "{body}: {v}"
        );
        assert!(detail_fields(&v).contains(&field.to_owned()), "{body}: {v}");
    }
    // Unknown plant or run, and another garden's plant: 404.
    for body in [
        json!({"text": "ok", "plant_key": Uuid::now_v7()}),
        json!({"text": "ok", "run_key": Uuid::now_v7()}),
        json!({"text": "ok", "plant_key": other.plants[0]}),
    ] {
        let (s, v) = app
            .rest_as(&w.grower)
            .call(Method::POST, &entries(&w.t), Some(&body))
            .await;
        assert_eq!(
            (s, v["error_code"].as_str()),
            (404, Some("ENTITY_NOT_FOUND")),
            "{body}: {v}"
        );
    }
    // A viewer writes nothing; not JSON is 400.
    let (s, _) = app
        .rest_as(&w.viewer)
        .call(Method::POST, &entries(&w.t), Some(&json!({"text": "x"})))
        .await;
    assert_eq!(s, 403);
    let res = reqwest::Client::new()
        .post(app.url(&entries(&w.t)))
        .header("authorization", w.grower.bearer())
        .header("content-type", "application/json")
        .body("{")
        .send()
        .await
        .expect("sent");
    assert_eq!(res.status().as_u16(), 400);
    assert_eq!(count(&app, &w.t, "diary_entries").await, 0);
    assert_eq!(count(&app, &other.t, "diary_entries").await, 0);
    // Bad filters are refused, one detail each.
    for (q, field) in [
        ("plant=x", "query.plant"),
        ("entry_type=diary", "query.entry_type"),
        ("analysis_state=done", "query.analysis_state"),
        ("from=yesterday", "query.from"),
        ("tag=", "query.tag"),
        ("species=", "query.species"),
        ("limit=101", "query.limit"),
    ] {
        let url = format!("{}?{q}", entries(&w.t));
        let (s, v) = app.rest_as(&w.viewer).call(Method::GET, &url, None).await;
        assert_eq!(s, 422, "{q}: {v}");
        assert!(detail_fields(&v).contains(&field.to_owned()), "{q}: {v}");
    }
    // Text filters are checked as sent, as the document's maxLength and pattern say: 50
    // letters after a space are 51 characters; a control character is refused anywhere.
    for (q, field) in [
        (format!("tag=%20{}", "a".repeat(50)), "query.tag"),
        (format!("species=%20{}", "a".repeat(100)), "query.species"),
        ("tag=a%01".to_owned(), "query.tag"),
    ] {
        let url = format!("{}?{q}", entries(&w.t));
        let (s, v) = app.rest_as(&w.viewer).call(Method::GET, &url, None).await;
        assert_eq!(s, 422, "{q}: {v}");
        assert!(detail_fields(&v).contains(&field.to_owned()), "{q}: {v}");
    }
    let url = format!("{}?tag=%20Tomato%20", entries(&w.t));
    let (s, v) = app.rest_as(&w.viewer).call(Method::GET, &url, None).await;
    assert_eq!(s, 200, "a tag with blanks around it is trimmed: {v}");
    let url = format!("{}?from={}&to={}", entries(&w.t), day(1), day(2));
    let (s, v) = app.rest_as(&w.viewer).call(Method::GET, &url, None).await;
    assert_eq!(s, 422, "{v}");
    let url = format!("{}?plant={}", entries(&w.t), other.plants[0]);
    let (s, _) = app.rest_as(&w.viewer).call(Method::GET, &url, None).await;
    assert_eq!(s, 404);
}

#[tokio::test]
async fn diary_edits_and_deletes_by_the_author_or_an_admin() {
    let app = app().await;
    let w = world(&app, "diaryed", 1).await;
    let second = app.member(&w.t, Role::Grower).await;
    let e = write(
        &app,
        &w,
        &w.grower,
        json!({"text": "First words.", "tags": ["a"], "plant_key": w.plants[0],
               "measurements": {"ph": 6.0}}),
    )
    .await;
    let key = e["key"].as_str().expect("key").to_owned();
    let at = entry_path(&w.t, &key);
    // Another grower may not change or delete it: 403, nothing changed.
    let (s, v) = app
        .rest_as(&second)
        .call(Method::PATCH, &at, Some(&json!({"text": "Hijacked"})))
        .await;
    assert_eq!(
        (s, v["error_code"].as_str()),
        (403, Some("FORBIDDEN")),
        "{v}"
    );
    let (s, _) = app.rest_as(&second).call(Method::DELETE, &at, None).await;
    assert_eq!(s, 403);
    let (s, _) = app
        .rest_as(&w.viewer)
        .call(Method::PATCH, &at, Some(&json!({"text": "v"})))
        .await;
    assert_eq!(s, 403);
    let (_, now) = app.rest_as(&w.viewer).call(Method::GET, &at, None).await;
    assert_eq!(now["text"], "First words.");
    // Bad patches: null for a field that cannot be cleared, bad values, unknown fields.
    for (body, field) in [
        (json!({"text": null}), "body.text"),
        (json!({"text": ""}), "body.text"),
        (json!({"tags": null}), "body.tags"),
        (json!({"entry_type": "x"}), "body.entry_type"),
        (json!({"entry_date": day(-2)}), "body.entry_date"),
        (json!({"measurements": {"ph": -1}}), "body.measurements.ph"),
        (json!({"plant_key": w.plants[0]}), "body.plant_key"),
    ] {
        let (s, v) = app
            .rest_as(&w.grower)
            .call(Method::PATCH, &at, Some(&body))
            .await;
        assert_eq!(s, 422, "{body}: {v}");
        assert!(detail_fields(&v).contains(&field.to_owned()), "{body}: {v}");
    }
    let (_, still) = app.rest_as(&w.viewer).call(Method::GET, &at, None).await;
    assert_eq!(
        still["updated_at"], e["updated_at"],
        "bad patches change nothing"
    );
    // The author changes what it sends, the rest stays.
    let (s, v) = app
        .rest_as(&w.grower)
        .call(
            Method::PATCH,
            &at,
            Some(&json!({"text": "Better words.", "tags": [], "entry_type": "care"})),
        )
        .await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["text"], "Better words.");
    assert_eq!(v["tags"], json!([]));
    assert_eq!(v["entry_type"], "care");
    assert_eq!(v["measurements"], json!({"ph": 6.0}));
    assert_eq!(v["plant_key"], e["plant_key"]);
    // An admin may edit and delete anyone's entry.
    let (s, v) = app
        .rest_as(&w.admin)
        .call(Method::PATCH, &at, Some(&json!({"measurements": {}})))
        .await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["measurements"], json!({}));
    let (s, _) = app.rest_as(&w.admin).call(Method::DELETE, &at, None).await;
    assert_eq!(s, 204);
    let (s, _) = app.rest_as(&w.viewer).call(Method::GET, &at, None).await;
    assert_eq!(s, 404);
    // The author deletes its own; a key that is no UUID is 404.
    let mine = write(&app, &w, &second, json!({"text": "Mine."})).await;
    let at = entry_path(&w.t, mine["key"].as_str().expect("key"));
    let (s, _) = app.rest_as(&second).call(Method::DELETE, &at, None).await;
    assert_eq!(s, 204);
    assert_eq!(count(&app, &w.t, "diary_entries").await, 0);
    let (s, _) = app
        .rest_as(&w.viewer)
        .call(Method::GET, &entry_path(&w.t, "not-a-key"), None)
        .await;
    assert_eq!(s, 404);
}

#[tokio::test]
async fn diary_entries_stay_in_their_garden() {
    let app = app().await;
    let a = world(&app, "diaryisoa", 1).await;
    let b = world(&app, "diaryisob", 1).await;
    let e = write(&app, &a, &a.grower, json!({"text": "A's secret."})).await;
    let key = e["key"].as_str().expect("key");
    // A's entry through B's slug: unknown there.
    for method in [Method::GET, Method::PATCH, Method::DELETE] {
        let body = (method == Method::PATCH).then(|| json!({"text": "x"}));
        let (s, v) = app
            .rest_as(&b.admin)
            .call(method.clone(), &entry_path(&b.t, key), body.as_ref())
            .await;
        assert_eq!(s, 404, "{method}: {v}");
    }
    let (s, _) = app
        .rest_as(&b.admin)
        .call(
            Method::POST,
            &format!("{}/analysis", entry_path(&b.t, key)),
            Some(&json!({"consent": true})),
        )
        .await;
    assert_eq!(s, 404);
    // B's admin on A's slug: the garden does not exist for it.
    let (s, _) = app
        .rest_as(&b.admin)
        .call(Method::GET, &entry_path(&a.t, key), None)
        .await;
    assert_eq!(s, 404);
    let (_, page) = app
        .rest_as(&b.admin)
        .call(Method::GET, &entries(&b.t), None)
        .await;
    assert_eq!(page["total"], 0);
    let (_, still) = app
        .rest_as(&a.viewer)
        .call(Method::GET, &entry_path(&a.t, key), None)
        .await;
    assert_eq!(still["text"], "A's secret.");
}

fn analysis(t: &TenantRecord, key: &str) -> String {
    format!("{}/analysis", entry_path(t, key))
}

#[tokio::test]
async fn marking_for_analysis_needs_the_author_signed_in_with_consent() {
    let app = app().await;
    let w = world(&app, "diarymark", 1).await;
    let e = write(
        &app,
        &w,
        &w.grower,
        json!({"text": "Spots on leaves.", "plant_key": w.plants[0]}),
    )
    .await;
    let key = e["key"].as_str().expect("key").to_owned();
    let at = analysis(&w.t, &key);
    let (s, v) = app.rest_as(&w.viewer).call(Method::GET, &at, None).await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["analysis_state"], Value::Null);
    assert_eq!(v["result"], Value::Null);
    // Without consent: 422, nothing marked.
    for (body, code) in [
        (json!({}), "missing"),
        (json!({"consent": false}), "value_error"),
        (json!({"consent": "yes"}), "type_error"),
        (json!({"consent": true, "extra": 1}), "extra_forbidden"),
    ] {
        let (s, v) = app
            .rest_as(&w.grower)
            .call(Method::POST, &at, Some(&body))
            .await;
        assert_eq!(s, 422, "{body}: {v}");
        assert_eq!(v["details"][0]["code"], code, "{body}: {v}");
    }
    // Not the author (another grower, an admin), a viewer, the author's API key: refused.
    let second = app.member(&w.t, Role::Grower).await;
    for who in [&second, &w.admin] {
        let (s, v) = app
            .rest_as(who)
            .call(Method::POST, &at, Some(&json!({"consent": true})))
            .await;
        assert_eq!(
            (s, v["error_code"].as_str()),
            (403, Some("FORBIDDEN")),
            "{v}"
        );
    }
    let (s, _) = app
        .rest_as(&w.viewer)
        .call(Method::POST, &at, Some(&json!({"consent": true})))
        .await;
    assert_eq!(s, 403);
    let key_of_author = app.api_key(&w.grower, Some(w.t.slug.as_str())).await;
    let res = app
        .rest_key(&key_of_author)
        .post(&at, &json!({"consent": true}))
        .await;
    assert_eq!(res.status().as_u16(), 403);
    let (_, v) = app.rest_as(&w.viewer).call(Method::GET, &at, None).await;
    assert_eq!(v["analysis_state"], Value::Null, "nothing marked");

    // The author, signed in, with consent: requested, in the work queue.
    let (s, v) = app
        .rest_as(&w.grower)
        .call(Method::POST, &at, Some(&json!({"consent": true})))
        .await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["analysis_state"], "requested");
    assert_eq!(v["requested_by"], w.grower.key);
    assert!(v["consent_at"].is_string() && v["requested_at"].is_string());
    assert_eq!(v["lease_expires_at"], Value::Null);
    // Again: unchanged.
    let (s, again) = app
        .rest_as(&w.grower)
        .call(Method::POST, &at, Some(&json!({"consent": true})))
        .await;
    assert_eq!(s, 200);
    assert_eq!(again["requested_at"], v["requested_at"]);
    let (_, page) = app
        .rest_as(&w.viewer)
        .call(
            Method::GET,
            &format!("{}?analysis_state=requested", entries(&w.t)),
            None,
        )
        .await;
    assert_eq!(keys(&page), std::slice::from_ref(&key));
    let (_, one) = app
        .rest_as(&w.viewer)
        .call(Method::GET, &entry_path(&w.t, &key), None)
        .await;
    assert_eq!(one["analysis_state"], "requested");

    // Withdrawing: another grower may not; the author may; then it is not marked (409 again).
    let (s, _) = app.rest_as(&second).call(Method::DELETE, &at, None).await;
    assert_eq!(s, 403);
    let (s, _) = app.rest_as(&w.grower).call(Method::DELETE, &at, None).await;
    assert_eq!(s, 204);
    let (_, v) = app.rest_as(&w.viewer).call(Method::GET, &at, None).await;
    assert_eq!(
        (v["analysis_state"].clone(), v["consent_at"].clone()),
        (Value::Null, Value::Null)
    );
    let (s, v) = app.rest_as(&w.grower).call(Method::DELETE, &at, None).await;
    assert_eq!((s, v["error_code"].as_str()), (409, Some("STATE_CONFLICT")));

    // An entry the tool server wrote is never queued, even for its author.
    let grower_key = app.api_key(&w.grower, Some(w.t.slug.as_str())).await;
    let (s, v) = tool(
        &app,
        &grower_key,
        "add_plant_diary_entry",
        json!({"plant_key": w.plants[0], "text": "Agent note."}),
    )
    .await;
    assert_eq!(s, 200, "{v}");
    let agent_entry = v["data"]["entry_key"].as_str().expect("key").to_owned();
    assert_eq!(v["data"]["author_key"], w.grower.key);
    assert_eq!(v["data"]["written_via"], "mcp");
    let (s, v) = app
        .rest_as(&w.grower)
        .call(
            Method::POST,
            &analysis(&w.t, &agent_entry),
            Some(&json!({"consent": true})),
        )
        .await;
    assert_eq!(
        (s, v["error_code"].as_str()),
        (409, Some("STATE_CONFLICT")),
        "{v}"
    );
    let (_, v) = app
        .rest_as(&w.viewer)
        .call(Method::GET, &analysis(&w.t, &agent_entry), None)
        .await;
    assert_eq!(v["analysis_state"], Value::Null);
}

#[tokio::test]
async fn marking_is_refused_in_light_mode() {
    let app = TestApp::spawn().await;
    let res = app
        .post_json(
            "/api/v1/t/default/diary-entries",
            &json!({"text": "Light note."}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 201);
    let e: Value = res.json().await.expect("json");
    let key = e["key"].as_str().expect("key");
    let at = format!("/api/v1/t/default/diary-entries/{key}/analysis");
    let res = app.post_json(&at, &json!({"consent": true})).await;
    crate::support::assert_error(res, 403, "FORBIDDEN").await;
    let v: Value = app.get(&at).await.json().await.expect("json");
    assert_eq!(v["analysis_state"], Value::Null);
    let res = app
        .rest()
        .delete(&format!("/api/v1/t/default/diary-entries/{key}"))
        .await;
    assert_eq!(res.status().as_u16(), 204);
}

#[tokio::test]
async fn titles_are_optional_single_lines_that_blank_or_null_clear() {
    let app = app().await;
    let w = world(&app, "diarytitle", 1).await;
    // Blank and null are no title.
    for title in [json!(""), json!("   "), Value::Null] {
        let e = write(&app, &w, &w.grower, json!({"text": "t", "title": title})).await;
        assert_eq!(e["title"], Value::Null, "{title}");
    }
    let written = count(&app, &w.t, "diary_entries").await;
    // A second line, too long, not a string: 422 naming the field, nothing written.
    for bad in [json!("Week 3\nmore"), json!("x".repeat(201)), json!(5)] {
        let body = json!({"text": "t", "title": bad});
        let (s, v) = app
            .rest_as(&w.grower)
            .call(Method::POST, &entries(&w.t), Some(&body))
            .await;
        assert_eq!(s, 422, "{body}: {v}");
        assert_eq!(detail_fields(&v), ["body.title"], "{v}");
    }
    assert_eq!(count(&app, &w.t, "diary_entries").await, written);

    // Stored trimmed, shown by the entry and the list.
    let e = write(
        &app,
        &w,
        &w.grower,
        json!({"text": "Tied up the stem.", "title": "  Week 3: tied up  "}),
    )
    .await;
    assert_eq!(e["title"], "Week 3: tied up");
    let key = e["key"].as_str().expect("key").to_owned();
    let at = entry_path(&w.t, &key);
    let (_, got) = app.rest_as(&w.viewer).call(Method::GET, &at, None).await;
    assert_eq!(got["title"], "Week 3: tied up");
    let (_, page) = app
        .rest_as(&w.viewer)
        .call(Method::GET, &entries(&w.t), None)
        .await;
    let listed = page["items"]
        .as_array()
        .expect("items")
        .iter()
        .find(|i| i["key"] == key.as_str())
        .cloned()
        .expect("listed");
    assert_eq!(listed["title"], "Week 3: tied up");
    assert!(listed.get("text").is_none());

    // A patch without a title keeps it; a new one replaces it; a bad one changes nothing;
    // blank and null remove it.
    let patch = |body: Value| {
        let (app, at, who) = (&app, &at, &w.grower);
        async move { app.rest_as(who).call(Method::PATCH, at, Some(&body)).await }
    };
    let (s, v) = patch(json!({"text": "Tied up the stem again."})).await;
    assert_eq!((s, v["title"].as_str()), (200, Some("Week 3: tied up")));
    let (s, v) = patch(json!({"title": "Week 4"})).await;
    assert_eq!((s, v["title"].as_str()), (200, Some("Week 4")), "{v}");
    let (s, v) = patch(json!({"title": "a\u{7}b", "text": "Changed?"})).await;
    assert_eq!(s, 422, "{v}");
    assert_eq!(detail_fields(&v), ["body.title"], "{v}");
    let (_, got) = app.rest_as(&w.viewer).call(Method::GET, &at, None).await;
    assert_eq!(
        (got["title"].as_str(), got["text"].as_str()),
        (Some("Week 4"), Some("Tied up the stem again."))
    );
    let (s, v) = patch(json!({"title": "  "})).await;
    assert_eq!((s, &v["title"]), (200, &Value::Null), "{v}");
    patch(json!({"title": "Week 5"})).await;
    let (s, v) = patch(json!({"title": null})).await;
    assert_eq!((s, &v["title"]), (200, &Value::Null), "{v}");
    let (_, got) = app.rest_as(&w.viewer).call(Method::GET, &at, None).await;
    assert_eq!(got["title"], Value::Null);
}
