//! ReDoc at `/api/v1/redoc`, entirely from this service: the page, its start script and the
//! vendored ReDoc bundle (npm package `redoc`, MIT, in `redoc/assets/` with its licences; the
//! README section "API documentation" says how to update it). salvo's own ReDoc page loads the
//! bundle from a CDN and starts it with an inline script; this page does neither, so it works
//! with no internet access and under a Content-Security-Policy that allows only this origin.

use salvo::http::HeaderValue;
use salvo::http::header::{CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE};
use salvo::prelude::*;

/// The bundle's file name carries its version: a new release is a new URL, so the file can be
/// cached for a year.
pub const BUNDLE_FILE: &str = "redoc.standalone-2.5.2.js";
const BUNDLE: &[u8] = include_bytes!("redoc/assets/redoc.standalone.js");
const ASSETS: &str = "/api/v1/redoc/assets";
const START_FILE: &str = "start.js";

/// Only this origin, no inline script. ReDoc injects its styles (`'unsafe-inline'` styles),
/// runs its search in a worker made from a blob, and shows a vendor logo from a CDN in its
/// footer: `img-src 'self' data:` keeps the browser from ever asking for it.
const PAGE_CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
     img-src 'self' data:; font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; \
     base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

pub fn router(spec_url: &'static str) -> Router {
    Router::with_path("api/v1/redoc")
        .get(RedocPage { spec_url })
        .push(
            Router::with_path("assets")
                .push(Router::with_path(BUNDLE_FILE).get(bundle))
                .push(Router::with_path(START_FILE).get(StartScript { spec_url })),
        )
}

struct RedocPage {
    spec_url: &'static str,
}

#[async_trait]
impl Handler for RedocPage {
    async fn handle(&self, _: &mut Request, _: &mut Depot, res: &mut Response, _: &mut FlowCtrl) {
        res.headers_mut()
            .insert(CONTENT_SECURITY_POLICY, HeaderValue::from_static(PAGE_CSP));
        res.render(Text::Html(format!(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <title>Kultiva API reference</title>\n</head>\n<body>\n\
             <div id=\"redoc-container\" data-spec-url=\"{}\"></div>\n\
             <script src=\"{ASSETS}/{BUNDLE_FILE}\"></script>\n\
             <script src=\"{ASSETS}/{START_FILE}\"></script>\n</body>\n</html>\n",
            self.spec_url
        )));
    }
}

/// Starts ReDoc on the document; a script file of its own, so the page needs no inline script.
struct StartScript {
    spec_url: &'static str,
}

#[async_trait]
impl Handler for StartScript {
    async fn handle(&self, _: &mut Request, _: &mut Depot, res: &mut Response, _: &mut FlowCtrl) {
        let spec = serde_json::Value::from(self.spec_url);
        javascript(
            res,
            "no-cache",
            format!("Redoc.init({spec}, {{}}, document.getElementById(\"redoc-container\"));\n"),
        );
    }
}

#[handler]
async fn bundle(res: &mut Response) {
    javascript(res, "public, max-age=31536000, immutable", BUNDLE);
}

fn javascript(res: &mut Response, cache: &'static str, body: impl Into<salvo::http::ResBody>) {
    let headers = res.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/javascript; charset=utf-8"),
    );
    headers.insert(CACHE_CONTROL, HeaderValue::from_static(cache));
    res.body(body);
}
