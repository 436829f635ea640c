"""The official Python MCP SDK (mcp 2.3.0, pinned in tests/requirements.txt) against a live
Kultiva tool server; started by tests/mcp/run, which provides:

  MCP_URL         the endpoint, http://127.0.0.1:PORT/api/v1/mcp
  MCP_TENANT      the slug of the garden both keys belong to
  MCP_ADMIN_KEY   a service-account key with role admin there
  MCP_VIEWER_KEY  a service-account key with role viewer there

Every check runs even when an earlier one failed; the exit status is 1 when any failed.
Beside what the SDK reports, an httpx2 event hook records what went over the wire (methods,
session ids, protocol-version headers, statuses), so the checks also cover what the SDK
would hide (the DELETE at session end, the discover probe before initialize).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import traceback
import warnings
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

URL = os.environ["MCP_URL"]
TENANT = os.environ["MCP_TENANT"]
ADMIN_KEY = os.environ["MCP_ADMIN_KEY"]
VIEWER_KEY = os.environ["MCP_VIEWER_KEY"]

# The client asks for 2025-11-25 (its newest handshake revision); the server echoes a revision
# it speaks or answers 2025-06-18. Either is a revision with structuredContent and outputSchema.
MODERN_REVISIONS = ("2025-11-25", "2025-06-18")
EXPECTED_TOOLS = ("list_tenants", "get_mcp_activity")

# ping is deprecated for 2026-era connections; this server is handshake-era.
warnings.filterwarnings("ignore", category=DeprecationWarning)
warnings.filterwarnings("ignore", message=".*ping.*")


@dataclass
class Exchange:
    method: str
    rpc_method: str | None
    session_id: str | None
    protocol_header: str | None
    status: int | None = None


@dataclass
class Wire:
    """What one HTTP client sent and got back, in order."""

    exchanges: list[Exchange] = field(default_factory=list)

    async def on_request(self, request: httpx2.Request) -> None:
        rpc_method = None
        if request.method == "POST":
            try:
                rpc_method = json.loads(request.content).get("method")
            except (ValueError, AttributeError):
                rpc_method = None
        exchange = Exchange(
            method=request.method,
            rpc_method=rpc_method,
            session_id=request.headers.get("mcp-session-id"),
            protocol_header=request.headers.get("mcp-protocol-version"),
        )
        self.exchanges.append(exchange)
        # The GET stream and POSTs overlap: the response finds its exchange through the request.
        request.extensions["kultiva_exchange"] = exchange

    async def on_response(self, response: httpx2.Response) -> None:
        exchange = response.request.extensions.get("kultiva_exchange")
        if exchange is not None:
            exchange.status = response.status_code

    def client(self, headers: dict[str, str]) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(
            headers=headers,
            timeout=30,
            # Loopback only: a proxy from the environment must not take these requests.
            trust_env=False,
            event_hooks={"request": [self.on_request], "response": [self.on_response]},
        )


def structured(result: Any) -> dict[str, Any]:
    sc = result.structured_content
    assert isinstance(sc, dict), f"structuredContent missing: {result!r}"
    return sc


def tool_error(result: Any, code: str) -> dict[str, Any]:
    """Asserts an isError result carrying error_code `code` (and a non-empty text block)."""
    assert result.is_error is True, f"expected isError, got {result!r}"
    sc = structured(result)
    assert sc.get("error_code") == code, f"expected error_code {code}, got {sc}"
    assert sc.get("message"), sc
    assert result.content and result.content[0].type == "text", result.content
    assert result.content[0].text.startswith(code), result.content[0].text
    return sc


async def legacy_session_with_x_api_key() -> None:
    """mode="legacy": initialize, ping, tools/list, tools/call (success and tool errors), and
    the session end (DELETE), after which the old session id answers 404."""
    wire = Wire()
    async with wire.client({"X-API-Key": ADMIN_KEY}) as http:
        async with Client(streamable_http_client(URL, http_client=http), mode="legacy") as client:
            version = client.protocol_version
            assert version in MODERN_REVISIONS, version
            assert client.server_info is not None and client.server_info.name == "kultiva"
            caps = client.server_capabilities
            assert caps.tools is not None, caps
            assert caps.resources is None and caps.prompts is None, caps
            assert client.instructions and "list_tenants" in client.instructions

            await client.send_ping()

            listing = await client.list_tools()
            tools = {t.name: t for t in listing.tools}
            for name in EXPECTED_TOOLS:
                assert name in tools, f"{name} not listed: {sorted(tools)}"
            for tool in listing.tools:
                schema = tool.input_schema
                assert schema.get("type") == "object", (tool.name, schema)
                assert schema.get("additionalProperties") is False, (tool.name, schema)
                assert "tenant" in schema.get("properties", {}), (tool.name, schema)
                assert tool.description, tool.name
                assert tool.output_schema is not None, tool.name

            result = await client.call_tool("list_tenants", {})
            assert result.is_error is False, result
            env = structured(result)
            assert env["summary"] == result.content[0].text, (env, result.content)
            gardens = {g["slug"]: g for g in env["data"]["items"]}
            assert TENANT in gardens, gardens
            assert gardens[TENANT]["role"] == "admin", gardens[TENANT]
            assert env["links"] and env["links"][0]["type"] == "api", env["links"]

            # Invalid arguments are a tool result with isError, never a JSON-RPC error.
            details = tool_error(
                await client.call_tool("get_mcp_activity", {"limit": 0}), "validation.error"
            )["details"]
            assert any(d["field"] == "limit" for d in details), details
            tool_error(
                await client.call_tool("get_mcp_activity", {"no_such_argument": 1}),
                "validation.error",
            )
            tool_error(await client.call_tool("no_such_tool", {}), "not_found")
            # A garden outside the key's gardens is not_found (never permission.denied).
            tool_error(
                await client.call_tool("list_tenants", {"tenant": "no-such-garden-mcp"}),
                "not_found",
            )
            session_id = next(e.session_id for e in wire.exchanges if e.session_id)

        # After initialize every request carried the session id and the negotiated revision.
        after_init = [e for e in wire.exchanges if e.rpc_method != "initialize"]
        assert after_init, wire.exchanges
        for ex in after_init:
            if ex.method == "GET":
                continue  # the client's optional event stream: 405 and no session needed
            assert ex.session_id == session_id, ex
            assert ex.protocol_header == version, ex
        gets = [e for e in wire.exchanges if e.method == "GET"]
        assert all(e.status == 405 for e in gets), gets
        # Leaving the client ended the session.
        deletes = [e for e in wire.exchanges if e.method == "DELETE"]
        assert len(deletes) == 1 and deletes[0].status == 204, deletes

        # The old session id is gone: 404 with JSON-RPC -32001.
        stale = await http.post(
            URL,
            headers={
                "Mcp-Session-Id": session_id,
                "MCP-Protocol-Version": version,
                "Accept": "application/json, text/event-stream",
            },
            json={"jsonrpc": "2.0", "id": 9, "method": "tools/list"},
        )
        assert stale.status_code == 404, (stale.status_code, stale.text)
        assert stale.json()["error"]["code"] == -32001, stale.text
        again = await http.delete(URL, headers={"Mcp-Session-Id": session_id})
        assert again.status_code == 404, (again.status_code, again.text)


async def auto_session_with_bearer() -> None:
    """The default mode="auto" probes server/discover (a 2026-07-28 request) first; the server
    refuses the revision with a 4xx and the client falls back to initialize."""
    wire = Wire()
    async with wire.client({"Authorization": f"Bearer {ADMIN_KEY}"}) as http:
        async with Client(streamable_http_client(URL, http_client=http)) as client:
            assert client.protocol_version in MODERN_REVISIONS, client.protocol_version
            result = await client.call_tool("list_tenants", {})
            assert result.is_error is False, result
            assert TENANT in {g["slug"] for g in structured(result)["data"]["items"]}
    posts = [e for e in wire.exchanges if e.method == "POST"]
    assert posts[0].rpc_method == "server/discover", posts[:2]
    assert posts[0].status is not None and 400 <= posts[0].status < 500, posts[0]
    assert posts[0].session_id is None, posts[0]
    assert posts[1].rpc_method == "initialize", posts[:2]


async def viewer_session() -> None:
    """A viewer key: its role shows in list_tenants, and tools/list offers no tool that needs
    more than read (write and setup tools are listed only for roles that hold them)."""
    async with Wire().client({"X-API-Key": ADMIN_KEY}) as http:
        async with Client(streamable_http_client(URL, http_client=http), mode="legacy") as client:
            admin_tools = {t.name: t for t in (await client.list_tools()).tools}
    async with Wire().client({"X-API-Key": VIEWER_KEY}) as http:
        async with Client(streamable_http_client(URL, http_client=http), mode="legacy") as client:
            viewer_tools = {t.name: t for t in (await client.list_tools()).tools}
            result = await client.call_tool("list_tenants", {})
            assert result.is_error is False, result
            roles = {g["slug"]: g["role"] for g in structured(result)["data"]["items"]}
            assert roles == {TENANT: "viewer"}, roles
    assert set(viewer_tools) <= set(admin_tools), (sorted(viewer_tools), sorted(admin_tools))
    for name, tool in viewer_tools.items():
        hints = tool.annotations
        assert hints is not None and hints.read_only_hint is True, (name, hints)
    for name in EXPECTED_TOOLS:
        assert name in viewer_tools, name


async def activity_records_calls() -> None:
    """get_mcp_activity shows this account's calls, refused ones included (the audit worker
    writes in batches, so the row may take a moment to appear)."""
    async with Wire().client({"X-API-Key": ADMIN_KEY}) as http:
        async with Client(streamable_http_client(URL, http_client=http), mode="legacy") as client:
            for _ in range(100):
                result = await client.call_tool("get_mcp_activity", {"limit": 200})
                assert result.is_error is False, result
                items = structured(result)["data"]["items"]
                if any(
                    i["tool_name"] == "no_such_tool" and i["error_class"] == "not_found"
                    for i in items
                ):
                    break
                await asyncio.sleep(0.1)
            else:
                raise AssertionError(f"the unknown-tool call is not in the activity: {items}")
            assert all("arguments" not in i for i in items), items[0]
            assert any(
                i["tool_name"] == "list_tenants" and i["status"] == "ok" for i in items
            ), items


# ---------------------------------------------------------------------------------------------
# Garden I walkthrough: the garden a grower builds on REST, seen and driven through the SDK.
# ---------------------------------------------------------------------------------------------

API = URL.rsplit("/mcp", 1)[0]
GARDEN = f"{API}/t/{TENANT}"


class Rest:
    """The REST API with the admin service-account key (what a script or UI would use)."""

    def __init__(self, http: httpx2.AsyncClient) -> None:
        self.http = http

    async def call(self, method: str, path: str, body: Any = None, status: int = 200) -> Any:
        url = path if path.startswith("http") else f"{GARDEN}{path}"
        res = await self.http.request(method, url, json=body)
        assert res.status_code == status, (method, path, body, res.status_code, res.text)
        return res.json() if res.content else None

    async def get(self, path: str) -> Any:
        return await self.call("GET", path)

    async def post(self, path: str, body: Any, status: int = 201) -> Any:
        return await self.call("POST", path, body, status)


async def ok(client: Client, name: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(name, args)
    assert result.is_error is False, (name, args, result)
    return structured(result)


async def species_key(rest: Rest, client: Client, word: str, scientific_name: str) -> str:
    """The species a user finds by a word in the catalogue search (REST; list_species has no
    search), read back through the catalogue tool."""
    page = await rest.get(f"{API}/species?q={word}")
    keys = [s["key"] for s in page["items"] if s.get("scientific_name") == scientific_name]
    assert keys, f"the catalogue search {word!r} does not find {scientific_name}: {page}"
    info = (await ok(client, "get_species_info", {"species_key": keys[0]}))["data"]
    assert scientific_name in json.dumps(info), info
    return keys[0]


async def garden_walkthrough() -> None:
    """A balcony with two boxes and six slots built on REST; basil and tomatoes from the
    catalogue; then list, read, move (dry run, idempotent replay), phases, archive, runs and
    substrates through the MCP client, each change checked on REST, and REST's records seen
    through MCP."""
    suffix = os.getpid()
    async with Wire().client({"X-API-Key": ADMIN_KEY}) as http, Wire().client(
        {"X-API-Key": VIEWER_KEY}
    ) as viewer_http:
        rest = Rest(http)
        async with Client(
            streamable_http_client(URL, http_client=http), mode="legacy"
        ) as mcp, Client(
            streamable_http_client(URL, http_client=viewer_http), mode="legacy"
        ) as viewer:
            # The balcony on REST: two boxes, three slots each, neighbours in a row.
            site = await rest.post("/sites/", {"name": f"Balcony {suffix}", "kind": "balcony"})
            boxes, slots = [], []
            for b in (1, 2):
                box = await rest.post(
                    "/locations/",
                    {"site_key": site["key"], "name": f"Box {b}", "kind": "container",
                     "frost_exposed": b == 2, "light_situation": "full_sun",
                     "climate_zone": "7b", "area_sqm": 0.6},
                )
                row = []
                for i in (1, 2, 3):
                    slot = await rest.post(
                        "/slots/",
                        {"location_key": box["key"], "code": f"B{suffix}X{b}_A{i}",
                         "position_x": i, "position_y": 1},
                    )
                    row.append(slot["key"])
                await rest.call(
                    "PUT", f"/slots/{row[1]}/neighbours", {"neighbour_keys": [row[0], row[2]]}
                )
                boxes.append(box["key"])
                slots.append(row)
            soil = await rest.post("/substrates/", {"name": f"Box soil {suffix}", "type": "soil"})
            batch = await rest.post(
                "/substrate-batches/", {"substrate_key": soil["key"], "label": f"Soil {suffix}"}
            )
            await rest.call(
                "PUT", f"/slots/{slots[0][0]}/substrate-batch", {"batch_key": batch["key"]}
            )

            # Basil and tomatoes picked from the catalogue through the MCP client.
            basil = await species_key(rest, mcp, "basil", "Ocimum basilicum")
            tomato = await species_key(rest, mcp, "tomato", "Solanum lycopersicum")

            # Planted on REST ...
            plants = {}
            for name, species, slot in [
                ("Tomato 1", tomato, slots[0][0]),
                ("Basil 1", basil, slots[0][1]),
                ("Tomato 2", tomato, slots[1][0]),
                ("Basil 2", basil, slots[1][2]),
            ]:
                body = {"species_key": species, "slot_key": slot, "name": name,
                        "planted_on": "2026-05-15"}
                if name == "Tomato 1":
                    body["substrate_batch_key"] = batch["key"]
                plants[name] = (await rest.post("/plant-instances/", body))["key"]

            # ... seen through MCP.
            listed = (await ok(mcp, "list_plants", {}))["data"]
            assert listed["matched"] == 4 and listed["total_in_tenant"] == 4, listed
            assert {p["name"] for p in listed["items"]} == set(plants), listed
            got = (await ok(mcp, "get_plant", {"plant_key": plants["Tomato 1"]}))["data"]
            assert got["species"]["scientific_name"] == "Solanum lycopersicum", got
            assert got["substrate_batch_key"] == batch["key"], got
            assert got["phase_state"] == "in_phase", got
            at_box = (await ok(mcp, "list_plants_at_location", {"location_key": boxes[0]}))["data"]
            assert {p["name"] for p in at_box["items"]} == {"Tomato 1", "Basil 1"}, at_box
            loc = (await ok(mcp, "get_location", {"location_key": boxes[1]}))["data"]
            assert loc["frost_exposed"] is True and loc["climate_zone"] == "7b", loc
            assert loc["light_situation"] == "full_sun" and loc["area_sqm"] == 0.6, loc
            assert [s["free"] for s in loc["slots"]] == [0, 1, 0], loc
            loc1 = (await ok(mcp, "get_location", {"location_key": boxes[0]}))["data"]
            assert loc1["slots"][0]["substrate_batch_key"] == batch["key"], loc1

            # Move Basil 2 to box 1: a dry run changes nothing, then the move with an
            # idempotency key, replayed once.
            move = {"plant_key": plants["Basil 2"], "slot_key": slots[0][2]}
            dry = await ok(mcp, "set_plant_location", {**move, "dry_run": True})
            assert dry["dry_run"] is True, dry
            still = await rest.get(f"/plant-instances/{plants['Basil 2']}")
            assert still["location_key"] == boxes[1], still
            key = f"move-basil-{suffix}"
            moved = await ok(mcp, "set_plant_location", {**move, "idempotency_key": key})
            assert moved["idempotent_replay"] is False, moved
            again = await ok(mcp, "set_plant_location", {**move, "idempotency_key": key})
            assert again["idempotent_replay"] is True, again
            now = await rest.get(f"/plant-instances/{plants['Basil 2']}")
            assert now["location_key"] == boxes[0] and now["slot_key"] == slots[0][2], now
            # Into a full slot: refused, nothing moved.
            err = tool_error(
                await mcp.call_tool(
                    "set_plant_location",
                    {"plant_key": plants["Basil 1"], "slot_key": slots[0][0]},
                ),
                "validation.error",
            )
            assert any(d["field"].endswith("slot_key") for d in err["details"]), err
            basil1 = await rest.get(f"/plant-instances/{plants['Basil 1']}")
            assert basil1["slot_key"] == slots[0][1], basil1

            # Phases: forward through MCP, seen on REST; backward refused, nothing written.
            status = (await ok(mcp, "get_plant_phase_status", {"plant_key": plants["Tomato 1"]}))[
                "data"
            ]
            targets = status["allowed_targets"]
            first = status["phase_key"]
            assert targets, status
            dry = await ok(
                mcp, "transition_plant_phase",
                {"plant_key": plants["Tomato 1"], "target_phase_key": targets[0],
                 "dry_run": True},
            )
            assert dry["dry_run"] is True, dry
            assert (await rest.get(f"/plant-instances/{plants['Tomato 1']}"))[
                "current_phase_key"
            ] == first
            await ok(
                mcp, "transition_plant_phase",
                {"plant_key": plants["Tomato 1"], "target_phase_key": targets[0],
                 "reason": "first true leaves", "idempotency_key": f"phase-{suffix}"},
            )
            on_rest = await rest.get(f"/plant-instances/{plants['Tomato 1']}")
            assert on_rest["current_phase_key"] == targets[0], on_rest
            tool_error(
                await mcp.call_tool(
                    "transition_plant_phase",
                    {"plant_key": plants["Tomato 1"], "target_phase_key": first},
                ),
                "validation.error",
            )
            history = (
                await ok(mcp, "get_plant_phase_history", {"plant_key": plants["Tomato 1"]})
            )["data"]
            assert len(history["items"]) == 2, history
            assert history["items"][-1]["actor"].startswith("mcp:"), history
            rest_history = await rest.get(f"/plant-instances/{plants['Tomato 1']}/phase-history")
            assert rest_history["total"] == 2, rest_history

            # Archive through MCP: gone from the default listings, still readable.
            archived = await ok(
                mcp, "archive_plant",
                {"plant_key": plants["Tomato 2"], "termination_type": "died"},
            )
            assert archived["dry_run"] is False, archived
            page = await rest.get("/plant-instances/")
            assert plants["Tomato 2"] not in {p["key"] for p in page["items"]}, page
            assert (await rest.get(f"/plant-instances/{plants['Tomato 2']}"))["archived"] is True
            listed = (await ok(mcp, "list_plants", {}))["data"]
            assert listed["matched"] == 3 and listed["total_in_tenant"] == 4, listed
            listed = (await ok(mcp, "list_plants", {"include_archived": True}))["data"]
            assert listed["matched"] == 4, listed
            # A viewer reads but cannot write.
            assert (await ok(viewer, "get_plant", {"plant_key": plants["Basil 1"]}))["data"]
            tool_error(
                await viewer.call_tool(
                    "archive_plant", {"plant_key": plants["Basil 1"], "termination_type": "died"}
                ),
                "permission.denied",
            )
            assert (await rest.get(f"/plant-instances/{plants['Basil 1']}"))["archived"] is False

            # A planting run made on REST, listed through MCP.
            run = await rest.post("/planting-runs/", {"name": f"Basil run {suffix}"})
            runs = (await ok(mcp, "list_planting_runs", {}))["data"]
            assert run["key"] in {r.get("run_key") or r.get("key") for r in runs["items"]}, runs

            # Substrates: REST's own substrate and batch seen through MCP; a mix made through
            # MCP (dry run first) seen on REST.
            subs = (await ok(mcp, "list_substrates", {"scope": "tenant"}))["data"]
            assert soil["key"] in {s.get("substrate_key") or s.get("key") for s in subs["items"]}
            assert (await ok(mcp, "get_substrate", {"substrate_key": soil["key"]}))["data"]
            batches = (await ok(mcp, "list_substrate_batches", {}))["data"]
            assert batch["key"] in {
                b.get("batch_key") or b.get("key") for b in batches["items"]
            }, batches
            got = (await ok(mcp, "get_substrate_batch", {"batch_key": batch["key"]}))["data"]
            assert got["label"] == f"Soil {suffix}", got
            reuse = (await ok(mcp, "check_batch_reusability", {"batch_key": batch["key"]}))[
                "data"
            ]
            assert reuse["can_reuse"] is False, reuse  # plain soil is not reusable
            perlite = await rest.post(
                "/substrates/", {"name": f"Perlite {suffix}", "type": "perlite"}
            )
            components = [
                {"substrate_key": soil["key"], "fraction": 0.7},
                {"substrate_key": perlite["key"], "fraction": 0.3},
            ]
            preview = (await ok(mcp, "preview_substrate_mix", {"components": components}))[
                "data"
            ]
            assert preview, preview
            mix_args = {"name_en": f"Soil perlite {suffix}", "components": components}
            dry = await ok(mcp, "create_substrate_mix", {**mix_args, "dry_run": True})
            assert dry["dry_run"] is True, dry
            own = await rest.get(f"/substrates/?scope=tenant&q=soil%20perlite%20{suffix}")
            assert own["total"] == 0, own
            made = await ok(
                mcp, "create_substrate_mix", {**mix_args, "idempotency_key": f"mix-{suffix}"}
            )
            mix_key = made["data"].get("substrate_key") or made["data"]["key"]
            on_rest = await rest.get(f"/substrates/{mix_key}")
            assert on_rest["is_mix"] is True and on_rest["scope"] == "tenant", on_rest


async def feeding_walkthrough() -> None:
    """Issue 13's "Done when" through the SDK: clone the tomato plan template, raise its
    flowering EC, assign it to a run with a plant, a mixing protocol for a 20-litre tank, the
    feeding recorded from that tank, and the feeding plus the plan targets in the plant's
    diagnostics (record_feeding_event -> get_plant_diagnostics)."""
    suffix = os.getpid()
    async with Wire().client({"X-API-Key": ADMIN_KEY}) as http:
        rest = Rest(http)
        async with Client(streamable_http_client(URL, http_client=http), mode="legacy") as mcp:
            tomato = await species_key(rest, mcp, "tomato", "Solanum lycopersicum")
            plant = await rest.post(
                "/plant-instances/", {"species_key": tomato, "name": f"Fed tomato {suffix}"}
            )
            run = await rest.post("/planting-runs/", {"name": f"Fed run {suffix}"})
            await rest.post(
                f"/planting-runs/{run['key']}/plants", {"plant_keys": [plant["key"]]}, 200
            )
            # Into flowering, one phase at a time: the plan's targets are per phase, and a
            # plant in a phase the plan does not name gets none.
            for step in range(12):
                status = (
                    await ok(mcp, "get_plant_phase_status", {"plant_key": plant["key"]})
                )["data"]
                if (status.get("phase") or {}).get("name", "").lower() == "flowering":
                    break
                assert status["allowed_targets"], status
                await ok(
                    mcp, "transition_plant_phase",
                    {"plant_key": plant["key"], "target_phase_key": status["allowed_targets"][0],
                     "idempotency_key": f"fed-phase-{suffix}-{step}"},
                )
            else:
                raise AssertionError(f"the tomato never reached flowering: {status}")
            plans = (await ok(mcp, "list_nutrient_plans", {"query": "tomato"}))["data"]
            template = next(p for p in plans["items"] if p["plan_key"] == "tomato-soil")
            assert template["is_global_template"] is True, template
            cloned = (
                await ok(
                    mcp, "clone_nutrient_plan",
                    {"plan_key": "tomato-soil", "name": f"My tomatoes {suffix}",
                     "idempotency_key": f"clone-{suffix}"},
                )
            )["data"]
            plan = cloned.get("plan_key") or cloned["key"]
            flowering = next(p for p in cloned["phases"] if p["phase_name"] == "flowering")
            raised = round(flowering["target_ec_ms"] + 0.3, 2)
            await ok(
                mcp, "set_nutrient_plan_phase_targets",
                {"plan_key": plan, "phase": "flowering", "target_ec_ms": raised},
            )
            on_rest = await rest.get(f"/nutrient-plans/{plan}")
            got = next(p for p in on_rest["phases"] if p["phase_name"] == "flowering")
            assert got["target_ec_ms"] == raised, on_rest
            await rest.post(f"/nutrient-plans/{plan}/assignments", {"run_key": run["key"]}, 200)

            products = (await ok(mcp, "list_fertilizers", {"query": "calimagic"}))["data"]
            keys = [p.get("fertilizer_key") or p["key"] for p in products["items"]][:1]
            bases = (await ok(mcp, "list_fertilizers", {"query": "flora"}))["data"]
            keys += [p.get("fertilizer_key") or p["key"] for p in bases["items"]][:2]
            assert keys, (products, bases)
            protocol = (
                await ok(
                    mcp, "calculate_mixing_protocol",
                    {"fertilizers": [{"fertilizer_key": k} for k in keys],
                     "target_volume_liters": 20, "target_ec_ms": raised,
                     "base_water_ec_ms": 0.3, "substrate_type": "coco", "phase": "flowering"},
                )
            )["data"]
            assert protocol["target_volume_liters"] == 20 and protocol["dosages"], protocol
            mixed = protocol["calculated_ec"]

            tank = await rest.post(
                "/tanks/", {"name": f"Tank {suffix}", "kind": "nutrient", "volume_liters": 20}
            )
            await rest.post(
                f"/tanks/{tank['key']}/fills",
                {"fill_type": "full_change", "volume_liters": 20, "ec_ms": mixed, "ph": 6.0},
            )
            args = {"plant_key": plant["key"], "tank_key": tank["key"],
                    "volume_applied_liters": 2.0, "measured_ec_before": 0.3,
                    "measured_ec_after": mixed, "measured_ph_after": 6.0,
                    "runoff_ec": round(mixed + 0.2, 2), "runoff_volume_liters": 0.4,
                    "fertilizers_used": [
                        {"fertilizer_key": d["fertilizer_key"],
                         "ml_applied": round(d["ml_per_liter"] * 2, 3)}
                        for d in protocol["dosages"] if d["ml_per_liter"] > 0
                    ]}
            dry = await ok(mcp, "record_feeding_event", {**args, "dry_run": True})
            assert dry["dry_run"] is True, dry
            assert (await rest.get(f"/tanks/{tank['key']}"))["state"][
                "current_volume_liters"
            ] == 20, "a dry run drew from the tank"
            fed = (
                await ok(
                    mcp, "record_feeding_event", {**args, "idempotency_key": f"feed-{suffix}"}
                )
            )["data"]
            assert fed["kind"] == "feeding", fed
            assert (await rest.get(f"/tanks/{tank['key']}"))["state"][
                "current_volume_liters"
            ] == 18, "the feeding did not draw from the tank"

            diag = (
                await ok(mcp, "get_plant_diagnostics", {"plant_key": plant["key"]})
            )["data"]
            assert diag["last_feedings"][0]["key"] == fed["event_key"], diag
            assert diag["ec"]["post_feed"]["latest"] == mixed, diag
            assert diag["plan_targets"]["plan_key"] == plan, diag
            assert diag["plan_targets"]["source"] == "run", diag
            assert diag["targets_vs_measured"]["ec"]["measured_ec_ms"] == mixed, diag
            rest_diag = await rest.get(f"/plant-instances/{plant['key']}/diagnostics")
            assert rest_diag["last_feedings"] == diag["last_feedings"], rest_diag


CHECKS: list[tuple[str, Callable[[], Awaitable[None]]]] = [
    ("legacy session with X-API-Key", legacy_session_with_x_api_key),
    ("auto mode (server/discover probe) with Authorization: Bearer", auto_session_with_bearer),
    ("viewer key", viewer_session),
    ("get_mcp_activity shows the calls", activity_records_calls),
    ("garden walkthrough: REST and MCP see and drive one garden", garden_walkthrough),
    ("feeding walkthrough: plan, mixing, feeding, diagnostics", feeding_walkthrough),
]


async def main() -> int:
    failed = 0
    for name, check in CHECKS:
        try:
            await check()
        except Exception:  # noqa: BLE001 - report every check, then fail
            failed += 1
            print(f"[mcp-python] FAIL {name}", file=sys.stderr)
            traceback.print_exc()
        else:
            print(f"[mcp-python] ok   {name}", file=sys.stderr)
    print(
        f"[mcp-python] {len(CHECKS) - failed}/{len(CHECKS)} checks passed",
        file=sys.stderr,
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
