//! The tanks and fertiliser pages (`/app/g/{slug}/nutrition/tanks…`, `…/fertilizers…`) over
//! real HTTP against PostgreSQL and Redis, as a browser without JavaScript uses them: a tank
//! created through the form, a fill with its water test and a maintenance recorded through the
//! tank's page are exactly what the REST API then returns, and the maintenance due dates are the
//! service's (overdue marked); a refused form (a capacity of 0, an overflowing fill, a date in
//! the future, an N-P-K over 100 %) says why and writes nothing; a viewer's post is 403 and
//! writes nothing; another garden's tank or product is a 404. The fertiliser list shows the
//! catalogue's products beside the garden's own, one added through the form.

use kultiva::auth::Role;
use kultiva::garden::fertilizers::model::Owner;
use kultiva::tenancy::TenantRecord;
use kultiva::values::page::PageRequest;
use serde_json::{Value, json};

use crate::catalog::letters;
use crate::support::{PASSWORD, TestApp, tenant_path};
use crate::web::Browser;

/// A `YYYY-MM-DD` day as the English page writes it (`11 Dec 2026`).
fn en_day(iso: &str) -> String {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let parts: Vec<u32> = iso.split('-').map(|p| p.parse().expect("day")).collect();
    format!(
        "{} {} {}",
        parts[2],
        MONTHS[(parts[1] - 1) as usize],
        parts[0]
    )
}

async fn tank_count(app: &TestApp, t: &TenantRecord) -> i64 {
    kultiva::garden::tanks::service::list_tanks(
        &app.state,
        t,
        PageRequest {
            skip: 0,
            limit: 100,
        },
    )
    .await
    .expect("tanks")
    .total
}

fn due<'a>(tank: &'a Value, kind: &str) -> &'a Value {
    tank["maintenance"]
        .as_array()
        .expect("maintenance")
        .iter()
        .find(|m| m["maintenance_type"] == kind)
        .unwrap_or_else(|| panic!("{kind} in {tank}"))
}

#[tokio::test]
async fn a_tank_created_filled_and_maintained_through_its_pages_is_what_the_api_returns() {
    let app = TestApp::full().await;
    let t = app.tenant("wtank").await;
    let grower = app.member(&t, Role::Grower).await;
    let viewer = app.member(&t, Role::Viewer).await;
    let other = app.tenant("wtankb").await;
    let outsider = app.member(&other, Role::Admin).await;
    let slug = t.slug.as_str().to_owned();
    let base = format!("/app/g/{slug}/nutrition/tanks");
    let theirs = app
        .rest_as(&outsider)
        .create(
            &tenant_path(&other, "tanks"),
            &json!({"name": "Their tank", "kind": "nutrient", "volume_liters": 50}),
        )
        .await;
    let theirs = theirs["key"].as_str().expect("key").to_owned();

    let mut b = Browser::new(&app, "en");
    b.sign_in(&grower.email, PASSWORD).await;
    let page = b.get(&base).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.has("<h1>Tanks · "), "{}", page.body);
    assert!(page.has("The garden has no tank yet."));
    assert!(page.has(r#"<label for="tank-volume_liters">"#));
    assert!(!page.has("Their tank"), "nothing of garden B");
    let overview = b.get(&format!("/app/g/{slug}/nutrition")).await;
    assert!(
        overview.has(&format!(r#"href="{base}""#)),
        "{}",
        overview.body
    );
    assert!(overview.has(&format!(r#"href="/app/g/{slug}/nutrition/fertilizers""#)));
    let csrf = page.csrf();

    // A capacity of 0: the reader's refusal next to the form, what was typed stays, nothing
    // written.
    let refused = b
        .post(
            &base,
            &[
                ("_csrf", &csrf),
                ("name", "Web tank"),
                ("kind", "nutrient"),
                ("volume_liters", "0"),
            ],
        )
        .await;
    assert_eq!(refused.status, 422, "{}", refused.body);
    assert!(refused.has(r#"role="alert""#));
    assert!(
        refused.has("Capacity (litres): not a valid value."),
        "{}",
        refused.body
    );
    assert!(refused.has(r#"value="Web tank""#), "typed values stay");
    assert_eq!(tank_count(&app, &t).await, 0);

    // A viewer sees the list without the form; their post is 403 and writes nothing.
    let mut v = Browser::new(&app, "de");
    v.sign_in(&viewer.email, PASSWORD).await;
    let vpage = v.get(&base).await;
    assert_eq!(vpage.status, 200, "{}", vpage.body);
    assert!(vpage.has("Die Tanks des Gartens"), "{}", vpage.body);
    assert!(!vpage.has(r#"id="tank-name""#), "no form for a viewer");
    let vcsrf = vpage.csrf();
    let denied = v
        .post(
            &base,
            &[
                ("_csrf", &vcsrf),
                ("name", "Viewer tank"),
                ("kind", "nutrient"),
                ("volume_liters", "10"),
            ],
        )
        .await;
    assert_eq!(denied.status, 403, "{}", denied.body);
    assert_eq!(tank_count(&app, &t).await, 0);

    // Created: the tank's page, one tank through REST.
    let created = b
        .post(
            &base,
            &[
                ("_csrf", &csrf),
                ("name", "Web tank"),
                ("kind", "nutrient"),
                ("volume_liters", "100"),
            ],
        )
        .await;
    assert_eq!(created.status, 303, "{}", created.body);
    let to = created.location().expect("location").to_owned();
    assert!(
        to.starts_with(&format!("{base}/")) && to.ends_with("?done=created"),
        "{to}"
    );
    let tank_path = to.trim_end_matches("?done=created").to_owned();
    let key = tank_path.rsplit('/').next().expect("key").to_owned();
    assert_eq!(tank_count(&app, &t).await, 1);
    let api_tank = app
        .rest_as(&viewer)
        .get_ok(&tenant_path(&t, &format!("tanks/{key}")))
        .await;
    assert_eq!(api_tank["name"], "Web tank");
    assert_eq!(api_tank["volume_liters"], 100.0);
    let tank_page = b.get(&to).await;
    assert_eq!(tank_page.status, 200, "{}", tank_page.body);
    assert!(tank_page.has("Tank created."));
    assert!(tank_page.has("not filled yet"));
    // The due dates are the service's: a nutrient tank's water change a week after set-up.
    let water = due(&api_tank, "water_change");
    let line = format!(
        "Water change: {}",
        en_day(water["next_due_on"].as_str().expect("due"))
    );
    assert!(tank_page.has(&line), "{line} in {}", tank_page.body);

    // A fill with its water test.
    let fills = format!("{tank_path}/fills");
    let filled = b
        .post(
            &fills,
            &[
                ("_csrf", &csrf),
                ("fill_type", "full_change"),
                ("volume_liters", "80"),
                ("ec_ms", "1.8"),
                ("ph", "6"),
                ("water_source", "osmose"),
                ("water_temp_c", "20"),
            ],
        )
        .await;
    assert_eq!(filled.status, 303, "{}", filled.body);
    assert_eq!(
        filled.location(),
        Some(format!("{tank_path}?done=filled").as_str())
    );
    let shown = b.get(&format!("{tank_path}?done=filled")).await;
    assert!(shown.has("Fill recorded."));
    assert!(
        shown.has("80 of 100 L (80 %) · EC 1.8 mS/cm · pH 6"),
        "{}",
        shown.body
    );
    assert!(shown.has("Reverse osmosis · 20 °C"), "{}", shown.body);
    let api_fills = app
        .rest_as(&viewer)
        .get_ok(&tenant_path(&t, &format!("tanks/{key}/fills")))
        .await;
    assert_eq!(api_fills["total"], 1, "{api_fills}");
    let f = &api_fills["items"][0];
    assert_eq!(f["fill_type"], "full_change");
    assert_eq!(f["ec_ms"], 1.8);
    assert_eq!(f["water_source"], "osmose");
    assert!(f["actor"].as_str().expect("actor").starts_with("user:"));

    // An overflowing top-up: the service's refusal on the form, nothing written.
    let overflow = b
        .post(
            &fills,
            &[
                ("_csrf", &csrf),
                ("fill_type", "top_up"),
                ("volume_liters", "30"),
            ],
        )
        .await;
    assert_eq!(overflow.status, 422, "{}", overflow.body);
    assert!(
        overflow.has("the tank holds at most 100 litres"),
        "{}",
        overflow.body
    );
    assert!(overflow.has(r#"value="30""#));
    // A viewer's fill: 403, nothing written.
    let vdenied = v
        .post(
            &fills,
            &[
                ("_csrf", &vcsrf),
                ("fill_type", "top_up"),
                ("volume_liters", "5"),
            ],
        )
        .await;
    assert_eq!(vdenied.status, 403);
    let api_tank = app
        .rest_as(&viewer)
        .get_ok(&tenant_path(&t, &format!("tanks/{key}")))
        .await;
    assert_eq!(api_tank["state"]["current_volume_liters"], 80.0);
    assert_eq!(
        app.rest_as(&viewer)
            .get_ok(&tenant_path(&t, &format!("tanks/{key}/fills")))
            .await["total"],
        1
    );

    // A cleaning 20 days ago: a nutrient tank's is due every 14 days, so it is overdue.
    let maintenance = format!("{tank_path}/maintenance");
    let today = time::OffsetDateTime::now_utc().date();
    let past = (today - time::Duration::days(20)).to_string();
    let logged = b
        .post(
            &maintenance,
            &[
                ("_csrf", &csrf),
                ("maintenance_type", "cleaning"),
                ("performed_on", &past),
                ("notes", "scrubbed"),
            ],
        )
        .await;
    assert_eq!(logged.status, 303, "{}", logged.body);
    let api_tank = app
        .rest_as(&viewer)
        .get_ok(&tenant_path(&t, &format!("tanks/{key}")))
        .await;
    assert_eq!(
        due(&api_tank, "cleaning")["status"],
        "overdue",
        "{api_tank}"
    );
    let shown = b.get(&format!("{tank_path}?done=maintained")).await;
    assert!(shown.has("Maintenance logged."));
    let line = format!(
        r#"Cleaning: {} <span class="badge overdue">overdue</span>"#,
        en_day(
            due(&api_tank, "cleaning")["next_due_on"]
                .as_str()
                .expect("due")
        )
    );
    assert!(shown.has(&line), "{line} in {}", shown.body);
    assert!(shown.has("scrubbed"));
    let list = b.get(&base).await;
    assert!(list.has(&line), "overdue on the list too: {}", list.body);
    // A day in the future: refused, nothing written.
    let future = (today + time::Duration::days(5)).to_string();
    let refused = b
        .post(
            &maintenance,
            &[
                ("_csrf", &csrf),
                ("maintenance_type", "cleaning"),
                ("performed_on", &future),
            ],
        )
        .await;
    assert_eq!(refused.status, 422, "{}", refused.body);
    assert!(refused.has("must not be in the future"), "{}", refused.body);
    let log = app
        .rest_as(&viewer)
        .get_ok(&tenant_path(&t, &format!("tanks/{key}/maintenance")))
        .await;
    assert_eq!(log["total"], 1, "{log}");
    assert_eq!(log["items"][0]["maintenance_type"], "cleaning");

    // German labels on the tank's page.
    let de = v.get(&tank_path).await;
    assert_eq!(de.status, 200, "{}", de.body);
    for label in [
        "Fällige Wartung",
        "Reinigung",
        "überfällig",
        "Komplettwechsel",
        "Osmosewasser",
    ] {
        assert!(de.has(label), "{label} in {}", de.body);
    }

    // Garden B's tank is unknown in garden A, and garden A's in garden B: 404, nothing written.
    for path in [format!("{base}/{theirs}"), format!("{base}/not-a-key")] {
        let page = b.get(&path).await;
        assert_eq!(page.status, 404, "{path}");
        assert!(!page.has("Their tank"));
    }
    let foreign = b
        .post(
            &format!("{base}/{theirs}/fills"),
            &[
                ("_csrf", &csrf),
                ("fill_type", "top_up"),
                ("volume_liters", "5"),
            ],
        )
        .await;
    assert_eq!(foreign.status, 404);
    let mut out = Browser::new(&app, "en");
    out.sign_in(&outsider.email, PASSWORD).await;
    for path in [
        tank_path.clone(),
        format!("/app/g/{}/nutrition/tanks/{key}", other.slug),
    ] {
        let page = out.get(&path).await;
        assert_eq!(page.status, 404, "{path}");
        assert!(!page.has("Web tank"));
    }
    let their_fills = app
        .rest_as(&outsider)
        .get_ok(&tenant_path(&other, &format!("tanks/{theirs}/fills")))
        .await;
    assert_eq!(their_fills["total"], 0);
}

async fn own_products(app: &TestApp, t: &TenantRecord) -> Vec<String> {
    kultiva::garden::fertilizers::service::list(
        &app.state,
        t,
        &kultiva::garden::fertilizers::service::Query {
            owner: Some(Owner::Garden),
            ..Default::default()
        },
        PageRequest {
            skip: 0,
            limit: 100,
        },
    )
    .await
    .expect("fertilizers")
    .items
    .iter()
    .map(|f| f.name().to_owned())
    .collect()
}

#[tokio::test]
async fn the_fertiliser_list_shows_the_catalogue_and_a_product_added_through_the_form() {
    let app = TestApp::full().await;
    let t = app.tenant("wfert").await;
    let grower = app.member(&t, Role::Grower).await;
    let viewer = app.member(&t, Role::Viewer).await;
    let other = app.tenant("wfertb").await;
    let outsider = app.member(&other, Role::Admin).await;
    let slug = t.slug.as_str().to_owned();
    let base = format!("/app/g/{slug}/nutrition/fertilizers");
    let tag = letters();
    let catalogue_name = format!("Web catalogue {tag}");
    let global = crate::fertilizers::global_fertilizer(
        &app,
        json!({"name": catalogue_name, "brand": "Catalogue maker"}),
    )
    .await;

    let mut b = Browser::new(&app, "en");
    b.sign_in(&grower.email, PASSWORD).await;
    let page = b.get(&format!("{base}?q={tag}")).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.has("<h1>Fertilisers · "), "{}", page.body);
    assert!(
        page.has(&format!(r#"href="{base}/{global}""#)),
        "{}",
        page.body
    );
    assert!(page.has(&catalogue_name));
    assert!(page.has("Catalogue maker"));
    assert!(
        page.has("Base · liquid · NPK 3-1-4 · Mixing priority 30"),
        "{}",
        page.body
    );
    assert!(page.has("Label source: test label"));
    assert!(page.has("The garden has no fertiliser of its own yet."));
    assert!(page.has(r#"<label for="fert-npk_n">"#));
    let csrf = page.csrf();
    let product = b.get(&format!("{base}/{global}")).await;
    assert_eq!(product.status, 200, "{}", product.body);
    assert!(product.has("Catalogue (read-only)"));

    let form = [
        ("_csrf", csrf.as_str()),
        ("name", "Web own grow"),
        ("brand", "Home brew"),
        ("fertilizer_type", "base"),
        ("form", "liquid"),
        ("npk_n", "4"),
        ("npk_p", "2"),
        ("npk_k", "5"),
        ("ec_contribution_per_ml", "0,25"),
        ("recommended_dose_ml_per_liter", "2"),
        ("max_dose_ml_per_liter", "6"),
        ("mixing_priority", "35"),
    ];
    // N + P + K over 100 %: the catalogue's rule, said on the form, nothing written.
    let mut too_rich = form.to_vec();
    too_rich[5] = ("npk_n", "99");
    let refused = b.post(&base, &too_rich).await;
    assert_eq!(refused.status, 422, "{}", refused.body);
    assert!(refused.has(r#"role="alert""#));
    assert!(refused.has("must not exceed 100"), "{}", refused.body);
    assert!(refused.has(r#"value="99""#), "typed values stay");
    // Without a priority: missing.
    let mut no_priority = form.to_vec();
    no_priority[11] = ("mixing_priority", "");
    let refused = b.post(&base, &no_priority).await;
    assert_eq!(refused.status, 422, "{}", refused.body);
    assert!(
        refused.has("Mixing priority: this field is required."),
        "{}",
        refused.body
    );
    assert!(own_products(&app, &t).await.is_empty());

    // A viewer: no form, and their post is 403 with nothing written.
    let mut v = Browser::new(&app, "de");
    v.sign_in(&viewer.email, PASSWORD).await;
    let vpage = v.get(&base).await;
    assert_eq!(vpage.status, 200, "{}", vpage.body);
    assert!(vpage.has("<h1>Dünger · "), "{}", vpage.body);
    assert!(vpage.has("Eigene Dünger des Gartens"));
    assert!(vpage.has("Dünger aus dem Katalog"));
    assert!(!vpage.has(r#"id="fert-name""#), "no form for a viewer");
    let vcsrf = vpage.csrf();
    let mut vform = form.to_vec();
    vform[0] = ("_csrf", vcsrf.as_str());
    let denied = v.post(&base, &vform).await;
    assert_eq!(denied.status, 403, "{}", denied.body);
    assert!(own_products(&app, &t).await.is_empty());

    // Added: the product's page, one product of the garden's own, listed beside the catalogue.
    let added = b.post(&base, &form).await;
    assert_eq!(added.status, 303, "{}", added.body);
    let to = added.location().expect("location").to_owned();
    assert!(to.starts_with(&format!("{base}/tenant:")), "{to}");
    assert!(to.ends_with("?done=added"), "{to}");
    assert_eq!(
        own_products(&app, &t).await,
        vec!["Web own grow".to_owned()]
    );
    let product = b.get(&to).await;
    assert_eq!(product.status, 200, "{}", product.body);
    assert!(product.has("Fertiliser added."));
    assert!(product.has("4-2-5"));
    assert!(product.has("0.25 mS/cm"), "{}", product.body);
    assert!(
        product.has("entered by the garden"),
        "the service's default label source"
    );
    let own_key = to
        .trim_end_matches("?done=added")
        .rsplit('/')
        .next()
        .expect("key")
        .to_owned();
    let api = app
        .rest_as(&viewer)
        .get_ok(&tenant_path(&t, &format!("fertilizers/{own_key}")))
        .await;
    assert_eq!(api["name"], "Web own grow");
    assert_eq!(api["mixing_priority"], 35);
    let list = b.get(&base).await;
    assert!(
        list.has(&format!(r#"href="{base}/{own_key}""#)),
        "{}",
        list.body
    );
    // The same name again: the service's 409, nothing written.
    let again = b.post(&base, &form).await;
    assert_eq!(again.status, 409, "{}", again.body);
    assert_eq!(own_products(&app, &t).await.len(), 1);

    // Garden B's member: garden A's product is unknown to them, in either garden's path.
    let mut out = Browser::new(&app, "en");
    out.sign_in(&outsider.email, PASSWORD).await;
    for path in [
        format!("{base}/{own_key}"),
        format!("/app/g/{}/nutrition/fertilizers/{own_key}", other.slug),
    ] {
        let page = out.get(&path).await;
        assert_eq!(page.status, 404, "{path}");
        assert!(!page.has("Web own grow"));
    }
    let theirs = out
        .get(&format!("/app/g/{}/nutrition/fertilizers", other.slug))
        .await;
    assert_eq!(theirs.status, 200);
    assert!(!theirs.has("Web own grow"));
    assert!(own_products(&app, &other).await.is_empty());
}
