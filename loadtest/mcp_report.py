"""Markdown report of loadtest/mcp from the per-round summaries in its run directory.

Usage: mcp_report.py RUN_DIR OUT_MD CLIENTS SECONDS ROUNDS AUDIT_ROWS
Every ratio is computed within one round; the report gives the median over rounds and the
range. Prints the report and writes it to OUT_MD.
"""

import json
import platform
import statistics
import sys
import time

run, out, clients, secs, rounds, audit_rows = sys.argv[1:]
rounds = int(rounds)
LOADS = ("rest_read", "mcp_read", "rest_write", "mcp_write")
AIMS = {"read": 0.5, "write": 0.3, "p99_ms": 30.0}

R = [
    {n: json.load(open(f"{run}/r{i}_{n}.json")) for n in LOADS}
    | {"load": float(open(f"{run}/r{i}_load.txt").read().split()[0])}
    for i in range(1, rounds + 1)
]


def ratio(x, y):
    return x / y if y else 0.0


def spread(values, fmt):
    if len(values) == 1:
        return fmt(values[0])
    return f"{fmt(statistics.median(values))} ({fmt(min(values))}–{fmt(max(values))})"


num = lambda v: f"{v:,.0f}" if v >= 100 else f"{v:,.1f}"  # noqa: E731
ms = lambda v: f"{v:.1f} ms" if v >= 10 else f"{v:.2f} ms"  # noqa: E731
two = lambda v: f"{v:.2f}"  # noqa: E731

cpu = next(
    (line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
    "?",
)
LOADS_AT_START = ", ".join(f"{r['load']:.2f}" for r in R)
lines = [
    "# Tool-server benchmark (loadtest/mcp)",
    "",
    f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {cpu}; {platform.machine()}; "
    f"{clients} clients, {secs} s per load, {rounds} round(s); 1-minute load average at each "
    f"round's start: {LOADS_AT_START}. Audit rows written: {audit_rows}.",
    "",
    "| Load | req/s | p50 | p95 | p99 | failed |",
    "|---|---|---|---|---|---|",
]
names = {
    "rest_read": "GET /species/{key}/phase-sequence (REST)",
    "mcp_read": "tools/call get_species_phase_sequence",
    "rest_write": "PUT /species/{key}/phase-sequence (REST)",
    "mcp_write": "tools/call assign_species_phase_sequence + idempotency_key",
}
for n in LOADS:
    col = lambda k: [r[n][k] for r in R]  # noqa: E731
    lines.append(
        f"| {names[n]} | {spread(col('per_second'), num)} | {spread(col('p50_ms'), ms)} | "
        f"{spread(col('p95_ms'), ms)} | {spread(col('p99_ms'), ms)} | {sum(col('failures'))} |"
    )
read = [ratio(r["mcp_read"]["per_second"], r["rest_read"]["per_second"]) for r in R]
write = [ratio(r["mcp_write"]["per_second"], r["rest_write"]["per_second"]) for r in R]
p99 = [r["mcp_read"]["p99_ms"] for r in R]
verdict = lambda ok: "meets" if ok else "MISSES"  # noqa: E731
med = statistics.median
lines += [
    "",
    "| Ratio (median of rounds, range) | Value | Aim | |",
    "|---|---|---|---|",
    f"| read tool / REST read | {spread(read, two)} | ≥ {AIMS['read']} | {verdict(med(read) >= AIMS['read'])} |",
    f"| write tool (idempotency key) / REST write | {spread(write, two)} | ≥ {AIMS['write']} | "
    f"{verdict(med(write) >= AIMS['write'])} |",
    f"| read tool p99 | {spread(p99, ms)} | < {AIMS['p99_ms']:.0f} ms | {verdict(med(p99) < AIMS['p99_ms'])} |",
]
failed = sum(r[n]["failures"] for r in R for n in LOADS)
if failed:
    lines += ["", f"**{failed} requests failed**: see loadtest/reports/mcp_*.txt; rates count successes only."]
text = "\n".join(lines) + "\n"
open(out, "w").write(text)
print(text)
