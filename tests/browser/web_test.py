"""The web pages in a real browser (run by tests/browser/run).

Starts the server (full mode, debug build) on a free loopback port and walks the pages with
Debian's Chromium (headless) through Playwright, as a grower on a phone (390 px wide):

1. sign-up, sign-in and Today in English, a first plant (made through the API), its watering
   confirmed in place (htmx: the list item changes, the page does not reload), the language
   switched to German;
2. the same without JavaScript: every form posts and the page answers with a redirect;
3. the keyboard alone: the skip link first, every control reachable, the care confirmed with
   Enter;
4. the plant pages in German, then English: a plant created through the pages (species search,
   name), a watering, a treatment naming the safety interval it starts, the harvest refused
   inside it with the days left, a diary entry with a photo (a file input with
   capture="environment", fed a PNG), and a watering recorded with the keyboard alone;
and on every page visited: axe-core (pinned, tests/browser: KULTIVA_TEST_AXE) reports no
serious or critical violation, the page fits 390 px without sideways scrolling, nothing is
requested from another origin, and the console stays free of errors (CSP refusals included).

Prints "web: N passed, M failed" and exits non-zero on a failure. Screenshots of the pages
(desktop and phone) go to the output folder.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
import uuid
from pathlib import Path
from urllib.parse import urlparse

from playwright.sync_api import Browser, BrowserContext, Page, sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parent))
from browser_test import CHROMIUM_ARGS, Run, free_port, wait_until_live  # noqa: E402
from season import nav, open_menu, season, walk_sensors  # noqa: E402

PASSWORD = "correct horse battery"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}


def call(method: str, url: str, body: dict | None = None, token: str | None = None) -> tuple[int, object]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=20) as res:
            raw = res.read()
            return res.status, (json.loads(raw) if raw else None)
    except urllib.error.HTTPError as err:
        raw = err.read()
        return err.code, (json.loads(raw) if raw else None)


class Watch:
    """What a page did that it should not: console errors, requests to other origins."""

    def __init__(self, page: Page, origin: str) -> None:
        self.errors: list[str] = []
        self.outside: list[str] = []
        # Chromium logs a page answered with an error status as a console error; a form refused on
        # purpose (422 and the form again) announces its one message here beforehand.
        self.expected: list[str] = []
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(str(e)))

        def route(r) -> None:
            parsed = urlparse(r.request.url)
            if parsed.scheme in ("data", "blob") or f"{parsed.scheme}://{parsed.netloc}" == origin:
                r.continue_()
            else:
                self.outside.append(r.request.url)
                r.abort()

        page.route("**/*", route)

    def expect_refusal(self, status: int) -> None:
        self.expected.append(f"the server responded with a status of {status}")

    def assert_clean(self) -> None:
        errors = list(self.errors)
        for want in self.expected:
            hit = next((e for e in errors if want in e), None)
            assert hit is not None, f"expected a refusal ({want}) that did not happen"
            errors.remove(hit)
        assert not errors, f"console errors: {errors}"
        assert not self.outside, f"requests to other origins: {self.outside}"


class Pages:
    def __init__(self, axe_source: str, out: Path) -> None:
        self.axe_source = axe_source
        self.out = out
        self.seen: set[str] = set()

    def check(self, page: Page, name: str) -> None:
        """axe-core, the 390 px fit and a screenshot of the page as it is now."""
        # Evaluated through the DevTools protocol, not as a <script>: the page's CSP stays as
        # it is (it allows no inline script) and axe is not one of the page's own files.
        page.evaluate(self.axe_source + "\n;0")
        result = page.evaluate(
            """async () => {
              const r = await axe.run(document, {resultTypes: ['violations']});
              return r.violations.map(v => ({id: v.id, impact: v.impact, nodes: v.nodes.length,
                                              help: v.help, target: v.nodes[0] && v.nodes[0].target}));
            }"""
        )
        bad = [v for v in result if v["impact"] in ("serious", "critical")]
        assert not bad, f"{name}: axe violations {bad}"
        width = page.viewport_size["width"] if page.viewport_size else 0
        if width == PHONE["width"]:
            scroll = page.evaluate("document.documentElement.scrollWidth")
            assert scroll <= width, f"{name}: {scroll} px wide on a {width} px screen"
        shot = self.out / f"web-{name}-{'phone' if width == PHONE['width'] else 'desktop'}.png"
        page.screenshot(path=str(shot), full_page=True)
        self.seen.add(name)

    def check_both(self, page: Page, name: str) -> None:
        """`check` on the phone, then the same page laid out on a desktop (axe again: the menu
        is a row there) and back to the phone."""
        self.check(page, name)
        page.set_viewport_size(DESKTOP)
        try:
            self.check(page, name)
        finally:
            page.set_viewport_size(PHONE)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--chromium", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--axe", required=True, help="axe-core's axe.min.js")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = dict(os.environ)
    env.update(
        SERVICE_MODE="full",
        BIND_ADDRESS=f"127.0.0.1:{port}",
        PUBLIC_URL=base,
        FRONTEND_URL=f"{base}/app",
        DEBUG="true",
        RUST_LOG="warn",
        REDIS_KEY_PREFIX=f"web-browser-{os.getpid()}",
        # The walk's pages come from one address and one person faster than anyone browses.
        RATE_LIMIT_GENERAL_PER_MINUTE="100000",
        JWT_SECRET_KEY=env.get("JWT_SECRET_KEY", "browser-test-secret-0123456789abcdef01234567"),
    )
    log = out / "web-server.log"
    server = subprocess.Popen([args.bin, "serve"], env=env, stdout=subprocess.DEVNULL, stderr=open(log, "w"))
    run = Run()
    pages = Pages(Path(args.axe).read_text(encoding="utf-8"), out)
    try:
        wait_until_live(base, server, log)
        subprocess.run([args.bin, "seed"], env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with sync_playwright() as pw:
            browser: Browser = pw.chromium.launch(executable_path=args.chromium, headless=True, args=CHROMIUM_ARGS)
            try:
                checks(run, browser, base, pages)
            finally:
                browser.close()
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
    print(f"web: {run.passed} passed, {run.failed} failed", flush=True)
    return 1 if run.failed else 0


def species_key(base: str, token: str, name: str) -> str:
    status, body = call("GET", f"{base}/api/v1/species?q={urllib.request.quote(name)}&limit=5", token=token)
    assert status == 200, (status, body)
    items = body["items"] if isinstance(body, dict) else body
    assert items, f"no species {name}"
    return items[0]["key"]


def api_login(base: str, email: str) -> str:
    status, body = call("POST", f"{base}/api/v1/auth/login", {"email": email, "password": PASSWORD})
    assert status == 200, (status, body)
    return body["access_token"]


def checks(run: Run, browser: Browser, base: str, pages: Pages) -> None:
    email = f"web-{uuid.uuid4().hex[:8]}@example.com"
    state: dict = {}

    def new_phone(**extra) -> tuple[BrowserContext, Page, Watch]:
        context = browser.new_context(viewport=PHONE, locale="en-GB", **extra)
        page = context.new_page()
        return context, page, Watch(page, base)

    def sign_up_and_today() -> None:
        context, page, watch = new_phone()
        state["context"] = context
        page.goto(f"{base}/app/signup")
        assert page.locator("html").get_attribute("lang") == "en"
        pages.check(page, "signup")
        page.fill("#display_name", "Wendy Web")
        page.fill("#email", email)
        page.fill("#password", PASSWORD)
        page.click("button[type=submit]")
        # No confirmation required here: signed in at once, on to Today, with the reminder.
        page.wait_for_url(f"{base}/app/g/**")
        assert page.locator("text=Please confirm your e-mail address").count() == 1, page.content()
        pages.check(page, "today-first-run")
        # Signed out, and in again through the sign-in page.
        # On a phone the sign-out sits in the menu, as the garden's links do.
        open_menu(page)
        page.locator("header button", has_text="Sign out").click()
        page.wait_for_url(f"{base}/app/login**")
        pages.check(page, "login")
        page.fill("#email", email)
        page.fill("#password", PASSWORD)
        page.click("main button[type=submit]")
        page.wait_for_url(f"{base}/app/g/**")
        state["today"] = page.url
        assert page.locator("h1").inner_text().startswith("Today"), page.locator("h1").inner_text()
        pages.check(page, "today-empty")
        # A plant (through the API with a login of the same person): its watering is due today.
        token = api_login(base, email)
        slug = urlparse(page.url).path.split("/")[3]
        state["slug"], state["token"] = slug, token
        status, plant = call("POST", f"{base}/api/v1/t/{slug}/plant-instances",
                             {"species_key": species_key(base, token, "Solanum lycopersicum"), "name": "Balcony tomato"},
                             token)
        assert status == 201, (status, plant)
        page.reload()
        item = page.locator("li", has_text="Balcony tomato").filter(has_text="Watering")
        assert item.count() == 1, page.content()
        pages.check(page, "today")
        marker = page.evaluate("window.__kept = Math.random()")
        item.locator("button", has_text="Done").click()
        page.wait_for_selector("text=Recorded. Next time:")
        # In place: the same document (no reload), the item replaced.
        assert page.evaluate("window.__kept") == marker
        pages.check(page, "today-confirmed")
        page.set_viewport_size(DESKTOP)
        pages.check(page, "today")
        page.set_viewport_size(PHONE)
        # German, from the footer's switch: the person's preference from now on.
        page.locator("footer button", has_text="Deutsch").click()
        page.wait_for_selector("html[lang=de]")
        assert "Heute" in page.locator("h1").inner_text()
        pages.check(page, "today-de")
        status, prefs = call("GET", f"{base}/api/v1/user-preferences", token=token)
        assert status == 200 and prefs["locale"] == "de", prefs
        watch.assert_clean()

    run.check("web: sign-up, sign-in, Today, care confirmed in place, German (phone)", sign_up_and_today)

    def without_javascript() -> None:
        context, page, watch = new_phone(java_script_enabled=False)
        try:
            page.goto(f"{base}/app/login")
            page.fill("#email", email)
            page.fill("#password", PASSWORD)
            page.click("main button[type=submit]")
            page.wait_for_url(f"{base}/app/g/**")
            # A second plant, due today; its care confirmed by a plain form post.
            status, plant = call("POST", f"{base}/api/v1/t/{state['slug']}/plant-instances",
                                 {"species_key": species_key(base, state["token"], "Solanum lycopersicum"),
                                  "name": "Kitchen tomato"}, state["token"])
            assert status == 201, (status, plant)
            page.reload()
            item = page.locator("li", has_text="Kitchen tomato").filter(has_text="Gießen")
            assert item.count() == 1, page.content()
            item.locator("button", has_text="Erledigt").click()
            page.wait_for_url("**done=confirmed")
            assert page.locator("text=Pflege eingetragen.").count() == 1
            assert page.locator("li", has_text="Kitchen tomato").filter(has_text="Gießen").count() == 0
            watch.assert_clean()
        finally:
            context.close()

    run.check("web: every form works without JavaScript", without_javascript)

    def keyboard_only() -> None:
        context, page, watch = new_phone()
        try:
            page.goto(f"{base}/app/login")
            page.keyboard.press("Tab")
            focused = page.evaluate("document.activeElement.className")
            assert focused == "skip", f"first Tab: {focused}"
            # Tab through the sign-in form and submit it with Enter.
            for _ in range(12):
                page.keyboard.press("Tab")
                if page.evaluate("document.activeElement.id") == "email":
                    break
            assert page.evaluate("document.activeElement.id") == "email"
            page.keyboard.type(email)
            page.keyboard.press("Tab")
            page.keyboard.type(PASSWORD)
            page.keyboard.press("Enter")
            page.wait_for_url(f"{base}/app/g/**")
            status, plant = call("POST", f"{base}/api/v1/t/{state['slug']}/plant-instances",
                                 {"species_key": species_key(base, state["token"], "Solanum lycopersicum"),
                                  "name": "Keyboard tomato"}, state["token"])
            assert status == 201, (status, plant)
            page.reload()
            target = page.locator("li", has_text="Keyboard tomato").filter(has_text="Gießen").locator("button", has_text="Erledigt")
            for _ in range(60):
                page.keyboard.press("Tab")
                if target.evaluate("b => b === document.activeElement"):
                    break
            assert target.evaluate("b => b === document.activeElement"), "the care button is not reachable by Tab"
            page.keyboard.press("Enter")
            page.wait_for_selector("text=Eingetragen. Nächstes Mal:")
            watch.assert_clean()
        finally:
            context.close()

    run.check("web: the keyboard alone signs in and confirms care", keyboard_only)
    places_calendar_settings(run, browser, base, pages, email, state)

    def plants_through_the_pages() -> None:
        context, page, watch = new_phone()
        try:
            page.goto(f"{base}/app/login")
            page.fill("#email", email)
            page.fill("#password", PASSWORD)
            page.click("main button[type=submit]")
            page.wait_for_url(f"{base}/app/g/**")
            # The person chose German above; English follows through the footer's switch.
            for lang, t in (("de", PLANT_TEXTS["de"]), ("en", PLANT_TEXTS["en"])):
                if lang == "en":
                    page.locator("footer button", has_text="English").click()
                    page.wait_for_selector("html[lang=en]")
                walk_plant(page, watch, lang, t)
            # Desktop screenshots of the list and the plant's page.
            page.set_viewport_size(DESKTOP)
            page.goto(state["plant_page"])
            pages.check(page, "plant")
            page.goto(f"{base}/app/g/{state['slug']}/plants")
            pages.check(page, "plants")
            page.set_viewport_size(PHONE)
            watch.assert_clean()
        finally:
            context.close()

    def walk_plant(page: Page, watch: Watch, lang: str, t: dict) -> None:
        # The list, from the garden's navigation.
        nav(page, t["nav"])
        page.wait_for_url("**/plants")
        pages.check(page, f"plants-{lang}")
        # A first plant through the pages: species search (a GET form), place, name.
        page.locator("main a.button", has_text=t["new"]).click()
        page.wait_for_url("**/plants/new")
        if lang == "en":
            # With JavaScript the results follow the typing in place (htmx), the page stays.
            marker = page.evaluate("window.__kept = Math.random()")
            page.locator("#species_q").press_sequentially("Solanum lycop", delay=20)
            page.wait_for_function(
                "() => { const r = document.querySelectorAll('#species-results label');"
                " return r.length >= 1 && [...r].every(l => l.textContent.includes('lycop')); }"
            )
            assert page.evaluate("window.__kept") == marker
        page.fill("#species_q", "Solanum lycopersicum")
        page.press("#species_q", "Enter")
        page.wait_for_url("**species_q=**")
        radios = page.locator("input[name=species_key]")
        assert radios.count() >= 1, page.content()
        radios.first.check()
        page.fill("#name", t["plant"])
        pages.check(page, f"plant-new-{lang}")
        page.locator("form.stack button[type=submit]").click()
        page.wait_for_url("**done=created")
        assert page.locator("h1").inner_text() == t["plant"]
        state["plant_page"] = page.url.split("?")[0]
        pages.check(page, f"plant-{lang}")
        # A watering, typed as the language writes numbers.
        page.locator("#watering summary").click()
        page.fill("#volume_liters", t["litres"])
        page.locator("#watering form button[type=submit]").click()
        page.wait_for_url("**done=watered**")
        assert page.locator(f"text={t['watered']}").count() == 1
        # A treatment labelled for tomatoes (Abamectin, 7 days): the page names the safety
        # interval it starts, its end and its source.
        page.locator("#ipm details", has_text=t["treat"]).locator("summary").click()
        value = page.locator("#treatment_key option", has_text="Abamectin").first.get_attribute("value")
        page.select_option("#treatment_key", value)
        page.locator("#ipm form[action$=treatment] button[type=submit]").click()
        page.wait_for_url("**done=treated**")
        news = page.locator("main .notice.ok").inner_text()
        assert t["interval"] in news and t["source"] in news, news
        assert page.locator("#safety li", has_text="Abamectin").count() == 1
        # The harvest inside the interval: refused plainly, with the days left; nothing saved.
        page.locator("#harvest summary").click()
        page.fill("#wet_weight_g", "120")
        watch.expect_refusal(422)
        page.locator("#harvest form button[type=submit]").click()
        page.wait_for_selector(f"text={t['refused']}")
        alert = page.locator("#harvest .notice.bad").inner_text()
        assert t["left"] in alert, alert
        assert page.locator("#harvest ul.items li").count() == 0
        pages.check(page, f"plant-harvest-refused-{lang}")
        # The garden's plant protection, from the navigation: the interval just started, with
        # its first harvest day.
        nav(page, t["protection"])
        page.wait_for_url("**/protection")
        running = page.locator("section[aria-labelledby=pp-intervals] li", has_text="Abamectin")
        assert running.count() >= 1, page.content()
        assert t["harvest_from"] in running.first.inner_text()
        pages.check(page, f"protection-{lang}")
        # A diary entry with a photo, as a phone's camera hands it over.
        page.goto(state["plant_page"])
        page.locator("#diary summary").click()
        page.fill("#title", t["entry"])
        page.fill("#text", "Die ersten Blüten." if lang == "de" else "The first flowers.")
        page.set_input_files("#photo", files=[{"name": "IMG_0001.png", "mimeType": "image/png", "buffer": tiny_png()}])
        page.locator("#diary form button[type=submit]").click()
        page.wait_for_url("**done=noted**")
        assert page.locator("#diary ul.items li", has_text=t["entry"]).count() == 1
        # The rendition follows off the request path: the page shows it once made.
        for _ in range(40):
            if page.locator("#diary img").count() > 0:
                break
            page.wait_for_timeout(250)
            page.reload()
        img = page.locator("#diary img").first
        img.wait_for()
        # Decoded, not only present (a busy machine may still be fetching it).
        page.wait_for_function("i => i.complete && i.naturalWidth > 0", arg=img.element_handle(), timeout=15000)
        pages.check(page, f"plant-diary-{lang}")
        # The keyboard alone: Tab to the watering's summary, open it, type, send with Enter.
        page.goto(state["plant_page"])
        target = page.locator("#watering summary")
        for _ in range(80):
            page.keyboard.press("Tab")
            if target.evaluate("s => s === document.activeElement"):
                break
        assert target.evaluate("s => s === document.activeElement"), "the watering form is not reachable by Tab"
        page.keyboard.press("Enter")
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.id") == "volume_liters"
        page.keyboard.type("2")
        page.keyboard.press("Enter")
        page.wait_for_url("**done=watered**")
        assert page.locator("#watering ul.items li").count() == 2

    run.check("web: plants through the pages: create, water, treat, refused harvest, diary photo (de, en)",
              plants_through_the_pages)
    # After the plant walk: its treated tomato and its diary entries are the season's material.
    season_pages(run, browser, base, pages, email, state)
    sensor_pages(run, browser, base, pages, email, state)


def places_calendar_settings(run: Run, browser: Browser, base: str, pages: Pages, email: str, state: dict) -> None:
    """Places (a site, a location, a slot), Calendar (the feed made and fetched) and Settings
    (an API key made and used; a member invited) on a phone, in English and then in German;
    screenshots of Places and Settings on a phone and a desktop."""

    def walk() -> None:
        context = browser.new_context(viewport=PHONE, locale="en-GB")
        page = context.new_page()
        watch = Watch(page, base)
        try:
            slug = state["slug"]
            page.goto(f"{base}/app/login")
            page.fill("#email", email)
            page.fill("#password", PASSWORD)
            page.click("main button[type=submit]")
            page.wait_for_url(f"{base}/app/g/**")
            # The person chose German earlier: back to English from the footer.
            if page.locator("html").get_attribute("lang") != "en":
                page.locator("footer button", has_text="English").click()
                page.wait_for_selector("html[lang=en]")

            page.goto(f"{base}/app/g/{slug}/places")
            pages.check(page, "places-empty")
            page.locator("#sec-sites ~ details.add > summary").click()
            page.fill("#site-name", "Balcony")
            page.select_option("#site-kind", "balcony")
            page.locator("#sec-sites ~ details.add button[type=submit]").click()
            page.wait_for_url("**done=site-created")
            site_add = page.locator(".site > details.add").first
            site_add.locator("summary").click()
            site_add.locator("input[name=name]").fill("Planter box")
            site_add.locator("select[name=kind]").select_option("container")
            site_add.locator("button[type=submit]").click()
            page.wait_for_url("**done=location-created")
            slot_add = page.locator("ul.tree > li details.add", has=page.locator("input[name=code]")).first
            slot_add.locator("summary").click()
            slot_add.locator("input[name=code]").fill("BOX1_A1")
            slot_add.locator("button[type=submit]").click()
            page.wait_for_url("**done=slot-created")
            assert page.locator("code", has_text="BOX1_A1").count() == 1, page.content()
            # A refusal said plainly: the site still has its location.
            edit = page.locator(".site > details.edit").first
            edit.locator("summary").click()
            edit.locator("form[action$=delete] button").click()
            page.wait_for_selector("text=This site still has locations")
            pages.check(page, "places-refused")
            # The refusal's own status (409) is the one error the browser may log for it.
            watch.errors = [e for e in watch.errors if "status of 409" not in e]
            page.goto(f"{base}/app/g/{slug}/places")
            pages.check(page, "places")
            page.set_viewport_size(DESKTOP)
            pages.check(page, "places")
            page.set_viewport_size(PHONE)

            page.goto(f"{base}/app/g/{slug}/calendar")
            pages.check(page, "calendar")
            page.locator("form[action$='/feed/create'] button").click()
            page.wait_for_selector("#feed-url")
            feed = page.locator("#feed-url").input_value()
            assert "/api/v1/calendar/feeds/" in feed, feed
            with urllib.request.urlopen(feed, timeout=20) as res:
                assert res.status == 200 and res.read().startswith(b"BEGIN:VCALENDAR")
            pages.check(page, "calendar-feed")
            page.locator("a[rel=next]").click()
            page.wait_for_url("**month=**")
            pages.check(page, "calendar-next")

            page.goto(f"{base}/app/settings")
            pages.check(page, "settings")
            page.locator("#sec-keys ~ details.add > summary").click()
            page.fill("#key-label", "Phone")
            page.locator("#sec-keys ~ details.add button[type=submit]").click()
            page.wait_for_selector("#new-key")
            raw = page.locator("#new-key").input_value()
            assert raw.startswith("svc_"), raw
            status, body = call("GET", f"{base}/api/v1/tenants", token=raw)
            assert status == 200, (status, body)
            pages.check(page, "settings-key")
            page.goto(f"{base}/app/settings")
            assert raw not in page.content(), "a key is shown once"
            page.set_viewport_size(DESKTOP)
            pages.check(page, "settings")
            page.set_viewport_size(PHONE)

            page.goto(f"{base}/app/g/{slug}/settings")
            pages.check(page, "members")
            page.fill("#invite-email", f"friend-{uuid.uuid4().hex[:6]}@example.com")
            page.locator("#sec-invite ~ form button[type=submit]").click()
            page.wait_for_url("**done=invited")
            pages.check(page, "members-invited")

            # German: the footer's switch, then the same pages once more.
            page.locator("footer button", has_text="Deutsch").click()
            page.wait_for_selector("html[lang=de]")
            assert "Mitglieder" in page.locator("h1").inner_text()
            for path, name in ((f"/app/g/{slug}/places", "places-de"), (f"/app/g/{slug}/calendar", "calendar-de"),
                               ("/app/settings", "settings-de")):
                page.goto(f"{base}{path}")
                pages.check(page, name)
            watch.assert_clean()
        finally:
            context.close()

    run.check("web: places, calendar and settings (phone, English and German)", walk)


def season_pages(run: Run, browser: Browser, base: str, pages: Pages, email: str, state: dict) -> None:
    """The season's pages (tests/browser/season.py) on a phone, signed in as the same grower."""

    def walk() -> None:
        context = browser.new_context(viewport=PHONE, locale="en-GB")
        page = context.new_page()
        watch = Watch(page, base)
        try:
            page.goto(f"{base}/app/login")
            page.fill("#email", email)
            page.fill("#password", PASSWORD)
            page.click("main button[type=submit]")
            page.wait_for_url(f"{base}/app/g/**")
            home = page.url
            # A second, empty garden of the same person for the starter kit (made through the API).
            token = api_login(base, email)
            kit_slug = f"kit-{uuid.uuid4().hex[:8]}"
            status, made = call("POST", f"{base}/api/v1/tenants", {"slug": kit_slug, "name": "Fensterbank"}, token)
            assert status == 201, (status, made)
            page.goto(home)
            season(page, pages.check_both, state["plant_page"].rstrip("/").rsplit("/", 1)[1], watch.expect_refusal,
                   state["plant_page"], f"{base}/app/g/{kit_slug}")
            watch.assert_clean()
        finally:
            context.close()

    run.check("web: the season: a task, harvests, mixing, a plan, a feeding, an inspection, a run, the "
              "diary, a starter kit (phone, English and German)", walk)


def sensor_pages(run: Run, browser: Browser, base: str, pages: Pages, email: str, state: dict) -> None:
    """The sensors page and a plant's 7-day chart (tests/browser/season.py) on a phone and a
    desktop, signed in as the same person (their garden's owner)."""

    def walk() -> None:
        context = browser.new_context(viewport=PHONE, locale="en-GB")
        context.grant_permissions(["clipboard-read", "clipboard-write"], origin=base)
        page = context.new_page()
        watch = Watch(page, base)
        try:
            page.goto(f"{base}/app/login")
            page.fill("#email", email)
            page.fill("#password", PASSWORD)
            page.click("main button[type=submit]")
            # Two gardens by now (the starter kit's): the sign-in lands on the list of them.
            page.wait_for_url(lambda url: "/app/login" not in url)
            page.goto(f"{base}/app/g/{state['slug']}")
            walk_sensors(page, pages.check_both, base, state["slug"], call, api_login(base, email))
            watch.assert_clean()
        finally:
            context.close()

    run.check("web: sensors registered and copied, a plant's 7-day chart (phone and desktop, English and "
              "German)", walk)


PLANT_TEXTS = {
    "de": {"nav": "Pflanzen", "new": "Neue Pflanze(n)", "plant": "Balkontomate", "litres": "1,5",
           "watered": "Gießen eingetragen.", "treat": "Behandlung eintragen", "interval": "Wartezeit von",
           "source": "Quelle", "refused": "Ernte abgelehnt", "left": "noch ", "entry": "Erste Blüten",
           "protection": "Pflanzenschutz", "harvest_from": "Ernte ab"},
    "en": {"nav": "Plants", "new": "New plant(s)", "plant": "Balcony tomato", "litres": "1.5",
           "watered": "Watering recorded.", "treat": "Record a treatment", "interval": "safety interval of",
           "source": "source", "refused": "Harvest refused", "left": "days left", "entry": "First flowers",
           "protection": "Protection", "harvest_from": "harvest from"},
}


def tiny_png() -> bytes:
    """A 32 x 24 px PNG made here (no imaging library needed)."""
    import struct
    import zlib

    width, height = 32, 24
    rows = b"".join(
        b"\x00" + b"".join(bytes((40 + x * 5, 120, 60 + y * 4)) for x in range(width)) for y in range(height)
    )

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


if __name__ == "__main__":
    sys.exit(main())
