//! The plant-protection page (`/app/g/{slug}/protection`) over real HTTP against PostgreSQL
//! and Redis: the running safety intervals with their first allowed day, the resistance groups
//! at and near their limit with the source, the latest inspections and treatments, the
//! plant-protection record as CSV and JSON (a refused period is the page again with the
//! reason), both languages, and another garden (404, nothing of it shown).

use kultiva::auth::Role;
use reqwest::Method;
use serde_json::{Value, json};

use crate::ipm::{days_ago, path, world};
use crate::resistance_risk::treatment;
use crate::support::{PASSWORD, TestApp};
use crate::web::Browser;

#[tokio::test]
async fn the_protection_page_shows_intervals_resistance_records_and_the_season_record() {
    let app = TestApp::full().await;
    let w = world(&app, "wprot", 2).await;
    let other = app.tenant("wprotb").await;
    let outsider = app.member(&other, Role::Admin).await;
    let (p0, p1) = (w.plants[0], w.plants[1]);
    let treat = path(&w.t, "ipm/treatments");
    // QoI (FRAC 11): 2 applications in 365 days.
    let qoi = treatment(&app, "Azoxystrobin", "FRAC 11", "FRAC Code List").await;
    for (plant, back) in [(p0, 0), (p1, 100), (p1, 50)] {
        let body =
            json!({"treatment_key": qoi, "plant_keys": [plant], "applied_at": days_ago(back)});
        let (s, a) = app
            .rest_as(&w.grower)
            .call(Method::POST, &treat, Some(&body))
            .await;
        assert_eq!(s, 201, "{a}");
    }
    let sulphur = treatment(&app, "Sulphur", "FRAC M2", "FRAC Code List").await;
    for back in [30, 20, 10, 5] {
        let body =
            json!({"treatment_key": sulphur, "plant_keys": [p0], "applied_at": days_ago(back)});
        let (s, a) = app
            .rest_as(&w.grower)
            .call(Method::POST, &treat, Some(&body))
            .await;
        assert_eq!(s, 201, "{a}");
    }
    let body = json!({"plant_key": p0, "pressure_level": "medium",
                      "symptoms_observed": ["rust-coloured spots"]});
    let (s, _) = app
        .rest_as(&w.grower)
        .call(Method::POST, &path(&w.t, "ipm/inspections"), Some(&body))
        .await;
    assert_eq!(s, 201);
    // The first allowed day of Tomato 0's interval, as the API counts it.
    let (_, ready) = app
        .rest_as(&w.viewer)
        .call(
            Method::GET,
            &path(&w.t, &format!("harvest/readiness/{p0}")),
            None,
        )
        .await;
    let safe_on = ready["safety_intervals"][0]["safe_on"]
        .as_str()
        .unwrap_or_else(|| panic!("no interval in {ready}"))
        .to_owned();

    let slug = w.t.slug.as_str().to_owned();
    let page_path = format!("/app/g/{slug}/protection");
    let mut b = Browser::new(&app, "en");
    b.sign_in(&w.viewer.email, PASSWORD).await;
    let page = b.get(&page_path).await;
    assert_eq!(page.status, 200, "{}", page.body);
    let safe = time::Date::parse(
        &safe_on,
        time::macros::format_description!("[year]-[month]-[day]"),
    )
    .expect("date");
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let safe_en = format!(
        "harvest from {} {} {}",
        safe.day(),
        MONTHS[usize::from(u8::from(safe.month())) - 1],
        safe.year()
    );
    for part in [
        "Plant protection",
        "Safety intervals running",
        &safe_en,
        &format!(r#"href="/app/g/{slug}/plants/{p0}""#),
        "Resistance groups near their limit",
        "1 of 2 applications in 365 days: the next one reaches the limit",
        "2 applications in 365 days: the limit of 2 is reached, the next one is refused",
        "FRAC Code List",
        "rust-coloured spots",
        "Azoxystrobin",
        "Plant-protection record",
        &format!(r#"href="/app/g/{slug}/protection""#),
    ] {
        assert!(page.has(part), "{part}: {}", page.body);
    }
    // The service behind the card: QoI at and near its limit, most applications first;
    // sulphur (FRAC M2), four times in a month, is outside the count and never listed.
    let pressure = kultiva::garden::ipm::service::resistance_pressure(&app.state, &w.t)
        .await
        .expect("pressure");
    let got: Vec<(uuid::Uuid, &str, usize, usize, &str)> = pressure
        .iter()
        .map(|g| {
            (
                g.plant_key,
                g.group.as_str(),
                g.applications,
                g.limit,
                g.state.as_str(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (p1, "FRAC 11", 2, 2, "reached"),
            (p0, "FRAC 11", 1, 2, "near")
        ]
    );

    // German.
    let mut de = Browser::new(&app, "de");
    de.sign_in(&w.grower.email, PASSWORD).await;
    let german = de.get(&page_path).await;
    assert_eq!(german.status, 200);
    for part in [
        "Pflanzenschutz",
        "Wirkstoffgruppen nahe an ihrer Grenze",
        "1 von 2 Anwendungen in 365 Tagen",
        "Pflanzenschutz-Aufzeichnung",
    ] {
        assert!(german.has(part), "{part}: {}", german.body);
    }

    // The season's record: CSV and JSON downloads with the three applications.
    let csv = b.get(&format!("{page_path}/record?format=csv")).await;
    assert_eq!(csv.status, 200, "{}", csv.body);
    assert!(csv.header("content-type").starts_with("text/csv"));
    assert!(csv.header("content-disposition").starts_with("attachment;"));
    assert!(csv.body.contains("Azoxystrobin"), "{}", csv.body);
    let json_page = b
        .get(&format!(
            "{page_path}/record?format=json&from={}",
            (time::OffsetDateTime::now_utc().date() - time::Duration::days(200))
        ))
        .await;
    assert_eq!(json_page.status, 200, "{}", json_page.body);
    let record: Value = serde_json::from_str(&json_page.body).expect("json");
    assert_eq!(record["rows"].as_array().map(Vec::len), Some(7), "{record}");
    // A period the service refuses is the page again, with the reason beside the form.
    for query in [
        "from=yesterday",
        "from=2026-12-31&to=2026-01-01",
        "from=2020-01-01&to=2026-01-01",
    ] {
        let refused = b.get(&format!("{page_path}/record?{query}")).await;
        assert_eq!(refused.status, 422, "{query}: {}", refused.body);
        assert!(refused.has("Plant-protection record"), "{query}");
        assert!(
            refused.has(r#"class="notice bad""#),
            "{query}: {}",
            refused.body
        );
    }

    // Another garden's member: the same 404 as a garden that does not exist, for the page and
    // the record; their own page shows nothing of this garden.
    let mut out = Browser::new(&app, "en");
    out.sign_in(&outsider.email, PASSWORD).await;
    for p in [page_path.clone(), format!("{page_path}/record?format=csv")] {
        let refused = out.get(&p).await;
        assert_eq!(refused.status, 404, "{p}");
        assert!(!refused.has("Azoxystrobin"));
    }
    let own = out
        .get(&format!("/app/g/{}/protection", other.slug.as_str()))
        .await;
    assert_eq!(own.status, 200);
    assert!(
        !own.has("Azoxystrobin") && !own.has("Tomato 0"),
        "{}",
        own.body
    );
    assert!(own.has("No resistance group is near its limit."));

    // Signed out: to the sign-in, which returns here.
    let mut anon = Browser::new(&app, "en");
    let away = anon.get(&page_path).await;
    assert_eq!(away.status, 303);
    assert!(
        away.location()
            .unwrap_or_default()
            .starts_with("/app/login?next=")
    );
}
