//! Who is calling. Identity (accounts, tokens, API keys) is not built yet, so no credential can
//! be verified: in `full` mode every protected route answers 401, and only `light` mode (no
//! authentication by definition) reaches garden data. The identity work replaces this gate
//! with real authentication and role checks; the routes behind it stay as they are.

use salvo::http::HeaderValue;
use salvo::prelude::*;

use crate::config::ServiceMode;
use crate::error::{AppError, ErrorCode};
use crate::http::depot::DepotExt;

#[handler]
pub async fn require_caller(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
    ctrl: &mut FlowCtrl,
) {
    let refusal = match depot.app_state() {
        Ok(state) if state.config().service_mode == ServiceMode::Light => None,
        Ok(_) => Some(AppError::new(
            ErrorCode::Unauthorized,
            "authentication required",
        )),
        Err(err) => Some(err),
    };
    if let Some(err) = refusal {
        if err.code() == ErrorCode::Unauthorized {
            res.headers_mut()
                .insert("www-authenticate", HeaderValue::from_static("Bearer"));
        }
        err.halt(req, res, ctrl);
    }
}
