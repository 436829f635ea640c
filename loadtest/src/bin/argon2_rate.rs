//! The box's raw password-checking ceiling: argon2id verifications per second with the service's
//! parameters (m=19456 KiB, t=2, p=1, RustCrypto `argon2` 0.6 as in the service), one thread
//! per core, nothing else in the process. A verification computes one full argon2 hash, the
//! work a login does, so this is the rate logins can at best reach on this machine.
//!
//! Usage: `argon2_rate [SECONDS] [THREADS]` (defaults: 20, the number of cores). Prints one
//! JSON object: `{"threads":2,"seconds":20.0,"hashes":1640,"per_second":82.0,"ms_per_hash":24.4}`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use argon2::password_hash::{PasswordHasher, PasswordVerifier};
use argon2::{Algorithm, Argon2, Params, Version};

const PASSWORD: &[u8] = b"benchmark password 0123456789";

fn argon2() -> Result<Argon2<'static>, String> {
    let params = Params::new(19_456, 2, 1, None).map_err(|e| e.to_string())?;
    Ok(Argon2::new(Algorithm::Argon2id, Version::V0x13, params))
}

fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let seconds: u64 = args
        .next()
        .map(|a| a.trim_end_matches('s').parse())
        .transpose()
        .map_err(|e| format!("SECONDS: {e}"))?
        .unwrap_or(20);
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let threads: usize = args
        .next()
        .map(|a| a.parse())
        .transpose()
        .map_err(|e| format!("THREADS: {e}"))?
        .unwrap_or(cores)
        .max(1);

    let stored = argon2()?
        .hash_password(PASSWORD)
        .map_err(|e| e.to_string())?
        .to_string();
    let stop = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    let workers: Vec<_> = (0..threads)
        .map(|_| {
            let stop = Arc::clone(&stop);
            let stored = stored.clone();
            std::thread::spawn(move || -> Result<u64, String> {
                let argon2 = argon2()?;
                let mut done = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    // As the service does it: parse the stored PHC string, hash, compare.
                    argon2
                        .verify_password(PASSWORD, stored.as_str())
                        .map_err(|e| e.to_string())?;
                    done += 1;
                }
                Ok(done)
            })
        })
        .collect();
    std::thread::sleep(Duration::from_secs(seconds));
    stop.store(true, Ordering::Relaxed);
    let mut hashes = 0u64;
    for worker in workers {
        hashes += worker
            .join()
            .map_err(|_| "a hashing thread panicked".to_owned())??;
    }
    // Counted until the last thread finished its last hash.
    let elapsed = started.elapsed().as_secs_f64();
    let per_second = hashes as f64 / elapsed;
    println!(
        "{}",
        serde_json::json!({
            "threads": threads,
            "seconds": (elapsed * 100.0).round() / 100.0,
            "hashes": hashes,
            "per_second": (per_second * 10.0).round() / 10.0,
            "ms_per_hash": (threads as f64 * 1000.0 / per_second * 10.0).round() / 10.0,
        })
    );
    Ok(())
}
