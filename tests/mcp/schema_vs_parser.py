"""Each tool's published inputSchema against its argument parser, both ways.

For every tool of GET /api/v1/mcp/tools: arguments generated from the schema (boundary values,
whole numbers written 2.0, paragraphs, dates, lists, either/or groups) that the jsonschema
library finds valid must not be refused by the argument table; mutations of them that it finds
invalid (a required argument dropped, an unknown one added, a wrong type, a bound crossed, a
null, an either/or rule broken) must be refused by it. A refusal by the table is a
`validation.error` whose details carry `expected`; refusals by the rules behind a tool (a key
that names nothing) carry none. Write tools run as dry runs: nothing is stored.

Environment: MCP_BASE_URL (http://host:port), MCP_ADMIN_KEY.
"""

from __future__ import annotations

import copy
import itertools
import json
import os
import sys
import urllib.error
import urllib.request

from jsonschema import Draft202012Validator, FormatChecker

BASE = os.environ["MCP_BASE_URL"]
KEY = os.environ["MCP_ADMIN_KEY"]
CHECKER = FormatChecker()
KNOWS_DATE_TIME = "date-time" in CHECKER.checkers


def request(method: str, path: str, body: object | None = None) -> tuple[int, dict]:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(BASE + path, data=data, method=method)
    req.add_header("X-API-Key", KEY)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=30) as res:
            return res.status, json.loads(res.read() or b"null")
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"null")


def string_candidates(p: dict) -> list[object]:
    if "enum" in p:
        return list(p["enum"])
    fmt = p.get("format")
    if fmt == "date":
        return ["2026-05-01", "2024-02-29"]
    if fmt == "date-time":
        return ["2026-05-01T08:30:00Z", "2026-05-01T08:30:00.5+02:00"]
    if "anyOf" in p:
        return ["2026-05-01", "2026-05-01T08:30:00-08:00"]
    lo, hi = p.get("minLength", 0), p.get("maxLength", 100)
    base = [
        "Basil",
        "0190f3c1-7a2b-7c3d-8e4f-a0b1c2d3e4f5",
        "x" * max(lo, 1),
        "y" * hi,
        " padded text ",
        "Line one.\nLine two.\tTabbed.",
    ]
    return [s for s in base if lo <= len(s) <= hi]


def candidates(p: dict) -> list[object]:
    t = p.get("type")
    if t == "string":
        return string_candidates(p)
    if t in ("integer", "number"):
        if "enum" in p:
            vals = list(p["enum"])
            return vals + [float(v) for v in vals]
        lo, hi = p.get("minimum", 0), p.get("maximum", 100)
        out = [lo, hi]
        if t == "integer":
            out += [float(lo), float(hi)]
        else:
            out.append((lo + hi) / 2)
        return out
    if t == "boolean":
        return [True, False]
    if t == "array":
        item = p.get("items", {})
        lo, hi = p.get("minItems", 0), p.get("maxItems", 5)
        pool = candidates(item) if item.get("type") != "object" else [sample_object(item)]
        pool = [v for v in pool if v is not None] or [None]
        out = []
        for n in sorted({lo, min(max(lo, 1), hi), min(hi, 3)}):
            out.append([pool[i % len(pool)] for i in range(n)])
        return out
    if t == "object":
        return [sample_object(p)]
    return []


def sample_object(schema: dict) -> dict:
    """The required properties with their first candidate, then fixed up to satisfy the
    schema's rules if it can."""
    props = schema.get("properties", {})
    obj = {}
    for name in schema.get("required", []):
        c = candidates(props.get(name, {}))
        if c:
            obj[name] = c[0]
    return satisfy(schema, obj) or obj


def satisfy(schema: dict, obj: dict) -> dict | None:
    """Adds optional properties, one at a time, until the object is valid (rules such as
    "at least one of" need one); None when that does not get there."""
    validator = Draft202012Validator(schema, format_checker=CHECKER)
    if validator.is_valid(obj):
        return obj
    props = schema.get("properties", {})
    for name, p in props.items():
        if name in obj:
            continue
        for value in candidates(p)[:1]:
            trial = dict(obj, **{name: value})
            if validator.is_valid(trial):
                return trial
    for pair in itertools.combinations([n for n in props if n not in obj], 2):
        trial = dict(obj)
        for name in pair:
            c = candidates(props[name])
            if c:
                trial[name] = c[0]
        if validator.is_valid(trial):
            return trial
    return None


def valid_instances(schema: dict, writes: bool) -> list[dict]:
    validator = Draft202012Validator(schema, format_checker=CHECKER)
    props = schema.get("properties", {})
    base = sample_object(schema)
    out = []
    for name, p in props.items():
        for value in candidates(p):
            inst = dict(base)
            inst[name] = value
            if writes:
                inst["dry_run"] = True
            if validator.is_valid(inst):
                out.append(inst)
            else:
                fixed = satisfy(schema, inst)
                if fixed is not None and fixed.get(name) == value:
                    out.append(fixed)
    if writes:
        base = dict(base, dry_run=True)
    if validator.is_valid(base):
        out.append(base)
    return out


def mutations(schema: dict, inst: dict) -> list[dict]:
    props = schema.get("properties", {})
    out = []
    for name in schema.get("required", []):
        m = dict(inst)
        m.pop(name, None)
        out.append(m)
    out.append(dict(inst, unknown_argument_x=1))
    for name, p in props.items():
        if name == "dry_run":
            continue
        t = p.get("type")
        out.append(dict(inst, **{name: None}))
        if t == "string":
            out.append(dict(inst, **{name: 42}))
            if "maxLength" in p:
                out.append(dict(inst, **{name: "z" * (p["maxLength"] + 1)}))
            if "pattern" in p:
                out.append(dict(inst, **{name: "bell\u0007"}))
                out.append(dict(inst, **{name: "   "}))
            if p.get("format") == "date":
                out.append(dict(inst, **{name: "2023-02-29"}))
            if p.get("format") == "date-time" and KNOWS_DATE_TIME:
                out.append(dict(inst, **{name: "2026-05-01 08:30"}))
            if "enum" in p:
                out.append(dict(inst, **{name: "not-a-choice"}))
        elif t in ("integer", "number"):
            out.append(dict(inst, **{name: "7"}))
            if "maximum" in p:
                out.append(dict(inst, **{name: p["maximum"] + 1}))
            if "minimum" in p:
                out.append(dict(inst, **{name: p["minimum"] - 1}))
            if t == "integer":
                out.append(dict(inst, **{name: 2.5}))
            if "enum" in p:
                out.append(dict(inst, **{name: 3}))
        elif t == "boolean":
            out.append(dict(inst, **{name: "yes"}))
        elif t == "array":
            out.append(dict(inst, **{name: "a, b"}))
            if "maxItems" in p:
                item = candidates(p.get("items", {}))
                if item:
                    out.append(dict(inst, **{name: [item[0]] * (p["maxItems"] + 1)}))
    # Either/or: every member of the groups the root `not` names, and none of them.
    rule_names = set(json.dumps(schema.get("not", {})).split('"')) & set(props)
    if rule_names:
        m = copy.deepcopy(inst)
        for name in rule_names:
            c = candidates(props[name])
            if c:
                m[name] = c[0]
        out.append(m)
        m = {k: v for k, v in inst.items() if k not in rule_names}
        out.append(m)
    for arg, needs in schema.get("dependentRequired", {}).items():
        c = candidates(props.get(arg, {}))
        if c:
            m = {k: v for k, v in inst.items() if k not in needs}
            m[arg] = c[0]
            out.append(m)
    return out


def table_refusal(status: int, body: dict) -> bool:
    details = body.get("details") if isinstance(body, dict) else None
    return (
        status == 422
        and body.get("error_code") == "validation.error"
        and isinstance(details, list)
        and bool(details)
        and all(isinstance(d, dict) and "expected" in d for d in details)
    )


def main() -> int:
    status, listing = request("GET", "/api/v1/mcp/tools")
    assert status == 200, (status, listing)
    failures = []
    checked = 0
    for tool in listing["tools"]:
        name, schema = tool["name"], tool["input_schema"]
        writes = "dry_run" in schema.get("properties", {})
        validator = Draft202012Validator(schema, format_checker=CHECKER)
        valid = valid_instances(schema, writes)
        if not valid:
            failures.append(f"{name}: no valid instance could be generated from its schema")
            continue
        for inst in valid:
            status, body = request("POST", f"/api/v1/mcp/tools/{name}", inst)
            checked += 1
            details = body.get("details") if isinstance(body, dict) else None
            if isinstance(details, list) and any(
                isinstance(d, dict) and "expected" in d for d in details
            ):
                failures.append(f"{name}: schema-valid {json.dumps(inst)} refused: {body}")
        for inst in mutations(schema, valid[-1]):
            if validator.is_valid(inst):
                continue
            status, body = request("POST", f"/api/v1/mcp/tools/{name}", inst)
            checked += 1
            if not table_refusal(status, body):
                failures.append(
                    f"{name}: schema-invalid {json.dumps(inst)} not refused by the table: "
                    f"{status} {body}"
                )
    print(f"[mcp] schema vs parser: {checked} calls over {len(listing['tools'])} tools")
    for f in failures[:40]:
        print("  " + f[:600], file=sys.stderr)
    if failures:
        print(f"[mcp] schema vs parser: {len(failures)} disagreement(s)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
