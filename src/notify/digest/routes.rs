//! `POST /api/v1/digest/unsubscribe`: the digest mail's link (through the front end) turns the
//! digest off with the signed token alone, no login.

use salvo::oapi::ToSchema;
use salvo::prelude::*;
use serde::Serialize;

use crate::error::{AppError, ErrorBody, ErrorDetail};
use crate::http::depot::DepotExt;
use crate::http::json::{FromJson, JsonFields, read_json};

pub fn router() -> Router {
    Router::with_path("digest/unsubscribe").post(unsubscribe_digest)
}

/// Body: the token of the digest mail's link.
#[derive(Debug, Clone, serde::Deserialize, ToSchema)]
#[salvo(schema(name = "DigestUnsubscribe"))]
#[serde(deny_unknown_fields)]
pub struct UnsubscribeBody {
    #[salvo(schema(max_length = 200))]
    pub token: String,
}

struct Token(String);

impl FromJson for Token {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        f.text("token", 200).map(Token)
    }
}

/// The preference after unsubscribing.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[salvo(schema(name = "DigestUnsubscribed"))]
pub struct Unsubscribed {
    /// Always `off`.
    pub notify_digest: String,
}

/// Turn the digest mail off with the token of its unsubscribe link (no login needed). The
/// token names the user and is signed by the service; any other value is 422.
#[endpoint(tags("user-preferences"), operation_id = "unsubscribe_digest",
    status_codes(200, 400, 413, 415, 422),
    request_body = UnsubscribeBody,
    responses(
        (status_code = 200, description = "the digest is off", body = Unsubscribed),
        (status_code = 400, description = "MALFORMED_REQUEST: body is not JSON", body = ErrorBody),
        (status_code = 413, description = "PAYLOAD_TOO_LARGE: body over the size limit", body = ErrorBody),
        (status_code = 415, description = "UNSUPPORTED_MEDIA_TYPE: body not sent as application/json", body = ErrorBody),
        (status_code = 422, description = "VALIDATION_ERROR: token missing, malformed or not signed by this service", body = ErrorBody),
    ))]
pub async fn unsubscribe_digest(
    req: &mut Request,
    depot: &mut Depot,
) -> Result<Json<Unsubscribed>, AppError> {
    let state = depot.app_state()?;
    let Token(token) = read_json(req, state.config().max_body_bytes).await?;
    if !super::service::unsubscribe(&state, &token).await? {
        return Err(AppError::validation(vec![ErrorDetail::new(
            "body.token",
            "is not a valid unsubscribe token",
            "value_error",
        )]));
    }
    Ok(Json(Unsubscribed {
        notify_digest: "off".into(),
    }))
}
