//! The nutrition pages (`/app/g/{slug}/nutrition…`) over real HTTP against PostgreSQL and
//! Redis, as a browser without JavaScript uses them: the mixing form answers the same doses in
//! the same order, the same pH step and the same warnings as the REST mixing route for the same
//! input, and a refused input is said next to its field; a feeding recorded through the form is
//! exactly one record, a refused one none; a catalogue plan cloned leaves the source as it was,
//! assigned to a plant shows the coverage the API computes. What must not happen is checked as
//! carefully: a post without the CSRF value or by a viewer writes nothing, and nothing of
//! another garden is reachable from garden A's pages (404).

use kultiva::auth::Role;
use kultiva::garden::nutrient_plans::model::Owner;
use kultiva::tenancy::TenantRecord;
use kultiva::values::page::PageRequest;
use serde_json::{Value, json};

use crate::garden_fertilizers::own_body;
use crate::nutrient_plans::plant;
use crate::support::{PASSWORD, TestApp, tenant_path};
use crate::web::Browser;

/// A text as the page writes it (maud escapes these).
fn esc(raw: &str) -> String {
    raw.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A number as the English page writes it.
fn en(v: &Value) -> String {
    format!("{}", v.as_f64().unwrap_or_else(|| panic!("number: {v}")))
}

async fn own_fertilizer(
    app: &TestApp,
    t: &TenantRecord,
    grower: &crate::support::TestUser,
    body: Value,
) -> String {
    let created = app
        .rest_as(grower)
        .create(&tenant_path(t, "fertilizers"), &body)
        .await;
    created["key"].as_str().expect("key").to_owned()
}

async fn events(
    app: &TestApp,
    t: &TenantRecord,
) -> Vec<kultiva::garden::watering::model::WateringEvent> {
    kultiva::garden::watering::service::list_events(
        &app.state,
        t,
        &kultiva::garden::watering::repo::Filter::default(),
        PageRequest {
            skip: 0,
            limit: 100,
        },
    )
    .await
    .expect("events")
    .items
}

async fn own_plans(app: &TestApp, t: &TenantRecord) -> usize {
    kultiva::garden::nutrient_plans::service::list_plans(
        &app.state,
        t,
        &kultiva::garden::nutrient_plans::service::Query {
            q: None,
            owner: Some(Owner::Garden),
        },
        PageRequest {
            skip: 0,
            limit: 100,
        },
    )
    .await
    .expect("plans")
    .items
    .len()
}

#[tokio::test]
async fn the_mixing_form_doses_as_the_rest_route_and_says_a_refusal_next_to_its_field() {
    let app = TestApp::full().await;
    let t = app.tenant("wnutmix").await;
    let grower = app.member(&t, Role::Grower).await;
    let viewer = app.member(&t, Role::Viewer).await;
    let other = app.tenant("wnutmixb").await;
    let outsider = app.member(&other, Role::Admin).await;
    let slug = t.slug.as_str().to_owned();
    let base = format!("/app/g/{slug}/nutrition/mix");

    let grow = own_fertilizer(&app, &t, &grower, own_body("Web grow")).await;
    let mut calmag = own_body("Web calmag");
    calmag["mixing_priority"] = json!(10);
    calmag["calmag"] = json!(true);
    calmag["secondary"] = json!({"ca": 5.0, "mg": 2.0});
    let calmag = own_fertilizer(&app, &t, &grower, calmag).await;
    let theirs = own_fertilizer(&app, &other, &outsider, own_body("Their grow")).await;

    // Both languages, reachable from the garden's navigation; a viewer may mix (nothing is
    // stored), as on REST.
    for (lang, heading) in [("en", "Mixing protocol"), ("de", "Mischprotokoll")] {
        let mut b = Browser::new(&app, lang);
        b.sign_in(&viewer.email, PASSWORD).await;
        let page = b.get(&base).await;
        assert_eq!(page.status, 200, "{}", page.body);
        assert!(page.has(&format!("<h1>{heading} · ")), "{}", page.body);
        assert!(
            page.has(&format!(r#"href="/app/g/{slug}/nutrition""#)),
            "nav entry"
        );
        assert!(page.has(r#"<label for="mix-target_ec_ms">"#));
        assert!(page.has(r#"<label for="mix-product_0">"#));
        let overview = b.get(&format!("/app/g/{slug}/nutrition")).await;
        assert_eq!(overview.status, 200, "{}", overview.body);
        assert!(overview.has(&format!(r#"href="{base}""#)));
    }

    // The same input through REST and through the form.
    let rest = app
        .rest_as(&viewer)
        .post(
            &tenant_path(&t, "mixing-protocol"),
            &json!({
                "fertilizers": [{"fertilizer_key": grow}, {"fertilizer_key": calmag, "ml_per_liter": 1.0}],
                "target_volume_liters": 20, "target_ec_ms": 1.6, "base_water_ec_ms": 0.3,
                "alkalinity_ppm": 120, "phase": "flowering", "water_temp_c": 4
            }),
        )
        .await;
    assert_eq!(rest.status().as_u16(), 200);
    let rest: Value = rest.json().await.expect("json");
    let mut b = Browser::new(&app, "en");
    b.sign_in(&viewer.email, PASSWORD).await;
    let csrf = b.csrf(&base).await;
    let form = [
        ("_csrf", csrf.as_str()),
        ("product_0", grow.as_str()),
        ("product_1", calmag.as_str()),
        ("dose_1", "1"),
        ("target_volume_liters", "20"),
        ("target_ec_ms", "1.6"),
        ("base_water_ec_ms", "0.3"),
        ("alkalinity_ppm", "120"),
        ("phase", "flowering"),
        ("water_temp_c", "4"),
    ];
    let page = b.post(&base, &form).await;
    assert_eq!(page.status, 200, "{}", page.body);
    let doses = rest["dosages"].as_array().expect("dosages");
    assert_eq!(doses.len(), 2, "{rest}");
    let mut at = 0;
    for d in doses {
        let line = format!(
            "<strong>{}</strong> · {} ml/L · {} ml",
            esc(d["product_name"].as_str().expect("name")),
            en(&d["ml_per_liter"]),
            en(&d["total_ml"]),
        );
        let found = page.body[at..]
            .find(&line)
            .unwrap_or_else(|| panic!("{line} not after {at} in {}", page.body));
        at += found + line.len();
    }
    // CalMag goes in first (its mixing priority), as the service orders it.
    assert_eq!(doses[0]["fertilizer_key"], calmag.as_str(), "{rest}");
    let warnings = rest["warnings"].as_array().expect("warnings");
    assert!(!warnings.is_empty(), "cold water warns: {rest}");
    for w in warnings {
        let message = esc(w["message"].as_str().expect("message"));
        assert!(page.has(&message), "{message} missing in {}", page.body);
    }
    let ph = &rest["ph_adjustment"];
    assert!(page.has(&format!("Adjust it to pH {}.", en(&ph["target_ph"]))));
    let lower: Vec<&str> = ph["lower_with"]
        .as_array()
        .expect("lower")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(page.has(&esc(&lower.join(", "))), "{}", page.body);
    assert!(page.has(&format!("{} mS/cm", en(&rest["calculated_ec"]))));

    // Out of range: 422, the sentence next to the field, what was typed stays.
    let mut refused_form = form.to_vec();
    refused_form[5] = ("target_ec_ms", "11");
    let refused = b.post(&base, &refused_form).await;
    assert_eq!(refused.status, 422, "{}", refused.body);
    assert!(
        refused.has(r#"id="mix-target_ec_ms-err""#),
        "{}",
        refused.body
    );
    assert!(refused.has(r#"aria-describedby="mix-target_ec_ms-err""#));
    assert!(refused.has(r#"value="11""#), "typed values stay");
    assert!(!refused.has(r#"id="mix-result""#), "no protocol");
    // Another garden's product is unknown here: 404 of the service, said at its row.
    let foreign = b
        .post(
            &base,
            &[
                ("_csrf", &csrf),
                ("product_0", &grow),
                ("product_1", &theirs),
                ("target_volume_liters", "20"),
                ("target_ec_ms", "1.2"),
            ],
        )
        .await;
    assert_eq!(foreign.status, 404, "{}", foreign.body);
    assert!(foreign.has(r#"id="mix-product_1-err""#), "{}", foreign.body);
    assert!(!foreign.has("Their grow"), "nothing of garden B is offered");
    // A decimal comma as German is typed.
    let mut de = Browser::new(&app, "de");
    de.sign_in(&grower.email, PASSWORD).await;
    let de_csrf = de.csrf(&base).await;
    let german = de
        .post(
            &base,
            &[
                ("_csrf", &de_csrf),
                ("product_0", &grow),
                ("target_volume_liters", "20"),
                ("target_ec_ms", "1,2"),
            ],
        )
        .await;
    assert_eq!(german.status, 200, "{}", german.body);
    assert!(german.has("Dosen in Mischreihenfolge"));

    // Without the CSRF value: 403.
    let forged = b.post(&base, &form[1..]).await;
    assert_eq!(forged.status, 403);
    // Garden B's member sees nothing of garden A.
    let mut out = Browser::new(&app, "en");
    out.sign_in(&outsider.email, PASSWORD).await;
    for path in [base.clone(), format!("/app/g/{slug}/nutrition")] {
        let page = out.get(&path).await;
        assert_eq!(page.status, 404, "{path}");
        assert!(!page.has("Web grow"));
    }
}

#[tokio::test]
async fn a_feeding_recorded_through_the_form_is_one_record_and_a_refused_one_none() {
    let app = TestApp::full().await;
    let t = app.tenant("wnutfeed").await;
    let grower = app.member(&t, Role::Grower).await;
    let viewer = app.member(&t, Role::Viewer).await;
    let other = app.tenant("wnutfeedb").await;
    let outsider = app.member(&other, Role::Admin).await;
    let slug = t.slug.as_str().to_owned();
    let base = format!("/app/g/{slug}/nutrition/feedings");
    let tomato = plant(&app, &t, "Feed tomato").await;
    let foreign_plant = plant(&app, &other, "Their tomato").await;
    let grow = own_fertilizer(&app, &t, &grower, own_body("Feed grow")).await;

    let mut b = Browser::new(&app, "en");
    b.sign_in(&grower.email, PASSWORD).await;
    let page = b.get(&base).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.has("Nothing recorded yet."), "{}", page.body);
    assert!(page.has(r#"<label for="feed-volume_liters">"#));
    let csrf = page.csrf();

    // Without the CSRF value: 403, nothing written.
    let forged = b
        .post(&base, &[("plant_keys[0]", &tomato), ("volume_liters", "2")])
        .await;
    assert_eq!(forged.status, 403);
    assert!(events(&app, &t).await.is_empty());

    // A runoff EC without a fed EC: the service's refusal, said plainly, nothing written.
    let refused = b
        .post(
            &base,
            &[
                ("_csrf", &csrf),
                ("plant_keys[0]", &tomato),
                ("volume_liters", "2"),
                ("runoff_ec_ms", "2.1"),
            ],
        )
        .await;
    assert_eq!(refused.status, 422, "{}", refused.body);
    assert!(refused.has(r#"role="alert""#));
    assert!(refused.has("Runoff EC (mS/cm)"), "{}", refused.body);
    assert!(refused.has(r#"value="2.1""#), "typed values stay");
    assert!(events(&app, &t).await.is_empty(), "nothing written");
    // Garden B's plant is unknown here: 404, nothing written.
    let foreign = b
        .post(
            &base,
            &[
                ("_csrf", &csrf),
                ("plant_keys[0]", &foreign_plant),
                ("volume_liters", "2"),
            ],
        )
        .await;
    assert_eq!(foreign.status, 404, "{}", foreign.body);
    assert!(events(&app, &t).await.is_empty());

    // A viewer's post: 403, nothing written; the page has no form for them.
    let mut v = Browser::new(&app, "de");
    v.sign_in(&viewer.email, PASSWORD).await;
    let vpage = v.get(&base).await;
    assert_eq!(vpage.status, 200, "{}", vpage.body);
    assert!(vpage.has("<h1>Düngungen · "), "{}", vpage.body);
    assert!(
        !vpage.has(r#"id="feed-volume_liters""#),
        "no form for a viewer"
    );
    let vcsrf = vpage.csrf();
    let denied = v
        .post(
            &base,
            &[
                ("_csrf", &vcsrf),
                ("plant_keys[0]", &tomato),
                ("volume_liters", "2"),
            ],
        )
        .await;
    assert_eq!(denied.status, 403, "{}", denied.body);
    assert!(events(&app, &t).await.is_empty());

    // Recorded: exactly one event with what was typed, listed on the page.
    let ok = b
        .post(
            &base,
            &[
                ("_csrf", &csrf),
                ("plant_keys[0]", &tomato),
                ("volume_liters", "2.5"),
                ("application_method", "fertigation"),
                ("ec_after_ms", "1.4"),
                ("ph_after", "6.1"),
                ("product_0", &grow),
                ("ml_0", "10"),
            ],
        )
        .await;
    assert_eq!(ok.status, 303, "{}", ok.body);
    assert_eq!(
        ok.location(),
        Some(format!("{base}?done=recorded").as_str())
    );
    let recorded = events(&app, &t).await;
    assert_eq!(recorded.len(), 1);
    let e = &recorded[0];
    assert_eq!(e.kind, "feeding");
    assert_eq!(e.volume_liters, 2.5);
    assert_eq!(e.ec_after_ms, Some(1.4));
    assert_eq!(
        e.plant_keys
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        std::slice::from_ref(&tomato)
    );
    assert_eq!(e.fertilizers_used.len(), 1);
    assert_eq!(e.fertilizers_used[0].fertilizer_key, grow);
    assert!(e.actor.starts_with("user:"), "{}", e.actor);
    let listed = b.get(&format!("{base}?done=recorded")).await;
    assert!(listed.has("Feeding recorded."));
    assert!(listed.has("Feed tomato"), "{}", listed.body);
    assert!(listed.has("Feed grow 10 ml"), "{}", listed.body);
    // The same record through REST.
    let api = app
        .rest_as(&viewer)
        .get_ok(&tenant_path(&t, "watering-events"))
        .await;
    assert_eq!(api["total"], 1, "{api}");

    // Garden B's member: 404 on the page and on the form; nothing written.
    let mut out = Browser::new(&app, "en");
    out.sign_in(&outsider.email, PASSWORD).await;
    let page = out.get(&base).await;
    assert_eq!(page.status, 404);
    assert!(!page.has("Feed tomato"));
    let ocsrf = out.csrf("/app").await;
    let posted = out
        .post(
            &base,
            &[
                ("_csrf", &ocsrf),
                ("plant_keys[0]", &tomato),
                ("volume_liters", "2"),
            ],
        )
        .await;
    assert_eq!(posted.status, 404);
    assert_eq!(events(&app, &t).await.len(), 1);
    assert!(events(&app, &other).await.is_empty());
}

#[tokio::test]
async fn plans_list_clone_assign_and_show_the_coverage_of_the_service() {
    let app = TestApp::full().await;
    let t = app.tenant("wnutplan").await;
    let grower = app.member(&t, Role::Grower).await;
    let viewer = app.member(&t, Role::Viewer).await;
    let other = app.tenant("wnutplanb").await;
    let outsider = app.member(&other, Role::Admin).await;
    let slug = t.slug.as_str().to_owned();
    let base = format!("/app/g/{slug}/nutrition/plans");
    let tomato = plant(&app, &t, "Plan tomato").await;
    let template = app
        .rest_as(&viewer)
        .get_ok(&tenant_path(&t, "nutrient-plans/tomato-soil"))
        .await;

    for (lang, heading) in [("en", "Nutrient plans"), ("de", "Düngepläne")] {
        let mut b = Browser::new(&app, lang);
        b.sign_in(&viewer.email, PASSWORD).await;
        let list = b.get(&base).await;
        assert_eq!(list.status, 200, "{}", list.body);
        assert!(list.has(&format!("<h1>{heading} · ")), "{}", list.body);
        assert!(
            list.has(&format!(r#"href="{base}/tomato-soil""#)),
            "{}",
            list.body
        );
        let page = b.get(&format!("{base}/tomato-soil")).await;
        assert_eq!(page.status, 200, "{}", page.body);
        assert!(page.has(&esc(template["name"].as_str().expect("name"))));
        // Every phase with its target EC, as the API has it.
        for p in template["phases"].as_array().expect("phases") {
            assert!(page.has(&format!(
                "<strong>{}</strong>",
                esc(p["phase_name"].as_str().expect("phase"))
            )));
            if lang == "en" && p["target_ec_ms"].is_number() {
                assert!(
                    page.has(&format!("{} mS/cm", en(&p["target_ec_ms"]))),
                    "{}",
                    page.body
                );
            }
        }
        assert!(!page.has(r#"id="clone-name""#), "no forms for a viewer");
    }

    let mut b = Browser::new(&app, "en");
    b.sign_in(&grower.email, PASSWORD).await;
    let page_path = format!("{base}/tomato-soil");
    let csrf = b.csrf(&page_path).await;
    // Without the CSRF value, and a viewer's post: 403, nothing written.
    let forged = b
        .post(&format!("{page_path}/clone"), &[("name", "Forged")])
        .await;
    assert_eq!(forged.status, 403);
    let mut v = Browser::new(&app, "en");
    v.sign_in(&viewer.email, PASSWORD).await;
    let vcsrf = v.csrf(&page_path).await;
    let denied = v
        .post(&format!("{page_path}/clone"), &[("_csrf", &vcsrf)])
        .await;
    assert_eq!(denied.status, 403);
    assert_eq!(own_plans(&app, &t).await, 0);

    // Cloned: the copy's page; the template as it was.
    let cloned = b
        .post(
            &format!("{page_path}/clone"),
            &[("_csrf", &csrf), ("name", "Web copy")],
        )
        .await;
    assert_eq!(cloned.status, 303, "{}", cloned.body);
    let to = cloned.location().expect("location").to_owned();
    assert!(to.starts_with(&format!("{base}/tenant:")), "{to}");
    assert!(to.ends_with("?done=cloned"), "{to}");
    assert_eq!(own_plans(&app, &t).await, 1);
    let copy_page = b.get(&to).await;
    assert_eq!(copy_page.status, 200, "{}", copy_page.body);
    assert!(copy_page.has("Plan cloned"));
    assert!(copy_page.has("Web copy"));
    let after = app
        .rest_as(&viewer)
        .get_ok(&tenant_path(&t, "nutrient-plans/tomato-soil"))
        .await;
    assert_eq!(after, template, "the source is untouched");
    // The same name again: the service's 409, said on the page, nothing written.
    let again = b
        .post(
            &format!("{page_path}/clone"),
            &[("_csrf", &csrf), ("name", "Web copy")],
        )
        .await;
    assert_eq!(again.status, 409, "{}", again.body);
    assert!(again.has(r#"role="alert""#));
    assert_eq!(own_plans(&app, &t).await, 1);

    // Assigned to the plant; the coverage is the service's.
    let copy_path = to.trim_end_matches("?done=cloned").to_owned();
    let copy_key = copy_path.rsplit('/').next().expect("key").to_owned();
    let assigned = b
        .post(
            &format!("{copy_path}/assign"),
            &[("_csrf", &csrf), ("plant_key", &tomato)],
        )
        .await;
    assert_eq!(assigned.status, 303, "{}", assigned.body);
    let api = app
        .rest_as(&viewer)
        .get_ok(&tenant_path(
            &t,
            &format!("plant-nutrient-plans/{tomato}/coverage"),
        ))
        .await;
    assert_eq!(api["plan"]["key"], copy_key.as_str(), "{api}");
    let cov = b
        .get(&format!(
            "/app/g/{slug}/nutrition/coverage?plant_key={tomato}"
        ))
        .await;
    assert_eq!(cov.status, 200, "{}", cov.body);
    assert!(cov.has("Coverage for Plan tomato"), "{}", cov.body);
    assert!(cov.has(&format!(r#"href="{copy_path}""#)), "{}", cov.body);
    let complete = api["coverage"]["complete"].as_bool().expect("complete");
    assert!(cov.has(if complete {
        "The plan covers every week and phase."
    } else {
        "The plan does not cover everything"
    }));
    for i in api["coverage"]["issues"].as_array().expect("issues") {
        assert!(
            cov.has(&esc(i["message"].as_str().expect("message"))),
            "{}",
            cov.body
        );
    }
    // Neither a plan nor a plant: the service's refusal.
    let none = b
        .post(&format!("{copy_path}/assign"), &[("_csrf", &csrf)])
        .await;
    assert_eq!(none.status, 422, "{}", none.body);

    // Garden B's member: the copy, the coverage and the list are 404 for them.
    let mut out = Browser::new(&app, "en");
    out.sign_in(&outsider.email, PASSWORD).await;
    for path in [
        base.clone(),
        copy_path.clone(),
        format!("/app/g/{slug}/nutrition/coverage?plant_key={tomato}"),
        format!("/app/g/{}/nutrition/plans/{copy_key}", other.slug),
        format!(
            "/app/g/{}/nutrition/coverage?plant_key={tomato}",
            other.slug
        ),
    ] {
        let page = out.get(&path).await;
        assert_eq!(page.status, 404, "{path}: {}", page.body);
        assert!(!page.has("Web copy"));
    }
    assert_eq!(own_plans(&app, &other).await, 0);
}
