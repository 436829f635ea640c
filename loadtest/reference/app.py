"""FastAPI reference for loadtest/auth: the anchor's stack doing the work of Kultiva's
`GET /api/v1/users/me`, so the two can be measured side by side with the same client.

Same work as the service, written the way a small FastAPI app would:
- `Authorization: Bearer <JWT>`: HS256 verified with the service's JWT_SECRET_KEY (exp, iat and
  sub required, 5 s leeway, no token from the future), then ONE query reads the user row with
  its `is_active` and `token_generation`; an inactive account or a stale generation is a 401.
- `X-API-Key: svc_…`: shape check, SHA-256 of the key, ONE query joins the key to its user by
  the digest, the digest is compared in constant time, revoked keys and inactive accounts 401.
- The answer is the service's user record: the same fields, the same JSON types.

Run: uvicorn app:app --workers 2 --loop uvloop --http httptools (loadtest/auth does this).
Environment: DATABASE_URL, JWT_SECRET_KEY.
"""

import hashlib
import hmac
import os
import re
import time
import uuid
from contextlib import asynccontextmanager
from datetime import timezone

import asyncpg
import jwt
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

SECRET = os.environ["JWT_SECRET_KEY"]
DATABASE_URL = os.environ["DATABASE_URL"]
LEEWAY = 5
KEY_SHAPE = re.compile(r"^svc_[A-Za-z0-9_-]{43}$")

USER_COLUMNS = (
    "u.id, u.email, u.display_name, u.account_type, u.email_verified, u.is_active, "
    "u.avatar_url, u.locale, u.timezone, u.last_login_at, u.created_at"
)
BY_ID = f"SELECT {USER_COLUMNS}, u.token_generation FROM platform.users u WHERE u.id = $1"
BY_KEY = (
    f"SELECT {USER_COLUMNS}, k.key_hash, (k.revoked_at IS NULL AND u.is_active) AS usable "
    "FROM platform.api_keys k JOIN platform.users u ON u.id = k.user_id WHERE k.key_hash = $1"
)


@asynccontextmanager
async def lifespan(app: FastAPI):
    # asyncpg's default pool size (10) per worker.
    app.state.pool = await asyncpg.create_pool(DATABASE_URL, min_size=1, max_size=10)
    yield
    await app.state.pool.close()


app = FastAPI(lifespan=lifespan)


def unauthorized() -> JSONResponse:
    return JSONResponse(
        {"error": {"code": "INVALID_TOKEN", "message": "the credential is invalid, expired or revoked"}},
        status_code=401,
        headers={"www-authenticate": 'Bearer error="invalid_token"'},
    )


def rfc3339(value):
    if value is None:
        return None
    return value.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


def user_record(row) -> dict:
    return {
        "key": str(row["id"]),
        "email": row["email"],
        "display_name": row["display_name"],
        "account_type": row["account_type"],
        "email_verified": row["email_verified"],
        "is_active": row["is_active"],
        "avatar_url": row["avatar_url"],
        "locale": row["locale"],
        "timezone": row["timezone"],
        "last_login_at": rfc3339(row["last_login_at"]),
        "created_at": rfc3339(row["created_at"]),
    }


async def by_token(pool, token: str):
    try:
        claims = jwt.decode(
            token,
            SECRET,
            algorithms=["HS256"],
            leeway=LEEWAY,
            options={"require": ["exp", "iat", "sub"]},
        )
    except jwt.PyJWTError:
        return None
    if claims["iat"] > time.time() + LEEWAY:
        return None
    try:
        user = uuid.UUID(str(claims["sub"]))
    except ValueError:
        return None
    row = await pool.fetchrow(BY_ID, user)
    if row is None or not row["is_active"] or row["token_generation"] != claims.get("gen"):
        return None
    return row


async def by_key(pool, key: str):
    if not KEY_SHAPE.match(key):
        return None
    digest = hashlib.sha256(key.encode()).digest()
    row = await pool.fetchrow(BY_KEY, digest)
    if row is None or not hmac.compare_digest(bytes(row["key_hash"]), digest) or not row["usable"]:
        return None
    return row


@app.get("/api/v1/users/me")
async def get_me(request: Request):
    pool = request.app.state.pool
    key = request.headers.get("x-api-key")
    if key is not None:
        row = await by_key(pool, key.strip())
    else:
        scheme, _, token = request.headers.get("authorization", "").strip().partition(" ")
        if scheme.lower() != "bearer":
            return unauthorized()
        row = await by_token(pool, token.strip())
    if row is None:
        return unauthorized()
    return user_record(row)
