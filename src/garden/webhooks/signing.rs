//! Standard Webhooks signatures: `v1,` + base64 of HMAC-SHA256 over `id.timestamp.body`, keyed
//! with the secret's raw bytes (the part after `whsec_`, base64-decoded).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, KeyInit, Mac};
use rand::Rng;
use sha2::Sha256;

/// The prefix of a shown secret.
pub const SECRET_PREFIX: &str = "whsec_";
/// Random bytes in a new secret.
pub const SECRET_BYTES: usize = 24;

/// A new raw secret.
pub fn new_secret() -> Vec<u8> {
    let mut raw = vec![0u8; SECRET_BYTES];
    rand::rng().fill_bytes(&mut raw);
    raw
}

/// The secret as shown once: `whsec_<base64>`.
pub fn show_secret(raw: &[u8]) -> String {
    format!("{SECRET_PREFIX}{}", STANDARD.encode(raw))
}

/// The `webhook-signature` value of one message.
pub fn sign(secret: &[u8], id: &str, timestamp: i64, body: &[u8]) -> String {
    // HMAC takes a key of any length; new_from_slice never fails for it.
    let mut mac = match Hmac::<Sha256>::new_from_slice(secret) {
        Ok(mac) => mac,
        Err(_) => return String::new(),
    };
    mac.update(id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signature_of_the_standard_webhooks_example() {
        // The example of the Standard Webhooks specification's reference libraries.
        let secret = STANDARD
            .decode("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
            .expect("base64");
        let sig = sign(
            &secret,
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            1614265330,
            br#"{"test": 2432232314}"#,
        );
        assert_eq!(sig, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    }

    #[test]
    fn secrets_are_prefixed_base64() {
        let raw = new_secret();
        assert_eq!(raw.len(), SECRET_BYTES);
        let shown = show_secret(&raw);
        let back = STANDARD
            .decode(shown.strip_prefix(SECRET_PREFIX).expect("prefix"))
            .expect("base64");
        assert_eq!(back, raw);
    }
}
