//! The application server's VAPID key (RFC 8292): the P-256 key a browser subscribes with
//! (its public half is the `applicationServerKey`) and the ES256 token in each push request's
//! `Authorization: vapid t=…, k=…` header.
//!
//! The key comes from `VAPID_PRIVATE_KEY`. Unset, it is derived from `JWT_SECRET_KEY` (an
//! HMAC-SHA256 under a fixed label): every replica sharing the secret, and every restart, has
//! the same key, so subscriptions made in development and tests keep working. Production sets
//! its own key: rotating `JWT_SECRET_KEY` would otherwise invalidate every subscription.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use p256::ecdsa::signature::Signer as _;
use p256::ecdsa::{Signature, SigningKey};
use p256::elliptic_curve::sec1::ToEncodedPoint as _;
use sha2::Sha256;

use crate::config::Config;
use crate::error::AppError;

const DERIVE_LABEL: &[u8] = b"kultiva:web-push:vapid-key:v1:";
/// How long a token is valid; RFC 8292 allows at most 24 hours.
pub const TOKEN_SECONDS: i64 = 12 * 60 * 60;

pub struct VapidKey {
    signing: SigningKey,
    public: String,
}

impl VapidKey {
    pub fn from_config(config: &Config) -> Result<Self, AppError> {
        let secret = match &config.vapid_private_key {
            Some(raw) => URL_SAFE_NO_PAD
                .decode(raw.expose().trim().trim_end_matches('='))
                .ok()
                .and_then(|b| p256::SecretKey::from_slice(&b).ok())
                // Config::from_env checked the value; this is a second line, not a path.
                .ok_or_else(|| AppError::internal("VAPID_PRIVATE_KEY is not a P-256 key"))?,
            None => derived(config.jwt_secret_key.expose().as_bytes())?,
        };
        let public = URL_SAFE_NO_PAD.encode(
            secret
                .public_key()
                .as_affine()
                .to_encoded_point(false)
                .as_bytes(),
        );
        Ok(Self {
            signing: SigningKey::from(secret),
            public,
        })
    }

    /// The public key as a browser's `pushManager.subscribe` takes it: the uncompressed point
    /// (65 bytes) in base64url without padding.
    pub fn public_key(&self) -> &str {
        &self.public
    }

    /// `vapid t=<ES256 JWT>, k=<public key>` for a push service at `origin`
    /// (`scheme://host[:port]`), valid `TOKEN_SECONDS` from `now` (Unix seconds).
    pub fn authorization(&self, origin: &str, subject: &str, now: i64) -> String {
        let header = URL_SAFE_NO_PAD.encode(br#"{"typ":"JWT","alg":"ES256"}"#);
        let claims = serde_json::json!({
            "aud": origin,
            "exp": now + TOKEN_SECONDS,
            "sub": subject,
        });
        let claims = URL_SAFE_NO_PAD.encode(claims.to_string());
        let signing_input = format!("{header}.{claims}");
        // ES256 as JWS has it: the signature is r || s (64 bytes), not DER.
        let signature: Signature = self.signing.sign(signing_input.as_bytes());
        let signature = URL_SAFE_NO_PAD.encode(signature.to_bytes());
        format!("vapid t={signing_input}.{signature}, k={}", self.public)
    }
}

/// A key from the service secret; a counter picks the next candidate in the (2^-32 likely)
/// case that a digest is not a valid scalar.
fn derived(secret: &[u8]) -> Result<p256::SecretKey, AppError> {
    for counter in 0u8..=255 {
        let mut mac = Hmac::<Sha256>::new_from_slice(secret)
            .map_err(|_| AppError::internal("VAPID key derivation"))?;
        mac.update(DERIVE_LABEL);
        mac.update(&[counter]);
        let digest = mac.finalize().into_bytes();
        if let Ok(key) = p256::SecretKey::from_slice(digest.as_slice()) {
            return Ok(key);
        }
    }
    Err(AppError::internal("VAPID key derivation found no key"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derived_keys_are_stable_and_differ_by_secret() {
        let a = derived(b"one secret").map(|k| k.to_bytes());
        let b = derived(b"one secret").map(|k| k.to_bytes());
        let c = derived(b"another").map(|k| k.to_bytes());
        assert!(matches!((&a, &b), (Ok(x), Ok(y)) if x == y));
        assert!(matches!((&a, &c), (Ok(x), Ok(y)) if x != y));
    }
}
