"""The Markdown report of a loadtest/sensors run; exits non-zero when a check failed.

Usage: sensors_report.py RUN_DIR OUT_MD KULTIVA MQTT(yes|no) BROKER USERS SECS
"""

import json
import os
import subprocess
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        return None


def out(*cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"


def num(x, digits=0):
    return f"{x:,.{digits}f}"


def main():
    run, out_md, kultiva, mqtt_on, broker, users, secs = sys.argv[1:]
    bad = []
    first = lambda name: open(f"{run}/{name}").read().strip()
    pg = out("psql", "-X", "-tA", "-d", os.environ.get("DATABASE_URL", ""), "-c", "SHOW server_version")
    dirty = "+changes" if out("git", "status", "--porcelain", "--untracked-files=no") else ""
    lines = [
        "# Sensors: ingest, the chart read, the alert scan",
        "",
        f"Run {first('started.txt')}, commit `{out('git', 'rev-parse', '--short', 'HEAD')}{dirty}`, "
        f"{out(kultiva, '--version')}, PostgreSQL {pg.split(' ')[0]}, {os.cpu_count()} cores shared by the "
        f"service, PostgreSQL, Redis{', Mosquitto' if mqtt_on == 'yes' else ''} and the clients; load "
        f"average {first('load_start.txt')} at the start, {first('load_end.txt')} at the end. Release build, "
        "full mode, over loopback. Compare the ratios: absolute figures vary between runs on this "
        "shared machine.",
        "",
    ]

    ing = load(f"{run}/ingest.json")
    if ing:
        lines += [
            "## REST batches against COPY",
            "",
            f"{ing['clients']} connections, each posting {ing['batches']} batches of {ing['batch']:,} minute "
            "readings to a sensor of its own (`POST /api/v1/t/{slug}/sensors/{key}/readings`), against "
            f"`COPY` of the same rows into the same table on {ing['clients']} connections (onto sensors of "
            "their own). Bodies are made before the clock starts. Rounds alternate which goes first.",
            "",
            "| round | first | REST readings/s | batch p50 / p99 ms | COPY rows/s | REST ÷ COPY | failed batches |",
            "|---:|---|---:|---:|---:|---:|---:|",
        ]
        for r in ing["rounds"]:
            rest, copy = r["rest"], r["copy"]
            lines.append(
                f"| {r['round']} | {'REST' if r['rest_first'] else 'COPY'} | {num(rest['per_second'])} "
                f"| {rest['batch_p50_ms']:.0f} / {rest['batch_p99_ms']:.0f} | {num(copy['per_second'])} "
                f"| {r['ratio']:.2f} | {rest['failures']} |"
            )
        c = ing["checked"]
        lines += [
            "",
            f"Median: REST {num(ing['rest_median'])} readings/s, COPY {num(ing['copy_median'])} rows/s, "
            f"**ratio {ing['ratio_median']:.2f}** (lowest round {ing['ratio_min']:.2f}; aim ≥ 0.50: "
            f"{'holds' if ing['ratio_min'] >= 0.5 else 'does not hold'}).",
            f"Checked afterwards: each of the {c['rest_sensors']} REST sensors holds {c['readings_each']:,} "
            f"readings, all counted in its hourly roll-ups: {'yes' if c['rest_ok'] else 'NO'}; each of the "
            f"{c['copy_sensors']} COPY sensors holds them: {'yes' if c['copy_ok'] else 'NO'}.",
            "",
        ]
        if ing["failures"] or not c["rest_ok"] or not c["copy_ok"]:
            bad.append("ingest")
    else:
        bad.append("ingest: no figures")

    chart, read = load(f"{run}/chart.json"), load(f"{run}/read.json")
    if chart and read:
        lines += [
            "## The 30-day chart read beside the garden read",
            "",
            f"One sensor with 30 days of minute readings (43,200, posted through the REST route). wrk, "
            f"{users} connections, {secs} s each: `GET …/sensors/{{key}}/readings?from=&to=&step=1h` over "
            "the 30 days (720 hourly buckets from the roll-ups), then the garden read of one plant "
            "(`GET /api/v1/t/{slug}/plant-instances/{key}`).",
            "",
            "| read | requests | requests/s | p50 ms | p99 ms | failures | non-2xx |",
            "|---|---:|---:|---:|---:|---:|---:|",
        ]
        for s, title in [(chart, "30-day chart, step 1h"), (read, "one plant (garden read)")]:
            codes = s.get("status_codes", {})
            non2xx = sum(n for code, n in codes.items() if not str(code).startswith("2"))
            if s["failures"] or non2xx or not s["requests"]:
                bad.append(title)
            lines.append(
                f"| {title} | {s['requests']} | {s['per_second']} | {s['p50_ms']:.1f} | {s['p99_ms']:.1f} "
                f"| {s['failures']} | {non2xx} |"
            )
        answer = load(f"{run}/chart_answer.json") or {}
        ratio = float(chart["per_second"] or 0) / float(read["per_second"] or 1)
        lines += [
            "",
            f"The chart read answers {len(answer.get('buckets', []))} buckets "
            f"(`resolution: {answer.get('resolution')}`); its throughput is {ratio:.2f} × the plant "
            f"read's, its p99 {chart['p99_ms']:.1f} ms against {read['p99_ms']:.1f} ms.",
            "",
        ]
    else:
        bad.append("chart read: no figures")

    lines += ["## MQTT ingest", ""]
    mq = load(f"{run}/mqtt.json")
    if mq:
        lines += [
            f"{mq['clients']} sensors of source `mqtt` (topics `kultiva/<slug>/load/<n>`), "
            f"{mq['messages_each']:,} readings published to each by `mosquitto_pub -l` at QoS 1 "
            f"through Mosquitto on {broker}, one JSON payload `{{value, measured_at}}` a message; timed "
            "from the first publish until the database holds the last reading.",
            "",
            "| published | stored | publishing took s | until all stored s | readings/s |",
            "|---:|---:|---:|---:|---:|",
            f"| {mq['published']:,} | {mq['stored']:,} | {mq['publish_seconds']:.1f} | {mq['seconds']:.1f} "
            f"| {num(mq['per_second'])} |",
            "",
        ]
        if not mq["complete"]:
            bad.append("mqtt: readings missing")
    elif mqtt_on == "yes":
        bad.append("mqtt: no figures")
    else:
        lines += ["Not measured: this build has no MQTT subscriber, or no broker answered.", ""]

    sc = load(f"{run}/scale.json")
    if sc:
        lines += [
            f"## {sc['gardens']:,} gardens, 10 sensors each: the alert scan",
            "",
            f"{sc['gardens']:,} gardens provisioned {sc['jobs']} at a time ({sc['provision_seconds']:.0f} s), "
            "each with a site, a location, a tomato plant and 10 sensors expecting a reading every "
            f"minute, holding their last hour ({sc['readings']:,} readings in all; furnished in "
            f"{sc['furnish_seconds']:.0f} s). One sensor a garden stopped 20 minutes ago. The scan of "
            "every garden (what `kultiva alerts scan` and the background job run) is timed twice: "
            "the first opens the silent sensors' alerts, the second finds everything as it was. "
            "PostgreSQL's work: `pg_stat_database` of the database, and the CPU seconds (user + "
            "system, `/proc/<pid>/stat`) of its backends.",
            "",
            "| scan | seconds | ms per garden | opened | resolved | transactions | blocks hit | blocks read | tuples returned + fetched | PostgreSQL CPU s |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for name, s in zip(["first", "second (steady)"], sc["scans"]):
            d = s["database"]
            lines.append(
                f"| {name} | {s['seconds']:.1f} | {s['ms_per_garden']:.2f} | {s['opened']} | {s['resolved']} "
                f"| {d['transactions']:,} | {d['blocks_hit']:,} | {d['blocks_read']:,} "
                f"| {d['tuples_returned'] + d['tuples_fetched']:,} | {d['backend_cpu_s']:.1f} |"
            )
        steady = sc["scans"][1]
        lines += [
            "",
            f"A steady scan of {sc['gardens']:,} gardens takes {steady['seconds']:.1f} s "
            f"({steady['seconds'] / 60 * 100:.0f} % of the default `ALERT_SCAN_SECONDS` of 60), of which "
            f"PostgreSQL's backends spent {steady['database']['backend_cpu_s']:.1f} CPU seconds.",
            "",
        ]
        if not all(sc["checks"].values()):
            bad.append("scale checks")
    lines.append(f"Result: {'FAILED: ' + ', '.join(bad) if bad else 'every check passed'}.")
    lines.append("")
    text = "\n".join(lines)
    with open(out_md, "w") as f:
        f.write(text)
    print(text)
    if bad:
        sys.exit("the run failed: " + ", ".join(bad))


if __name__ == "__main__":
    main()
