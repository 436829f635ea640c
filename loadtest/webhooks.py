#!/usr/bin/env python3
"""Webhook figures (issue 28): events per second through the event outbox and delivery lag.

Starts `kultiva serve` (light mode, WEBHOOK_ALLOW_PRIVATE_TARGETS=true, its own database and
Redis prefix) and a local receiver (http.server, threads) that verifies every Standard Webhooks
signature, registers one endpoint for `diary.entry_created`, then WRITERS threads create EVENTS
diary entries through `POST /t/{slug}/diary-entries` (each writes its event in the entry's own
transaction). Reports:
  - write rate: entries (= events) committed per second, and the p50/p95/p99 of the writes;
  - delivery: events delivered per second from the first write to the last arrival, and the lag
    from an event's timestamp to its arrival (p50/p95/p99/max), with duplicates and bad
    signatures.

Usage: loadtest/webhooks.py KULTIVA_BIN DATABASE_URL [EVENTS] [WRITERS] [POLL_MS]
(defaults 2000 8 1000; REDIS_URL from the environment, default redis://127.0.0.1:6379/0).
Traffic goes to 127.0.0.1 only; every loop is bounded (the wait for deliveries by 300 s).
"""

import base64
import hashlib
import hmac
import http.client
import http.server
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Received:
    def __init__(self):
        self.lock = threading.Lock()
        self.arrivals = {}  # webhook-id -> (arrival time, event timestamp)
        self.duplicates = 0
        self.bad = 0
        self.secret = None


def receiver(state):
    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            now = time.time()
            wid = self.headers.get("webhook-id", "")
            ts = self.headers.get("webhook-timestamp", "")
            sig = self.headers.get("webhook-signature", "")
            key = base64.b64decode(state.secret.removeprefix("whsec_"))
            want = "v1," + base64.b64encode(
                hmac.new(key, f"{wid}.{ts}.".encode() + body, hashlib.sha256).digest()
            ).decode()
            ok = hmac.compare_digest(want, sig)
            stamp = datetime.fromisoformat(json.loads(body)["timestamp"].replace("Z", "+00:00"))
            with state.lock:
                if not ok:
                    state.bad += 1
                elif wid in state.arrivals:
                    state.duplicates += 1
                else:
                    state.arrivals[wid] = (now, stamp.timestamp())
            self.send_response(204 if ok else 400)
            self.end_headers()

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def call(port, method, path, body=None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    data = json.dumps(body).encode() if body is not None else None
    conn.request(method, path, body=data, headers={"content-type": "application/json"})
    res = conn.getresponse()
    text = res.read()
    conn.close()
    return res.status, (json.loads(text) if text else None)


def pct(values, p):
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    kultiva, db = sys.argv[1], sys.argv[2]
    events = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
    writers = int(sys.argv[4]) if len(sys.argv) > 4 else 8
    poll_ms = sys.argv[5] if len(sys.argv) > 5 else "1000"
    port = free_port()
    slug = "hooks-" + uuid.uuid4().hex[:8]
    env = dict(os.environ)
    env.update(
        {
            "DATABASE_URL": db,
            "REDIS_URL": os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"),
            "REDIS_KEY_PREFIX": "kultiva_hooks_load",
            "BIND_ADDRESS": f"127.0.0.1:{port}",
            "SERVICE_MODE": "light",
            "LOG_FORMAT": "json",
            "RUST_LOG": "warn",
            "WEBHOOK_ALLOW_PRIVATE_TARGETS": "true",
            "WEBHOOK_POLL_MILLIS": poll_ms,
            "DIGEST_SCHEDULE": "false",
            "RATE_LIMIT_GENERAL_PER_MINUTE": "10000000",
        }
    )
    subprocess.run([kultiva, "migrate"], env=env, check=True, capture_output=True)
    subprocess.run(
        [kultiva, "tenant", "create", slug, "--name", "Webhook load"],
        env=env,
        check=True,
        capture_output=True,
    )
    server = subprocess.Popen([kultiva, "serve"], env=env, stderr=subprocess.DEVNULL)
    try:
        for _ in range(300):
            try:
                if call(port, "GET", "/api/v1/health/ready")[0] == 200:
                    break
            except OSError:
                pass
            time.sleep(0.1)
        state = Received()
        recv = receiver(state)
        target = f"http://127.0.0.1:{recv.server_address[1]}/hook"
        status, hook = call(
            port,
            "POST",
            f"/api/v1/t/{slug}/webhooks",
            {"url": target, "events": ["diary.entry_created"]},
        )
        assert status == 201, (status, hook)
        state.secret = hook["secret"]

        latencies = []
        lock = threading.Lock()

        def write(i):
            t0 = time.time()
            s, _ = call(
                port,
                "POST",
                f"/api/v1/t/{slug}/diary-entries",
                {"text": f"load entry {i}", "entry_type": "observation"},
            )
            with lock:
                latencies.append(time.time() - t0)
            return s

        started = time.time()
        with ThreadPoolExecutor(writers) as pool:
            statuses = list(pool.map(write, range(events)))
        written = time.time() - started
        failed = sum(1 for s in statuses if s != 201)
        deadline = time.time() + 300
        while time.time() < deadline:
            with state.lock:
                if len(state.arrivals) >= events - failed:
                    break
            time.sleep(0.05)
        with state.lock:
            arrivals = dict(state.arrivals)
        last = max((a for a, _ in arrivals.values()), default=started)
        lags = [a - t for a, t in arrivals.values()]
        report = {
            "events": events,
            "writers": writers,
            "poll_ms": int(poll_ms),
            "write_failures": failed,
            "writes_per_s": round(events / written, 1),
            "write_p50_ms": round(pct(latencies, 50) * 1000, 1),
            "write_p95_ms": round(pct(latencies, 95) * 1000, 1),
            "write_p99_ms": round(pct(latencies, 99) * 1000, 1),
            "delivered": len(arrivals),
            "delivered_per_s": round(len(arrivals) / max(last - started, 1e-9), 1),
            "lag_p50_ms": round(pct(lags, 50) * 1000, 1),
            "lag_p95_ms": round(pct(lags, 95) * 1000, 1),
            "lag_p99_ms": round(pct(lags, 99) * 1000, 1),
            "lag_max_ms": round(max(lags, default=float("nan")) * 1000, 1),
            "duplicates": state.duplicates,
            "bad_signatures": state.bad,
        }
        print(json.dumps(report, indent=2))
        recv.shutdown()
        ok = report["delivered"] == events - failed and failed == 0 and state.bad == 0
        return 0 if ok else 1
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    sys.exit(main())
