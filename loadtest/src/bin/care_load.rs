//! Due-care load (goose) on a garden with thousands of plants: every request is the tool
//! `get_due_care_tasks` on its REST face (`POST /api/v1/mcp/tools/get_due_care_tasks`, API key
//! scoped to the garden), `urgency` from `CARE_URGENCY` (default actionable). A non-200 answer
//! is a failure. `CARE_KEY` is the API key, `CARE_SUMMARY` where the one-object JSON summary
//! goes; goose's own flags set host, users and duration, e.g.
//! `CARE_KEY=… CARE_SUMMARY=s.json care_load --host http://127.0.0.1:8080 -u 32 -r 32 -t 15s`.

use std::sync::OnceLock;

use goose::prelude::*;
use serde_json::json;

static KEY: OnceLock<String> = OnceLock::new();
static URGENCY: OnceLock<String> = OnceLock::new();

const PATH: &str = "/api/v1/mcp/tools/get_due_care_tasks";

async fn due(user: &mut GooseUser) -> TransactionResult {
    let key = KEY.get().map(String::as_str).unwrap_or_default();
    let urgency = URGENCY.get().map(String::as_str).unwrap_or("actionable");
    kultiva_loadtest::send(user, GooseMethod::Post, PATH, |b| {
        b.header("x-api-key", key)
            .json(&json!({"urgency": urgency}))
    })
    .await
}

#[tokio::main]
async fn main() -> Result<(), GooseError> {
    let _ = KEY.set(std::env::var("CARE_KEY").unwrap_or_default());
    let _ = URGENCY.set(std::env::var("CARE_URGENCY").unwrap_or_else(|_| "actionable".into()));
    let metrics = GooseAttack::initialize()?
        .register_scenario(
            scenario!("get_due_care_tasks")
                .register_transaction(transaction!(due).set_name("get_due_care_tasks")),
        )
        .execute()
        .await?;
    let summary = kultiva_loadtest::summary(&metrics, &[]);
    if let Ok(path) = std::env::var("CARE_SUMMARY") {
        let _ = std::fs::write(path, summary.to_string());
    }
    println!("{summary}");
    Ok(())
}
