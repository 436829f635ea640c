//! The task and planting-run pages (`/app/g/{slug}/tasks`, `/app/g/{slug}/runs…`) over real
//! HTTP against PostgreSQL and Redis, as a browser without JavaScript uses them: each page in
//! both languages, a task created, completed and reopened through the forms and read back
//! through the service, a run created, moved and given plants; what must not happen checked
//! as carefully (a viewer gets no forms and a forged post writes nothing, another garden's task
//! or run is a 404, a refusal of the service is said plainly and leaves nothing).

use kultiva::auth::Role;
use kultiva::garden::tasks::model::{Task, TaskFilter};
use kultiva::tenancy::TenantRecord;
use kultiva::values::page::PageRequest;
use uuid::Uuid;

use crate::garden::species;
use crate::support::{PASSWORD, TestApp};
use crate::web::Browser;

const TOMATO: &str = "Fixtura tomatoides";

async fn plant(app: &TestApp, t: &TenantRecord, name: &str) -> Uuid {
    let new = kultiva::garden::plants::model::NewPlant {
        species_key: species(app, TOMATO).await,
        name: Some(name.to_owned()),
        cultivar_key: None,
        location_key: None,
        slot_key: None,
        substrate_batch_key: None,
        planted_on: None,
        phase_key: None,
        notes: None,
        start_phase: Default::default(),
    };
    kultiva::garden::plants::service::create_plant(&app.state, t, &new, "test", true)
        .await
        .expect("plant")
        .key
}

async fn tasks_of(app: &TestApp, t: &TenantRecord) -> Vec<Task> {
    kultiva::garden::tasks::service::list_tasks(
        &app.state,
        t,
        &TaskFilter::default(),
        PageRequest {
            skip: 0,
            limit: 100,
        },
    )
    .await
    .expect("tasks")
    .items
}

fn status_of(t: &Task) -> String {
    serde_json::to_value(t.status)
        .expect("status")
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

fn iso(d: time::Date) -> String {
    kultiva::garden::tasks::model::date_str(d)
}

#[tokio::test]
async fn tasks_are_grouped_created_completed_and_reopened_through_the_forms() {
    let app = TestApp::full().await;
    let t = app.tenant("wtasks").await;
    let grower = app.member(&t, Role::Grower).await;
    let slug = t.slug.as_str().to_owned();
    let base = format!("/app/g/{slug}/tasks");
    let tomato = plant(&app, &t, "Task tomato").await;
    let today = time::OffsetDateTime::now_utc().date();

    // Both languages, reachable from the garden's navigation.
    for (lang, heading, group) in [
        ("en", "Tasks", "Due today"),
        ("de", "Aufgaben", "Heute fällig"),
    ] {
        let mut b = Browser::new(&app, lang);
        b.sign_in(&grower.email, PASSWORD).await;
        let page = b.get(&base).await;
        assert_eq!(page.status, 200, "{}", page.body);
        assert!(page.has(&format!("<h1>{heading} · ")), "{}", page.body);
        assert!(page.has(group), "{}", page.body);
        assert!(page.has(&format!(r#"href="{base}""#)), "nav entry");
        assert!(
            page.has(&format!(r#"href="/app/g/{slug}/runs""#)),
            "nav entry"
        );
        assert!(page.has(r#"<label for="task-name">"#));
    }

    let mut b = Browser::new(&app, "en");
    b.sign_in(&grower.email, PASSWORD).await;
    let csrf = b.csrf(&base).await;

    // Without the form's CSRF value: 403, nothing written.
    let forged = b
        .post(&base, &[("name", "Forged"), ("due_on", &iso(today))])
        .await;
    assert_eq!(forged.status, 403);
    assert!(tasks_of(&app, &t).await.is_empty());

    // A repeating task without a due date: 422, the sentence next to the field, typed values
    // stay, nothing written.
    let refused = b
        .post(
            &base,
            &[
                ("_csrf", &csrf),
                ("name", "Water weekly"),
                ("category", "care_reminder"),
                ("recurrence_kind", "weekly"),
            ],
        )
        .await;
    assert_eq!(refused.status, 422, "{}", refused.body);
    assert!(
        refused.has(r#"id="task-due_on-err">A repeating task needs a due date to count from."#),
        "{}",
        refused.body
    );
    assert!(refused.has(r#"aria-describedby="task-due_on-err""#));
    assert!(refused.has(r#"value="Water weekly""#), "typed values stay");
    let every = b
        .post(
            &base,
            &[
                ("_csrf", &csrf),
                ("name", "Every few"),
                ("due_on", &iso(today)),
                ("recurrence_kind", "every_n_days"),
                ("recurrence_every_days", "400"),
            ],
        )
        .await;
    assert_eq!(every.status, 422, "{}", every.body);
    assert!(
        every.has(r#"id="task-recurrence_every_days-err""#),
        "{}",
        every.body
    );
    let nameless = b.post(&base, &[("_csrf", &csrf), ("name", "  ")]).await;
    assert_eq!(nameless.status, 422);
    assert!(nameless.has(r#"id="task-name-err""#), "{}", nameless.body);
    assert!(tasks_of(&app, &t).await.is_empty(), "nothing written");

    // A weekly task for the plant, due today: created with the right fields.
    let created = b
        .post(
            &base,
            &[
                ("_csrf", &csrf),
                ("name", "Tie up the tomato"),
                ("category", "maintenance"),
                ("priority", "high"),
                ("due_on", &iso(today)),
                ("plant_key", &tomato.to_string()),
                ("recurrence_kind", "weekly"),
                ("instruction", "Soft string"),
            ],
        )
        .await;
    assert_eq!(created.status, 303, "{}", created.body);
    assert_eq!(
        created.location(),
        Some(format!("{base}?done=created").as_str())
    );
    let all = tasks_of(&app, &t).await;
    assert_eq!(all.len(), 1);
    let task = &all[0];
    assert_eq!(task.name, "Tie up the tomato");
    assert_eq!(task.category, "maintenance");
    assert_eq!(task.priority, "high");
    assert_eq!(task.plant_key, Some(tomato));
    assert_eq!(task.due_on.as_deref(), Some(iso(today).as_str()));
    assert_eq!(task.instruction.as_deref(), Some("Soft string"));
    assert_eq!(
        task.recurrence.as_ref().map(|r| r.kind.as_str()),
        Some("weekly")
    );
    let key = task.key;

    // An overdue one (through the service) and one undated: each in its group.
    let overdue = kultiva::garden::tasks::model::NewTask {
        name: "Late pruning".to_owned(),
        instruction: None,
        category: "pruning",
        priority: "medium",
        plant_key: None,
        due_on: Some(today - time::Duration::days(3)),
        assigned_to: None,
        checklist: Vec::new(),
        recurrence: None,
    };
    kultiva::garden::tasks::service::create_task(&app.state, &t, &overdue, "test", true)
        .await
        .expect("task");
    let page = b.get(&format!("{base}?done=created")).await;
    assert_eq!(page.status, 200);
    assert!(page.has("Task created."), "{}", page.body);
    let section = |body: &str, id: &str| -> String {
        let start = body.find(&format!(r#"id="sec-{id}""#)).expect("section");
        let rest = &body[start..];
        let end = rest.find("</section>").expect("end");
        rest[..end].to_owned()
    };
    assert!(section(&page.body, "today").contains("Tie up the tomato"));
    assert!(
        section(&page.body, "today").contains("Task tomato"),
        "plant named"
    );
    assert!(section(&page.body, "overdue").contains("Late pruning"));
    assert!(!section(&page.body, "done").contains("Tie up the tomato"));

    // Complete through its form: completed, and the next weekly occurrence planned.
    let status = format!("{base}/{key}/status");
    let completed = b
        .post(&status, &[("_csrf", &csrf), ("action", "complete")])
        .await;
    assert_eq!(completed.status, 303, "{}", completed.body);
    assert_eq!(
        completed.location(),
        Some(format!("{base}?done=complete-next").as_str())
    );
    let got = kultiva::garden::tasks::service::get_task(&app.state, &t, &key.to_string())
        .await
        .expect("task");
    assert_eq!(status_of(&got), "completed");
    assert!(got.completed_at.is_some());
    let all = tasks_of(&app, &t).await;
    let next = all
        .iter()
        .find(|x| x.previous_key == Some(key))
        .expect("next occurrence");
    assert_eq!(
        next.due_on.as_deref(),
        Some(iso(today + time::Duration::days(7)).as_str())
    );
    let page = b.get(&base).await;
    assert!(section(&page.body, "done").contains("Tie up the tomato"));
    assert!(section(&page.body, "upcoming").contains("Tie up the tomato"));

    // Completing it again is refused plainly (the page was stale): nothing changes.
    let again = b
        .post(&status, &[("_csrf", &csrf), ("action", "complete")])
        .await;
    assert_eq!(again.status, 422, "{}", again.body);
    assert!(
        again.has("cannot be changed this way in its current state"),
        "{}",
        again.body
    );
    assert_eq!(
        tasks_of(&app, &t).await.len(),
        all.len(),
        "no second occurrence"
    );

    // Reopen: pending again, with where it came from.
    let reopened = b
        .post(&status, &[("_csrf", &csrf), ("action", "reopen")])
        .await;
    assert_eq!(reopened.status, 303, "{}", reopened.body);
    let got = kultiva::garden::tasks::service::get_task(&app.state, &t, &key.to_string())
        .await
        .expect("task");
    assert_eq!(status_of(&got), "pending");
    assert_eq!(got.reopened_from_status.as_deref(), Some("completed"));
    let page = b.get(&format!("{base}?done=reopen")).await;
    assert!(page.has("Task reopened."));

    // German: the refusal in the person's language.
    let mut de = Browser::new(&app, "de");
    de.sign_in(&grower.email, PASSWORD).await;
    let csrf_de = de.csrf(&base).await;
    let refused = de
        .post(
            &base,
            &[
                ("_csrf", &csrf_de),
                ("name", "Gießen"),
                ("recurrence_kind", "daily"),
            ],
        )
        .await;
    assert_eq!(refused.status, 422);
    assert!(
        refused.has("braucht ein Fälligkeitsdatum"),
        "{}",
        refused.body
    );
}

#[tokio::test]
async fn task_viewers_get_no_forms_and_other_gardens_tasks_are_not_found() {
    let app = TestApp::full().await;
    let t = app.tenant("wtaskv").await;
    let other = app.tenant("wtasko").await;
    let viewer = app.member(&t, Role::Viewer).await;
    let grower = app.member(&t, Role::Grower).await;
    let slug = t.slug.as_str().to_owned();
    let base = format!("/app/g/{slug}/tasks");
    let new = |name: &str| kultiva::garden::tasks::model::NewTask {
        name: name.to_owned(),
        instruction: None,
        category: "maintenance",
        priority: "medium",
        plant_key: None,
        due_on: Some(time::OffsetDateTime::now_utc().date()),
        assigned_to: None,
        checklist: Vec::new(),
        recurrence: None,
    };
    let mine =
        kultiva::garden::tasks::service::create_task(&app.state, &t, &new("Mine"), "test", true)
            .await
            .expect("task");
    let theirs = kultiva::garden::tasks::service::create_task(
        &app.state,
        &other,
        &new("Theirs"),
        "test",
        true,
    )
    .await
    .expect("task");

    let mut v = Browser::new(&app, "en");
    v.sign_in(&viewer.email, PASSWORD).await;
    let page = v.get(&base).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.has("Mine"));
    assert!(!page.has("Theirs"), "nothing of another garden");
    assert!(!page.has(r#"name="recurrence_kind""#), "no create form");
    assert!(!page.has("/status\""), "no status forms");
    assert!(page.has("As a viewer you can see the tasks"));
    // A forged post with the viewer's own CSRF value: 403, nothing written or changed.
    let csrf = page.csrf();
    let forged = v
        .post(&base, &[("_csrf", &csrf), ("name", "By a viewer")])
        .await;
    assert_eq!(forged.status, 403, "{}", forged.body);
    let forged = v
        .post(
            &format!("{base}/{}/status", mine.key),
            &[("_csrf", &csrf), ("action", "complete")],
        )
        .await;
    assert_eq!(forged.status, 403);
    let all = tasks_of(&app, &t).await;
    assert_eq!(all.len(), 1);
    assert_eq!(status_of(&all[0]), "pending");

    // A grower of this garden naming another garden's task: 404, that task untouched.
    let mut g = Browser::new(&app, "en");
    g.sign_in(&grower.email, PASSWORD).await;
    let csrf = g.csrf(&base).await;
    let foreign = g
        .post(
            &format!("{base}/{}/status", theirs.key),
            &[("_csrf", &csrf), ("action", "complete")],
        )
        .await;
    assert_eq!(foreign.status, 404, "{}", foreign.body);
    let still =
        kultiva::garden::tasks::service::get_task(&app.state, &other, &theirs.key.to_string())
            .await
            .expect("task");
    assert_eq!(status_of(&still), "pending");
    // And another garden's page: 404.
    let page = g
        .get(&format!("/app/g/{}/tasks", other.slug.as_str()))
        .await;
    assert_eq!(page.status, 404);
}

#[tokio::test]
async fn runs_are_listed_created_moved_and_given_plants_and_refusals_are_plain() {
    let app = TestApp::full().await;
    let t = app.tenant("wruns").await;
    let other = app.tenant("wrunso").await;
    let grower = app.member(&t, Role::Grower).await;
    let viewer = app.member(&t, Role::Viewer).await;
    let slug = t.slug.as_str().to_owned();
    let base = format!("/app/g/{slug}/runs");
    let p1 = plant(&app, &t, "Run tomato 1").await;
    let _p2 = plant(&app, &t, "Run tomato 2").await;

    for (lang, heading, none) in [
        ("en", "Runs", "No planting run yet."),
        ("de", "Durchgänge", "Noch kein Pflanzdurchgang."),
    ] {
        let mut b = Browser::new(&app, lang);
        b.sign_in(&grower.email, PASSWORD).await;
        let page = b.get(&base).await;
        assert_eq!(page.status, 200, "{}", page.body);
        assert!(page.has(&format!("<h1>{heading} · ")), "{}", page.body);
        assert!(page.has(none));
        assert!(page.has(r#"<label for="run-name">"#));
    }

    let mut b = Browser::new(&app, "en");
    b.sign_in(&grower.email, PASSWORD).await;
    let csrf = b.csrf(&base).await;
    let empty = b.post(&base, &[("_csrf", &csrf), ("name", "")]).await;
    assert_eq!(empty.status, 422, "{}", empty.body);
    assert!(empty.has("Name: "), "{}", empty.body);
    let created = b
        .post(
            &base,
            &[
                ("_csrf", &csrf),
                ("name", "Spring tomatoes"),
                ("run_type", "monoculture"),
                ("planned_quantity", "2"),
            ],
        )
        .await;
    assert_eq!(created.status, 303, "{}", created.body);
    let location = created.location().expect("location").to_owned();
    let key = location
        .trim_start_matches(&format!("{base}/"))
        .trim_end_matches("?done=created")
        .to_owned();
    let run = kultiva::garden::runs::service::get_run(&app.state, &t, &key)
        .await
        .expect("run");
    assert_eq!(run.run.name, "Spring tomatoes");
    assert_eq!(run.run.planned_quantity, Some(2));
    let run_page = format!("{base}/{key}");
    for lang in ["en", "de"] {
        let mut x = Browser::new(&app, lang);
        x.sign_in(&grower.email, PASSWORD).await;
        let page = x.get(&run_page).await;
        assert_eq!(page.status, 200, "{}", page.body);
        assert!(page.has("<h1>Spring tomatoes"), "{}", page.body);
    }
    let page = b.get(&location).await;
    assert!(page.has("Run created."));
    assert!(page.has("Start the run"), "{}", page.body);

    // Add a plant (planned): it is in the run.
    let added = b
        .post(
            &format!("{run_page}/plants"),
            &[("_csrf", &csrf), ("plant_keys[0]", &p1.to_string())],
        )
        .await;
    assert_eq!(added.status, 303, "{}", added.body);
    let run = kultiva::garden::runs::service::get_run(&app.state, &t, &key)
        .await
        .expect("run");
    assert_eq!(run.run.plant_count, 1);
    let page = b.get(&run_page).await;
    assert!(page.has("Run tomato 1"));
    assert!(page.has(&format!(r#"href="/app/g/{slug}/plants/{p1}""#)));

    // Status: planned → active → completed through the forms.
    for to in ["active", "completed"] {
        let moved = b
            .post(
                &format!("{run_page}/status"),
                &[("_csrf", &csrf), ("status", to)],
            )
            .await;
        assert_eq!(moved.status, 303, "{}", moved.body);
    }
    let run = kultiva::garden::runs::service::get_run(&app.state, &t, &key)
        .await
        .expect("run");
    assert_eq!(
        serde_json::to_value(run.run.status).expect("json"),
        "completed"
    );

    // A stale page's forms: the service refuses, the page says so plainly, nothing written.
    let back = b
        .post(
            &format!("{run_page}/status"),
            &[("_csrf", &csrf), ("status", "active")],
        )
        .await;
    assert_eq!(back.status, 422, "{}", back.body);
    assert!(
        back.has("A run whose status is “Completed” cannot change to this status."),
        "{}",
        back.body
    );
    let late = b
        .post(
            &format!("{run_page}/plants"),
            &[("_csrf", &csrf), ("plant_keys[0]", &_p2.to_string())],
        )
        .await;
    assert_eq!(late.status, 409, "{}", late.body);
    assert!(
        late.has("This cannot be done while the run’s status is “Completed”: plants can be added only to a planned or active run."),
        "{}",
        late.body
    );
    let run = kultiva::garden::runs::service::get_run(&app.state, &t, &key)
        .await
        .expect("run");
    assert_eq!(run.run.plant_count, 1, "nothing added");
    assert_eq!(
        serde_json::to_value(run.run.status).expect("json"),
        "completed"
    );
    let mut de = Browser::new(&app, "de");
    de.sign_in(&grower.email, PASSWORD).await;
    let csrf_de = de.csrf(&run_page).await;
    let late = de
        .post(
            &format!("{run_page}/plants"),
            &[("_csrf", &csrf_de), ("plant_keys[0]", &_p2.to_string())],
        )
        .await;
    assert_eq!(late.status, 409);
    assert!(late.has("den Status „Abgeschlossen“ hat"), "{}", late.body);

    // A viewer: the runs without forms; a forged post is refused, nothing written.
    let mut v = Browser::new(&app, "en");
    v.sign_in(&viewer.email, PASSWORD).await;
    let list = v.get(&base).await;
    assert_eq!(list.status, 200);
    assert!(list.has("Spring tomatoes"));
    assert!(!list.has(r#"name="run_type""#), "no create form");
    let vcsrf = list.csrf();
    let forged = v
        .post(&base, &[("_csrf", &vcsrf), ("name", "Viewer run")])
        .await;
    assert_eq!(forged.status, 403);
    let runs = kultiva::garden::runs::service::list_runs(
        &app.state,
        &t,
        None,
        PageRequest {
            skip: 0,
            limit: 100,
        },
    )
    .await
    .expect("runs");
    assert_eq!(runs.items.len(), 1, "nothing written");

    // Another garden's run: 404 to read and to change, that run untouched.
    let foreign = kultiva::garden::runs::service::create_run(
        &app.state,
        &other,
        &kultiva::garden::runs::model::NewRun {
            name: "Theirs".to_owned(),
            run_type: None,
            location_key: None,
            substrate_batch_key: None,
            planned_quantity: None,
            planned_start_date: None,
            notes: None,
        },
    )
    .await
    .expect("run");
    let fkey = foreign.run.key;
    let page = b.get(&format!("{base}/{fkey}")).await;
    assert_eq!(page.status, 404, "{}", page.body);
    let moved = b
        .post(
            &format!("{base}/{fkey}/status"),
            &[("_csrf", &csrf), ("status", "active")],
        )
        .await;
    assert_eq!(moved.status, 404);
    let still = kultiva::garden::runs::service::get_run(&app.state, &other, &fkey.to_string())
        .await
        .expect("run");
    assert_eq!(
        serde_json::to_value(still.run.status).expect("json"),
        "planned"
    );
    assert!(!b.get(&base).await.has("Theirs"));
}
