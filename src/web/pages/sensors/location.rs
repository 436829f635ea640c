//! A location's page (`/app/g/{slug}/locations/{key}`): what the location is (its site, kind,
//! the plants standing there, the places below it) and its environment: the latest readings of
//! the sensors there and at its site, with a 7-day chart each. Every member reads it; another
//! garden's location (or none) is the 404 page.

use maud::html;
use salvo::prelude::*;
use time::OffsetDateTime;

use super::environment;
use crate::auth::Role;
use crate::garden::places::model::{LOCATION_KINDS, LocationDetail};
use crate::garden::places::service as places;
use crate::garden::sensors::service::Around;
use crate::garden::sites::service as sites;
use crate::web::pages::PageCtx;
use crate::web::pages::scope::open_garden;

/// `GET /app/g/{slug}/locations/{location_key}`.
#[handler]
pub async fn page(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some(ctx) = PageCtx::or_fail(req, depot, res).await else {
        return;
    };
    let Some(scope) = open_garden(req, res, &ctx).await else {
        return;
    };
    let key = req.param::<String>("location_key").unwrap_or_default();
    let state = &ctx.state;
    let tenant = &scope.garden.tenant;
    let read = async {
        // The location first: another garden's is a 404 before anything else is read.
        let detail: LocationDetail = places::get_location(state, tenant, &key).await?;
        let site = sites::get_site(state, tenant, &detail.location.site_key.to_string()).await?;
        let env = environment::read(
            state,
            tenant,
            Around::Location(detail.location.key),
            OffsetDateTime::now_utc(),
        )
        .await?;
        Ok::<_, crate::error::AppError>((detail, site, env))
    };
    let (detail, site, env) = match read.await {
        Ok(found) => found,
        Err(e) => return ctx.fail(req, res, e),
    };
    let lang = ctx.lang;
    let slug = &scope.slug;
    let loc = &detail.location;
    let kind = loc
        .kind
        .as_deref()
        .filter(|k| LOCATION_KINDS.iter().any(|(x, _)| x == k));
    let body = html! {
        p.crumbs { a href=(format!("/app/g/{slug}/places#location-{}", loc.key)) { (lang.t("nav-places")) } }
        h1 { (loc.name) }
        section.card aria-labelledby="sec-location" {
            h2 id="sec-location" { (lang.t("loc-about")) }
            dl.facts {
                dt { (lang.t("loc-site")) } dd { (site.name) }
                @if let Some(k) = kind {
                    dt { (lang.t("field-kind")) } dd { (lang.t(&format!("location-kind-{k}"))) }
                }
                dt { (lang.t("loc-plants")) }
                dd {
                    a href=(format!("/app/g/{slug}/plants?location={}", loc.key)) {
                        (lang.t_with("places-live-plants", &[("count", detail.live_plants.into())]))
                    }
                }
                @if !detail.children.is_empty() {
                    dt { (lang.t("loc-below")) }
                    dd {
                        @for (i, c) in detail.children.iter().enumerate() {
                            @if i > 0 { ", " }
                            a href=(format!("/app/g/{slug}/locations/{}", c.key)) { (c.name) }
                        }
                    }
                }
            }
        }
        (environment::section(lang, slug, scope.garden.role >= Role::Admin, &env))
    };
    scope.page(
        req,
        res,
        lang,
        StatusCode::OK,
        format!("{} · {}", loc.name, lang.t("nav-places")),
        body,
    );
}
