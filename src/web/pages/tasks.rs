//! **Tasks** of a garden (`/app/g/{slug}/tasks`): the open ones overdue, due today and
//! upcoming, and those done; a task created (category, priority, due date, recurrence, plant),
//! started, completed, skipped, failed or reopened. Every form posts to the service function
//! the REST route calls (the same reader, the same rules, the grower role) and comes back here
//! (POST-redirect-GET); a refusal shows the page again with what was wrong next to its field,
//! nothing written. Viewers see the tasks without forms.

use maud::{Markup, html};
use salvo::prelude::*;
use serde_json::{Map, Value};
use time::OffsetDateTime;
use uuid::Uuid;

use super::PageCtx;
use super::scope::{GardenScope, done, local_day, open_garden, shown_on_form};
use crate::auth::Role;
use crate::error::{AppError, ErrorCode};
use crate::garden::plants::model::PlantSummary;
use crate::garden::tasks::model::{
    CATEGORIES, NewTask, PRIORITIES, RECURRENCE_KINDS, StatusChange, Task, TaskFilter, date_str,
};
use crate::garden::tasks::service::{self as tasks, LIST_MAX_LIMIT};
use crate::rules::task_status::{TaskAction, TaskStatus};
use crate::values::page::PageRequest;
use crate::web::forms::{Field, Posted, code_text, parse};
use crate::web::i18n::Lang;
use crate::web::layout::{add_card, csrf_field, notice, see_other};

pub fn router() -> Router {
    Router::with_path("g/{slug}/tasks")
        .get(tasks_page)
        .post(create)
        .push(Router::with_path("{key}/status").post(status_post))
}

/// Done tasks the page lists (the latest).
const DONE_MAX: usize = 30;
/// Plants the create form offers.
const PLANTS_MAX: i64 = 200;

/// The page's task groups and the garden's plants, read before any of it is written out.
struct TasksData {
    overdue: Vec<Task>,
    today: Vec<Task>,
    upcoming: Vec<Task>,
    done: Vec<Task>,
    plants: Vec<PlantSummary>,
}

async fn read(ctx: &PageCtx, scope: &GardenScope<'_>) -> Result<TasksData, AppError> {
    let state = &ctx.state;
    let tenant = &scope.garden.tenant;
    let today = date_str(local_day(scope.s, OffsetDateTime::now_utc()));
    let mut data = TasksData {
        overdue: Vec::new(),
        today: Vec::new(),
        upcoming: Vec::new(),
        done: Vec::new(),
        plants: Vec::new(),
    };
    let all = PageRequest {
        skip: 0,
        limit: LIST_MAX_LIMIT,
    };
    // One after the other: a page holds one connection of the pool at a time.
    for (_, status) in TaskStatus::ALL {
        let filter = TaskFilter {
            status: Some(*status),
            ..TaskFilter::default()
        };
        let found = tasks::list_tasks(state, tenant, &filter, all).await?.items;
        for t in found {
            if !status.open() {
                data.done.push(t);
                continue;
            }
            // ISO dates compare as days do.
            match t.due_on.as_deref() {
                Some(due) if *status != TaskStatus::Dormant && due < today.as_str() => {
                    data.overdue.push(t);
                }
                Some(due) if *status != TaskStatus::Dormant && due == today => data.today.push(t),
                _ => data.upcoming.push(t),
            }
        }
    }
    let by_due = |a: &Task, b: &Task| match (&a.due_on, &b.due_on) {
        (Some(x), Some(y)) => x.cmp(y),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => a.name.cmp(&b.name),
    };
    data.overdue.sort_by(by_due);
    data.today.sort_by(|a, b| a.name.cmp(&b.name));
    data.upcoming.sort_by(by_due);
    data.done.sort_by_key(|t| std::cmp::Reverse(t.updated_at));
    data.done.truncate(DONE_MAX);
    let plants = crate::garden::plants::service::list_plants(
        state,
        tenant,
        &crate::garden::plants::repo::Filter::default(),
        PageRequest {
            skip: 0,
            limit: PLANTS_MAX,
        },
    )
    .await?;
    data.plants = plants.items;
    Ok(data)
}

/// A refused form: what was typed, the sentences per field and those for the whole form.
struct Failure<'a> {
    /// `create`, or the key of the task whose status change was refused.
    form: String,
    posted: &'a Posted,
    fields: Vec<(&'static str, String)>,
    general: Vec<String>,
    /// The service's own words (English), shown under the sentences.
    details: Vec<String>,
}

impl Failure<'_> {
    fn typed(&self, name: &str) -> &str {
        if self.form == "create" {
            self.posted.get(name).unwrap_or("")
        } else {
            ""
        }
    }

    fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, m)| m.as_str())
    }
}

/// The form field a detail of the reader or service names.
fn form_field(detail: &str) -> Option<&'static str> {
    let field = detail.strip_prefix("body.").unwrap_or(detail);
    Some(match field {
        "name" => "name",
        "instruction" => "instruction",
        "category" => "category",
        "priority" => "priority",
        "plant_key" => "plant_key",
        "due_on" => "due_on",
        "recurrence" | "recurrence.kind" => "recurrence_kind",
        "recurrence.every_days" => "recurrence_every_days",
        "recurrence.end_on" => "recurrence_end_on",
        "recurrence.phase" => "recurrence_phase",
        _ => return None,
    })
}

/// What a refusal says, in the page's language: per field where it names one.
fn failure<'a>(lang: Lang, form: String, err: &AppError, posted: &'a Posted) -> Failure<'a> {
    let mut f = Failure {
        form,
        posted,
        fields: Vec::new(),
        general: Vec::new(),
        details: Vec::new(),
    };
    match err.code() {
        ErrorCode::ValidationError if !err.details().is_empty() => {
            for d in err.details() {
                let field = d.field.strip_prefix("body.").unwrap_or(&d.field);
                let text = match (field, d.code.as_str()) {
                    ("due_on", "missing") => lang.t("task-err-due-needed"),
                    ("recurrence.end_on", "value_error") if d.reason.contains("before") => {
                        lang.t("task-err-end-before")
                    }
                    ("recurrence.every_days", _) => lang.t("task-err-every-days"),
                    ("recurrence.phase", _) if d.reason.contains("plant_key") => {
                        lang.t("task-err-phase-plant")
                    }
                    ("recurrence.phase", _) if d.reason.contains("never fire") => {
                        lang.t("task-err-phase-unknown")
                    }
                    ("plant_key", _) if d.reason.contains("archived") => {
                        lang.t("task-err-plant-archived")
                    }
                    (_, "missing") => lang.t("err-missing"),
                    (_, "string_too_short") => lang.t("err-too-short"),
                    (_, "string_too_long") => lang.t("err-too-long"),
                    _ => lang.t("err-invalid"),
                };
                match form_field(&d.field) {
                    Some(name) if f.form == "create" => f.fields.push((name, text)),
                    _ => f.general.push(text),
                }
            }
            if !f.fields.is_empty() {
                f.general.insert(0, lang.t("task-err-form"));
            }
        }
        ErrorCode::InvalidStatusTransition => {
            f.general.push(lang.t("task-err-transition"));
        }
        ErrorCode::HstViolation => {
            f.general.push(lang.t("task-err-hst"));
            f.details = err.details().iter().map(|d| d.reason.clone()).collect();
        }
        code => f.general.push(lang.t(code_text(code))),
    }
    f
}

/// What a form did, by its `done` value.
fn news_text(lang: Lang, key: &str) -> Option<String> {
    let id = match key {
        "created" => "task-done-created",
        "start" => "task-done-start",
        "complete" => "task-done-complete",
        "complete-next" => "task-done-complete-next",
        "skip" => "task-done-skip",
        "fail" => "task-done-fail",
        "reopen" => "task-done-reopen",
        _ => return None,
    };
    Some(lang.t(id))
}

#[handler]
async fn tasks_page(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some(ctx) = PageCtx::or_fail(req, depot, res).await else {
        return;
    };
    let Some(scope) = open_garden(req, res, &ctx).await else {
        return;
    };
    let news = req
        .query::<String>("done")
        .and_then(|d| news_text(ctx.lang, &d));
    show(req, res, &ctx, &scope, StatusCode::OK, news, None).await;
}

async fn show(
    req: &Request,
    res: &mut Response,
    ctx: &PageCtx,
    scope: &GardenScope<'_>,
    status: StatusCode,
    news: Option<String>,
    failed: Option<&Failure<'_>>,
) {
    let data = match read(ctx, scope).await {
        Ok(d) => d,
        Err(e) => return ctx.fail(req, res, e),
    };
    let lang = ctx.lang;
    let body = body(lang, scope, &data, news.as_deref(), failed);
    scope.page(
        req,
        res,
        lang,
        status,
        format!("{} · {}", lang.t("nav-tasks"), scope.garden.tenant.name),
        body,
    );
}

/// A choice's text in the page's language (the value itself when the catalogue has none).
fn choice_text(lang: Lang, prefix: &str, value: &str) -> String {
    let id = format!("{prefix}-{value}");
    let text = lang.t(&id);
    if text == id { value.to_owned() } else { text }
}

fn body(
    lang: Lang,
    scope: &GardenScope<'_>,
    data: &TasksData,
    news: Option<&str>,
    failed: Option<&Failure<'_>>,
) -> Markup {
    let grower = scope.garden.role >= Role::Grower;
    let base = format!("/app/g/{}/tasks", scope.slug);
    let view = View {
        lang,
        base: &base,
        csrf: &scope.s.csrf,
        grower,
        plants: &data.plants,
        failed,
    };
    let general = failed.map(|f| (&f.general, &f.details));
    html! {
        h1 { (lang.t("nav-tasks")) " · " (scope.garden.tenant.name) }
        @if let Some(text) = news { (notice("ok", text)) }
        @if let Some((lines, details)) = general {
            div.notice.bad role="alert" {
                @for l in lines { p { (l) } }
                @if !details.is_empty() {
                    ul.reasons { @for d in details { li { (d) } } }
                }
            }
        }
        (view.group("overdue", "task-group-overdue", "task-group-overdue-none", &data.overdue))
        (view.group("today", "task-group-today", "task-group-today-none", &data.today))
        (view.group("upcoming", "task-group-upcoming", "task-group-upcoming-none", &data.upcoming))
        (view.group("done", "task-group-done", "task-group-done-none", &data.done))
        @if grower {
            (view.create_form())
        } @else {
            p.meta { (lang.t("task-viewer-only")) }
        }
    }
}

/// What the parts of the page share.
struct View<'a> {
    lang: Lang,
    base: &'a str,
    csrf: &'a str,
    grower: bool,
    plants: &'a [PlantSummary],
    failed: Option<&'a Failure<'a>>,
}

impl View<'_> {
    fn plant_name(&self, key: Uuid) -> Option<&str> {
        self.plants
            .iter()
            .find(|p| p.key == key)
            .map(|p| p.name.as_str())
    }

    fn group(&self, id: &str, title: &str, none: &str, list: &[Task]) -> Markup {
        let lang = self.lang;
        html! {
            section.card aria-labelledby=(format!("sec-{id}")) {
                h2 id=(format!("sec-{id}")) { (lang.t(title)) " " span.meta { "(" (list.len()) ")" } }
                @if list.is_empty() {
                    p.empty { (lang.t(none)) }
                } @else {
                    ul.items {
                        @for t in list { (self.item(id, t)) }
                    }
                }
            }
        }
    }

    fn item(&self, group: &str, t: &Task) -> Markup {
        let lang = self.lang;
        let status = status_str(t);
        html! {
            li id=(format!("task-{}", t.key)) {
                span.what {
                    strong { (t.name) }
                    @if group == "overdue" { " " span.badge.overdue { (lang.t("task-overdue")) } }
                    @if group == "today" { " " span.badge.due { (lang.t("task-due-today")) } }
                    br;
                    span.meta {
                        (choice_text(lang, "task-cat", &t.category))
                        @if t.priority == "high" || t.priority == "critical" {
                            " · " (choice_text(lang, "task-prio", &t.priority))
                        }
                        @if let Some(due) = &t.due_on { " · " (lang.t("due-on")) " " (lang.iso_date(due)) }
                        @if let Some(r) = &t.recurrence {
                            " · " (recurrence_text(lang, &r.kind, r.every_days, r.phase.as_deref()))
                        }
                        @if let Some(name) = t.plant_key.and_then(|k| self.plant_name(k)) {
                            " · " (name)
                        }
                        @if status != "pending" { " · " (choice_text(lang, "task-status", status)) }
                    }
                }
                @if self.grower && !t.allowed_actions.is_empty() {
                    div.actions {
                        @for action in &t.allowed_actions {
                            form.inline method="post" action=(format!("{}/{}/status", self.base, t.key)) {
                                (csrf_field(self.csrf))
                                button.secondary[action != "complete"] type="submit" name="action" value=(action) {
                                    (choice_text(lang, "task-act", action))
                                    span.visually-hidden { ": " (t.name) }
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// The sentence of a refused create form next to its field, and the attributes tying it.
    fn error_of(&self, name: &str) -> Option<&str> {
        self.failed.and_then(|f| f.field(name))
    }

    fn field_error(&self, name: &str) -> Markup {
        html! {
            @if let Some(text) = self.error_of(name) {
                p class="notice bad" id=(format!("task-{name}-err")) { (text) }
            }
        }
    }

    fn typed(&self, name: &str) -> &str {
        self.failed.map_or("", |f| f.typed(name))
    }

    fn described(&self, name: &str) -> Option<String> {
        self.error_of(name).map(|_| format!("task-{name}-err"))
    }

    fn invalid(&self, name: &str) -> Option<&'static str> {
        self.error_of(name).map(|_| "true")
    }

    fn create_form(&self) -> Markup {
        let lang = self.lang;
        let open = self.failed.is_some_and(|f| f.form == "create");
        let category = match self.typed("category") {
            "" => "maintenance",
            c => c,
        };
        let priority = match self.typed("priority") {
            "" => "medium",
            p => p,
        };
        let kind = self.typed("recurrence_kind");
        html! {
            (add_card(
                "sec-new-task",
                &lang.t("task-new"),
                open,
                &[],
                self.base,
                self.csrf,
                html! {
                    label for="task-name" { (lang.t("task-field-name")) }
                    input id="task-name" type="text" name="name" required maxlength="200"
                        value=(self.typed("name")) aria-invalid=[self.invalid("name")] aria-describedby=[self.described("name")];
                    (self.field_error("name"))
                    label for="task-category" { (lang.t("task-field-category")) }
                    select id="task-category" name="category" aria-invalid=[self.invalid("category")] aria-describedby=[self.described("category")] {
                        @for (c, _) in CATEGORIES {
                            option value=(c) selected[*c == category] { (choice_text(lang, "task-cat", c)) }
                        }
                    }
                    (self.field_error("category"))
                    label for="task-priority" { (lang.t("task-field-priority")) }
                    select id="task-priority" name="priority" aria-invalid=[self.invalid("priority")] aria-describedby=[self.described("priority")] {
                        @for (p, _) in PRIORITIES {
                            option value=(p) selected[*p == priority] { (choice_text(lang, "task-prio", p)) }
                        }
                    }
                    (self.field_error("priority"))
                    label for="task-due_on" { (lang.t("task-field-due")) }
                    input id="task-due_on" type="date" name="due_on" value=(self.typed("due_on"))
                        aria-invalid=[self.invalid("due_on")] aria-describedby=[self.described("due_on")];
                    (self.field_error("due_on"))
                    label for="task-plant_key" { (lang.t("task-field-plant")) }
                    select id="task-plant_key" name="plant_key" aria-invalid=[self.invalid("plant_key")] aria-describedby=[self.described("plant_key")] {
                        option value="" { (lang.t("task-no-plant")) }
                        @for p in self.plants {
                            option value=(p.key.to_string()) selected[self.typed("plant_key") == p.key.to_string()] { (p.name) }
                        }
                    }
                    (self.field_error("plant_key"))
                    fieldset {
                        legend { (lang.t("task-field-recurrence")) }
                        label for="task-recurrence_kind" { (lang.t("task-field-repeat")) }
                        select id="task-recurrence_kind" name="recurrence_kind" aria-invalid=[self.invalid("recurrence_kind")] aria-describedby=[self.described("recurrence_kind")] {
                            option value="" { (lang.t("task-repeat-none")) }
                            @for (k, _) in RECURRENCE_KINDS {
                                option value=(k) selected[*k == kind] { (choice_text(lang, "task-repeat", k)) }
                            }
                        }
                        (self.field_error("recurrence_kind"))
                        label for="task-recurrence_every_days" { (lang.t("task-field-every-days")) }
                        input id="task-recurrence_every_days" type="number" name="recurrence_every_days" min="1" max="365" inputmode="numeric"
                            value=(self.typed("recurrence_every_days"))
                            aria-invalid=[self.invalid("recurrence_every_days")] aria-describedby=[self.described("recurrence_every_days")];
                        (self.field_error("recurrence_every_days"))
                        label for="task-recurrence_end_on" { (lang.t("task-field-end-on")) }
                        input id="task-recurrence_end_on" type="date" name="recurrence_end_on" value=(self.typed("recurrence_end_on"))
                            aria-invalid=[self.invalid("recurrence_end_on")] aria-describedby=[self.described("recurrence_end_on")];
                        (self.field_error("recurrence_end_on"))
                        label for="task-recurrence_phase" { (lang.t("task-field-phase")) }
                        input id="task-recurrence_phase" type="text" name="recurrence_phase" maxlength="100" value=(self.typed("recurrence_phase"))
                            aria-invalid=[self.invalid("recurrence_phase")] aria-describedby=[self.described("recurrence_phase")];
                        (self.field_error("recurrence_phase"))
                        p.meta { (lang.t("task-recurrence-hint")) }
                    }
                    label for="task-instruction" { (lang.t("task-field-instruction")) }
                    textarea id="task-instruction" name="instruction" rows="2" maxlength="5000"
                        aria-invalid=[self.invalid("instruction")] aria-describedby=[self.described("instruction")] { (self.typed("instruction")) }
                    (self.field_error("instruction"))
                    button type="submit" { (lang.t("task-create")) }
                },
            ))
        }
    }
}

fn status_str(t: &Task) -> &'static str {
    use crate::garden::tasks::model::TaskState as S;
    match t.status {
        S::Pending => "pending",
        S::InProgress => "in_progress",
        S::Completed => "completed",
        S::Skipped => "skipped",
        S::Failed => "failed",
        S::Dormant => "dormant",
    }
}

fn recurrence_text(lang: Lang, kind: &str, every: Option<i32>, phase: Option<&str>) -> String {
    match (kind, every, phase) {
        ("every_n_days", Some(n), _) => lang.t_with("task-repeat-every", &[("days", n.into())]),
        ("phase_entry", _, Some(p)) => {
            lang.t_with("task-repeat-phase-named", &[("phase", p.to_owned().into())])
        }
        _ => choice_text(lang, "task-repeat", kind),
    }
}

/// The create form as the REST body: the flat form fields, the recurrence as its object (left
/// out when no repeat is chosen; its empty fields left out, so the reader's rules apply).
fn new_task_body(posted: &Posted) -> Map<String, Value> {
    let mut map = posted.object(&[
        ("name", Field::Text),
        ("instruction", Field::Optional),
        ("category", Field::Optional),
        ("priority", Field::Optional),
        ("plant_key", Field::Optional),
        ("due_on", Field::Optional),
    ]);
    let kind = posted.get("recurrence_kind").unwrap_or("").trim();
    if !kind.is_empty() {
        let mut rec = Map::new();
        rec.insert("kind".to_owned(), Value::String(kind.to_owned()));
        let sub = posted.object(&[
            ("recurrence_end_on", Field::Optional),
            ("recurrence_phase", Field::Optional),
        ]);
        for (k, v) in sub {
            rec.insert(k.trim_start_matches("recurrence_").to_owned(), v);
        }
        if let Some(raw) = posted
            .get("recurrence_every_days")
            .map(str::trim)
            .filter(|s| !s.is_empty())
        {
            let every = posted.object(&[("recurrence_every_days", Field::Int)]);
            let value = every
                .get("recurrence_every_days")
                .cloned()
                .unwrap_or_else(|| Value::String(raw.to_owned()));
            rec.insert("every_days".to_owned(), value);
        }
        map.insert("recurrence".to_owned(), Value::Object(rec));
    }
    map
}

/// `POST /app/g/{slug}/tasks`: creates a task (a grower's, as on REST).
#[handler]
async fn create(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some(ctx) = PageCtx::or_fail(req, depot, res).await else {
        return;
    };
    let Some(scope) = open_garden(req, res, &ctx).await else {
        return;
    };
    let Some(posted) = ctx.form_of(req, res, scope.s).await else {
        return;
    };
    let lang = ctx.lang;
    let actor = format!("user:{}", scope.s.principal.user_id);
    let outcome = async {
        scope.garden.require(Role::Grower)?;
        let new: NewTask = parse(new_task_body(&posted))?;
        tasks::create_task(&ctx.state, &scope.garden.tenant, &new, &actor, true).await
    }
    .await;
    match outcome {
        Ok(_) => see_other(
            req,
            res,
            &done(&format!("/app/g/{}/tasks", scope.slug), "created"),
        ),
        Err(err) if shown_on_form(&err) => {
            let f = failure(lang, "create".to_owned(), &err, &posted);
            show(req, res, &ctx, &scope, err.code().status(), None, Some(&f)).await;
        }
        Err(err) => ctx.fail(req, res, err),
    }
}

/// `POST /app/g/{slug}/tasks/{key}/status`: one status change (`action` as on REST).
#[handler]
async fn status_post(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some(ctx) = PageCtx::or_fail(req, depot, res).await else {
        return;
    };
    let Some(scope) = open_garden(req, res, &ctx).await else {
        return;
    };
    let Some(posted) = ctx.form_of(req, res, scope.s).await else {
        return;
    };
    let lang = ctx.lang;
    let key = req.param::<String>("key").unwrap_or_default();
    let outcome = async {
        scope.garden.require(Role::Grower)?;
        let change: StatusChange =
            parse(posted.object(&[("action", Field::Text), ("notes", Field::Optional)]))?;
        let out = tasks::change_status(&ctx.state, &scope.garden.tenant, &key, &change).await?;
        Ok::<_, AppError>((change.action, out.next_occurrence.is_some()))
    }
    .await;
    match outcome {
        Ok((action, next)) => {
            let news = match (action, next) {
                (TaskAction::Complete, true) => "complete-next",
                (a, _) => a.as_str(),
            };
            see_other(
                req,
                res,
                &done(&format!("/app/g/{}/tasks", scope.slug), news),
            );
        }
        Err(err) if shown_on_form(&err) => {
            let f = failure(lang, key, &err, &posted);
            show(req, res, &ctx, &scope, err.code().status(), None, Some(&f)).await;
        }
        Err(err) => ctx.fail(req, res, err),
    }
}
