//! The unsubscribe token: `<user id>.<base64url HMAC-SHA256>` keyed with the service's secret
//! (`JWT_SECRET_KEY`) over a purpose label and the user id. It never expires (an old mail's
//! link still works) and does one thing: turn the digest off.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;
use uuid::Uuid;

const PURPOSE: &[u8] = b"kultiva:digest-unsubscribe:v1:";

fn mac(secret: &[u8], user: Uuid) -> Option<Hmac<Sha256>> {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).ok()?;
    mac.update(PURPOSE);
    mac.update(user.as_bytes());
    Some(mac)
}

pub fn issue(secret: &[u8], user: Uuid) -> String {
    let tag = mac(secret, user)
        .map(|m| URL_SAFE_NO_PAD.encode(m.finalize().into_bytes()))
        .unwrap_or_default();
    format!("{}.{tag}", user.simple())
}

/// The user a token names, if its tag is right (checked in constant time).
pub fn verify(secret: &[u8], token: &str) -> Option<Uuid> {
    let (id, tag) = token.split_once('.')?;
    if id.len() != 32 || tag.len() > 64 {
        return None;
    }
    let user = Uuid::try_parse(id).ok()?;
    let tag = URL_SAFE_NO_PAD.decode(tag).ok()?;
    mac(secret, user)?.verify_slice(&tag).ok()?;
    Some(user)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_verify_only_unchanged_and_with_the_secret() {
        let user = Uuid::now_v7();
        let token = issue(b"secret-one", user);
        assert_eq!(verify(b"secret-one", &token), Some(user));
        assert_eq!(verify(b"secret-two", &token), None);
        let other = Uuid::now_v7();
        let forged = format!(
            "{}.{}",
            other.simple(),
            token.split_once('.').map(|t| t.1).unwrap_or("")
        );
        assert_eq!(verify(b"secret-one", &forged), None);
        assert_eq!(verify(b"secret-one", "garbage"), None);
        assert_eq!(verify(b"secret-one", ""), None);
    }
}
