"""The official Python MCP SDK's stdio client against `kultiva mcp-stdio`, the bridge desktop
clients start, forwarding to a live Kultiva tool server. Started by tests/mcp/run, which
provides:

  KULTIVA_BIN     the built kultiva binary
  MCP_BASE_URL    the server's base address, http://127.0.0.1:PORT
  MCP_TENANT      the slug of the garden the key belongs to
  MCP_ADMIN_KEY   a service-account key with role admin there

The key reaches the bridge through its environment only (as in a desktop client's
configuration), never through arguments. Every check runs even when an earlier one failed; the
exit status is 1 when any failed.
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
import traceback
import uuid
import warnings
from collections.abc import Awaitable, Callable
from typing import Any

from mcp import Client
from mcp.client.stdio import StdioServerParameters

BIN = os.environ["KULTIVA_BIN"]
BASE_URL = os.environ["MCP_BASE_URL"]
TENANT = os.environ["MCP_TENANT"]
ADMIN_KEY = os.environ["MCP_ADMIN_KEY"]

MODERN_REVISIONS = ("2025-11-25", "2025-06-18")

warnings.filterwarnings("ignore", category=DeprecationWarning)


def bridge(url: str, key: str) -> StdioServerParameters:
    # What a desktop client's mcpServers entry amounts to: command, args, env.
    return StdioServerParameters(
        command=BIN,
        args=["mcp-stdio"],
        env={"KULTIVA_URL": url, "KULTIVA_API_KEY": key},
    )


def structured(result: Any) -> dict[str, Any]:
    sc = result.structured_content
    assert isinstance(sc, dict), f"structuredContent missing: {result!r}"
    return sc


async def session_through_the_bridge() -> None:
    """initialize (the default auto mode: the discover probe falls back to initialize),
    list_tools, a read tool and a write tool (dry run, then for real, then an idempotent
    replay) over one stdio session."""
    params = bridge(BASE_URL, ADMIN_KEY)
    assert all(ADMIN_KEY not in a for a in [params.command, *params.args])
    async with Client(params) as client:
        assert client.protocol_version in MODERN_REVISIONS, client.protocol_version
        assert client.server_info is not None and client.server_info.name == "kultiva"
        assert client.server_capabilities.tools is not None

        listing = await client.list_tools()
        names = {t.name for t in listing.tools}
        for name in ("list_tenants", "get_mcp_activity", "create_site"):
            assert name in names, f"{name} not listed: {sorted(names)}"

        # A read tool.
        result = await client.call_tool("list_tenants", {})
        assert result.is_error is False, result
        gardens = {g["slug"]: g for g in structured(result)["data"]["items"]}
        assert gardens.get(TENANT, {}).get("role") == "admin", gardens

        # A write tool: a dry run creates nothing, the call creates one site, the same
        # idempotency key replays it.
        name = f"Stdio balcony {uuid.uuid4().hex[:8]}"
        dry = await client.call_tool(
            "create_site", {"tenant": TENANT, "name": name, "kind": "balcony", "dry_run": True}
        )
        assert dry.is_error is False, dry
        assert structured(dry).get("dry_run") is True, structured(dry)
        args = {"tenant": TENANT, "name": name, "kind": "balcony", "idempotency_key": name}
        made = await client.call_tool("create_site", args)
        assert made.is_error is False, made
        site = structured(made)["data"]
        assert site["name"] == name and site["site_key"], site
        again = await client.call_tool("create_site", args)
        assert again.is_error is False, again
        assert structured(again)["data"]["site_key"] == site["site_key"], structured(again)
        assert structured(again).get("idempotent_replay") is True, structured(again)

        # Tool errors stay tool results (isError), as over HTTP.
        missing = await client.call_tool("no_such_tool", {})
        assert missing.is_error is True, missing
        assert structured(missing)["error_code"] == "not_found", structured(missing)


async def unreachable_server_is_an_error() -> None:
    """The bridge answers initialize with its JSON-RPC network error (-32050) when the server
    cannot be reached; the client reports it instead of hanging."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    try:
        # The legacy handshake: the error comes straight from initialize.
        async with Client(bridge(f"http://127.0.0.1:{port}", ADMIN_KEY), mode="legacy"):
            raise AssertionError("connected to a server that does not exist")
    except AssertionError:
        raise
    except Exception as err:  # noqa: BLE001 - the SDK's error type is what we inspect
        text = repr(err) + str(getattr(err, "error", ""))
        for e in getattr(err, "exceptions", []) or []:
            text += repr(e) + str(getattr(e, "error", ""))
        assert "cannot reach" in text or "-32050" in text, text
        assert ADMIN_KEY not in text, "the key leaked into the error"


CHECKS: list[tuple[str, Callable[[], Awaitable[None]]]] = [
    ("stdio bridge: initialize, list, read and write tools", session_through_the_bridge),
    ("stdio bridge: an unreachable server is a JSON-RPC error", unreachable_server_is_an_error),
]


async def main() -> int:
    failed = 0
    for name, check in CHECKS:
        try:
            await asyncio.wait_for(check(), timeout=120)
        except Exception:  # noqa: BLE001 - report every check, then fail
            failed += 1
            print(f"[mcp-stdio] FAIL {name}", file=sys.stderr)
            traceback.print_exc()
        else:
            print(f"[mcp-stdio] ok   {name}", file=sys.stderr)
    print(f"[mcp-stdio] {len(CHECKS) - failed}/{len(CHECKS)} checks passed", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
