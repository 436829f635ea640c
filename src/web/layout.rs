//! The frame every page shares (head, top bar, garden switcher, language switch, footer) and
//! the ways a page handler answers: a page, a fragment for htmx, a redirect.

use maud::{DOCTYPE, Markup, html};
use salvo::http::HeaderValue;
use salvo::http::header::{CACHE_CONTROL, CONTENT_SECURITY_POLICY, LOCATION};
use salvo::prelude::*;

use super::assets;
use super::i18n::Lang;
use super::session::{CSRF_FIELD, WebSession};
use crate::platform::tenants::model::Tenant;

/// Only this origin: no inline script or style, no frames, forms post here only. Photos
/// picked on a phone are previewed from `blob:` URLs; the web app manifest is this origin's.
pub const PAGE_CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     img-src 'self' data: blob:; connect-src 'self'; manifest-src 'self'; form-action 'self'; \
     base-uri 'none'; frame-ancestors 'none'";

/// htmx without inline styles (CSP) and without `eval` (no `hx-on`, no `js:` values).
/// Refusals (4xx) are swapped in too: they carry the sentence that says what went wrong.
const HTMX_CONFIG: &str = r#"{"includeIndicatorStyles":false,"allowEval":false,"allowScriptTags":false,"historyCacheSize":0,"responseHandling":[{"code":"204","swap":false},{"code":"[23]..","swap":true},{"code":"4..","swap":true,"error":true},{"code":"...","swap":false,"error":true}]}"#;

/// What the frame around a page needs.
pub struct Frame<'a> {
    pub lang: Lang,
    pub title: String,
    pub session: Option<&'a WebSession>,
    /// The signed-in person's gardens (the switcher).
    pub gardens: &'a [Tenant],
    /// The garden this page belongs to.
    pub garden: Option<&'a str>,
    /// This page's path (the language switch returns here).
    pub here: String,
    /// The CSRF value of the language switch (the session's, or the visitor's).
    pub csrf: String,
}

/// A whole page.
pub fn document(frame: &Frame<'_>, body: Markup) -> Markup {
    let lang = frame.lang;
    html! {
        (DOCTYPE)
        html lang=(lang.code()) {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="htmx-config" content=(HTMX_CONFIG);
                meta name="theme-color" content="#2e6b30";
                title { (frame.title) " · Kultiva" }
                link rel="icon" type="image/svg+xml" href=(assets::url(&assets::ICON));
                link rel="apple-touch-icon" href=(assets::url(&assets::ICON_192));
                link rel="manifest" href="/app/manifest.webmanifest";
                link rel="stylesheet" href=(assets::url(&assets::STYLESHEET));
                script src=(assets::url(&assets::HTMX_JS)) defer {}
                script src=(assets::url(&assets::SCRIPT)) defer {}
            }
            body {
                a.skip href="#main" { (lang.t("skip-to-content")) }
                header.top {
                    a.brand href="/app" { "Kultiva" }
                    @if let Some(session) = frame.session {
                        // One list of links: a "Menu" button that opens it on a phone, the
                        // plain row on a wide screen (app.css, ::details-content). Without
                        // that selector the button stays, so no screen loses its links.
                        nav aria-label=(lang.t("nav-label")) {
                            details.menu {
                                summary { (lang.t("nav-menu")) }
                                div.links {
                                    @if let Some(slug) = frame.garden {
                                        a href=(format!("/app/g/{slug}")) { (lang.t("nav-today")) }
                                        a href=(format!("/app/g/{slug}/plants")) { (lang.t("nav-plants")) }
                                        a href=(format!("/app/g/{slug}/places")) { (lang.t("nav-places")) }
                                        a href=(format!("/app/g/{slug}/tasks")) { (lang.t("nav-tasks")) }
                                        a href=(format!("/app/g/{slug}/runs")) { (lang.t("nav-runs")) }
                                        a href=(format!("/app/g/{slug}/calendar")) { (lang.t("nav-calendar")) }
                                        a href=(format!("/app/g/{slug}/protection")) { (lang.t("nav-protection")) }
                                        a href=(format!("/app/g/{slug}/nutrition")) { (lang.t("nav-nutrition")) }
                                        a href=(format!("/app/g/{slug}/sensors")) { (lang.t("nav-sensors")) }
                                        a href=(format!("/app/g/{slug}/harvests")) { (lang.t("nav-harvests")) }
                                        a href=(format!("/app/g/{slug}/diary")) { (lang.t("nav-diary")) }
                                        a href=(format!("/app/g/{slug}/catalog")) { (lang.t("nav-catalog")) }
                                    }
                                    a href="/app/settings" { (lang.t("nav-settings")) }
                                    a href="/api/v1/docs" { (lang.t("nav-api")) }
                                    form method="post" action="/app/logout" {
                                        input type="hidden" name=(CSRF_FIELD) value=(session.csrf);
                                        button type="submit" { (lang.t("sign-out")) }
                                    }
                                }
                            }
                        }
                    }
                }
                @if frame.session.is_some() && frame.gardens.len() > 1 {
                    nav.gardens aria-label=(lang.t("gardens-label")) {
                        @for g in frame.gardens {
                            @if frame.garden == Some(g.slug.as_str()) {
                                a href=(format!("/app/g/{}", g.slug)) aria-current="page" { (g.name) }
                            } @else {
                                a href=(format!("/app/g/{}", g.slug)) { (g.name) }
                            }
                        }
                    }
                }
                main id="main" {
                    p id="offline-note" class="notice warn" role="status" hidden { (lang.t("offline-note")) }
                    @if let Some(session) = frame.session.filter(|s| !s.user.email_verified) {
                        (unconfirmed_banner(lang, session))
                    }
                    (body)
                }
                footer.bottom {
                    form method="post" action="/app/lang" {
                        input type="hidden" name=(CSRF_FIELD) value=(frame.csrf);
                        input type="hidden" name="back" value=(frame.here);
                        span { (lang.t("language")) ": " }
                        @for other in Lang::ALL {
                            @if other == lang {
                                strong { (other.own_name()) } " "
                            } @else {
                                button.secondary type="submit" name="lang" value=(other.code()) lang=(other.code()) { (other.own_name()) } " "
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The reminder on every page of a person whose address is not confirmed yet (signed in at
/// once because `REQUIRE_EMAIL_VERIFICATION=false`): the link is in the mail.
fn unconfirmed_banner(lang: Lang, session: &WebSession) -> Markup {
    let email = session.user.email.as_deref().unwrap_or("");
    let text = lang.t_with("first-run-confirm-banner", &[("email", email.into())]);
    notice("warn", &text)
}

/// The hidden CSRF field of a form.
pub fn csrf_field(value: &str) -> Markup {
    html! { input type="hidden" name=(CSRF_FIELD) value=(value); }
}

/// Notices above a form (errors in red, news in green).
pub fn notice(kind: &str, text: &str) -> Markup {
    html! { p class=(format!("notice {kind}")) role=(if kind == "bad" { "alert" } else { "status" }) { (text) } }
}

/// The lines of a refused form, in red above it; nothing when there are none.
pub fn refused(lines: &[String]) -> Markup {
    html! {
        @if !lines.is_empty() {
            div.notice.bad role="alert" { @for l in lines { p { (l) } } }
        }
    }
}

/// A card with a folded form that adds a record: `title` heads the card and names the fold,
/// which is open while a refusal of it is shown (`open`); `refusal` stands above the fold,
/// `fields` are the form's inputs and its button. The server checks every field, so the
/// browser's own checks are off (`novalidate`) and a refusal always comes back in the page's
/// words.
pub fn add_card(
    id: &str,
    title: &str,
    open: bool,
    refusal: &[String],
    action: &str,
    csrf: &str,
    fields: Markup,
) -> Markup {
    html! {
        section.card aria-labelledby=(id) {
            h2 id=(id) { (title) }
            (refused(refusal))
            details.add open[open] {
                summary { (title) }
                form.stack method="post" action=(action) novalidate {
                    (csrf_field(csrf))
                    (fields)
                }
            }
        }
    }
}

fn page_headers(res: &mut Response) {
    let headers = res.headers_mut();
    headers.insert(CONTENT_SECURITY_POLICY, HeaderValue::from_static(PAGE_CSP));
    // Pages hold personal data: never kept by a shared cache or the back button's store.
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
}

/// Answers a page (or an htmx fragment) with the pages' headers.
pub fn render(res: &mut Response, status: StatusCode, markup: Markup) {
    page_headers(res);
    res.status_code(status);
    // The page replaces whatever a hoop wrote before it (the API's JSON 429 of a rate limit):
    // salvo appends to a body and keeps a content type already set.
    let _ = res.take_body();
    res.headers_mut().remove(salvo::http::header::CONTENT_TYPE);
    res.render(Text::Html(markup.into_string()));
}

/// 303 to another page of this app (after a form, a sign-in, a sign-out). htmx requests get
/// `HX-Redirect` instead, so the whole page changes rather than a fragment.
pub fn see_other(req: &Request, res: &mut Response, location: &str) {
    page_headers(res);
    let Ok(value) = HeaderValue::from_str(location) else {
        res.status_code(StatusCode::INTERNAL_SERVER_ERROR);
        return;
    };
    if is_htmx(req) {
        res.status_code(StatusCode::OK);
        res.headers_mut().insert("hx-redirect", value);
    } else {
        res.status_code(StatusCode::SEE_OTHER);
        res.headers_mut().insert(LOCATION, value);
    }
}

/// Whether htmx sent this request (it then wants a fragment, not a page).
pub fn is_htmx(req: &Request) -> bool {
    req.headers()
        .get("hx-request")
        .is_some_and(|v| v.as_bytes() == b"true")
}

/// A local path to return to: only paths of this app (no other host, no scheme), else `/app`.
pub fn local_path(raw: Option<&str>) -> String {
    match raw {
        Some(p)
            if p.starts_with("/app")
                && !p.starts_with("//")
                && !p.contains('\\')
                && !p.chars().any(char::is_control) =>
        {
            p.to_owned()
        }
        _ => "/app".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_paths_of_this_app_are_returned_to() {
        assert_eq!(local_path(Some("/app/g/mine")), "/app/g/mine");
        assert_eq!(local_path(Some("//evil.example/app")), "/app");
        assert_eq!(local_path(Some("https://evil.example/app")), "/app");
        assert_eq!(local_path(Some("/api/v1/users/me")), "/app");
        assert_eq!(local_path(Some("/app\\@evil")), "/app");
        assert_eq!(local_path(None), "/app");
    }
}
