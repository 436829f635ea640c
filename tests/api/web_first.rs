//! The web app's first run and its bytes (issue 42): CSRF values masked per response (two
//! responses, two values, both good; the bare token and another session's value refused),
//! pages, stylesheet and scripts compressed with brotli or gzip (the JSON API not), `/` to
//! `/app`, the icon and the manifest, sign-up signing in at once without required
//! confirmation (the mail still sent, a reminder on every page) and the personal garden named
//! in the sign-up's language.

use std::io::Read;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::Value;

use crate::mail::{Sink, address, link_token, mail_app, own_database};
use crate::support::{PASSWORD, TestApp, header};
use crate::web::{Browser, Page, personal_slug, plant_due_for_water};

/// The token a masked CSRF value carries (what the service compares): the page's value
/// unmasked, as an attacker who read one page would have it.
fn unmasked(masked: &str) -> String {
    let raw = URL_SAFE_NO_PAD.decode(masked).expect("Base64");
    assert_eq!(raw.len() % 2, 0, "pad and token of one length");
    let (pad, xored) = raw.split_at(raw.len() / 2);
    String::from_utf8(pad.iter().zip(xored).map(|(p, x)| p ^ x).collect()).expect("text")
}

/// Every CSRF value of a page replaced by one placeholder (they differ per response).
fn without_csrf(body: &str) -> String {
    regex::Regex::new(r#"name="_csrf" value="[^"]*""#)
        .expect("pattern")
        .replace_all(body, r#"name="_csrf" value="""#)
        .into_owned()
}

fn inflate(coding: &str, bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    match coding {
        "br" => brotli::Decompressor::new(bytes, 4096)
            .read_to_end(&mut out)
            .expect("brotli"),
        "gzip" => flate2::read::GzDecoder::new(bytes)
            .read_to_end(&mut out)
            .expect("gunzip"),
        other => panic!("unexpected coding {other}"),
    };
    out
}

async fn personal_garden(app: &TestApp, email: &str) -> (String, String) {
    sqlx::query_as(
        "SELECT t.slug, t.name FROM platform.tenants t
         JOIN platform.memberships m ON m.tenant_id = t.id
         JOIN platform.users u ON u.id = m.user_id
         WHERE u.email = $1 AND t.kind = 'personal'",
    )
    .bind(email)
    .fetch_one(app.state.platform_pool())
    .await
    .expect("personal garden")
}

/// The page's `<html lang>` (the language switch's effect, or its absence).
fn page_lang(page: &Page) -> &'static str {
    if page.has(r#"<html lang="de">"#) {
        "de"
    } else {
        "en"
    }
}

#[tokio::test]
async fn csrf_values_are_masked_per_response_and_only_this_sessions_token_is_taken() {
    let app = TestApp::full().await;
    let grower = app.user("webmask").await;
    let other = app.user("webmask-other").await;
    let mut b = Browser::new(&app, "en");
    b.sign_in(&grower.email, PASSWORD).await;
    let garden = b.get("/app").await.location().expect("garden").to_owned();

    // Two responses, two different values; within a page every form carries the same one.
    let one = b.get(&garden).await;
    let two = b.get(&garden).await;
    let (a, c) = (one.csrf(), two.csrf());
    assert_ne!(a, c, "a fresh mask per response");
    assert_eq!(
        unmasked(&a),
        unmasked(&c),
        "the same token under both masks"
    );
    assert!(!one.has(&unmasked(&a)), "the bare token is never on a page");
    let session = b.cookies.get("kv_session").expect("cookie").clone();
    assert!(!one.has(&session));

    // Both validate (a plain form post and htmx, which posts the form's hidden field).
    let first = b
        .post(
            "/app/lang",
            &[("_csrf", &a), ("lang", "de"), ("back", &garden)],
        )
        .await;
    assert_eq!(
        (first.status, first.location()),
        (303, Some(garden.as_str()))
    );
    assert_eq!(page_lang(&b.get(&garden).await), "de");
    let second = b
        .htmx_post(
            "/app/lang",
            &[("_csrf", &c), ("lang", "en"), ("back", &garden)],
        )
        .await;
    assert_eq!(second.status, 200, "{}", second.body);
    assert_eq!(second.header("hx-redirect"), garden);
    assert_eq!(page_lang(&b.get(&garden).await), "en");

    // Refused, and nothing switched: the unmasked token, another session's value, another
    // person's value, a truncated value, none.
    let mut same_person = Browser::new(&app, "en");
    same_person.sign_in(&grower.email, PASSWORD).await;
    let other_session = same_person.get(&garden).await.csrf();
    let mut stranger = Browser::new(&app, "en");
    stranger.sign_in(&other.email, PASSWORD).await;
    let strangers = stranger.get("/app/settings").await.csrf();
    let bare = unmasked(&a);
    let truncated = a[..a.len() - 2].to_owned();
    for (why, value) in [
        ("the bare token", bare.as_str()),
        ("another session of the same person", other_session.as_str()),
        ("another person's session", strangers.as_str()),
        ("a truncated value", truncated.as_str()),
        ("an empty value", ""),
    ] {
        let refused = b
            .post(
                "/app/lang",
                &[("_csrf", value), ("lang", "de"), ("back", &garden)],
            )
            .await;
        assert_eq!(refused.status, 403, "{why}: {}", refused.body);
        let refused = b
            .htmx_post(
                "/app/lang",
                &[("_csrf", value), ("lang", "de"), ("back", &garden)],
            )
            .await;
        assert_eq!(refused.status, 403, "{why} (htmx)");
    }
    assert_eq!(page_lang(&b.get(&garden).await), "en", "nothing switched");
    let prefs: Value = app
        .rest_auth(Some(&grower.bearer()))
        .get("/api/v1/user-preferences")
        .await
        .json()
        .await
        .expect("prefs");
    assert_eq!(prefs["locale"], "en", "{prefs}");

    // Before sign-in too: the form cookie's value itself (the old double submit) is refused;
    // two masked values of it both work.
    let mut visitor = Browser::new(&app, "en");
    let first = visitor.get("/app/login").await;
    let second = visitor.get("/app/login").await;
    assert_ne!(first.csrf(), second.csrf());
    let cookie = visitor.cookies.get("kv_form").expect("form cookie").clone();
    assert_eq!(unmasked(&first.csrf()), cookie);
    let bare = visitor
        .post(
            "/app/lang",
            &[("_csrf", &cookie), ("lang", "de"), ("back", "/app/login")],
        )
        .await;
    assert_eq!(bare.status, 403);
    assert!(!visitor.cookies.contains_key("kv_lang"));
    for value in [first.csrf(), second.csrf()] {
        let ok = visitor
            .post(
                "/app/lang",
                &[("_csrf", &value), ("lang", "de"), ("back", "/app/login")],
            )
            .await;
        assert_eq!(ok.status, 303, "{}", ok.body);
    }
    assert_eq!(
        visitor.cookies.get("kv_lang").map(String::as_str),
        Some("de")
    );
}

#[tokio::test]
async fn pages_and_files_come_compressed_in_brotli_or_gzip_and_the_api_does_not() {
    let app = TestApp::full().await;
    let grower = app.user("webzip").await;
    // A Today of some size: a dozen plants with their watering due.
    let slug = personal_slug(&app, &grower.key).await;
    for n in 0..12 {
        plant_due_for_water(&app, &grower, &slug, &format!("Tomato {n}")).await;
    }
    let mut b = Browser::new(&app, "en");
    b.sign_in(&grower.email, PASSWORD).await;
    let garden = b.get("/app").await.location().expect("garden").to_owned();
    let cookies = b.cookie_header();
    let fetch = |path: String, coding: Option<&'static str>| {
        let mut req = app
            .client
            .get(app.url(&path))
            .header("cookie", cookies.clone());
        if let Some(c) = coding {
            req = req.header("accept-encoding", c);
        }
        async move {
            let res = req.send().await.expect("sent");
            let status = res.status().as_u16();
            let encoding = header(&res, "content-encoding");
            let vary = header(&res, "vary");
            let bytes = res.bytes().await.expect("bytes").to_vec();
            (status, encoding, vary, bytes)
        }
    };

    // Without Accept-Encoding: plain, and the page as a browser reads it.
    let (status, encoding, vary, plain) = fetch(garden.clone(), None).await;
    assert_eq!((status, encoding), (200, None));
    assert_eq!(vary.as_deref(), Some("accept-encoding"));
    let plain = String::from_utf8(plain).expect("utf-8");
    assert!(plain.starts_with("<!DOCTYPE html>") && plain.contains("Tomato 11"));

    // A browser's list (gzip named first): brotli, the server's first choice; gzip alone:
    // gzip. Each decompresses to the same page (only the masked CSRF values differ) and is
    // far smaller.
    for (accept, coding) in [
        ("gzip, deflate, br, zstd", "br"),
        ("br", "br"),
        ("gzip", "gzip"),
        ("gzip;q=1.0, br;q=0", "gzip"),
    ] {
        let (status, encoding, vary, bytes) = fetch(garden.clone(), Some(accept)).await;
        assert_eq!(status, 200);
        assert_eq!(encoding.as_deref(), Some(coding), "{accept}");
        assert_eq!(vary.as_deref(), Some("accept-encoding"));
        let page = String::from_utf8(inflate(coding, &bytes)).expect("utf-8");
        assert_eq!(without_csrf(&page), without_csrf(&plain), "{accept}");
        assert!(
            bytes.len() * 3 < plain.len(),
            "{accept}: {} of {} bytes",
            bytes.len(),
            plain.len()
        );
    }
    // Nothing it can take: plain.
    let (_, encoding, _, bytes) = fetch(garden.clone(), Some("identity, zstd")).await;
    assert_eq!(encoding, None);
    assert!(
        String::from_utf8(bytes)
            .expect("utf-8")
            .starts_with("<!DOCTYPE html>")
    );

    // The stylesheet and the scripts: brotli or gzip, made once, the same bytes inflated.
    let sheet = regex::Regex::new(r#"href="(/app/assets/app-[0-9a-f]+\.css)""#)
        .expect("pattern")
        .captures(&plain)
        .expect("stylesheet")[1]
        .to_owned();
    let htmx = regex::Regex::new(r#"src="(/app/assets/htmx-[0-9a-f]+\.js)""#)
        .expect("pattern")
        .captures(&plain)
        .expect("htmx")[1]
        .to_owned();
    for file in [sheet, htmx] {
        let (_, none, _, original) = fetch(file.clone(), None).await;
        assert_eq!(none, None);
        for (accept, coding) in [("gzip, deflate, br", "br"), ("gzip", "gzip")] {
            let (status, encoding, vary, bytes) = fetch(file.clone(), Some(accept)).await;
            assert_eq!(status, 200);
            assert_eq!(encoding.as_deref(), Some(coding), "{file}: {accept}");
            assert_eq!(vary.as_deref(), Some("accept-encoding"));
            assert_eq!(inflate(coding, &bytes), original, "{file}");
            assert!(bytes.len() * 2 < original.len(), "{file}");
        }
    }

    // The JSON API stays uncompressed (a large document, a browser's list of codings).
    let (status, encoding, _, doc) =
        fetch("/api/v1/openapi.json".to_owned(), Some("gzip, deflate, br")).await;
    assert_eq!((status, encoding), (200, None));
    assert!(doc.len() > 10_000);
    serde_json::from_slice::<Value>(&doc).expect("plain JSON");
}

#[tokio::test]
async fn the_root_leads_to_the_pages_and_the_icon_and_manifest_are_served() {
    let app = TestApp::full().await;
    // `/`: a 303 to `/app` for a browser and for an API client alike.
    for accept in ["text/html,application/xhtml+xml", "application/json"] {
        let res = app
            .client
            .get(app.url("/"))
            .header("accept", accept)
            .send()
            .await
            .expect("sent");
        assert_eq!(res.status().as_u16(), 303, "{accept}");
        assert_eq!(header(&res, "location").as_deref(), Some("/app"));
    }
    // The API's own paths are unchanged.
    assert_eq!(app.get("/api/v1/health/live").await.status().as_u16(), 200);
    assert_eq!(app.get("/nothing-here").await.status().as_u16(), 404);

    let mut b = Browser::new(&app, "en");
    let page = b.get("/app/login").await;
    assert!(
        page.header("content-security-policy")
            .contains("manifest-src 'self'")
    );
    assert!(
        page.header("content-security-policy")
            .contains("script-src 'self'")
    );
    let icon = regex::Regex::new(
        r#"<link rel="icon" type="image/svg\+xml" href="(/app/assets/icon-[0-9a-f]+\.svg)">"#,
    )
    .expect("pattern")
    .captures(&page.body)
    .unwrap_or_else(|| panic!("no icon link: {}", page.body))[1]
        .to_owned();
    assert!(page.has(r#"<link rel="manifest" href="/app/manifest.webmanifest">"#));

    let res = app.get(&icon).await;
    assert_eq!(res.status().as_u16(), 200);
    assert_eq!(
        header(&res, "content-type").as_deref(),
        Some("image/svg+xml")
    );
    let svg = res.text().await.expect("svg");
    assert!(svg.starts_with("<svg") && svg.contains("</svg>"));
    // `/favicon.ico`: the same icon, so a browser asking there finds one.
    let res = app.get("/favicon.ico").await;
    assert_eq!(res.status().as_u16(), 200);
    assert_eq!(
        header(&res, "content-type").as_deref(),
        Some("image/svg+xml")
    );
    assert_eq!(res.text().await.expect("svg"), svg);

    let res = app.get("/app/manifest.webmanifest").await;
    assert_eq!(res.status().as_u16(), 200);
    assert_eq!(
        header(&res, "content-type").as_deref(),
        Some("application/manifest+json")
    );
    let manifest: Value = res.json().await.expect("JSON");
    assert_eq!(manifest["name"], "Kultiva");
    assert_eq!(manifest["start_url"], "/app");
    assert_eq!(manifest["display"], "standalone");
    assert_eq!(manifest["icons"][0]["src"], icon.as_str());
    assert_eq!(manifest["icons"][0]["type"], "image/svg+xml");
    // The home-screen sizes as PNGs of those sizes (the same drawing), the 192 one also the
    // page's apple-touch-icon.
    for (i, size) in [(1, 192u32), (2, 512)] {
        let entry = &manifest["icons"][i];
        assert_eq!(entry["sizes"], format!("{size}x{size}"));
        assert_eq!(entry["type"], "image/png");
        let src = entry["src"].as_str().expect("src");
        let res = app.get(src).await;
        assert_eq!(res.status().as_u16(), 200, "{src}");
        assert_eq!(header(&res, "content-type").as_deref(), Some("image/png"));
        let png = res.bytes().await.expect("png");
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        // IHDR: width and height, big-endian, at bytes 16..24.
        assert_eq!(
            u32::from_be_bytes([png[16], png[17], png[18], png[19]]),
            size
        );
        assert_eq!(
            u32::from_be_bytes([png[20], png[21], png[22], png[23]]),
            size
        );
        if size == 192 {
            assert!(page.has(&format!(r#"<link rel="apple-touch-icon" href="{src}">"#)));
        }
    }
}

#[tokio::test]
async fn sign_up_signs_in_at_once_mails_the_link_reminds_and_names_the_garden_in_german() {
    let sink = Sink::start().await;
    let app = mail_app(
        &own_database("web_first").await,
        &sink.url(),
        &[("FRONTEND_URL", "https://garden.example.test/app")],
    )
    .await;
    let email = address("webfirst");
    let mut b = Browser::new(&app, "de-DE,de;q=0.9");
    let csrf = b.get("/app/signup").await.csrf();
    let made = b
        .post(
            "/app/signup",
            &[
                ("_csrf", &csrf),
                ("email", &email),
                ("password", PASSWORD),
                ("display_name", "Gärtnerin Test"),
            ],
        )
        .await;
    // Signed in at once: a session cookie and on to the gardens, no "then sign in" page.
    assert_eq!(
        (made.status, made.location()),
        (303, Some("/app")),
        "{}",
        made.body
    );
    assert!(b.cookies.contains_key("kv_session"));
    let (slug, name) = personal_garden(&app, &email).await;
    assert_eq!(name, "Garten von Gärtnerin Test");
    let home = b.get("/app").await;
    assert_eq!(home.location(), Some(format!("/app/g/{slug}").as_str()));
    let today = b.get(&format!("/app/g/{slug}")).await;
    assert_eq!(today.status, 200, "{}", today.body);
    assert!(today.has("Garten von Gärtnerin Test"), "{}", today.body);
    assert!(!today.has("'s garden"));
    // The reminder, on this page and the next, until the address is confirmed.
    let banner =
        format!("Bitte bestätige deine E-Mail-Adresse: Wir haben einen Link an {email} geschickt.");
    assert!(today.has(&banner), "{}", today.body);
    assert!(b.get("/app/settings").await.has(&banner));

    // The confirmation mail went out all the same, and its link works.
    let mails = sink.wait_for(&email, 1).await;
    let token = link_token(&mails[0], "/app/auth/verify-email");
    let page = b
        .get(&format!("/app/auth/verify-email?token={token}"))
        .await;
    let confirmed = b
        .post(
            "/app/auth/verify-email",
            &[("_csrf", &page.csrf()), ("token", &token)],
        )
        .await;
    assert_eq!(confirmed.status, 303, "{}", confirmed.body);
    // The first confirmation ends the sessions made before it (whoever signed up may not
    // have owned the address); signed in again, no more reminder.
    b.sign_in(&email, PASSWORD).await;
    let today = b.get(&format!("/app/g/{slug}")).await;
    assert_eq!(today.status, 200);
    assert!(
        !today.has("Bitte bestätige deine E-Mail-Adresse"),
        "{}",
        today.body
    );

    // In English the garden keeps its English name; nothing of the German one.
    let english = address("webfirst-en");
    let mut e = Browser::new(&app, "en");
    let csrf = e.get("/app/signup").await.csrf();
    let made = e
        .post(
            "/app/signup",
            &[
                ("_csrf", &csrf),
                ("email", &english),
                ("password", PASSWORD),
                ("display_name", "Gärtnerin Test"),
            ],
        )
        .await;
    assert_eq!(made.status, 303, "{}", made.body);
    let (_, name) = personal_garden(&app, &english).await;
    assert_eq!(name, "Gärtnerin Test's garden");
    let garden = e.get("/app").await.location().expect("garden").to_owned();
    assert!(e.get(&garden).await.has(&format!(
        "Please confirm your e-mail address: we sent a link to {english}."
    )));
    // The REST registration is unchanged: 201, no session cookie for the pages.
    let rest = address("webfirst-rest");
    let res = app
        .client
        .post(app.url("/api/v1/auth/register"))
        .json(&serde_json::json!({
            "email": rest, "password": PASSWORD, "display_name": "Rest Grower"
        }))
        .send()
        .await
        .expect("sent");
    assert_eq!(res.status().as_u16(), 201);
    assert!(!crate::support::set_cookies(&res).contains_key("kv_session"));
    assert_eq!(personal_garden(&app, &rest).await.1, "Rest Grower's garden");
}

/// What the onboarding service says of a garden: (kit applied, zone set, plants).
async fn onboarding_of(app: &TestApp, t: &kultiva::tenancy::TenantRecord) -> (bool, bool, bool) {
    let st = kultiva::garden::onboarding::service::status(&app.state, t, uuid::Uuid::nil())
        .await
        .expect("status");
    let done = |step: &str| st.steps.iter().any(|s| s.step == step && s.done);
    (st.kit.is_some(), done("hardiness_zone"), done("plants"))
}

#[tokio::test]
async fn a_new_gardens_today_offers_first_steps_and_sets_it_up_from_a_starter_kit() {
    let app = TestApp::full().await;
    let kit = crate::onboarding::kit_key(&app).await;
    let t = app.tenant("wstart").await;
    let slug = t.slug.as_str().to_owned();
    let today = format!("/app/g/{slug}");
    let apply = format!("/app/g/{slug}/start/kit");
    let admin = app.member(&t, kultiva::auth::Role::Admin).await;
    let grower = app.member(&t, kultiva::auth::Role::Grower).await;

    // Both languages: the steps with their links and the kits, named in the page's language.
    for (lang, title, kit_name, step) in [
        ("en", "First steps", "Fixture kit", "Add the first plants"),
        (
            "de",
            "Erste Schritte",
            "Testset",
            "Die ersten Pflanzen anlegen",
        ),
    ] {
        let mut b = Browser::new(&app, lang);
        b.sign_in(&admin.email, PASSWORD).await;
        let page = b.get(&today).await;
        assert_eq!(page.status, 200, "{}", page.body);
        assert!(page.has(title), "{}", page.body);
        assert!(page.has(kit_name), "{}", page.body);
        assert!(
            page.has(&format!(r#"<a href="/app/g/{slug}/plants/new">{step}</a>"#)),
            "{}",
            page.body
        );
        assert!(page.has(&format!(r#"value="{kit}""#)));
        assert!(page.has(&format!(r#"action="{apply}""#)));
    }

    // A grower reads the steps but applies no kit (administrators do, as on REST).
    let mut g = Browser::new(&app, "en");
    g.sign_in(&grower.email, PASSWORD).await;
    let page = g.get(&today).await;
    assert!(page.has("An administrator of this garden can set it up"));
    assert!(!page.has(&format!(r#"action="{apply}""#)));
    let csrf = page.csrf();
    let refused = g.post(&apply, &[("_csrf", &csrf), ("kit_key", &kit)]).await;
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert_eq!(onboarding_of(&app, &t).await, (false, false, false));

    let mut b = Browser::new(&app, "en");
    b.sign_in(&admin.email, PASSWORD).await;
    let csrf = b.csrf(&today).await;
    // Without the CSRF value, or without a kit chosen: refused, nothing set up.
    let forged = b.post(&apply, &[("kit_key", &kit)]).await;
    assert_eq!(forged.status, 403);
    let none = b
        .post(&apply, &[("_csrf", &csrf), ("hardiness_zone", "7b")])
        .await;
    assert_eq!(none.status, 422, "{}", none.body);
    assert!(none.has("Starter kit: "), "{}", none.body);
    assert_eq!(onboarding_of(&app, &t).await, (false, false, false));

    // The kit with a zone: the site, its spot and the plants, then Today says so and the
    // card is gone (zone, site and plants are there).
    let done = b
        .post(
            &apply,
            &[
                ("_csrf", &csrf),
                ("kit_key", &kit),
                ("hardiness_zone", "7b"),
                ("site_name", "Balcony south"),
            ],
        )
        .await;
    assert_eq!(done.status, 303, "{}", done.body);
    assert_eq!(done.location(), Some(format!("{today}?done=kit").as_str()));
    assert_eq!(onboarding_of(&app, &t).await, (true, true, true));
    let sites = kultiva::garden::sites::service::list_sites(
        &app.state,
        &t,
        kultiva::values::page::PageRequest { skip: 0, limit: 10 },
    )
    .await
    .expect("sites");
    assert_eq!(sites.items.len(), 1);
    assert_eq!(sites.items[0].name, "Balcony south");
    let page = b.get(&format!("{today}?done=kit")).await;
    assert!(page.has("The garden is set up"), "{}", page.body);
    assert!(!page.has("First steps"));

    // A second kit: refused plainly, nothing added.
    let again = b.post(&apply, &[("_csrf", &csrf), ("kit_key", &kit)]).await;
    assert_eq!(again.status, 409, "{}", again.body);
    assert!(again.has("A starter kit was applied to this garden already"));
    let sites = kultiva::garden::sites::service::list_sites(
        &app.state,
        &t,
        kultiva::values::page::PageRequest { skip: 0, limit: 10 },
    )
    .await
    .expect("sites");
    assert_eq!(sites.items.len(), 1, "no second site");
}
