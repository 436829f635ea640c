//! The places, calendar and settings pages (`/app/g/{slug}/places`, `/app/g/{slug}/calendar`,
//! `/app/settings`, `/app/g/{slug}/settings`) over real HTTP, as a browser without JavaScript
//! uses them: each form's effect read back through the REST API, and what must not happen
//! checked as carefully (a post without the form's CSRF value, a member below the needed role,
//! another person's garden, a wrong current password: refused, nothing written).

use kultiva::auth::Role;
use serde_json::{Value, json};

use crate::garden::species;
use crate::support::{PASSWORD, TestApp, TestUser};
use crate::web::Browser;

async fn personal_slug(app: &TestApp, user: &TestUser) -> String {
    sqlx::query_scalar(
        "SELECT t.slug FROM platform.tenants t JOIN platform.memberships m ON m.tenant_id = t.id
         WHERE m.user_id = $1::uuid AND t.kind = 'personal'",
    )
    .bind(&user.key)
    .fetch_one(app.state.platform_pool())
    .await
    .expect("personal garden")
}

async fn tenant_of(app: &TestApp, slug: &str) -> kultiva::tenancy::TenantRecord {
    kultiva::tenancy::registry::find_by_slug(
        app.state.platform_pool(),
        &kultiva::tenancy::TenantSlug::parse(slug).expect("slug"),
    )
    .await
    .expect("read")
    .expect("tenant")
}

/// A REST read as the given credential (`Bearer …`), asserted 200.
async fn rest(app: &TestApp, auth: &str, path: &str) -> Value {
    let res = app.rest_auth(Some(auth)).get(path).await;
    assert_eq!(res.status().as_u16(), 200, "GET {path}");
    res.json().await.expect("json")
}

fn items(v: &Value) -> Vec<Value> {
    v["items"]
        .as_array()
        .or_else(|| v.as_array())
        .cloned()
        .unwrap_or_default()
}

fn key_named(list: &[Value], field: &str, name: &str) -> String {
    list.iter()
        .find(|x| x[field] == name)
        .and_then(|x| x["key"].as_str())
        .unwrap_or_else(|| panic!("no {name} in {list:?}"))
        .to_owned()
}

#[tokio::test]
async fn places_build_a_slot_tree_and_refusals_write_nothing() {
    let app = TestApp::full().await;
    let owner = app.user("webplaces").await;
    let auth = owner.bearer();
    let slug = personal_slug(&app, &owner).await;
    let tenant = tenant_of(&app, &slug).await;
    let places = format!("/app/g/{slug}/places");
    let mut b = Browser::new(&app, "en");
    b.sign_in(&owner.email, PASSWORD).await;
    let page = b.get(&places).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.has("Sites, locations and slots") && page.has("Add a site"));
    let csrf = page.csrf();

    // Another site's post: 403, no site.
    let foreign = b
        .post(
            &format!("{places}/sites"),
            &[("name", "Balcony"), ("kind", "balcony")],
        )
        .await;
    assert_eq!(foreign.status, 403);
    assert_eq!(app.site_count(&tenant).await, 0);
    // A site without a name: the form again with the field named, nothing written.
    let blank = b
        .post(
            &format!("{places}/sites"),
            &[("_csrf", &csrf), ("name", "  "), ("kind", "balcony")],
        )
        .await;
    assert_eq!(blank.status, 422, "{}", blank.body);
    assert!(blank.has("Name: too short."), "{}", blank.body);
    assert_eq!(app.site_count(&tenant).await, 0);

    // Site, location, a location inside it, a slot: the tree.
    let made = b
        .post(
            &format!("{places}/sites"),
            &[("_csrf", &csrf), ("name", "Balcony"), ("kind", "balcony")],
        )
        .await;
    assert_eq!(
        (made.status, made.location()),
        (303, Some(format!("{places}?done=site-created").as_str()))
    );
    let site = key_named(
        &items(&rest(&app, &auth, &format!("/api/v1/t/{slug}/sites")).await),
        "name",
        "Balcony",
    );
    let made = b
        .post(
            &format!("{places}/locations"),
            &[
                ("_csrf", &csrf),
                ("site_key", &site),
                ("name", "Planter box"),
                ("kind", "container"),
            ],
        )
        .await;
    assert_eq!(made.status, 303, "{}", made.body);
    let locations = items(&rest(&app, &auth, &format!("/api/v1/t/{slug}/locations")).await);
    let boxed = key_named(&locations, "name", "Planter box");
    let made = b
        .post(
            &format!("{places}/locations"),
            &[
                ("_csrf", &csrf),
                ("site_key", &site),
                ("parent_key", &boxed),
                ("name", "Left half"),
                ("kind", ""),
            ],
        )
        .await;
    assert_eq!(made.status, 303, "{}", made.body);
    let made = b
        .post(
            &format!("{places}/slots"),
            &[
                ("_csrf", &csrf),
                ("location_key", &boxed),
                ("code", "BOX1_A1"),
                ("capacity", "2"),
            ],
        )
        .await;
    assert_eq!(made.status, 303, "{}", made.body);
    let sub: Value = rest(&app, &auth, &format!("/api/v1/t/{slug}/locations/{boxed}")).await;
    assert_eq!(sub["children"][0]["name"], "Left half", "{sub}");
    assert_eq!(sub["slots"][0]["code"], "BOX1_A1", "{sub}");
    assert_eq!(sub["slots"][0]["capacity"], 2, "{sub}");
    let page = b.get(&format!("{places}?done=slot-created")).await;
    assert!(page.has("Slot added.") && page.has("BOX1_A1") && page.has("Left half"));
    assert!(page.has("0 of 2 places taken"), "{}", page.body);

    // A slot code the REST rule refuses: named on the form, no slot.
    let bad = b
        .post(
            &format!("{places}/slots"),
            &[
                ("_csrf", &csrf),
                ("location_key", &boxed),
                ("code", "box1"),
                ("capacity", "1"),
            ],
        )
        .await;
    assert_eq!(bad.status, 422, "{}", bad.body);
    assert!(bad.has("Slot code: not a valid value."), "{}", bad.body);
    let slots = items(&rest(&app, &auth, &format!("/api/v1/t/{slug}/slots")).await);
    assert_eq!(slots.len(), 1);
    let slot = slots[0]["key"].as_str().expect("slot").to_owned();

    // Deleting what is occupied is refused plainly and deletes nothing.
    let refused = b
        .post(
            &format!("{places}/sites/{site}/delete"),
            &[("_csrf", &csrf)],
        )
        .await;
    assert_eq!(refused.status, 409, "{}", refused.body);
    assert!(
        refused.has("This site still has locations"),
        "{}",
        refused.body
    );
    assert_eq!(app.site_count(&tenant).await, 1);
    let tomato = species(&app, "Fixtura tomatoides").await;
    let res = app.rest_auth(Some(&auth)).post(&format!("/api/v1/t/{slug}/plant-instances"), &json!({"species_key": tomato, "name": "Boxed tomato", "location_key": boxed, "slot_key": slot}))
        .await;
    assert_eq!(
        res.status().as_u16(),
        201,
        "{}",
        res.text().await.unwrap_or_default()
    );
    let refused = b
        .post(
            &format!("{places}/slots/{slot}/delete"),
            &[("_csrf", &csrf)],
        )
        .await;
    assert_eq!(refused.status, 409);
    assert!(refused.has("This slot holds plants"), "{}", refused.body);
    assert_eq!(
        items(&rest(&app, &auth, &format!("/api/v1/t/{slug}/slots")).await).len(),
        1
    );

    // Rename, and an empty location deleted.
    let renamed = b
        .post(
            &format!("{places}/locations/{boxed}/rename"),
            &[("_csrf", &csrf), ("name", "Big box")],
        )
        .await;
    assert_eq!(renamed.status, 303);
    let left = key_named(
        &locations_now(&app, &auth, &slug).await,
        "name",
        "Left half",
    );
    let gone = b
        .post(
            &format!("{places}/locations/{left}/delete"),
            &[("_csrf", &csrf)],
        )
        .await;
    assert_eq!(gone.status, 303);
    let names: Vec<String> = locations_now(&app, &auth, &slug)
        .await
        .iter()
        .filter_map(|l| l["name"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(names, vec!["Big box".to_owned()]);

    // Substrates and batches.
    let made = b
        .post(
            &format!("{places}/substrates"),
            &[
                ("_csrf", &csrf),
                ("name", "House mix"),
                ("type", "soil"),
                ("reusable", "true"),
            ],
        )
        .await;
    assert_eq!(made.status, 303, "{}", made.body);
    let own = items(
        &rest(
            &app,
            &auth,
            &format!("/api/v1/t/{slug}/substrates?scope=tenant"),
        )
        .await,
    );
    let mix = key_named(&own, "name", "House mix");
    let made = b
        .post(
            &format!("{places}/batches"),
            &[
                ("_csrf", &csrf),
                ("substrate_key", &mix),
                ("label", "Spring 2026"),
                ("mixed_on", "2026-03-01"),
            ],
        )
        .await;
    assert_eq!(made.status, 303, "{}", made.body);
    let page = b.get(&places).await;
    assert!(
        page.has("House mix") && page.has("Spring 2026"),
        "{}",
        page.body
    );
    let future = b
        .post(
            &format!("{places}/batches"),
            &[
                ("_csrf", &csrf),
                ("substrate_key", &mix),
                ("label", "Later"),
                ("mixed_on", "2999-01-01"),
            ],
        )
        .await;
    assert_eq!(future.status, 422);
    assert!(
        future.has("Mixed on: not a valid value."),
        "{}",
        future.body
    );
    let batches = items(&rest(&app, &auth, &format!("/api/v1/t/{slug}/substrate-batches")).await);
    assert_eq!(batches.len(), 1);

    // A grower sees the tree without the setup's forms; a setup post is refused, nothing made.
    let grower = app.member(&tenant, Role::Grower).await;
    let mut g = Browser::new(&app, "en");
    g.sign_in(&grower.email, PASSWORD).await;
    let page = g.get(&places).await;
    assert_eq!(page.status, 200);
    assert!(page.has("Big box") && !page.has("Add a site") && page.has("Add a batch"));
    let gcsrf = page.csrf();
    let refused = g
        .post(
            &format!("{places}/sites"),
            &[
                ("_csrf", &gcsrf),
                ("name", "Greenhouse"),
                ("kind", "greenhouse"),
            ],
        )
        .await;
    assert_eq!(refused.status, 403);
    let refused = g
        .post(
            &format!("{places}/slots/{slot}/delete"),
            &[("_csrf", &gcsrf)],
        )
        .await;
    assert_eq!(refused.status, 403);
    assert_eq!(app.site_count(&tenant).await, 1);

    // Someone else's garden: 404, page and post alike, nothing written.
    let stranger = app.user("webplacesstranger").await;
    let mut s = Browser::new(&app, "en");
    s.sign_in(&stranger.email, PASSWORD).await;
    let theirs = s.get(&places).await;
    assert_eq!(theirs.status, 404);
    assert!(!theirs.has("Big box"));
    let scsrf = s.csrf("/app/settings").await;
    let post = s
        .post(
            &format!("{places}/sites"),
            &[("_csrf", &scsrf), ("name", "Intruder"), ("kind", "garden")],
        )
        .await;
    assert_eq!(post.status, 404);
    assert_eq!(app.site_count(&tenant).await, 1);
}

async fn locations_now(app: &TestApp, auth: &str, slug: &str) -> Vec<Value> {
    items(&rest(app, auth, &format!("/api/v1/t/{slug}/locations")).await)
}

fn feed_path(body: &str) -> Option<String> {
    regex::Regex::new(r"/api/v1/calendar/feeds/[A-Za-z0-9_-]{43}\.ics")
        .expect("pattern")
        .find(body)
        .map(|m| m.as_str().to_owned())
}

#[tokio::test]
async fn the_calendar_shows_a_month_and_its_feed_is_created_rotated_and_revoked() {
    let app = TestApp::full().await;
    let user = app.user("webcal").await;
    let auth = user.bearer();
    let slug = personal_slug(&app, &user).await;
    let calendar = format!("/app/g/{slug}/calendar");
    let res = app
        .rest_auth(Some(&auth))
        .post(
            &format!("/api/v1/t/{slug}/tasks"),
            &json!({"name": "Order seeds", "due_on": "2026-02-14"}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 201);

    let mut b = Browser::new(&app, "en");
    b.sign_in(&user.email, PASSWORD).await;
    let page = b.get(&format!("{calendar}?month=2026-02")).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(
        page.has("February 2026") && page.has("Order seeds"),
        "{}",
        page.body
    );
    assert!(page.has("Sat, 14 Feb 2026"), "{}", page.body);
    assert!(page.has("month=2026-01") && page.has("month=2026-03"));
    let bad = b.get(&format!("{calendar}?month=2026-13")).await;
    assert_eq!(bad.status, 422);
    assert!(bad.has("Month: not a valid value."), "{}", bad.body);
    let mut de = Browser::new(&app, "de");
    de.sign_in(&user.email, PASSWORD).await;
    let page = de.get(&format!("{calendar}?month=2026-02")).await;
    assert!(
        page.has("Februar 2026") && page.has("Sa, 14.02.2026"),
        "{}",
        page.body
    );

    // No feed yet; a foreign post makes none.
    let csrf = b.csrf(&calendar).await;
    assert_eq!(feed_active(&app, &auth, &slug).await, Some(false));
    let foreign = b.post(&format!("{calendar}/feed/create"), &[]).await;
    assert_eq!(foreign.status, 403);
    assert_eq!(feed_active(&app, &auth, &slug).await, Some(false));

    // Created: the address is in this answer, once, and it serves the calendar.
    let made = b
        .post(&format!("{calendar}/feed/create"), &[("_csrf", &csrf)])
        .await;
    assert_eq!(made.status, 200, "{}", made.body);
    let first = feed_path(&made.body).expect("feed address shown");
    let ics = app.get(&first).await;
    assert_eq!(ics.status().as_u16(), 200);
    assert!(
        crate::support::header(&ics, "content-type")
            .unwrap_or_default()
            .starts_with("text/calendar")
    );
    let again = b.get(&calendar).await;
    assert!(feed_path(&again.body).is_none(), "shown once only");
    assert!(again.has("Your subscription address is active."));
    let twice = b
        .post(&format!("{calendar}/feed/create"), &[("_csrf", &csrf)])
        .await;
    assert_eq!(twice.status, 409);
    assert!(twice.has("You already have a subscription address"));
    assert_eq!(app.get(&first).await.status().as_u16(), 200);

    // Rotated: the old address is dead at once, the new one works.
    let rotated = b
        .post(&format!("{calendar}/feed/rotate"), &[("_csrf", &csrf)])
        .await;
    assert_eq!(rotated.status, 200);
    let second = feed_path(&rotated.body).expect("new address");
    assert_ne!(first, second);
    assert_eq!(app.get(&first).await.status().as_u16(), 404);
    assert_eq!(app.get(&second).await.status().as_u16(), 200);

    // A viewer may not make a feed (the REST floor of a write) and makes none.
    let tenant = tenant_of(&app, &slug).await;
    let viewer = app.member(&tenant, Role::Viewer).await;
    let mut v = Browser::new(&app, "en");
    v.sign_in(&viewer.email, PASSWORD).await;
    let vpage = v.get(&calendar).await;
    assert!(!vpage.has("Create a subscription address"));
    let refused = v
        .post(
            &format!("{calendar}/feed/create"),
            &[("_csrf", &vpage.csrf())],
        )
        .await;
    assert_eq!(refused.status, 403);
    let vstatus = rest(
        &app,
        &viewer.bearer(),
        &format!("/api/v1/t/{slug}/calendar/feed"),
    )
    .await;
    assert_eq!(vstatus["active"], false);

    // Revoked: the address answers 404.
    let revoked = b
        .post(&format!("{calendar}/feed/revoke"), &[("_csrf", &csrf)])
        .await;
    assert_eq!(
        (revoked.status, revoked.location()),
        (303, Some(format!("{calendar}?done=revoked").as_str()))
    );
    assert_eq!(app.get(&second).await.status().as_u16(), 404);
    assert_eq!(feed_active(&app, &auth, &slug).await, Some(false));

    // Another person's garden: 404.
    let stranger = app.user("webcalstranger").await;
    let mut s = Browser::new(&app, "en");
    s.sign_in(&stranger.email, PASSWORD).await;
    assert_eq!(s.get(&calendar).await.status, 404);
}

#[tokio::test]
async fn settings_save_the_profile_and_preferences_and_the_language_follows() {
    let app = TestApp::full().await;
    let user = app.user("websettings").await;
    let auth = user.bearer();
    let mut b = Browser::new(&app, "en");
    b.sign_in(&user.email, PASSWORD).await;
    let page = b.get("/app/settings").await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.has("Profile") && page.has("API keys") && page.has("/api/v1/docs"));
    let csrf = page.csrf();

    let saved = b
        .post(
            "/app/settings/profile",
            &[("_csrf", &csrf), ("display_name", "Rosa Gardener")],
        )
        .await;
    assert_eq!(
        (saved.status, saved.location()),
        (303, Some("/app/settings?done=profile"))
    );
    assert_eq!(
        rest(&app, &auth, "/api/v1/users/me").await["display_name"],
        "Rosa Gardener"
    );

    // Preferences without the form's value: refused, unchanged.
    let before = prefs(&app, &auth).await;
    let foreign = prefs_form("forged", "Europe/Berlin");
    assert_eq!(
        b.post("/app/settings/preferences", &pairs(&foreign))
            .await
            .status,
        403
    );
    assert_eq!(prefs(&app, &auth).await, before);
    // A time zone that is not one: the form again, the field named, nothing saved.
    let bad = prefs_form(&csrf, "not a zone!");
    let refused = b.post("/app/settings/preferences", &pairs(&bad)).await;
    assert_eq!(refused.status, 422, "{}", refused.body);
    assert!(
        refused.has("Time zone: not a valid value."),
        "{}",
        refused.body
    );
    assert_eq!(prefs(&app, &auth).await, before);

    let good = prefs_form(&csrf, "Europe/Berlin");
    let saved = b.post("/app/settings/preferences", &pairs(&good)).await;
    assert_eq!(saved.status, 303, "{}", saved.body);
    let after = prefs(&app, &auth).await;
    assert_eq!(after["locale"], "de");
    assert_eq!(after["timezone"], "Europe/Berlin");
    assert_eq!(after["notify_email"], false, "an unticked box is off");
    assert_eq!(after["notify_care_due"], true);
    assert_eq!(after["notify_digest"], "weekly");
    assert_eq!(after["digest_hour"], 6);
    // The page speaks the chosen language from now on.
    let page = b.get(saved.location().expect("back")).await;
    assert!(page.has(r#"<html lang="de">"#), "{}", page.body);
    assert!(page.has("Vorlieben gespeichert.") && page.has("Einstellungen"));
    assert!(page.has(r#"value="Europe/Berlin""#));

    // Signed out, the settings send to the sign-in.
    let mut anon = Browser::new(&app, "en");
    let away = anon.get("/app/settings").await;
    assert_eq!(away.status, 303);
    assert_eq!(away.location(), Some("/app/login?next=%2Fapp%2Fsettings"));
}

#[tokio::test]
async fn a_password_change_needs_the_current_password_and_ends_every_session() {
    let app = TestApp::full().await;
    let user = app.user("webpassword").await;
    let slug = personal_slug(&app, &user).await;
    let garden = format!("/app/g/{slug}");
    let mut b = Browser::new(&app, "en");
    let mut other = Browser::new(&app, "en");
    b.sign_in(&user.email, PASSWORD).await;
    other.sign_in(&user.email, PASSWORD).await;
    let csrf = b.csrf("/app/settings").await;
    let new = "a much newer password";

    let foreign = b
        .post(
            "/app/settings/password",
            &[("current_password", PASSWORD), ("new_password", new)],
        )
        .await;
    assert_eq!(foreign.status, 403);
    let wrong = b
        .post(
            "/app/settings/password",
            &[
                ("_csrf", &csrf),
                ("current_password", "not my password"),
                ("new_password", new),
            ],
        )
        .await;
    assert_eq!(wrong.status, 422, "{}", wrong.body);
    assert!(
        wrong.has("The current password is wrong."),
        "{}",
        wrong.body
    );
    let short = b
        .post(
            "/app/settings/password",
            &[
                ("_csrf", &csrf),
                ("current_password", PASSWORD),
                ("new_password", "short"),
            ],
        )
        .await;
    assert_eq!(short.status, 422);
    assert!(short.has("New password: too short."), "{}", short.body);
    // Nothing changed: the old password signs in, both sessions live.
    app.login(&user.email, PASSWORD).await;
    assert_eq!(b.get(&garden).await.status, 200);
    assert_eq!(other.get(&garden).await.status, 200);

    let changed = b
        .post(
            "/app/settings/password",
            &[
                ("_csrf", &csrf),
                ("current_password", PASSWORD),
                ("new_password", new),
            ],
        )
        .await;
    assert_eq!(
        (changed.status, changed.location()),
        (303, Some("/app/login?done=reset"))
    );
    assert!(!b.cookies.contains_key("kv_session"));
    // Every session ended, as on REST: this browser, the other one, the API's token.
    assert!(
        other
            .get(&garden)
            .await
            .location()
            .is_some_and(|l| l.starts_with("/app/login"))
    );
    let api = app.rest_as(&user).get("/api/v1/users/me").await;
    assert_eq!(api.status().as_u16(), 401);
    assert_eq!(
        app.login_response(&user.email, PASSWORD, false)
            .await
            .status()
            .as_u16(),
        401
    );
    b.sign_in(&user.email, new).await;
    assert_eq!(b.get(&garden).await.status, 200);
}

#[tokio::test]
async fn an_api_key_is_shown_once_works_on_rest_and_stops_when_revoked() {
    let app = TestApp::full().await;
    let user = app.user("webkeys").await;
    let auth = user.bearer();
    let slug = personal_slug(&app, &user).await;
    let mut b = Browser::new(&app, "en");
    b.sign_in(&user.email, PASSWORD).await;
    let csrf = b.csrf("/app/settings").await;

    let foreign = b
        .post("/app/settings/api-keys", &[("label", "Robot")])
        .await;
    assert_eq!(foreign.status, 403);
    assert!(api_keys(&app, &auth).await.is_empty());
    let blank = b
        .post(
            "/app/settings/api-keys",
            &[("_csrf", &csrf), ("label", ""), ("tenant_scope", "")],
        )
        .await;
    assert_eq!(blank.status, 422);
    assert!(api_keys(&app, &auth).await.is_empty());

    let made = b
        .post(
            "/app/settings/api-keys",
            &[
                ("_csrf", &csrf),
                ("label", "Robot"),
                ("tenant_scope", &slug),
            ],
        )
        .await;
    assert_eq!(made.status, 201, "{}", made.body);
    assert_eq!(
        made.headers
            .get("cache-control")
            .and_then(|v| v.to_str().ok()),
        Some("no-store")
    );
    let raw = regex::Regex::new(r"svc_[A-Za-z0-9_-]{43}")
        .expect("pattern")
        .find(&made.body)
        .expect("the key, shown once")
        .as_str()
        .to_owned();
    let listed = api_keys(&app, &auth).await;
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["tenant_scope"], slug.as_str());
    let key_id = listed[0]["key"].as_str().expect("key").to_owned();
    // It works against the REST API, in its garden.
    let res = app
        .rest_key(&raw)
        .get(&format!("/api/v1/t/{slug}/sites"))
        .await;
    assert_eq!(res.status().as_u16(), 200);
    // The page lists it afterwards, never its secret.
    let page = b.get("/app/settings").await;
    assert!(page.has("Robot") && !page.has(&raw));

    // Revoking without the form's value does nothing; with it, the key is refused at once.
    let path = format!("/app/settings/api-keys/{key_id}/revoke");
    assert_eq!(b.post(&path, &[]).await.status, 403);
    let still = app
        .rest_key(&raw)
        .get(&format!("/api/v1/t/{slug}/sites"))
        .await;
    assert_eq!(still.status().as_u16(), 200);
    let revoked = b.post(&path, &[("_csrf", &csrf)]).await;
    assert_eq!(
        (revoked.status, revoked.location()),
        (303, Some("/app/settings?done=key-revoked"))
    );
    let refused = app
        .rest_key(&raw)
        .get(&format!("/api/v1/t/{slug}/sites"))
        .await;
    assert_eq!(refused.status().as_u16(), 401);
    let page = b.get("/app/settings").await;
    assert!(page.has("You have no active API keys."));
}

#[tokio::test]
async fn garden_settings_let_admins_manage_members_and_refuse_everyone_else() {
    let app = TestApp::full().await;
    let admin = app.user("webadmin").await;
    let auth = admin.bearer();
    let slug = personal_slug(&app, &admin).await;
    let tenant = tenant_of(&app, &slug).await;
    let viewer = app.member(&tenant, Role::Viewer).await;
    let grower = app.member(&tenant, Role::Grower).await;
    let settings = format!("/app/g/{slug}/settings");
    let role_of = |list: &Value, key: &str| -> String {
        items(list)
            .iter()
            .find(|m| m["user_key"] == key)
            .map(|m| m["role"].as_str().unwrap_or("").to_owned())
            .unwrap_or_default()
    };
    let mut a = Browser::new(&app, "en");
    a.sign_in(&admin.email, PASSWORD).await;
    let page = a.get(&settings).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.has("invite-email") && page.has("Create a service account"));
    assert!(page.has(&viewer.email), "admins see the addresses");
    let csrf = page.csrf();

    // Invite: without the form's value nothing; with it one open invitation.
    let invited = "friend@example.test";
    let foreign = a
        .post(
            &format!("{settings}/invitations"),
            &[("email", invited), ("role", "grower")],
        )
        .await;
    assert_eq!(foreign.status, 403);
    assert_eq!(open_invitations(&app, &auth, &slug).await, 0);
    let bad = a
        .post(
            &format!("{settings}/invitations"),
            &[("_csrf", &csrf), ("email", "nobody"), ("role", "grower")],
        )
        .await;
    assert_eq!(bad.status, 422, "{}", bad.body);
    assert_eq!(open_invitations(&app, &auth, &slug).await, 0);
    let sent = a
        .post(
            &format!("{settings}/invitations"),
            &[("_csrf", &csrf), ("email", invited), ("role", "grower")],
        )
        .await;
    assert_eq!(sent.status, 303, "{}", sent.body);
    assert_eq!(open_invitations(&app, &auth, &slug).await, 1);
    let twice = a
        .post(
            &format!("{settings}/invitations"),
            &[("_csrf", &csrf), ("email", invited), ("role", "viewer")],
        )
        .await;
    assert_eq!(twice.status, 409);
    assert!(twice.has("already belongs to a member or has an open invitation"));
    assert_eq!(open_invitations(&app, &auth, &slug).await, 1);

    // Change a role.
    let changed = a
        .post(
            &format!("{settings}/members/{}/role", viewer.key),
            &[("_csrf", &csrf), ("role", "grower")],
        )
        .await;
    assert_eq!(changed.status, 303);
    assert_eq!(
        role_of(&members(&app, &auth, &slug).await, &viewer.key),
        "grower"
    );

    // A service account: its key shown once, working in this garden.
    let made = a
        .post(
            &format!("{settings}/service-accounts"),
            &[
                ("_csrf", &csrf),
                ("name", "Greenhouse bot"),
                ("role", "viewer"),
            ],
        )
        .await;
    assert_eq!(made.status, 201, "{}", made.body);
    let raw = regex::Regex::new(r"svc_[A-Za-z0-9_-]{43}")
        .expect("pattern")
        .find(&made.body)
        .expect("key shown")
        .as_str()
        .to_owned();
    let res = app
        .rest_key(&raw)
        .get(&format!("/api/v1/t/{slug}/sites"))
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let page = a.get(&settings).await;
    assert!(page.has("Greenhouse bot") && !page.has(&raw));

    // A grower sees the members without the admins' forms, and every admin post is refused.
    let mut g = Browser::new(&app, "en");
    g.sign_in(&grower.email, PASSWORD).await;
    let page = g.get(&settings).await;
    assert_eq!(page.status, 200);
    assert!(!page.has("invite-email") && !page.has("/role\"") && !page.has("Greenhouse bot"));
    assert!(!page.has(&viewer.email), "addresses are for the admins");
    let gcsrf = page.csrf();
    let refused = g
        .post(
            &format!("{settings}/invitations"),
            &[
                ("_csrf", &gcsrf),
                ("email", "other@example.test"),
                ("role", "viewer"),
            ],
        )
        .await;
    assert_eq!(refused.status, 403);
    assert_eq!(open_invitations(&app, &auth, &slug).await, 1);
    let refused = g
        .post(
            &format!("{settings}/members/{}/role", viewer.key),
            &[("_csrf", &gcsrf), ("role", "viewer")],
        )
        .await;
    assert_eq!(refused.status, 403);
    assert_eq!(
        role_of(&members(&app, &auth, &slug).await, &viewer.key),
        "grower"
    );
    let refused = g
        .post(
            &format!("{settings}/members/{}/remove", admin.key),
            &[("_csrf", &gcsrf)],
        )
        .await;
    assert_eq!(refused.status, 403);
    let refused = g
        .post(
            &format!("{settings}/service-accounts"),
            &[("_csrf", &gcsrf), ("name", "Sneaky"), ("role", "viewer")],
        )
        .await;
    assert_eq!(refused.status, 403);
    assert!(
        !items(&members(&app, &auth, &slug).await)
            .iter()
            .any(|m| m["display_name"] == "Sneaky")
    );

    // Another person: 404 for the page and the posts.
    let stranger = app.user("webadminstranger").await;
    let mut s = Browser::new(&app, "en");
    s.sign_in(&stranger.email, PASSWORD).await;
    assert_eq!(s.get(&settings).await.status, 404);
    let scsrf = s.csrf("/app/settings").await;
    let post = s
        .post(
            &format!("{settings}/invitations"),
            &[
                ("_csrf", &scsrf),
                ("email", "x@example.test"),
                ("role", "viewer"),
            ],
        )
        .await;
    assert_eq!(post.status, 404);
    assert_eq!(open_invitations(&app, &auth, &slug).await, 1);

    // The admin removes the grower and withdraws the invitation.
    let removed = a
        .post(
            &format!("{settings}/members/{}/remove", grower.key),
            &[("_csrf", &csrf)],
        )
        .await;
    assert_eq!(removed.status, 303);
    assert_eq!(role_of(&members(&app, &auth, &slug).await, &grower.key), "");
    assert_eq!(g.get(&settings).await.status, 404, "no longer a member");
    let open = rest(&app, &auth, &format!("/api/v1/tenants/{slug}/invitations")).await;
    let key = items(&open)[0]["key"].as_str().expect("key").to_owned();
    let withdrawn = a
        .post(
            &format!("{settings}/invitations/{key}/withdraw"),
            &[("_csrf", &csrf)],
        )
        .await;
    assert_eq!(withdrawn.status, 303);
    assert_eq!(open_invitations(&app, &auth, &slug).await, 0);
    // The last admin cannot leave: said on the page, still a member.
    let leave = a
        .post(
            &format!("{settings}/members/{}/remove", admin.key),
            &[("_csrf", &csrf)],
        )
        .await;
    assert_eq!(leave.status, 409, "{}", leave.body);
    assert!(
        leave.has("The last administrator of a garden can be neither removed"),
        "{}",
        leave.body
    );
    assert_eq!(
        role_of(&members(&app, &auth, &slug).await, &admin.key),
        "admin"
    );
}

async fn feed_active(app: &TestApp, auth: &str, slug: &str) -> Option<bool> {
    rest(app, auth, &format!("/api/v1/t/{slug}/calendar/feed")).await["active"].as_bool()
}

async fn prefs(app: &TestApp, auth: &str) -> Value {
    rest(app, auth, "/api/v1/user-preferences").await
}

fn prefs_form(csrf: &str, timezone: &str) -> Vec<(&'static str, String)> {
    vec![
        ("_csrf", csrf.to_owned()),
        ("locale", "de".to_owned()),
        ("timezone", timezone.to_owned()),
        ("notify_care_due", "true".to_owned()),
        ("notify_digest", "weekly".to_owned()),
        ("digest_hour", "6".to_owned()),
    ]
}

fn pairs<'a>(form: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    form.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

async fn api_keys(app: &TestApp, auth: &str) -> Vec<Value> {
    rest(app, auth, "/api/v1/auth/api-keys")
        .await
        .as_array()
        .cloned()
        .unwrap_or_default()
}

async fn members(app: &TestApp, auth: &str, slug: &str) -> Value {
    rest(app, auth, &format!("/api/v1/tenants/{slug}/members")).await
}

async fn open_invitations(app: &TestApp, auth: &str, slug: &str) -> usize {
    items(&rest(app, auth, &format!("/api/v1/tenants/{slug}/invitations")).await).len()
}
