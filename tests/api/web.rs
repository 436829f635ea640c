//! The web pages (`/app`) over real HTTP against PostgreSQL and Redis, as a browser without
//! JavaScript uses them (a cookie jar, form posts, redirects read one at a time) and as htmx
//! does (the `HX-Request` header): headers and policy, languages, sign-up and sign-in with
//! their refusals, CSRF, the session's end with logout-all and sign-out, Today with care
//! confirmed in place, roles and another person's garden.

use std::collections::BTreeMap;

use kultiva::auth::Role;
use serde_json::{Value, json};

use crate::garden::species;
use crate::mail::{Sink, address, link_token, mail_app, own_database};
use crate::support::{PASSWORD, TestApp, TestUser, set_cookies, unique_slug};

const TOMATO: &str = "Fixtura tomatoides";

/// A browser without JavaScript: its cookies, its language (shared by the web test modules).
pub(crate) struct Browser<'a> {
    app: &'a TestApp,
    pub(crate) cookies: BTreeMap<String, String>,
    lang: &'static str,
}

/// One answer: status, headers, the page.
pub(crate) struct Page {
    pub(crate) status: u16,
    pub(crate) headers: reqwest::header::HeaderMap,
    pub(crate) set_cookies: BTreeMap<String, (String, String)>,
    pub(crate) body: String,
}

impl Page {
    pub(crate) fn location(&self) -> Option<&str> {
        self.headers.get("location").and_then(|v| v.to_str().ok())
    }

    pub(crate) fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }

    /// The CSRF value of the page's first form.
    pub(crate) fn csrf(&self) -> String {
        let re = regex::Regex::new(r#"name="_csrf" value="([^"]*)""#).expect("pattern");
        re.captures(&self.body)
            .map(|c| c[1].to_owned())
            .unwrap_or_else(|| panic!("no CSRF field in {}", self.body))
    }

    pub(crate) fn has(&self, text: &str) -> bool {
        self.body.contains(text)
    }
}

impl<'a> Browser<'a> {
    pub(crate) fn new(app: &'a TestApp, lang: &'static str) -> Self {
        Self {
            app,
            cookies: BTreeMap::new(),
            lang,
        }
    }

    pub(crate) fn cookie_header(&self) -> String {
        self.cookies
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("; ")
    }

    pub(crate) async fn send(&mut self, req: reqwest::RequestBuilder) -> Page {
        let mut req = req.header("accept-language", self.lang);
        if !self.cookies.is_empty() {
            req = req.header("cookie", self.cookie_header());
        }
        let res = req.send().await.expect("request sent");
        let set = set_cookies(&res);
        for (name, (value, line)) in &set {
            if value.is_empty() || line.to_ascii_lowercase().contains("max-age=0") {
                self.cookies.remove(name);
            } else {
                self.cookies.insert(name.clone(), value.clone());
            }
        }
        Page {
            status: res.status().as_u16(),
            headers: res.headers().clone(),
            set_cookies: set,
            body: res.text().await.expect("body"),
        }
    }

    pub(crate) async fn get(&mut self, path: &str) -> Page {
        let req = self.app.client.get(self.app.url(path));
        self.send(req).await
    }

    pub(crate) async fn post(&mut self, path: &str, form: &[(&str, &str)]) -> Page {
        let req = self
            .app
            .client
            .post(self.app.url(path))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(encode(form));
        self.send(req).await
    }

    pub(crate) async fn htmx_post(&mut self, path: &str, form: &[(&str, &str)]) -> Page {
        let req = self
            .app
            .client
            .post(self.app.url(path))
            .header("hx-request", "true")
            .header("content-type", "application/x-www-form-urlencoded")
            .body(encode(form));
        self.send(req).await
    }

    /// A multipart form as a phone's browser sends it: text fields and files.
    pub(crate) async fn post_multipart(
        &mut self,
        path: &str,
        form: &[(&str, &str)],
        files: &[(&str, &str, &str, Vec<u8>)],
    ) -> Page {
        let boundary = "----kultiva-test-boundary-7MA4YWxkTrZu0gW";
        let mut body: Vec<u8> = Vec::new();
        for (name, value) in form {
            body.extend_from_slice(
                format!(
                    "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
                )
                .as_bytes(),
            );
        }
        for (name, filename, content_type, bytes) in files {
            body.extend_from_slice(
                format!(
                    "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"; filename=\"{filename}\"\r\nContent-Type: {content_type}\r\n\r\n"
                )
                .as_bytes(),
            );
            body.extend_from_slice(bytes);
            body.extend_from_slice(b"\r\n");
        }
        body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
        let req = self
            .app
            .client
            .post(self.app.url(path))
            .header(
                "content-type",
                format!("multipart/form-data; boundary={boundary}"),
            )
            .body(body);
        self.send(req).await
    }

    /// A page's CSRF value (the session's token, masked afresh for every response).
    pub(crate) async fn csrf(&mut self, path: &str) -> String {
        self.get(path).await.csrf()
    }

    /// Signs in through the page and follows the redirect home.
    pub(crate) async fn sign_in(&mut self, email: &str, password: &str) -> Page {
        let form = self.get("/app/login").await;
        let csrf = form.csrf();
        let done = self
            .post(
                "/app/login",
                &[("_csrf", &csrf), ("email", email), ("password", password)],
            )
            .await;
        assert_eq!(done.status, 303, "{}", done.body);
        done
    }
}

/// A form body as a browser sends it.
pub(crate) fn encode(form: &[(&str, &str)]) -> String {
    url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(form)
        .finish()
}

async fn user_count(app: &TestApp, email: &str) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM platform.users WHERE email = $1")
        .bind(email)
        .fetch_one(app.state.platform_pool())
        .await
        .expect("count")
}

pub(crate) async fn personal_slug(app: &TestApp, user_key: &str) -> String {
    sqlx::query_scalar(
        "SELECT t.slug FROM platform.tenants t JOIN platform.memberships m ON m.tenant_id = t.id
         WHERE m.user_id = $1::uuid AND t.kind = 'personal'",
    )
    .bind(user_key)
    .fetch_one(app.state.platform_pool())
    .await
    .expect("personal garden")
}

#[tokio::test]
async fn pages_carry_their_policy_speak_the_browsers_language_and_serve_their_files() {
    let app = TestApp::full().await;
    let mut de = Browser::new(&app, "de-DE,de;q=0.9,en;q=0.5");
    let page = de.get("/app/login").await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains(r#"<html lang="de">"#), "{}", page.body);
    assert!(page.body.contains("Anmelden"));
    let csp = page.header("content-security-policy");
    for part in [
        "script-src 'self'",
        "frame-ancestors 'none'",
        "form-action 'self'",
        "default-src 'none'",
    ] {
        assert!(csp.contains(part), "{csp}");
    }
    assert!(
        !csp.contains("unsafe-inline") && !csp.contains("unsafe-eval"),
        "{csp}"
    );
    assert_eq!(page.header("cache-control"), "no-store");
    assert_eq!(page.header("x-frame-options"), "DENY");
    assert_eq!(page.header("x-content-type-options"), "nosniff");
    // No inline script anywhere: every <script> names a file of this service.
    let scripts = regex::Regex::new(r"<script([^>]*)>").expect("pattern");
    let script_src = regex::Regex::new(r#"src="(/app/assets/[^"]+)""#).expect("pattern");
    let mut files = Vec::new();
    for tag in scripts.captures_iter(&page.body) {
        let src = script_src
            .captures(&tag[1])
            .unwrap_or_else(|| panic!("inline script: {}", &tag[0]))[1]
            .to_owned();
        files.push(src);
    }
    let sheet = regex::Regex::new(r#"href="(/app/assets/app-[0-9a-f]+\.css)""#)
        .expect("pattern")
        .captures(&page.body)
        .expect("stylesheet")[1]
        .to_owned();
    files.push(sheet);
    assert_eq!(files.len(), 3, "{files:?}");
    for file in &files {
        let asset = app.get(file).await;
        assert_eq!(asset.status().as_u16(), 200, "{file}");
        let cache = crate::support::header(&asset, "cache-control").unwrap_or_default();
        assert!(cache.contains("immutable"), "{file}: {cache}");
        assert!(!asset.bytes().await.expect("bytes").is_empty());
    }
    // Assets go gzipped to a browser that takes gzip only (the same bytes once inflated;
    // brotli and pages are tested in `web_first`).
    let htmx = files.iter().find(|f| f.contains("/htmx-")).expect("htmx");
    let plain = app.get(htmx).await.bytes().await.expect("bytes");
    let zipped = app
        .client
        .get(app.url(htmx))
        .header("accept-encoding", "br;q=0, gzip;q=0.8")
        .send()
        .await
        .expect("asset");
    assert_eq!(
        crate::support::header(&zipped, "content-encoding").as_deref(),
        Some("gzip")
    );
    assert_eq!(
        crate::support::header(&zipped, "vary").as_deref(),
        Some("accept-encoding")
    );
    let zipped = zipped.bytes().await.expect("bytes");
    assert!(
        zipped.len() * 2 < plain.len(),
        "{} vs {}",
        zipped.len(),
        plain.len()
    );
    let mut inflated = Vec::new();
    std::io::Read::read_to_end(
        &mut flate2::read::GzDecoder::new(&zipped[..]),
        &mut inflated,
    )
    .expect("gunzip");
    assert_eq!(inflated, plain.to_vec());
    let refused = app
        .client
        .get(app.url(htmx))
        .header("accept-encoding", "gzip;q=0, identity")
        .send()
        .await
        .expect("asset");
    assert_eq!(crate::support::header(&refused, "content-encoding"), None);
    let page_zipped = app
        .client
        .get(app.url("/app/login"))
        .header("accept-encoding", "gzip")
        .send()
        .await
        .expect("page");
    // A page is compressed too: its CSRF values are masked per response.
    assert_eq!(
        crate::support::header(&page_zipped, "content-encoding").as_deref(),
        Some("gzip")
    );
    assert_eq!(
        app.get("/app/assets/htmx-000000.js")
            .await
            .status()
            .as_u16(),
        404
    );
    // The form cookie: HttpOnly, SameSite=Lax, only for /app.
    let (_, line) = page.set_cookies.get("kv_form").expect("form cookie");
    let line = line.to_ascii_lowercase();
    assert!(
        line.contains("httponly") && line.contains("samesite=lax") && line.contains("path=/app"),
        "{line}"
    );

    let mut en = Browser::new(&app, "fr-FR, en;q=0.3");
    let page = en.get("/app/login").await;
    assert!(page.body.contains(r#"<html lang="en">"#) && page.body.contains("Sign in"));
    // Signed out, a garden page sends to the sign-in and back.
    let page = en.get("/app/g/anything").await;
    assert_eq!(page.status, 303);
    assert_eq!(
        page.location(),
        Some("/app/login?next=%2Fapp%2Fg%2Fanything")
    );
    // The visitor's language switch is a cookie, and the page speaks it from then on.
    let csrf = en.get("/app/login").await.csrf();
    let switched = en
        .post(
            "/app/lang",
            &[("_csrf", &csrf), ("lang", "de"), ("back", "/app/login")],
        )
        .await;
    assert_eq!(
        (switched.status, switched.location()),
        (303, Some("/app/login"))
    );
    assert!(
        en.get("/app/login")
            .await
            .body
            .contains(r#"<html lang="de">"#)
    );
    // A switch back to another site is not followed.
    let csrf = en.get("/app/login").await.csrf();
    let away = en
        .post(
            "/app/lang",
            &[
                ("_csrf", &csrf),
                ("lang", "en"),
                ("back", "https://evil.example/"),
            ],
        )
        .await;
    assert_eq!(away.location(), Some("/app"));
}

#[tokio::test]
async fn sign_up_and_sign_in_refuse_bad_forms_and_foreign_posts_and_create_nothing() {
    let app = TestApp::full().await;
    let mut b = Browser::new(&app, "en");
    let email = format!("{}@example.test", unique_slug("webuser"));
    let form = b.get("/app/signup").await;
    let csrf = form.csrf();

    // A post without the form's CSRF value (another site's form): 403, no account.
    let foreign = b
        .post(
            "/app/signup",
            &[
                ("email", &email),
                ("password", PASSWORD),
                ("display_name", "Web"),
            ],
        )
        .await;
    assert_eq!(foreign.status, 403, "{}", foreign.body);
    let forged = b
        .post(
            "/app/signup",
            &[
                ("_csrf", "x".repeat(43).as_str()),
                ("email", &email),
                ("password", PASSWORD),
                ("display_name", "Web"),
            ],
        )
        .await;
    assert_eq!(forged.status, 403);
    assert_eq!(user_count(&app, &email).await, 0);

    // The REST reader's rules: a short password and a bad address, each named.
    let bad = b
        .post(
            "/app/signup",
            &[
                ("_csrf", &csrf),
                ("email", "not-an-address"),
                ("password", "short"),
                ("display_name", "Web"),
            ],
        )
        .await;
    assert_eq!(bad.status, 422, "{}", bad.body);
    assert!(
        bad.body.contains("E-mail address: not a valid value."),
        "{}",
        bad.body
    );
    assert!(bad.body.contains("Password: too short."), "{}", bad.body);
    assert_eq!(user_count(&app, "not-an-address").await, 0);

    let made = b
        .post(
            "/app/signup",
            &[
                ("_csrf", &csrf),
                ("email", &email),
                ("password", PASSWORD),
                ("display_name", "Web Grower"),
            ],
        )
        .await;
    // No confirmation required: signed in at once, on to the gardens.
    assert_eq!(
        (made.status, made.location()),
        (303, Some("/app")),
        "{}",
        made.body
    );
    assert!(b.cookies.contains_key("kv_session"));
    assert_eq!(user_count(&app, &email).await, 1);
    // Signed out, the same address again (another browser): refused on the page, still one
    // account.
    let mut b = Browser::new(&app, "en");
    let csrf = b.get("/app/signup").await.csrf();
    let again = b
        .post(
            "/app/signup",
            &[
                ("_csrf", &csrf),
                ("email", &email),
                ("password", PASSWORD),
                ("display_name", "Twin"),
            ],
        )
        .await;
    assert_eq!(again.status, 409, "{}", again.body);
    assert_eq!(user_count(&app, &email).await, 1);

    // A wrong password: 401 on the page, no session cookie.
    let csrf = b.get("/app/login").await.csrf();
    let wrong = b
        .post(
            "/app/login",
            &[
                ("_csrf", &csrf),
                ("email", &email),
                ("password", "wrong password!"),
            ],
        )
        .await;
    assert_eq!(wrong.status, 401);
    assert!(wrong.body.contains("Wrong e-mail address or password."));
    assert!(!b.cookies.contains_key("kv_session"));
    // Without the form's value the right password does not sign in either.
    let foreign = b
        .post("/app/login", &[("email", &email), ("password", PASSWORD)])
        .await;
    assert_eq!(foreign.status, 403);
    assert!(!b.cookies.contains_key("kv_session"));

    let done = b.sign_in(&email, PASSWORD).await;
    assert_eq!(done.location(), Some("/app"));
    let (value, line) = done.set_cookies.get("kv_session").expect("session cookie");
    let line = line.to_ascii_lowercase();
    assert!(
        line.contains("httponly") && line.contains("samesite=lax") && line.contains("path=/app"),
        "{line}"
    );
    assert!(
        !line.contains("max-age"),
        "a session cookie unless asked to stay: {line}"
    );
    // Never readable by the page: the cookie's value is nowhere in the HTML.
    let home = b.get("/app").await;
    assert_eq!(home.status, 303, "one garden: straight into it");
    let today = b.get(home.location().expect("to the garden")).await;
    assert_eq!(today.status, 200, "{}", today.body);
    assert!(!today.body.contains(value.as_str()));
    assert!(today.body.contains("Care due") && today.body.contains("Safety intervals running"));
    // A signed-in person on the sign-in page goes home.
    assert_eq!(b.get("/app/login").await.location(), Some("/app"));
}

/// A new tomato plant in the garden and the key of its watering reminder, due today.
pub(crate) async fn plant_due_for_water(
    app: &TestApp,
    user: &TestUser,
    slug: &str,
    name: &str,
) -> (String, String) {
    let tomato = species(app, TOMATO).await;
    let res = app
        .rest_as(user)
        .post(
            &format!("/api/v1/t/{slug}/plant-instances"),
            &json!({"species_key": tomato, "name": name}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 201);
    let plant: Value = res.json().await.expect("plant");
    let plant_key = plant["key"].as_str().expect("key").to_owned();
    let res = app
        .rest_as(user)
        .get(&format!("/api/v1/t/{slug}/care-reminders"))
        .await;
    let due: Value = res.json().await.expect("due");
    let watering = due["due_today"]
        .as_array()
        .and_then(|l| {
            l.iter()
                .find(|r| r["reminder_type"] == "watering" && r["plant_key"] == plant_key.as_str())
        })
        .unwrap_or_else(|| panic!("watering due today: {due}"));
    let reminder_key = watering["reminder_key"].as_str().expect("key").to_owned();
    (plant_key, reminder_key)
}

async fn care_log_count(app: &TestApp, user: &TestUser, slug: &str, plant: &str) -> usize {
    let res = app
        .rest_as(user)
        .get(&format!(
            "/api/v1/t/{slug}/care-reminders/plants/{plant}/log"
        ))
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let log: Value = res.json().await.expect("log");
    log.as_array().map_or(0, Vec::len)
}

#[tokio::test]
async fn today_confirms_care_in_place_and_refuses_foreign_posts_viewers_and_other_gardens() {
    let app = TestApp::full().await;
    let grower = app.user("webcare").await;
    let slug = personal_slug(&app, &grower.key).await;
    let (plant, reminder) = plant_due_for_water(&app, &grower, &slug, "Balcony tomato").await;
    let mut b = Browser::new(&app, "de");
    b.sign_in(&grower.email, PASSWORD).await;
    let today = b.get(&format!("/app/g/{slug}")).await;
    assert_eq!(today.status, 200, "{}", today.body);
    assert!(
        today.body.contains("Balcony tomato") && today.body.contains("Gießen"),
        "{}",
        today.body
    );
    let csrf = today.csrf();
    let confirm = format!("/app/g/{slug}/care/{reminder}/confirm");

    // Another site's post (no or a foreign CSRF value): 403, nothing logged.
    let before = care_log_count(&app, &grower, &slug, &plant).await;
    let foreign = b.htmx_post(&confirm, &[("plant_key", &plant)]).await;
    assert_eq!(foreign.status, 403);
    let forged = b
        .post(&confirm, &[("_csrf", "forged"), ("plant_key", &plant)])
        .await;
    assert_eq!(forged.status, 403);
    assert_eq!(care_log_count(&app, &grower, &slug, &plant).await, before);

    // htmx: the list item comes back as it now reads; the care is logged once.
    let done = b
        .htmx_post(&confirm, &[("_csrf", &csrf), ("plant_key", &plant)])
        .await;
    assert_eq!(done.status, 200, "{}", done.body);
    assert!(done.body.starts_with("<li"), "a fragment: {}", done.body);
    assert!(
        done.body.contains("Eingetragen. Nächstes Mal:"),
        "{}",
        done.body
    );
    assert!(!done.body.contains("<html"));
    assert_eq!(
        care_log_count(&app, &grower, &slug, &plant).await,
        before + 1
    );
    // The reminder moved on: Today no longer lists the watering as due.
    let today = b.get(&format!("/app/g/{slug}")).await;
    assert!(
        !today.body.contains(&format!("care-{reminder}")),
        "{}",
        today.body
    );

    // The same through a plain form: a redirect back to Today with the news.
    let (plant2, reminder2) = plant_due_for_water(&app, &grower, &slug, "Second tomato").await;
    let snoozed = b
        .post(
            &format!("/app/g/{slug}/care/{reminder2}/snooze"),
            &[("_csrf", &csrf), ("plant_key", &plant2), ("days", "1")],
        )
        .await;
    assert_eq!(snoozed.status, 303, "{}", snoozed.body);
    assert_eq!(
        snoozed.location(),
        Some(format!("/app/g/{slug}?done=snoozed").as_str())
    );
    // A snooze of 31 days is out of the REST rule's range: refused, nothing moved.
    let far = b
        .htmx_post(
            &format!("/app/g/{slug}/care/{reminder2}/snooze"),
            &[("_csrf", &csrf), ("plant_key", &plant2), ("days", "31")],
        )
        .await;
    assert_eq!(far.status, 422, "{}", far.body);

    // A viewer of the garden sees Today without buttons and cannot post.
    let t = kultiva::tenancy::registry::find_by_slug(
        app.state.platform_pool(),
        &kultiva::tenancy::TenantSlug::parse(&slug).expect("slug"),
    )
    .await
    .expect("read")
    .expect("tenant");
    let viewer = app.member(&t, Role::Viewer).await;
    let mut v = Browser::new(&app, "en");
    v.sign_in(&viewer.email, PASSWORD).await;
    let page = v.get(&format!("/app/g/{slug}")).await;
    assert_eq!(page.status, 200);
    assert!(
        !page.body.contains("/care/"),
        "no care buttons for a viewer"
    );
    let vcsrf = page.csrf();
    let refused = v
        .post(
            &format!("/app/g/{slug}/care/{reminder2}/confirm"),
            &[("_csrf", &vcsrf), ("plant_key", &plant2)],
        )
        .await;
    assert_eq!(refused.status, 403);

    // Someone else's garden: the same 404 as a garden that does not exist.
    let stranger = app.user("webstranger").await;
    let mut s = Browser::new(&app, "en");
    s.sign_in(&stranger.email, PASSWORD).await;
    let theirs = s.get(&format!("/app/g/{slug}")).await;
    let none = s.get("/app/g/no-such-garden-here").await;
    assert_eq!((theirs.status, none.status), (404, 404));
    assert!(!theirs.body.contains("Balcony tomato"));
    let scsrf = none.csrf();
    let post = s
        .post(&confirm, &[("_csrf", &scsrf), ("plant_key", &plant)])
        .await;
    assert_eq!(post.status, 404);
    assert_eq!(
        care_log_count(&app, &grower, &slug, &plant).await,
        before + 1
    );
}

#[tokio::test]
async fn a_web_session_ends_with_sign_out_logout_all_and_a_password_reset() {
    let app = TestApp::full().await;
    let user = app.user("websession").await;
    let slug = personal_slug(&app, &user.key).await;
    let garden = format!("/app/g/{slug}");

    // Sign-out ends this session (and only this one).
    let mut one = Browser::new(&app, "en");
    let mut two = Browser::new(&app, "en");
    one.sign_in(&user.email, PASSWORD).await;
    two.sign_in(&user.email, PASSWORD).await;
    let kept = one.cookies.get("kv_session").cloned().expect("cookie");
    let csrf = one.get(&garden).await.csrf();
    let out = one.post("/app/logout", &[("_csrf", &csrf)]).await;
    assert_eq!(
        (out.status, out.location()),
        (303, Some("/app/login?done=signed-out"))
    );
    assert!(!one.cookies.contains_key("kv_session"));
    // The old cookie is worthless now, even replayed.
    one.cookies.insert("kv_session".to_owned(), kept);
    assert_eq!(one.get(&garden).await.status, 303);
    assert_eq!(two.get(&garden).await.status, 200);

    // A sign-out post from another site does nothing.
    let forged = two.post("/app/logout", &[("_csrf", "forged")]).await;
    assert_eq!(forged.status, 403);
    assert_eq!(two.get(&garden).await.status, 200);

    // Logout-all through the API ends the web session too.
    let csrf = user.session.csrf.clone().expect("csrf cookie");
    let res = app
        .client
        .post(app.url("/api/v1/auth/logout-all"))
        .header("authorization", user.bearer())
        .header("cookie", user.session.cookie_header())
        .header("x-csrf-token", csrf)
        .send()
        .await
        .expect("sent");
    assert!(res.status().is_success(), "{}", res.status());
    let after = two.get(&garden).await;
    assert_eq!(after.status, 303);
    assert!(
        after
            .location()
            .is_some_and(|l| l.starts_with("/app/login"))
    );

    // The language switch of a signed-in person is their preference.
    let mut three = Browser::new(&app, "en");
    three.sign_in(&user.email, PASSWORD).await;
    let csrf = three.get(&garden).await.csrf();
    let switched = three
        .post(
            "/app/lang",
            &[("_csrf", &csrf), ("lang", "de"), ("back", &garden)],
        )
        .await;
    assert_eq!(switched.status, 303);
    let session = app.login(&user.email, PASSWORD).await;
    let prefs: Value = app
        .rest_auth(Some(&format!("Bearer {}", session.access)))
        .get("/api/v1/user-preferences")
        .await
        .json()
        .await
        .expect("prefs");
    assert_eq!(prefs["locale"], "de", "{prefs}");
    assert!(
        three
            .get(&garden)
            .await
            .body
            .contains(r#"<html lang="de">"#)
    );
}

#[tokio::test]
async fn the_mailed_links_lead_to_the_pages_confirmation_and_reset_end_to_end() {
    let sink = Sink::start().await;
    let app = mail_app(
        &own_database("web_links").await,
        &sink.url(),
        &[
            ("FRONTEND_URL", "https://garden.example.test/app"),
            ("REQUIRE_EMAIL_VERIFICATION", "true"),
        ],
    )
    .await;
    let email = address("weblinks");
    let mut b = Browser::new(&app, "de");
    let csrf = b.get("/app/signup").await.csrf();
    let made = b
        .post(
            "/app/signup",
            &[
                ("_csrf", &csrf),
                ("email", &email),
                ("password", PASSWORD),
                ("display_name", "Linda"),
            ],
        )
        .await;
    assert_eq!(made.status, 201, "{}", made.body);
    assert!(
        made.body.contains("Wir haben dir eine Mail geschickt"),
        "{}",
        made.body
    );

    // Not confirmed yet: the sign-in page says so and no session starts.
    let csrf = b.get("/app/login").await.csrf();
    let early = b
        .post(
            "/app/login",
            &[("_csrf", &csrf), ("email", &email), ("password", PASSWORD)],
        )
        .await;
    assert_eq!(early.status, 403);
    assert!(
        early.body.contains("bestätige zuerst deine E-Mail-Adresse"),
        "{}",
        early.body
    );
    assert!(!b.cookies.contains_key("kv_session"));

    // The mailed link opens the confirmation page; only its button uses the token.
    let mails = sink.wait_for(&email, 1).await;
    let token = link_token(&mails[0], "/app/auth/verify-email");
    let page = b
        .get(&format!("/app/auth/verify-email?token={token}"))
        .await;
    assert_eq!(page.status, 200);
    let csrf = b.get("/app/login").await.csrf();
    let still = b
        .post(
            "/app/login",
            &[("_csrf", &csrf), ("email", &email), ("password", PASSWORD)],
        )
        .await;
    assert_eq!(still.status, 403, "opening the link alone confirms nothing");
    let confirmed = b
        .post(
            "/app/auth/verify-email",
            &[("_csrf", &page.csrf()), ("token", &token)],
        )
        .await;
    assert_eq!(
        (confirmed.status, confirmed.location()),
        (303, Some("/app/login?done=verified"))
    );
    let again = b
        .post(
            "/app/auth/verify-email",
            &[("_csrf", &page.csrf()), ("token", &token)],
        )
        .await;
    assert_eq!(again.status, 422, "the link works once");
    b.sign_in(&email, PASSWORD).await;
    let home = b.get("/app").await;
    assert_eq!(b.get(home.location().expect("garden")).await.status, 200);

    // A reset requested on the page: the same answer for an unknown address, one mail for ours.
    let mut r = Browser::new(&app, "en");
    let csrf = r.get("/app/auth/reset-password").await.csrf();
    let unknown = address("nobody");
    for who in [&email, &unknown] {
        let asked = r
            .post(
                "/app/auth/reset-password",
                &[("_csrf", &csrf), ("email", who)],
            )
            .await;
        assert_eq!(asked.status, 202);
        assert!(asked.body.contains("If the address belongs to an account"));
    }
    let mails = sink.wait_for(&email, 2).await;
    let token = link_token(&mails[1], "/app/auth/reset-password");
    let page = r
        .get(&format!("/app/auth/reset-password?token={token}"))
        .await;
    assert_eq!(page.status, 200);
    let csrf = page.csrf();
    let short = r
        .post(
            "/app/auth/reset-password",
            &[
                ("_csrf", &csrf),
                ("token", &token),
                ("new_password", "short"),
            ],
        )
        .await;
    assert_eq!(short.status, 422);
    let reset = r
        .post(
            "/app/auth/reset-password",
            &[
                ("_csrf", &csrf),
                ("token", &token),
                ("new_password", "a brand new password"),
            ],
        )
        .await;
    assert_eq!(
        (reset.status, reset.location()),
        (303, Some("/app/login?done=reset"))
    );
    // Every session ended with the reset, the first browser's included.
    let after = b.get("/app").await;
    assert!(
        after
            .location()
            .is_some_and(|l| l.starts_with("/app/login")),
        "{:?}",
        after.location()
    );
    let csrf = b.get("/app/login").await.csrf();
    let old = b
        .post(
            "/app/login",
            &[("_csrf", &csrf), ("email", &email), ("password", PASSWORD)],
        )
        .await;
    assert_eq!(old.status, 401);
    b.sign_in(&email, "a brand new password").await;
    assert!(sink.messages_to(&unknown).is_empty());
}

/// Pages draw from the general budget as API requests do: a signed-in person's account, a
/// visitor's address. Spent, the answer is a 429 page with `Retry-After` and the handler does
/// not run; the asset files are outside the budget.
#[tokio::test]
async fn pages_draw_from_the_general_budget_per_account_and_per_address() {
    const BUDGET: usize = 8;
    let app = TestApp::full_env(&[
        ("RATE_LIMIT_GENERAL_PER_MINUTE", "8"),
        ("RATE_LIMIT_AUTH_PER_MINUTE", "100"),
    ])
    .await;
    let user = app.user("web-budget").await;
    let mut person = Browser::new(&app, "en");
    person.sign_in(&user.email, crate::support::PASSWORD).await;
    // Signed in, the person's pages count against their account.
    let mut served = 0;
    let refused = loop {
        let page = person.get("/app").await;
        if page.status == 429 {
            break page;
        }
        // Home sends a person with one garden on to it.
        assert!(matches!(page.status, 200 | 303), "{}", page.body);
        served += 1;
        assert!(served <= BUDGET, "never limited");
    };
    assert_eq!(served, BUDGET, "the account's whole budget, no more");
    assert!(refused.header("content-type").starts_with("text/html"));
    assert!(
        refused.body.starts_with("<!DOCTYPE html>") && !refused.body.contains(r#""error""#),
        "a page alone, not the API's JSON before it: {}",
        refused.body
    );
    assert!(
        refused
            .header("retry-after")
            .parse::<u64>()
            .is_ok_and(|s| s >= 1)
    );
    assert!(
        refused
            .header("content-security-policy")
            .contains("script-src 'self'")
    );
    // The address still has budget left (the sign-in page and post, and the API's register
    // and login, took four): a visitor from it is served, then refused.
    let mut visitor = Browser::new(&app, "en");
    let mut visitor_served = 0;
    loop {
        let page = visitor.get("/app/login").await;
        if page.status == 429 {
            break;
        }
        assert_eq!(page.status, 200, "{}", page.body);
        visitor_served += 1;
        assert!(visitor_served <= BUDGET, "never limited");
    }
    assert!(
        visitor_served < BUDGET,
        "{visitor_served}: the address's own bucket"
    );
    // Assets are not counted.
    let sheet = regex::Regex::new(r#"href="(/app/assets/app-[0-9a-f]+\.css)""#)
        .expect("pattern")
        .captures(&refused.body)
        .expect("stylesheet")[1]
        .to_owned();
    for _ in 0..3 {
        assert_eq!(app.get(&sheet).await.status().as_u16(), 200);
    }
}

/// Today's garden data is kept in memory between visits and goes with the garden's next write:
/// at once on the replica that wrote (its own redirect never shows the old state), and through
/// the cache channel on every other replica; a write that rolls back announces nothing.
#[tokio::test]
async fn today_is_kept_until_the_garden_changes_here_or_on_another_replica() {
    let app = TestApp::full().await;
    let grower = app.user("webkept").await;
    let slug = personal_slug(&app, &grower.key).await;
    let (plant, _) = plant_due_for_water(&app, &grower, &slug, "Kept tomato").await;
    let t = kultiva::tenancy::registry::find_by_slug(
        app.state.platform_pool(),
        &kultiva::tenancy::TenantSlug::parse(&slug).expect("slug"),
    )
    .await
    .expect("read")
    .expect("tenant");
    let mut b = Browser::new(&app, "en");
    b.sign_in(&grower.email, PASSWORD).await;
    let today = b.get(&format!("/app/g/{slug}")).await;
    assert_eq!(today.status, 200, "{}", today.body);
    assert!(today.body.contains("Kept tomato"), "{}", today.body);

    // A change behind the service's back (no write transaction of its own, no notification):
    // Today is still the kept one, so the page did not read the garden again. (A load that
    // overlapped any invalidation, such as another test's write heard on the channel, is not
    // kept: then the page is read once more and the check repeats with a new name.)
    let schema = t.schema_name.quoted();
    let rename = |name: &str| {
        format!("UPDATE {schema}.plants SET name = '{name}' WHERE id = '{plant}'::uuid")
    };
    let mut shown = "Kept tomato".to_owned();
    let mut kept_seen = false;
    for attempt in 0..30 {
        let quiet = format!("Quiet tomato #{attempt:02}");
        sqlx::raw_sql(sqlx::AssertSqlSafe(rename(&quiet)))
            .execute(app.state.platform_pool())
            .await
            .expect("rename");
        let page = b.get(&format!("/app/g/{slug}")).await;
        if page.body.contains(&shown) && !page.body.contains(&quiet) {
            kept_seen = true;
            break;
        }
        assert!(page.body.contains(&quiet), "{}", page.body);
        shown = quiet;
    }
    assert!(kept_seen, "Today was never served from memory");

    // Another replica's write sends `g:<garden>` when it commits: this replica's listener drops
    // the garden's reads, and the next Today reads again.
    sqlx::query("SELECT pg_notify($1, $2)")
        .bind(kultiva::cache::CHANNEL)
        .bind(kultiva::cache::garden_changed(t.id))
        .execute(app.state.platform_pool())
        .await
        .expect("notify");
    let mut seen = String::new();
    for _ in 0..50 {
        seen = b.get(&format!("/app/g/{slug}")).await.body;
        if seen.contains("Quiet tomato") && !seen.contains(&shown) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(
        seen.contains("Quiet tomato") && !seen.contains(&shown),
        "{seen}"
    );

    // A write through the service: the very next Today shows it, no waiting.
    let res = app
        .rest_as(&grower)
        .patch(
            &format!("/api/v1/t/{slug}/plant-instances/{plant}"),
            &json!({"name": "Loud tomato"}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let now = b.get(&format!("/app/g/{slug}")).await;
    assert!(now.body.contains("Loud tomato"), "{}", now.body);

    // The notification belongs to the transaction: a rolled-back write sends none, a
    // committed one sends its garden's.
    let mut listener = sqlx::postgres::PgListener::connect(&crate::support::database_url())
        .await
        .expect("listen");
    listener
        .listen(kultiva::cache::CHANNEL)
        .await
        .expect("listen");
    let tx = kultiva::tenancy::TenantTx::begin(&app.state, &t)
        .await
        .expect("begin");
    tx.rollback().await.expect("rollback");
    let tx = kultiva::tenancy::TenantTx::begin(&app.state, &t)
        .await
        .expect("begin");
    tx.commit().await.expect("commit");
    let ours = kultiva::cache::garden_changed(t.id);
    let mut heard = 0;
    let until = tokio::time::Instant::now() + std::time::Duration::from_secs(3);
    while let Ok(Ok(n)) = tokio::time::timeout_at(until, listener.recv()).await {
        // The channel also carries pings and the writes of gardens of tests running beside.
        if n.payload() == ours {
            heard += 1;
        }
    }
    assert_eq!(heard, 1, "one notification: the committed write's");
}
