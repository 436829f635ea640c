//! Refresh tokens: one family per login, kept in Redis so every replica sees the same state.
//! A token is `<family id>.<secret>`; the family record holds the digest of the one current
//! token. Rotation swaps it atomically (one Lua script, one key); presenting any other token of
//! the family (an already rotated one) revokes the whole family, so a stolen token dies with
//! the session it was stolen from. Keys carry the family in a hash tag (cluster-safe).
//!
//! A family also records the account's token generation at login. Logout-all, a password
//! change or reset bump the generation in PostgreSQL, so rotation refuses (and revokes) every
//! family of an earlier generation even when the per-user index of families in Redis no longer
//! lists it. The index is extended on every rotation as well, so it lives as long as the
//! longest-living family it names.

use redis::Script;
use std::sync::LazyLock;
use uuid::Uuid;

use super::secrets::{SecretHash, random_secret};
use crate::error::AppError;
use crate::state::AppState;

/// A refresh token as presented by a client.
#[derive(Clone, PartialEq, Eq)]
pub struct RefreshToken {
    pub family: Uuid,
    secret: String,
}

impl std::fmt::Debug for RefreshToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RefreshToken({}.***)", self.family)
    }
}

impl RefreshToken {
    fn fresh(family: Uuid) -> Self {
        Self {
            family,
            secret: random_secret(),
        }
    }

    /// Reads the cookie value; anything malformed is simply not a token.
    pub fn parse(raw: &str) -> Option<Self> {
        let (family, secret) = raw.split_once('.')?;
        let family = Uuid::parse_str(family).ok()?;
        let valid = secret.len() == 43
            && secret
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        valid.then(|| Self {
            family,
            secret: secret.to_owned(),
        })
    }

    pub fn to_cookie_value(&self) -> String {
        format!("{}.{}", self.family, self.secret)
    }

    fn digest(&self) -> String {
        SecretHash::of(&self.secret).to_hex()
    }
}

#[derive(Debug)]
pub enum Rotation {
    /// The presented token was current: here is its successor.
    Rotated {
        user: Uuid,
        remember: bool,
        /// The account's token generation when the family was opened.
        generation: Option<i32>,
        token: RefreshToken,
    },
    /// An old token of the family was presented: the family is now revoked.
    Reused,
    /// Unknown, expired or already revoked family.
    Invalid,
}

fn family_key(state: &AppState, family: Uuid) -> String {
    state.redis_key("rt", &family.to_string(), &[])
}

fn user_families_key(state: &AppState, user: Uuid) -> String {
    state.redis_key("rtu", &user.to_string(), &[])
}

fn ttl_seconds(state: &AppState) -> i64 {
    i64::from(state.config().refresh_token_expire_days) * 86_400
}

static ROTATE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
local f = redis.call('HMGET', KEYS[1], 'user', 'current', 'revoked', 'remember', 'gen')
if not f[1] then return {'invalid'} end
if f[3] == '1' then return {'invalid'} end
if f[2] ~= ARGV[1] then
  redis.call('HSET', KEYS[1], 'revoked', '1')
  return {'reused', f[1]}
end
redis.call('HSET', KEYS[1], 'current', ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[3])
return {'rotated', f[1], f[4], f[5] or ''}
",
    )
});

/// Redis is the only record of refresh tokens: when it is unreachable nothing can be
/// verified, so the answer is 503, never a silent pass.
fn redis_down(err: impl std::fmt::Display) -> AppError {
    crate::metrics::redis_error(crate::metrics::RedisUse::RefreshToken);
    AppError::unavailable("session store", err.to_string())
}

/// Opens a family for a fresh login and returns its first token. `generation` is the account's
/// token generation the login was checked against.
///
/// The family (`rt:{family}`) and the user's index of families (`rtu:{user}`) have different
/// hash tags, so on a Redis Cluster they may live on different nodes: they are written in two
/// steps, the index first. Should the second step fail, the login fails (503) and the index
/// names a family that does not exist, which is harmless (revoking it is a no-op; the entry
/// expires with the index). The other order could leave a working family that logout-all
/// cannot find through the index (the token generation would still stop it, but only at its
/// next rotation).
pub async fn start_family(
    state: &AppState,
    user: Uuid,
    generation: i32,
    remember: bool,
) -> Result<RefreshToken, AppError> {
    let token = RefreshToken::fresh(Uuid::new_v4());
    let ttl = ttl_seconds(state);
    let mut conn = state.redis().get().await.map_err(redis_down)?;
    let key = family_key(state, token.family);
    let users_key = user_families_key(state, user);
    redis::pipe()
        .sadd(&users_key, token.family.to_string())
        .ignore()
        .expire(&users_key, ttl)
        .ignore()
        .query_async::<()>(&mut conn)
        .await
        .map_err(redis_down)?;
    redis::pipe()
        .hset_multiple(
            &key,
            &[
                ("user", user.to_string()),
                ("current", token.digest()),
                ("revoked", "0".to_owned()),
                ("remember", if remember { "1" } else { "0" }.to_owned()),
                ("gen", generation.to_string()),
                (
                    "opened",
                    time::OffsetDateTime::now_utc().unix_timestamp().to_string(),
                ),
            ],
        )
        .ignore()
        .expire(&key, ttl)
        .ignore()
        .query_async::<()>(&mut conn)
        .await
        .map_err(redis_down)?;
    Ok(token)
}

/// Exchanges a current token for its successor (atomic: of two concurrent calls with the same
/// token exactly one rotates; the other presents a no-longer-current token and revokes).
pub async fn rotate(state: &AppState, presented: &RefreshToken) -> Result<Rotation, AppError> {
    let next = RefreshToken::fresh(presented.family);
    let mut conn = state.redis().get().await.map_err(redis_down)?;
    let reply: Vec<String> = ROTATE
        .key(family_key(state, presented.family))
        .arg(presented.digest())
        .arg(next.digest())
        .arg(ttl_seconds(state))
        .invoke_async(&mut conn)
        .await
        .map_err(redis_down)?;
    let user = reply.get(1).and_then(|u| Uuid::parse_str(u).ok());
    Ok(match (reply.first().map(String::as_str), user) {
        (Some("rotated"), Some(user)) => {
            // The index of the user's families lives as long as its longest family: a family
            // kept alive by rotation stays findable by logout-all and a reset.
            let _: () = redis::cmd("EXPIRE")
                .arg(user_families_key(state, user))
                .arg(ttl_seconds(state))
                .query_async(&mut conn)
                .await
                .map_err(redis_down)?;
            Rotation::Rotated {
                user,
                remember: reply.get(2).is_some_and(|r| r == "1"),
                generation: reply.get(3).and_then(|g| g.parse().ok()),
                token: next,
            }
        }
        (Some("reused"), _) => {
            tracing::warn!(family = %presented.family, "refresh token reuse: family revoked");
            Rotation::Reused
        }
        _ => Rotation::Invalid,
    })
}

/// A family that is still open, as [`holder`] reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenFamily {
    pub user: Uuid,
    pub remember: bool,
    /// The account's token generation when the family was opened.
    pub generation: Option<i32>,
}

/// Who holds this token, without rotating it: the web pages' session is a family whose token
/// stays the same for its life (the pages' cookie never reaches the refresh route), so it ends
/// exactly when the family does: logout, logout-all, a password change or reset, erasure.
/// `None` for an unknown, expired, revoked or no-longer-current token.
pub async fn holder(
    state: &AppState,
    presented: &RefreshToken,
) -> Result<Option<OpenFamily>, AppError> {
    let mut conn = state.redis().get().await.map_err(redis_down)?;
    let fields: Vec<Option<String>> = redis::cmd("HMGET")
        .arg(family_key(state, presented.family))
        .arg(&["user", "current", "revoked", "remember", "gen"])
        .query_async(&mut conn)
        .await
        .map_err(redis_down)?;
    let field = |i: usize| fields.get(i).cloned().flatten();
    let (Some(user), Some(current)) = (field(0), field(1)) else {
        return Ok(None);
    };
    let current_matches: bool =
        subtle::ConstantTimeEq::ct_eq(current.as_bytes(), presented.digest().as_bytes()).into();
    if !current_matches || field(2).as_deref() == Some("1") {
        return Ok(None);
    }
    Ok(Uuid::parse_str(&user).ok().map(|user| OpenFamily {
        user,
        remember: field(3).as_deref() == Some("1"),
        generation: field(4).and_then(|g| g.parse().ok()),
    }))
}

static REVOKE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('HSET', KEYS[1], 'revoked', '1')
  return 1
end
return 0
",
    )
});

/// Ends one family (logout). Unknown families are fine (nothing is created): the result is
/// the same for the client.
pub async fn revoke_family(state: &AppState, family: Uuid) -> Result<(), AppError> {
    let mut conn = state.redis().get().await.map_err(redis_down)?;
    let _: i64 = REVOKE
        .key(family_key(state, family))
        .invoke_async(&mut conn)
        .await
        .map_err(redis_down)?;
    Ok(())
}

/// Ends every family of a user (logout-all, password change, deactivation).
pub async fn revoke_all(state: &AppState, user: Uuid) -> Result<(), AppError> {
    let mut conn = state.redis().get().await.map_err(redis_down)?;
    let users_key = user_families_key(state, user);
    let families: Vec<String> = redis::cmd("SMEMBERS")
        .arg(&users_key)
        .query_async(&mut conn)
        .await
        .map_err(redis_down)?;
    drop(conn);
    for family in families.iter().filter_map(|f| Uuid::parse_str(f).ok()) {
        revoke_family(state, family).await?;
    }
    let mut conn = state.redis().get().await.map_err(redis_down)?;
    let _: i64 = redis::cmd("DEL")
        .arg(&users_key)
        .query_async(&mut conn)
        .await
        .map_err(redis_down)?;
    Ok(())
}

/// One login session as its owner may see it (the personal export): never the token digest.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SessionInfo {
    /// The family id (the part of the cookie before the dot).
    pub key: Uuid,
    pub remember_me: bool,
    /// Ended by logout, reuse of a rotated token, or a password change.
    pub revoked: bool,
    /// When the login happened (sessions opened before this was recorded: null).
    #[serde(with = "time::serde::rfc3339::option")]
    pub opened_at: Option<time::OffsetDateTime>,
    /// When it ends unless refreshed before.
    #[serde(with = "time::serde::rfc3339::option")]
    pub expires_at: Option<time::OffsetDateTime>,
}

/// The user's sessions still known to Redis (the per-user index of families).
pub async fn sessions_of(state: &AppState, user: Uuid) -> Result<Vec<SessionInfo>, AppError> {
    let mut conn = state.redis().get().await.map_err(redis_down)?;
    let families: Vec<String> = redis::cmd("SMEMBERS")
        .arg(user_families_key(state, user))
        .query_async(&mut conn)
        .await
        .map_err(redis_down)?;
    let now = time::OffsetDateTime::now_utc();
    let mut sessions = Vec::new();
    for family in families.iter().filter_map(|f| Uuid::parse_str(f).ok()) {
        let key = family_key(state, family);
        let (fields, ttl): (Vec<Option<String>>, i64) = redis::pipe()
            .cmd("HMGET")
            .arg(&key)
            .arg(&["user", "remember", "revoked", "opened"])
            .cmd("TTL")
            .arg(&key)
            .query_async(&mut conn)
            .await
            .map_err(redis_down)?;
        // Only a family that exists and is this user's (the index may name a vanished one).
        if fields.first().cloned().flatten() != Some(user.to_string()) {
            continue;
        }
        let field = |i: usize| fields.get(i).cloned().flatten();
        sessions.push(SessionInfo {
            key: family,
            remember_me: field(1).as_deref() == Some("1"),
            revoked: field(2).as_deref() == Some("1"),
            opened_at: field(3)
                .and_then(|t| t.parse::<i64>().ok())
                .and_then(|t| time::OffsetDateTime::from_unix_timestamp(t).ok()),
            expires_at: (ttl > 0).then(|| now + time::Duration::seconds(ttl)),
        });
    }
    sessions.sort_by_key(|s| s.opened_at);
    Ok(sessions)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookie_values_round_trip_and_garbage_is_no_token() {
        let token = RefreshToken::fresh(Uuid::new_v4());
        assert_eq!(
            RefreshToken::parse(&token.to_cookie_value()),
            Some(token.clone())
        );
        assert!(RefreshToken::parse("").is_none());
        assert!(RefreshToken::parse("not-a-uuid.abc").is_none());
        let short = format!("{}.abc", token.family);
        assert!(RefreshToken::parse(&short).is_none());
        let bad = format!("{}.{}", token.family, "!".repeat(43));
        assert!(RefreshToken::parse(&bad).is_none());
        assert!(!format!("{token:?}").contains(&token.secret));
    }
}
