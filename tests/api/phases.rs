//! Plant phases: transitions forward, back to a recurring phase and the perennial cycle
//! restart; refusals that change nothing; history with actor; the four phase states (a
//! rebinding of the species shows at once as `unresolved`); two simultaneous transitions.

use serde_json::{Value, json};

use crate::garden::*;
use crate::support::{TestApp, assert_error};

const TOMATO: &str = "Fixtura tomatoides";
const PERENNIAL: &str = "Probus perennis";

async fn transition(app: &TestApp, path: &str, target: &str) -> (u16, Value) {
    post(
        app,
        &format!("{path}/phase-transitions"),
        json!({"target_phase_key": target}),
    )
    .await
}

#[tokio::test]
async fn phases_forward_refusals_and_history() {
    let app = TestApp::spawn().await;
    let t = app.tenant("phases").await;
    let tomato = species(&app, TOMATO).await;
    let ph = phases(&app, &tomato).await;
    assert_eq!(
        ph.len(),
        3,
        "annual_harvest of the fixture: germination, vegetative, ripening"
    );
    let p = plant(&app, &t, json!({"species_key": tomato})).await;
    let path = format!("{}{}", plants_path(&t), key(&p));

    // Forward one step.
    let (s, moved) = transition(&app, &path, &ph[1]).await;
    assert_eq!(s, 200, "{moved}");
    assert_eq!(moved["current_phase_key"], ph[1]);
    assert_eq!(moved["phase"]["cycle_number"], 1);
    assert_eq!(moved["phase"]["day_count"], 0);

    // Refusals: same phase, backward, not in the sequence, unknown body field; nothing changes.
    for (target, field_code) in [
        (ph[1].clone(), "PHASE_TRANSITION_INVALID"),
        (ph[0].clone(), "PHASE_TRANSITION_INVALID"),
        (uuid::Uuid::now_v7().to_string(), "PHASE_TRANSITION_INVALID"),
    ] {
        let res = app
            .post_json(
                &format!("{path}/phase-transitions"),
                &json!({"target_phase_key": target}),
            )
            .await;
        let err = assert_error(res, 422, field_code).await;
        assert_eq!(err["details"][0]["field"], "body.target_phase_key");
    }
    let res = app
        .post_json(
            &format!("{path}/phase-transitions"),
            &json!({"target": ph[2]}),
        )
        .await;
    assert_error(res, 422, "VALIDATION_ERROR").await;
    assert_eq!(count(&app, &t, "plant_phase_history").await, 2);
    let (_, now) = get_json(&app, &path).await;
    assert_eq!(now["current_phase_key"], ph[1]);

    // Forward to the terminal phase; the annual cannot restart.
    let (s, _) = transition(&app, &path, &ph[2]).await;
    assert_eq!(s, 200);
    let (s, _) = transition(&app, &path, &ph[0]).await;
    assert_eq!(s, 422);

    // History: oldest first, closed rows with exit times, the actor, reasons.
    let (s, hist) = get_json(&app, &format!("{path}/phase-history")).await;
    assert_eq!(s, 200);
    assert_eq!(hist["total"], 3);
    let items = hist["items"].as_array().expect("items");
    let keys: Vec<&str> = items
        .iter()
        .filter_map(|h| h["phase_key"].as_str())
        .collect();
    assert_eq!(keys, [ph[0].as_str(), ph[1].as_str(), ph[2].as_str()]);
    assert_eq!(items[0]["reason"], "initial");
    assert_eq!(items[1]["reason"], "manual");
    assert!(items[0]["exited_at"].is_string() && items[1]["exited_at"].is_string());
    assert_eq!(items[2]["exited_at"], Value::Null);
    assert!(
        items
            .iter()
            .all(|h| h["actor"].as_str().is_some_and(|a| a.starts_with("user:")))
    );
    let (_, page) = get_json(&app, &format!("{path}/phase-history?skip=1&limit=1")).await;
    assert_eq!(page["items"][0]["phase_key"], ph[1]);
    let res = app.get(&format!("{path}/phase-history?limit=201")).await;
    assert_error(res, 422, "VALIDATION_ERROR").await;

    // Status: terminal, nothing allowed next.
    let (_, st) = get_json(&app, &format!("{path}/phase")).await;
    assert_eq!(st["phase_state"], "in_phase");
    assert_eq!(st["phase"]["is_terminal"], true);
    assert_eq!(st["transition_count"], 2);
    assert_eq!(st["allowed_targets"], json!([]));
    assert_eq!(st["cycle_type"], "annual");

    // Archived plants do not change phase.
    let (s, _) = post(
        &app,
        &format!("{path}/archive"),
        json!({"reason": "disposed"}),
    )
    .await;
    assert_eq!(s, 200);
    let (s, err) = transition(&app, &path, &ph[2]).await;
    assert_eq!(
        (s, err["error_code"].as_str()),
        (422, Some("PHASE_TRANSITION_INVALID"))
    );
}

#[tokio::test]
async fn phases_perennial_cycle_restart_and_states() {
    let app = TestApp::spawn().await;
    let t = app.tenant("phasesper").await;
    let per = species(&app, PERENNIAL).await;
    let ph = phases(&app, &per).await;
    assert_eq!(
        ph.len(),
        2,
        "evergreen_foliage_perennial of the fixture: vegetative, rest"
    );

    // never_initialised: created without a phase; any phase of the sequence starts it.
    let p = plant(&app, &t, json!({"species_key": per, "phase_key": null})).await;
    let path = format!("{}{}", plants_path(&t), key(&p));
    let (_, st) = get_json(&app, &format!("{path}/phase")).await;
    assert_eq!(st["phase_state"], "never_initialised");
    assert_eq!(st["allowed_targets"], json!(ph));
    let (s, first) = transition(&app, &path, &ph[0]).await;
    assert_eq!(s, 200, "{first}");
    assert_eq!(first["phase_state"], "in_phase");

    // Forward to rest, then the cycle restarts at vegetative: cycle 2.
    let (s, _) = transition(&app, &path, &ph[1]).await;
    assert_eq!(s, 200);
    let (s, restarted) = transition(&app, &path, &ph[0]).await;
    assert_eq!(s, 200, "{restarted}");
    assert_eq!(restarted["phase"]["cycle_number"], 2);
    let (_, hist) = get_json(&app, &format!("{path}/phase-history")).await;
    let cycles: Vec<i64> = hist["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|h| h["cycle_number"].as_i64())
        .collect();
    assert_eq!(cycles, [1, 1, 2]);

    // between_cycles: every row closed, none open (as a perennial's rest leaves it).
    let id = uuid::Uuid::parse_str(&key(&p)).expect("uuid");
    exec(
        &app,
        &t,
        "UPDATE {schema}.plant_phase_history SET exited_at = now() WHERE plant_id = $1",
        id,
    )
    .await;
    exec(&app, &t, "UPDATE {schema}.plants SET current_phase_key = NULL, current_phase_started_at = NULL, current_cycle = NULL WHERE id = $1", id).await;
    let (_, got) = get_json(&app, &path).await;
    assert_eq!(got["phase_state"], "between_cycles");
    assert_eq!(got["current_phase_key"], Value::Null);
    let (s, next) = transition(&app, &path, &ph[0]).await;
    assert_eq!(s, 200);
    assert_eq!(next["phase"]["cycle_number"], 3);
}

/// Rebinding the species to another sequence (the catalogue's operation) reaches the plant at
/// once: its open phase is no longer of its sequence (`unresolved`), and a transition to a
/// phase of the new sequence corrects it. The species is this test's own.
#[tokio::test]
async fn phases_rebinding_the_species_shows_unresolved() {
    let app = TestApp::spawn().await;
    let t = app.tenant("phasesreb").await;
    crate::catalog::seeded(&app).await;
    let family: String = sqlx::query_scalar(
        "SELECT id::text FROM platform.catalog_records WHERE kind = 'botanical_family' AND name = 'Mockaceae'",
    )
    .fetch_one(app.state.platform_pool())
    .await
    .expect("family");
    let mut body = serde_json::Map::new();
    body.insert(
        "scientific_name".into(),
        json!(format!("Phasia {}", crate::catalog::letters())),
    );
    body.insert("family_key".into(), json!(family));
    let created = kultiva::catalog::engine::service::create(
        &app.state,
        &kultiva::catalog::species::model::SPECIES,
        body,
    )
    .await
    .expect("species");
    let sp = created["key"].as_str().expect("key").to_owned();
    let before = phases(&app, &sp).await;
    // Rule 7 (nothing recorded): the evergreen cycle, vegetative then rest.
    assert_eq!(before.len(), 2);
    let p = plant(&app, &t, json!({"species_key": sp})).await;
    let path = format!("{}{}", plants_path(&t), key(&p));
    let (s, rest) = transition(&app, &path, &before[1]).await;
    assert_eq!(s, 200, "{rest}");

    let annual: String = sqlx::query_scalar(
        "SELECT id::text FROM platform.catalog_records WHERE kind = 'phase_sequence' AND name = 'annual_harvest'",
    )
    .fetch_one(app.state.platform_pool())
    .await
    .expect("sequence");
    kultiva::catalog::species::service::assign_phase_sequence(&app.state, &sp, Some(&annual), true)
        .await
        .expect("rebound");
    let after = phases(&app, &sp).await;
    assert!(
        !after.contains(&before[1]),
        "the rest phase is not in the annual cycle"
    );
    let (_, got) = get_json(&app, &path).await;
    assert_eq!(got["phase_state"], "unresolved", "{got}");
    assert_eq!(got["current_phase_key"], before[1]);
    assert_eq!(got["phase"], Value::Null);
    let (_, st) = get_json(&app, &format!("{path}/phase")).await;
    assert_eq!(
        st["allowed_targets"],
        json!(after),
        "any phase of its own sequence corrects it"
    );
    // A phase of the old sequence only is refused; one of the new sequence corrects it.
    let (s, _) = transition(&app, &path, &before[1]).await;
    assert_eq!(s, 422);
    let (s, fixed) = transition(&app, &path, &after[0]).await;
    assert_eq!(s, 200, "{fixed}");
    assert_eq!(fixed["phase_state"], "in_phase");
    assert_eq!(fixed["phase"]["sequence_name"], "annual_harvest");
}

/// Two simultaneous transitions of one plant to the same phase: exactly one is applied, the
/// other sees the plant already there (row lock on the plant).
#[tokio::test]
async fn phases_two_simultaneous_transitions_apply_once() {
    let app = TestApp::spawn().await;
    let t = app.tenant("phasesrace").await;
    let tomato = species(&app, TOMATO).await;
    let ph = phases(&app, &tomato).await;
    for round in 0..5 {
        let p = plant(
            &app,
            &t,
            json!({"species_key": tomato, "name": format!("Race {round}")}),
        )
        .await;
        let path = format!("{}{}/phase-transitions", plants_path(&t), key(&p));
        let body = json!({"target_phase_key": ph[1]});
        let (a, b) = tokio::join!(app.post_json(&path, &body), app.post_json(&path, &body));
        let mut statuses = [a.status().as_u16(), b.status().as_u16()];
        statuses.sort_unstable();
        assert_eq!(statuses, [200, 422], "round {round}");
        let id = uuid::Uuid::parse_str(&key(&p)).expect("uuid");
        let sql = format!(
            "SELECT count(*) FROM {}.plant_phase_history WHERE plant_id = $1",
            t.schema_name.quoted()
        );
        let n: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
            .bind(id)
            .fetch_one(app.state.platform_pool())
            .await
            .expect("count");
        assert_eq!(n, 2, "initial + one transition");
    }
}
