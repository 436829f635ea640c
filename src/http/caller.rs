//! The caller of a REST request: hoops over `crate::auth`. `require_caller` authenticates
//! every protected route and puts the [`Principal`] in the Depot; tenant routes then get the
//! caller's role from the tenant hoop; platform-wide writes pass `require_platform_admin`.

use salvo::http::HeaderValue;
use salvo::prelude::*;

use crate::auth::{Principal, authenticate, is_platform_admin};
use crate::error::{AppError, ErrorCode};
use crate::http::depot::DepotExt;

/// Renders a refusal; 401s carry the `WWW-Authenticate` challenge.
fn refuse(err: AppError, req: &Request, res: &mut Response, ctrl: &mut FlowCtrl) {
    match err.code() {
        ErrorCode::Unauthorized => {
            res.headers_mut()
                .insert("www-authenticate", HeaderValue::from_static("Bearer"));
        }
        ErrorCode::InvalidToken => {
            res.headers_mut().insert(
                "www-authenticate",
                HeaderValue::from_static("Bearer error=\"invalid_token\""),
            );
        }
        _ => {}
    }
    err.halt(req, res, ctrl);
}

/// Hoop: every route below needs an authenticated caller. A caller already established for
/// this request (by the general rate limit, which keys on it) is not authenticated twice.
#[handler]
pub async fn require_caller(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
    ctrl: &mut FlowCtrl,
) {
    let outcome = match (depot.get_typed::<Principal>(), depot.app_state()) {
        (Ok(known), _) => Ok(known.clone()),
        (Err(_), Ok(state)) => authenticate(&state, req).await,
        (Err(_), Err(err)) => Err(err),
    };
    match outcome {
        Ok(principal) => {
            tracing::Span::current().record("user", tracing::field::display(principal.user_id));
            depot.insert_typed(principal);
        }
        Err(err) => refuse(err, req, res, ctrl),
    }
}

/// Hoop for platform-wide writes (master data, imports, `/admin`): authenticated, then admin
/// of the platform tenant, else 403 `FORBIDDEN`.
#[handler]
pub async fn require_platform_admin(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
    ctrl: &mut FlowCtrl,
) {
    let outcome = async {
        let state = depot.app_state()?;
        let principal = match depot.get_typed::<Principal>() {
            Ok(p) => p.clone(),
            Err(_) => authenticate(&state, req).await?,
        };
        if !is_platform_admin(&state, &principal).await? {
            return Err(AppError::new(
                ErrorCode::Forbidden,
                "this needs the admin role in the platform tenant",
            ));
        }
        Ok(principal)
    }
    .await;
    match outcome {
        Ok(principal) => {
            depot.insert_typed(principal);
        }
        Err(err) => refuse(err, req, res, ctrl),
    }
}
