//! Security headers of the specification on every response, errors included.

use salvo::http::HeaderValue;
use salvo::prelude::*;

pub struct SecurityHeaders {
    hsts: bool,
}

impl SecurityHeaders {
    /// HSTS only outside debug mode: a local http:// setup must not pin browsers to https.
    pub fn new(debug: bool) -> Self {
        Self { hsts: !debug }
    }
}

#[async_trait]
impl Handler for SecurityHeaders {
    async fn handle(
        &self,
        _req: &mut Request,
        _depot: &mut Depot,
        res: &mut Response,
        _ctrl: &mut FlowCtrl,
    ) {
        let headers = res.headers_mut();
        headers.insert(
            "x-content-type-options",
            HeaderValue::from_static("nosniff"),
        );
        headers.insert("x-frame-options", HeaderValue::from_static("DENY"));
        headers.insert(
            "referrer-policy",
            HeaderValue::from_static("strict-origin-when-cross-origin"),
        );
        headers.insert(
            "permissions-policy",
            HeaderValue::from_static("camera=(), microphone=(), geolocation=()"),
        );
        if self.hsts {
            headers.insert(
                "strict-transport-security",
                HeaderValue::from_static("max-age=63072000; includeSubDomains"),
            );
        }
    }
}
