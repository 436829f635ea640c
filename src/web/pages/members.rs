//! A garden's **Settings** (`/app/g/{slug}/settings`): its members with their roles, and for
//! the garden's admins the forms that change a role, remove a member, invite an address,
//! withdraw an invitation, and create or remove a service account (its key shown once). Every
//! form calls the service function of the REST route (`platform::tenants`,
//! `platform::service_accounts`), which checks the role itself: a member who is not an admin
//! sees no admin form, and a post of one is refused with 403 and writes nothing.

use maud::{Markup, html};
use salvo::prelude::*;

use super::PageCtx;
use super::garden::role_text;
use super::scope::{GardenScope, done, local_day, open_garden, shown_on_form};
use super::settings::API_DOCS;
use crate::auth::{AccountType, Role};
use crate::directory::memberships::model::Member;
use crate::error::{AppError, ErrorCode};
use crate::http::pagination::PageRequest;
use crate::platform::service_accounts::model::{NewServiceAccount, ServiceAccount};
use crate::platform::service_accounts::service as service_accounts;
use crate::platform::tenants::invitations::{self, Invitation};
use crate::platform::tenants::model::{NewMember, RoleChange};
use crate::platform::tenants::service as tenants;
use crate::web::forms::{Field, Posted, explain, parse};
use crate::web::i18n::Lang;
use crate::web::layout::{csrf_field, notice, see_other};

pub fn router() -> Router {
    Router::with_path("g/{slug}/settings")
        .get(members_page)
        .push(Router::with_path("{what}").post(act))
        .push(Router::with_path("{what}/{key}/{action}").post(act))
}

fn news_text(lang: Lang, key: &str) -> Option<String> {
    let id = match key {
        "invited" => "members-done-invited",
        "withdrawn" => "members-done-withdrawn",
        "role" => "members-done-role",
        "removed" => "members-done-removed",
        "account-removed" => "members-done-account-removed",
        _ => return None,
    };
    Some(lang.t(id))
}

#[derive(Default)]
struct Extras<'a> {
    news: Option<String>,
    errors: Vec<String>,
    /// A service account just made: its key's secret, shown this once.
    new_account: Option<&'a ServiceAccount>,
}

/// What the page lists (the admin-only lists are empty for everyone else).
struct MembersData {
    members: Vec<Member>,
    invitations: Vec<Invitation>,
    accounts: Vec<ServiceAccount>,
}

async fn read(ctx: &PageCtx, scope: &GardenScope<'_>) -> Result<MembersData, AppError> {
    let state = &ctx.state;
    let principal = &scope.s.principal;
    let members = tenants::members(state, principal, &scope.slug).await?;
    let (invitations, accounts) = if scope.garden.role >= Role::Admin {
        let page = PageRequest {
            skip: 0,
            limit: service_accounts::LIST_MAX_LIMIT,
        };
        tokio::try_join!(
            invitations::of_tenant(state, principal, &scope.slug),
            service_accounts::list(state, principal, &scope.garden, page),
        )
        .map(|(i, a)| (i, a.items))?
    } else {
        (Vec::new(), Vec::new())
    };
    Ok(MembersData {
        members,
        invitations,
        accounts,
    })
}

#[handler]
async fn members_page(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some(ctx) = PageCtx::or_fail(req, depot, res).await else {
        return;
    };
    let Some(scope) = open_garden(req, res, &ctx).await else {
        return;
    };
    let extras = Extras {
        news: req
            .query::<String>("done")
            .and_then(|d| news_text(ctx.lang, &d)),
        ..Extras::default()
    };
    show(req, res, &ctx, &scope, StatusCode::OK, &extras).await;
}

async fn show(
    req: &Request,
    res: &mut Response,
    ctx: &PageCtx,
    scope: &GardenScope<'_>,
    status: StatusCode,
    extras: &Extras<'_>,
) {
    let data = match read(ctx, scope).await {
        Ok(d) => d,
        Err(e) => return ctx.fail(req, res, e),
    };
    let lang = ctx.lang;
    let body = body(lang, scope, &data, extras);
    scope.page(
        req,
        res,
        lang,
        status,
        format!("{} · {}", lang.t("members-title"), scope.garden.tenant.name),
        body,
    );
}

fn role_select(lang: Lang, id: &str, current: Role, up_to: Role) -> Markup {
    html! {
        select id=(id) name="role" {
            @for (name, role) in Role::ALL {
                @if *role <= up_to {
                    option value=(name) selected[*role == current] { (role_text(lang, *role)) }
                }
            }
        }
    }
}

fn body(lang: Lang, scope: &GardenScope<'_>, data: &MembersData, extras: &Extras<'_>) -> Markup {
    let base = format!("/app/g/{}/settings", scope.slug);
    let csrf = &scope.s.csrf;
    let me = scope.s.principal.user_id;
    let own_role = scope.garden.role;
    let admin = own_role >= Role::Admin;
    let people: Vec<&Member> = data
        .members
        .iter()
        .filter(|m| m.account_type == AccountType::User)
        .collect();
    html! {
        h1 { (lang.t("members-title")) " · " (scope.garden.tenant.name) }
        p.meta { (lang.t("members-your-role")) ": " (role_text(lang, own_role)) }
        @if let Some(text) = &extras.news { (notice("ok", text)) }
        @for e in &extras.errors { (notice("bad", e)) }
        section.card aria-labelledby="sec-members" {
            h2 id="sec-members" { (lang.t("members-members")) }
            ul.items {
                @for m in &people {
                    li id=(format!("member-{}", m.user_key)) {
                        span.what {
                            strong { (m.display_name) }
                            @if m.user_key == me { " " span.meta { (lang.t("members-you")) } }
                            @if let Some(email) = &m.email { br; span.meta { (email) } }
                        }
                        @if admin && m.user_key != me {
                            form.inline method="post" action=(format!("{base}/members/{}/role", m.user_key)) {
                                (csrf_field(csrf))
                                label.visually-hidden for=(format!("role-{}", m.user_key)) { (lang.t_with("members-role-of", &[("name", m.display_name.clone().into())])) }
                                (role_select(lang, &format!("role-{}", m.user_key), m.role, own_role))
                                button.secondary type="submit" { (lang.t("members-change-role")) }
                            }
                            form.inline method="post" action=(format!("{base}/members/{}/remove", m.user_key)) {
                                (csrf_field(csrf))
                                button.secondary type="submit" aria-label=(lang.t_with("members-remove-named", &[("name", m.display_name.clone().into())])) { (lang.t("members-remove")) }
                            }
                        } @else {
                            span.meta { (role_text(lang, m.role)) }
                        }
                    }
                }
            }
            @if !admin {
                p.meta { (lang.t("members-admin-only")) }
            }
            form method="post" action=(format!("{base}/members/{me}/remove")) {
                (csrf_field(csrf))
                button.secondary type="submit" { (lang.t("members-leave")) }
            }
        }
        @if admin {
            section.card aria-labelledby="sec-invite" {
                h2 id="sec-invite" { (lang.t("members-invitations")) }
                @if data.invitations.is_empty() {
                    p.empty { (lang.t("members-invitations-none")) }
                } @else {
                    ul.items {
                        @for i in &data.invitations {
                            li {
                                span.what { (i.email) br; span.meta { (role_text(lang, i.role)) " · " (lang.t("members-invitation-until")) " " (lang.date(local_day(scope.s, i.expires_at))) } }
                                form.inline method="post" action=(format!("{base}/invitations/{}/withdraw", i.key)) {
                                    (csrf_field(csrf))
                                    button.secondary type="submit" aria-label=(lang.t_with("members-withdraw-named", &[("email", i.email.clone().into())])) { (lang.t("members-withdraw")) }
                                }
                            }
                        }
                    }
                }
                form.stack method="post" action=(format!("{base}/invitations")) {
                    (csrf_field(csrf))
                    label for="invite-email" { (lang.t("field-email")) }
                    input id="invite-email" type="email" name="email" required autocomplete="off";
                    label for="invite-role" { (lang.t("field-role")) }
                    (role_select(lang, "invite-role", Role::Grower, own_role))
                    button type="submit" { (lang.t("members-invite")) }
                }
            }
            section.card aria-labelledby="sec-accounts" {
                h2 id="sec-accounts" { (lang.t("members-service-accounts")) }
                p.meta { (lang.t("members-service-accounts-intro")) }
                @if let Some(account) = extras.new_account {
                    @if let Some(raw) = &account.raw_key {
                        div.secret role="status" {
                            p { strong { (lang.t("settings-key-shown-once")) } }
                            label for="new-account-key" { (account.name) }
                            input id="new-account-key" type="text" readonly value=(raw);
                        }
                    }
                }
                @if data.accounts.is_empty() {
                    p.empty { (lang.t("members-service-accounts-none")) }
                } @else {
                    ul.items {
                        @for a in &data.accounts {
                            li id=(format!("account-{}", a.key)) {
                                span.what {
                                    strong { (a.name) } " " span.meta { (role_text(lang, a.role)) }
                                    br;
                                    span.meta {
                                        @for k in &a.api_keys { code { (k.key_prefix) "…" } " " }
                                        @if let Some(used) = a.last_used_at { " · " (lang.t("settings-key-used")) " " (lang.date(local_day(scope.s, used))) }
                                    }
                                }
                                form.inline method="post" action=(format!("{base}/service-accounts/{}/remove", a.key)) {
                                    (csrf_field(csrf))
                                    button.secondary type="submit" aria-label=(lang.t_with("members-remove-named", &[("name", a.name.clone().into())])) { (lang.t("members-remove")) }
                                }
                            }
                        }
                    }
                }
                form.stack method="post" action=(format!("{base}/service-accounts")) {
                    (csrf_field(csrf))
                    label for="account-name" { (lang.t("field-place-name")) }
                    input id="account-name" type="text" name="name" required maxlength="100";
                    label for="account-role" { (lang.t("field-role")) }
                    (role_select(lang, "account-role", Role::Viewer, own_role))
                    button type="submit" { (lang.t("members-create-account")) }
                }
            }
        }
        section.card aria-labelledby="sec-more" {
            h2 id="sec-more" { (lang.t("settings-more")) }
            p { (lang.t("settings-more-intro")) " " a href=(API_DOCS) { (lang.t("settings-api-docs")) } }
            p { a href="/app/settings" { (lang.t("members-personal-settings")) } }
        }
    }
}

fn label(lang: Lang) -> impl Fn(&str) -> Option<String> {
    move |field: &str| {
        let id = match field {
            "email" => "field-email",
            "role" => "field-role",
            "name" => "field-place-name",
            _ => return None,
        };
        Some(lang.t(id))
    }
}

enum Outcome {
    Done(&'static str),
    /// The person left the garden: back to their gardens.
    Left,
    Account(ServiceAccount),
}

async fn perform(
    ctx: &PageCtx,
    scope: &GardenScope<'_>,
    posted: &Posted,
    what: &str,
    key: &str,
    action: Option<&str>,
) -> Result<Outcome, AppError> {
    let state = &ctx.state;
    let principal = &scope.s.principal;
    let slug = &scope.slug;
    match (what, action) {
        ("invitations", None) => {
            let new: NewMember =
                parse(posted.object(&[("email", Field::Text), ("role", Field::Text)]))?;
            invitations::invite(state, principal, slug, &new).await?;
            Ok(Outcome::Done("invited"))
        }
        ("invitations", Some("withdraw")) => {
            invitations::withdraw(state, principal, slug, key).await?;
            Ok(Outcome::Done("withdrawn"))
        }
        ("members", Some("role")) => {
            let RoleChange(role) = parse(posted.object(&[("role", Field::Text)]))?;
            tenants::change_role(state, principal, slug, key, role).await?;
            Ok(Outcome::Done("role"))
        }
        ("members", Some("remove")) => {
            tenants::remove_member(state, principal, slug, key).await?;
            if key == principal.user_id.to_string() {
                Ok(Outcome::Left)
            } else {
                Ok(Outcome::Done("removed"))
            }
        }
        ("service-accounts", None) => {
            let new: NewServiceAccount =
                parse(posted.object(&[("name", Field::Text), ("role", Field::Text)]))?;
            let made = service_accounts::create(state, principal, &scope.garden, &new).await?;
            Ok(Outcome::Account(made))
        }
        ("service-accounts", Some("remove")) => {
            service_accounts::remove(state, principal, &scope.garden, key).await?;
            Ok(Outcome::Done("account-removed"))
        }
        _ => Err(AppError::not_found("page")),
    }
}

/// Every form of the page: `POST /app/g/{slug}/settings/{what}[/{key}/{action}]`.
#[handler]
async fn act(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some(ctx) = PageCtx::or_fail(req, depot, res).await else {
        return;
    };
    let Some(scope) = open_garden(req, res, &ctx).await else {
        return;
    };
    let lang = ctx.lang;
    let Some(posted) = ctx.form_of(req, res, scope.s).await else {
        return;
    };
    let what = req.param::<String>("what").unwrap_or_default();
    let key = req.param::<String>("key").unwrap_or_default();
    let action = req.param::<String>("action");
    let base = format!("/app/g/{}/settings", scope.slug);
    match perform(&ctx, &scope, &posted, &what, &key, action.as_deref()).await {
        Ok(Outcome::Done(news)) => see_other(req, res, &done(&base, news)),
        Ok(Outcome::Left) => see_other(req, res, "/app"),
        Ok(Outcome::Account(account)) => {
            let extras = Extras {
                news: Some(lang.t("members-done-account-created")),
                new_account: Some(&account),
                ..Extras::default()
            };
            show(req, res, &ctx, &scope, StatusCode::CREATED, &extras).await;
        }
        Err(err) if shown_on_form(&err) => {
            let errors = match (what.as_str(), err.code()) {
                ("members", ErrorCode::StateConflict) => vec![lang.t("members-last-admin")],
                ("invitations", ErrorCode::DuplicateEntry) => {
                    vec![lang.t("members-invite-duplicate")]
                }
                _ => explain(lang, &err, &label(lang)),
            };
            let extras = Extras {
                errors,
                ..Extras::default()
            };
            show(req, res, &ctx, &scope, err.code().status(), &extras).await;
        }
        Err(err) => ctx.fail(req, res, err),
    }
}
