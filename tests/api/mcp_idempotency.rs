//! Write tools through the dispatcher: dry runs write nothing, an idempotency key replays the
//! first result (same account, tenant and tool) for 24 hours, refuses other arguments, never
//! replays across tenants, and two concurrent calls with one key execute once. Every call
//! leaves one audit row with its status. The write tool here is
//! `assign_species_phase_sequence` on a species each test creates (the catalogue is global).

use std::path::Path;
use std::time::{Duration, Instant};

use kultiva::catalog::seed::SeedSet;
use kultiva::catalog::seed::load::load;
use serde_json::{Value, json};

use crate::support::{TestApp, TestUser};

const TOOL: &str = "assign_species_phase_sequence";

async fn app() -> TestApp {
    let app = TestApp::full_env(&[("MCP_SERVER_ENABLED", "true")]).await;
    let set =
        SeedSet::from_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/catalog"))
            .expect("fixture files");
    load(&app.state, &set).await.expect("fixture seed loads");
    app
}

async fn json_of(res: reqwest::Response) -> Value {
    res.json().await.expect("json body")
}

/// A fresh species (so parallel tests never share a binding) and the keys of two sequences.
async fn species_and_sequences(app: &TestApp) -> (String, String, String) {
    let admin = app.platform_admin().await;
    let bearer = admin.bearer();
    let family = json_of(
        app.rest_auth(Some(&bearer))
            .get("/api/v1/botanical-families?q=mockaceae")
            .await,
    )
    .await;
    // Twelve random letters: dropping the digits of a hex id left few enough letters to
    // collide with species of earlier runs (409).
    let name = format!("Idempotus {}", crate::catalog::letters());
    let res = app
        .rest_auth(Some(&bearer))
        .post(
            "/api/v1/species",
            &json!({"scientific_name": name, "family_key": family["items"][0]["key"]}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 201, "species created");
    let species = json_of(res).await["key"].as_str().expect("key").to_owned();
    let mut sequences = Vec::new();
    for q in ["fern_spore", "geophyte_fine"] {
        let found = json_of(
            app.rest_auth(Some(&bearer))
                .get(&format!("/api/v1/phase-sequences?q={q}"))
                .await,
        )
        .await;
        sequences.push(
            found["items"][0]["key"]
                .as_str()
                .expect("sequence")
                .to_owned(),
        );
    }
    (species, sequences[0].clone(), sequences[1].clone())
}

async fn call_tool(app: &TestApp, key: &str, args: &Value) -> (u16, Value) {
    let res = app
        .client
        .post(app.url(&format!("/api/v1/mcp/tools/{TOOL}")))
        .header("x-api-key", key)
        .json(args)
        .send()
        .await
        .expect("request sent");
    let status = res.status().as_u16();
    (status, json_of(res).await)
}

/// The sequence the species is bound to now (`None`: selected by the rules, not bound).
async fn bound_sequence(app: &TestApp, key: &str, species: &str) -> Option<String> {
    let res = app
        .client
        .get(app.url(&format!("/api/v1/species/{species}/phase-sequence")))
        .header("x-api-key", key)
        .send()
        .await
        .expect("request sent");
    let body = json_of(res).await;
    (body["source"] == "bound").then(|| {
        body["sequence"]["key"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    })
}

/// Waits (bounded) until the account has `n` audit rows of the tool; returns their statuses,
/// oldest first.
async fn audit_statuses(app: &TestApp, user: &TestUser, n: usize) -> Vec<String> {
    let account = user.id();
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let rows: Vec<String> = sqlx::query_scalar(
            "SELECT status FROM platform.mcp_audit_log WHERE account_id = $1 AND tool_name = $2
             ORDER BY id",
        )
        .bind(account)
        .bind(TOOL)
        .fetch_all(app.state.platform_pool())
        .await
        .expect("audit rows");
        if rows.len() >= n || Instant::now() > deadline {
            return rows;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_dry_run_computes_the_result_and_writes_nothing() {
    let app = app().await;
    let (species, fern, _) = species_and_sequences(&app).await;
    let admin = app.platform_admin().await;
    let key = app.api_key(&admin, None).await;
    let (status, body) = call_tool(
        &app,
        &key,
        &json!({"species_key": species, "sequence_key": fern, "dry_run": true}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["dry_run"], json!(true));
    assert_eq!(body["idempotent_replay"], json!(false));
    assert_eq!(
        body["data"]["sequence"]["key"],
        json!(fern),
        "the would-be result: {body}"
    );
    assert_eq!(
        bound_sequence(&app, &key, &species).await,
        None,
        "nothing was bound"
    );
    // A dry run with a key does not use it up: the real call with that key executes.
    let args = json!({"species_key": species, "sequence_key": fern, "idempotency_key": "k-dry"});
    let (_, dry) = call_tool(
        &app,
        &key,
        &json!({"species_key": species, "sequence_key": fern,
        "idempotency_key": "k-dry", "dry_run": true}),
    )
    .await;
    assert_eq!(dry["dry_run"], json!(true));
    let (status, real) = call_tool(&app, &key, &args).await;
    assert_eq!(status, 200, "{real}");
    assert_eq!(
        real["idempotent_replay"],
        json!(false),
        "executed, not replayed"
    );
    assert_eq!(real["dry_run"], json!(false));
    assert_eq!(bound_sequence(&app, &key, &species).await, Some(fern));
    assert_eq!(
        audit_statuses(&app, &admin, 3).await,
        ["dry_run", "dry_run", "ok"]
    );
}

#[tokio::test]
async fn a_key_replays_the_first_result_and_refuses_other_arguments() {
    let app = app().await;
    let (species, fern, geophyte) = species_and_sequences(&app).await;
    let admin = app.platform_admin().await;
    let key = app.api_key(&admin, None).await;
    let first_args =
        json!({"species_key": species, "sequence_key": fern, "idempotency_key": "order-1"});
    let (status, first) = call_tool(&app, &key, &first_args).await;
    assert_eq!(status, 200, "{first}");
    assert_eq!(first["idempotency_key"], json!("order-1"));
    assert_eq!(first["idempotent_replay"], json!(false));

    // The species is bound to another sequence meanwhile (a call without a key)…
    let (status, other) = call_tool(
        &app,
        &key,
        &json!({"species_key": species, "sequence_key": geophyte}),
    )
    .await;
    assert_eq!(status, 200, "{other}");
    // …the replay returns the ORIGINAL result and executes nothing.
    let (status, again) = call_tool(&app, &key, &first_args).await;
    assert_eq!(status, 200, "{again}");
    assert_eq!(again["idempotent_replay"], json!(true));
    assert_eq!(again["data"], first["data"]);
    assert_eq!(
        bound_sequence(&app, &key, &species).await,
        Some(geophyte.clone()),
        "no second write"
    );

    // The same key with other arguments is refused and changes nothing.
    let (status, refused) = call_tool(
        &app,
        &key,
        &json!({"species_key": species, "sequence_key": geophyte, "idempotency_key": "order-1"}),
    )
    .await;
    assert_eq!(status, 422, "{refused}");
    assert_eq!(refused["error_code"], json!("validation.error"));
    assert_eq!(refused["details"][0]["field"], json!("idempotency_key"));
    assert_eq!(bound_sequence(&app, &key, &species).await, Some(geophyte));

    // Another account's identical call is not a replay of this one.
    let stranger = app.platform_admin().await;
    let stranger_key = app.api_key(&stranger, None).await;
    let (status, theirs) = call_tool(&app, &stranger_key, &first_args).await;
    assert_eq!(status, 200, "{theirs}");
    assert_eq!(theirs["idempotent_replay"], json!(false));

    assert_eq!(
        audit_statuses(&app, &admin, 4).await,
        ["ok", "ok", "replay", "error"]
    );
}

/// The record's scope, at the level of the records themselves: the only write tool so far
/// binds the platform garden, so "another garden" and "another tool" are taken here directly.
#[tokio::test]
async fn a_key_never_replays_across_tenants_tools_or_accounts() {
    use kultiva::mcp::idempotency::{Begin, Scope, begin};
    let app = TestApp::spawn().await;
    let state = &app.state;
    let account = uuid::Uuid::new_v4();
    let (garden_a, garden_b) = (Some(uuid::Uuid::new_v4()), Some(uuid::Uuid::new_v4()));
    let scope = |account, tenant, tool| Scope {
        account,
        tenant,
        tool,
        key: "same-key",
    };
    let first = scope(account, garden_a, "tool_x");
    let env: serde_json::Map<String, Value> =
        json!({"summary": "done", "data": {"n": 1}, "links": []})
            .as_object()
            .cloned()
            .expect("object");
    match begin(state, &first, "hash-1").await.expect("begin") {
        Begin::Execute(claim) => claim.finish(state, &env).await,
        Begin::Replay(_) => panic!("a fresh key replayed"),
    }
    match begin(state, &first, "hash-1").await.expect("begin") {
        Begin::Replay(stored) => assert_eq!(stored, env),
        Begin::Execute(_) => panic!("the same call executed twice"),
    }
    for (other, what) in [
        (scope(account, garden_b, "tool_x"), "another garden"),
        (scope(account, None, "tool_x"), "no garden"),
        (scope(account, garden_a, "tool_y"), "another tool"),
        (
            scope(uuid::Uuid::new_v4(), garden_a, "tool_x"),
            "another account",
        ),
    ] {
        match begin(state, &other, "hash-1").await.expect("begin") {
            Begin::Execute(claim) => claim.release(state).await,
            Begin::Replay(_) => panic!("replayed for {what}"),
        }
    }
    // Other arguments under the same key: refused.
    let refused = match begin(state, &first, "hash-2").await {
        Err(err) => err,
        Ok(_) => panic!("other arguments accepted"),
    };
    assert_eq!(refused.code.as_str(), "validation.error");
    // A released claim (a failed call) frees the key for a corrected retry.
    let retry = scope(account, garden_b, "tool_z");
    match begin(state, &retry, "hash-1").await.expect("begin") {
        Begin::Execute(claim) => claim.release(state).await,
        Begin::Replay(_) => panic!("fresh key replayed"),
    }
    assert!(matches!(
        begin(state, &retry, "hash-3").await.expect("begin"),
        Begin::Execute(_)
    ));
}

#[tokio::test]
async fn concurrent_calls_with_one_key_execute_once() {
    let app = app().await;
    let (species, fern, _) = species_and_sequences(&app).await;
    let admin = app.platform_admin().await;
    let key = app.api_key(&admin, None).await;
    let args = json!({"species_key": species, "sequence_key": fern, "idempotency_key": "race"});
    let calls = (0..8).map(|_| call_tool(&app, &key, &args));
    let results = futures_util::future::join_all(calls).await;
    let mut replays = 0;
    for (status, body) in &results {
        assert_eq!(*status, 200, "{body}");
        assert_eq!(body["data"], results[0].1["data"]);
        if body["idempotent_replay"] == json!(true) {
            replays += 1;
        }
    }
    assert_eq!(replays, 7, "exactly one call executed");
    let statuses = audit_statuses(&app, &admin, 8).await;
    assert_eq!(
        statuses.iter().filter(|s| *s == "ok").count(),
        1,
        "{statuses:?}"
    );
    assert_eq!(
        statuses.iter().filter(|s| *s == "replay").count(),
        7,
        "{statuses:?}"
    );
}
