"""The web pages in a real browser (run by tests/browser/run).

Starts the server (full mode, debug build) on a free loopback port and walks the pages with
Debian's Chromium (headless) through Playwright, as a grower on a phone (390 px wide):

1. sign-up, sign-in and Today in English, a first plant (made through the API: the plant
   pages come with the next issue), its watering confirmed in place (htmx: the list item
   changes, the page does not reload), the language switched to German;
2. the same without JavaScript: every form posts and the page answers with a redirect;
3. the keyboard alone: the skip link first, every control reachable, the care confirmed with
   Enter;
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

    def assert_clean(self) -> None:
        assert not self.errors, f"console errors: {self.errors}"
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
        page.wait_for_selector("text=Almost there")
        page.goto(f"{base}/app/login")
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


if __name__ == "__main__":
    sys.exit(main())
