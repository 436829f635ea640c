//! A new garden's **first steps** on Today: the onboarding steps with where each is done, and
//! the catalogue's **starter kits** as a form (`POST /app/g/{slug}/start/kit`) that sets the
//! garden up through `onboarding::service::apply_kit`, the function `POST
//! /onboarding/starter-kit` calls: the site, one location and a plant per species in one
//! transaction, refused a second time. Administrators apply a kit, as on REST.

use maud::{Markup, html};
use salvo::prelude::*;
use serde_json::Value;

use super::PageCtx;
use super::scope::{open_garden, shown_on_form};
use crate::auth::Role;
use crate::catalog::engine::service::{self as catalog, ListParams};
use crate::catalog::kits::model::KIT;
use crate::error::{AppError, ErrorCode};
use crate::garden::onboarding::model::{ApplyKit, Status};
use crate::garden::onboarding::service as onboarding;
use crate::http::pagination::PageRequest;
use crate::platform::access::TenantCtx;
use crate::web::forms::{Field, explain, parse};
use crate::web::i18n::Lang;
use crate::web::layout::{csrf_field, notice, see_other};

pub fn router() -> Router {
    Router::with_path("g/{slug}/start/kit").post(apply)
}

/// What the first-steps card shows: the steps, and the kits while none is applied and the
/// garden has no plant yet.
pub struct FirstSteps {
    pub status: Status,
    pub kits: Vec<Value>,
}

/// The garden's onboarding state, read by Today while the garden has no site or no live
/// plant yet (`onboarding::lacks_site_or_plant`, part of Today's garden data: a garden in use
/// is past its first steps, zone or not, and costs Today nothing here).
pub async fn read(
    ctx: &PageCtx,
    garden: &TenantCtx,
    user: uuid::Uuid,
) -> Result<FirstSteps, AppError> {
    let status = onboarding::status(&ctx.state, &garden.tenant, user).await?;
    let plants = step_done(&status, "plants");
    let kits = if status.kit.is_none() && !plants {
        catalog::list(
            &ctx.state,
            &KIT,
            &ListParams {
                q: None,
                filters: Vec::new(),
            },
            None,
            PageRequest { skip: 0, limit: 50 },
        )
        .await?
        .items
    } else {
        Vec::new()
    };
    Ok(FirstSteps { status, kits })
}

fn step_done(status: &Status, step: &str) -> bool {
    status.steps.iter().any(|s| s.step == step && s.done)
}

/// Where a step is done in the pages.
fn step_link(slug: &str, step: &str) -> Option<String> {
    match step {
        "site" => Some(format!("/app/g/{slug}/places")),
        "plants" => Some(format!("/app/g/{slug}/plants/new")),
        "calendar_feed" => Some(format!("/app/g/{slug}/calendar")),
        "starter_kit" | "hardiness_zone" => Some("#start-kit".to_owned()),
        _ => None,
    }
}

fn text_of<'v>(kit: &'v Value, lang: Lang, field: &str) -> Option<&'v str> {
    let own = format!("{field}_{}", lang.code());
    kit.get(&own)
        .and_then(Value::as_str)
        .or_else(|| kit.get(format!("{field}_en")).and_then(Value::as_str))
}

/// The hardiness zones a kit form offers (USDA 1a … 13b, as the API takes them).
fn zones() -> impl Iterator<Item = String> {
    (1..=13).flat_map(|n| ["a", "b"].into_iter().map(move |h| format!("{n}{h}")))
}

/// The card: the steps (done ones marked), then the kits form for an administrator.
pub fn card(
    lang: Lang,
    slug: &str,
    first: &FirstSteps,
    csrf: &str,
    role: Role,
    refused: &[String],
) -> Markup {
    let admin = role >= Role::Admin;
    html! {
        section.card aria-labelledby="sec-start" {
            h2 id="sec-start" { (lang.t("start-title")) }
            p { (lang.t("start-intro")) }
            ol.steps {
                @for step in &first.status.steps {
                    li {
                        @let label = lang.t(&format!("start-step-{}", step.step.replace('_', "-")));
                        @match (step.done, step_link(slug, step.step)) {
                            (true, _) => { s { (label) } " " span.meta { (lang.t("start-done")) } }
                            (false, Some(href)) => { a href=(href) { (label) } }
                            (false, None) => { (label) }
                        }
                    }
                }
            }
            @if !first.kits.is_empty() {
                h3 id="start-kit" { (lang.t("start-kit-title")) }
                @for line in refused { (notice("bad", line)) }
                @if admin {
                    form method="post" action=(format!("/app/g/{slug}/start/kit")) {
                        (csrf_field(csrf))
                        fieldset {
                            legend { (lang.t("start-kit-choose")) }
                            @for (i, kit) in first.kits.iter().enumerate() {
                                @let key = kit.get("key").and_then(Value::as_str).unwrap_or_default();
                                @let id = format!("kit-{i}");
                                div.choice {
                                    input type="radio" name="kit_key" id=(id) value=(key) required;
                                    label for=(id) {
                                        strong { (text_of(kit, lang, "name").unwrap_or_default()) }
                                        @if let Some(d) = kit.get("difficulty").and_then(Value::as_str) {
                                            " · " (lang.t(&format!("start-difficulty-{d}")))
                                        }
                                    }
                                    @if let Some(d) = text_of(kit, lang, "description") {
                                        p.meta { (d) }
                                    }
                                }
                            }
                        }
                        label for="kit-zone" { (lang.t("start-kit-zone")) }
                        select id="kit-zone" name="hardiness_zone" {
                            option value="" { (lang.t("start-kit-zone-none")) }
                            @for z in zones() { option value=(z) { (z) } }
                        }
                        label for="kit-site" { (lang.t("start-kit-site")) }
                        input id="kit-site" name="site_name" maxlength="120";
                        button type="submit" { (lang.t("start-kit-apply")) }
                    }
                } @else {
                    p.meta { (lang.t("start-kit-admin-only")) }
                }
            }
        }
    }
}

/// `POST /app/g/{slug}/start/kit` (`kit_key`, `hardiness_zone`, `site_name`): the kit applied,
/// back to Today; a refusal (no kit chosen, one applied already) on Today with the card.
#[handler]
async fn apply(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some(ctx) = PageCtx::or_fail(req, depot, res).await else {
        return;
    };
    let Some(scope) = open_garden(req, res, &ctx).await else {
        return;
    };
    let Some(posted) = ctx.form_of(req, res, scope.s).await else {
        return;
    };
    let outcome = async {
        scope.garden.require(Role::Admin)?;
        let body: ApplyKit = parse(posted.object(&[
            ("kit_key", Field::Text),
            ("hardiness_zone", Field::Optional),
            ("site_name", Field::Optional),
        ]))?;
        let actor = format!("user:{}", scope.s.principal.user_id);
        onboarding::apply_kit(&ctx.state, &scope.garden.tenant, &body, &actor).await
    }
    .await;
    let err = match outcome {
        Ok(_) => return see_other(req, res, &format!("/app/g/{}?done=kit", scope.slug)),
        Err(err) if !shown_on_form(&err) => return ctx.fail(req, res, err),
        Err(err) => err,
    };
    let lines = if err.code() == ErrorCode::StateConflict {
        vec![ctx.lang.t("start-kit-applied-already")]
    } else {
        explain(ctx.lang, &err, &|field| match field {
            "kit_key" => Some(ctx.lang.t("start-kit-choose")),
            "hardiness_zone" => Some(ctx.lang.t("start-kit-zone")),
            "site_name" => Some(ctx.lang.t("start-kit-site")),
            _ => None,
        })
    };
    let status = err.code().status();
    super::garden::show_today(req, res, &ctx, scope.s, &scope.slug, status, None, &lines).await;
}
