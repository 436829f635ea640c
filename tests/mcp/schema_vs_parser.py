"""Each tool's published inputSchema against its argument parser, both ways.

For every tool of GET /api/v1/mcp/tools, two kinds of arguments are sent to
POST /api/v1/mcp/tools/{name}:

- valid ones (the schema admits them) must never be refused by the argument table;
- invalid ones (the schema refuses them) must always be refused by it.

A refusal by the table is a `validation.error` whose details all carry `expected`. Refusals by
the rules behind a tool (a key that names nothing gives `not_found`, a date in the future, ...)
carry no `expected`: they are fine for valid arguments. Write tools (those that take `dry_run`)
always run with `dry_run: true`, and a mutation never touches `dry_run`: nothing is stored.

Where the arguments come from, per tool:

1. Explicit cases, the hand-written generator this check started with: boundary values, whole
   numbers written `2.0`, paragraphs, dates, date-times with a lowercase `t`/`z` and a leap
   second, lists, either/or groups (valid), and mutations of one of them (a required argument
   dropped, an unknown one added, a wrong type, a bound crossed by one and by the least step a
   float has, a `null`, U+0000, U+007F, U+009F, a lone U+FEFF or a final line break in a text,
   an either/or rule or a pair broken).
2. Generated cases, drawn by hypothesis + hypothesis-jsonschema, derandomized (the same draws on
   every run for the same MCP_TENANT) and with a budget per tool (MCP_SCHEMA_VALID_EXAMPLES,
   MCP_SCHEMA_INVALID_EXAMPLES; a draw already sent to the tool is not sent again):
   - valid: `hypothesis_jsonschema.from_schema` of the schema. It reads Draft 4-7 only: it
     ignores `dependentRequired` and does not keep the root `not` (the either/or rules), so it
     draws from the schema without them, a repair step adds or drops the arguments a rule names,
     and only objects the Draft 2020-12 judge below accepts are sent. The tenant is the run's
     garden (MCP_TENANT) or left out, so the tool behind the table runs too; integers are
     sometimes written as floats (`3.0`).
   - invalid: a valid object from the above with one change, drawn uniformly from all of this
     tool's: a required argument dropped, an unknown one added, any argument (also a list entry
     or a measurement) set to null or another JSON type, across a bound (integers by 1, 2 or
     1000; numbers by 1, 0.5, 0.001 or the least float step), too long or too short, a control
     character put in, only blanks, outside its enum, a date or date-time with a character
     changed, too many or too few list entries, too many measurements, an either/or rule or a
     pair broken. Each is sent only when the judge finds it invalid. (Arguments that are no
     JSON object are not sent: the REST face refuses such a body before the table sees it.)

The judge is jsonschema's Draft202012Validator with two corrections, because the schema speaks
ECMA-262 and RFC 3339 and Python differs from both:
- patterns are rewritten for Python's `re`: `$` becomes `\\Z` (Python's `$` also matches before
  a final line break) and `\\s` the ECMA-262 blank set (Python's lacks U+FEFF);
- `date` and `date-time` are checked here as RFC 3339 and the JSON Schema test suite read them
  (jsonschema's `date` knows no year 0000, and it checks `date-time` only with
  rfc3339-validator, which allows a final line break and no leap second).

At the end: per tool the calls (explicit and generated, valid and invalid) and the refusals,
the totals and the time taken. A disagreement names the tool, the arguments sent and the answer;
with MCP_SCHEMA_FAILURES set, every one is also written there in full (JSON lines).

Environment: MCP_BASE_URL (http://host:port), MCP_ADMIN_KEY, MCP_TENANT (optional),
MCP_SCHEMA_VALID_EXAMPLES, MCP_SCHEMA_INVALID_EXAMPLES (per tool; defaults below),
MCP_SCHEMA_FAILURES (optional path).
"""

from __future__ import annotations

import calendar
import copy
import http.client
import itertools
import json
import math
import os
import re
import sys
import time
import urllib.parse
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis.errors import HypothesisException
from hypothesis_jsonschema import from_schema
from jsonschema import Draft202012Validator, FormatChecker

Json = Any
Schema = dict[str, Any]
Draw = Callable[[st.SearchStrategy[Any]], Any]

BASE = os.environ["MCP_BASE_URL"]
KEY = os.environ["MCP_ADMIN_KEY"]
TENANT = os.environ.get("MCP_TENANT") or None
VALID_EXAMPLES = int(os.environ.get("MCP_SCHEMA_VALID_EXAMPLES", "50"))
INVALID_EXAMPLES = int(os.environ.get("MCP_SCHEMA_INVALID_EXAMPLES", "100"))
FAILURES_FILE = os.environ.get("MCP_SCHEMA_FAILURES") or None
MISSING = object()

# ---------------------------------------------------------------------------------------------
# The judge: Draft 2020-12 with ECMA-262 patterns and RFC 3339 formats.

# ECMA-262 WhiteSpace and LineTerminator: what `\s` means in a schema's pattern.
ECMA_BLANKS = "\t\n\x0b\x0c\r \xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
ECMA_CLASSES = {"s": ECMA_BLANKS, "d": "0-9", "w": "A-Za-z0-9_"}


def ecma_pattern(pattern: str) -> str:
    """The pattern for Python's `re` with ECMA-262's meaning of `$`, `\\s`, `\\d` and `\\w`."""
    out: list[str] = []
    in_class = False
    chars = iter(pattern)
    for c in chars:
        if c == "\\":
            nxt = next(chars, "")
            if nxt in ECMA_CLASSES:
                out.append(ECMA_CLASSES[nxt] if in_class else f"[{ECMA_CLASSES[nxt]}]")
            elif nxt.lower() in ECMA_CLASSES and not in_class:
                out.append(f"[^{ECMA_CLASSES[nxt.lower()]}]")
            else:
                out.append(c + nxt)
        elif c == "[" and not in_class:
            in_class = True
            out.append(c)
        elif c == "]" and in_class:
            in_class = False
            out.append(c)
        elif c == "$" and not in_class:
            out.append(r"\Z")
        else:
            out.append(c)
    return "".join(out)


def ecma(schema: Json) -> Json:
    """A copy of the schema with every `pattern` rewritten by `ecma_pattern`."""
    if isinstance(schema, list):
        return [ecma(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {}
    for k, v in schema.items():
        if k == "pattern" and isinstance(v, str):
            out[k] = ecma_pattern(v)
        elif k in ("properties", "dependentRequired"):
            out[k] = {n: ecma(s) for n, s in v.items()} if isinstance(v, dict) else v
        else:
            out[k] = ecma(v)
    return out


DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})\Z", re.ASCII)
DATE_TIME = re.compile(
    r"(\d{4}-\d{2}-\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))\Z", re.ASCII
)


def rfc3339_date(s: str) -> bool:
    """full-date of RFC 3339: a real day of the proleptic Gregorian calendar, year 0000 too."""
    m = DATE.match(s)
    if not m:
        return False
    year, month, day = (int(g) for g in m.groups())
    if not 1 <= month <= 12:
        return False
    # 0000 is a leap year (divisible by 400); calendar knows no year 0, so ask for 2000.
    return 1 <= day <= calendar.monthrange(year or 2000, month)[1]


def rfc3339_date_time(s: str) -> bool:
    """date-time of RFC 3339: a leap second only at 23:59:60 UTC, as the JSON Schema test
    suite reads it."""
    m = DATE_TIME.match(s)
    if not m or not rfc3339_date(m.group(1)):
        return False
    hour, minute, second = int(m.group(2)), int(m.group(3)), int(m.group(4))
    off_h, off_m = (int(m.group(7)), int(m.group(8))) if m.group(7) else (0, 0)
    if hour > 23 or minute > 59 or second > 60 or off_h > 23 or off_m > 59:
        return False
    if second == 60:
        sign = -1 if m.group(6).startswith("-") else 1
        utc = (hour * 60 + minute - sign * (off_h * 60 + off_m)) % (24 * 60)
        return utc == 23 * 60 + 59
    return True


def format_checker() -> FormatChecker:
    checker = FormatChecker()
    checker.checks("date")(lambda v: not isinstance(v, str) or rfc3339_date(v))
    checker.checks("date-time")(lambda v: not isinstance(v, str) or rfc3339_date_time(v))
    return checker


CHECKER = format_checker()


def judge(schema: Schema) -> Draft202012Validator:
    return Draft202012Validator(ecma(schema), format_checker=CHECKER)


# ---------------------------------------------------------------------------------------------
# The server.


class Server:
    """One kept-alive HTTP connection to the tool server's REST face."""

    def __init__(self, base: str, key: str) -> None:
        url = urllib.parse.urlsplit(base)
        self.host, self.port, self.key = url.hostname or "127.0.0.1", url.port or 80, key
        self.conn: http.client.HTTPConnection | None = None
        self.calls = 0

    def request(self, method: str, path: str, body: Json = MISSING) -> tuple[int, Json]:
        data = None if body is MISSING else json.dumps(body).encode()
        headers = {"X-API-Key": self.key}
        if data is not None:
            headers["Content-Type"] = "application/json"
        for attempt in (1, 2):
            if self.conn is None:
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=60)
            try:
                self.conn.request(method, path, body=data, headers=headers)
                res = self.conn.getresponse()
                raw = res.read()
            except (http.client.HTTPException, OSError):
                self.conn.close()
                self.conn = None
                if attempt == 2:
                    raise
                continue
            self.calls += 1
            try:
                return res.status, json.loads(raw or b"null")
            except ValueError:
                return res.status, raw.decode(errors="replace")
        raise AssertionError("unreachable")

    def call_tool(self, name: str, args: Json) -> tuple[int, Json]:
        return self.request("POST", f"/api/v1/mcp/tools/{name}", args)


def has_expected(body: Json) -> bool:
    details = body.get("details") if isinstance(body, dict) else None
    return isinstance(details, list) and any(
        isinstance(d, dict) and "expected" in d for d in details
    )


def table_refusal(status: int, body: Json) -> bool:
    details = body.get("details") if isinstance(body, dict) else None
    return (
        status == 422
        and body.get("error_code") == "validation.error"
        and isinstance(details, list)
        and bool(details)
        and all(isinstance(d, dict) and "expected" in d for d in details)
    )


# ---------------------------------------------------------------------------------------------
# Explicit cases: the hand-written generator (boundary values, enums, formats, rule groups).


def string_candidates(p: Schema) -> list[Json]:
    if "enum" in p:
        return list(p["enum"])
    fmt = p.get("format")
    if fmt == "date":
        return ["2026-05-01", "2024-02-29"]
    if fmt == "date-time":
        return [
            "2026-05-01T08:30:00Z",
            "2026-05-01T08:30:00.5+02:00",
            "2026-05-01t08:30:00z",
            "2016-12-31T23:59:60Z",
        ]
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


def candidates(p: Schema) -> list[Json]:
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
        return [
            [pool[i % len(pool)] for i in range(n)]
            for n in sorted({lo, min(max(lo, 1), hi), min(hi, 3)})
        ]
    if t == "object":
        return [sample_object(p)]
    return []


def sample_object(schema: Schema) -> dict[str, Json]:
    """The required properties with their first candidate, then fixed up to satisfy the
    schema's rules if it can."""
    props = schema.get("properties", {})
    obj = {}
    for name in schema.get("required", []):
        c = candidates(props.get(name, {}))
        if c:
            obj[name] = c[0]
    return satisfy(schema, obj) or obj


def satisfy(schema: Schema, obj: dict[str, Json]) -> dict[str, Json] | None:
    """Adds optional properties, one at a time, until the object is valid (rules such as
    "at least one of" need one); None when that does not get there."""
    validator = judge(schema)
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


def explicit_valid(schema: Schema, writes: bool) -> list[dict[str, Json]]:
    validator = judge(schema)
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


def explicit_mutations(schema: Schema, inst: dict[str, Json]) -> list[Json]:
    props = schema.get("properties", {})
    out: list[Json] = []
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
                out.append(dict(inst, **{name: "\ufeff"}))
                for c in ("\u0000", "\u007f", "\u009f"):
                    out.append(dict(inst, **{name: f"edge{c}"}))
                out.append(dict(inst, **{name: "trailing\n"}))
            if p.get("format") == "date":
                out.append(dict(inst, **{name: "2023-02-29"}))
            if p.get("format") == "date-time":
                out.append(dict(inst, **{name: "2026-05-01 08:30"}))
                out.append(dict(inst, **{name: "2026-05-01T08:30:00Z\n"}))
            if "enum" in p:
                out.append(dict(inst, **{name: "not-a-choice"}))
        elif t in ("integer", "number"):
            out.append(dict(inst, **{name: "7"}))
            if "maximum" in p:
                out.append(dict(inst, **{name: p["maximum"] + 1}))
            if "minimum" in p:
                out.append(dict(inst, **{name: p["minimum"] - 1}))
            if t == "number":
                # A bound crossed by the least step a float has.
                out.append(dict(inst, **{name: math.nextafter(p["maximum"], math.inf)}))
                out.append(dict(inst, **{name: math.nextafter(p["minimum"], -math.inf)}))
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
        out.append({k: v for k, v in inst.items() if k not in rule_names})
    for arg, needs in schema.get("dependentRequired", {}).items():
        c = candidates(props.get(arg, {}))
        if c:
            m = {k: v for k, v in inst.items() if k not in needs}
            m[arg] = c[0]
            out.append(m)
    return out


# ---------------------------------------------------------------------------------------------
# The rules across arguments: a root `not` (situations it forbids) and `dependentRequired`.


@dataclass(frozen=True)
class Clause:
    """A situation the root `not` forbids: none of `names` given (`none`), or all of them."""

    names: tuple[str, ...]
    none: bool


def clauses(schema: Schema) -> list[Clause]:
    """The root `not` as args.rs writes it: `{"required": [...]}` (all given) and
    `{"not": {"anyOf": [{"required": [n]}, ...]}}` (none given), alone or in an `anyOf`."""
    not_ = schema.get("not")
    if not isinstance(not_, dict):
        return []
    parts = not_["anyOf"] if set(not_) == {"anyOf"} else [not_]
    out = []
    for part in parts:
        if set(part) == {"required"}:
            out.append(Clause(tuple(part["required"]), none=False))
        elif set(part) == {"not"} and set(part["not"]) == {"anyOf"}:
            names = tuple(n for alt in part["not"]["anyOf"] for n in alt.get("required", []))
            out.append(Clause(names, none=True))
    return out


@lru_cache(maxsize=None)
def _strategy(schema_json: str) -> st.SearchStrategy[Json]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return from_schema(ecma(json.loads(schema_json)))


def values_of(schema: Schema) -> st.SearchStrategy[Json]:
    """hypothesis-jsonschema's values of a (property) schema, cached."""
    return _strategy(json.dumps(schema, sort_keys=True))


def generation_schema(schema: Schema, writes: bool) -> Schema:
    """What hypothesis-jsonschema draws from: the schema without the rules it cannot keep,
    `dry_run` always true, the tenant the run's garden (or left out)."""
    gen = {k: v for k, v in schema.items() if k not in ("not", "dependentRequired")}
    props = dict(gen.get("properties", {}))
    if writes:
        props["dry_run"] = {"const": True}
        gen["required"] = sorted(set(gen.get("required", [])) | {"dry_run"})
    if "tenant" in props:
        props["tenant"] = {"enum": [TENANT]} if TENANT else False
    gen["properties"] = props
    return gen


def repaired(draw: Draw, schema: Schema, obj: dict[str, Json]) -> dict[str, Json]:
    """Adds or drops arguments until the rules hold (a few rounds: the pairs of
    `dependentRequired` may form a ring)."""
    gen_props = generation_schema(schema, writes=False)["properties"]
    required = set(schema.get("required", []))
    rules = clauses(schema)
    dependent = schema.get("dependentRequired", {})
    for _ in range(4):
        for c in rules:
            given_ = [n for n in c.names if n in obj]
            if c.none and not given_:
                name = draw(st.sampled_from(c.names))
                obj[name] = draw(values_of(gen_props[name]))
            elif not c.none and len(given_) == len(c.names):
                optional = [n for n in c.names if n not in required]
                if optional:
                    obj.pop(draw(st.sampled_from(optional)))
        for arg, needs in dependent.items():
            missing = [n for n in needs if n not in obj]
            if arg in obj and missing:
                if arg not in required and draw(st.booleans()):
                    obj.pop(arg)
                else:
                    for n in missing:
                        obj[n] = draw(values_of(gen_props[n]))
    return obj


def floats_for_integers(draw: Draw, schema: Schema, obj: dict[str, Json]) -> dict[str, Json]:
    """Some whole numbers written as floats (`3.0`): JSON Schema counts them as integers."""
    for name, p in schema.get("properties", {}).items():
        v = obj.get(name)
        if p.get("type") == "integer" and isinstance(v, int) and not isinstance(v, bool):
            if abs(v) < 2**53 and draw(st.booleans()):
                obj[name] = float(v)
    return obj


def valid_arguments(schema: Schema, writes: bool) -> st.SearchStrategy[dict[str, Json]]:
    base = values_of(generation_schema(schema, writes))
    validator = judge(schema)

    @st.composite
    def arguments(draw: Draw) -> dict[str, Json]:
        obj = repaired(draw, schema, dict(draw(base)))
        return floats_for_integers(draw, schema, obj)

    return arguments().filter(validator.is_valid)


# ---------------------------------------------------------------------------------------------
# Mutations: one drawn change that makes valid arguments invalid. Each change is a target
# (`"limit: above the maximum"`, `"plant_key: dropped"`, `"rule: no site_key/slot_key"`), drawn
# uniformly, so a tool with many arguments spreads its budget over all of them.

Change = Callable[[Draw, Json], Json]
CONTROL_CHARACTERS = [chr(c) for c in itertools.chain(range(0x20), range(0x7F, 0xA0))]
BLANKS = [" ", "\t", "\n", "\r", "\x0b", "\x0c", "\xa0", "\u2003", "\u2028", "\u3000", "\ufeff"]
FORMAT_CHARACTERS = "0123456789-:TtZz+. /x\n"
JSON_KINDS: dict[str, st.SearchStrategy[Json]] = {
    "boolean": st.booleans(),
    "integer": st.integers(-(10**6), 10**6),
    "number": st.floats(-1e6, 1e6).filter(lambda f: not f.is_integer()),
    "string": st.text(max_size=8) | st.sampled_from(["7", "true", "2026-05-01", "a, b"]),
    "array": st.lists(st.integers(0, 9), max_size=3),
    "object": st.dictionaries(st.text(max_size=4), st.integers(0, 9), max_size=2),
}


def other_type(p: Schema) -> st.SearchStrategy[Json]:
    t = p.get("type")
    allowed = {t, "integer"} if t == "number" else {t}
    return st.one_of([s for k, s in JSON_KINDS.items() if k not in allowed])


def changed_character(draw: Draw, value: str, pool: list[str] | str) -> str:
    """`value` with one character replaced, inserted or deleted."""
    pos = draw(st.integers(0, len(value)))
    how = draw(st.sampled_from(["replace", "insert", "delete"] if value else ["insert"]))
    if how == "delete":
        pos = min(pos, len(value) - 1)
        return value[:pos] + value[pos + 1 :]
    c = draw(st.sampled_from(pool))
    return value[:pos] + c + value[pos + (how == "replace") :]


def beyond(draw: Draw, bound: float, integer: bool, sign: int) -> float:
    """A bound crossed: by 1, 2 or 1000 (integers); by 1, 0.5, 0.001 or the least step a
    float has (numbers)."""
    by = draw(st.sampled_from([1, 2, 1000] if integer else [1, 0.5, 0.001, 0]))
    return bound + sign * by if by else math.nextafter(bound, sign * math.inf)


def number_changes(p: Schema) -> dict[str, Change]:
    integer = p.get("type") == "integer"
    changes: dict[str, Change] = {}
    if "maximum" in p:
        changes["above the maximum"] = lambda draw, v: beyond(draw, p["maximum"], integer, 1)
    if "minimum" in p:
        changes["below the minimum"] = lambda draw, v: beyond(draw, p["minimum"], integer, -1)
    if integer:
        changes["a fraction"] = lambda draw, v: v + 0.5
    return changes


def string_changes(p: Schema) -> dict[str, Change]:
    changes: dict[str, Change] = {}
    if "maxLength" in p:
        changes["too long"] = lambda draw, v: v + "z" * (
            p["maxLength"] + draw(st.integers(1, 3)) - len(v)
        )
    if p.get("minLength", 0) > 0:
        changes["too short"] = lambda draw, v: v[: p["minLength"] - 1]
    if "pattern" in p:
        changes["a control character"] = lambda draw, v: changed_character(
            draw, v, CONTROL_CHARACTERS
        )

        def blank(draw: Draw, v: str) -> str:
            lo = max(1, p.get("minLength", 1))
            n = draw(st.integers(lo, max(lo, min(p.get("maxLength", 5), 5))))
            return "".join(draw(st.lists(st.sampled_from(BLANKS), min_size=n, max_size=n)))

        changes["only blanks"] = blank
    if "format" in p or "anyOf" in p:
        changes["a format character changed"] = lambda draw, v: changed_character(
            draw, v, FORMAT_CHARACTERS
        )
    return changes


def list_changes(p: Schema) -> dict[str, Change]:
    items = p.get("items", {})
    changes: dict[str, Change] = {}
    if "maxItems" in p:

        def too_many(draw: Draw, v: list[Json]) -> list[Json]:
            n = p["maxItems"] + draw(st.integers(1, 2))
            pool = v or [draw(values_of(items))]
            return [pool[i % len(pool)] for i in range(n)]

        changes["too many entries"] = too_many
    if p.get("minItems", 0) > 0:
        changes["too few entries"] = lambda draw, v: v[: p["minItems"] - 1]

    def one_entry(draw: Draw, v: list[Json]) -> list[Json]:
        if not v:
            return [value_changed(draw, items, draw(values_of(items)))]
        i = draw(st.integers(0, len(v) - 1))
        return v[:i] + [value_changed(draw, items, v[i])] + v[i + 1 :]

    changes["one entry changed"] = one_entry
    return changes


def value_changes(p: Schema) -> dict[str, Change]:
    """What can be done to a valid value of schema `p` (the judge decides which make it
    invalid)."""
    t = p.get("type")
    changes: dict[str, Change] = {
        "null": lambda draw, v: None,
        "another type": lambda draw, v: draw(other_type(p)),
    }
    if "enum" in p:
        pool = st.text(max_size=12) if t == "string" else st.integers(-(10**4), 10**4)
        outside = pool.filter(lambda x: x not in p["enum"])
        changes["outside the enum"] = lambda draw, v: draw(outside)
    elif t in ("integer", "number"):
        changes.update(number_changes(p))
    elif t == "string":
        changes.update(string_changes(p))
    elif t == "array":
        changes.update(list_changes(p))
    elif t == "object":
        changes["one property changed"] = lambda draw, v: object_changed(draw, p, v)
    return changes


def value_changed(draw: Draw, p: Schema, value: Json) -> Json:
    changes = value_changes(p)
    return changes[draw(st.sampled_from(sorted(changes)))](draw, value)


def rule_breaks(schema: Schema) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """(arguments to add, arguments to drop) for each situation the rules forbid: none of a
    group, all of a group, an argument without the one it needs."""
    breaks = [((), c.names) if c.none else (c.names, ()) for c in clauses(schema)]
    for arg, needs in schema.get("dependentRequired", {}).items():
        breaks.append(((arg,), tuple(needs)))
    return breaks


def rule_broken(
    draw: Draw, schema: Schema, obj: dict[str, Json], add: tuple[str, ...], drop: tuple[str, ...]
) -> dict[str, Json]:
    props = generation_schema(schema, writes=False)["properties"]
    out = {k: v for k, v in obj.items() if k not in drop}
    for name in add:
        if name not in out:
            out[name] = draw(values_of(props[name]))
    return out


def unknown_added(draw: Draw, schema: Schema, obj: dict[str, Json]) -> dict[str, Json]:
    props = schema.get("properties", {})
    if schema.get("additionalProperties", True) is False:
        name = draw(st.from_regex(r"[a-z_]{1,24}", fullmatch=True).filter(lambda n: n not in props))
        value = draw(st.none() | st.integers(0, 9) | st.text(max_size=8))
    else:
        # Open objects (measurements): a name their `propertyNames` refuses, or any value.
        name = draw(st.sampled_from(["Bad Name", "9lives", "x" * 41, "ok_name"]))
        value = draw(st.none() | st.lists(st.integers(0, 9), max_size=2) | JSON_KINDS["string"])
    return dict(obj, **{name: value})


def object_targets(schema: Schema, obj: dict[str, Json]) -> dict[str, Callable[[Draw], Json]]:
    """Every change of `obj` by name: to the object as a whole, to each argument (given or
    not; never `dry_run`), and each rule broken."""
    props = schema.get("properties", {})
    open_values = schema.get("additionalProperties")
    targets: dict[str, Callable[[Draw], Json]] = {
        "an unknown argument": lambda draw: unknown_added(draw, schema, obj),
    }
    for name in schema.get("required", []):
        if name in obj:
            targets[f"{name}: dropped"] = lambda draw, n=name: {
                k: v for k, v in obj.items() if k != n
            }
    extra = [n for n in obj if n not in props] if isinstance(open_values, dict) else []
    for name in [n for n in props if n != "dry_run"] + extra:
        p = props.get(name) or open_values
        for label, change in value_changes(p).items():
            targets[f"{name}: {label}"] = lambda draw, n=name, p=p, c=change: dict(
                obj, **{n: c(draw, obj[n] if n in obj else draw(values_of(p)))}
            )
    if "maxProperties" in schema:
        targets["too many properties"] = lambda draw: dict(
            obj, **{f"extra_{i}": float(i) for i in range(schema["maxProperties"] + 1)}
        )
    for add, drop in rule_breaks(schema):
        label = f"rule: {'+'.join(add) or 'no ' + '/'.join(drop)}" + (
            f" without {'/'.join(drop)}" if add and drop else ""
        )
        targets[label] = lambda draw, a=add, d=drop: rule_broken(draw, schema, obj, a, d)
    return targets


def object_changed(draw: Draw, schema: Schema, obj: dict[str, Json]) -> Json:
    targets = object_targets(schema, obj)
    return targets[draw(st.sampled_from(sorted(targets)))](draw)


def invalid_arguments(schema: Schema, writes: bool) -> st.SearchStrategy[Json]:
    valid = valid_arguments(schema, writes)
    validator = judge(schema)

    @st.composite
    def arguments(draw: Draw) -> Json:
        return object_changed(draw, schema, draw(valid))

    return arguments().filter(lambda m: not validator.is_valid(m))

# ---------------------------------------------------------------------------------------------
# Running the checks.


@dataclass
class Tally:
    """Calls for one tool, and how they ended."""

    valid_explicit: int = 0
    valid_generated: int = 0
    refused_by_rules: int = 0
    invalid_explicit: int = 0
    invalid_generated: int = 0
    refused_by_table: int = 0
    repeats: int = 0

    @property
    def calls(self) -> int:
        return (
            self.valid_explicit + self.valid_generated + self.invalid_explicit
            + self.invalid_generated
        )

    def add(self, other: Tally) -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))


@dataclass
class Check:
    """One tool's run: its calls and disagreements."""

    server: Server
    tool: str
    tally: Tally = field(default_factory=Tally)
    failures: list[dict[str, Json]] = field(default_factory=list)
    sent: set[str] = field(default_factory=set)

    def first_time(self, args: Json) -> bool:
        """False for arguments this tool was already sent (a draw may repeat one)."""
        key = json.dumps(args, sort_keys=True)
        if key in self.sent:
            self.tally.repeats += 1
            return False
        self.sent.add(key)
        return True

    def fail(self, what: str, args: Json, status: int | None, body: Json) -> None:
        self.failures.append(
            {"tool": self.tool, "what": what, "sent": args, "status": status, "answer": body}
        )

    def valid(self, args: Json, generated: bool) -> None:
        if not self.first_time(args):
            return
        status, body = self.server.call_tool(self.tool, args)
        if generated:
            self.tally.valid_generated += 1
        else:
            self.tally.valid_explicit += 1
        if status >= 400:
            self.tally.refused_by_rules += 1
        if has_expected(body):
            self.fail("schema-valid arguments refused by the table", args, status, body)
        elif status >= 500:
            self.fail("schema-valid arguments answered with a server error", args, status, body)

    def invalid(self, args: Json, generated: bool) -> None:
        if not self.first_time(args):
            return
        status, body = self.server.call_tool(self.tool, args)
        if generated:
            self.tally.invalid_generated += 1
        else:
            self.tally.invalid_explicit += 1
        if table_refusal(status, body):
            self.tally.refused_by_table += 1
        else:
            self.fail("schema-invalid arguments not refused by the table", args, status, body)


def drawn(strategy: st.SearchStrategy[Json], budget: int, send: Callable[[Json], None]) -> None:
    """Sends `budget` examples of `strategy`, derandomized (the same ones on every run)."""

    @settings(
        max_examples=budget,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
        print_blob=False,
    )
    @given(strategy)
    def run(args: Json) -> None:
        send(args)

    run()


def check_tool(server: Server, tool: dict[str, Json]) -> Check:
    name, schema = tool["name"], tool["input_schema"]
    writes = "dry_run" in schema.get("properties", {})
    validator = judge(schema)
    check = Check(server, name)
    valid = explicit_valid(schema, writes)
    if not valid:
        check.fail("no valid instance could be generated from its schema", None, None, None)
        return check
    for args in valid:
        check.valid(args, generated=False)
    for args in explicit_mutations(schema, valid[-1]):
        if not validator.is_valid(args):
            check.invalid(args, generated=False)
    for strategy, budget, send in (
        (valid_arguments(schema, writes), VALID_EXAMPLES, lambda a: check.valid(a, True)),
        (invalid_arguments(schema, writes), INVALID_EXAMPLES, lambda a: check.invalid(a, True)),
    ):
        try:
            drawn(strategy, budget, send)
        except HypothesisException as err:
            check.fail(f"hypothesis could not draw arguments: {err!r}", None, None, None)
    return check


def shown(value: Json, limit: int = 700) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


def report(checks: list[Check], seconds: float) -> None:
    total = Tally()
    print("[mcp] schema vs parser, per tool: valid sent (explicit+generated, refused by the "
          "tool's rules) | invalid sent (explicit+generated, refused by the table)")
    for c in checks:
        t = c.tally
        total.add(t)
        print(
            f"  {c.tool:34} valid {t.valid_explicit}+{t.valid_generated} "
            f"({t.refused_by_rules} by rules) | invalid {t.invalid_explicit}+"
            f"{t.invalid_generated} ({t.refused_by_table} by the table)"
        )
    print(
        f"[mcp] schema vs parser: {total.calls} calls over {len(checks)} tools in "
        f"{seconds:.0f} s: {total.valid_explicit + total.valid_generated} valid "
        f"({total.valid_explicit} explicit, {total.valid_generated} generated; "
        f"{total.refused_by_rules} refused by the tools' rules), "
        f"{total.invalid_explicit + total.invalid_generated} invalid "
        f"({total.invalid_explicit} explicit, {total.invalid_generated} generated; "
        f"{total.refused_by_table} refused by the table); {total.repeats} repeated draws "
        "not sent again"
    )


def failures_of(checks: list[Check]) -> Iterator[dict[str, Json]]:
    for c in checks:
        yield from c.failures


def main() -> int:
    started = time.monotonic()
    server = Server(BASE, KEY)
    status, listing = server.request("GET", "/api/v1/mcp/tools")
    assert status == 200, (status, listing)
    checks = [check_tool(server, tool) for tool in listing["tools"]]
    report(checks, time.monotonic() - started)
    failures = list(failures_of(checks))
    if FAILURES_FILE:
        with open(FAILURES_FILE, "w", encoding="utf-8") as out:
            for f in failures:
                out.write(json.dumps(f, ensure_ascii=False) + "\n")
    for f in failures[:40]:
        print(
            f"  {f['tool']}: {f['what']}\n    sent {shown(f['sent'])}\n"
            f"    answer {f['status']} {shown(f['answer'])}",
            file=sys.stderr,
        )
    if failures:
        print(f"[mcp] schema vs parser: {len(failures)} disagreement(s)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
