//! The master-data catalogue: reads for every caller, writes for platform admins, filters,
//! search, paging, partial updates, the seed, the phase sequence of a species, zones,
//! knowledge search. The catalogue is global and tests run in parallel, so every record a test
//! writes has a unique name, and the fixture seed (tests/fixtures/catalog) is idempotent.

use std::path::Path;

use kultiva::catalog::seed::SeedSet;
use kultiva::catalog::seed::load::{SeedError, load};
use serde_json::{Value, json};

use crate::support::{TestApp, assert_error, detail_fields};

fn fixture_set() -> SeedSet {
    SeedSet::from_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/catalog"))
        .expect("fixture files")
}

/// Loads the fixture catalogue (idempotent; parallel tests serialise on the seed lock).
pub(crate) async fn seeded(app: &TestApp) {
    load(&app.state, &fixture_set())
        .await
        .expect("fixture seed loads");
}

/// Lower-case letters only, unique per call (names must match `^[A-Z][a-z]+aceae$` and
/// binomial forms).
pub(crate) fn letters() -> String {
    uuid::Uuid::new_v4()
        .simple()
        .to_string()
        .chars()
        .map(|c| match c.to_digit(16) {
            Some(d) => (b'a' + d as u8) as char,
            None => c,
        })
        .take(12)
        .collect()
}

async fn json_of(res: reqwest::Response) -> Value {
    res.json().await.expect("json body")
}

/// The first item of a list answer.
async fn only(app: &TestApp, path: &str) -> Value {
    let page = json_of(app.get(path).await).await;
    assert_eq!(page["total"], 1, "{path}: {page}");
    page["items"][0].clone()
}

async fn count_named(app: &TestApp, kind: &str, name_norm: &str) -> i64 {
    sqlx::query_scalar(
        "SELECT count(*) FROM platform.catalog_records WHERE kind = $1 AND name_norm = $2",
    )
    .bind(kind)
    .bind(name_norm)
    .fetch_one(app.state.platform_pool())
    .await
    .expect("count")
}

#[tokio::test]
async fn reads_need_a_caller_and_writes_a_platform_admin() {
    let app = TestApp::full().await;
    let admin = app.platform_admin().await;
    let user = app.user("reader").await;
    let (a, u) = (admin.bearer(), user.bearer());
    let name = format!("R{}aceae", letters());
    let norm = name.to_lowercase();

    for path in [
        "/api/v1/botanical-families",
        "/api/v1/species",
        "/api/v1/ipm/pests",
        "/api/v1/hardiness-zones/",
        "/api/v1/glossary/",
    ] {
        assert_error(app.get(path).await, 401, "UNAUTHORIZED").await;
        let res = app.rest_auth(Some(&u)).get(path).await;
        assert_eq!(res.status().as_u16(), 200, "{path}");
    }
    let body = json!({"name": name, "common_name_en": "Readers"});
    let res = app
        .rest_auth(Some(&u))
        .post("/api/v1/botanical-families", &body)
        .await;
    assert_error(res, 403, "FORBIDDEN").await;
    assert_eq!(
        count_named(&app, "botanical_family", &norm).await,
        0,
        "nothing written"
    );
    let res = app.rest().post("/api/v1/botanical-families", &body).await;
    assert_error(res, 401, "UNAUTHORIZED").await;

    let res = app
        .rest_auth(Some(&a))
        .post("/api/v1/botanical-families", &body)
        .await;
    assert_eq!(res.status().as_u16(), 201);
    let family = json_of(res).await;
    let path = format!(
        "/api/v1/botanical-families/{}",
        family["key"].as_str().expect("key")
    );

    let patch = json!({"common_name_en": "Changed"});
    assert_error(
        app.rest_auth(Some(&u)).patch(&path, &patch).await,
        403,
        "FORBIDDEN",
    )
    .await;
    assert_error(
        app.rest_auth(Some(&u)).delete(&path).await,
        403,
        "FORBIDDEN",
    )
    .await;
    let got = json_of(app.rest_auth(Some(&u)).get(&path).await).await;
    assert_eq!(got, family, "unchanged after refused writes");

    let res = app.rest_auth(Some(&a)).delete(&path).await;
    assert_eq!(res.status().as_u16(), 204);
    assert_error(
        app.rest_auth(Some(&u)).get(&path).await,
        404,
        "ENTITY_NOT_FOUND",
    )
    .await;
    assert_error(
        app.rest_auth(Some(&a)).delete(&path).await,
        404,
        "ENTITY_NOT_FOUND",
    )
    .await;
}

#[tokio::test]
async fn create_patch_and_delete_validate_every_field() {
    let app = TestApp::spawn().await; // light mode: the system user administers the platform
    let name = format!("V{}aceae", letters());
    let norm = name.to_lowercase();
    let base = "/api/v1/botanical-families";

    // Every bad field is one detail; nothing is written.
    let res = app
        .post_json(base, &json!({"name": "Solanales", "soil_ph_min": 2, "typical_nutrient_demand": "huge", "frost_tolerance": 3, "extra": 1}))
        .await;
    let body = assert_error(res, 422, "VALIDATION_ERROR").await;
    assert_eq!(
        detail_fields(&body),
        [
            "body.name",
            "body.typical_nutrient_demand",
            "body.soil_ph_min",
            "body.frost_tolerance",
            "body.extra"
        ]
    );
    let res = app.post_json(base, &json!({"common_name_en": "x"})).await;
    let body = assert_error(res, 422, "VALIDATION_ERROR").await;
    assert_eq!(detail_fields(&body), ["body.name"]);
    // Rules across fields.
    let res = app
        .post_json(base, &json!({"name": name, "soil_ph_min": 7.5, "soil_ph_max": 6, "nitrogen_fixing": true, "typical_nutrient_demand": "heavy"}))
        .await;
    let body = assert_error(res, 422, "VALIDATION_ERROR").await;
    assert_eq!(
        detail_fields(&body),
        ["body.soil_ph_max", "body.typical_nutrient_demand"]
    );
    assert_eq!(count_named(&app, "botanical_family", &norm).await, 0);
    assert_error(
        app.post_raw(base, "application/json", "{").await,
        400,
        "MALFORMED_REQUEST",
    )
    .await;
    assert_error(
        app.post_raw(base, "text/plain", "{}").await,
        415,
        "UNSUPPORTED_MEDIA_TYPE",
    )
    .await;

    let res = app
        .post_json(base, &json!({"name": name, "common_name_en": " Testers ", "soil_ph_min": 5.5, "soil_ph_max": 7, "typical_growth_forms": [], "description_en": "  "}))
        .await;
    assert_eq!(res.status().as_u16(), 201);
    let created = json_of(res).await;
    assert_eq!(created["common_name_en"], "Testers", "trimmed");
    assert!(
        created.get("typical_growth_forms").is_none(),
        "empty fields omitted: {created}"
    );
    assert!(created.get("description_en").is_none());
    // Same name in other case and spacing: 409.
    let res = app.post_json(base, &json!({"name": name.clone()})).await;
    assert_error(res, 409, "DUPLICATE_ENTRY").await;
    assert_eq!(count_named(&app, "botanical_family", &norm).await, 1);

    // PATCH is partial: omitted fields stay, null clears, rules hold on the merged record.
    let path = format!("{base}/{}", created["key"].as_str().expect("key"));
    let res = app
        .rest()
        .patch(
            &path,
            &json!({"common_name_de": "Prüfgewächse", "soil_ph_min": null}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let patched = json_of(res).await;
    assert_eq!(patched["common_name_en"], "Testers");
    assert_eq!(patched["common_name_de"], "Prüfgewächse");
    assert!(patched.get("soil_ph_min").is_none());
    assert_eq!(patched["soil_ph_max"], 7);
    assert_eq!(patched["created_at"], created["created_at"]);
    for (bad, field) in [
        (json!({"soil_ph_min": 8}), "body.soil_ph_min"),
        (json!({"name": null}), "body.name"),
        (json!({"name": "nope"}), "body.name"),
        (json!({"key": "x"}), "body.key"),
    ] {
        let res = app.rest().patch(&path, &bad).await;
        let body = assert_error(res, 422, "VALIDATION_ERROR").await;
        let fields = detail_fields(&body);
        assert!(
            fields.contains(&field.to_owned()) || field == "body.soil_ph_min",
            "{bad}: {fields:?}"
        );
    }
    // {"soil_ph_min": 8} breaks min <= max (reported on the max field): nothing changed.
    assert_eq!(json_of(app.get(&path).await).await, patched);

    for key in [uuid::Uuid::now_v7().to_string(), "not-a-key".to_owned()] {
        let p = format!("{base}/{key}");
        assert_error(app.get(&p).await, 404, "ENTITY_NOT_FOUND").await;
        assert_error(
            app.rest().patch(&p, &json!({})).await,
            404,
            "ENTITY_NOT_FOUND",
        )
        .await;
        assert_error(app.rest().delete(&p).await, 404, "ENTITY_NOT_FOUND").await;
    }

    // A family that a species references cannot be deleted.
    let species = format!("Testus {}", letters());
    let res = app
        .post_json(
            "/api/v1/species",
            &json!({"scientific_name": species, "family_key": created["key"]}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 201);
    let sp = json_of(res).await;
    assert_error(app.rest().delete(&path).await, 409, "STATE_CONFLICT").await;
    assert_eq!(count_named(&app, "botanical_family", &norm).await, 1);
    let sp_path = format!("/api/v1/species/{}", sp["key"].as_str().expect("key"));
    assert_eq!(app.rest().delete(&sp_path).await.status().as_u16(), 204);
    assert_eq!(app.rest().delete(&path).await.status().as_u16(), 204);
}

#[tokio::test]
async fn species_references_must_exist_and_names_normalise() {
    let app = TestApp::spawn().await;
    let word = letters();
    let res = app
        .post_json(
            "/api/v1/botanical-families",
            &json!({"name": format!("N{word}aceae")}),
        )
        .await;
    let family = json_of(res).await;
    let name = format!("Hybridus × {word}");
    let res = app
        .post_json(
            "/api/v1/species",
            &json!({"scientific_name": name, "family_key": uuid::Uuid::now_v7()}),
        )
        .await;
    let body = assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    assert_eq!(detail_fields(&body), ["body.family_key"]);
    let res = app
        .post_json("/api/v1/species", &json!({"scientific_name": name, "family_key": family["key"], "genus": "Other",
            "hardiness_zone_min": "9a", "hardiness_zone_max": "7b", "toxicity_severity": "high", "watering_interval_days": 91}))
        .await;
    let body = assert_error(res, 422, "VALIDATION_ERROR").await;
    assert_eq!(detail_fields(&body), ["body.watering_interval_days"]);
    let res = app
        .post_json(
            "/api/v1/species",
            &json!({"scientific_name": name, "family_key": family["key"], "genus": "Other",
            "hardiness_zone_min": "9a", "hardiness_zone_max": "7b", "toxicity_severity": "high"}),
        )
        .await;
    let body = assert_error(res, 422, "VALIDATION_ERROR").await;
    assert_eq!(
        detail_fields(&body),
        [
            "body.genus",
            "body.hardiness_zone_max",
            "body.toxicity_severity"
        ]
    );
    let res = app
        .post_json(
            "/api/v1/species",
            &json!({"scientific_name": name, "family_key": family["key"]}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 201);
    // `×` and `x` are the same name.
    let res = app
        .post_json(
            "/api/v1/species",
            &json!({"scientific_name": format!("HYBRIDUS x {word}"), "family_key": family["key"]}),
        )
        .await;
    assert_error(res, 409, "DUPLICATE_ENTRY").await;
    let found = only(&app, &format!("/api/v1/species?q=hybridus%20x%20{word}")).await;
    assert_eq!(found["scientific_name"], name);
}

#[tokio::test]
async fn species_lists_filter_search_and_page() {
    let app = TestApp::spawn().await;
    seeded(&app).await;
    let family = only(&app, "/api/v1/botanical-families?q=fixturaceae").await;
    let fkey = family["key"].as_str().expect("key");
    let tomato = only(&app, "/api/v1/species?q=testtomate").await;
    assert_eq!(tomato["scientific_name"], "Fixtura tomatoides");
    let page = json_of(app.get(&format!("/api/v1/species?family={fkey}")).await).await;
    assert_eq!(page["total"], 2, "{page}");
    let page = json_of(
        app.get(&format!(
            "/api/v1/botanical-families/{fkey}/species?category=indoor_houseplant"
        ))
        .await,
    )
    .await;
    assert_eq!(page["total"], 1);
    assert_eq!(page["items"][0]["scientific_name"], "Fixtura × hybrida");
    let page = json_of(
        app.get(&format!(
            "/api/v1/species?family={fkey}&toxic=true&growth_habit=vine"
        ))
        .await,
    )
    .await;
    assert_eq!(page["total"], 1);
    let page = json_of(
        app.get(&format!("/api/v1/species?family={fkey}&toxic=unknown"))
            .await,
    )
    .await;
    assert_eq!(page["items"][0]["scientific_name"], "Fixtura × hybrida");
    let page = json_of(
        app.get(&format!(
            "/api/v1/species?family={fkey}&allows_harvest=true&cycle_type=perennial"
        ))
        .await,
    )
    .await;
    assert_eq!(page["items"][0]["scientific_name"], "Fixtura tomatoides");
    // Paging within the filtered set.
    let page = json_of(
        app.get(&format!("/api/v1/species?family={fkey}&skip=1&limit=1"))
            .await,
    )
    .await;
    assert_eq!(
        (
            page["total"].as_i64(),
            page["skip"].as_i64(),
            page["limit"].as_i64()
        ),
        (Some(2), Some(1), Some(1))
    );
    assert_eq!(page["items"].as_array().map(Vec::len), Some(1));
    let page = json_of(
        app.get(&format!("/api/v1/species?family={fkey}&skip=5"))
            .await,
    )
    .await;
    assert_eq!(page["items"], json!([]));
    for (q, field) in [
        ("limit=0", "query.limit"),
        ("limit=201", "query.limit"),
        ("skip=-1", "query.skip"),
        ("category=tree", "query.category"),
        ("toxic=maybe", "query.toxic"),
        ("family=nope", "query.family"),
    ] {
        let body = assert_error(
            app.get(&format!("/api/v1/species?{q}")).await,
            422,
            "VALIDATION_ERROR",
        )
        .await;
        assert_eq!(detail_fields(&body), [field], "{q}");
    }
    let missing = uuid::Uuid::now_v7();
    assert_error(
        app.get(&format!("/api/v1/botanical-families/{missing}/species"))
            .await,
        404,
        "ENTITY_NOT_FOUND",
    )
    .await;
}

#[tokio::test]
async fn safety_fields_are_always_present_and_null_when_unknown() {
    let app = TestApp::spawn().await;
    seeded(&app).await;
    let mystery = only(&app, "/api/v1/species?q=mockia%20obscura").await;
    for field in [
        "toxicity",
        "toxicity_severity",
        "allergen_info",
        "allows_harvest",
        "phase_sequence_key",
    ] {
        assert_eq!(mystery.get(field), Some(&Value::Null), "{field}: {mystery}");
    }
    assert!(
        mystery.get("harvest_months").is_none(),
        "empty fields omitted"
    );
    assert!(mystery.get("cycle_type").is_none());
    let bean = only(&app, "/api/v1/species?q=probus%20perennis").await;
    assert_eq!(
        bean["toxicity"],
        json!({"is_toxic": false}),
        "not toxic only where recorded"
    );
    assert_eq!(bean["allows_harvest"], true);
}

#[tokio::test]
async fn species_phase_sequence_is_bound_or_selected() {
    let app = TestApp::spawn().await;
    seeded(&app).await;
    let seq_of = |q: &'static str| {
        let app = &app;
        async move {
            let sp = only(app, &format!("/api/v1/species?q={q}")).await;
            let res = app
                .get(&format!(
                    "/api/v1/species/{}/phase-sequence",
                    sp["key"].as_str().expect("key")
                ))
                .await;
            assert_eq!(res.status().as_u16(), 200, "{q}");
            json_of(res).await
        }
    };
    let bound = seq_of("fixtura%20tomatoides").await;
    assert_eq!(
        (bound["source"].as_str(), bound["rule"].clone()),
        (Some("bound"), Value::Null)
    );
    assert_eq!(bound["sequence"]["name"], "annual_harvest");
    // Effective duration: the phase's typical duration when there is no override.
    assert_eq!(
        bound["sequence"]["entries"][1]["effective_duration_days"],
        30
    );
    assert_eq!(bound["sequence"]["total_duration_days"], 7 + 30 + 14);
    assert_eq!(bound["sequence"]["terminates_in_harvest"], true);
    for (q, rule, name) in [
        ("mockia%20obscura", 7, "evergreen_foliage_perennial"),
        ("fixtura%20x%20hybrida", 6, "annual_harvest"),
        ("lithopsis", 3, "cam_succulent_rest"),
        ("mockia%20filix", 4, "fern_spore"),
        ("probus", 5, "evergreen_foliage_perennial"),
    ] {
        let got = seq_of(q).await;
        assert_eq!(got["source"], "selected", "{q}");
        assert_eq!(got["rule"], rule, "{q}");
        assert_eq!(got["sequence"]["name"], name, "{q}");
    }
    let annual = seq_of("fixtura%20x%20hybrida").await;
    let entries = annual["sequence"]["entries"].as_array().expect("entries");
    // Rule 6 gives the annual harvest cycle (no flush): germination, vegetative, ripening.
    let phases: Vec<&str> = entries
        .iter()
        .filter_map(|e| e["phase_name"].as_str())
        .collect();
    assert_eq!(phases, ["fx_germination", "fx_vegetative", "fx_ripening"]);
    assert_eq!(
        entries[0]["effective_duration_days"], 7,
        "the phase's typical duration"
    );
    assert_eq!(entries[2]["terminal"], true);
    assert_eq!(entries[2]["allows_harvest"], true);
    let missing = uuid::Uuid::now_v7();
    assert_error(
        app.get(&format!("/api/v1/species/{missing}/phase-sequence"))
            .await,
        404,
        "ENTITY_NOT_FOUND",
    )
    .await;
}

#[tokio::test]
async fn binding_a_sequence_is_one_admin_operation() {
    let app = TestApp::full().await;
    let admin = app.platform_admin().await;
    let user = app.user("binder").await;
    seeded(&app).await;
    let (a, u) = (admin.bearer(), user.bearer());
    let family = json_of(
        app.rest_auth(Some(&u))
            .get("/api/v1/botanical-families?q=mockaceae")
            .await,
    )
    .await;
    let sp = json_of(
        app.rest_auth(Some(&a)).post("/api/v1/species", &json!({"scientific_name": format!("Bindus {}", letters()), "family_key": family["items"][0]["key"]})).await,
    )
    .await;
    let path = format!(
        "/api/v1/species/{}/phase-sequence",
        sp["key"].as_str().expect("key")
    );
    let fern = json_of(
        app.rest_auth(Some(&u))
            .get("/api/v1/phase-sequences?q=fern_spore")
            .await,
    )
    .await;
    let fern_key = fern["items"][0]["key"].clone();

    let body = json!({"phase_sequence_key": fern_key});
    assert_error(
        app.rest_auth(Some(&u)).put(&path, &body).await,
        403,
        "FORBIDDEN",
    )
    .await;
    let before = json_of(app.rest_auth(Some(&u)).get(&path).await).await;
    assert_eq!(
        (before["source"].as_str(), before["rule"].as_i64()),
        (Some("selected"), Some(7))
    );

    let res = app
        .rest_auth(Some(&a))
        .put(&path, &json!({"phase_sequence_key": uuid::Uuid::now_v7()}))
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    let res = app
        .rest_auth(Some(&a))
        .put(&path, &json!({"phase_sequence_key": "x"}))
        .await;
    assert_error(res, 422, "VALIDATION_ERROR").await;
    assert_eq!(
        json_of(app.rest_auth(Some(&u)).get(&path).await).await["source"],
        "selected"
    );

    let res = app.rest_auth(Some(&a)).put(&path, &body).await;
    assert_eq!(res.status().as_u16(), 200);
    let now = json_of(res).await;
    assert_eq!(
        (now["source"].as_str(), now["sequence"]["name"].as_str()),
        (Some("bound"), Some("fern_spore"))
    );
    let record = json_of(
        app.rest_auth(Some(&u))
            .get(&format!(
                "/api/v1/species/{}",
                sp["key"].as_str().expect("key")
            ))
            .await,
    )
    .await;
    assert_eq!(record["phase_sequence_key"], fern_key);
    // A patch of the species does not touch the binding.
    let res = app
        .rest_auth(Some(&a))
        .patch(
            &format!("/api/v1/species/{}", sp["key"].as_str().expect("key")),
            &json!({"cycle_type": "annual"}),
        )
        .await;
    assert_eq!(json_of(res).await["phase_sequence_key"], fern_key);
    // null unbinds: the rules decide again (annual now: rule 6).
    let res = app
        .rest_auth(Some(&a))
        .put(&path, &json!({"phase_sequence_key": null}))
        .await;
    let after = json_of(res).await;
    assert_eq!(
        (after["source"].as_str(), after["rule"].as_i64()),
        (Some("selected"), Some(6))
    );
}

#[tokio::test]
async fn seed_twice_changes_nothing_and_bad_seeds_write_nothing() {
    let app = TestApp::spawn().await;
    seeded(&app).await;
    let before = only(&app, "/api/v1/ipm/treatments?q=fixture%20soap").await;
    let report = load(&app.state, &fixture_set()).await.expect("seed");
    assert_eq!(report.written(), 0, "{report:?}");
    assert_eq!(
        only(&app, "/api/v1/ipm/treatments?q=fixture%20soap").await,
        before
    );
    assert_eq!(
        before["contraindicated_with_keys"].as_array().map(Vec::len),
        Some(1)
    );

    // A set with one bad record is refused whole, before anything is written.
    let word = letters();
    let mut bad = fixture_set();
    bad.texts.retain(|(f, _)| *f == "families.json");
    bad.texts[0].1 = json!([
        {"name": format!("G{word}aceae")},
        {"name": "Solanales"}
    ])
    .to_string();
    match load(&app.state, &bad).await {
        Err(SeedError::Invalid(errors)) => assert_eq!(errors.len(), 1, "{errors:?}"),
        other => panic!("expected Invalid, got {other:?}"),
    }
    assert_eq!(
        count_named(&app, "botanical_family", &format!("g{word}aceae")).await,
        0
    );
}

#[tokio::test]
async fn cultivars_and_ipm_link_to_species() {
    let app = TestApp::spawn().await;
    seeded(&app).await;
    let tomato = only(&app, "/api/v1/species?q=fixtura%20tomatoides").await;
    let key = tomato["key"].as_str().expect("key");
    let page = json_of(app.get(&format!("/api/v1/species/{key}/cultivars")).await).await;
    assert_eq!(page["total"], 2);
    let page = json_of(
        app.get(&format!("/api/v1/species/{key}/cultivars?trait=f1"))
            .await,
    )
    .await;
    assert_eq!(page["items"][0]["name"], "Yellow Fixture");
    let page = json_of(
        app.get(&format!(
            "/api/v1/cultivars?species={key}&seed_type=open_pollinated"
        ))
        .await,
    )
    .await;
    assert_eq!(page["items"][0]["name"], "Red Fixture");
    assert_error(
        app.get(&format!(
            "/api/v1/species/{}/cultivars",
            uuid::Uuid::now_v7()
        ))
        .await,
        404,
        "ENTITY_NOT_FOUND",
    )
    .await;
    // The same cultivar name under another species is fine; under the same one it is taken.
    let res = app
        .post_json(
            "/api/v1/cultivars",
            &json!({"species_key": key, "name": "red fixture"}),
        )
        .await;
    assert_error(res, 409, "DUPLICATE_ENTRY").await;

    let aphid = only(
        &app,
        &format!("/api/v1/ipm/pests?host={key}&pest_type=insect"),
    )
    .await;
    assert_eq!(aphid["scientific_name"], "Fixturia vorax");
    let blight = only(
        &app,
        &format!("/api/v1/ipm/diseases?host={key}&plant_part=fruit"),
    )
    .await;
    assert_eq!(blight["pathogen_type"], "fungal");
    let soap = only(
        &app,
        &format!(
            "/api/v1/ipm/treatments?pest={}",
            aphid["key"].as_str().expect("key")
        ),
    )
    .await;
    assert_eq!(soap["safety_interval_days"], 3);
    assert_eq!(soap["protective_equipment"], json!(["gloves", "goggles"]));
    assert_eq!(soap["active_ingredient"], "potassium fixturate");
    // A chemical treatment needs an active ingredient (a 0-day interval is a label value like
    // any other; with no label listed it is refused on every crop).
    let name = format!("Spray {}", letters());
    let res = app
        .post_json(
            "/api/v1/ipm/treatments",
            &json!({"name": name, "treatment_type": "chemical", "safety_interval_days": 0}),
        )
        .await;
    let body = assert_error(res, 422, "VALIDATION_ERROR").await;
    assert_eq!(detail_fields(&body), ["body.active_ingredient"]);
    assert_eq!(
        count_named(&app, "treatment", &name.to_lowercase()).await,
        0
    );
}

#[tokio::test]
async fn phases_sequences_and_growth_phases() {
    let app = TestApp::spawn().await;
    seeded(&app).await;
    let phase = only(&app, "/api/v1/phases?q=fx_ripening").await;
    let name = format!("seq_{}", letters());
    let entry = |order: i64, terminal: bool| json!({"phase_key": phase["key"], "order": order, "terminal": terminal, "allows_harvest": terminal});
    let res = app
        .post_json("/api/v1/phase-sequences", &json!({"name": name, "display_name_en": "Test", "cycle_type": "annual", "is_repeating": false,
            "entries": [entry(0, false), entry(2, false)]}))
        .await;
    let body = assert_error(res, 422, "VALIDATION_ERROR").await;
    assert_eq!(
        detail_fields(&body),
        ["body.entries[1].order", "body.entries"]
    );
    let res = app
        .post_json("/api/v1/phase-sequences", &json!({"name": name, "display_name_en": "Test", "cycle_type": "annual", "is_repeating": false,
            "entries": [entry(0, false), {"phase_key": uuid::Uuid::now_v7(), "order": 1, "terminal": true, "allows_harvest": true}]}))
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    let res = app
        .post_json("/api/v1/phase-sequences", &json!({"name": name, "display_name_en": "Test", "cycle_type": "annual", "is_repeating": false,
            "entries": [entry(0, false), entry(1, true)]}))
        .await;
    assert_eq!(res.status().as_u16(), 201);
    let seq = json_of(res).await;
    let skey = seq["key"].as_str().expect("key");
    let resolved = json_of(
        app.get(&format!("/api/v1/phase-sequences/{skey}/resolved"))
            .await,
    )
    .await;
    assert_eq!(resolved["total_duration_days"], 28);
    let growth = json_of(
        app.get(&format!("/api/v1/growth-phases?sequence={skey}"))
            .await,
    )
    .await;
    assert_eq!(growth["total"], 2);
    assert_eq!(growth["items"][1]["phase_name"], "fx_ripening");
    // A phase in use by a sequence cannot be deleted.
    let res = app
        .rest()
        .delete(&format!(
            "/api/v1/phases/{}",
            phase["key"].as_str().expect("key")
        ))
        .await;
    assert_error(res, 409, "STATE_CONFLICT").await;
    let page = json_of(
        app.get(&format!(
            "/api/v1/phase-sequences?phase={}&q={name}",
            phase["key"].as_str().expect("key")
        ))
        .await,
    )
    .await;
    assert_eq!(page["total"], 1);
    assert_eq!(
        app.rest()
            .delete(&format!("/api/v1/phase-sequences/{skey}"))
            .await
            .status()
            .as_u16(),
        204
    );
}

#[tokio::test]
async fn zones_glossary_kits_companions_rotation_overwintering() {
    let app = TestApp::spawn().await;
    seeded(&app).await;
    let zones = json_of(app.get("/api/v1/hardiness-zones/").await).await;
    assert_eq!(zones["total"], 26);
    let z7a = json_of(app.get("/api/v1/hardiness-zones/7a").await).await;
    assert_eq!(
        (z7a["min_temp_f"].as_f64(), z7a["max_temp_f"].as_f64()),
        (Some(0.0), Some(5.0))
    );
    assert_eq!(
        (z7a["min_temp_c"].as_f64(), z7a["max_temp_c"].as_f64()),
        (Some(-17.8), Some(-15.0))
    );
    assert_eq!(z7a["typical_last_frost"], "04-20");
    for bad in ["14a", "7c", "x"] {
        assert_error(
            app.get(&format!("/api/v1/hardiness-zones/{bad}")).await,
            404,
            "ENTITY_NOT_FOUND",
        )
        .await;
    }
    assert_error(
        app.get("/api/v1/hardiness-zones/?limit=27").await,
        422,
        "VALIDATION_ERROR",
    )
    .await;

    let term = only(&app, "/api/v1/glossary/?q=fixture-ec").await;
    assert_eq!(term["label_de"], "Fixture-Leitfähigkeit");
    let by_alias = only(&app, "/api/v1/glossary/?q=FIXTURE%20EC&category=nutrition").await;
    assert_eq!(by_alias["slug"], "fixture-ec");

    let tomato = only(&app, "/api/v1/species?q=fixtura%20tomatoides").await;
    let tkey = tomato["key"].as_str().expect("key");
    let kit = only(
        &app,
        &format!("/api/v1/starter-kits?species={tkey}&difficulty=beginner"),
    )
    .await;
    assert_eq!(kit["slug"], "fixture-kit");
    assert_eq!(kit["species_keys"].as_array().map(Vec::len), Some(2));

    let rec = json_of(
        app.get(&format!(
            "/api/v1/companion-planting/species/{tkey}/recommendations"
        ))
        .await,
    )
    .await;
    assert_eq!(rec["compatible"].as_array().map(Vec::len), Some(2));
    assert_eq!(rec["compatible"][0]["score"], 0.9, "best first");
    assert_eq!(rec["incompatible"].as_array().map(Vec::len), Some(1));
    let bean = only(&app, "/api/v1/species?q=probus%20perennis").await;
    // A pair is the same in either order.
    let res = app
        .post_json("/api/v1/companion-planting", &json!({"species_a_key": bean["key"], "species_b_key": tkey, "relation": "compatible", "score": 0.5}))
        .await;
    assert_error(res, 409, "DUPLICATE_ENTRY").await;
    let res = app
        .post_json("/api/v1/companion-planting", &json!({"species_a_key": tkey, "species_b_key": tkey, "relation": "incompatible", "score": 0.5}))
        .await;
    let body = assert_error(res, 422, "VALIDATION_ERROR").await;
    assert_eq!(detail_fields(&body), ["body.species_b_key", "body.score"]);

    let legumes = only(&app, "/api/v1/botanical-families?q=probaceae").await;
    let succ = json_of(
        app.get(&format!(
            "/api/v1/crop-rotation/families/{}/successors",
            legumes["key"].as_str().expect("key")
        ))
        .await,
    )
    .await;
    assert_eq!(succ["total"], 1);
    assert_eq!(succ["items"][0]["wait_years"], 2);
    let profile = only(
        &app,
        &format!(
            "/api/v1/overwintering?species={}",
            bean["key"].as_str().expect("key")
        ),
    )
    .await;
    assert_eq!(profile["winter_action"], "mulch");
}

#[tokio::test]
async fn knowledge_search_ranks_sources_in_both_languages() {
    let app = TestApp::full().await;
    let user = app.user("reader").await;
    seeded(&app).await;
    let u = user.bearer();
    let res = app
        .rest_auth(Some(&u))
        .get("/api/v1/knowledge/search?q=fixture%20tomato%20sun&language=en")
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let page = json_of(res).await;
    let first = &page["items"][0];
    assert_eq!(first["source_type"], "species", "{page}");
    assert_eq!(first["language"], "en");
    let score = first["score"].as_f64().expect("score");
    assert!(score > 0.0 && score <= 1.0, "{score}");
    assert!(
        first["excerpt"].as_str().is_some_and(|e| e.contains("sun")),
        "{first}"
    );
    assert!(
        first["source_url"]
            .as_str()
            .is_some_and(|u| u.starts_with("/api/v1/species/"))
    );
    let de = json_of(
        app.rest_auth(Some(&u))
            .get("/api/v1/knowledge/search?q=Leitf%C3%A4higkeit%20N%C3%A4hrl%C3%B6sung&language=de")
            .await,
    )
    .await;
    assert_eq!(de["items"][0]["source_type"], "glossary_term", "{de}");
    assert_eq!(de["items"][0]["language"], "de");
    let pests = json_of(
        app.rest_auth(Some(&u))
            .get("/api/v1/knowledge/search?q=honeydew&source=pest")
            .await,
    )
    .await;
    assert_eq!(pests["items"][0]["title"], "Fixture aphid (Fixturia vorax)");
    for (q, field) in [
        ("", "query.q"),
        ("?q=x&language=fr", "query.language"),
        ("?q=x&source=plants", "query.source"),
        ("?q=x&limit=51", "query.limit"),
    ] {
        let res = app
            .rest_auth(Some(&u))
            .get(&format!("/api/v1/knowledge/search{q}"))
            .await;
        let body = assert_error(res, 422, "VALIDATION_ERROR").await;
        assert_eq!(detail_fields(&body), [field]);
    }
    assert_error(
        app.get("/api/v1/knowledge/search?q=tomato").await,
        401,
        "UNAUTHORIZED",
    )
    .await;
}

#[tokio::test]
async fn csv_import_previews_then_confirms_all_rows_or_none() {
    let app = TestApp::full().await;
    let admin = app.platform_admin().await;
    let user = app.user("importer").await;
    seeded(&app).await;
    let (a, u) = (admin.bearer(), user.bearer());
    let w = letters();
    let fam = json!({"name": format!("I{w}aceae")});
    assert_eq!(
        app.rest_auth(Some(&a))
            .post("/api/v1/botanical-families", &fam)
            .await
            .status()
            .as_u16(),
        201
    );
    let csv = format!(
        "scientific_name,family,common_names_en,harvest_months,toxicity,allows_harvest\n\
         Importus {w},I{w}aceae,\"Import plant;Imported\",7;8,\"{{\"\"is_toxic\"\": false}}\",true\n\
         Importus × {w}b,i{w}aceae,,,,\n"
    );
    let body = json!({"kind": "species", "csv": csv});
    assert_error(
        app.rest_auth(Some(&u)).post("/api/v1/imports", &body).await,
        403,
        "FORBIDDEN",
    )
    .await;
    assert_error(
        app.rest_auth(Some(&u)).get("/api/v1/imports").await,
        403,
        "FORBIDDEN",
    )
    .await;

    let res = app.rest_auth(Some(&a)).post("/api/v1/imports", &body).await;
    assert_eq!(res.status().as_u16(), 201);
    let job = json_of(res).await;
    assert_eq!(
        (
            job["status"].as_str(),
            job["valid"].as_bool(),
            job["rows"].as_i64()
        ),
        (Some("previewed"), Some(true), Some(2)),
        "{job}"
    );
    assert_eq!(job["preview"][0]["action"], "create");
    assert_eq!(
        count_named(&app, "species", &format!("importus {w}")).await,
        0,
        "a preview writes nothing"
    );
    let path = format!("/api/v1/imports/{}", job["key"].as_str().expect("key"));
    let res = app
        .rest_auth(Some(&a))
        .post_empty(&format!("{path}/confirm"))
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let done = json_of(res).await;
    assert_eq!(done["status"], "confirmed");
    assert_eq!(
        done["summary"],
        json!({"created": 2, "updated": 0, "unchanged": 0})
    );
    let page = json_of(
        app.rest_auth(Some(&u))
            .get(&format!("/api/v1/species?q=importus%20{w}"))
            .await,
    )
    .await;
    assert_eq!(page["total"], 1, "{page}");
    let sp = page["items"][0].clone();
    assert_eq!(sp["harvest_months"], json!([7, 8]));
    assert_eq!(sp["toxicity"], json!({"is_toxic": false}));
    assert_eq!(sp["common_names_en"], json!(["Import plant", "Imported"]));
    assert_error(
        app.rest_auth(Some(&a))
            .post_empty(&format!("{path}/confirm"))
            .await,
        409,
        "STATE_CONFLICT",
    )
    .await;
    // The same file again: nothing would change.
    let again = json_of(app.rest_auth(Some(&a)).post("/api/v1/imports", &body).await).await;
    assert_eq!(again["preview"][1]["action"], "unchanged", "{again}");

    // One bad row: the preview names it, confirming refuses the whole file.
    let bad = format!(
        "scientific_name,family,harvest_months\nGoodus {w},I{w}aceae,5\nBadus {w},Nosuchaceae,13\n"
    );
    let job = json_of(
        app.rest_auth(Some(&a))
            .post("/api/v1/imports", &json!({"kind": "species", "csv": bad}))
            .await,
    )
    .await;
    assert_eq!(job["valid"], false);
    let rows: Vec<i64> = job["errors"]
        .as_array()
        .expect("errors")
        .iter()
        .filter_map(|e| e["row"].as_i64())
        .collect();
    assert_eq!(rows, [3, 3], "{job}");
    let res = app
        .rest_auth(Some(&a))
        .post_empty(&format!(
            "/api/v1/imports/{}/confirm",
            job["key"].as_str().expect("key")
        ))
        .await;
    let err = assert_error(res, 422, "VALIDATION_ERROR").await;
    assert_eq!(detail_fields(&err), ["csv.row[3]", "csv.row[3]"]);
    assert_eq!(
        count_named(&app, "species", &format!("goodus {w}")).await,
        0,
        "no half import"
    );

    for (body, field) in [
        (
            json!({"kind": "species", "csv": "scientific_name,colour\nA b,red\n"}),
            "body.csv",
        ),
        (json!({"kind": "plants", "csv": "a\n"}), "body.kind"),
        (json!({"kind": "species", "csv": "\"open"}), "body.csv"),
        (json!({"kind": "species"}), "body.csv"),
    ] {
        let res = app.rest_auth(Some(&a)).post("/api/v1/imports", &body).await;
        let err = assert_error(res, 422, "VALIDATION_ERROR").await;
        assert_eq!(detail_fields(&err), [field], "{body}");
    }
    let missing = uuid::Uuid::now_v7();
    assert_error(
        app.rest_auth(Some(&a))
            .get(&format!("/api/v1/imports/{missing}"))
            .await,
        404,
        "ENTITY_NOT_FOUND",
    )
    .await;
}

/// A loopback server that answers like GBIF's `/species/match`: `Ratelimitus …` gets 429,
/// `Brokenus …` 500, `Nothingus …` no match, anything else an exact match in Fixturaceae.
async fn fake_gbif() -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = vec![0u8; 8192];
                let mut read = 0;
                while !buf[..read].windows(4).any(|w| w == b"\r\n\r\n") && read < buf.len() {
                    match socket.read(&mut buf[read..]).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => read += n,
                    }
                }
                let head = String::from_utf8_lossy(&buf[..read]).to_string();
                let target = head.split(' ').nth(1).unwrap_or("").to_owned();
                let name = target
                    .split_once("name=")
                    .map(|(_, rest)| {
                        rest.split('&')
                            .next()
                            .unwrap_or("")
                            .replace('+', " ")
                            .replace("%20", " ")
                    })
                    .unwrap_or_default();
                let (status, extra, body) = if !target.starts_with("/v1/species/match?") {
                    ("404 Not Found", "", "{}".to_owned())
                } else if name.starts_with("Ratelimitus") {
                    (
                        "429 Too Many Requests",
                        "retry-after: 30\r\n",
                        "{}".to_owned(),
                    )
                } else if name.starts_with("Brokenus") {
                    ("500 Internal Server Error", "", "oops".to_owned())
                } else if name.starts_with("Nothingus") {
                    (
                        "200 OK",
                        "",
                        json!({"matchType": "NONE", "confidence": 100}).to_string(),
                    )
                } else {
                    let genus = name.split(' ').next().unwrap_or("").to_owned();
                    let body = json!({"usageKey": 42, "scientificName": format!("{name} L."), "canonicalName": name,
                        "rank": "SPECIES", "status": "ACCEPTED", "confidence": 97, "matchType": "EXACT",
                        "kingdom": "Plantae", "family": "Fixturaceae", "genus": genus});
                    ("200 OK", "", body.to_string())
                };
                let response = format!(
                    "HTTP/1.1 {status}\r\ncontent-type: application/json\r\n{extra}content-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(response.as_bytes()).await;
            });
        }
    });
    format!("http://{addr}/v1")
}

#[tokio::test]
async fn enrichment_sources_answer_through_one_adapter() {
    let upstream = fake_gbif().await;
    let app =
        TestApp::spawn_env(&[("SERVICE_MODE", "full"), ("ENRICHMENT_GBIF_URL", &upstream)]).await;
    let admin = app.platform_admin().await;
    let user = app.user("enricher").await;
    seeded(&app).await;
    let (a, u) = (admin.bearer(), user.bearer());

    assert_error(
        app.rest_auth(Some(&u))
            .get("/api/v1/enrichment/sources")
            .await,
        403,
        "FORBIDDEN",
    )
    .await;
    let sources = json_of(
        app.rest_auth(Some(&a))
            .get("/api/v1/enrichment/sources")
            .await,
    )
    .await;
    assert_eq!(sources[0]["name"], "gbif");
    assert_eq!(sources[0]["base_url"], upstream.as_str());
    assert_error(
        app.rest_auth(Some(&a))
            .get("/api/v1/enrichment/sources/trefle")
            .await,
        404,
        "ADAPTER_NOT_FOUND",
    )
    .await;

    let lookup = |name: &str| json!({"scientific_name": name});
    let res = app
        .rest_auth(Some(&a))
        .post(
            "/api/v1/enrichment/sources/gbif/lookup",
            &lookup("Fixtura tomatoides"),
        )
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let found = json_of(res).await;
    assert_eq!(found["found"], true);
    assert_eq!(found["match"]["external_id"], "42");
    assert_eq!(found["match"]["family"], "Fixturaceae");
    let none = json_of(
        app.rest_auth(Some(&a))
            .post(
                "/api/v1/enrichment/sources/gbif/lookup",
                &lookup("Nothingus at all"),
            )
            .await,
    )
    .await;
    assert_eq!(
        (none["found"].as_bool(), none["match"].clone()),
        (Some(false), Value::Null)
    );
    let res = app
        .rest_auth(Some(&a))
        .post(
            "/api/v1/enrichment/sources/gbif/lookup",
            &lookup("Ratelimitus x"),
        )
        .await;
    let (seconds, error) = crate::support::assert_rate_limited(res).await;
    assert_eq!(seconds, 30, "the source's Retry-After is passed on");
    assert!(error.contains("gbif"), "{error}");
    let res = app
        .rest_auth(Some(&a))
        .post(
            "/api/v1/enrichment/sources/gbif/lookup",
            &lookup("Brokenus x"),
        )
        .await;
    assert_error(res, 502, "EXTERNAL_SOURCE_ERROR").await;
    let res = app
        .rest_auth(Some(&a))
        .post(
            "/api/v1/enrichment/sources/nope/lookup",
            &lookup("Fixtura x"),
        )
        .await;
    assert_error(res, 404, "ADAPTER_NOT_FOUND").await;
    let res = app
        .rest_auth(Some(&a))
        .post("/api/v1/enrichment/sources/gbif/lookup", &json!({}))
        .await;
    assert_error(res, 422, "VALIDATION_ERROR").await;

    // A proposal for a species: where the source differs (the fixture tomato has a genus and
    // family that agree; the mystery plant has no genus recorded).
    let mystery = json_of(
        app.rest_auth(Some(&u))
            .get("/api/v1/species?q=mockia%20obscura")
            .await,
    )
    .await;
    let key = mystery["items"][0]["key"].as_str().expect("key");
    let proposal = json_of(
        app.rest_auth(Some(&a))
            .get(&format!("/api/v1/enrichment/species/{key}/sources/gbif"))
            .await,
    )
    .await;
    let fields: Vec<&str> = proposal["differences"]
        .as_array()
        .expect("list")
        .iter()
        .filter_map(|d| d["field"].as_str())
        .collect();
    assert_eq!(fields, ["genus", "family"], "{proposal}");
    assert_eq!(proposal["differences"][1]["current"], "Mockaceae");
    let res = app
        .rest_auth(Some(&a))
        .get(&format!("/api/v1/enrichment/species/{key}/sources/nope"))
        .await;
    assert_error(res, 404, "ADAPTER_NOT_FOUND").await;
    let res = app
        .rest_auth(Some(&a))
        .get(&format!(
            "/api/v1/enrichment/species/{}/sources/gbif",
            uuid::Uuid::now_v7()
        ))
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
}

#[tokio::test]
async fn an_unreachable_source_is_502() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let url = format!("http://127.0.0.1:{port}/v1");
    let app = TestApp::spawn_env(&[("ENRICHMENT_GBIF_URL", &url)]).await;
    let res = app
        .post_json(
            "/api/v1/enrichment/sources/gbif/lookup",
            &json!({"scientific_name": "Fixtura tomatoides"}),
        )
        .await;
    let body = assert_error(res, 502, "EXTERNAL_SOURCE_ERROR").await;
    assert!(
        body["message"]
            .as_str()
            .is_some_and(|m| m.contains("unreachable")),
        "{body}"
    );
}

/// Every catalogue collection answers the same way: lists for any caller with paging bounds,
/// 401 without a caller, 403 for writes by non-admins, 422 with one detail
/// per missing field for an admin's empty body, 404 for unknown keys.
#[tokio::test]
async fn every_collection_shares_the_same_contract() {
    let app = TestApp::full().await;
    let admin = app.platform_admin().await;
    let user = app.user("every").await;
    let (a, u) = (admin.bearer(), user.bearer());
    for (path, required) in [
        ("/api/v1/botanical-families", vec!["body.name"]),
        (
            "/api/v1/species",
            vec!["body.scientific_name", "body.family_key"],
        ),
        ("/api/v1/cultivars", vec!["body.species_key", "body.name"]),
        ("/api/v1/ipm/pests", vec!["body.scientific_name"]),
        ("/api/v1/ipm/diseases", vec!["body.scientific_name"]),
        (
            "/api/v1/ipm/treatments",
            vec![
                "body.name",
                "body.treatment_type",
                "body.safety_interval_days",
            ],
        ),
        (
            "/api/v1/phases",
            vec![
                "body.name",
                "body.display_name_en",
                "body.typical_duration_days",
            ],
        ),
        (
            "/api/v1/phase-sequences",
            vec![
                "body.name",
                "body.display_name_en",
                "body.cycle_type",
                "body.is_repeating",
                "body.entries",
            ],
        ),
        (
            "/api/v1/starter-kits",
            vec!["body.slug", "body.name_en", "body.difficulty"],
        ),
        (
            "/api/v1/glossary",
            vec!["body.slug", "body.label_en", "body.category"],
        ),
        (
            "/api/v1/overwintering",
            vec!["body.species_key", "body.hardiness_rating"],
        ),
        (
            "/api/v1/companion-planting",
            vec!["body.species_a_key", "body.species_b_key", "body.relation"],
        ),
        (
            "/api/v1/crop-rotation",
            vec![
                "body.from_family_key",
                "body.to_family_key",
                "body.relation",
            ],
        ),
    ] {
        assert_error(app.get(path).await, 401, "UNAUTHORIZED").await;
        let page = json_of(
            app.rest_auth(Some(&u))
                .get(&format!("{path}?skip=0&limit=1"))
                .await,
        )
        .await;
        assert_eq!(page["limit"], 1, "{path}: {page}");
        assert!(page["items"].is_array() && page["total"].is_i64(), "{path}");
        let res = app
            .rest_auth(Some(&u))
            .get(&format!("{path}?limit=1000"))
            .await;
        assert_error(res, 422, "VALIDATION_ERROR").await;
        assert_error(
            app.rest_auth(Some(&u)).post(path, &json!({})).await,
            403,
            "FORBIDDEN",
        )
        .await;
        let body = assert_error(
            app.rest_auth(Some(&a))
                .post(path, &json!({"nope": 1}))
                .await,
            422,
            "VALIDATION_ERROR",
        )
        .await;
        let mut want: Vec<String> = required.iter().map(|f| (*f).to_owned()).collect();
        want.push("body.nope".to_owned());
        assert_eq!(detail_fields(&body), want, "{path}");
        let missing = format!("{path}/{}", uuid::Uuid::now_v7());
        assert_error(
            app.rest_auth(Some(&u)).get(&missing).await,
            404,
            "ENTITY_NOT_FOUND",
        )
        .await;
        assert_error(
            app.rest_auth(Some(&u)).patch(&missing, &json!({})).await,
            403,
            "FORBIDDEN",
        )
        .await;
        assert_error(
            app.rest_auth(Some(&a)).patch(&missing, &json!({})).await,
            404,
            "ENTITY_NOT_FOUND",
        )
        .await;
        assert_error(
            app.rest_auth(Some(&a)).delete(&missing).await,
            404,
            "ENTITY_NOT_FOUND",
        )
        .await;
    }
}
