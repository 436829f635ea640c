//! The pages' static files, compiled into the binary: the stylesheet, htmx (npm package
//! `htmx.org` 2.0.11, BSD Zero Clause, vendored in `assets/` with its licence) and the small
//! script that configures it. Each file's name carries a digest of its bytes, so it can be
//! cached for a year and a new build is a new URL.

use std::sync::LazyLock;

use salvo::http::HeaderValue;
use salvo::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use salvo::prelude::*;
use sha2::{Digest, Sha256};

const CSS: &[u8] = include_bytes!("assets/app.css");
const HTMX: &[u8] = include_bytes!("assets/htmx-2.0.11.min.js");
const APP_JS: &[u8] = include_bytes!("assets/app.js");

/// One static file and its versioned name.
pub struct Asset {
    pub name: String,
    bytes: &'static [u8],
    content_type: &'static str,
}

fn versioned(stem: &str, ext: &str, bytes: &'static [u8], content_type: &'static str) -> Asset {
    let digest = hex::encode(&Sha256::digest(bytes)[..6]);
    Asset {
        name: format!("{stem}-{digest}.{ext}"),
        bytes,
        content_type,
    }
}

pub static STYLESHEET: LazyLock<Asset> =
    LazyLock::new(|| versioned("app", "css", CSS, "text/css; charset=utf-8"));
pub static HTMX_JS: LazyLock<Asset> =
    LazyLock::new(|| versioned("htmx", "js", HTMX, "text/javascript; charset=utf-8"));
pub static SCRIPT: LazyLock<Asset> =
    LazyLock::new(|| versioned("app", "js", APP_JS, "text/javascript; charset=utf-8"));

/// `/app/assets/{file}` as a URL path.
pub fn url(asset: &Asset) -> String {
    format!("/app/assets/{}", asset.name)
}

/// Serves `/app/assets/{file}`; any other name is a 404.
#[handler]
pub async fn serve(req: &mut Request, res: &mut Response) {
    let name = req.param::<String>("file").unwrap_or_default();
    let found = [&*STYLESHEET, &*HTMX_JS, &*SCRIPT]
        .into_iter()
        .find(|a| a.name == name);
    let Some(asset) = found else {
        res.status_code(StatusCode::NOT_FOUND);
        res.render(Text::Plain("not found"));
        return;
    };
    let headers = res.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(asset.content_type));
    headers.insert(
        CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=31536000, immutable"),
    );
    let _ = res.write_body(asset.bytes.to_vec());
}
