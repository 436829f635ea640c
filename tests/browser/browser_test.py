"""A real browser against a live Kultiva server (run by tests/browser/run).

Starts the server (full mode, debug build) and two static page origins on free loopback ports,
then drives Debian's Chromium (headless) with Playwright:

1. a page on an allowed origin (listed in CORS_ORIGINS) logs in, calls the API with the bearer
   token, refreshes through the HttpOnly cookie with the CSRF header, and logs out; after the
   logout the refresh cookie is gone and a refresh is refused;
2. a page on a foreign origin can read no answer of the API (CORS), with or without
   credentials;
3. Swagger UI at /api/v1/docs lists every operation of /api/v1/openapi.json and "Try it out"
   executes a request that answers 200;
4. ReDoc at /api/v1/redoc shows the document's title and operation headings;
3 and 4 with every request to another origin blocked, and the test fails if any was attempted.

Prints "N passed, M failed" and exits non-zero on a failure.
"""

from __future__ import annotations

import argparse
import http.server
import json
import os
import socket
import subprocess
import sys
import threading
import time
import traceback
import urllib.request
import uuid
from pathlib import Path
from urllib.parse import urlparse

from playwright.sync_api import Browser, Page, sync_playwright

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PAGE_HTML = b"<!doctype html><html><head><meta charset='utf-8'><title>page</title></head><body></body></html>"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PageHandler(http.server.BaseHTTPRequestHandler):
    """Serves one empty HTML page at every path: the scripts run through page.evaluate."""

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(PAGE_HTML)))
        self.end_headers()
        self.wfile.write(PAGE_HTML)

    def log_message(self, *_args) -> None:
        pass


def serve_pages(port: int) -> http.server.ThreadingHTTPServer:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), PageHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def wait_until_live(base: str, server: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"the server exited with {server.returncode}; see {log}")
        try:
            with urllib.request.urlopen(f"{base}/api/v1/health/live", timeout=2) as res:
                if res.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise SystemExit(f"the server did not answer within 90 s; see {log}")


class Run:
    def __init__(self) -> None:
        self.passed = 0
        self.failed = 0

    def check(self, name: str, fn) -> None:
        try:
            fn()
        except Exception:  # a failed check is reported, the others still run
            self.failed += 1
            print(f"FAIL {name}", flush=True)
            traceback.print_exc()
        else:
            self.passed += 1
            print(f"PASS {name}", flush=True)


def same_origin_only(page: Page, origin: str) -> list[str]:
    """Blocks every request to another origin; returns the list they are recorded in."""
    outside: list[str] = []

    def route(r) -> None:
        url = r.request.url
        parsed = urlparse(url)
        if parsed.scheme in ("data", "blob") or f"{parsed.scheme}://{parsed.netloc}" == origin:
            r.continue_()
        else:
            outside.append(url)
            r.abort()

    page.route("**/*", route)
    return outside


# The allowed page's whole session, in the page's own JavaScript (fetch with the browser's
# cookie jar, CORS and CSRF rules).
SESSION_JS = """
async ([api, email, password]) => {
  const out = {};
  const json = async (res) => { try { return await res.json(); } catch { return null; } };
  const csrf = () => (document.cookie.split('; ').find(c => c.startsWith('svc_csrf=')) || '').slice(9);
  let res = await fetch(api + '/api/v1/auth/register', {method: 'POST',
    headers: {'Content-Type': 'application/json'},
    body: JSON.stringify({email, password, display_name: 'Browser Grower'})});
  out.register = res.status;
  res = await fetch(api + '/api/v1/auth/login', {method: 'POST', credentials: 'include',
    headers: {'Content-Type': 'application/json'},
    body: JSON.stringify({email, password, remember_me: true})});
  out.login = res.status;
  const login = await json(res);
  out.token_type = login && login.token_type;
  out.csrf_after_login = csrf().length;
  res = await fetch(api + '/api/v1/users/me', {headers: {Authorization: 'Bearer ' + login.access_token}});
  out.me = res.status;
  out.me_email = (await json(res)).email;
  res = await fetch(api + '/api/v1/auth/refresh', {method: 'POST', credentials: 'include'});
  out.refresh_without_csrf = res.status;
  res = await fetch(api + '/api/v1/auth/refresh', {method: 'POST', credentials: 'include',
    headers: {'X-CSRF-Token': csrf()}});
  out.refresh = res.status;
  const refreshed = await json(res);
  out.new_token = !!refreshed && refreshed.access_token !== login.access_token;
  res = await fetch(api + '/api/v1/users/me', {headers: {Authorization: 'Bearer ' + refreshed.access_token}});
  out.me_after_refresh = res.status;
  out.access_token = refreshed.access_token;
  return out;
}
"""

LOGOUT_JS = """
async ([api]) => {
  const csrf = () => (document.cookie.split('; ').find(c => c.startsWith('svc_csrf=')) || '').slice(9);
  const res = await fetch(api + '/api/v1/auth/logout', {method: 'POST', credentials: 'include',
    headers: {'X-CSRF-Token': csrf()}});
  return {logout: res.status, csrf_after_logout: csrf().length};
}
"""

# A refresh with whatever the cookie jar holds and the given CSRF value.
REFRESH_JS = """
async ([api, token]) => {
  const res = await fetch(api + '/api/v1/auth/refresh', {method: 'POST', credentials: 'include',
    headers: {'X-CSRF-Token': token}});
  return res.status;
}
"""

# What a foreign origin can read: every fetch must fail with a TypeError (blocked by CORS).
FOREIGN_JS = """
async ([api, token, email, password]) => {
  const attempt = async (path, init) => {
    try { const res = await fetch(api + path, init); return 'read ' + res.status; }
    catch (e) { return 'blocked'; }
  };
  return {
    me_with_token: await attempt('/api/v1/users/me', {headers: {Authorization: 'Bearer ' + token}}),
    login_with_credentials: await attempt('/api/v1/auth/login', {method: 'POST', credentials: 'include',
      headers: {'Content-Type': 'application/json'}, body: JSON.stringify({email, password})}),
    refresh_with_cookie: await attempt('/api/v1/auth/refresh', {method: 'POST', credentials: 'include',
      headers: {'X-CSRF-Token': 'x'}}),
  };
}
"""


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--chromium", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    api_port, allowed_port, foreign_port = free_port(), free_port(), free_port()
    api = f"http://127.0.0.1:{api_port}"
    allowed = f"http://127.0.0.1:{allowed_port}"
    foreign = f"http://127.0.0.1:{foreign_port}"
    env = dict(os.environ)
    env.update(
        SERVICE_MODE="full",
        BIND_ADDRESS=f"127.0.0.1:{api_port}",
        CORS_ORIGINS=allowed,
        # Plain http on loopback: cookies without the Secure flag (debug), as infra/run serves.
        DEBUG="true",
        RUST_LOG="warn",
        REDIS_KEY_PREFIX=f"browser-{os.getpid()}",
        JWT_SECRET_KEY=env.get("JWT_SECRET_KEY", "browser-test-secret-0123456789abcdef01234567"),
    )
    log = out / "server.log"
    server = subprocess.Popen([args.bin, "serve"], env=env, stdout=subprocess.DEVNULL, stderr=open(log, "w"))
    pages = [serve_pages(allowed_port), serve_pages(foreign_port)]
    run = Run()
    try:
        wait_until_live(api, server, log)
        with urllib.request.urlopen(f"{api}/api/v1/openapi.json", timeout=10) as res:
            document = json.load(res)
        with sync_playwright() as pw:
            browser: Browser = pw.chromium.launch(executable_path=args.chromium, headless=True, args=CHROMIUM_ARGS)
            try:
                checks(run, browser, api, allowed, foreign, document, out)
            finally:
                browser.close()
    finally:
        for p in pages:
            p.shutdown()
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
    print(f"browser: {run.passed} passed, {run.failed} failed", flush=True)
    return 1 if run.failed else 0


def checks(run: Run, browser: Browser, api: str, allowed: str, foreign: str, document: dict, out: Path) -> None:
    email = f"browser-{uuid.uuid4().hex[:12]}@example.com"
    password = "correct horse battery"
    session: dict = {}

    def allowed_origin_session() -> None:
        context = browser.new_context()
        page = context.new_page()
        page.goto(allowed + "/app")
        session.update(page.evaluate(SESSION_JS, [api, email, password]))
        jar = {c["name"]: c for c in context.cookies()}
        refresh_cookie = jar.get("svc_refresh")
        assert refresh_cookie and refresh_cookie["httpOnly"], jar
        assert refresh_cookie["path"] == "/api/v1/auth", refresh_cookie
        session.update(page.evaluate(LOGOUT_JS, [api]))
        left = sorted(c["name"] for c in context.cookies())
        assert left == [], f"cookies left after logout: {left}"
        # The server revoked the token itself: putting the old cookie back does not refresh.
        context.add_cookies(
            [
                {k: refresh_cookie[k] for k in ("name", "value", "domain", "path", "httpOnly", "sameSite")},
                {"name": "svc_csrf", "value": "replayed", "domain": refresh_cookie["domain"], "path": "/"},
            ]
        )
        session["refresh_after_logout"] = page.evaluate(REFRESH_JS, [api, "replayed"])
        expected = {
            "register": 201,
            "login": 200,
            "token_type": "bearer",
            "me": 200,
            "me_email": email,
            "refresh_without_csrf": 403,
            "refresh": 200,
            "new_token": True,
            "me_after_refresh": 200,
            "logout": 204,
            "csrf_after_logout": 0,
            "refresh_after_logout": 401,
        }
        got = {k: session.get(k) for k in expected}
        assert got == expected, f"{got} != {expected}"
        assert session["csrf_after_login"] > 0, session
        context.close()

    run.check("allowed origin: login, bearer call, cookie refresh with CSRF, logout", allowed_origin_session)

    def foreign_origin_refused() -> None:
        page = browser.new_context().new_page()
        page.goto(foreign + "/evil")
        got = page.evaluate(FOREIGN_JS, [api, session.get("access_token", "none"), email, password])
        assert got == {
            "me_with_token": "blocked",
            "login_with_credentials": "blocked",
            "refresh_with_cookie": "blocked",
        }, got
        page.context.close()

    run.check("foreign origin: every answer unreadable (CORS)", foreign_origin_refused)

    operations = [
        (method.upper(), path, op)
        for path, item in document["paths"].items()
        for method, op in item.items()
        if method in ("get", "post", "put", "patch", "delete")
    ]

    def swagger_ui() -> None:
        page = browser.new_context().new_page()
        outside = same_origin_only(page, api)
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto(api + "/api/v1/docs/")
        page.wait_for_selector(".opblock", timeout=30_000)
        # Swagger UI renders only the operations near the viewport (a long document is
        # virtualised): scroll the page through, bounded, and collect every operation seen.
        seen: set[str] = set()
        ends = 0
        for _ in range(600):
            ids, at_end = page.evaluate(
                "() => { const ids = Array.from(document.querySelectorAll('.opblock'), e => e.id);"
                " window.scrollBy(0, 400);"
                " return [ids, window.innerHeight + window.scrollY >= document.body.scrollHeight - 2]; }"
            )
            seen.update(ids)
            if len(seen) >= len(operations) or (at_end and (ends := ends + 1) > 20):
                break
            # At the bottom, give the last tags time to render (up to 5 s).
            page.wait_for_timeout(250 if at_end else 40)
        missing = [
            f"{method} {path}"
            for method, path, op in operations
            if not any(i.endswith("-" + op.get("operationId", "?")) for i in seen)
        ]
        assert not missing, (
            f"Swagger UI showed {len(seen)} operations, the document has {len(operations)}; "
            f"not shown: {missing}; page errors: {errors[:5]}"
        )
        page.evaluate("() => window.scrollTo(0, 0)")
        # "Try it out" on the health check: the request runs from the page and answers 200.
        block = page.locator("#operations-health-health_live")
        block.locator(".opblock-summary").click()
        block.get_by_role("button", name="Try it out").click()
        block.get_by_role("button", name="Execute").click()
        status = block.locator(".live-responses-table .response .response-col_status").first
        status.wait_for(timeout=15_000)
        assert status.inner_text().strip() == "200", status.inner_text()
        page.screenshot(path=str(out / "swagger.png"))
        assert outside == [], f"Swagger UI asked other origins: {outside}"
        page.context.close()

    run.check("Swagger UI: every operation listed, Try it out answers 200, no outside request", swagger_ui)

    def redoc() -> None:
        page = browser.new_context().new_page()
        outside = same_origin_only(page, api)
        page.goto(api + "/api/v1/redoc")
        title = document["info"]["title"]
        page.get_by_role("heading", name=title).first.wait_for(timeout=30_000)
        # Operation headings: ReDoc renders each operation's summary as an h2.
        # HTML folds the line breaks of long summaries into spaces.
        fold = lambda text: " ".join(text.split())  # noqa: E731
        summaries = [fold(op["summary"]) for _, _, op in operations if op.get("summary")]
        assert summaries, "the document has operation summaries"
        headings = [fold(h) for h in page.locator("h2").all_inner_texts()]
        shown = [s for s in summaries if s in headings]
        missing = sorted(set(summaries) - set(shown))
        assert not missing, f"ReDoc shows no heading for {missing}; headings: {headings}"
        page.screenshot(path=str(out / "redoc.png"))
        assert outside == [], f"ReDoc asked other origins: {outside}"
        page.context.close()

    run.check("ReDoc: title and operation headings rendered, no outside request", redoc)


if __name__ == "__main__":
    sys.exit(main())
