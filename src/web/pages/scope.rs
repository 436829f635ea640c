//! What the places, calendar and settings pages share: a signed-in person's page of one of
//! their gardens (another garden is the same 404 as one that does not exist), its frame, and
//! the answer to a refused form.

use maud::Markup;
use salvo::prelude::*;

use super::garden::{gardens_of, signed_in};
use super::{PageCtx, here};
use crate::error::AppError;
use crate::platform::access::{TenantCtx, resolve_for};
use crate::platform::tenants::model::Tenant;
use crate::web::i18n::Lang;
use crate::web::layout::{self, Frame};
use crate::web::session::WebSession;

/// A garden's page: the person, the garden with their role in it, and their gardens.
pub struct GardenScope<'a> {
    pub s: &'a WebSession,
    pub slug: String,
    pub garden: TenantCtx,
    pub gardens: Vec<Tenant>,
}

impl GardenScope<'_> {
    /// Writes a whole page of this garden in the frame (see [`page`]).
    pub fn page(
        &self,
        req: &Request,
        res: &mut Response,
        lang: Lang,
        status: StatusCode,
        title: String,
        body: Markup,
    ) {
        page(
            req,
            res,
            lang,
            self.s,
            &self.gardens,
            Some(&self.slug),
            status,
            title,
            body,
        );
    }
}

/// The signed-in person and the garden of the path, or `None` once the sign-in redirect or the
/// error page (404 for a garden that is not theirs) is written.
pub async fn open_garden<'a>(
    req: &Request,
    res: &mut Response,
    ctx: &'a PageCtx,
) -> Option<GardenScope<'a>> {
    let s = signed_in(req, res, ctx)?;
    let slug = req.param::<String>("slug").unwrap_or_default();
    let garden = match resolve_for(&ctx.state, &s.principal, &slug).await {
        Ok(g) => g,
        Err(e) => {
            ctx.fail(req, res, e);
            return None;
        }
    };
    let gardens = match gardens_of(ctx, s).await {
        Ok(g) => g,
        Err(e) => {
            ctx.fail(req, res, e);
            return None;
        }
    };
    Some(GardenScope {
        s,
        slug,
        garden,
        gardens,
    })
}

/// The signed-in person's own pages (settings): the person and their gardens.
pub async fn open_personal<'a>(
    req: &Request,
    res: &mut Response,
    ctx: &'a PageCtx,
) -> Option<(&'a WebSession, Vec<Tenant>)> {
    let s = signed_in(req, res, ctx)?;
    match gardens_of(ctx, s).await {
        Ok(g) => Some((s, g)),
        Err(e) => {
            ctx.fail(req, res, e);
            None
        }
    }
}

/// Writes a whole page in the frame.
#[allow(clippy::too_many_arguments)]
pub fn page(
    req: &Request,
    res: &mut Response,
    lang: Lang,
    s: &WebSession,
    gardens: &[Tenant],
    garden: Option<&str>,
    status: StatusCode,
    title: String,
    body: Markup,
) {
    let frame = Frame {
        lang,
        title,
        session: Some(s),
        gardens,
        garden,
        here: here(req),
        csrf: s.csrf.clone(),
    };
    layout::render(res, status, layout::document(&frame, body));
}

/// Whether a refusal is answered with the form again (what was typed is wrong or conflicts)
/// rather than with the error page (not found, not allowed, a failure of ours).
pub fn shown_on_form(err: &AppError) -> bool {
    let status = err.code().status();
    status.is_client_error()
        && status != StatusCode::NOT_FOUND
        && status != StatusCode::FORBIDDEN
        && status != StatusCode::UNAUTHORIZED
}

/// The calendar day of a moment where the person lives (their `timezone` preference).
pub fn local_day(s: &WebSession, at: time::OffsetDateTime) -> time::Date {
    use crate::platform::preferences::service::{day_of, local_at};
    match jiff::Timestamp::from_second(at.unix_timestamp()) {
        Ok(ts) => day_of(&local_at(&s.prefs.timezone, ts)),
        Err(_) => at.date(),
    }
}

/// Day and time of an instant where the person lives (`tz`: their `timezone` preference).
pub fn local_stamp(lang: Lang, tz: &str, at: time::OffsetDateTime) -> String {
    use crate::platform::preferences::service::{day_of, local_at};
    match jiff::Timestamp::from_second(at.unix_timestamp()) {
        Ok(ts) => {
            let z = local_at(tz, ts);
            format!(
                "{} {:02}:{:02}",
                lang.date(day_of(&z)),
                z.hour(),
                z.minute()
            )
        }
        Err(_) => lang.date(at.date()),
    }
}

/// The path and a `done` news key: where a form returns after it worked (POST-redirect-GET).
pub fn done(path: &str, news: &str) -> String {
    format!("{path}?done={news}")
}
