//! The diary pages (`/app/g/{slug}/diary`, `…/diary/{entry_key}`) over real HTTP against
//! PostgreSQL and Redis, as a browser without JavaScript uses them: the list and its filters
//! (plant, kind, tag, analysis state, dates; a refused filter beside its field), an entry's page
//! with its photo, and marking for analysis, the only way into the queue: refused without
//! consent, for a viewer, for someone not the author and without the CSRF value, each writing
//! nothing; allowed, the entry is in the agents' queue; a completed analysis shows the server's
//! disclaimer. Another garden's entries are a 404, never shown.

use image::ImageFormat;
use kultiva::auth::Role;
use kultiva::garden::diary::model::DISCLAIMER;
use kultiva::tenancy::TenantRecord;
use kultiva::values::page::PageRequest;
use serde_json::{Value, json};

use crate::diary::{app, write};
use crate::ipm::{tool, world};
use crate::mcp_tools::scoped_key;
use crate::support::{PASSWORD, TestApp};
use crate::web::Browser;

fn day(n: i64) -> String {
    (time::OffsetDateTime::now_utc().date() - time::Duration::days(n)).to_string()
}

fn key_of(v: &Value) -> String {
    v["key"].as_str().expect("key").to_owned()
}

/// The analysis state as the service reads it, and the queue's entries.
async fn queue(app: &TestApp, t: &TenantRecord, key: &str) -> (Option<String>, Vec<String>) {
    let a = kultiva::garden::diary::service::get_analysis(&app.state, t, key)
        .await
        .expect("analysis");
    let pending = kultiva::garden::diary::service::list_pending(
        &app.state,
        t,
        true,
        PageRequest {
            skip: 0,
            limit: 100,
        },
    )
    .await
    .expect("queue");
    (
        a.analysis_state,
        pending
            .items
            .iter()
            .map(|p| p.entry_key.to_string())
            .collect(),
    )
}

#[tokio::test]
async fn the_diary_lists_with_filters_and_shows_an_entry_with_its_photo() {
    let app = app().await;
    let w = world(&app, "wdy", 2).await;
    let (p0, p1) = (w.plants[0], w.plants[1]);
    let spots = write(
        &app,
        &w,
        &w.grower,
        json!({"title": "Spots", "text": "Brown spots on lower leaves.\nSpreading.",
        "plant_key": p0, "entry_type": "problem", "tags": ["Blight"], "entry_date": day(2),
        "measurements": {"ph": 5.8}}),
    )
    .await;
    write(
        &app,
        &w,
        &w.grower,
        json!({"title": "Watering day", "text": "Watered.", "plant_key": p1,
        "entry_type": "care"}),
    )
    .await;
    write(
        &app,
        &w,
        &w.admin,
        json!({"title": "Admin note", "text": "Checked the bed."}),
    )
    .await;
    let other = world(&app, "wdyb", 1).await;
    let foreign = write(
        &app,
        &other,
        &other.grower,
        json!({"title": "Foreign secret",
        "text": "Not for garden A.", "plant_key": other.plants[0]}),
    )
    .await;

    let slug = w.t.slug.as_str().to_owned();
    let base = format!("/app/g/{slug}/diary");
    let mut v = Browser::new(&app, "en");
    v.sign_in(&w.viewer.email, PASSWORD).await;
    let all = v.get(&base).await;
    assert_eq!(all.status, 200, "{}", all.body);
    for part in [
        "<h1>Diary · ",
        &format!(r#"href="{base}""#),
        &format!(r#"href="/app/g/{slug}/harvests""#),
        "Spots",
        "Watering day",
        "Admin note",
        "blight",
        r#"<label for="dy-tag">"#,
        &format!(r#"href="{base}/{}""#, key_of(&spots)),
    ] {
        assert!(all.has(part), "{part}: {}", all.body);
    }
    assert!(!all.has("Foreign secret"));
    assert!(!all.has("Brown spots"), "the list withholds the text");
    // The filters, as the form sends them (every field, the unused ones empty).
    let titles = ["Spots", "Watering day", "Admin note"];
    for (query, expect) in [
        (
            "plant=&entry_type=&tag=&analysis_state=&from=&to=",
            [true, true, true],
        ),
        (
            &*format!("plant={p0}&entry_type=&tag="),
            [true, false, false],
        ),
        ("entry_type=care&tag=", [false, true, false]),
        ("tag=BLIGHT", [true, false, false]),
        (&*format!("from={}&to=", day(1)), [false, true, true]),
        (&*format!("to={}", day(1)), [true, false, false]),
    ] {
        let page = v.get(&format!("{base}?{query}")).await;
        assert_eq!(page.status, 200, "{query}: {}", page.body);
        for (title, shown) in titles.iter().zip(expect) {
            assert_eq!(
                page.has(&format!(">{title}</a>")),
                shown,
                "{query} {title}: {}",
                page.body
            );
        }
    }
    let none = v.get(&format!("{base}?entry_type=milestone")).await;
    assert!(none.has("No entry matches these filters."));
    // Refused filters: the page again (422) with the reason beside the field, nothing listed.
    for (query, field) in [
        ("from=2026-12-31&to=2026-01-01", "to"),
        (&*format!("tag={}", "x".repeat(51)), "tag"),
        ("from=yesterday", "from"),
        ("entry_type=gossip", "entry_type"),
    ] {
        let page = v.get(&format!("{base}?{query}")).await;
        assert_eq!(page.status, 422, "{query}: {}", page.body);
        assert!(
            page.has(&format!(r#"id="dy-{field}-err""#)),
            "{query}: {}",
            page.body
        );
        assert!(!page.has(">Spots</a>"));
    }
    // Garden B's plant as the filter, B's entry by its key: the 404 page, nothing of B.
    for p in [
        format!("{base}?plant={}", other.plants[0]),
        format!("{base}/{}", key_of(&foreign)),
    ] {
        let page = v.get(&p).await;
        assert_eq!(page.status, 404, "{p}");
        assert!(!page.has("Foreign secret") && !page.has("Not for garden A"));
    }
    assert_eq!(v.get(&format!("{base}/not-a-key")).await.status, 404);

    // An entry's page: text, measurements, tags, plant.
    let entry = v.get(&format!("{base}/{}", key_of(&spots))).await;
    assert_eq!(entry.status, 200, "{}", entry.body);
    for part in [
        "<h1>Spots</h1>",
        "<p>Brown spots on lower leaves.</p><p>Spreading.</p>",
        "blight",
        "ph",
        "5.8",
        &format!(r#"href="/app/g/{slug}/plants/{p0}">Tomato 0</a>"#),
        "Not marked for analysis",
        "Only growers and admins mark entries for analysis.",
    ] {
        assert!(entry.has(part), "{part}: {}", entry.body);
    }
    assert!(!entry.has(r#"name="consent""#), "no form for a viewer");

    // An entry with a photo, written on the plant's page: its page shows the rendition.
    let mut g = Browser::new(&app, "en");
    g.sign_in(&w.grower.email, PASSWORD).await;
    let plant_page = format!("/app/g/{slug}/plants/{p1}");
    let csrf = g.csrf(&plant_page).await;
    let png = crate::photos::encode(&crate::photos::picture(64, 48), ImageFormat::Png);
    let sent = g
        .post_multipart(
            &format!("{plant_page}/diary"),
            &[
                ("_csrf", &csrf),
                ("title", "Leaf photo"),
                ("text", "See the leaf."),
            ],
            &[("photo", "leaf.png", "image/png", png)],
        )
        .await;
    assert_eq!(sent.status, 303, "{}", sent.body);
    let listed = g.get(&format!("{base}?plant={p1}")).await;
    assert!(listed.has("1 photo"), "{}", listed.body);
    let photo_key: uuid::Uuid = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "SELECT id FROM {}.diary_photos LIMIT 1",
        w.t.schema_name.quoted()
    )))
    .fetch_one(app.state.platform_pool())
    .await
    .expect("photo");
    let entry_key: uuid::Uuid = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "SELECT entry_id FROM {}.diary_photos LIMIT 1",
        w.t.schema_name.quoted()
    )))
    .fetch_one(app.state.platform_pool())
    .await
    .expect("entry");
    let rendition = format!("/app/g/{slug}/photos/{photo_key}/512");
    let mut shown = None;
    for _ in 0..100 {
        let _ = kultiva::garden::photos::worker::run_once(&app.state).await;
        let page = g.get(&format!("{base}/{entry_key}")).await;
        if page.has(&rendition) {
            shown = Some(page);
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let shown = shown.expect("the entry's page shows the photo's rendition");
    assert!(
        shown.has(r#"alt="Photo 1 of this entry""#),
        "{}",
        shown.body
    );

    // German.
    let mut de = Browser::new(&app, "de");
    de.sign_in(&w.grower.email, PASSWORD).await;
    let liste = de.get(&base).await;
    assert_eq!(liste.status, 200);
    for part in ["<h1>Tagebuch · ", "Schlagwort", "Einträge zeigen"] {
        assert!(liste.has(part), "{part}: {}", liste.body);
    }
    let eintrag = de.get(&format!("{base}/{}", key_of(&spots))).await;
    assert!(eintrag.has("Zur Analyse vormerken"), "{}", eintrag.body);
}

#[tokio::test]
async fn marking_for_analysis_checks_consent_role_and_author_and_shows_the_result() {
    let app = app().await;
    let w = world(&app, "wdym", 1).await;
    let spots = write(
        &app,
        &w,
        &w.grower,
        json!({"title": "Spots", "text": "Brown spots.",
        "plant_key": w.plants[0]}),
    )
    .await;
    let key = key_of(&spots);
    let slug = w.t.slug.as_str().to_owned();
    let entry = format!("/app/g/{slug}/diary/{key}");
    let mark = format!("{entry}/analysis");

    let mut g = Browser::new(&app, "en");
    g.sign_in(&w.grower.email, PASSWORD).await;
    let page = g.get(&entry).await;
    assert_eq!(page.status, 200);
    assert!(page.has(r#"name="consent""#), "{}", page.body);
    assert!(page.has("I agree that an AI agent of this garden reads this entry"));
    let csrf = page.csrf();

    // Without the CSRF value, without consent: refused, nothing in the queue.
    let bare = g.post(&mark, &[("consent", "true")]).await;
    assert_eq!(bare.status, 403);
    let unticked = g.post(&mark, &[("_csrf", &csrf)]).await;
    assert_eq!(unticked.status, 422, "{}", unticked.body);
    assert!(
        unticked.has(r#"id="dy-consent-err">Tick the box to agree"#),
        "{}",
        unticked.body
    );
    assert_eq!(queue(&app, &w.t, &key).await, (None, vec![]));
    // A viewer, and an admin who is not the author: refused plainly, nothing marked.
    for (who, text) in [
        (
            &w.viewer,
            "Only growers and admins mark entries for analysis.",
        ),
        (
            &w.admin,
            "Only the author of this entry can mark it for analysis.",
        ),
    ] {
        let mut b = Browser::new(&app, "en");
        b.sign_in(&who.email, PASSWORD).await;
        let shown = b.get(&entry).await;
        assert!(shown.has(text), "{text}: {}", shown.body);
        assert!(!shown.has(r#"name="consent""#));
        let c = shown.csrf();
        let refused = b.post(&mark, &[("_csrf", &c), ("consent", "true")]).await;
        assert_eq!(refused.status, 403, "{}", refused.body);
        assert!(refused.has(text), "{text}: {}", refused.body);
        assert_eq!(queue(&app, &w.t, &key).await, (None, vec![]));
    }
    // Another garden's member, and this grower on another garden's entry: 404, nothing marked.
    let other = world(&app, "wdymb", 1).await;
    let theirs = key_of(&write(&app, &other, &other.grower, json!({"text": "Theirs."})).await);
    let mut o = Browser::new(&app, "en");
    o.sign_in(&other.grower.email, PASSWORD).await;
    let oc = o
        .csrf(&format!("/app/g/{}/diary", other.t.slug.as_str()))
        .await;
    let into = o.post(&mark, &[("_csrf", &oc), ("consent", "true")]).await;
    assert_eq!(into.status, 404);
    let across = g
        .post(
            &format!("/app/g/{slug}/diary/{theirs}/analysis"),
            &[("_csrf", &csrf), ("consent", "true")],
        )
        .await;
    assert_eq!(across.status, 404);
    assert_eq!(queue(&app, &w.t, &key).await, (None, vec![]));
    assert_eq!(queue(&app, &other.t, &theirs).await, (None, vec![]));

    // The author, with consent: in the queue.
    let marked = g
        .post(&mark, &[("_csrf", &csrf), ("consent", "true")])
        .await;
    assert_eq!(marked.status, 303, "{}", marked.body);
    assert_eq!(
        marked.location(),
        Some(format!("{entry}?done=marked#analysis").as_str())
    );
    assert_eq!(
        queue(&app, &w.t, &key).await,
        (Some("requested".to_owned()), vec![key.clone()])
    );
    let shown = g.get(marked.location().unwrap_or_default()).await;
    assert!(
        shown.has("Marked for analysis: the entry waits"),
        "{}",
        shown.body
    );
    assert!(shown.has("Waiting for analysis"));
    assert!(
        !shown.has(r#"name="consent""#),
        "requested: nothing to mark"
    );
    let requested = g
        .get(&format!("/app/g/{slug}/diary?analysis_state=requested"))
        .await;
    assert!(requested.has(">Spots</a>"), "{}", requested.body);

    // An agent of the garden claims and submits: the page shows the result and the disclaimer
    // the server stored with it.
    let agent = scoped_key(&app, &w.t, Role::Grower).await;
    let (s, c) = tool(
        &app,
        &agent,
        "claim_diary_analysis",
        json!({"entry_key": key}),
    )
    .await;
    assert_eq!(s, 200, "{c}");
    let token = c["data"]["lease_token"].as_str().expect("token").to_owned();
    let (s, r) = tool(&app, &agent, "submit_diary_analysis", json!({"entry_key": key,
        "lease_token": token, "status": "completed", "summary": "Likely early blight.",
        "findings": [{"finding": "concentric brown rings", "confidence": 0.8, "category": "disease"}],
        "recommended_actions": ["Remove the lowest leaves"]})).await;
    assert_eq!(s, 200, "{r}");
    let done = g.get(&entry).await;
    for part in [
        "Analysed",
        "Likely early blight.",
        "concentric brown rings",
        "80 % sure",
        "Remove the lowest leaves",
        DISCLAIMER,
        "Ask for a new analysis",
    ] {
        assert!(done.has(part), "{part}: {}", done.body);
    }
    let mut de = Browser::new(&app, "de");
    de.sign_in(&w.grower.email, PASSWORD).await;
    let seite = de.get(&entry).await;
    assert!(
        seite.has("Analysiert") && seite.has("Bitte beachten"),
        "{}",
        seite.body
    );

    // Withdrawing: a viewer sees no button and a forged post changes nothing; the author's
    // button takes the entry out of the queue and deletes the result.
    let withdraw = format!("{mark}/withdraw");
    assert!(
        done.has(&format!(r#"action="{withdraw}""#)),
        "{}",
        done.body
    );
    let mut v = Browser::new(&app, "en");
    v.sign_in(&w.viewer.email, PASSWORD).await;
    let viewed = v.get(&entry).await;
    assert!(!viewed.has(&format!(r#"action="{withdraw}""#)));
    let vc = viewed.csrf();
    let refused = v.post(&withdraw, &[("_csrf", &vc)]).await;
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert_eq!(
        queue(&app, &w.t, &key).await.0.as_deref(),
        Some("completed")
    );
    let gone = g.post(&withdraw, &[("_csrf", &csrf)]).await;
    assert_eq!(gone.status, 303, "{}", gone.body);
    assert_eq!(
        gone.location(),
        Some(format!("{entry}?done=withdrawn#analysis").as_str())
    );
    assert_eq!(queue(&app, &w.t, &key).await, (None, vec![]));
    let after = g.get(gone.location().unwrap_or_default()).await;
    assert!(
        after.has("The analysis request was withdrawn"),
        "{}",
        after.body
    );
    assert!(!after.has("Likely early blight."));
    // Twice: the entry is not marked any more, said plainly.
    let again = g.post(&withdraw, &[("_csrf", &csrf)]).await;
    assert_eq!(again.status, 409, "{}", again.body);
}
