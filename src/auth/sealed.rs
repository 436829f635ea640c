//! Secrets the service must read back (not only compare) are stored sealed: as Fernet tokens
//! (AES-128-CBC with HMAC-SHA256, the `fernet` crate) under `FERNET_KEY`. Identity-provider
//! client secrets need `FERNET_KEY`; webhook signing secrets fall back to a key derived from
//! `JWT_SECRET_KEY` when it is unset, so that a copy of the database alone never holds them in
//! clear text in any set-up (production sets `FERNET_KEY`: see the README).

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use crate::config::Config;

const DERIVE_LABEL: &[u8] = b"kultiva:sealed-secrets:fallback-key:v1";

/// The cipher of `FERNET_KEY`, when it is configured.
pub fn configured(config: &Config) -> Option<fernet::Fernet> {
    config
        .fernet_key
        .as_ref()
        .and_then(|key| fernet::Fernet::new(key.expose()))
}

/// The key derived from `JWT_SECRET_KEY` (used when `FERNET_KEY` is unset).
fn derived(config: &Config) -> Option<fernet::Fernet> {
    let mut mac = Hmac::<Sha256>::new_from_slice(config.jwt_secret_key.expose().as_bytes()).ok()?;
    mac.update(DERIVE_LABEL);
    let key = mac.finalize().into_bytes();
    fernet::Fernet::new(&URL_SAFE.encode(key.as_slice()))
}

/// Seals with `FERNET_KEY` when set, else with the derived key; opens with either (so secrets
/// sealed before `FERNET_KEY` was set still open after).
pub fn with_fallback(config: &Config) -> Option<fernet::MultiFernet> {
    let keys: Vec<fernet::Fernet> = [configured(config), derived(config)]
        .into_iter()
        .flatten()
        .collect();
    (!keys.is_empty()).then(|| fernet::MultiFernet::new(keys))
}
