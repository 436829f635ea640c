//! Password hashing: argon2id with the OWASP parameters (19 MiB, 2 passes, 1 lane), always on
//! the blocking pool and never more at once than the machine has cores, so a burst of logins
//! queues instead of starving the async workers or the memory.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use argon2::password_hash::{PasswordHasher, PasswordVerifier};
use argon2::{Algorithm, Argon2, Params, Version};
use tokio::sync::Semaphore;

use crate::error::AppError;

/// The shortest password an account may set (a login checks only the longest).
pub const PASSWORD_MIN_CHARS: usize = 10;
/// The longest password accepted anywhere, so hashing a body costs a bounded amount.
pub const PASSWORD_MAX_CHARS: usize = 128;

/// OWASP Password Storage Cheat Sheet, argon2id option 2: m=19456 KiB, t=2, p=1.
fn argon2() -> Result<Argon2<'static>, argon2::Error> {
    Ok(Argon2::new(
        Algorithm::Argon2id,
        Version::V0x13,
        Params::new(19_456, 2, 1, None)?,
    ))
}

#[derive(Clone, Debug)]
pub struct PasswordHasherPool {
    permits: Arc<Semaphore>,
    /// A real hash of a random password: verifying an unknown account's login against it costs
    /// exactly what a known account costs.
    decoy: Arc<str>,
    /// New hashes computed so far (not verifications): lets a test prove that a request was
    /// refused before any hashing work.
    hashed: Arc<AtomicU64>,
}

impl PasswordHasherPool {
    pub fn new(concurrency: usize) -> Result<Self, String> {
        let decoy = argon2()
            .and_then(|a| {
                a.hash_password(crate::crypto::secrets::random_secret().as_bytes())
                    .map_err(|_| argon2::Error::OutputTooShort)
            })
            .map_err(|e| format!("argon2 setup failed: {e}"))?
            .to_string();
        Ok(Self {
            permits: Arc::new(Semaphore::new(concurrency.max(1))),
            decoy: decoy.into(),
            hashed: Arc::new(AtomicU64::new(0)),
        })
    }

    async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, AppError> {
        let _permit = self
            .permits
            .acquire()
            .await
            .map_err(|_| AppError::internal("password hasher closed"))?;
        tokio::task::spawn_blocking(work)
            .await
            .map_err(|e| AppError::internal(format!("password hashing task failed: {e}")))
    }

    /// How many new hashes this pool has computed.
    pub fn hashes_computed(&self) -> u64 {
        self.hashed.load(Ordering::Relaxed)
    }

    pub async fn hash(&self, password: &str) -> Result<String, AppError> {
        self.hashed.fetch_add(1, Ordering::Relaxed);
        let password = password.to_owned();
        self.run(move || {
            argon2().map_err(|e| e.to_string()).and_then(|a| {
                a.hash_password(password.as_bytes())
                    .map(|h| h.to_string())
                    .map_err(|e| e.to_string())
            })
        })
        .await?
        .map_err(|e| AppError::internal(format!("argon2 hashing failed: {e}")))
    }

    /// True when `password` matches `stored`. `None` (no such account, or no password, as for
    /// service accounts) verifies against the decoy and is always false.
    pub async fn verify(&self, password: &str, stored: Option<&str>) -> Result<bool, AppError> {
        let password = password.to_owned();
        let known = stored.is_some();
        let stored: String = stored.unwrap_or(&self.decoy).to_owned();
        let matched = self
            .run(move || {
                argon2()
                    .map(|a| {
                        a.verify_password(password.as_bytes(), stored.as_str())
                            .is_ok()
                    })
                    .unwrap_or(false)
            })
            .await?;
        Ok(known && matched)
    }
}

/// The length rule of the specification, counted in characters.
pub fn password_problem(password: &str) -> Option<(&'static str, String)> {
    let n = password.chars().count();
    if n < PASSWORD_MIN_CHARS {
        Some((
            "string_too_short",
            format!("password must have at least {PASSWORD_MIN_CHARS} characters"),
        ))
    } else if n > PASSWORD_MAX_CHARS {
        Some((
            "string_too_long",
            format!("password must have at most {PASSWORD_MAX_CHARS} characters"),
        ))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn hashes_verify_and_unknown_accounts_never_match() {
        let pool = PasswordHasherPool::new(2).expect("pool");
        let hash = pool.hash("correct horse battery").await.expect("hash");
        assert!(hash.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"));
        assert!(
            pool.verify("correct horse battery", Some(&hash))
                .await
                .expect("v")
        );
        assert!(
            !pool
                .verify("wrong horse battery", Some(&hash))
                .await
                .expect("v")
        );
        assert!(!pool.verify("correct horse battery", None).await.expect("v"));
        assert!(!pool.verify("x", Some("not a phc string")).await.expect("v"));
    }

    #[test]
    fn length_rule_counts_characters() {
        assert!(password_problem("123456789").is_some());
        assert!(password_problem("1234567890").is_none());
        assert!(password_problem(&"ä".repeat(128)).is_none());
        assert!(password_problem(&"a".repeat(129)).is_some());
    }
}
