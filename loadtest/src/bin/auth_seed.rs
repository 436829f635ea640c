//! Accounts for loadtest/auth, made through the public API of a running full-mode service:
//! register N users, log each in once (access token), and give each an API key.
//!
//! Usage: `auth_seed <BASE_URL> <N> <OUT_FILE>`; `AUTH_SEED_PASSWORD` sets the password
//! (default below). Writes one line per account, tab-separated:
//! `email  password  access_token  api_key  user_id`. Traffic goes to BASE_URL only.

use std::fmt::Write as _;
use std::time::Duration;

use serde_json::{Value, json};

const DEFAULT_PASSWORD: &str = "bench-password-0123456789";

async fn send(request: reqwest::RequestBuilder, want: u16, what: &str) -> Result<Value, String> {
    let response = request.send().await.map_err(|e| format!("{what}: {e}"))?;
    let status = response.status().as_u16();
    let body = response.text().await.map_err(|e| format!("{what}: {e}"))?;
    if status != want {
        return Err(format!("{what}: HTTP {status}: {body}"));
    }
    serde_json::from_str(&body).map_err(|e| format!("{what}: {e}"))
}

fn text(value: &Value, field: &str, what: &str) -> Result<String, String> {
    value
        .get(field)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| format!("{what}: no {field} in the answer"))
}

#[tokio::main]
async fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: auth_seed <BASE_URL> <N> <OUT_FILE>";
    let base = args.next().ok_or(usage)?;
    let n: usize = args
        .next()
        .and_then(|a| a.parse().ok())
        .filter(|n| (1..=10_000).contains(n))
        .ok_or(usage)?;
    let out = args.next().ok_or(usage)?;
    let password =
        std::env::var("AUTH_SEED_PASSWORD").unwrap_or_else(|_| DEFAULT_PASSWORD.to_owned());
    kultiva::tls::install_crypto_provider();
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .map_err(|e| e.to_string())?;
    let run = format!("{:x}", std::process::id());

    let mut lines = String::new();
    for i in 0..n {
        let email = format!("bench-{run}-{i}@bench.example.org");
        let user = send(
            client
                .post(format!("{base}/api/v1/auth/register"))
                .json(&json!({"email": email, "password": password, "display_name": format!("Bench {i}")})),
            201,
            "register",
        )
        .await?;
        let user_id = text(&user, "key", "register")?;
        let login = send(
            client
                .post(format!("{base}/api/v1/auth/login"))
                .json(&json!({"email": email, "password": password})),
            200,
            "login",
        )
        .await?;
        let token = text(&login, "access_token", "login")?;
        let key = send(
            client
                .post(format!("{base}/api/v1/auth/api-keys"))
                .bearer_auth(&token)
                .json(&json!({"label": "loadtest/auth"})),
            201,
            "create API key",
        )
        .await?;
        let raw_key = text(&key, "raw_key", "create API key")?;
        let _ = writeln!(lines, "{email}\t{password}\t{token}\t{raw_key}\t{user_id}");
    }
    std::fs::write(&out, lines).map_err(|e| format!("{out}: {e}"))?;
    Ok(())
}
