"""The steps of loadtest/tenant_scale that talk HTTP, read /proc or write the report.

Usage (the driver calls these; every step writes one JSON file):
  tenant_scale.py account BASE MOVE_SLUG OUT_JSON
      register and log in one account (through the service), create the garden to move
      (POST /api/v1/tenants: the account is its admin), pick a species of the catalogue.
  tenant_scale.py sites PREFIX GARDENS_TSV SQL_OUT
      (DATABASE_URL) one site per garden PREFIX-…, as SQL into each schema: the row
      `POST /t/{slug}/sites/` writes (a UUIDv7 id, name, kind, no description, the columns'
      default timestamps). Writes the SQL and the TSV slug<TAB>site id for wrk.
  tenant_scale.py plants BASE TOKEN SLUG SPECIES N OUT_JSON
      N plants in SLUG through `POST /t/{slug}/plant-instances/` (4 connections).
  tenant_scale.py memory SERVICE_PID OUT_JSON
      (DATABASE_URL) RSS and PSS of the PostgreSQL server's processes and of the service.
  tenant_scale.py move BASE TOKEN SLUG WRITERS KULTIVA PLANTS OUT_JSON
      (DATABASE_URL, DATABASE_URL_2) WRITERS threads create sites in SLUG while
      `KULTIVA tenant move SLUG --to second` runs; then checks the target.
  tenant_scale.py report RUN_DIR OUT_MD
      the Markdown report of a run; exits non-zero when a check failed.
"""

import http.client
import json
import os
import re
import statistics
import subprocess
import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor


def psql(url, sql):
    """Rows of one statement as lists of text fields (tab-separated, unaligned)."""
    out = subprocess.run(
        ["psql", "-X", "-q", "-tA", "-F", "\t", "-v", "ON_ERROR_STOP=1", "-d", url, "-c", sql],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return [line.split("\t") for line in out.splitlines() if line]


def call(base, method, path, body=None, token=None, timeout=120):
    host = base.split("//", 1)[1]
    conn = http.client.HTTPConnection(host, timeout=timeout)
    headers = {"content-type": "application/json"}
    if token:
        headers["authorization"] = f"Bearer {token}"
    conn.request(method, path, None if body is None else json.dumps(body), headers)
    r = conn.getresponse()
    text = r.read()
    conn.close()
    if r.status // 100 != 2:
        sys.exit(f"{method} {path}: {r.status} {text[:300]!r}")
    return json.loads(text) if text else None


def uuid7():
    """A version 7 UUID (48-bit Unix milliseconds, then random bits), as `Uuid::now_v7`."""
    ms = time.time_ns() // 1_000_000
    rand = int.from_bytes(os.urandom(10), "big")
    value = (ms & ((1 << 48) - 1)) << 80 | 0x7 << 76 | (rand >> 62 & 0xFFF) << 64
    value |= 0b10 << 62 | (rand & ((1 << 62) - 1))
    return uuid.UUID(int=value)


def dump(path, value):
    with open(path, "w") as f:
        json.dump(value, f, indent=1)
        f.write("\n")


# ---------------------------------------------------------------- account


def account(base, move_slug, out):
    stamp = f"{int(time.time()):x}"
    email, password = f"scale-{stamp}@example.test", f"tenant scale password {stamp}"
    call(base, "POST", "/api/v1/auth/register",
         {"email": email, "password": password, "display_name": "Tenant scale"})
    token = call(base, "POST", "/api/v1/auth/login",
                 {"email": email, "password": password})["access_token"]
    call(base, "POST", "/api/v1/tenants", {"slug": move_slug, "name": "Garden to move"}, token=token)
    species = call(base, "GET", "/api/v1/species/?limit=1", token=token)["items"]
    if not species:
        sys.exit("the catalogue is not seeded")
    dump(out, {"email": email, "token": token, "species": species[0]["key"]})


# ---------------------------------------------------------------- sites


def sites(prefix, tsv_out, sql_out):
    url = os.environ["DATABASE_URL"]
    rows = psql(url, "SELECT slug, schema_name FROM platform.tenants "
                     f"WHERE slug ~ '^{re.escape(prefix)}-[0-9]+$' ORDER BY slug")
    if not rows:
        sys.exit(f"no gardens {prefix}-… in the registry")
    with open(sql_out, "w") as sql, open(tsv_out, "w") as tsv:
        for i, (slug, schema) in enumerate(rows):
            if not re.fullmatch(r"t_[0-9a-f]{32}", schema):
                sys.exit(f"unexpected schema name {schema!r}")
            site = uuid7()
            # Autocommit, one statement per garden: one transaction over every garden would
            # hold a lock per table and index of each (the lock table's size, see README).
            sql.write(f"INSERT INTO \"{schema}\".sites (id, name, kind, description) "
                      f"VALUES ('{site}', 'Bed {i:04d}', 'garden', NULL);\n")
            tsv.write(f"{slug}\t{site}\n")
    print(len(rows))


# ---------------------------------------------------------------- plants


def plants(base, token, slug, species, n, out):
    host = base.split("//", 1)[1]
    local = threading.local()
    path = f"/api/v1/t/{slug}/plant-instances/"
    headers = {"content-type": "application/json", "authorization": f"Bearer {token}"}

    def one(i):
        if not hasattr(local, "conn"):
            local.conn = http.client.HTTPConnection(host, timeout=120)
        local.conn.request("POST", path, json.dumps({"species_key": species, "name": f"Plant {i:05d}"}),
                           headers)
        r = local.conn.getresponse()
        body = r.read()
        if r.status != 201:
            raise RuntimeError(f"plant {i}: {r.status} {body[:300]!r}")

    started = time.monotonic()
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(one, range(int(n))))
    dump(out, {"plants": int(n), "seconds": time.monotonic() - started})


# ---------------------------------------------------------------- memory


def rollup(pid):
    """smaps_rollup of a process in kB (Rss, Pss, Pss_Anon, …); None when unreadable."""
    try:
        text = open(f"/proc/{pid}/smaps_rollup").read()
    except OSError:
        return None
    out = {}
    for line in text.splitlines()[1:]:
        key, _, rest = line.partition(":")
        parts = rest.split()
        if parts and parts[0].isdigit():
            out[key.strip()] = int(parts[0])
    out["Private"] = out.get("Private_Clean", 0) + out.get("Private_Dirty", 0)
    return out


def ppid(pid):
    try:
        stat = open(f"/proc/{pid}/stat").read()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[1])


def cmdline(pid):
    try:
        return open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def stats(values):
    if not values:
        return {"n": 0, "sum": 0, "median": 0, "max": 0}
    return {"n": len(values), "sum": sum(values), "median": statistics.median(values), "max": max(values)}


def memory(service_pid, out):
    url = os.environ["DATABASE_URL"]
    result = {"visible": False}
    svc = rollup(service_pid)
    result["service"] = {"rss_kb": svc.get("Rss", 0), "pss_kb": svc.get("Pss", 0)} if svc else None
    result["shared_buffers"] = psql(url, "SHOW shared_buffers")[0][0]
    # Every process but this query's own backend; `here` marks the backends of this database.
    backends = psql(url, "SELECT pid, coalesce(application_name, ''), backend_type, "
                         "coalesce(datname = current_database(), false) FROM pg_stat_activity "
                         "WHERE pid <> pg_backend_pid()")
    mine = [(int(pid), app) for pid, app, kind, here in backends if kind == "client backend" and here == "t"]
    checkpointer = [int(pid) for pid, _, kind, _ in backends if kind == "checkpointer"]
    postmaster = ppid(checkpointer[0]) if checkpointer else None
    if postmaster is None or "postgres" not in cmdline(postmaster):
        result["why_not"] = "the PostgreSQL server's processes are not visible here (another host or PID namespace)"
        dump(out, result)
        return
    children = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and ppid(int(entry)) == postmaster:
            children.append(int(entry))
    cluster = {}
    for pid in [postmaster] + children:
        r = rollup(pid)
        if r is not None:
            cluster[pid] = r
    if not cluster.get(postmaster):
        result["why_not"] = f"cannot read /proc/{postmaster}/smaps_rollup (run as root or as the server's user)"
        dump(out, result)
        return
    mine = [(pid, app) for pid, app in mine if pid in cluster]
    per = lambda key, pids: stats([cluster[p].get(key, 0) for p in pids])  # noqa: E731
    pids = [p for p, _ in mine]
    apps = {}
    for _, app in mine:
        apps[app or "(none)"] = apps.get(app or "(none)", 0) + 1
    result.update({
        "visible": True,
        "postmaster": postmaster,
        "cluster": {"processes": len(cluster), "rss_kb": per("Rss", cluster)["sum"],
                    "pss_kb": per("Pss", cluster)["sum"], "private_kb": per("Private", cluster)["sum"]},
        "database_backends": {"applications": apps, "rss_kb": per("Rss", pids), "pss_kb": per("Pss", pids),
                              "private_kb": per("Private", pids), "pss_anon_kb": per("Pss_Anon", pids)},
    })
    dump(out, result)


# ---------------------------------------------------------------- move


def move(base, token, slug, writers, kultiva, n_plants, out):
    primary, second = os.environ["DATABASE_URL"], os.environ["DATABASE_URL_2"]
    host = base.split("//", 1)[1]
    path = f"/api/v1/t/{slug}/sites/"
    headers = {"content-type": "application/json", "authorization": f"Bearer {token}"}
    schema = psql(primary, f"SELECT schema_name FROM platform.tenants WHERE slug = '{slug}'")[0][0]
    stop = threading.Event()
    records, errors, lock = [], [], threading.Lock()

    def writer(w):
        conn = http.client.HTTPConnection(host, timeout=60)
        n = 0
        while not stop.is_set():
            name = f"w{w}-{n}"
            n += 1
            t0 = time.monotonic()
            try:
                conn.request("POST", path, json.dumps({"name": name, "kind": "garden"}), headers)
                r = conn.getresponse()
                body = r.read()
            except (OSError, http.client.HTTPException) as err:
                with lock:
                    errors.append(f"{name}: {err!r}")
                conn.close()
                conn = http.client.HTTPConnection(host, timeout=60)
                continue
            t1 = time.monotonic()
            with lock:
                records.append({"name": name, "t0": t0, "t1": t1, "status": r.status,
                                "retry_after": r.getheader("retry-after"),
                                "body": body[:200].decode(errors="replace") if r.status // 100 != 2 else ""})
            if r.status == 503:
                time.sleep(0.05)  # retry soon: the pause measured is the service's, not a back-off

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(int(writers))]
    started = time.monotonic()
    for t in threads:
        t.start()
    time.sleep(3)  # writes before the move: the baseline
    m0 = time.monotonic()
    cli = subprocess.run([kultiva, "tenant", "move", slug, "--to", "second"], capture_output=True, text=True)
    m1 = time.monotonic()
    time.sleep(3)  # and after it, on the target
    stop.set()
    for t in threads:
        t.join()
    ended = time.monotonic()

    records.sort(key=lambda r: r["t1"])
    acked = [r for r in records if r["status"] // 100 == 2]
    refused = [r for r in records if r["status"] == 503 and r["retry_after"]]
    failed = [r for r in records if r["status"] // 100 != 2 and not (r["status"] == 503 and r["retry_after"])]
    acks = [r["t1"] for r in acked]
    # Gaps between consecutive acknowledged writes (any writer); the longest one that
    # overlaps the move, and the longest before it (the machine's own noise).
    gaps_move = [b - a for a, b in zip(acks, acks[1:]) if b >= m0 and a <= m1]
    gaps_before = [b - a for a, b in zip(acks, acks[1:]) if b < m0]
    during = [r for r in records if r["t1"] >= m0 and r["t0"] <= m1]
    before = [r for r in records if r["t1"] < m0]
    lat = lambda rs: sorted(r["t1"] - r["t0"] for r in rs)  # noqa: E731
    paused = re.search(r"writes paused (\d+) ms; ([0-9.]+)s in all", cli.stdout)

    check = []
    where = psql(primary, f"SELECT placement, coalesce(moving_to, ''), coalesce(moved_from, '') "
                          f"FROM platform.tenants WHERE slug = '{slug}'")[0]
    if where != ["second", "", ""]:
        check.append(f"registry after the move: {where}")
    left = psql(primary, f"SELECT count(*) FROM pg_namespace WHERE nspname = '{schema}'")[0][0]
    if left != "0":
        check.append("the source schema is still on the primary")
    on_target = {row[0] for row in psql(second, f"SELECT name FROM \"{schema}\".sites "
                                                "WHERE name ~ '^w[0-9]+-[0-9]+$'")}
    names = {r["name"] for r in acked}
    lost, extra = sorted(names - on_target), sorted(on_target - names)
    if lost:
        check.append(f"{len(lost)} acknowledged writes are not on the target, e.g. {lost[:5]}")
    if extra:
        check.append(f"{len(extra)} writes on the target were never acknowledged, e.g. {extra[:5]}")
    plants_there = int(psql(second, f"SELECT count(*) FROM \"{schema}\".plants")[0][0])
    if plants_there != int(n_plants):
        check.append(f"{plants_there} plants on the target, {n_plants} expected")
    if cli.returncode != 0 or not paused:
        check.append(f"kultiva tenant move exited {cli.returncode}: {cli.stdout.strip()} {cli.stderr.strip()[-500:]}")
    if failed:
        check.append(f"{len(failed)} writes answered neither 2xx nor 503 with Retry-After, e.g. "
                     f"{[(r['status'], r['body']) for r in failed[:3]]}")
    if errors:
        check.append(f"{len(errors)} writes failed on the socket, e.g. {errors[:3]}")

    dump(out, {
        "slug": slug, "writers": int(writers), "plants": plants_there,
        "cli": cli.stdout.strip(), "cli_stderr": cli.stderr.strip()[-2000:],
        "cli_write_pause_ms": int(paused.group(1)) if paused else None,
        "cli_total_s": float(paused.group(2)) if paused else None,
        "move_wall_s": m1 - m0,
        "writes": {"total": len(records), "acknowledged": len(acked), "refused_503": len(refused),
                   "failed": len(failed), "socket_errors": len(errors),
                   "per_second_before": len(before) / (m0 - started) if m0 > started else 0,
                   "during_move": len(during), "seconds": ended - started},
        "longest_gap_during_move_ms": max(gaps_move, default=m1 - m0) * 1000,
        "longest_gap_before_move_ms": max(gaps_before, default=0) * 1000,
        "slowest_write_during_move_ms": max(lat(during), default=0) * 1000,
        "slowest_acknowledged_write_ms": max(lat(acked), default=0) * 1000,
        "write_p50_before_ms": statistics.median(lat(before)) * 1000 if before else 0,
        "write_p99_before_ms": lat(before)[int(0.99 * (len(before) - 1))] * 1000 if before else 0,
        "on_target": len(on_target), "lost": len(lost), "unacknowledged_on_target": len(extra),
        "problems": check,
    })


# ---------------------------------------------------------------- report


def report(run, out_md):
    J = lambda name: json.load(open(f"{run}/{name}"))  # noqa: E731
    info = J("info.json")
    scale = J("scale.json")
    mem = J("memory.json")
    mv = J("move.json")
    dropped = J("drop.json")
    plants_made = J("plants.json")
    rounds = info["rounds"]
    spread200 = info["gardens"] > 200
    loads = ["one", "spread200", "spread"] if spread200 else ["one", "spread"]
    wrk = {n: [J(f"r{r}_{n}.json") for r in range(1, rounds + 1)] for n in loads}
    problems = list(mv["problems"])
    for n in loads:
        bad = sum(s["failures"] for s in wrk[n])
        if bad:
            codes = {}
            for s in wrk[n]:
                for c, k in s["status_codes"].items():
                    codes[c] = codes.get(c, 0) + k
            problems.append(f"wrk {n}: {bad} failures (non-2xx or socket errors), status codes {codes}")
    warm = J("warm.json")
    if warm["failures"]:
        problems.append(f"the warming read of every garden: {warm['failures']} failures, {warm['status_codes']}")
    if scale["migrate"]["failed"]:
        problems.append(f"{scale['migrate']['failed']} gardens failed to migrate")

    def rng(xs, fmt):
        if len(xs) == 1:
            return fmt(xs[0])
        return f"{fmt(statistics.median(xs))} ({fmt(min(xs))}–{fmt(max(xs))})"

    num = lambda v: f"{v:,.0f}"  # noqa: E731
    two = lambda v: f"{v:.2f}"  # noqa: E731
    mb = lambda kb: f"{kb / 1024:,.1f} MB"  # noqa: E731
    rate = {n: [s["per_second"] for s in wrk[n]] for n in loads}
    p99 = {n: [s["p99_ms"] for s in wrk[n]] for n in loads}
    ratio = [s / o if o else 0 for s, o in zip(rate["spread"], rate["one"])]
    g = info["gardens"]
    pv, mg, full = scale["provision"], scale["migrate"], scale["full_sample"]
    t = pv["times"]
    L = []
    L += [f"# Tenant scale: {g:,} gardens, {info['jobs']} migration jobs, a garden of {info['plants']:,} plants moved",
          "",
          f"`loadtest/tenant_scale {g} {info['jobs']} {info['plants']}` ({info['profile']} build), "
          f"{info['started']} – {info['ended']}. Load average (1, 5, 15 min) at the start: {info['load_start']}; "
          f"at the end: {info['load_end']}. {info['cpus']} CPUs.",
          "",
          f"Versions: kultiva {info['kultiva']} (commit {info['commit']}), {info['pg_primary']} (primary), "
          f"{info['pg_second']} (second), Redis {info['redis']}, {info['wrk']}, Linux {info['kernel']}.",
          ""]
    if problems:
        L += ["**FAILED:**", ""] + [f"- {p}" for p in problems] + [""]
    L += ["## Provisioning and migration", "",
          "| measure | value | aim |", "|---|---|---|"]
    if full:
        f = full["provision"]
        L.append(f"| provision with the full schema (v{scale['latest_version']}), per garden p50 / p95 / p99 / max "
                 f"({f['count']} one after another, on a server holding the {g:,} gardens) | "
                 f"{f['p50_ms']:.0f} / {f['p95_ms']:.0f} / {f['p99_ms']:.0f} / {f['max_ms']:.0f} ms | p50 ≤ 500 ms |")
    L += [f"| provision one migration behind (v{scale['provisioned_at_version']}), per garden p50 / p95 / p99 / max "
          f"({pv['jobs']} at a time) | {t['p50_ms']:.0f} / {t['p95_ms']:.0f} / {t['p99_ms']:.0f} / {t['max_ms']:.0f} ms | – |",
          f"| provision {g:,} gardens, total | {t['total_s']:.1f} s | – |",
          f"| migrate {mg['migrated']:,} gardens to v{scale['latest_version']} with {mg['jobs']} jobs | "
          f"{mg['total_s']:.1f} s ({mg['failed']} failed) | ≤ 60 s |",
          f"| drop {dropped['drop']['count']:,} gardens ({dropped['jobs']} jobs), total | {dropped['drop']['total_s']:.1f} s | – |",
          "",
          f"\"One migration behind\": every garden is provisioned at v{scale['provisioned_at_version']}, so the "
          f"timed bulk migration applies the latest migration (v{scale['latest_version']}) to every garden, as a "
          "deploy that adds one does (`kultiva migrate --all-tenants --jobs N`).",
          ""]
    L += [f"## Reads: one garden against all {g:,}", "",
          f"`GET /api/v1/t/{{slug}}/sites/{{id}}` (JWT), wrk -t 2 -c {info['clients']}, {info['duration']} per load, "
          f"{rounds} round(s), the service's default pool (`DB_MAX_CONNECTIONS=10`). One account is a member "
          "(viewer) of every garden; memberships and the one site per garden were written by SQL "
          "(the rows `POST /t/{slug}/sites/` writes: a UUIDv7 id, name, kind; not through the API).",
          "",
          "| load | req/s (median, range) | p99 (median) | non-2xx + socket errors |", "|---|---:|---:|---:|"]
    label = {"one": "one garden", "spread200": "200 gardens at random", "spread": f"all {g:,} gardens at random"}
    for n in loads:
        fails = sum(s["failures"] for s in wrk[n])
        L.append(f"| {label[n]} | {rng(rate[n], num)} | {statistics.median(p99[n]):.1f} ms | {fails} |")
    L += ["", f"| ratio (same round) | median (range) | aim |", "|---|---:|---|",
          f"| all {g:,} gardens ÷ one garden | {rng(ratio, two)} | ≥ 0.8 |"]
    if spread200:
        r200 = [s / o if o else 0 for s, o in zip(rate["spread200"], rate["one"])]
        L.append(f"| 200 gardens ÷ one garden | {rng(r200, two)} | – |")
    L.append("")
    L += ["## Memory with every garden warm (after the last spread load)", ""]
    if mem.get("visible"):
        c, d = mem["cluster"], mem["database_backends"]
        L += ["| process(es) | RSS | PSS | private |", "|---|---:|---:|---:|",
              f"| PostgreSQL, whole cluster ({c['processes']} processes; shared_buffers {mem['shared_buffers']}) | "
              f"{mb(c['rss_kb'])} | {mb(c['pss_kb'])} | {mb(c['private_kb'])} |",
              f"| backends of this database ({d['rss_kb']['n']}: {d['applications']}) | {mb(d['rss_kb']['sum'])} | "
              f"{mb(d['pss_kb']['sum'])} | {mb(d['private_kb']['sum'])} |",
              f"| one backend of this database, median / max | {mb(d['rss_kb']['median'])} / {mb(d['rss_kb']['max'])} | "
              f"{mb(d['pss_kb']['median'])} / {mb(d['pss_kb']['max'])} | "
              f"{mb(d['private_kb']['median'])} / {mb(d['private_kb']['max'])} |"]
    else:
        L += [f"PostgreSQL's processes: not measured ({mem.get('why_not')}).", ""]
        L += ["| process | RSS | PSS |", "|---|---:|---:|"]
    if mem.get("service"):
        L.append(f"| the service (`kultiva serve`) | {mb(mem['service']['rss_kb'])} | {mb(mem['service']['pss_kb'])} | – |"
                 if mem.get("visible") else
                 f"| the service (`kultiva serve`) | {mb(mem['service']['rss_kb'])} | {mb(mem['service']['pss_kb'])} |")
    L += ["",
          "RSS counts every shared page (`shared_buffers`, the binary) once per process; PSS divides each "
          "shared page among the processes mapping it, so the PSS column adds up to the real total; private is "
          "what a process alone holds (a backend's catalogue and plan caches). Read from `/proc/<pid>/smaps_rollup`.",
          ""]
    w = mv["writes"]
    L += [f"## Moving a garden of {mv['plants']:,} plants to the second server under writes", "",
          f"`kultiva tenant move <slug> --to second` while {mv['writers']} writers create sites in the garden through "
          f"the service (each retries 50 ms after a 503; the plants were made through `POST /t/{{slug}}/plant-instances/` "
          f"in {plants_made['seconds']:.1f} s).",
          "",
          "| measure | value |", "|---|---:|",
          f"| move, total (`tenant move`, including the {1.8:.1f} s wait before dropping the old copy) | "
          f"{mv['cli_total_s'] if mv['cli_total_s'] is not None else float('nan'):.1f} s |",
          f"| the command's process, start to exit (with its connecting; as an operator waits) | {mv['move_wall_s']:.1f} s |",
          f"| write pause reported by the command (gate locked → registry switched) | "
          f"{mv['cli_write_pause_ms'] if mv['cli_write_pause_ms'] is not None else '–'} ms |",
          f"| longest gap between acknowledged writes during the move | {mv['longest_gap_during_move_ms']:.0f} ms |",
          f"| longest gap before the move (baseline) | {mv['longest_gap_before_move_ms']:.0f} ms |",
          f"| slowest single write during the move | {mv['slowest_write_during_move_ms']:.0f} ms |",
          f"| write p50 / p99 before the move | {mv['write_p50_before_ms']:.1f} / {mv['write_p99_before_ms']:.1f} ms |",
          f"| writes: acknowledged / 503 with Retry-After / other failures | {w['acknowledged']:,} / {w['refused_503']} / "
          f"{w['failed'] + w['socket_errors']} |",
          f"| acknowledged writes on the target / lost / on the target unacknowledged | {mv['on_target']:,} / {mv['lost']} / "
          f"{mv['unacknowledged_on_target']} |",
          "",
          f"Command output: `{mv['cli']}`", ""]
    text = "\n".join(L) + "\n"
    open(out_md, "w").write(text)
    print(text)
    if problems:
        sys.exit("tenant_scale: FAILED: " + "; ".join(problems))


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    {"account": account, "sites": sites, "plants": plants, "memory": memory, "move": move,
     "report": report}[cmd](*args)
