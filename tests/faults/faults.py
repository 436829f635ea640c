#!/usr/bin/env python3
"""Fault runs: a write workload against a real Kultiva server while its dependencies (or the
server itself) fail, then a check through the database that nothing acknowledged was lost.

Started by tests/faults/run, which provides the binaries and the work directory. Everything
runs on its own: a throwaway PostgreSQL cluster, a private redis-server and a kultiva server,
each on a free 127.0.0.1 port, under WORKDIR. Never touches the machine's shared services.

Scenarios (each: load, fault, recovery, verification):
  redis-stop    Redis stopped (SIGTERM) for a few seconds under load, then started again.
  redis-freeze  Redis frozen (SIGSTOP) for a few seconds under load, then thawed (SIGCONT).
  pg-restart    `pg_ctl restart -m immediate` under load, twice.
  sigkill       the server killed with SIGKILL mid-write N times, restarted each time.
  sigterm       SIGTERM under load (graceful drain), restarted, three times.

The workload: six writers create sites in one garden (one statement each) while one creates
gardens (registry row, schema and migrations, then activation with the admin membership in one
statement) and one registers accounts (the personal garden's schema, then the account, its
verification token and mail and the garden's activation in one transaction). --sites-only
leaves the last two out.

Figures of each scenario:
  acked      writes acknowledged with 2xx
  lost       acknowledged writes missing or different in the database          (must be 0)
  half       records not whole: a site whose fields do not match what was sent,
             a garden not active, without its tables or its admin membership,
             an account without its active personal garden                    (must be 0)
  5xx        answers 500-599 other than 503                                     (must be 0)
  503        answers 503 (allowed: "unavailable, retry")
  4xx        other refusals of valid writes (reported; a 401/404 here is a bug)
  refused    requests that never reached the server (connection refused or not
             accepted in time: the server was down)
  no-answer  requests that reached the server (connected) but got no HTTP answer:
             reset or timed out (expected when SIGKILL ends the process; 0 under SIGTERM)
  recover    longest time from a fault's start to the first acknowledged write
             started after it (the service answers again)                     (must be <= 5 s)

Gardens and accounts are checked after the provisioning reaper's bound: a creation killed
mid-way leaves a tenant in status `provisioning` (never served), which the server's reaper
removes once it is older than TENANT_PROVISIONING_TIMEOUT_SECONDS (PROVISIONING_TIMEOUT_S here).
The check waits (bounded) until no tenant is `provisioning` any more, and reports the wait.

Exit status: 0 when every figure is in bounds, 1 otherwise, 2 on a harness failure.
"""

from __future__ import annotations

import argparse
import hashlib
import http.client
import json
import os
import random
import secrets
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field

LOOPBACK = "127.0.0.1"
RECOVERY_LIMIT_S = 5.0
# Every wait below is bounded: a probe gives up after this long.
PROBE_DEADLINE_S = 30.0
REQUEST_TIMEOUT_S = 10.0
WRITERS = 6
# The server's provisioning reaper bound in these runs (TENANT_PROVISIONING_TIMEOUT_SECONDS);
# well above a provisioning under load here (well under a second).
PROVISIONING_TIMEOUT_S = 5
SITE_KINDS = ["apartment", "garden", "balcony", "greenhouse", "windowsill", "grow_tent"]


def log(msg: str) -> None:
    print(f"[faults] {time.strftime('%H:%M:%S')} {msg}", file=sys.stderr, flush=True)


class HarnessError(Exception):
    pass


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return s.getsockname()[1]


def is_root() -> bool:
    return os.geteuid() == 0


# ------------------------------------------------------------------ processes


class Postgres:
    """A throwaway cluster under WORKDIR/pg (owned by the postgres user when run as root)."""

    def __init__(self, bindir: str, workdir: str):
        self.bindir = bindir
        self.data = os.path.join(workdir, "pg", "data")
        self.sock = os.path.join(workdir, "pg", "sock")
        self.logfile = os.path.join(workdir, "pg", "postgres.log")
        self.port = free_port()
        self.url_base = f"postgres://postgres@{LOOPBACK}:{self.port}"

    def _as_owner(self, args: list[str], **kw) -> subprocess.CompletedProcess:
        if is_root():
            args = ["runuser", "-u", "postgres", "--"] + args
        return subprocess.run(args, cwd="/", **kw)

    def init(self) -> None:
        os.makedirs(self.sock, exist_ok=True)
        if is_root():
            subprocess.run(["chown", "-R", "postgres:", os.path.dirname(self.data)], check=True)
        r = self._as_owner(
            [f"{self.bindir}/initdb", "-D", self.data, "-A", "trust", "-U", "postgres",
             "--encoding=UTF8", "--no-locale"],
            capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            raise HarnessError(f"initdb failed: {r.stderr[-2000:]}")

    def _opts(self) -> str:
        # fsync stays on: the restarts are of the server process, not of the machine, but the
        # cluster is configured as a production one would be.
        opts = (f"-p {self.port} -k {self.sock} -c listen_addresses={LOOPBACK} "
                "-c max_connections=100")
        if self.major() >= 14:
            # Crash recovery syncs the data directory; syncfs is one call instead of one per file.
            opts += " -c recovery_init_sync_method=syncfs"
        return opts

    def major(self) -> int:
        r = subprocess.run([f"{self.bindir}/postgres", "--version"], capture_output=True,
                           text=True, timeout=30)
        digits = "".join(c if c.isdigit() or c == "." else " " for c in r.stdout).split()
        return int(digits[0].split(".")[0]) if digits else 0

    def start(self) -> None:
        r = self._as_owner(
            [f"{self.bindir}/pg_ctl", "-D", self.data, "-l", self.logfile, "-w", "-t", "60",
             "-o", self._opts(), "start"], capture_output=True, text=True, timeout=90)
        if r.returncode != 0:
            raise HarnessError(f"pg_ctl start failed: {r.stdout}{r.stderr}")

    def restart_immediate(self) -> None:
        r = self._as_owner(
            [f"{self.bindir}/pg_ctl", "-D", self.data, "-l", self.logfile, "-w", "-t", "60",
             "-m", "immediate", "-o", self._opts(), "restart"],
            capture_output=True, text=True, timeout=90)
        if r.returncode != 0:
            raise HarnessError(f"pg_ctl restart failed: {r.stdout}{r.stderr}")

    def stop(self) -> None:
        if os.path.exists(os.path.join(self.data, "postmaster.pid")):
            self._as_owner([f"{self.bindir}/pg_ctl", "-D", self.data, "-m", "immediate", "-w",
                            "-t", "30", "stop"], capture_output=True, timeout=60)

    def psql(self, db: str, sql: str) -> list[list[str]]:
        """Rows of a query, fields split on the unit separator."""
        r = subprocess.run(
            [f"{self.bindir}/psql", "-X", "-w", "-q", "-A", "-t", "-F", "\x1f", "-v",
             "ON_ERROR_STOP=1", "-d", f"{self.url_base}/{db}", "-c", sql],
            capture_output=True, text=True, timeout=60,
            env={**os.environ, "PGCONNECT_TIMEOUT": "5"})
        if r.returncode != 0:
            raise HarnessError(f"psql failed: {r.stderr.strip()}")
        return [line.split("\x1f") for line in r.stdout.splitlines() if line != ""]


class Redis:
    def __init__(self, workdir: str):
        self.dir = os.path.join(workdir, "redis")
        os.makedirs(self.dir, exist_ok=True)
        self.port = free_port()
        self.proc: subprocess.Popen | None = None
        self.pidfile = os.path.join(workdir, "redis.pid")

    def start(self) -> None:
        logf = open(os.path.join(self.dir, "redis.log"), "ab")
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", LOOPBACK, "--save", "",
             "--appendonly", "no", "--dir", self.dir],
            stdout=logf, stderr=subprocess.STDOUT, start_new_session=True)
        with open(self.pidfile, "w") as f:
            f.write(f"{self.proc.pid}\n")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            r = subprocess.run(["redis-cli", "-h", LOOPBACK, "-p", str(self.port), "ping"],
                               capture_output=True, text=True, timeout=5)
            if r.stdout.strip() == "PONG":
                return
            time.sleep(0.05)
        raise HarnessError("private redis-server did not answer")

    def signal(self, sig: int) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.proc = None


class Server:
    def __init__(self, binary: str, workdir: str, env: dict[str, str]):
        self.binary = binary
        self.env = env
        self.port = free_port()
        self.logpath = os.path.join(workdir, "server.log")
        self.pidfile = os.path.join(workdir, "server.pid")
        self.proc: subprocess.Popen | None = None
        self.starts = 0

    def start(self) -> None:
        logf = open(self.logpath, "ab")
        env = {**self.env, "BIND_ADDRESS": f"{LOOPBACK}:{self.port}"}
        self.proc = subprocess.Popen([self.binary, "serve"], env=env, stdout=logf,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        self.starts += 1
        with open(self.pidfile, "w") as f:
            f.write(f"{self.proc.pid}\n")

    def signal(self, sig: int) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)

    def wait(self, timeout: float) -> int | None:
        if not self.proc:
            return None
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            if self.wait(30) is None:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.proc = None


# ------------------------------------------------------------------ HTTP


@dataclass
class Answer:
    status: int | None  # None: no HTTP answer
    body: object = None
    error: str = ""


def call(port: int, method: str, path: str, body: dict | None = None, token: str | None = None,
         timeout: float = REQUEST_TIMEOUT_S) -> Answer:
    conn = http.client.HTTPConnection(LOOPBACK, port, timeout=timeout)
    try:
        headers = {"Connection": "close"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if token:
            headers["Authorization"] = f"Bearer {token}"
        try:
            conn.connect()
        except OSError as err:
            # Never reached the server: refused (nobody listens) or no handshake in time.
            return Answer(None, None, f"connect:{type(err).__name__}")
        conn.request(method, path, body=data, headers=headers)
        res = conn.getresponse()
        raw = res.read()
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = raw[:200].decode(errors="replace")
        return Answer(res.status, parsed)
    except (OSError, http.client.HTTPException) as err:
        return Answer(None, None, type(err).__name__)
    finally:
        conn.close()


# ------------------------------------------------------------------ workload


def expected_site(name: str) -> tuple[str, str]:
    """Kind and description follow from the name, so a row can be checked on its own."""
    digest = hashlib.sha256(name.encode()).hexdigest()
    return SITE_KINDS[int(digest[:2], 16) % len(SITE_KINDS)], f"fault-run {name} {digest[:16]}"


@dataclass
class Tally:
    acked_sites: dict[str, dict] = field(default_factory=dict)  # id -> answer body
    acked_gardens: set[str] = field(default_factory=set)
    acked_accounts: set[str] = field(default_factory=set)
    half_acks: list[str] = field(default_factory=list)  # 2xx answers that differ from the request
    statuses: dict[str, int] = field(default_factory=dict)
    samples: dict[str, str] = field(default_factory=dict)
    attempts: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def count(self, key: str, sample: str = "") -> None:
        self.statuses[key] = self.statuses.get(key, 0) + 1
        if sample and key not in self.samples:
            self.samples[key] = sample


class Workload:
    def __init__(self, ctx: "Context", label: str):
        self.ctx = ctx
        self.label = label
        self.tally = Tally()
        self.stop_flag = threading.Event()
        self.threads: list[threading.Thread] = []
        self.seq = 0

    def next_name(self, who: str) -> str:
        with self.tally.lock:
            self.seq += 1
            return f"{self.label}-{who}-{self.seq}-{self.ctx.run_id}"

    def write_site(self, who: str, timeout: float = REQUEST_TIMEOUT_S) -> Answer:
        name = self.next_name(who)
        kind, description = expected_site(name)
        ans = call(self.ctx.server.port, "POST", f"/api/v1/t/{self.ctx.slug}/sites/",
                   {"name": name, "kind": kind, "description": description},
                   self.ctx.token, timeout)
        self.record(ans, "site")
        if ans.status is not None and 200 <= ans.status < 300:
            b = ans.body if isinstance(ans.body, dict) else {}
            with self.tally.lock:
                if (b.get("name"), b.get("kind"), b.get("description")) != (name, kind,
                                                                             description):
                    self.tally.half_acks.append(f"site {name}: answered {b}")
                if isinstance(b.get("key"), str):
                    self.tally.acked_sites[b["key"]] = b
                else:
                    self.tally.half_acks.append(f"site {name}: 2xx without a key")
        return ans

    def write_garden(self) -> Answer:
        with self.tally.lock:
            self.seq += 1
            slug = f"fr-{self.ctx.run_id}-{self.label}-{self.seq}"
        ans = call(self.ctx.server.port, "POST", "/api/v1/tenants/",
                   {"slug": slug, "name": f"Fault run {slug}"}, self.ctx.token)
        self.record(ans, "garden")
        if ans.status is not None and 200 <= ans.status < 300:
            with self.tally.lock:
                self.tally.acked_gardens.add(slug)
        return ans

    def write_account(self) -> Answer:
        with self.tally.lock:
            self.seq += 1
            email = f"acct-{self.ctx.run_id}-{self.label}-{self.seq}@example.test"
        ans = call(self.ctx.server.port, "POST", "/api/v1/auth/register",
                   {"email": email, "password": "Fault-run-password-1",
                    "display_name": "Fault Runner"})
        self.record(ans, "account")
        if ans.status is not None and 200 <= ans.status < 300:
            with self.tally.lock:
                self.tally.acked_accounts.add(email)
        return ans

    def record(self, ans: Answer, what: str) -> None:
        with self.tally.lock:
            self.tally.attempts += 1
            if ans.status is None and ans.error.startswith("connect:"):
                self.tally.count("refused", ans.error)
            elif ans.status is None:
                # Connected, then reset or no answer: the request reached the server.
                self.tally.count("no-answer", ans.error)
            elif 200 <= ans.status < 300:
                self.tally.count("2xx")
            elif ans.status == 503:
                self.tally.count("503")
            elif ans.status >= 500:
                self.tally.count("5xx", f"{what} {ans.status} {str(ans.body)[:300]}")
            else:
                self.tally.count(f"{ans.status}", f"{what} {str(ans.body)[:300]}")

    def _site_writer(self, idx: int) -> None:
        while not self.stop_flag.is_set():
            ans = self.write_site(f"w{idx}")
            if ans.status is None or ans.status >= 500:
                # Nobody answers (server restarting): do not spin.
                self.stop_flag.wait(0.05)

    def _garden_writer(self) -> None:
        while not self.stop_flag.is_set():
            self.write_garden()
            self.stop_flag.wait(0.25)

    def _account_writer(self) -> None:
        while not self.stop_flag.is_set():
            self.write_account()
            self.stop_flag.wait(0.25)

    def start(self) -> None:
        gardens = self.ctx.gardens
        for i in range(WRITERS):
            t = threading.Thread(target=self._site_writer, args=(i,), daemon=True)
            t.start()
            self.threads.append(t)
        if gardens:
            for target in (self._garden_writer, self._account_writer):
                t = threading.Thread(target=target, daemon=True)
                t.start()
                self.threads.append(t)

    def stop(self) -> None:
        self.stop_flag.set()
        for t in self.threads:
            t.join(timeout=REQUEST_TIMEOUT_S + 5)
            if t.is_alive():
                raise HarnessError("a writer thread did not stop")
        self.threads.clear()

    def recovery(self, since: float) -> float:
        """Seconds from `since` until a write started after it is acknowledged (bounded)."""
        deadline = since + PROBE_DEADLINE_S
        while time.monotonic() < deadline:
            ans = self.write_site("probe", timeout=2.0)
            if ans.status is not None and 200 <= ans.status < 300:
                return time.monotonic() - since
            time.sleep(0.05)
        return float("inf")


# ------------------------------------------------------------------ context and checks


@dataclass
class Context:
    pg: Postgres
    redis: Redis
    server: Server
    db: str
    run_id: str
    token: str = ""
    slug: str = ""
    schema: str = ""
    user_id: str = ""
    latest_version: str = ""
    gardens: bool = True
    log_offset: int = 0


def wait_live(ctx: Context, deadline_s: float = PROBE_DEADLINE_S) -> float:
    t0 = time.monotonic()
    while time.monotonic() - t0 < deadline_s:
        if ctx.server.proc and ctx.server.proc.poll() is not None:
            raise HarnessError(f"server exited with {ctx.server.proc.returncode}; see "
                               f"{ctx.server.logpath}")
        ans = call(ctx.server.port, "GET", "/api/v1/health/live", timeout=1.0)
        if ans.status == 200:
            return time.monotonic() - t0
        time.sleep(0.05)
    raise HarnessError("server did not come up")


def setup_account(ctx: Context) -> None:
    email = f"faults-{ctx.run_id}@example.test"
    password = "Fault-run-" + secrets.token_hex(8)
    ans = call(ctx.server.port, "POST", "/api/v1/auth/register",
               {"email": email, "password": password, "display_name": "Fault Runner"})
    if ans.status != 201:
        raise HarnessError(f"register: {ans}")
    ctx.user_id = ans.body["key"]
    ans = call(ctx.server.port, "POST", "/api/v1/auth/login",
               {"email": email, "password": password, "remember_me": False})
    if ans.status != 200 or not isinstance(ans.body, dict):
        raise HarnessError(f"login: {ans}")
    ctx.token = ans.body["access_token"]
    ctx.slug = f"fr-{ctx.run_id}-home"
    ans = call(ctx.server.port, "POST", "/api/v1/tenants/",
               {"slug": ctx.slug, "name": "Fault run garden"}, ctx.token)
    if ans.status != 201:
        raise HarnessError(f"create garden: {ans}")
    rows = ctx.pg.psql(ctx.db, "SELECT schema_name, schema_version FROM platform.tenants "
                               f"WHERE slug = '{ctx.slug}'")
    ctx.schema, ctx.latest_version = rows[0]


def verify(ctx: Context, w: Workload) -> tuple[int, int, list[str]]:
    """(lost, half, problems) through the database."""
    problems: list[str] = list(w.tally.half_acks)
    half = len(w.tally.half_acks)
    lost = 0
    rows = ctx.pg.psql(ctx.db, (
        "SELECT id::text, name, kind, coalesce(description, '<null>'), "
        "to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US') "
        f"FROM \"{ctx.schema}\".sites WHERE name LIKE '{w.label}-%'"))
    by_id = {r[0]: r for r in rows}
    for r in rows:
        kind, description = expected_site(r[1])
        if (r[2], r[3]) != (kind, description):
            half += 1
            problems.append(f"half-written site {r}")
    for key, b in w.tally.acked_sites.items():
        r = by_id.get(key)
        if r is None:
            lost += 1
            problems.append(f"acknowledged site lost: {key} {b.get('name')}")
        elif (r[1], r[2], r[3]) != (b.get("name"), b.get("kind"), b.get("description")):
            lost += 1
            problems.append(f"acknowledged site differs: {b} vs {r}")
    # Gardens: several statements (registry row, schema + migrations, status, membership).
    gardens = ctx.pg.psql(ctx.db, (
        "SELECT t.slug, t.status, t.schema_version::text, "
        "(to_regclass(quote_ident(t.schema_name) || '.sites') IS NOT NULL)::text, "
        "coalesce((SELECT m.role FROM platform.memberships m WHERE m.tenant_id = t.id "
        f"AND m.user_id = '{ctx.user_id}'), '<none>') "
        "FROM platform.tenants t WHERE t.kind = 'organisation' "
        f"AND t.slug LIKE 'fr-{ctx.run_id}-{w.label}-%'"))
    seen = set()
    for slug, status, version, has_tables, role in gardens:
        seen.add(slug)
        if (status, version, has_tables, role) != ("active", ctx.latest_version, "true",
                                                    "admin"):
            half += 1
            problems.append(f"half-written garden {slug}: status={status} version={version} "
                            f"tables={has_tables} membership={role}")
    for slug in w.tally.acked_gardens - seen:
        lost += 1
        problems.append(f"acknowledged garden lost: {slug}")
    # Accounts: the user row (with its verification token and mail) commits first, then the
    # personal garden is provisioned and its admin membership added.
    accounts = ctx.pg.psql(ctx.db, (
        "SELECT u.email, count(t.id)::text FROM platform.users u "
        "LEFT JOIN platform.memberships m ON m.user_id = u.id AND m.role = 'admin' "
        "LEFT JOIN platform.tenants t ON t.id = m.tenant_id AND t.kind = 'personal' "
        "AND t.status = 'active' "
        f"WHERE u.email LIKE 'acct-{ctx.run_id}-{w.label}-%' GROUP BY u.email"))
    seen = set()
    for email, personal in accounts:
        seen.add(email)
        if personal != "1":
            half += 1
            problems.append(f"half-written account {email}: {personal} active personal gardens")
    for email in w.tally.acked_accounts - seen:
        lost += 1
        problems.append(f"acknowledged account lost: {email}")
    return lost, half, problems


def wait_reaped(ctx: Context) -> tuple[float, int]:
    """Waits (bounded) until the reaper removed every tenant left in `provisioning` by a
    creation that died; returns the wait and how many there were at its start."""
    sql = "SELECT count(*) FROM platform.tenants WHERE status = 'provisioning'"
    t0 = time.monotonic()
    first = int(ctx.pg.psql(ctx.db, sql)[0][0])
    left = first
    # The bound, plus a reaper interval (half the bound, at least 1 s), plus slack.
    deadline = t0 + PROVISIONING_TIMEOUT_S * 1.5 + 10
    while left and time.monotonic() < deadline:
        time.sleep(0.25)
        left = int(ctx.pg.psql(ctx.db, sql)[0][0])
    return time.monotonic() - t0, first


def internal_errors(ctx: Context, limit: int = 5) -> list[str]:
    """The causes the server logged for its 500s since the last call (the client sees only
    an error id)."""
    found = []
    try:
        with open(ctx.server.logpath, "rb") as f:
            f.seek(ctx.log_offset)
            data = f.read()
            ctx.log_offset += len(data)
    except OSError:
        return found
    for line in data.decode(errors="replace").splitlines():
        if len(found) >= limit:
            break
        if '"INTERNAL_ERROR"' in line or ('"level":"ERROR"' in line
                                           and "SERVICE_UNAVAILABLE" not in line):
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            found.append(f"server log: {rec.get('message')} {rec.get('error_code', '')} "
                         f"{rec.get('cause', rec.get('error', ''))} "
                         f"{rec.get('span', {}).get('path', '')}")
    return found


@dataclass
class Result:
    name: str
    acked: int
    lost: int
    half: int
    five_xx: int
    s503: int
    four_xx: int
    refused: int
    no_answer: int
    recover: float
    problems: list[str]
    notes: str = ""
    failed: bool = False

    def ok(self) -> bool:
        return (not self.failed and self.lost == 0 and self.half == 0 and self.five_xx == 0
                and self.recover <= RECOVERY_LIMIT_S and self.acked > 0)


def finish(ctx: Context, w: Workload, name: str, recoveries: list[float],
           notes: str = "") -> Result:
    w.stop()
    # Everything must be up for the check: the last fault is over.
    wait_live(ctx)
    if w.recovery(time.monotonic()) == float("inf"):
        raise HarnessError("the service does not take writes after the scenario")
    if ctx.gardens:
        waited, left = wait_reaped(ctx)
        notes += f"; reaper: {left} stuck provisioning tenants removed within {waited:.1f} s"
    lost, half, problems = verify(ctx, w)
    kinds = {k: sum(1 for p in problems if p.startswith(f"half-written {k}"))
             for k in ("site", "garden", "account")}
    if half:
        notes += "; half-written: " + ", ".join(f"{v} {k}s" for k, v in kinds.items())
    st = w.tally.statuses
    four = sum(v for k, v in st.items() if k.isdigit() and k.startswith("4"))
    for k, v in w.tally.samples.items():
        problems.append(f"first {k}: {v}")
    problems.extend(internal_errors(ctx))
    acked = len(w.tally.acked_sites) + len(w.tally.acked_gardens) + len(w.tally.acked_accounts)
    return Result(name, acked, lost, half,
                  st.get("5xx", 0), st.get("503", 0), four, st.get("refused", 0),
                  st.get("no-answer", 0),
                  max(recoveries) if recoveries else 0.0, problems, notes)


# ------------------------------------------------------------------ scenarios


def scenario_redis(ctx: Context, freeze: bool) -> Result:
    name = "redis-freeze" if freeze else "redis-stop"
    w = Workload(ctx, name)
    w.start()
    time.sleep(1.5)
    recoveries = []
    for _ in range(2):
        t0 = time.monotonic()
        if freeze:
            ctx.redis.signal(signal.SIGSTOP)
        else:
            ctx.redis.stop()
        # The service must keep answering while Redis is away.
        recoveries.append(w.recovery(t0))
        time.sleep(max(0.0, 4.0 - (time.monotonic() - t0)))
        t1 = time.monotonic()
        if freeze:
            ctx.redis.signal(signal.SIGCONT)
        else:
            ctx.redis.start()
        recoveries.append(w.recovery(t1))
        time.sleep(1.5)
    return finish(ctx, w, name, recoveries, "2 faults of 4 s")


def scenario_pg_restart(ctx: Context) -> Result:
    w = Workload(ctx, "pg-restart")
    w.start()
    time.sleep(1.5)
    recoveries = []
    outages = []
    for _ in range(2):
        t0 = time.monotonic()
        ctx.pg.restart_immediate()
        # Measured from the moment PostgreSQL accepts connections again: how long PostgreSQL
        # itself needs for its crash recovery is not the service's to shorten.
        t1 = time.monotonic()
        outages.append(t1 - t0)
        recoveries.append(w.recovery(t1))
        time.sleep(2.0)
    return finish(ctx, w, "pg-restart", recoveries,
                  "2 immediate restarts; PostgreSQL itself was away "
                  + ", ".join(f"{o:.1f} s" for o in outages))


def scenario_sigkill(ctx: Context, kills: int) -> Result:
    w = Workload(ctx, "sigkill")
    w.start()
    recoveries = []
    rng = random.Random(ctx.run_id)
    for _ in range(kills):
        # Mid-write: six writers keep requests in flight all the time.
        time.sleep(rng.uniform(0.4, 1.0))
        t0 = time.monotonic()
        ctx.server.signal(signal.SIGKILL)
        if ctx.server.wait(10) is None:
            raise HarnessError("server survived SIGKILL")
        ctx.server.start()  # as a supervisor would
        recoveries.append(w.recovery(t0))
    return finish(ctx, w, "sigkill", recoveries, f"{kills} kills, restarted at once")


def scenario_sigterm(ctx: Context, rounds: int = 3) -> Result:
    w = Workload(ctx, "sigterm")
    w.start()
    recoveries = []
    codes = []
    for _ in range(rounds):
        time.sleep(1.0)
        t0 = time.monotonic()
        ctx.server.signal(signal.SIGTERM)
        code = ctx.server.wait(30)
        if code is None:
            raise HarnessError("server did not stop within 30 s of SIGTERM")
        codes.append(code)
        ctx.server.start()
        recoveries.append(w.recovery(t0))
    r = finish(ctx, w, "sigterm", recoveries, f"{rounds} rounds, exit codes {codes}")
    if r.no_answer:
        # A graceful stop answers (or refuses before accepting) every connection.
        r.problems.append(f"{r.no_answer} requests reached the stopping server and got no answer")
        r.failed = True
    if any(c != 0 for c in codes):
        # A graceful stop that does not exit 0 fails the scenario.
        r.problems.append(f"server exit codes after SIGTERM: {codes}")
        r.failed = True
    return r


# ------------------------------------------------------------------ main


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True, help="kultiva binary")
    ap.add_argument("--pg-bindir", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--kills", type=int, default=20)
    ap.add_argument("--scenarios", default="redis-stop,redis-freeze,pg-restart,sigkill,sigterm")
    ap.add_argument("--report", help="also write the result table (markdown) here")
    ap.add_argument("--sites-only", action="store_true",
                    help="site writes only (no garden creation or registration)")
    args = ap.parse_args()

    # A stop request ends the run through the `finally` below (processes stopped).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    run_id = secrets.token_hex(3)
    pg = Postgres(args.pg_bindir, args.workdir)
    redis = Redis(args.workdir)
    db = "kultiva_faults"
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "DATABASE_URL": f"{pg.url_base}/{db}",
        "REDIS_URL": f"redis://{LOOPBACK}:{redis.port}/",
        "JWT_SECRET_KEY": secrets.token_hex(32),
        "ACCESS_TOKEN_EXPIRE_MINUTES": "120",
        "RATE_LIMIT_GENERAL_PER_MINUTE": "1000000",
        "RATE_LIMIT_AUTH_PER_MINUTE": "1000",
        # The garden writer creates gardens all run long; registration is limited globally.
        "RATE_LIMIT_REGISTRATION_PER_MINUTE": "100000",
        "MAX_GARDENS_PER_ACCOUNT": "100000",
        "SHUTDOWN_GRACE_SECONDS": "10",
        "TENANT_PROVISIONING_TIMEOUT_SECONDS": str(PROVISIONING_TIMEOUT_S),
        "DB_MAX_CONNECTIONS": "20",
        "LOG_FORMAT": "json",
        "RUST_LOG": os.environ.get("RUST_LOG", "info"),
    }
    server = Server(args.bin, args.workdir, env)
    ctx = Context(pg, redis, server, db, run_id, gardens=not args.sites_only)
    results: list[Result] = []
    started = time.monotonic()
    try:
        log(f"work directory {args.workdir}; run {run_id}")
        pg.init()
        pg.start()
        pg.psql("postgres", f"CREATE DATABASE {db}")
        redis.start()
        log(f"private PostgreSQL on {LOOPBACK}:{pg.port}, Redis on {LOOPBACK}:{redis.port}")
        server.start()
        wait_live(ctx, 60)
        setup_account(ctx)
        log(f"server on {LOOPBACK}:{server.port}; garden {ctx.slug}")
        for name in [s.strip() for s in args.scenarios.split(",") if s.strip()]:
            log(f"scenario {name}")
            internal_errors(ctx, 0)  # skip what earlier scenarios logged
            if name == "redis-stop":
                r = scenario_redis(ctx, freeze=False)
            elif name == "redis-freeze":
                r = scenario_redis(ctx, freeze=True)
            elif name == "pg-restart":
                r = scenario_pg_restart(ctx)
            elif name == "sigkill":
                r = scenario_sigkill(ctx, args.kills)
            elif name == "sigterm":
                r = scenario_sigterm(ctx)
            else:
                raise HarnessError(f"unknown scenario {name}")
            results.append(r)
            log(f"  {name}: acked={r.acked} lost={r.lost} half={r.half} 5xx={r.five_xx} "
                f"503={r.s503} 4xx={r.four_xx} refused={r.refused} no-answer={r.no_answer} "
                f"recover={r.recover:.2f}s {'ok' if r.ok() else 'FAILED'}")
    except HarnessError as err:
        log(f"harness failure: {err}")
        print_table(results, time.monotonic() - started, args.report)
        return 2
    finally:
        server.stop()
        redis.stop()
        pg.stop()
    print_table(results, time.monotonic() - started, args.report)
    return 0 if results and all(r.ok() for r in results) else 1


def print_table(results: list[Result], elapsed: float, report: str | None) -> None:
    head = ("| scenario | acked writes | lost (0) | half-written (0) | 5xx ≠ 503 (0) | 503 | "
            "other 4xx | refused | reset / no answer | answers again after (≤ 5 s) | |")
    lines = [head, "|" + "---|" * 11]
    for r in results:
        rec = "never" if r.recover == float("inf") else f"{r.recover:.2f} s"
        lines.append(f"| {r.name} | {r.acked} | {r.lost} | {r.half} | {r.five_xx} | {r.s503} | "
                     f"{r.four_xx} | {r.refused} | {r.no_answer} | {rec} | {'ok' if r.ok() else 'FAILED'} |")
    table = "\n".join(lines)
    print(table)
    print(f"total {elapsed:.0f} s")
    for r in results:
        if r.notes:
            print(f"{r.name}: {r.notes}")
        for p in r.problems[:20]:
            print(f"  {r.name}: {p}")
    if report:
        with open(report, "w") as f:
            f.write(table + "\n")


if __name__ == "__main__":
    sys.exit(main())
