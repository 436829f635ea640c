//! The page handlers, one module per area, and what they share: the request's context
//! (state, language, session) and the error page.

pub mod account;
pub mod calendar;
pub mod catalog;
pub mod diary;
pub mod garden;
pub mod harvests;
pub mod members;
pub mod nutrition;
pub mod places;
pub mod plants;
pub mod protection;
pub mod runs;
pub mod scope;
pub mod sensors;
pub mod settings;
pub mod start;
pub mod tasks;

use maud::html;
use salvo::http::HeaderValue;
use salvo::http::header::CONTENT_SECURITY_POLICY;
use salvo::prelude::*;

use super::forms::{Posted, code_text};
use super::i18n::Lang;
use super::layout::{self, Frame, PAGE_CSP};
use super::session::{self, WebSession};
use crate::error::AppError;
use crate::http::depot::DepotExt;
use crate::state::AppState;

/// Hoop: every answer under `/app` (errors and redirects too) carries the pages' policy.
#[handler]
pub async fn frame_headers(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
    ctrl: &mut FlowCtrl,
) {
    ctrl.call_next(req, depot, res).await;
    res.headers_mut()
        .insert(CONTENT_SECURITY_POLICY, HeaderValue::from_static(PAGE_CSP));
}

/// The session the budget hoop read, kept for the page handler (one lookup per request).
#[derive(Clone)]
struct ReadSession(Option<WebSession>);

/// Hoop: every page and form post draws from the general budget, as an API request does: the
/// signed-in person's account, else the client address. Spent, the 429 (with `Retry-After`)
/// is a page in the visitor's language, and the handler never runs.
#[handler]
pub async fn page_budget(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
    ctrl: &mut FlowCtrl,
) {
    let read = async {
        let state = depot.app_state()?;
        let session = session::current(&state, req).await?;
        Ok::<_, AppError>((state, session))
    };
    let (state, session) = match read.await {
        Ok(found) => found,
        Err(e) => {
            fail(req, res, session::visitor_lang(req), e);
            ctrl.skip_rest();
            return;
        }
    };
    let user = session.as_ref().map(|s| s.principal.user_id);
    if !crate::http::rate_limit::general_budget_of(&state, req, res, ctrl, user).await {
        let lang = session
            .as_ref()
            .map_or_else(|| session::visitor_lang(req), |s| s.lang);
        let err = AppError::new(crate::error::ErrorCode::RateLimitExceeded, "page budget");
        error_page(req, res, lang, &err, String::new());
        return;
    }
    depot.insert_typed(ReadSession(session));
}

/// What every page handler starts from.
pub struct PageCtx {
    pub state: AppState,
    pub lang: Lang,
    pub session: Option<WebSession>,
}

impl PageCtx {
    /// The context, or `None` once the error page is written (the handler just returns).
    pub async fn or_fail(req: &Request, depot: &Depot, res: &mut Response) -> Option<Self> {
        match Self::of(req, depot).await {
            Ok(ctx) => Some(ctx),
            Err(e) => {
                fail(req, res, session::visitor_lang(req), e);
                None
            }
        }
    }

    /// A posted form with its context, once its CSRF value is this request's; `None` once the
    /// refusal or error page is written.
    pub async fn posted(
        req: &mut Request,
        depot: &Depot,
        res: &mut Response,
    ) -> Option<(Self, Posted)> {
        let ctx = Self::or_fail(req, depot, res).await?;
        let posted = match Posted::read(req, ctx.state.config().max_body_bytes).await {
            Ok(p) => p,
            Err(e) => {
                ctx.fail(req, res, e);
                return None;
            }
        };
        if !ctx.csrf_ok(req, posted.get(session::CSRF_FIELD)) {
            csrf_refused(req, res, ctx.lang);
            return None;
        }
        Some((ctx, posted))
    }

    /// The posted form of a page that found its session first, once the form's CSRF value is
    /// that session's; `None` once the refusal or error page is written.
    pub async fn form_of(
        &self,
        req: &mut Request,
        res: &mut Response,
        s: &WebSession,
    ) -> Option<Posted> {
        let posted = match Posted::read(req, self.state.config().max_body_bytes).await {
            Ok(p) => p,
            Err(e) => {
                self.fail(req, res, e);
                return None;
            }
        };
        if !s.csrf_ok(posted.get(session::CSRF_FIELD)) {
            csrf_refused(req, res, self.lang);
            return None;
        }
        Some(posted)
    }

    pub async fn of(req: &Request, depot: &Depot) -> Result<Self, AppError> {
        let state = depot.app_state()?;
        let session = match depot.get_typed::<ReadSession>() {
            Ok(read) => read.0.clone(),
            Err(_) => session::current(&state, req).await?,
        };
        let lang = session
            .as_ref()
            .map_or_else(|| session::visitor_lang(req), |s| s.lang);
        Ok(Self {
            state,
            lang,
            session,
        })
    }

    /// The CSRF value of this request's forms: the session's, else the visitor's cookie.
    pub fn csrf(&self, req: &Request, res: &mut Response) -> String {
        match &self.session {
            Some(s) => s.csrf.clone(),
            None => session::visitor_csrf(req, res, self.state.config()),
        }
    }

    /// An error as a page, whose language switch still works.
    pub fn fail(&self, req: &Request, res: &mut Response, err: AppError) {
        let csrf = self.csrf(req, res);
        error_page(req, res, self.lang, &err, csrf);
    }

    /// Whether a posted form carries this request's CSRF value.
    pub fn csrf_ok(&self, req: &Request, presented: Option<&str>) -> bool {
        match &self.session {
            Some(s) => s.csrf_ok(presented),
            None => session::visitor_csrf_ok(req, presented),
        }
    }
}

/// The page's path and query, for the language switch to return to.
pub fn here(req: &Request) -> String {
    let uri = req.uri();
    uri.path_and_query()
        .map_or_else(|| uri.path().to_owned(), |p| p.as_str().to_owned())
}

/// An error as a page: its status and a sentence in the page's language. A signed-in person
/// gets a way back to their gardens; a visitor the sign-in.
pub fn error_page(req: &Request, res: &mut Response, lang: Lang, err: &AppError, csrf: String) {
    let status = err.code().status();
    if status.is_server_error() {
        tracing::warn!(error = %err, path = req.uri().path(), "web page failed");
    }
    let frame = Frame {
        lang,
        title: lang.t("error-title"),
        session: None,
        gardens: &[],
        garden: None,
        here: here(req),
        csrf,
    };
    let body = html! {
        h1 { (lang.t("error-title")) }
        (layout::notice("bad", &lang.t(code_text(err.code()))))
        p { a href="/app" { (lang.t("back-home")) } }
    };
    layout::render(res, status, layout::document(&frame, body));
}

/// Answers a handler that failed before its context was known (no session to speak of).
pub fn fail(req: &Request, res: &mut Response, lang: Lang, err: AppError) {
    error_page(req, res, lang, &err, String::new());
}

/// The refusal of a form whose CSRF value is missing or foreign: 403, nothing done.
pub fn csrf_refused(req: &Request, res: &mut Response, lang: Lang) {
    let err = AppError::new(
        crate::error::ErrorCode::Forbidden,
        "the form's CSRF token is missing or wrong",
    );
    tracing::info!(path = req.uri().path(), "web form refused: CSRF token");
    let frame = Frame {
        lang,
        title: lang.t("error-title"),
        session: None,
        gardens: &[],
        garden: None,
        here: "/app".to_owned(),
        csrf: String::new(),
    };
    let body = html! {
        h1 { (lang.t("error-title")) }
        (layout::notice("bad", &lang.t("err-csrf")))
        p { a href=(here(req)) { (lang.t("try-again")) } }
    };
    layout::render(res, err.code().status(), layout::document(&frame, body));
}

/// Percent-encodes a query value.
pub fn url_escape(raw: &str) -> String {
    url::form_urlencoded::byte_serialize(raw.as_bytes()).collect()
}
