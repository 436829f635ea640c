//! Access tokens: JWT, HS256 only, with the user id, `exp`, `iat`, `jti` and the account's token
//! generation (`gen`). Any other algorithm, `alg: none` included, is refused by the decoder.

use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation, decode, encode};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

/// Seconds of clock skew accepted on `exp`/`iat` between replicas.
const LEEWAY_SECONDS: u64 = 5;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct AccessClaims {
    pub sub: Uuid,
    pub exp: i64,
    pub iat: i64,
    pub jti: Uuid,
    /// The account's token generation when issued; a later logout-all makes it stale.
    pub r#gen: i32,
}

#[derive(Clone)]
pub struct JwtKeys {
    encoding: EncodingKey,
    decoding: DecodingKey,
    lifetime_seconds: i64,
}

impl std::fmt::Debug for JwtKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JwtKeys(***)")
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssuedToken {
    pub token: String,
    pub expires_in: i64,
}

impl JwtKeys {
    pub fn new(secret: &str, lifetime_seconds: i64) -> Self {
        Self {
            encoding: EncodingKey::from_secret(secret.as_bytes()),
            decoding: DecodingKey::from_secret(secret.as_bytes()),
            lifetime_seconds,
        }
    }

    pub fn issue(&self, user: Uuid, generation: i32) -> Result<IssuedToken, String> {
        let now = OffsetDateTime::now_utc().unix_timestamp();
        let claims = AccessClaims {
            sub: user,
            exp: now + self.lifetime_seconds,
            iat: now,
            jti: Uuid::new_v4(),
            r#gen: generation,
        };
        let token = encode(&Header::new(Algorithm::HS256), &claims, &self.encoding)
            .map_err(|e| format!("signing an access token failed: {e}"))?;
        Ok(IssuedToken {
            token,
            expires_in: self.lifetime_seconds,
        })
    }

    /// The claims of a valid token; `None` for anything expired, tampered, of another
    /// algorithm, or not a JWT at all.
    pub fn verify(&self, token: &str) -> Option<AccessClaims> {
        let mut validation = Validation::new(Algorithm::HS256);
        validation.leeway = LEEWAY_SECONDS;
        validation.set_required_spec_claims(&["exp", "iat", "sub"]);
        validation.validate_exp = true;
        let claims = decode::<AccessClaims>(token, &self.decoding, &validation)
            .ok()?
            .claims;
        // A token from the future (beyond the leeway) was not issued by this service's clock.
        let now = OffsetDateTime::now_utc().unix_timestamp();
        (claims.iat <= now + LEEWAY_SECONDS as i64).then_some(claims)
    }
}

/// Cheap shape test: three dot-separated parts, as opposed to an API key.
pub fn looks_like_jwt(token: &str) -> bool {
    token.split('.').count() == 3
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;

    const SECRET: &str = "unit-test-secret-0123456789abcdef0123";

    #[test]
    fn issued_tokens_verify_and_carry_the_claims() {
        let keys = JwtKeys::new(SECRET, 900);
        let user = Uuid::new_v4();
        let issued = keys.issue(user, 3).expect("issue");
        assert_eq!(issued.expires_in, 900);
        let claims = keys.verify(&issued.token).expect("valid");
        assert_eq!(claims.sub, user);
        assert_eq!(claims.r#gen, 3);
        assert_eq!(claims.exp - claims.iat, 900);
    }

    #[test]
    fn foreign_tampered_expired_and_unsigned_tokens_are_refused() {
        let keys = JwtKeys::new(SECRET, 900);
        let other = JwtKeys::new("another-secret-0123456789abcdef012345", 900);
        let token = keys.issue(Uuid::new_v4(), 0).expect("issue").token;
        assert!(other.verify(&token).is_none(), "other key");

        let mut parts: Vec<String> = token.split('.').map(str::to_owned).collect();
        let payload = URL_SAFE_NO_PAD.decode(&parts[1]).expect("b64");
        let mut json: serde_json::Value = serde_json::from_slice(&payload).expect("json");
        json["sub"] = serde_json::json!(Uuid::new_v4());
        parts[1] = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&json).expect("ser"));
        assert!(keys.verify(&parts.join(".")).is_none(), "tampered payload");

        let none_header = URL_SAFE_NO_PAD.encode(br#"{"alg":"none","typ":"JWT"}"#);
        let unsigned = format!("{none_header}.{}.", parts[1]);
        assert!(keys.verify(&unsigned).is_none(), "alg none");

        let expired = JwtKeys::new(SECRET, -60)
            .issue(Uuid::new_v4(), 0)
            .expect("issue");
        assert!(keys.verify(&expired.token).is_none(), "expired");
        assert!(keys.verify("garbage").is_none());
        assert!(keys.verify("a.b.c").is_none());
    }
}
