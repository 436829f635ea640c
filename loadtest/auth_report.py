"""Markdown report of loadtest/auth from the per-round summaries in its run directory.

Usage: auth_report.py RUN_DIR OUT_MD CLIENTS SECONDS ROUNDS PG_VERSION
Every ratio is computed within one round (its measurements are minutes apart at most); the
report gives the median over rounds and the range. Prints the report and writes it to OUT_MD.
"""

import json
import os
import platform
import re
import statistics
import sys
import time
from collections import Counter

run, out, clients, secs, rounds, pg_version = sys.argv[1:]
rounds = int(rounds)
GOOSE = ("login", "me_jwt", "me_key", "fastapi_jwt", "fastapi_key")
AIMS = {"login_hash": 0.8, "pgbench": 0.30, "fastapi": 3.5, "p99_ms": 25.0}


def pgbench(path):
    text = open(path).read()
    tps = re.search(r"tps = ([0-9.]+)", text)
    lat = re.search(r"latency average = ([0-9.]+) ms", text)
    return {
        "per_second": float(tps.group(1)) if tps else 0.0,
        "latency_ms": float(lat.group(1)) if lat else 0.0,
    }


def load_round(i):
    r = {n: json.load(open(f"{run}/r{i}_{n}.json")) for n in GOOSE}
    r["argon2"] = json.load(open(f"{run}/r{i}_argon2.json"))
    r["pgbench"] = pgbench(f"{run}/r{i}_pgbench.txt")
    r["load"] = float(open(f"{run}/r{i}_load.txt").read().split()[0])
    return r


R = [load_round(i) for i in range(1, rounds + 1)]


def ratio(x, y):
    return x / y if y else 0.0


def ratios(r):
    ps = lambda k: r[k]["per_second"]  # noqa: E731
    return {
        "logins / argon2 verifications": (ratio(ps("login"), ps("argon2")), AIMS["login_hash"]),
        "users/me (JWT) / pgbench -S": (ratio(ps("me_jwt"), ps("pgbench")), AIMS["pgbench"]),
        "users/me (API key) / pgbench -S": (ratio(ps("me_key"), ps("pgbench")), AIMS["pgbench"]),
        "users/me (JWT) / FastAPI (JWT)": (ratio(ps("me_jwt"), ps("fastapi_jwt")), AIMS["fastapi"]),
        "users/me (API key) / FastAPI (API key)": (
            ratio(ps("me_key"), ps("fastapi_key")),
            AIMS["fastapi"],
        ),
    }


def med(values):
    return statistics.median(values)


def spread(values, fmt):
    if len(values) == 1:
        return fmt(values[0])
    return f"{fmt(med(values))} ({fmt(min(values))}–{fmt(max(values))})"


num = lambda v: f"{v:,.0f}" if v >= 100 else f"{v:,.1f}"  # noqa: E731
ms = lambda v: f"{v:.1f} ms" if v >= 10 else f"{v:.2f} ms"  # noqa: E731
two = lambda v: f"{v:.2f}"  # noqa: E731

cpu = next(
    (line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
    "?",
)
lines = []
p = lines.append
p(f"# Identity benchmarks: `loadtest/auth {clients} {secs}s {rounds}`\n")
p(
    f"{time.strftime('%Y-%m-%d %H:%M %Z')}; {os.cpu_count()} cores ({cpu}), {platform.system()} "
    f"{platform.release()}; PostgreSQL {pg_version}. Service (release build, full mode), PostgreSQL, "
    "Redis, the FastAPI reference and the load generators share these cores over loopback, "
    "unpinned, one load at a time. 1-minute load average at the start of each round: "
    + ", ".join(f"{r['load']:.1f}" for r in R)
    + ".\n"
)
label = {
    "argon2": f"a. argon2id verifications, m=19456 t=2 p=1, {R[0]['argon2']['threads']} threads",
    "login": "b. `POST /api/v1/auth/login` (service)",
    "me_jwt": "c. `GET /api/v1/users/me`, JWT (service)",
    "me_key": "c. `GET /api/v1/users/me`, API key (service)",
    "pgbench": f"d. `pgbench -S -c {clients} -j 2 -T {secs}`",
    "fastapi_jwt": "e. `GET /api/v1/users/me`, JWT (FastAPI reference)",
    "fastapi_key": "e. `GET /api/v1/users/me`, API key (FastAPI reference)",
}
many = rounds > 1
p("## Figures" + (" (median over rounds, range in brackets)" if many else "") + "\n")
p("| Measure | per second | p50 | p95 | p99 | max | requests | failures |")
p("|---|---:|---:|---:|---:|---:|---:|---:|")
hash_ms = [r["argon2"]["ms_per_hash"] for r in R]
p(
    f"| {label['argon2']} ({spread(hash_ms, lambda v: f'{v:.1f}')} ms wall per hash per thread) "
    f"| {spread([r['argon2']['per_second'] for r in R], num)} | | | | "
    f"| {sum(r['argon2']['hashes'] for r in R):,} | |"
)
for key in ("login", "me_jwt", "me_key", "pgbench", "fastapi_jwt", "fastapi_key"):
    if key == "pgbench":
        lat = [r["pgbench"]["latency_ms"] for r in R]
        p(
            f"| {label[key]} (tps; mean latency {spread(lat, ms)}) "
            f"| {spread([r['pgbench']['per_second'] for r in R], num)} | | | | | | |"
        )
        continue
    x = [r[key] for r in R]
    p(
        f"| {label[key]} | {spread([v['per_second'] for v in x], num)} "
        f"| {ms(med([v['p50_ms'] for v in x]))} | {ms(med([v['p95_ms'] for v in x]))} "
        f"| {spread([v['p99_ms'] for v in x], ms)} | {ms(max(v['max_ms'] for v in x))} "
        f"| {sum(v['requests'] for v in x):,} | {sum(v['failures'] for v in x)} |"
    )
p("")
p("## Ratios\n")
head = "| Ratio | " + (" | ".join(f"round {i}" for i in range(1, rounds + 1)) + " | median" if many else "value")
p(head + " | aim | |")
p("|---|" + "---:|" * (rounds + 1 if many else 1) + "---:|---|")
per_round = [ratios(r) for r in R]
for name in per_round[0]:
    values = [pr[name][0] for pr in per_round]
    aim = per_round[0][name][1]
    m = med(values)
    cells = (" | ".join(two(v) for v in values) + f" | **{two(m)}**") if many else f"**{two(m)}**"
    p(f"| {name} | {cells} | ≥ {aim} | {'meets' if m >= aim else '**misses**'} |")
for key, name in (("me_jwt", "users/me (JWT)"), ("me_key", "users/me (API key)")):
    values = [r[key]["p99_ms"] for r in R]
    m = med(values)
    cells = (" | ".join(ms(v) for v in values) + f" | **{ms(m)}**") if many else f"**{ms(m)}**"
    p(f"| p99 {name} | {cells} | < {AIMS['p99_ms']:.0f} ms | {'meets' if m < AIMS['p99_ms'] else '**misses**'} |")
p("")
codes = {k: Counter() for k in GOOSE}
for r in R:
    for k in GOOSE:
        codes[k].update({c: n for c, n in r[k]["status_codes"].items()})
p("Status codes: " + "; ".join(f"{k} {dict(v)}" for k, v in codes.items()) + ".\n")
failed = sum(r[k]["failures"] for r in R for k in GOOSE)
if failed:
    p(f"**{failed:,} requests failed: rates count successes only, but this run is not a clean measurement.**\n")
p(
    f"goose `-u {clients} -r {clients} -t {secs}s`: no think time, keep-alive, one account per "
    "client, figures from the hold phase after the 1 s ramp; per round the order is a, b, c (JWT, "
    "key), d, e (JWT, key)."
)
report = "\n".join(lines) + "\n"
open(out, "w").write(report)
print(report)
