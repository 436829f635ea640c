//! Sign-up, sign-in, sign-out, e-mail confirmation, password reset, accepting an invitation
//! and the language switch. The mails' links (`{FRONTEND_URL}/auth/verify-email`,
//! `/auth/reset-password`, `/invitations/accept`) land here when `FRONTEND_URL` is
//! `{PUBLIC_URL}/app`. Links only show a page; the token is used by the form's POST, so a
//! mail scanner following the link spends nothing.

use maud::{Markup, html};
use salvo::prelude::*;

use super::{PageCtx, csrf_refused, here, url_escape};
use crate::auth::accounts::model::{EmailToken, Login, Registration, ResetAddress, ResetConfirm};
use crate::auth::accounts::service;
use crate::error::{AppError, ErrorCode};
use crate::web::forms::{Field, Posted, explain, parse};
use crate::web::i18n::Lang;
use crate::web::layout::{self, Frame, csrf_field, local_path, notice, see_other};
use crate::web::session::{self, CSRF_FIELD};

pub fn router() -> Router {
    Router::new()
        .push(
            Router::with_path("login")
                .get(sign_in_page)
                .push(Router::new().hoop(super::garden::auth_budget).post(sign_in)),
        )
        .push(
            Router::with_path("signup")
                .get(sign_up_page)
                .push(Router::new().hoop(super::garden::auth_budget).post(sign_up)),
        )
        .push(Router::with_path("logout").post(sign_out))
        .push(Router::with_path("lang").post(set_lang))
        .push(
            Router::with_path("auth/verify-email")
                .get(verify_page)
                .post(verify),
        )
        .push(
            Router::with_path("auth/reset-password")
                .get(reset_page)
                .push(Router::new().hoop(super::garden::auth_budget).post(reset)),
        )
        .push(
            Router::with_path("invitations/accept")
                .get(invitation_page)
                .post(accept_invitation),
        )
}

fn form_max(ctx: &PageCtx) -> usize {
    ctx.state.config().max_body_bytes
}

/// The labels of the account forms' fields, for error sentences.
fn label(lang: Lang) -> impl Fn(&str) -> Option<String> {
    move |field: &str| match field {
        "email" => Some(lang.t("field-email")),
        "password" | "new_password" => Some(lang.t("field-password")),
        "display_name" => Some(lang.t("field-name")),
        "token" => Some(lang.t("field-link")),
        _ => None,
    }
}

fn visitor_frame(ctx: &PageCtx, req: &Request, title: String, csrf: String) -> Frame<'static> {
    Frame {
        lang: ctx.lang,
        title,
        session: None,
        gardens: &[],
        garden: None,
        here: here(req),
        csrf,
    }
}

fn page(
    req: &Request,
    res: &mut Response,
    ctx: &PageCtx,
    status: StatusCode,
    title: String,
    csrf: String,
    body: Markup,
) {
    let frame = visitor_frame(ctx, req, title, csrf);
    layout::render(res, status, layout::document(&frame, body));
}

// ---------- sign-in ----------

fn sign_in_form(
    lang: Lang,
    csrf: &str,
    next: &str,
    email: &str,
    errors: &[String],
    news: Option<&str>,
) -> Markup {
    html! {
        h1 { (lang.t("sign-in-title")) }
        @if let Some(text) = news { (notice("ok", text)) }
        @for e in errors { (notice("bad", e)) }
        form.stack method="post" action="/app/login" novalidate {
            (csrf_field(csrf))
            input type="hidden" name="next" value=(next);
            label for="email" { (lang.t("field-email")) }
            input id="email" type="email" name="email" value=(email) autocomplete="username" required;
            label for="password" { (lang.t("field-password")) }
            input id="password" type="password" name="password" autocomplete="current-password" required;
            label.check for="remember_me" {
                input id="remember_me" type="checkbox" name="remember_me" value="true";
                (lang.t("field-remember"))
            }
            button type="submit" { (lang.t("sign-in")) }
        }
        p { a href="/app/auth/reset-password" { (lang.t("forgot-password")) } }
        p { (lang.t("no-account")) " " a href="/app/signup" { (lang.t("sign-up")) } }
    }
}

#[handler]
async fn sign_in_page(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some(ctx) = PageCtx::or_fail(req, depot, res).await else {
        return;
    };
    let next = local_path(req.query::<String>("next").as_deref());
    if ctx.session.is_some() {
        return see_other(req, res, &next);
    }
    let news = match req.query::<String>("done").as_deref() {
        Some("verified") => Some(ctx.lang.t("verified-sign-in")),
        Some("reset") => Some(ctx.lang.t("reset-done")),
        Some("signed-out") => Some(ctx.lang.t("signed-out")),
        _ => None,
    };
    let csrf = ctx.csrf(req, res);
    let body = sign_in_form(ctx.lang, &csrf, &next, "", &[], news.as_deref());
    page(
        req,
        res,
        &ctx,
        StatusCode::OK,
        ctx.lang.t("sign-in-title"),
        csrf,
        body,
    );
}

#[handler]
async fn sign_in(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some((ctx, posted)) = PageCtx::posted(req, depot, res).await else {
        return;
    };
    let lang = ctx.lang;
    let next = local_path(posted.get("next"));
    let outcome = async {
        let form: Login = parse(posted.object(&[
            ("email", Field::Text),
            ("password", Field::Text),
            ("remember_me", Field::Checkbox),
        ]))?;
        service::login(&ctx.state, &form).await
    }
    .await;
    match outcome {
        Ok(signed_in) => {
            session::start(
                res,
                ctx.state.config(),
                &signed_in.refresh,
                signed_in.remember,
            );
            see_other(req, res, &next);
        }
        Err(err) => {
            let status = err.code().status();
            let errors = explain(lang, &err, &label(lang));
            let csrf = session::visitor_csrf(req, res, ctx.state.config());
            let email = posted.get("email").unwrap_or("").to_owned();
            let body = sign_in_form(lang, &csrf, &next, &email, &errors, None);
            page(req, res, &ctx, status, lang.t("sign-in-title"), csrf, body);
        }
    }
}

// ---------- sign-up ----------

fn sign_up_form(lang: Lang, csrf: &str, email: &str, name: &str, errors: &[String]) -> Markup {
    html! {
        h1 { (lang.t("sign-up-title")) }
        p { (lang.t("sign-up-intro")) }
        @for e in errors { (notice("bad", e)) }
        form.stack method="post" action="/app/signup" novalidate {
            (csrf_field(csrf))
            label for="display_name" { (lang.t("field-name")) }
            input id="display_name" type="text" name="display_name" value=(name) autocomplete="name" required maxlength="100";
            label for="email" { (lang.t("field-email")) }
            input id="email" type="email" name="email" value=(email) autocomplete="email" required;
            label for="password" { (lang.t("field-password")) }
            input id="password" type="password" name="password" autocomplete="new-password" required minlength="10" aria-describedby="password-hint";
            p.meta id="password-hint" { (lang.t("password-hint")) }
            button type="submit" { (lang.t("sign-up")) }
        }
        p { (lang.t("have-account")) " " a href="/app/login" { (lang.t("sign-in")) } }
    }
}

#[handler]
async fn sign_up_page(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some(ctx) = PageCtx::or_fail(req, depot, res).await else {
        return;
    };
    if ctx.session.is_some() {
        return see_other(req, res, "/app");
    }
    let csrf = ctx.csrf(req, res);
    let body = sign_up_form(ctx.lang, &csrf, "", "", &[]);
    page(
        req,
        res,
        &ctx,
        StatusCode::OK,
        ctx.lang.t("sign-up-title"),
        csrf,
        body,
    );
}

#[handler]
async fn sign_up(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some((ctx, posted)) = PageCtx::posted(req, depot, res).await else {
        return;
    };
    let lang = ctx.lang;
    let form: Result<Registration, AppError> = parse(posted.object(&[
        ("email", Field::Text),
        ("password", Field::Text),
        ("display_name", Field::Text),
    ]));
    let outcome = match form {
        Ok(form) => {
            // The registration budgets of the REST route, drawn only for a well-formed form.
            if !crate::http::rate_limit::draw_registration(&ctx.state, req, res).await {
                Err(AppError::new(
                    ErrorCode::RateLimitExceeded,
                    "registration budget",
                ))
            } else {
                // The personal garden is named in the language of this page.
                service::register(&ctx.state, &form, Some(lang.code())).await
            }
        }
        Err(e) => Err(e),
    };
    // No confirmation needed first: the new account is signed in at once (the mail with the
    // link went out all the same, and every page reminds until the address is confirmed).
    let outcome = match outcome {
        Ok(user) if !ctx.state.config().require_email_verification => {
            match service::signed_up_session(&ctx.state, user.key).await {
                Ok(Ok(signed_in)) => {
                    session::start(res, ctx.state.config(), &signed_in.refresh, false);
                    return see_other(req, res, "/app");
                }
                // Nothing stands in the way of a new account's session; should anything, the
                // page below offers the sign-in.
                Ok(Err(_)) => Ok(()),
                Err(e) => Err(e),
            }
        }
        Ok(_) => Ok(()),
        Err(e) => Err(e),
    };
    let csrf = session::visitor_csrf(req, res, ctx.state.config());
    match outcome {
        Ok(()) => {
            let verification = ctx.state.config().require_email_verification;
            let body = html! {
                h1 { (lang.t("sign-up-done-title")) }
                (notice("ok", &lang.t("sign-up-done")))
                @if !verification {
                    p { a.button href="/app/login" { (lang.t("sign-in")) } }
                }
            };
            page(
                req,
                res,
                &ctx,
                StatusCode::CREATED,
                lang.t("sign-up-done-title"),
                csrf,
                body,
            );
        }
        Err(err) => {
            let errors = explain(lang, &err, &label(lang));
            let body = sign_up_form(
                lang,
                &csrf,
                posted.get("email").unwrap_or(""),
                posted.get("display_name").unwrap_or(""),
                &errors,
            );
            page(
                req,
                res,
                &ctx,
                err.code().status(),
                lang.t("sign-up-title"),
                csrf,
                body,
            );
        }
    }
}

// ---------- sign-out and language ----------

#[handler]
async fn sign_out(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some(ctx) = PageCtx::or_fail(req, depot, res).await else {
        return;
    };
    let posted = match Posted::read(req, form_max(&ctx)).await {
        Ok(p) => p,
        Err(e) => return ctx.fail(req, res, e),
    };
    let Some(s) = &ctx.session else {
        // Already over: nothing to end.
        session::clear(res, ctx.state.config());
        return see_other(req, res, "/app/login");
    };
    if !s.csrf_ok(posted.get(CSRF_FIELD)) {
        return csrf_refused(req, res, ctx.lang);
    }
    if let Err(e) = crate::auth::refresh::revoke_family(&ctx.state, s.family).await {
        return ctx.fail(req, res, e);
    }
    session::clear(res, ctx.state.config());
    see_other(req, res, "/app/login?done=signed-out");
}

/// The footer's switch: a visitor's choice is a cookie; a signed-in person's is their
/// `locale` preference (the same record `PATCH /user-preferences` writes).
#[handler]
async fn set_lang(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some((ctx, posted)) = PageCtx::posted(req, depot, res).await else {
        return;
    };
    let back = local_path(posted.get("back"));
    let Some(lang) = posted.get("lang").and_then(Lang::parse) else {
        return see_other(req, res, &back);
    };
    session::remember_lang(res, ctx.state.config(), lang);
    if let Some(s) = &ctx.session {
        let set = crate::platform::preferences::service::set_locale(
            &ctx.state,
            s.principal.user_id,
            lang.code(),
        )
        .await;
        if let Err(e) = set {
            return ctx.fail(req, res, e);
        }
    }
    see_other(req, res, &back);
}

// ---------- e-mail confirmation ----------

#[handler]
async fn verify_page(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some(ctx) = PageCtx::or_fail(req, depot, res).await else {
        return;
    };
    let lang = ctx.lang;
    let token = req.query::<String>("token").unwrap_or_default();
    let csrf = ctx.csrf(req, res);
    let body = html! {
        h1 { (lang.t("verify-title")) }
        p { (lang.t("verify-intro")) }
        form.stack method="post" action="/app/auth/verify-email" {
            (csrf_field(&csrf))
            input type="hidden" name="token" value=(token);
            button type="submit" { (lang.t("verify-button")) }
        }
    };
    page(
        req,
        res,
        &ctx,
        StatusCode::OK,
        lang.t("verify-title"),
        csrf,
        body,
    );
}

#[handler]
async fn verify(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some((ctx, posted)) = PageCtx::posted(req, depot, res).await else {
        return;
    };
    let lang = ctx.lang;
    let outcome = async {
        let EmailToken(token) = parse(posted.object(&[("token", Field::Text)]))?;
        service::verify_email(&ctx.state, &token).await
    }
    .await;
    match outcome {
        Ok(()) if ctx.session.is_some() => see_other(req, res, "/app"),
        Ok(()) => see_other(req, res, "/app/login?done=verified"),
        Err(err) => {
            let csrf = ctx.csrf(req, res);
            let body = html! {
                h1 { (lang.t("verify-title")) }
                (notice("bad", &lang.t("err-link-invalid")))
                p { a href="/app/login" { (lang.t("sign-in")) } }
            };
            page(
                req,
                res,
                &ctx,
                err.code().status(),
                lang.t("verify-title"),
                csrf,
                body,
            );
        }
    }
}

// ---------- password reset ----------

fn reset_request_form(lang: Lang, csrf: &str, errors: &[String]) -> Markup {
    html! {
        h1 { (lang.t("reset-title")) }
        p { (lang.t("reset-intro")) }
        @for e in errors { (notice("bad", e)) }
        form.stack method="post" action="/app/auth/reset-password" novalidate {
            (csrf_field(csrf))
            label for="email" { (lang.t("field-email")) }
            input id="email" type="email" name="email" autocomplete="email" required;
            button type="submit" { (lang.t("reset-send")) }
        }
    }
}

fn reset_confirm_form(lang: Lang, csrf: &str, token: &str, errors: &[String]) -> Markup {
    html! {
        h1 { (lang.t("reset-new-title")) }
        @for e in errors { (notice("bad", e)) }
        form.stack method="post" action="/app/auth/reset-password" novalidate {
            (csrf_field(csrf))
            input type="hidden" name="token" value=(token);
            label for="new_password" { (lang.t("field-new-password")) }
            input id="new_password" type="password" name="new_password" autocomplete="new-password" required minlength="10" aria-describedby="password-hint";
            p.meta id="password-hint" { (lang.t("password-hint")) }
            button type="submit" { (lang.t("reset-save")) }
        }
    }
}

#[handler]
async fn reset_page(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some(ctx) = PageCtx::or_fail(req, depot, res).await else {
        return;
    };
    let csrf = ctx.csrf(req, res);
    let body = match req.query::<String>("token").filter(|t| !t.is_empty()) {
        Some(token) => reset_confirm_form(ctx.lang, &csrf, &token, &[]),
        None => reset_request_form(ctx.lang, &csrf, &[]),
    };
    page(
        req,
        res,
        &ctx,
        StatusCode::OK,
        ctx.lang.t("reset-title"),
        csrf,
        body,
    );
}

/// One address for both steps: with a token it sets the new password, else it asks for the
/// mail (the same answer whether or not the address has an account).
#[handler]
async fn reset(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some((ctx, posted)) = PageCtx::posted(req, depot, res).await else {
        return;
    };
    let lang = ctx.lang;
    let csrf = ctx.csrf(req, res);
    if posted.get("token").is_some() {
        let outcome = async {
            let form: ResetConfirm =
                parse(posted.object(&[("token", Field::Text), ("new_password", Field::Text)]))?;
            service::confirm_password_reset(&ctx.state, &form).await
        }
        .await;
        match outcome {
            Ok(()) => {
                // Every session ended with the reset, this browser's included.
                session::clear(res, ctx.state.config());
                see_other(req, res, "/app/login?done=reset");
            }
            Err(err) => {
                let errors = explain(lang, &err, &label(lang));
                let body =
                    reset_confirm_form(lang, &csrf, posted.get("token").unwrap_or(""), &errors);
                page(
                    req,
                    res,
                    &ctx,
                    err.code().status(),
                    lang.t("reset-new-title"),
                    csrf,
                    body,
                );
            }
        }
        return;
    }
    match parse::<ResetAddress>(posted.object(&[("email", Field::Text)])) {
        Ok(ResetAddress(email)) => {
            service::request_password_reset(&ctx.state, email);
            let body = html! {
                h1 { (lang.t("reset-title")) }
                (notice("ok", &lang.t("reset-sent")))
            };
            page(
                req,
                res,
                &ctx,
                StatusCode::ACCEPTED,
                lang.t("reset-title"),
                csrf,
                body,
            );
        }
        Err(err) => {
            let errors = explain(lang, &err, &label(lang));
            let body = reset_request_form(lang, &csrf, &errors);
            page(
                req,
                res,
                &ctx,
                err.code().status(),
                lang.t("reset-title"),
                csrf,
                body,
            );
        }
    }
}

// ---------- invitations ----------

#[handler]
async fn invitation_page(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some(ctx) = PageCtx::or_fail(req, depot, res).await else {
        return;
    };
    let lang = ctx.lang;
    let token = req.query::<String>("token").unwrap_or_default();
    let csrf = ctx.csrf(req, res);
    let back = format!("/app/invitations/accept?token={}", url_escape(&token));
    let body = html! {
        h1 { (lang.t("invitation-title")) }
        @if ctx.session.is_some() {
            p { (lang.t("invitation-intro")) }
            form.stack method="post" action="/app/invitations/accept" {
                (csrf_field(&csrf))
                input type="hidden" name="token" value=(token);
                button type="submit" { (lang.t("invitation-accept")) }
            }
        } @else {
            p { (lang.t("invitation-sign-in-first")) }
            p.actions {
                a.button href=(format!("/app/login?next={}", url_escape(&back))) { (lang.t("sign-in")) }
                a.button.secondary href="/app/signup" { (lang.t("sign-up")) }
            }
        }
    };
    page(
        req,
        res,
        &ctx,
        StatusCode::OK,
        lang.t("invitation-title"),
        csrf,
        body,
    );
}

#[handler]
async fn accept_invitation(req: &mut Request, depot: &mut Depot, res: &mut Response) {
    let Some(ctx) = PageCtx::or_fail(req, depot, res).await else {
        return;
    };
    let lang = ctx.lang;
    let posted = match Posted::read(req, form_max(&ctx)).await {
        Ok(p) => p,
        Err(e) => return ctx.fail(req, res, e),
    };
    let Some(s) = &ctx.session else {
        return see_other(req, res, "/app/login");
    };
    if !s.csrf_ok(posted.get(CSRF_FIELD)) {
        return csrf_refused(req, res, lang);
    }
    let outcome = async {
        let EmailToken(token) = parse(posted.object(&[("token", Field::Text)]))?;
        crate::platform::tenants::invitations::accept_by_token(&ctx.state, &s.principal, &token)
            .await
    }
    .await;
    match outcome {
        Ok(_) => {
            // The new garden is first in no particular order: go to the home, which lists them.
            see_other(req, res, "/app?done=joined");
        }
        Err(err) => {
            let csrf = s.csrf.clone();
            let body = html! {
                h1 { (lang.t("invitation-title")) }
                (notice("bad", &lang.t("invitation-invalid")))
                p { a href="/app" { (lang.t("back-home")) } }
            };
            page(
                req,
                res,
                &ctx,
                err.code().status(),
                lang.t("invitation-title"),
                csrf,
                body,
            );
        }
    }
}
