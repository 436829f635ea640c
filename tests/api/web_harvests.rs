//! The harvests page (`/app/g/{slug}/harvests`) over real HTTP against PostgreSQL and Redis, as
//! a browser without JavaScript uses it: the batches and readiness across the garden in both
//! languages; a batch recorded through the form and read back through the service; what must not
//! happen checked as carefully: a harvest inside a safety interval refused with its first allowed
//! day and no batch written, a viewer's or a CSRF-less post writing nothing, another garden's
//! page and plant a 404.

use kultiva::garden::harvest::repo::BatchFilter;
use kultiva::values::page::PageRequest;
use reqwest::Method;
use serde_json::json;

use crate::garden::count;
use crate::ipm::{SOAP, catalogue_key, path, world};
use crate::support::{PASSWORD, TestApp};
use crate::web::Browser;

/// A day as the English pages write it.
fn date_en(day: time::Date) -> String {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!(
        "{} {} {}",
        day.day(),
        MONTHS[usize::from(u8::from(day.month())) - 1],
        day.year()
    )
}

#[tokio::test]
async fn the_harvests_page_lists_readiness_refuses_inside_an_interval_and_records_a_batch() {
    let app = TestApp::full().await;
    let w = world(&app, "whv", 3).await;
    let (treated, ripe, young) = (w.plants[0], w.plants[1], w.plants[2]);
    let soap = catalogue_key(&app, "treatment", SOAP).await; // 3 days
    let (s, a) = app
        .rest_as(&w.grower)
        .call(
            Method::POST,
            &path(&w.t, "ipm/treatments"),
            Some(&json!({"treatment_key": soap, "plant_keys": [treated]})),
        )
        .await;
    assert_eq!(s, 201, "{a}");
    // Tomato 1 ripe (peak, fully reliable), Tomato 0 ripe too but held back by its interval.
    for (plant, stage) in [(ripe, "peak"), (treated, "peak"), (young, "immature")] {
        let (s, o) = app
            .rest_as(&w.grower)
            .call(
                Method::POST,
                &path(&w.t, "harvest/observations"),
                Some(&json!({"plant_key": plant, "indicator_type": "color",
                             "ripeness_assessment": stage, "reliability_score": 1.0})),
            )
            .await;
        assert_eq!(s, 201, "{o}");
    }
    use kultiva::garden::harvest::service::plant_readiness;
    let (ripe_key, treated_key) = (ripe.to_string(), treated.to_string());
    let now_ripe = plant_readiness(&app.state, &w.t, &ripe_key).await;
    assert!(now_ripe.expect("readiness").ready);
    let held = plant_readiness(&app.state, &w.t, &treated_key)
        .await
        .expect("readiness");
    assert!(!held.ready && held.recommendation == "optimal", "{held:?}");
    let today = time::OffsetDateTime::now_utc().date();
    let (last, from) = (
        date_en(today + time::Duration::days(2)),
        date_en(today + time::Duration::days(3)),
    );

    let slug = w.t.slug.as_str().to_owned();
    let base = format!("/app/g/{slug}/harvests");
    // A viewer reads: readiness and the (empty) batches, no form; in the navigation.
    let mut v = Browser::new(&app, "en");
    v.sign_in(&w.viewer.email, PASSWORD).await;
    let page = v.get(&base).await;
    assert_eq!(page.status, 200, "{}", page.body);
    for part in [
        "<h1>Harvests · ",
        &format!(r#"href="{base}""#),
        &format!(r#"href="/app/g/{slug}/diary""#),
        "Ready to harvest",
        &format!(r#"href="/app/g/{slug}/plants/{ripe}">Tomato 1</a>"#),
        "Nearly ready",
        &format!(r#"href="/app/g/{slug}/plants/{treated}">Tomato 0</a>"#),
        &format!("harvest from {from}"),
        "No harvest recorded yet.",
        "As a viewer you can see the harvests",
    ] {
        assert!(page.has(part), "{part}: {}", page.body);
    }
    assert!(
        !page.has("Tomato 2"),
        "an immature plant is neither ready nor near"
    );
    assert!(!page.has(r#"name="wet_weight_g""#), "no form for a viewer");
    // A viewer's post, with a valid CSRF value: refused, nothing written.
    let vcsrf = page.csrf();
    let forged = v
        .post(
            &base,
            &[
                ("_csrf", &vcsrf),
                ("plant_key", &ripe.to_string()),
                ("wet_weight_g", "50"),
            ],
        )
        .await;
    assert_eq!(forged.status, 403, "{}", forged.body);
    assert_eq!(count(&app, &w.t, "harvest_batches").await, 0);

    let mut b = Browser::new(&app, "en");
    b.sign_in(&w.grower.email, PASSWORD).await;
    let page = b.get(&base).await;
    assert!(page.has(r#"<label for="hv-plant_key">"#), "{}", page.body);
    assert!(page.has(r#"<label for="wet_weight_g">"#));
    let csrf = page.csrf();
    // Without the form's CSRF value: 403, nothing written.
    let bare = b
        .post(
            &base,
            &[("plant_key", &ripe.to_string()), ("wet_weight_g", "50")],
        )
        .await;
    assert_eq!(bare.status, 403);
    assert_eq!(count(&app, &w.t, "harvest_batches").await, 0);

    // Inside the interval: the gate's refusal, with the first allowed day; no batch.
    let refused = b
        .post(
            &base,
            &[
                ("_csrf", &csrf),
                ("plant_key", &treated.to_string()),
                ("wet_weight_g", "120"),
            ],
        )
        .await;
    assert_eq!(refused.status, 422, "{}", refused.body);
    for part in [
        "Harvest refused: a safety interval is still running. Nothing was saved.",
        &format!("3 days left. No harvest until {last}; harvesting is allowed from {from}."),
        "blocked through",
        r#"value="120""#,
    ] {
        assert!(refused.has(part), "{part}: {}", refused.body);
    }
    assert_eq!(count(&app, &w.t, "harvest_batches").await, 0);
    // Bad values: beside their fields, nothing written.
    let bad = b
        .post(
            &base,
            &[
                ("_csrf", &csrf),
                ("plant_key", &ripe.to_string()),
                ("wet_weight_g", "lots"),
                (
                    "harvest_date",
                    &(today + time::Duration::days(2)).to_string(),
                ),
            ],
        )
        .await;
    assert_eq!(bad.status, 422, "{}", bad.body);
    assert!(bad.has(r#"id="hv-wet_weight_g-err""#), "{}", bad.body);
    assert!(bad.has(r#"id="hv-harvest_date-err""#), "{}", bad.body);
    assert_eq!(count(&app, &w.t, "harvest_batches").await, 0);

    // Allowed: recorded, read back through the service.
    let ok = b
        .post(
            &base,
            &[
                ("_csrf", &csrf),
                ("plant_key", &ripe.to_string()),
                ("wet_weight_g", "80,5"),
                ("harvest_type", "final"),
                ("quality_grade", "a"),
                ("notes", "First truss"),
            ],
        )
        .await;
    assert_eq!(ok.status, 303, "{}", ok.body);
    assert_eq!(
        ok.location(),
        Some(format!("{base}?done=recorded").as_str())
    );
    let batches = kultiva::garden::harvest::service::list_batches(
        &app.state,
        &w.t,
        BatchFilter::default(),
        PageRequest { skip: 0, limit: 10 },
    )
    .await
    .expect("batches");
    assert_eq!(batches.items.len(), 1);
    let batch = &batches.items[0];
    assert_eq!(batch.plant_key, ripe);
    assert!((batch.wet_weight_g - 80.5).abs() < 1e-9);
    assert_eq!(batch.notes.as_deref(), Some("First truss"));
    assert_eq!(batch.harvest_date, today.to_string());
    let shown = b.get(ok.location().unwrap_or_default()).await;
    for part in ["Harvest recorded.", "80.5 g", &batch.label, "Quality: A"] {
        assert!(shown.has(part), "{part}: {}", shown.body);
    }

    // German: the page and the refusal.
    let mut de = Browser::new(&app, "de");
    de.sign_in(&w.grower.email, PASSWORD).await;
    let seite = de.get(&base).await;
    assert_eq!(seite.status, 200);
    for part in [
        "<h1>Ernten · ",
        "Erntereif",
        "Bald erntereif",
        "Erntechargen",
        "80,5 g",
    ] {
        assert!(seite.has(part), "{part}: {}", seite.body);
    }
    let abgelehnt = de
        .post(
            &base,
            &[
                ("_csrf", &seite.csrf()),
                ("plant_key", &treated.to_string()),
                ("wet_weight_g", "120,5"),
            ],
        )
        .await;
    assert_eq!(abgelehnt.status, 422);
    assert!(
        abgelehnt.has("Ernte abgelehnt") && abgelehnt.has("noch 3 Tage"),
        "{}",
        abgelehnt.body
    );
    assert_eq!(count(&app, &w.t, "harvest_batches").await, 1);

    // Another garden: its member gets the 404 page for this one and sees nothing of it on
    // their own; a plant of theirs posted here is not found, nothing written in either.
    let other = world(&app, "whvb", 1).await;
    let mut out = Browser::new(&app, "en");
    out.sign_in(&other.admin.email, PASSWORD).await;
    let away = out.get(&base).await;
    assert_eq!(away.status, 404);
    assert!(!away.has("Tomato 1") && !away.has("80.5"));
    let own = out
        .get(&format!("/app/g/{}/harvests", other.t.slug.as_str()))
        .await;
    assert_eq!(own.status, 200);
    assert!(
        !own.has(&ripe.to_string()) && !own.has("80.5 g"),
        "{}",
        own.body
    );
    let ocsrf = own.csrf();
    let into = out
        .post(
            &base,
            &[
                ("_csrf", &ocsrf),
                ("plant_key", &other.plants[0].to_string()),
                ("wet_weight_g", "5"),
            ],
        )
        .await;
    assert_eq!(into.status, 404);
    let foreign = b
        .post(
            &base,
            &[
                ("_csrf", &csrf),
                ("plant_key", &other.plants[0].to_string()),
                ("wet_weight_g", "5"),
            ],
        )
        .await;
    assert_eq!(foreign.status, 404, "{}", foreign.body);
    assert_eq!(count(&app, &w.t, "harvest_batches").await, 1);
    assert_eq!(count(&app, &other.t, "harvest_batches").await, 0);

    // Signed out: to the sign-in.
    let mut anon = Browser::new(&app, "en");
    let signin = anon.get(&base).await;
    assert_eq!(signin.status, 303);
}
