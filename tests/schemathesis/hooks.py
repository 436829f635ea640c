"""Schemathesis hooks for the run in tests/schemathesis/run (loaded through SCHEMATHESIS_HOOKS).

`POST /api/v1/tenants/import` takes a garden export file, `application/gzip`, which schemathesis
has no serializer for: the generated value (bytes, or a string for the binary schema) is sent
as it is, like its own `application/octet-stream` serializer does. Such bytes are no export
file, so the import answers 415/422 as documented; the round trip itself is tested in
tests/api/transfer_http.rs.
"""

from __future__ import annotations

from typing import Any

import schemathesis


@schemathesis.serializer("application/gzip")
def gzip_body(ctx: schemathesis.SerializationContext, value: Any) -> dict[str, Any]:
    if isinstance(value, (bytes, bytearray)):
        return {"data": bytes(value)}
    return {"data": str(value).encode("utf-8")}
