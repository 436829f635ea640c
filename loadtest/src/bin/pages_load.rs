//! Web page load (goose): every request is one page under `/app`, read with a web session
//! cookie, as a browser would (full HTML body, connection kept alive). `PAGES_PATH` is the page
//! (e.g. `/app/g/{slug}` for Today), `PAGES_COOKIES` a file with one `kv_session` value per
//! line (one session per goose user, round robin), `PAGES_SUMMARY` where the one-object JSON
//! summary goes. A non-200 answer is a failure. goose's own flags set host, users and duration,
//! e.g. `PAGES_PATH=/app/g/x PAGES_COOKIES=c.txt pages_load --host http://127.0.0.1:8080 -u 32 -r 32 -t 15s`.

use std::sync::OnceLock;

use goose::prelude::*;

static PATH: OnceLock<String> = OnceLock::new();
static COOKIES: OnceLock<Vec<String>> = OnceLock::new();

async fn page(user: &mut GooseUser) -> TransactionResult {
    let path = PATH.get().map_or("/app", String::as_str);
    let cookies = COOKIES.get().map(Vec::as_slice).unwrap_or_default();
    // Each goose user keeps its own session, as 32 browsers would.
    let cookie = cookies
        .get(user.weighted_users_index % cookies.len().max(1))
        .map(|c| format!("kv_session={c}"))
        .unwrap_or_default();
    kultiva_loadtest::send(user, GooseMethod::Get, path, |b| {
        b.header("cookie", cookie).header("accept", "text/html")
    })
    .await
}

#[tokio::main]
async fn main() -> Result<(), GooseError> {
    let _ = PATH.set(std::env::var("PAGES_PATH").unwrap_or_else(|_| "/app".into()));
    let cookies = std::env::var("PAGES_COOKIES")
        .ok()
        .and_then(|p| std::fs::read_to_string(p).ok())
        .unwrap_or_default()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect();
    let _ = COOKIES.set(cookies);
    let metrics = GooseAttack::initialize()?
        .register_scenario(
            scenario!("page").register_transaction(transaction!(page).set_name("page")),
        )
        .execute()
        .await?;
    let summary = kultiva_loadtest::summary(&metrics, &[]);
    if let Ok(path) = std::env::var("PAGES_SUMMARY") {
        let _ = std::fs::write(path, summary.to_string());
    }
    println!("{summary}");
    Ok(())
}
