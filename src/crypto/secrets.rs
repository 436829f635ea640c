//! Random secrets and their stored form. Every secret the service hands out (API keys, refresh
//! tokens, e-mail tokens, CSRF values, OAuth state) is 32 random bytes, URL-safe Base64; only a
//! SHA-256 digest is ever stored, and digests are compared in constant time.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rand::Rng;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// Bytes of entropy in every generated secret.
pub const SECRET_BYTES: usize = 32;

/// A fresh random secret, URL-safe Base64 without padding (43 characters).
pub fn random_secret() -> String {
    let mut bytes = [0u8; SECRET_BYTES];
    rand::rng().fill_bytes(&mut bytes);
    URL_SAFE_NO_PAD.encode(bytes)
}

/// The SHA-256 digest of a secret: what the database and Redis keep instead of the secret.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct SecretHash([u8; 32]);

impl SecretHash {
    pub fn of(secret: &str) -> Self {
        Self(Sha256::digest(secret.as_bytes()).into())
    }

    /// Reads a stored digest; anything but 32 bytes is not one.
    pub fn from_bytes(bytes: &[u8]) -> Option<Self> {
        <[u8; 32]>::try_from(bytes).ok().map(Self)
    }

    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    pub fn to_hex(self) -> String {
        hex::encode(self.0)
    }

    /// Constant-time equality: the time taken says nothing about where two digests differ.
    pub fn matches(&self, other: &SecretHash) -> bool {
        self.0.ct_eq(&other.0).into()
    }
}

impl std::fmt::Debug for SecretHash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretHash(…)")
    }
}

/// Constant-time comparison of two presented strings (CSRF header against cookie).
pub fn equal_secrets(a: &str, b: &str) -> bool {
    SecretHash::of(a).matches(&SecretHash::of(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_long_random_and_url_safe() {
        let a = random_secret();
        let b = random_secret();
        assert_eq!(a.len(), 43);
        assert_ne!(a, b);
        assert!(
            a.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        );
    }

    #[test]
    fn hashes_compare_by_content() {
        let h = SecretHash::of("abc");
        assert!(h.matches(&SecretHash::of("abc")));
        assert!(!h.matches(&SecretHash::of("abd")));
        assert_eq!(SecretHash::from_bytes(h.as_bytes()), Some(h));
        assert!(SecretHash::from_bytes(&[1, 2, 3]).is_none());
        assert!(equal_secrets("x", "x"));
        assert!(!equal_secrets("x", "y"));
    }
}
