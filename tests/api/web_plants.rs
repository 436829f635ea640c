//! The plant pages (`/app/g/{slug}/plants…`) over real HTTP against PostgreSQL and Redis, as a
//! browser without JavaScript uses them: the list with its filters and pages, creating one and
//! several plants, a plant's page and the records made from it (phase, watering and feeding,
//! inspection, treatment with the safety interval it starts, the harvest refused inside it, a
//! diary entry with a photo sent as multipart), each with what a refused form leaves (nothing),
//! CSRF, and another garden's plant (404, nothing written).

use image::ImageFormat;
use kultiva::auth::Role;
use kultiva::tenancy::TenantRecord;
use uuid::Uuid;

use crate::garden::{bed, count, phases, species};
use crate::ipm::{SOAP, catalogue_key};
use crate::support::{PASSWORD, TestApp};
use crate::web::Browser;

const TOMATO: &str = "Fixtura tomatoides";

/// A plant made through the service (the REST route's function), with its key.
async fn plant(app: &TestApp, t: &TenantRecord, name: &str, location: Option<Uuid>) -> Uuid {
    let new = kultiva::garden::plants::model::NewPlant {
        species_key: species(app, TOMATO).await,
        name: Some(name.to_owned()),
        cultivar_key: None,
        location_key: location,
        slot_key: None,
        substrate_batch_key: None,
        planted_on: None,
        phase_key: None,
        notes: None,
        start_phase: Default::default(),
    };
    kultiva::garden::plants::service::create_plant(&app.state, t, &new, "test", true)
        .await
        .expect("plant")
        .key
}

/// The keys of the plants a page links to.
fn plant_links(body: &str, slug: &str) -> Vec<String> {
    let re = regex::Regex::new(&format!(r#"href="/app/g/{slug}/plants/([0-9a-f-]{{36}})""#))
        .expect("pattern");
    re.captures_iter(body).map(|c| c[1].to_owned()).collect()
}

#[tokio::test]
async fn the_plant_list_filters_pages_and_creates_one_or_many_plants() {
    let app = TestApp::full().await;
    let t = app.tenant("wplist").await;
    let grower = app.member(&t, Role::Grower).await;
    let viewer = app.member(&t, Role::Viewer).await;
    let tomato = species(&app, TOMATO).await;
    let (_, bed_loc, _) = bed(&app, &t, "Web bed", 0).await;
    let slug = t.slug.as_str().to_owned();
    let list = format!("/app/g/{slug}/plants");
    let new = format!("{list}/new");
    let mut b = Browser::new(&app, "en");
    b.sign_in(&grower.email, PASSWORD).await;

    // Empty at first; the garden's navigation links here.
    let page = b.get(&list).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains("No plant matches"), "{}", page.body);
    assert!(page.body.contains(&format!(r#"href="{list}""#)));
    assert!(page.body.contains("New plant(s)"));

    // The species search is a plain GET form; its results are the create form's choices.
    let form = b.get(&format!("{new}?species_q=Fixtura%20tomat")).await;
    assert_eq!(form.status, 200, "{}", form.body);
    assert!(
        form.body.contains(&format!(r#"value="{tomato}""#)),
        "{}",
        form.body
    );
    assert!(form.body.contains(r#"name="species_q""#));
    let csrf = form.csrf();

    // Refused forms: nothing written, the form again with the reason.
    let forged = b
        .post(&new, &[("species_key", &tomato), ("name", "Forged")])
        .await;
    assert_eq!(forged.status, 403);
    let missing = b
        .post(&new, &[("_csrf", &csrf), ("name", "No species")])
        .await;
    assert_eq!(missing.status, 422, "{}", missing.body);
    assert!(
        missing.body.contains("Species: this field is required."),
        "{}",
        missing.body
    );
    assert!(
        missing.body.contains(r#"value="No species""#),
        "typed values stay"
    );
    let too_many = b
        .post(
            &new,
            &[("_csrf", &csrf), ("species_key", &tomato), ("count", "51")],
        )
        .await;
    assert_eq!(too_many.status, 422);
    assert!(
        too_many.body.contains("How many plants: "),
        "{}",
        too_many.body
    );
    let unknown = b
        .post(
            &new,
            &[
                ("_csrf", &csrf),
                ("species_key", &tomato),
                ("location_key", &Uuid::now_v7().to_string()),
            ],
        )
        .await;
    assert_eq!(unknown.status, 404, "{}", unknown.body);
    let future = b
        .post(
            &new,
            &[
                ("_csrf", &csrf),
                ("species_key", &tomato),
                ("planted_on", "2999-01-01"),
            ],
        )
        .await;
    assert_eq!(future.status, 422);
    assert_eq!(count(&app, &t, "plants").await, 0);

    // A viewer reads the list but gets no create form, and a create post is refused.
    let mut v = Browser::new(&app, "en");
    v.sign_in(&viewer.email, PASSWORD).await;
    let seen = v.get(&list).await;
    assert_eq!(seen.status, 200);
    assert!(!seen.body.contains(&format!(r#"href="{new}""#)));
    let vcsrf = seen.csrf();
    let refused = v
        .post(&new, &[("_csrf", &vcsrf), ("species_key", &tomato)])
        .await;
    assert_eq!(refused.status, 403);
    assert_eq!(count(&app, &t, "plants").await, 0);

    // One plant, placed: straight to its page.
    let one = b
        .post(
            &new,
            &[
                ("_csrf", &csrf),
                ("species_key", &tomato),
                ("name", "Bed tomato"),
                ("location_key", &bed_loc.to_string()),
                ("count", "1"),
            ],
        )
        .await;
    assert_eq!(one.status, 303, "{}", one.body);
    assert!(
        one.location()
            .unwrap_or_default()
            .starts_with(&format!("{list}/"))
            && one
                .location()
                .unwrap_or_default()
                .ends_with("?done=created"),
        "{}",
        one.location().unwrap_or_default()
    );
    assert_eq!(count(&app, &t, "plants").await, 1);
    let shown = b.get(one.location().unwrap_or_default()).await;
    assert_eq!(shown.status, 200);
    assert!(shown.body.contains("Plant created."), "{}", shown.body);
    assert!(shown.body.contains("Web bed"), "{}", shown.body);

    // Several at once, numbered.
    let many = b
        .post(
            &new,
            &[
                ("_csrf", &csrf),
                ("species_key", &tomato),
                ("name", "Row"),
                ("count", "3"),
            ],
        )
        .await;
    assert_eq!(many.status, 303, "{}", many.body);
    assert_eq!(
        many.location().unwrap_or_default(),
        format!("{list}?done=created&n=3")
    );
    assert_eq!(count(&app, &t, "plants").await, 4);
    let all = b.get(many.location().unwrap_or_default()).await;
    assert!(all.body.contains("3 plants created."), "{}", all.body);
    for name in ["Row 1", "Row 2", "Row 3", "Bed tomato"] {
        assert!(all.body.contains(name), "{name}: {}", all.body);
    }

    // Filters: name, location, phase (as the REST list reads them); "all" is no filter.
    let by_name = b.get(&format!("{list}?name=row&location=&phase=")).await;
    assert_eq!(by_name.status, 200, "{}", by_name.body);
    assert_eq!(plant_links(&by_name.body, &slug).len(), 3);
    assert!(!by_name.body.contains("Bed tomato"));
    let by_place = b.get(&format!("{list}?location={bed_loc}")).await;
    assert_eq!(plant_links(&by_place.body, &slug).len(), 1);
    assert!(by_place.body.contains("Bed tomato"));
    let first_phase = phases(&app, &tomato).await[0].clone();
    let by_phase = b.get(&format!("{list}?phase={first_phase}")).await;
    assert_eq!(plant_links(&by_phase.body, &slug).len(), 4);
    let other_phase = phases(&app, &tomato).await[1].clone();
    let none = b.get(&format!("{list}?phase={other_phase}")).await;
    assert_eq!(plant_links(&none.body, &slug).len(), 0);
    // A filter that is not one: said so, not a 500.
    let bad = b.get(&format!("{list}?location=not-a-key")).await;
    assert_eq!(bad.status, 422, "{}", bad.body);
    assert!(bad.body.contains("Location: "), "{}", bad.body);

    // Pages of 25.
    for i in 0..24 {
        plant(&app, &t, &format!("Filler {i:02}"), None).await;
    }
    let first = b.get(&list).await;
    assert_eq!(plant_links(&first.body, &slug).len(), 25);
    assert!(
        first.body.contains("Plants 1 to 25 of 28"),
        "{}",
        first.body
    );
    assert!(first.body.contains(&format!(r#"href="{list}?skip=25""#)));
    let second = b.get(&format!("{list}?skip=25")).await;
    assert_eq!(plant_links(&second.body, &slug).len(), 3);
    assert!(second.body.contains("Previous page"));

    // German.
    let mut de = Browser::new(&app, "de");
    de.sign_in(&grower.email, PASSWORD).await;
    let german = de.get(&list).await;
    assert!(german.body.contains("Neue Pflanze(n)"), "{}", german.body);
    assert!(german.body.contains("Pflanzen 1 bis 25 von 28"));
}

#[tokio::test]
async fn a_plants_page_records_phase_water_inspection_treatment_and_refuses_the_harvest() {
    let app = TestApp::full().await;
    let t = app.tenant("wprec").await;
    let grower = app.member(&t, Role::Grower).await;
    let tomato = species(&app, TOMATO).await;
    let soap = catalogue_key(&app, "treatment", SOAP).await;
    let p = plant(&app, &t, "Page tomato", None).await;
    let slug = t.slug.as_str().to_owned();
    let page_path = format!("/app/g/{slug}/plants/{p}");
    let mut b = Browser::new(&app, "en");
    b.sign_in(&grower.email, PASSWORD).await;

    let page = b.get(&page_path).await;
    assert_eq!(page.status, 200, "{}", page.body);
    for part in [
        "Page tomato",
        TOMATO,
        "Phase timeline",
        "Record a watering or feeding",
        "Record an inspection",
        "Record a treatment",
        "Record a harvest",
        "Write a diary entry",
        r#"capture="environment""#,
        r#"enctype="multipart/form-data""#,
    ] {
        assert!(page.body.contains(part), "{part}: {}", page.body);
    }
    let csrf = page.csrf();

    // Phase: to the next phase of the sequence; an unknown one is refused, nothing moves.
    let seq = phases(&app, &tomato).await;
    let history = || count(&app, &t, "plant_phase_history");
    let bad = b
        .post(
            &format!("{page_path}/phase"),
            &[("_csrf", &csrf), ("target_phase_key", "no_such_phase")],
        )
        .await;
    assert_eq!(bad.status, 422, "{}", bad.body);
    assert!(bad.body.contains("This phase change is not allowed"));
    assert_eq!(history().await, 1);
    let moved = b
        .post(
            &format!("{page_path}/phase"),
            &[("_csrf", &csrf), ("target_phase_key", &seq[1])],
        )
        .await;
    assert_eq!(moved.status, 303, "{}", moved.body);
    assert_eq!(
        moved.location().unwrap_or_default(),
        format!("{page_path}?done=moved#phase")
    );
    assert_eq!(history().await, 2);
    assert!(
        b.get(moved.location().unwrap_or_default())
            .await
            .body
            .contains("Phase changed.")
    );

    // Watering: a decimal comma is a number; bad input and a foreign post write nothing.
    let water = format!("{page_path}/watering");
    for form in [
        vec![("_csrf", csrf.as_str()), ("volume_liters", "lots")],
        vec![("_csrf", csrf.as_str())],
        vec![
            ("_csrf", csrf.as_str()),
            ("volume_liters", "1"),
            ("ph_after", "15"),
        ],
    ] {
        let refused = b.post(&water, &form).await;
        assert_eq!(refused.status, 422, "{form:?}: {}", refused.body);
        assert!(refused.body.contains("Nothing was saved"));
    }
    let forged = b.post(&water, &[("volume_liters", "2")]).await;
    assert_eq!(forged.status, 403);
    assert_eq!(count(&app, &t, "watering_events").await, 0);
    let watered = b
        .post(&water, &[("_csrf", &csrf), ("volume_liters", "1,5")])
        .await;
    assert_eq!(watered.status, 303, "{}", watered.body);
    assert_eq!(count(&app, &t, "watering_events").await, 1);
    let shown = b.get(watered.location().unwrap_or_default()).await;
    assert!(shown.body.contains("Watering recorded."));
    assert!(shown.body.contains("1.5 l"), "{}", shown.body);

    // Inspection.
    let inspected = b
        .post(
            &format!("{page_path}/inspection"),
            &[
                ("_csrf", &csrf),
                ("pressure_level", "low"),
                ("symptom", "yellow spots on old leaves"),
            ],
        )
        .await;
    assert_eq!(inspected.status, 303, "{}", inspected.body);
    assert_eq!(count(&app, &t, "ipm_inspections").await, 1);
    let wrong = b
        .post(
            &format!("{page_path}/inspection"),
            &[("_csrf", &csrf), ("pressure_level", "apocalyptic")],
        )
        .await;
    assert_eq!(wrong.status, 422);
    assert_eq!(count(&app, &t, "ipm_inspections").await, 1);

    // Treatment: the page names the safety interval it starts, its end and its source.
    let none = b
        .post(&format!("{page_path}/treatment"), &[("_csrf", &csrf)])
        .await;
    assert_eq!(none.status, 422);
    assert_eq!(count(&app, &t, "ipm_applications").await, 0);
    let treated = b
        .post(
            &format!("{page_path}/treatment"),
            &[("_csrf", &csrf), ("treatment_key", &soap)],
        )
        .await;
    assert_eq!(treated.status, 303, "{}", treated.body);
    assert_eq!(count(&app, &t, "ipm_applications").await, 1);
    let today = time::OffsetDateTime::now_utc().date();
    let last = Browser::date_en(today + time::Duration::days(2));
    let from = Browser::date_en(today + time::Duration::days(3));
    let shown = b.get(treated.location().unwrap_or_default()).await;
    assert!(
        shown
            .body
            .contains("Its safety interval of 3 days (source: "),
        "{}",
        shown.body
    );
    assert!(
        shown.body.contains(&format!(
            "blocks harvesting until {last}; harvesting is allowed from {from}"
        )),
        "{}",
        shown.body
    );

    // Harvest inside the interval: refused plainly, with the days left; no batch.
    let refused = b
        .post(
            &format!("{page_path}/harvest"),
            &[("_csrf", &csrf), ("wet_weight_g", "120")],
        )
        .await;
    assert_eq!(refused.status, 422, "{}", refused.body);
    assert!(
        refused
            .body
            .contains("Harvest refused: a safety interval is still running."),
        "{}",
        refused.body
    );
    assert!(
        refused.body.contains(&format!(
            "3 days left. No harvest until {last}; harvesting is allowed from {from}."
        )),
        "{}",
        refused.body
    );
    assert!(refused.body.contains("KARENZ") || refused.body.contains("blocked through"));
    assert_eq!(count(&app, &t, "harvest_batches").await, 0);
    // The same in German.
    let mut de = Browser::new(&app, "de");
    de.sign_in(&grower.email, PASSWORD).await;
    let dcsrf = de.get(&page_path).await.csrf();
    let abgelehnt = de
        .post(
            &format!("{page_path}/harvest"),
            &[("_csrf", &dcsrf), ("wet_weight_g", "120,5")],
        )
        .await;
    assert_eq!(abgelehnt.status, 422);
    assert!(
        abgelehnt.body.contains("Ernte abgelehnt") && abgelehnt.body.contains("noch 3 Tage"),
        "{}",
        abgelehnt.body
    );
    assert_eq!(count(&app, &t, "harvest_batches").await, 0);
    // Another plant, untreated: harvested.
    let q = plant(&app, &t, "Free tomato", None).await;
    let ok = b
        .post(
            &format!("/app/g/{slug}/plants/{q}/harvest"),
            &[("_csrf", &csrf), ("wet_weight_g", "80")],
        )
        .await;
    assert_eq!(ok.status, 303, "{}", ok.body);
    assert_eq!(count(&app, &t, "harvest_batches").await, 1);

    // Another garden's plant: a 404 page, nothing written there or here.
    let other = app.tenant("wpother").await;
    let foreign = plant(&app, &other, "Foreign tomato", None).await;
    let seen = b.get(&format!("/app/g/{slug}/plants/{foreign}")).await;
    assert_eq!(seen.status, 404);
    assert!(!seen.body.contains("Foreign tomato"));
    for what in ["watering", "harvest", "treatment", "inspection", "phase"] {
        let post = b
            .post(
                &format!("/app/g/{slug}/plants/{foreign}/{what}"),
                &[
                    ("_csrf", &csrf),
                    ("volume_liters", "1"),
                    ("wet_weight_g", "1"),
                    ("treatment_key", &soap),
                    ("pressure_level", "low"),
                    ("target_phase_key", &seq[1]),
                ],
            )
            .await;
        assert_eq!(post.status, 404, "{what}");
    }
    assert_eq!(
        b.get(&format!("/app/g/{}/plants", other.slug.as_str()))
            .await
            .status,
        404
    );
    for table in [
        "watering_events",
        "harvest_batches",
        "ipm_applications",
        "ipm_inspections",
    ] {
        assert_eq!(count(&app, &other, table).await, 0, "{table}");
    }
    assert_eq!(count(&app, &other, "plant_phase_history").await, 1);
    assert_eq!(count(&app, &t, "watering_events").await, 1);
    // Not a plant key at all: the same 404.
    assert_eq!(
        b.get(&format!("/app/g/{slug}/plants/nope")).await.status,
        404
    );
}

impl Browser<'_> {
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
}

#[tokio::test]
async fn a_diary_entry_with_a_photo_from_the_phone_and_what_a_refused_one_leaves() {
    let app = TestApp::full().await;
    let t = app.tenant("wpdiary").await;
    let grower = app.member(&t, Role::Grower).await;
    let p = plant(&app, &t, "Diary tomato", None).await;
    let slug = t.slug.as_str().to_owned();
    let page_path = format!("/app/g/{slug}/plants/{p}");
    let diary = format!("{page_path}/diary");
    let mut b = Browser::new(&app, "en");
    b.sign_in(&grower.email, PASSWORD).await;
    let csrf = b.get(&page_path).await.csrf();
    let png = crate::photos::encode(&crate::photos::picture(64, 48), ImageFormat::Png);
    let jpeg = crate::photos::encode(&crate::photos::picture(80, 60), ImageFormat::Jpeg);

    // Refusals leave nothing: no text, a type that is no picture, bytes that are none.
    let no_text = b
        .post_multipart(
            &diary,
            &[("_csrf", &csrf), ("text", "")],
            &[("photo", "leaf.png", "image/png", png.clone())],
        )
        .await;
    assert_eq!(no_text.status, 422, "{}", no_text.body);
    assert!(no_text.body.contains("Entry: "), "{}", no_text.body);
    let heic = b
        .post_multipart(
            &diary,
            &[("_csrf", &csrf), ("text", "a heic")],
            &[("photo", "leaf.heic", "image/heic", png.clone())],
        )
        .await;
    assert_eq!(heic.status, 415, "{}", heic.body);
    assert!(heic.body.contains("use JPEG, PNG or WebP"), "{}", heic.body);
    let broken = b
        .post_multipart(
            &diary,
            &[("_csrf", &csrf), ("text", "broken picture")],
            &[("photo", "leaf.png", "image/png", png[..60].to_vec())],
        )
        .await;
    assert_eq!(broken.status, 422, "{}", broken.body);
    assert!(broken.body.contains("Photos: "), "{}", broken.body);
    let forged = b
        .post_multipart(
            &diary,
            &[("text", "forged")],
            &[("photo", "leaf.png", "image/png", png.clone())],
        )
        .await;
    assert_eq!(forged.status, 403);
    assert_eq!(count(&app, &t, "diary_entries").await, 0);
    assert_eq!(count(&app, &t, "diary_photos").await, 0);

    // The entry and two photos, as the phone's camera sends them.
    let done = b
        .post_multipart(
            &diary,
            &[
                ("_csrf", &csrf),
                ("title", "First flowers"),
                ("text", "Three trusses are flowering."),
                ("entry_type", "milestone"),
            ],
            &[
                ("photo", "IMG_0001.png", "image/png", png.clone()),
                ("photo", "IMG_0002.jpg", "image/jpeg", jpeg),
            ],
        )
        .await;
    assert_eq!(done.status, 303, "{}", done.body);
    assert_eq!(
        done.location().unwrap_or_default(),
        format!("{page_path}?done=noted#diary")
    );
    assert_eq!(count(&app, &t, "diary_entries").await, 1);
    assert_eq!(count(&app, &t, "diary_photos").await, 2);
    // Without a photo (the empty file input still sends its part).
    let plain = b
        .post_multipart(
            &diary,
            &[("_csrf", &csrf), ("text", "Watered by hand.")],
            &[("photo", "", "application/octet-stream", Vec::new())],
        )
        .await;
    assert_eq!(plain.status, 303, "{}", plain.body);
    assert_eq!(count(&app, &t, "diary_entries").await, 2);
    assert_eq!(count(&app, &t, "diary_photos").await, 2);

    let shown = b.get(done.location().unwrap_or_default()).await;
    assert!(shown.body.contains("Diary entry saved."));
    assert!(shown.body.contains("First flowers"), "{}", shown.body);

    // The rendition through the pages' own route once the worker made it.
    let photo_key: Uuid = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "SELECT id FROM {}.diary_photos ORDER BY position LIMIT 1",
        t.schema_name.quoted()
    )))
    .fetch_one(app.state.platform_pool())
    .await
    .expect("photo");
    let rendition = format!("/app/g/{slug}/photos/{photo_key}/512");
    let mut got = None;
    for _ in 0..100 {
        let _ = kultiva::garden::photos::worker::run_once(&app.state).await;
        let r = b.send(app.client.get(app.url(&rendition))).await;
        if r.status == 200 {
            got = Some(r);
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let got = got.expect("the rendition is served");
    assert_eq!(
        got.headers
            .get("content-type")
            .and_then(|v| v.to_str().ok()),
        Some("image/webp")
    );
    let shown = b.get(&page_path).await;
    assert!(shown.body.contains(&rendition), "{}", shown.body);
    // Another garden cannot read it through its own pages, nor a size that is none.
    let other = app.tenant("wpdiaryo").await;
    let stranger = app.member(&other, Role::Grower).await;
    let mut s = Browser::new(&app, "en");
    s.sign_in(&stranger.email, PASSWORD).await;
    let foreign = s
        .get(&format!(
            "/app/g/{}/photos/{photo_key}/512",
            other.slug.as_str()
        ))
        .await;
    assert_eq!(foreign.status, 404);
    assert_eq!(
        b.get(&format!("/app/g/{slug}/photos/{photo_key}/99"))
            .await
            .status,
        404
    );
}
