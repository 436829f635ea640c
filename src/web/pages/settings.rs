//! The person's own **Settings** (`/app/settings`): profile (name), preferences (language,
//! time zone, notifications), password and API keys, each written by the service function its
//! REST route calls (`/users/me`, `/user-preferences`, `/users/me/password`,
//! `/auth/api-keys`), with its reader and its rules. A new key's secret is shown once, in the
//! answer to the form (never in a URL); a password change ends every session, this one too,
//! as on REST. The garden's members, invitations and service accounts are on the garden's
//! settings page (`members.rs`); what has no page yet is linked to the API documentation.

use maud::{Markup, html};
use salvo::prelude::*;

use super::PageCtx;
use super::scope::{done, local_day, open_personal, page, shown_on_form};
use crate::auth::accounts::service as accounts;
use crate::auth::api_keys::model::{ApiKey, NewApiKey};
use crate::auth::api_keys::service as api_keys;
use crate::directory::users::model::{PasswordForm, ProfileForm};
use crate::error::{AppError, ErrorCode};
use crate::platform::preferences::model::DIGEST;
use crate::platform::tenants::model::Tenant;
use crate::web::forms::{Field, Posted, explain, parse};
use crate::web::i18n::Lang;
use crate::web::layout::{csrf_field, notice, see_other};
use crate::web::session::{self, WebSession};

pub fn router() -> Router {
    Router::with_path("settings")
        .get(settings_page)
        .push(Router::with_path("{what}").post(act))
        .push(Router::with_path("api-keys/{key}/revoke").post(revoke_key))
}

/// Where the API documentation (Swagger UI) is served.
pub const API_DOCS: &str = "/api/v1/docs";

fn news_text(lang: Lang, key: &str) -> Option<String> {
    let id = match key {
        "profile" => "settings-done-profile",
        "preferences" => "settings-done-preferences",
        "key-revoked" => "settings-done-key-revoked",
        _ => return None,
    };
    Some(lang.t(id))
}

/// What the page shows besides the forms.
#[derive(Default)]
struct Extras<'a> {
    news: Option<String>,
    errors: Vec<String>,
    /// A key just made: its secret, shown this once.
    new_key: Option<&'a ApiKey>,
}

#[handler]
async fn settings_page(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some(ctx) = PageCtx::or_fail(req, depot, res).await else {
        return;
    };
    let Some((s, gardens)) = open_personal(req, res, &ctx).await else {
        return;
    };
    let extras = Extras {
        news: req
            .query::<String>("done")
            .and_then(|d| news_text(ctx.lang, &d)),
        ..Extras::default()
    };
    show(req, res, &ctx, s, &gardens, StatusCode::OK, &extras).await;
}

async fn show(
    req: &Request,
    res: &mut Response,
    ctx: &PageCtx,
    s: &WebSession,
    gardens: &[Tenant],
    status: StatusCode,
    extras: &Extras<'_>,
) {
    let keys = match api_keys::list(&ctx.state, &s.principal).await {
        Ok(k) => k,
        Err(e) => return ctx.fail(req, res, e),
    };
    let lang = ctx.lang;
    let body = body(lang, s, gardens, &keys, extras);
    page(
        req,
        res,
        lang,
        s,
        gardens,
        None,
        status,
        lang.t("nav-settings"),
        body,
    );
}

fn digest_text(lang: Lang, value: &str) -> String {
    match value {
        "off" | "daily" | "weekly" => lang.t(&format!("settings-digest-{value}")),
        other => other.to_owned(),
    }
}

fn body(
    lang: Lang,
    s: &WebSession,
    gardens: &[Tenant],
    keys: &[ApiKey],
    extras: &Extras<'_>,
) -> Markup {
    let csrf = &s.csrf;
    let prefs = &s.prefs;
    let active: Vec<&ApiKey> = keys.iter().filter(|k| k.revoked_at.is_none()).collect();
    html! {
        h1 { (lang.t("nav-settings")) }
        @if let Some(text) = &extras.news { (notice("ok", text)) }
        @for e in &extras.errors { (notice("bad", e)) }
        section.card aria-labelledby="sec-profile" {
            h2 id="sec-profile" { (lang.t("settings-profile")) }
            form.stack method="post" action="/app/settings/profile" {
                (csrf_field(csrf))
                label for="display_name" { (lang.t("field-name")) }
                input id="display_name" type="text" name="display_name" value=(s.user.display_name) required maxlength="120" autocomplete="name";
                @if let Some(email) = &s.user.email {
                    p.meta { (lang.t("field-email")) ": " (email) }
                }
                button type="submit" { (lang.t("settings-save")) }
            }
        }
        section.card aria-labelledby="sec-prefs" {
            h2 id="sec-prefs" { (lang.t("settings-preferences")) }
            form.stack method="post" action="/app/settings/preferences" {
                (csrf_field(csrf))
                label for="locale" { (lang.t("language")) }
                select id="locale" name="locale" {
                    @for l in Lang::ALL {
                        option value=(l.code()) selected[l == lang] lang=(l.code()) { (l.own_name()) }
                    }
                }
                label for="timezone" { (lang.t("field-timezone")) }
                input id="timezone" type="text" name="timezone" value=(prefs.timezone) required maxlength="64" aria-describedby="timezone-hint" autocomplete="off";
                p.meta id="timezone-hint" { (lang.t("settings-timezone-hint")) }
                fieldset {
                    legend { (lang.t("settings-notifications")) }
                    label.check for="notify_email" {
                        input id="notify_email" type="checkbox" name="notify_email" value="true" checked[prefs.notify_email];
                        (lang.t("field-notify-email"))
                    }
                    label.check for="notify_care_due" {
                        input id="notify_care_due" type="checkbox" name="notify_care_due" value="true" checked[prefs.notify_care_due];
                        (lang.t("field-notify-care-due"))
                    }
                    label.check for="notify_push" {
                        input id="notify_push" type="checkbox" name="notify_push" value="true" checked[prefs.notify_push];
                        (lang.t("field-notify-push"))
                    }
                    label for="notify_digest" { (lang.t("field-notify-digest")) }
                    select id="notify_digest" name="notify_digest" {
                        @for (d, _) in DIGEST {
                            option value=(d) selected[prefs.notify_digest == *d] { (digest_text(lang, d)) }
                        }
                    }
                    label for="digest_hour" { (lang.t("field-digest-hour")) }
                    input id="digest_hour" type="number" name="digest_hour" min="0" max="23" value=(prefs.digest_hour) required;
                }
                button type="submit" { (lang.t("settings-save")) }
            }
        }
        section.card aria-labelledby="sec-password" {
            h2 id="sec-password" { (lang.t("settings-password")) }
            p.meta { (lang.t("settings-password-intro")) }
            form.stack method="post" action="/app/settings/password" {
                (csrf_field(csrf))
                label for="current_password" { (lang.t("field-current-password")) }
                input id="current_password" type="password" name="current_password" required autocomplete="current-password";
                label for="new_password" { (lang.t("field-new-password")) }
                input id="new_password" type="password" name="new_password" required minlength="10" autocomplete="new-password" aria-describedby="new-password-hint";
                p.meta id="new-password-hint" { (lang.t("password-hint")) }
                button type="submit" { (lang.t("settings-password-change")) }
            }
        }
        section.card aria-labelledby="sec-keys" {
            h2 id="sec-keys" { (lang.t("settings-keys")) }
            p.meta { (lang.t("settings-keys-intro")) }
            @if let Some(key) = extras.new_key {
                @if let Some(raw) = &key.raw_key {
                    div.secret role="status" {
                        p { strong { (lang.t("settings-key-shown-once")) } }
                        label for="new-key" { (key.label) }
                        input id="new-key" type="text" readonly value=(raw);
                    }
                }
            }
            @if active.is_empty() {
                p.empty { (lang.t("settings-keys-none")) }
            } @else {
                ul.items {
                    @for k in &active {
                        li id=(format!("key-{}", k.key)) {
                            span.what {
                                strong { (k.label) } " " code { (k.key_prefix) "…" }
                                br;
                                span.meta {
                                    (k.tenant_scope.clone().unwrap_or_else(|| lang.t("settings-key-all-gardens")))
                                    " · " (lang.t("settings-key-created")) " " (lang.date(local_day(s, k.created_at)))
                                    @if let Some(used) = k.last_used_at { " · " (lang.t("settings-key-used")) " " (lang.date(local_day(s, used))) }
                                }
                            }
                            form method="post" action=(format!("/app/settings/api-keys/{}/revoke", k.key)) {
                                (csrf_field(csrf))
                                button.secondary type="submit" aria-label=(lang.t_with("settings-key-revoke-named", &[("label", k.label.clone().into())])) { (lang.t("settings-key-revoke")) }
                            }
                        }
                    }
                }
            }
            details.add {
                summary { (lang.t("settings-key-create")) }
                form.stack method="post" action="/app/settings/api-keys" {
                    (csrf_field(csrf))
                    label for="key-label" { (lang.t("field-label")) }
                    input id="key-label" type="text" name="label" required maxlength="100";
                    label for="key-scope" { (lang.t("field-key-scope")) }
                    select id="key-scope" name="tenant_scope" {
                        option value="" { (lang.t("settings-key-all-gardens")) }
                        @for g in gardens {
                            option value=(g.slug) { (g.name) }
                        }
                    }
                    button type="submit" { (lang.t("settings-key-create")) }
                }
            }
        }
        section.card aria-labelledby="sec-gardens" {
            h2 id="sec-gardens" { (lang.t("settings-gardens")) }
            ul.items {
                @for g in gardens {
                    li {
                        span.what { (g.name) }
                        a href=(format!("/app/g/{}/settings", g.slug)) { (lang.t("settings-garden-members")) }
                    }
                }
            }
        }
        section.card aria-labelledby="sec-more" {
            h2 id="sec-more" { (lang.t("settings-more")) }
            p { (lang.t("settings-more-intro")) " " a href=(API_DOCS) { (lang.t("settings-api-docs")) } }
        }
    }
}

/// The labels of the page's fields, for error sentences.
fn label(lang: Lang) -> impl Fn(&str) -> Option<String> {
    move |field: &str| {
        let id = match field {
            "display_name" => "field-name",
            "locale" => "language",
            "timezone" => "field-timezone",
            "notify_digest" => "field-notify-digest",
            "digest_hour" => "field-digest-hour",
            "current_password" => "field-current-password",
            "new_password" => "field-new-password",
            "label" => "field-label",
            "tenant_scope" => "field-key-scope",
            _ => return None,
        };
        Some(lang.t(id))
    }
}

/// The sentences of a refusal; a wrong current password is said plainly.
fn refusal(lang: Lang, err: &AppError) -> Vec<String> {
    let wrong_password = err.code() == ErrorCode::ValidationError
        && err
            .details()
            .iter()
            .any(|d| d.field == "body.current_password" && d.code == "value_error");
    if wrong_password {
        return vec![lang.t("settings-password-wrong")];
    }
    explain(lang, err, &label(lang))
}

/// What a form of the page led to.
enum Outcome {
    /// Back to the page with this news.
    Done(&'static str),
    /// The password changed: every session ended, this one too.
    SignedOut,
    /// A new key, shown once.
    Key(ApiKey),
}

async fn perform(
    ctx: &PageCtx,
    s: &WebSession,
    posted: &Posted,
    what: &str,
) -> Result<Outcome, AppError> {
    let state = &ctx.state;
    let user = s.principal.user_id;
    match what {
        "profile" => {
            let form: ProfileForm = parse(posted.object(&[("display_name", Field::Text)]))?;
            crate::platform::users::service::update_profile(state, user, &form).await?;
            Ok(Outcome::Done("profile"))
        }
        "preferences" => {
            let changes = posted.object(&[
                ("locale", Field::Text),
                ("timezone", Field::Text),
                ("notify_email", Field::Checkbox),
                ("notify_push", Field::Checkbox),
                ("notify_care_due", Field::Checkbox),
                ("notify_digest", Field::Text),
                ("digest_hour", Field::Int),
            ]);
            crate::platform::preferences::service::patch(state, user, changes).await?;
            Ok(Outcome::Done("preferences"))
        }
        "password" => {
            let form: PasswordForm = parse(posted.object(&[
                ("current_password", Field::Text),
                ("new_password", Field::Text),
            ]))?;
            accounts::change_password(state, user, &form.current, &form.new).await?;
            Ok(Outcome::SignedOut)
        }
        "api-keys" => {
            let new: NewApiKey =
                parse(posted.object(&[("label", Field::Text), ("tenant_scope", Field::Optional)]))?;
            Ok(Outcome::Key(
                api_keys::create(state, &s.principal, &new).await?,
            ))
        }
        _ => Err(AppError::not_found("page")),
    }
}

/// `POST /app/settings/profile|preferences|password|api-keys`.
#[handler]
async fn act(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some(ctx) = PageCtx::or_fail(req, depot, res).await else {
        return;
    };
    let Some((s, gardens)) = open_personal(req, res, &ctx).await else {
        return;
    };
    let lang = ctx.lang;
    let Some(posted) = ctx.form_of(req, res, s).await else {
        return;
    };
    let what = req.param::<String>("what").unwrap_or_default();
    match perform(&ctx, s, &posted, &what).await {
        Ok(Outcome::Done(news)) => {
            if news == "preferences"
                && let Some(chosen) = posted.get("locale").and_then(Lang::parse)
            {
                session::remember_lang(res, ctx.state.config(), chosen);
            }
            see_other(req, res, &done("/app/settings", news));
        }
        Ok(Outcome::SignedOut) => {
            session::clear(res, ctx.state.config());
            see_other(req, res, "/app/login?done=reset");
        }
        Ok(Outcome::Key(key)) => {
            let extras = Extras {
                news: Some(lang.t("settings-done-key-created")),
                new_key: Some(&key),
                ..Extras::default()
            };
            show(req, res, &ctx, s, &gardens, StatusCode::CREATED, &extras).await;
        }
        Err(err) if shown_on_form(&err) => {
            let extras = Extras {
                errors: refusal(lang, &err),
                ..Extras::default()
            };
            show(req, res, &ctx, s, &gardens, err.code().status(), &extras).await;
        }
        Err(err) => ctx.fail(req, res, err),
    }
}

/// `POST /app/settings/api-keys/{key}/revoke`: the key stops working at once.
#[handler]
async fn revoke_key(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    // Checks the form's CSRF value against this session (nothing else is posted).
    let Some((ctx, _)) = PageCtx::posted(req, depot, res).await else {
        return;
    };
    let Some((s, _)) = open_personal(req, res, &ctx).await else {
        return;
    };
    let key = req.param::<String>("key").unwrap_or_default();
    match api_keys::revoke(&ctx.state, &s.principal, &key).await {
        Ok(()) => see_other(req, res, &done("/app/settings", "key-revoked")),
        Err(err) => ctx.fail(req, res, err),
    }
}
