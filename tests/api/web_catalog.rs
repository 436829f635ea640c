//! The catalogue pages (`/app/g/{slug}/catalog…`) over real HTTP against PostgreSQL and Redis,
//! as a browser without JavaScript uses them, over the fixture catalogue: the search finds the
//! species it names and not another; a species' page shows the four safety fields, the phase
//! sequence with its durations, its cultivars and companions; a treatment's page shows each
//! per-crop interval with the label it is read from; pests and diseases link to what treats
//! them. What must not happen: an unknown key, another garden's slug (404), a visitor reading
//! (to the sign-in). Viewers read like growers; the catalogue is in the garden's navigation;
//! German pages speak German.

use crate::ipm::{SOAP, catalogue_key, world};
use crate::support::{PASSWORD, TestApp};
use crate::web::Browser;

#[tokio::test]
async fn the_catalogue_pages_search_species_and_show_safety_phases_companions_and_intervals() {
    let app = TestApp::full().await;
    let w = world(&app, "wcat", 0).await;
    let tomato = catalogue_key(&app, "species", "Fixtura tomatoides").await;
    let bean = catalogue_key(&app, "species", "Probus perennis").await;
    let pyrethrum = catalogue_key(&app, "treatment", "Fixture pyrethrum").await;
    let soap = catalogue_key(&app, "treatment", SOAP).await;
    let aphid = catalogue_key(&app, "pest", "Fixturia vorax").await;
    let blight = catalogue_key(&app, "disease", "Fixturomyces blightii").await;
    let slug = w.t.slug.as_str().to_owned();
    let base = format!("/app/g/{slug}/catalog");

    // Signed out: to the sign-in, nothing of the catalogue shown.
    let mut anon = Browser::new(&app, "en");
    let away = anon.get(&format!("{base}/species/{tomato}")).await;
    assert_eq!(away.status, 303);
    assert!(
        away.location()
            .unwrap_or_default()
            .starts_with("/app/login"),
        "{:?}",
        away.location()
    );
    assert!(!away.has("Fixture tomato"));

    let mut b = Browser::new(&app, "en");
    b.sign_in(&w.grower.email, PASSWORD).await;
    // The overview, reachable from the garden's navigation, links every part.
    let home = b.get(&format!("/app/g/{slug}")).await;
    assert!(
        home.has(&format!(r#"href="{base}">Catalogue</a>"#)),
        "{}",
        home.body
    );
    let overview = b.get(&base).await;
    assert_eq!(overview.status, 200, "{}", overview.body);
    for part in ["species", "pests", "diseases", "treatments"] {
        assert!(
            overview.has(&format!(r#"href="{base}/{part}""#)),
            "{part}: {}",
            overview.body
        );
    }

    // The search finds the tomato, not the bean.
    let found = b.get(&format!("{base}/species?q=tomatoides")).await;
    assert_eq!(found.status, 200, "{}", found.body);
    assert!(found.has(r#"<label for="cat-q">"#) && found.has(r#"value="tomatoides""#));
    assert!(
        found.has(&format!(r#"href="{base}/species/{tomato}">"#)),
        "{}",
        found.body
    );
    assert!(found.has("Fixture tomato") && found.has("Fixtura tomatoides"));
    assert!(
        !found.has("Probus perennis") && !found.has(&bean),
        "{}",
        found.body
    );
    let nothing = b.get(&format!("{base}/species?q=zzqqnothingzz")).await;
    assert!(
        nothing.has("Nothing matches this search."),
        "{}",
        nothing.body
    );
    // A search the service refuses: said, not a 500.
    let long = "x".repeat(101);
    let refused = b.get(&format!("{base}/species?q={long}")).await;
    assert_eq!(refused.status, 422, "{}", refused.body);
    assert!(refused.has("at most 100 characters"));

    // The species' page: the four safety fields, the sequence, cultivars, companions.
    let page = b.get(&format!("{base}/species/{tomato}")).await;
    assert_eq!(page.status, 200, "{}", page.body);
    for part in [
        "<h1>Fixture tomato</h1>",
        "Fixturaceae",
        "<dt>Toxicity</dt>",
        "toxic · Toxic to: cats, dogs · Parts: leaves · Compounds: fixturine",
        "<dt>Toxicity severity</dt><dd>low</dd>",
        "<dt>Allergens</dt><dd>not recorded</dd>",
        "<dt>Harvest allowed</dt><dd>yes</dd>",
        "Annual Harvest",
        r#"<th scope="row">Germination</th><td>7 days</td><td>no</td>"#,
        r#"<th scope="row">Ripening</th><td>14 days</td><td>yes</td>"#,
        "Red Fixture",
        "Test Seeds",
        "ripe in 70 days",
        "Good neighbours",
        &format!(r#"href="{base}/species/{bean}">Probus perennis</a>"#),
        "The probe bean feeds the tomato.",
        "Neighbours to avoid",
        "Nobody knows.",
        &format!(r#"href="{base}/pests/{aphid}">Fixture aphid</a>"#),
        &format!(r#"href="{base}/diseases/{blight}">Fixture blight</a>"#),
        r#"<th scope="col">"#,
    ] {
        assert!(page.has(part), "{part}: {}", page.body);
    }
    // A species with nothing recorded says so for each field, never "not toxic".
    let hybrid = catalogue_key(&app, "species", "Fixtura × hybrida").await;
    let blank = b.get(&format!("{base}/species/{hybrid}")).await;
    assert_eq!(blank.status, 200);
    assert!(
        blank.has("<dt>Toxicity</dt><dd>not recorded</dd>")
            && blank.has("<dt>Harvest allowed</dt><dd>not recorded</dd>")
            && !blank.has("not toxic"),
        "{}",
        blank.body
    );

    // A treatment's page: each per-crop interval with its label.
    let t = b.get(&format!("{base}/treatments/{pyrethrum}")).await;
    assert_eq!(t.status, 200, "{}", t.body);
    for part in [
        "<h1>Fixture pyrethrum</h1>",
        "Pre-harvest intervals per crop",
        "The longest interval: 10 days.",
        &format!(
            r#"<th scope="row"><a href="{base}/species/{tomato}">Fixtura tomatoides</a></th><td>5 days</td>"#
        ),
        r#"<th scope="row">every crop on the label</th><td>10 days</td>"#,
        "Product: Fixpyr",
        "Authority: Fixture register",
        "Crop on the label: tomatoides",
        "IRAC 3A (Fixture classification)",
    ] {
        assert!(t.has(part), "{part}: {}", t.body);
    }
    let s = b.get(&format!("{base}/treatments/{soap}")).await;
    assert!(
        s.has("Registration: 00A123-00") && s.has("Product: Fixsoap"),
        "{}",
        s.body
    );
    // A pest's page names its host and what treats it.
    let p = b.get(&format!("{base}/pests/{aphid}")).await;
    assert_eq!(p.status, 200, "{}", p.body);
    assert!(
        p.has(&format!(
            r#"href="{base}/species/{tomato}">Fixtura tomatoides</a>"#
        )) && p.has(&format!(r#"href="{base}/treatments/{soap}">"#)),
        "{}",
        p.body
    );
    let lists = b.get(&format!("{base}/treatments?q=pyrethrum")).await;
    assert!(lists.has(&format!(r#"href="{base}/treatments/{pyrethrum}">"#)));
    assert!(!lists.has(&soap), "{}", lists.body);

    // Unknown keys: the 404 page, for every part (a key that is not one too).
    for path in [
        format!("{base}/species/{}", uuid::Uuid::new_v4()),
        format!("{base}/treatments/{}", uuid::Uuid::new_v4()),
        format!("{base}/pests/not-a-key"),
        format!("{base}/diseases/{tomato}"),
    ] {
        let missing = b.get(&path).await;
        assert_eq!(missing.status, 404, "{path}: {}", missing.body);
    }

    // A viewer reads the same pages.
    let mut v = Browser::new(&app, "en");
    v.sign_in(&w.viewer.email, PASSWORD).await;
    let seen = v.get(&format!("{base}/treatments/{pyrethrum}")).await;
    assert_eq!(seen.status, 200);
    assert!(seen.has("Product: Fixpyr"));

    // German labels.
    let mut de = Browser::new(&app, "de");
    de.sign_in(&w.grower.email, PASSWORD).await;
    let seite = de.get(&format!("{base}/species/{tomato}")).await;
    assert_eq!(seite.status, 200);
    for part in [
        "<h1>Testtomate</h1>",
        "Sicherheit",
        "<dt>Giftigkeit</dt>",
        "Giftig für: Katzen, Hunde",
        "<dt>Schwere der Giftigkeit</dt><dd>gering</dd>",
        "<dt>Ernte erlaubt</dt><dd>ja</dd>",
        "Phasenfolge",
        "<td>7 Tage</td>",
        "Gute Nachbarn",
        r#">Katalog</a>"#,
    ] {
        assert!(seite.has(part), "{part}: {}", seite.body);
    }
    let mittel = de.get(&format!("{base}/treatments/{pyrethrum}")).await;
    assert!(
        mittel.has("Wartezeiten je Kultur") && mittel.has("Kultur laut Etikett: tomatoides"),
        "{}",
        mittel.body
    );

    // Another garden's slug: 404 for this grower, nothing of the catalogue shown.
    let other = world(&app, "wcatb", 0).await;
    let foreign = b
        .get(&format!(
            "/app/g/{}/catalog/species/{tomato}",
            other.t.slug.as_str()
        ))
        .await;
    assert_eq!(foreign.status, 404, "{}", foreign.body);
    assert!(!foreign.has("Fixture tomato"));
}
