"""Sign-in with an OpenID provider in a real browser (run by tests/browser/run).

Starts a real OpenID provider (the npm package oidc-provider through tests/oidc/provider.mjs),
the server (full mode, debug build) and a front-end origin on free loopback ports, registers
three providers at the server (discovery; an expired-code client; a wrong-audience client), then
walks with Debian's Chromium (Playwright):

1. a new account: the provider's login page, the callback, the front end's page with the access
   token; the account and its address are the provider's;
2. a second login to the same account (same browser: no login page; a new browser: the page);
3. linking while logged in (a password account, from the front end with its bearer token);
4. the refusal of an unconfirmed address that matches a local account (no session, no link);
5. a wrong audience: an RFC 6749 error, no account;
6. a forged state and 7. an expired code: the provider's redirect back is held (its hops taken
   one by one) and then replayed with another state, or after the code's life: an RFC 6749
   error, no session, no account.

Prints "N passed, M failed" and exits non-zero on a failure.
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
from urllib.parse import parse_qs, urlparse

from playwright.sync_api import Browser, sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parent))
from browser_test import CHROMIUM_ARGS, Run, free_port, serve_pages, wait_until_live  # noqa: E402

FERNET_KEY = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
SECRET = "browser-client-secret-0123456789"
PASSWORD = "correct horse battery"


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


def start_provider(root: Path, modules: str, api: str, slugs: dict[str, str]) -> tuple[subprocess.Popen, str]:
    clients = [
        {
            "client_id": client,
            "client_secret": SECRET,
            "redirect_uris": [f"{api}/api/v1/auth/oauth/{slug}/callback"],
        }
        for client, slug in slugs.items()
    ]
    env = dict(os.environ, OIDC_NODE_MODULES=modules, OIDC_CLIENTS=json.dumps(clients))
    proc = subprocess.Popen(
        ["node", str(root / "tests/oidc/provider.mjs")],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    line = proc.stdout.readline() if proc.stdout else ""
    if not line:
        raise SystemExit("the OpenID provider did not start (is oidc-provider installed?)")
    return proc, json.loads(line)["issuer"]


def query_of(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlparse(url).query).items()}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--chromium", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--modules", required=True, help="node_modules holding oidc-provider")
    args = ap.parse_args()
    root = Path(__file__).resolve().parents[2]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    api_port, front_port = free_port(), free_port()
    api = f"http://127.0.0.1:{api_port}"
    front = f"http://127.0.0.1:{front_port}"
    tag = uuid.uuid4().hex[:8]
    slugs = {"kultiva": f"idp-{tag}", "kultiva-short": f"idp-short-{tag}", "kultiva-wrongaud": f"idp-aud-{tag}"}
    provider, issuer = start_provider(root, args.modules, api, slugs)
    env = dict(os.environ)
    env.update(
        SERVICE_MODE="full",
        BIND_ADDRESS=f"127.0.0.1:{api_port}",
        PUBLIC_URL=api,
        FRONTEND_URL=front,
        CORS_ORIGINS=front,
        FERNET_KEY=FERNET_KEY,
        DEBUG="true",
        RUST_LOG="warn",
        REDIS_KEY_PREFIX=f"oidc-browser-{os.getpid()}",
        JWT_SECRET_KEY=env.get("JWT_SECRET_KEY", "browser-test-secret-0123456789abcdef01234567"),
    )
    log = out / "oidc-server.log"
    server = subprocess.Popen([args.bin, "serve"], env=env, stdout=subprocess.DEVNULL, stderr=open(log, "w"))
    pages = serve_pages(front_port)
    run = Run()
    try:
        wait_until_live(api, server, log)
        admin = f"oidc-admin-{tag}@example.com"
        status, _ = call("POST", f"{api}/api/v1/auth/register", {"email": admin, "password": PASSWORD, "display_name": "Admin"})
        assert status == 201, status
        subprocess.run([args.bin, "platform-admin", "grant", admin], env=env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        status, body = call("POST", f"{api}/api/v1/auth/login", {"email": admin, "password": PASSWORD})
        assert status == 200, status
        admin_token = body["access_token"]
        for client, slug in slugs.items():
            status, body = call("POST", f"{api}/api/v1/admin/identity-providers", {
                "slug": slug, "display_name": f"Test {client}", "issuer": issuer,
                "client_id": client, "client_secret": SECRET,
                # These providers' email_verified may link (platform 0022, off by default).
                "trust_email": True,
            }, admin_token)
            assert status == 201, (status, body)
        with sync_playwright() as pw:
            browser: Browser = pw.chromium.launch(executable_path=args.chromium, headless=True, args=CHROMIUM_ARGS)
            try:
                checks(run, browser, api, front, slugs, admin_token)
            finally:
                browser.close()
    finally:
        pages.shutdown()
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
        provider.terminate()
        try:
            provider.wait(timeout=10)
        except subprocess.TimeoutExpired:
            provider.kill()
    print(f"oidc-browser: {run.passed} passed, {run.failed} failed", flush=True)
    return 1 if run.failed else 0


def checks(run: Run, browser: Browser, api: str, front: str, slugs: dict[str, str], admin_token: str) -> None:
    slug = slugs["kultiva"]
    callback_page = f"{front}/auth/callback"
    sub = f"alice-{uuid.uuid4().hex[:8]}"
    email = f"{sub}@example.com"
    state: dict = {}

    def sign_in_at_provider(page, who: str, address: str, verified: bool, name: str) -> None:
        page.wait_for_selector("#sub", timeout=15000)
        page.fill("#sub", who)
        page.fill("#email", address)
        if verified:
            page.check("#email_verified")
        page.fill("#name", name)
        page.click("#signin")

    def landed(page) -> dict[str, str]:
        page.wait_for_url(f"{callback_page}?**", timeout=20000)
        return query_of(page.url)

    def me(token: str) -> dict:
        status, body = call("GET", f"{api}/api/v1/users/me", token=token)
        assert status == 200, status
        return body

    def users_named(address: str) -> int:
        status, body = call("GET", f"{api}/api/v1/admin/users?q={address}", token=admin_token)
        assert status == 200, (status, body)
        items = body["items"] if isinstance(body, dict) else body
        return sum(1 for u in items if u.get("email") == address)

    def new_account() -> None:
        context = browser.new_context()
        state["context"] = context
        page = context.new_page()
        page.goto(f"{front}/login")
        page.goto(f"{api}/api/v1/auth/oauth/{slug}")
        sign_in_at_provider(page, sub, email, True, "Alice Browser")
        q = landed(page)
        assert "error" not in q, q
        assert q["expires_in"] == "900", q
        user = me(q["access_token"])
        assert user["email"] == email and user["email_verified"] is True, user
        state["key"] = user["key"]
        # Every cookie of the service's host (svc_refresh lives under /api/v1/auth).
        names = {c["name"] for c in context.cookies() if c["domain"] == "127.0.0.1"}
        assert {"svc_refresh", "svc_csrf"} <= names, names
        assert "svc_oauth_state" not in names, names

    run.check("OpenID: a first login opens an account", new_account)

    def second_login() -> None:
        page = state["context"].new_page()
        page.goto(f"{api}/api/v1/auth/oauth/{slug}")
        q = landed(page)  # the provider remembers the person: no login page
        assert me(q["access_token"])["key"] == state["key"], q
        context = browser.new_context()
        try:
            page = context.new_page()
            page.goto(f"{api}/api/v1/auth/oauth/{slug}")
            sign_in_at_provider(page, sub, email, True, "Alice Browser")
            q = landed(page)
            assert me(q["access_token"])["key"] == state["key"], q
        finally:
            context.close()
        assert users_named(email) == 1

    run.check("OpenID: a second login reaches the same account", second_login)

    local = f"local-{uuid.uuid4().hex[:8]}@example.com"

    def link_while_logged_in() -> None:
        status, _ = call("POST", f"{api}/api/v1/auth/register", {"email": local, "password": PASSWORD, "display_name": "Local"})
        assert status == 201, status
        status, body = call("POST", f"{api}/api/v1/auth/login", {"email": local, "password": PASSWORD})
        assert status == 200, status
        token = body["access_token"]
        context = browser.new_context()
        try:
            page = context.new_page()
            page.goto(f"{front}/account")
            started = page.evaluate(
                """async ([api, slug, token]) => {
                  const res = await fetch(`${api}/api/v1/auth/oauth/${slug}/link`, {method: 'POST',
                    credentials: 'include', headers: {Authorization: `Bearer ${token}`}});
                  return {status: res.status, body: await res.json()};
                }""",
                [api, slug, token],
            )
            assert started["status"] == 200, started
            page.goto(started["body"]["authorization_url"])
            linked_sub = f"bob-{uuid.uuid4().hex[:8]}"
            sign_in_at_provider(page, linked_sub, "bob@elsewhere.example.com", False, "Bob")
            q = landed(page)
            assert "error" not in q, q
            assert me(q["access_token"])["key"] == me(token)["key"], q
            status, body = call("GET", f"{api}/api/v1/users/me/identities", token=token)
            assert status == 200 and len(body) == 1 and body[0]["provider"] == slug, body
        finally:
            context.close()

    run.check("OpenID: linking while logged in", link_while_logged_in)

    def unconfirmed_address_refused() -> None:
        context = browser.new_context()
        try:
            page = context.new_page()
            page.goto(f"{api}/api/v1/auth/oauth/{slug}")
            # The provider vouches for the address; the local account never confirmed it.
            sign_in_at_provider(page, f"mallory-{uuid.uuid4().hex[:8]}", local, True, "Mallory")
            q = landed(page)
            assert q.get("error") == "access_denied", q
            assert q.get("error_description") == "account_exists_email_unverified", q
            assert "access_token" not in q, q
            names = {c["name"] for c in context.cookies()}
            assert "svc_refresh" not in names, names
        finally:
            context.close()
        assert users_named(local) == 1

    run.check("OpenID: an unconfirmed address never takes over a local account", unconfirmed_address_refused)

    def refused_flow(which: str, rewrite, expected: tuple[str, str]) -> None:
        victim = f"carol-{uuid.uuid4().hex[:8]}"
        address = f"{victim}@example.com"
        context = browser.new_context()
        try:
            page = context.new_page()
            if rewrite:
                page.route(lambda url: url.startswith(f"{api}/api/v1/auth/oauth/") and "/callback?" in url, rewrite)
            page.goto(f"{api}/api/v1/auth/oauth/{slugs[which]}")
            sign_in_at_provider(page, victim, address, True, "Carol")
            q = landed(page)
            assert (q.get("error"), q.get("error_description")) == expected, q
            assert "access_token" not in q, q
        finally:
            context.close()
        assert users_named(address) == 0

    run.check("OpenID: a wrong audience is refused",
              lambda: refused_flow("kultiva-wrongaud", None, ("invalid_grant", "id_token_invalid")))

    def held_callback(context, which: str, who: str, address: str) -> tuple[object, str]:
        """Walks to the provider's redirect back to the service and holds it there.

        Playwright routes only the first request of a redirect chain, so the provider's hops
        are taken one at a time: the login form's POST is fetched without following its
        redirect (its cookies land in the context), the resume URL is then a navigation of its
        own, fetched the same way, and its Location is the callback URL with the code and the
        state. Nothing reaches the service's callback; the browser keeps its state cookie.
        """
        held: dict[str, str] = {}

        def hold(route) -> None:
            response = route.fetch(max_redirects=0)
            location = response.headers.get("location", "")
            if "/callback?" in location:
                held["callback"] = location
            else:
                held["resume"] = location
            # A plain page instead of the redirect; the provider's cookies still count.
            headers = {k: v for k, v in response.headers.items() if k.lower() == "set-cookie"}
            route.fulfill(status=200, headers=headers, content_type="text/html",
                          body="<!doctype html><title>held</title>")

        page = context.new_page()
        page.route(lambda url: "/interaction/" in url and url.endswith("/login"), hold)
        page.goto(f"{api}/api/v1/auth/oauth/{slugs[which]}")
        sign_in_at_provider(page, who, address, True, "Held")
        page.wait_for_function("document.title === 'held'", timeout=15000)
        assert held.get("resume"), held
        resume = held["resume"]
        if resume.startswith("/"):
            resume = urlparse(page.url)._replace(path="", query="", fragment="").geturl() + resume
        page.route(lambda url: url.startswith(resume.split("?")[0]), hold)
        page.goto(resume)
        assert held.get("callback", "").startswith(f"{api}/api/v1/auth/oauth/"), held
        return page, held["callback"]

    def forged_state() -> None:
        victim = f"dave-{uuid.uuid4().hex[:8]}"
        address = f"{victim}@example.com"
        context = browser.new_context()
        try:
            page, callback = held_callback(context, "kultiva", victim, address)
            q = query_of(callback)
            assert q.get("code") and q.get("state"), q
            forged = callback.replace(f"state={q['state']}", "state=forged-" + uuid.uuid4().hex)
            page.goto(forged)
            got = landed(page)
            assert (got.get("error"), got.get("error_description")) == ("invalid_request", "invalid_state"), got
            assert "access_token" not in got, got
            assert "svc_refresh" not in {c["name"] for c in context.cookies()}
            # The state is single-use: the forged try spent it, so even the genuine redirect
            # replayed afterwards signs nobody in.
            page.goto(callback)
            got = landed(page)
            assert (got.get("error"), got.get("error_description")) == ("invalid_request", "invalid_state"), got
            assert "svc_refresh" not in {c["name"] for c in context.cookies()}
        finally:
            context.close()
        assert users_named(address) == 0

    run.check("OpenID: a forged state is refused and creates nothing", forged_state)

    def expired_code() -> None:
        victim = f"erin-{uuid.uuid4().hex[:8]}"
        address = f"{victim}@example.com"
        context = browser.new_context()
        try:
            # The "-short" client's codes live 2 seconds at the provider.
            page, callback = held_callback(context, "kultiva-short", victim, address)
            page.wait_for_timeout(3500)
            page.goto(callback)
            got = landed(page)
            assert (got.get("error"), got.get("error_description")) == ("invalid_grant", "code_refused"), got
            assert "access_token" not in got, got
            assert "svc_refresh" not in {c["name"] for c in context.cookies()}
        finally:
            context.close()
        assert users_named(address) == 0

    run.check("OpenID: an expired code is refused and creates nothing", expired_code)

if __name__ == "__main__":
    sys.exit(main())
