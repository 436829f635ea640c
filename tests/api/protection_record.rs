//! The plant-protection record (issue 29, Regulation (EU) 2023/564): an application keeps the
//! product's authorisation number, each crop's EPPO code, the BBCH growth stage (given, or the
//! principal stage of the plant's phase), the treated area and the reason; the export lists one
//! row per application in the garden's time zone, as JSON or CSV, and refuses bad input without
//! changing anything. Another garden's applications never appear.

use reqwest::Method;
use serde_json::{Value, json};

use crate::garden::count;
use crate::ipm::{SOAP, catalogue_key, days_ago, path, tool, world};
use crate::support::TestApp;

#[tokio::test]
async fn applications_keep_the_record_and_export_it_as_json_and_csv() {
    let app = TestApp::full_env(&[("MCP_SERVER_ENABLED", "true")]).await;
    let w = world(&app, "pprec", 2).await;
    let other = world(&app, "pprecother", 1).await;
    let soap = catalogue_key(&app, "treatment", SOAP).await;
    let aphid = catalogue_key(&app, "pest", "Fixturia vorax").await;
    let key = app.api_key(&w.grower, Some(w.t.slug.as_str())).await;
    let applications = path(&w.t, "ipm/treatments");
    let export = path(&w.t, "ipm/applications/export");

    // The garden keeps its records in Berlin time.
    let (s, settings) = app
        .rest_as(&w.admin)
        .call(
            Method::PUT,
            &path(&w.t, "calendar/settings"),
            Some(&json!({"hardiness_zone": null, "timezone": "Europe/Berlin"})),
        )
        .await;
    assert_eq!(
        (s, &settings["timezone"]),
        (200, &json!("Europe/Berlin")),
        "{settings}"
    );

    // REST, with the stage given, the area and the reason: 23:30 UTC three days ago is the next
    // day in Berlin.
    let at = format!("{}T23:30:00Z", &days_ago(3)[..10]);
    let (s, a) = app
        .rest_as(&w.grower)
        .call(
            Method::POST,
            &applications,
            Some(
                &json!({"treatment_key": soap, "plant_keys": [w.plants[0]], "applied_at": at,
                     "dose": 20, "dose_unit": "ml_per_l", "treated_area_m2": 4.5,
                     "bbch_code": "81", "target_pest_keys": [aphid], "applied_by": "Tess"}),
            ),
        )
        .await;
    assert_eq!(s, 201, "{a}");
    assert_eq!(a["authorisation_number"], "00A123-00");
    assert_eq!(a["bbch_code"], "81");
    assert_eq!(a["treated_area_m2"], 4.5);
    assert_eq!(a["target_pest_keys"], json!([aphid]));
    assert_eq!(a["plants"][0]["eppo_code"], "LYPES");
    assert_eq!(a["plants"][0]["bbch_principal"], 8);
    // The tool, by location, without a stage: each plant's phase (ripening) gives stage 8.
    let (s, t) = tool(
        &app,
        &key,
        "apply_treatment",
        json!({"treatment_key": soap, "location_key": w.location, "acknowledge_resistance": true}),
    )
    .await;
    assert_eq!(s, 200, "{t}");
    assert_eq!(t["data"]["bbch_code"], Value::Null);
    assert!(
        t["data"]["plants"]
            .as_array()
            .is_some_and(|p| p.len() == 2 && p.iter().all(|p| p["bbch_principal"] == 8)),
        "{t}"
    );
    // The other garden's application is never in this garden's record.
    let (s, _) = app
        .rest_as(&other.grower)
        .call(
            Method::POST,
            &path(&other.t, "ipm/treatments"),
            Some(&json!({"treatment_key": soap, "plant_keys": [other.plants[0]]})),
        )
        .await;
    assert_eq!(s, 201);

    // JSON: oldest first, dates in Berlin time, one row per application.
    let (s, rec) = app
        .rest_as(&w.viewer)
        .call(Method::GET, &export, None)
        .await;
    assert_eq!(s, 200, "{rec}");
    assert_eq!(rec["timezone"], "Europe/Berlin");
    assert_eq!(rec["count"], 2, "{rec}");
    let first = &rec["rows"][0];
    assert_eq!(first["application_key"], a["key"]);
    assert_eq!(
        first["date"],
        days_ago(2)[..10],
        "23:30 UTC is the next day in Berlin"
    );
    assert!(
        first["applied_at"]
            .as_str()
            .is_some_and(|t| t.ends_with("+01:00") || t.ends_with("+02:00")),
        "{first}"
    );
    assert_eq!(first["crop_eppo_codes"], json!(["LYPES"]));
    assert_eq!(first["crop_species"], json!(["Fixtura tomatoides"]));
    assert_eq!(
        (&first["bbch_code"], &first["bbch_source"]),
        (&json!("81"), &json!("given"))
    );
    assert_eq!(first["product_name"], SOAP);
    assert_eq!(first["authorisation_number"], "00A123-00");
    assert_eq!(
        (&first["dose"], &first["dose_unit"]),
        (&json!(20.0), &json!("ml_per_l"))
    );
    assert_eq!(
        (&first["treated_area_m2"], &first["plant_count"]),
        (&json!(4.5), &json!(1))
    );
    assert_eq!(first["operator"], "Tess");
    assert_eq!(first["target_pests"], json!(["Fixturia vorax"]));
    assert!(first["places"][0].is_string(), "{first}");
    let second = &rec["rows"][1];
    assert_eq!(
        (
            &second["bbch_source"],
            &second["bbch_principal_stages"],
            &second["plant_count"]
        ),
        (&json!("phase"), &json!([8]), &json!(2))
    );

    // CSV: a header with the documented columns and one line per application.
    let res = app
        .rest_auth(Some(&w.viewer.bearer()))
        .get(&format!("{export}?format=csv"))
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let ctype = res.headers()["content-type"]
        .to_str()
        .unwrap_or_default()
        .to_owned();
    assert!(ctype.starts_with("text/csv"), "{ctype}");
    assert!(
        res.headers()["content-disposition"]
            .to_str()
            .is_ok_and(|d| d.starts_with("attachment; filename=\"plant-protection-"))
    );
    let body = res.text().await.expect("body");
    let lines: Vec<&str> = body.lines().collect();
    assert_eq!(lines.len(), 3, "{body}");
    assert_eq!(
        lines[0],
        kultiva::garden::ipm::model::ProtectionRecord::COLUMNS.join(",")
    );
    assert!(
        lines[1].contains(",LYPES,Fixtura tomatoides,81,8,given,"),
        "{}",
        lines[1]
    );
    assert!(lines[1].contains(",00A123-00,"), "{}", lines[1]);

    // A window that ends before the applications has no rows.
    let (_, empty) = app
        .rest_as(&w.viewer)
        .call(
            Method::GET,
            &format!("{export}?from=2020-01-01&to=2020-12-31"),
            None,
        )
        .await;
    assert_eq!((&empty["count"], &empty["rows"]), (&json!(0), &json!([])));
}

#[tokio::test]
async fn bad_stages_reasons_windows_and_zones_are_refused_and_change_nothing() {
    let app = TestApp::full_env(&[("MCP_SERVER_ENABLED", "true")]).await;
    let w = world(&app, "pprecbad", 1).await;
    let soap = catalogue_key(&app, "treatment", SOAP).await;
    let key = app.api_key(&w.grower, Some(w.t.slug.as_str())).await;
    let applications = path(&w.t, "ipm/treatments");
    let p = w.plants[0];
    for (body, field) in [
        (json!({"bbch_code": "6"}), "body.bbch_code"),
        (json!({"bbch_code": "6a"}), "body.bbch_code"),
        (json!({"treated_area_m2": 0}), "body.treated_area_m2"),
        (
            json!({"target_pest_keys": "aphid"}),
            "body.target_pest_keys",
        ),
    ] {
        let mut b = json!({"treatment_key": soap, "plant_keys": [p]});
        if let (Some(m), Value::Object(extra)) = (b.as_object_mut(), body) {
            m.extend(extra);
        }
        let (s, e) = app
            .rest_as(&w.grower)
            .call(Method::POST, &applications, Some(&b))
            .await;
        assert_eq!(
            (s, e["error_code"].as_str()),
            (422, Some("VALIDATION_ERROR")),
            "{e}"
        );
        assert_eq!(e["details"][0]["field"], field, "{e}");
    }
    // A pest that is not in the catalogue: 404 naming it.
    let (s, e) = app
        .rest_as(&w.grower)
        .call(
            Method::POST,
            &applications,
            Some(&json!({"treatment_key": soap, "plant_keys": [p],
                     "target_pest_keys": ["0190f3c1-7a2b-7c3d-8e4f-a0b1c2d3e4f5"]})),
        )
        .await;
    assert_eq!(
        (s, e["error_code"].as_str()),
        (404, Some("ENTITY_NOT_FOUND")),
        "{e}"
    );
    assert_eq!(e["details"][0]["field"], "body.target_pest_keys[0]", "{e}");
    // The tool's schema states the code list: a one-digit code is refused by the table.
    let (s, e) = tool(
        &app,
        &key,
        "apply_treatment",
        json!({"treatment_key": soap, "plant_key": p, "bbch_code": "6"}),
    )
    .await;
    assert_eq!(
        (s, e["error_code"].as_str()),
        (422, Some("validation.error")),
        "{e}"
    );
    assert!(e["details"][0]["expected"].is_string(), "{e}");
    assert_eq!(count(&app, &w.t, "ipm_applications").await, 0);

    // Export windows and formats; an unknown time zone is refused and the setting stays.
    let export = path(&w.t, "ipm/applications/export");
    for (query, field) in [
        ("from=2026-05-02&to=2026-05-01", "query.from"),
        ("from=2020-01-01&to=2026-01-01", "query.to"),
        ("from=yesterday", "query.from"),
        ("format=xml", "query.format"),
    ] {
        let (s, e) = app
            .rest_as(&w.viewer)
            .call(Method::GET, &format!("{export}?{query}"), None)
            .await;
        assert_eq!(
            (s, e["error_code"].as_str()),
            (422, Some("VALIDATION_ERROR")),
            "{query}: {e}"
        );
        assert_eq!(e["details"][0]["field"], field, "{query}: {e}");
    }
    let settings = path(&w.t, "calendar/settings");
    let (s, e) = app
        .rest_as(&w.admin)
        .call(
            Method::PUT,
            &settings,
            Some(&json!({"hardiness_zone": "7a", "timezone": "Mars/Olympus"})),
        )
        .await;
    assert_eq!(
        (s, e["details"][0]["field"].as_str()),
        (422, Some("body.timezone")),
        "{e}"
    );
    let (_, now) = app
        .rest_as(&w.viewer)
        .call(Method::GET, &settings, None)
        .await;
    assert_eq!(
        (&now["hardiness_zone"], &now["timezone"]),
        (&Value::Null, &Value::Null)
    );
    // Without a zone the record is in UTC.
    let (_, rec) = app
        .rest_as(&w.viewer)
        .call(Method::GET, &export, None)
        .await;
    assert_eq!(
        (&rec["timezone"], &rec["count"]),
        (&json!("UTC"), &json!(0))
    );
}
