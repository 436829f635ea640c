//! The "Done when" of Garden I, tried as a new user would through REST only: register, open the
//! personal garden, build a balcony with two boxes and six slots, look basil and tomatoes up in
//! the catalogue, plant them, move one, take one through its phases, archive one, and see every
//! rule refuse what it must without writing anything.

use reqwest::Method;
use serde_json::{Value, json};

use crate::support::{TestApp, TestUser, assert_error, detail_fields};

/// A caller of the REST API with a bearer token.
struct Client<'a> {
    app: &'a TestApp,
    auth: String,
}

impl Client<'_> {
    async fn send(&self, method: Method, path: &str, body: Option<&Value>) -> reqwest::Response {
        let url = if path.starts_with("/api/") {
            path.to_owned()
        } else {
            format!("/api/v1{path}")
        };
        self.app.call(method, &url, Some(&self.auth), body).await
    }

    /// Sends and asserts the status; returns the JSON body.
    async fn ok(&self, method: Method, path: &str, body: Option<Value>, status: u16) -> Value {
        let res = self.send(method.clone(), path, body.as_ref()).await;
        let got = res.status().as_u16();
        let text = res.text().await.expect("body");
        assert_eq!(got, status, "{method} {path} {body:?}: {text}");
        if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).expect("json")
        }
    }

    async fn get(&self, path: &str) -> Value {
        self.ok(Method::GET, path, None, 200).await
    }

    async fn post(&self, path: &str, body: Value) -> reqwest::Response {
        self.send(Method::POST, path, Some(&body)).await
    }
}

/// A catalogue record found by `q` with exactly this name, else made by the platform admin (the
/// catalogue's curator; the test catalogue holds only fixture species). Returns its key.
async fn ensure_record(
    admin: &Client<'_>,
    path: &str,
    name_field: &str,
    name: &str,
    body: Value,
) -> String {
    let q = name.replace(' ', "%20");
    let page = admin.get(&format!("{path}?q={q}&limit=200")).await;
    if let Some(found) = page["items"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r[name_field] == name)
    {
        return found["key"].as_str().expect("key").to_owned();
    }
    let res = admin.post(path, body).await;
    let status = res.status().as_u16();
    let v: Value = res.json().await.expect("json");
    if status == 409 {
        // Made by a parallel run in between: look again.
        let page = admin.get(&format!("{path}?q={q}&limit=200")).await;
        return page["items"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|r| r[name_field] == name)
            .and_then(|r| r["key"].as_str())
            .expect("record after conflict")
            .to_owned();
    }
    assert_eq!(status, 201, "create {path} {name}: {v}");
    v["key"].as_str().expect("key").to_owned()
}

/// A companion pair, made unless the catalogue already has it.
async fn ensure_pair(
    admin: &Client<'_>,
    (a, b): (&str, &str),
    relation: &str,
    score: Option<f64>,
    reason: &str,
) {
    let page = admin
        .get(&format!(
            "/companion-planting?species={a}&relation={relation}&limit=500"
        ))
        .await;
    let has = page["items"].as_array().into_iter().flatten().any(|p| {
        (p["species_a_key"] == a && p["species_b_key"] == b)
            || (p["species_a_key"] == b && p["species_b_key"] == a)
    });
    if has {
        return;
    }
    let mut body = json!({"species_a_key": a, "species_b_key": b, "relation": relation,
                          "reason": reason});
    if relation == "incompatible" {
        body["evidence"] = json!("established");
        body["source"] = json!("shared pathogen: late blight");
    }
    if let Some(s) = score {
        body["score"] = json!(s);
    }
    let res = admin.post("/companion-planting", body).await;
    let status = res.status().as_u16();
    assert!(status == 201 || status == 409, "pair {a} {b}: {status}");
}

/// The catalogue facts the walkthrough needs: basil, tomato and potato in their real families,
/// basil a good neighbour of the tomato, potato a bad one (an established conflict: both carry
/// late blight, so it needs acknowledging).
async fn catalogue(app: &TestApp) {
    // The phase sequences and phases come with the (fixture) seed.
    crate::catalog::seeded(app).await;
    let admin_user = app.platform_admin().await;
    let admin = Client {
        app,
        auth: admin_user.bearer(),
    };
    let mut keys = Vec::new();
    for (family, species, common, cycle) in [
        ("Lamiaceae", "Ocimum basilicum", "Basil", "annual"),
        ("Solanaceae", "Solanum lycopersicum", "Tomato", "annual"),
        ("Solanaceae", "Solanum tuberosum", "Potato", "annual"),
    ] {
        let family_key = ensure_record(
            &admin,
            "/botanical-families",
            "name",
            family,
            json!({"name": family}),
        )
        .await;
        keys.push(
            ensure_record(
                &admin,
                "/species",
                "scientific_name",
                species,
                json!({"scientific_name": species, "family_key": family_key,
                       "common_names_en": [common], "cycle_type": cycle}),
            )
            .await,
        );
    }
    ensure_pair(
        &admin,
        (&keys[1], &keys[0]),
        "compatible",
        Some(0.9),
        "Basil is said to repel whiteflies and likes the same warm, sunny place.",
    )
    .await;
    ensure_pair(
        &admin,
        (&keys[2], &keys[1]),
        "incompatible",
        None,
        "Potato and tomato share late blight (Phytophthora infestans).",
    )
    .await;
}

/// The species a user finds by typing a word into the catalogue search.
async fn look_up(user: &Client<'_>, word: &str, scientific_name: &str) -> String {
    let page = user.get(&format!("/species?q={word}")).await;
    page["items"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|s| s["scientific_name"] == scientific_name)
        .and_then(|s| s["key"].as_str())
        .unwrap_or_else(|| panic!("{word} finds {scientific_name}: {page}"))
        .to_owned()
}

fn today() -> time::Date {
    time::OffsetDateTime::now_utc().date()
}

#[tokio::test]
async fn walkthrough_a_new_grower_builds_a_balcony_and_plants_basil_and_tomatoes() {
    let app = TestApp::full().await;
    catalogue(&app).await;

    // A new user registers and finds the personal garden (role admin).
    let new_user: TestUser = app.user("grower").await;
    let me = Client {
        app: &app,
        auth: new_user.bearer(),
    };
    let gardens = me.get("/tenants/").await;
    let garden = gardens
        .as_array()
        .or_else(|| gardens["items"].as_array())
        .and_then(|a| a.first())
        .cloned()
        .unwrap_or_else(|| panic!("a personal garden: {gardens}"));
    assert_eq!(garden["role"], "admin", "{garden}");
    let slug = garden["slug"].as_str().expect("slug").to_owned();
    let t = format!("/t/{slug}");

    // A balcony, two boxes, three slots each in a row (neighbours: A1-A2, A2-A3).
    let site = me
        .ok(
            Method::POST,
            &format!("{t}/sites/"),
            Some(json!({"name": "Balcony", "kind": "balcony"})),
            201,
        )
        .await;
    let site_key = site["key"].as_str().expect("site key").to_owned();
    let mut boxes = Vec::new();
    let mut slots: Vec<Vec<String>> = Vec::new();
    for b in 1..=2 {
        let loc = me
            .ok(
                Method::POST,
                &format!("{t}/locations/"),
                Some(json!({"site_key": site_key, "name": format!("Box {b}"),
                            "kind": "container"})),
                201,
            )
            .await;
        let loc_key = loc["key"].as_str().expect("location key").to_owned();
        let mut row = Vec::new();
        for i in 1..=3 {
            let slot = me
                .ok(
                    Method::POST,
                    &format!("{t}/slots/"),
                    Some(
                        json!({"location_key": loc_key, "code": format!("BOX{b}_A{i}"),
                                "capacity": 1, "position_x": i, "position_y": 1}),
                    ),
                    201,
                )
                .await;
            row.push(slot["key"].as_str().expect("slot key").to_owned());
        }
        me.ok(
            Method::PUT,
            &format!("{t}/slots/{}/neighbours", row[1]),
            Some(json!({"neighbour_keys": [row[0], row[2]]})),
            200,
        )
        .await;
        boxes.push(loc_key);
        slots.push(row);
    }
    let box1 = me.get(&format!("{t}/locations/{}", boxes[0])).await;
    assert_eq!(box1["site_key"], site_key.as_str());
    assert_eq!(box1["slots"].as_array().map(Vec::len), Some(3));
    let a1 = me.get(&format!("{t}/slots/{}", slots[0][0])).await;
    assert_eq!(a1["neighbour_keys"], json!([slots[0][1]]), "symmetric");

    // The plants come from the catalogue: the user searches by the common name.
    let basil = look_up(&me, "basil", "Ocimum basilicum").await;
    let tomato = look_up(&me, "tomato", "Solanum lycopersicum").await;
    let potato = look_up(&me, "potato", "Solanum tuberosum").await;
    let sequence = me.get(&format!("/species/{tomato}/phase-sequence")).await;
    let tomato_phases: Vec<String> = sequence["sequence"]["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| e["phase_key"].as_str().expect("phase key").to_owned())
        .collect();
    assert!(tomato_phases.len() >= 3, "{sequence}");

    let plants = format!("{t}/plant-instances/");
    let plant = |species: &str, slot: &str, name: &str| {
        json!({"species_key": species, "slot_key": slot, "name": name,
               "planted_on": "2026-05-15"})
    };
    let count_all = || async {
        let page = me.get(&format!("{plants}?archived=any")).await;
        page["total"].as_i64().expect("total")
    };
    let mut planted = Vec::new();
    for (species, slot, name) in [
        (&tomato, &slots[0][0], "Tomato 1"),
        (&basil, &slots[0][1], "Basil 1"),
        (&tomato, &slots[1][0], "Tomato 2"),
        (&basil, &slots[1][2], "Basil 2"),
    ] {
        let p = me
            .ok(Method::POST, &plants, Some(plant(species, slot, name)), 201)
            .await;
        assert_eq!(p["name"], name);
        assert_eq!(p["site_key"], site_key.as_str());
        assert_eq!(p["phase_state"], "in_phase");
        planted.push(p["key"].as_str().expect("plant key").to_owned());
    }
    let (tomato1, _basil1, tomato2, basil2) = (&planted[0], &planted[1], &planted[2], &planted[3]);
    assert_eq!(count_all().await, 4);

    // Refusals, none of which writes a plant.
    // A full slot (capacity 1, the tomato stands there).
    let res = me
        .post(&plants, plant(&basil, &slots[0][0], "Crowded"))
        .await;
    let body = assert_error(res, 422, "VALIDATION_ERROR").await;
    assert_eq!(detail_fields(&body), ["body.slot_key"]);
    // A potato next to a tomato (BOX2_A2 neighbours Tomato 2 in BOX2_A1).
    let res = me
        .post(&plants, plant(&potato, &slots[1][1], "Potato"))
        .await;
    let body = assert_error(res, 422, "INCOMPATIBLE_COMPANION").await;
    assert!(
        body["message"].to_string().contains(planted[2].as_str()),
        "names the neighbour plant: {body}"
    );
    // Planted tomorrow.
    let tomorrow = today().next_day().expect("tomorrow").to_string();
    let res = me
        .post(
            &plants,
            json!({"species_key": basil, "slot_key": slots[0][2], "planted_on": tomorrow}),
        )
        .await;
    let body = assert_error(res, 422, "VALIDATION_ERROR").await;
    assert_eq!(detail_fields(&body), ["body.planted_on"]);
    // A species that is not in the catalogue.
    let res = me
        .post(
            &plants,
            json!({"species_key": uuid::Uuid::new_v4(), "slot_key": slots[0][2]}),
        )
        .await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
    assert_eq!(count_all().await, 4, "no refusal wrote a plant");
    let slot = me.get(&format!("{t}/slots/{}", slots[0][2])).await;
    assert_eq!(slot["live_plants"], 0);

    // Move Basil 2 from box 2 to the free BOX1_A3; into a full slot it is refused.
    let res = me
        .post(
            &format!("{plants}{basil2}/location"),
            json!({"slot_key": slots[0][0]}),
        )
        .await;
    assert_error(res, 422, "VALIDATION_ERROR").await;
    let moved = me
        .ok(
            Method::POST,
            &format!("{plants}{basil2}/location"),
            Some(json!({"slot_key": slots[0][2]})),
            200,
        )
        .await;
    assert_eq!(moved["location_key"], boxes[0].as_str());
    assert_eq!(moved["slot_code"], "BOX1_A3");
    let box1 = me.get(&format!("{t}/locations/{}", boxes[0])).await;
    assert_eq!(box1["live_plants"], 3);
    let box2 = me.get(&format!("{t}/locations/{}", boxes[1])).await;
    assert_eq!(box2["live_plants"], 1);
    let at_box1 = me.get(&format!("{plants}?location={}", boxes[0])).await;
    assert_eq!(at_box1["total"], 3);

    // Tomato 1 through its phases: forward, forward, then back is refused.
    let status = me.get(&format!("{plants}{tomato1}/phase")).await;
    assert_eq!(status["phase_state"], "in_phase");
    assert_eq!(status["phase_key"], tomato_phases[0].as_str());
    assert_eq!(
        status["allowed_targets"],
        json!(tomato_phases[1..]),
        "{status}"
    );
    for target in &tomato_phases[1..3] {
        let p = me
            .ok(
                Method::POST,
                &format!("{plants}{tomato1}/phase-transitions"),
                Some(json!({"target_phase_key": target, "reason": "walkthrough"})),
                200,
            )
            .await;
        assert_eq!(p["current_phase_key"], target.as_str(), "{p}");
    }
    let history = me.get(&format!("{plants}{tomato1}/phase-history")).await;
    assert_eq!(history["total"], 3, "{history}");
    let res = me
        .post(
            &format!("{plants}{tomato1}/phase-transitions"),
            json!({"target_phase_key": tomato_phases[0]}),
        )
        .await;
    let body = assert_error(res, 422, "PHASE_TRANSITION_INVALID").await;
    assert_eq!(detail_fields(&body), ["body.target_phase_key"]);
    let now = me.get(&format!("{plants}{tomato1}")).await;
    assert_eq!(now["current_phase_key"], tomato_phases[2].as_str());
    let history = me.get(&format!("{plants}{tomato1}/phase-history")).await;
    assert_eq!(
        history["total"], 3,
        "the refused transition wrote no history"
    );
    let items = history["items"].as_array().expect("items");
    assert!(
        items
            .iter()
            .all(|h| h["actor"] == format!("user:{}", new_user.key)),
        "{history}"
    );

    // Archive Tomato 2: it leaves the default listing, stays readable.
    let archived = me
        .ok(
            Method::POST,
            &format!("{plants}{tomato2}/archive"),
            Some(json!({"reason": "died"})),
            200,
        )
        .await;
    assert_eq!(archived["archived"], true);
    assert_eq!(archived["archive_reason"], "died");
    assert_eq!(archived["removed_on"], today().to_string());
    let listed = me.get(&plants).await;
    assert_eq!(listed["total"], 3);
    assert!(
        listed["items"]
            .as_array()
            .expect("items")
            .iter()
            .all(|p| p["key"] != tomato2.as_str())
    );
    let got = me.get(&format!("{plants}{tomato2}")).await;
    assert_eq!(got["archived"], true);
    let gone = me.get(&format!("{plants}?archived=true")).await;
    assert_eq!(gone["total"], 1);
    let res = me
        .post(
            &format!("{plants}{tomato2}/archive"),
            json!({"reason": "died"}),
        )
        .await;
    assert_error(res, 409, "STATE_CONFLICT").await;

    // Crop rotation does not hold a container back (its substrate is renewed): another
    // nightshade may follow the archived tomato in the box's BOX2_A1. Beds keep the window
    // (plants::plants_rotation_and_companions_advise).
    me.ok(
        Method::POST,
        &plants,
        Some(plant(&tomato, &slots[1][0], "Tomato 3")),
        201,
    )
    .await;
    assert_eq!(
        count_all().await,
        5,
        "only the accepted plants were written"
    );

    // Another user sees none of it.
    let stranger = app.user("stranger").await;
    let other = Client {
        app: &app,
        auth: stranger.bearer(),
    };
    let res = other.send(Method::GET, &plants, None).await;
    assert_error(res, 404, "ENTITY_NOT_FOUND").await;
}
