//! The pages' static files, compiled into the binary: the stylesheet, htmx (npm package
//! `htmx.org` 2.0.11, BSD Zero Clause, vendored in `assets/` with its licence) and the small
//! script that configures it. Each file's name carries a digest of its bytes, so it can be
//! cached for a year and a new build is a new URL. A browser that accepts gzip gets the file
//! compressed once, at first use (htmx is 51 kB as is, 17 kB gzipped: it matters on a weak
//! mobile connection). Only these files are compressed, never a page: pages carry the CSRF
//! value beside text a visitor typed, which compression would expose (BREACH).

use std::io::Write;
use std::sync::{LazyLock, OnceLock};

use flate2::Compression;
use flate2::write::GzEncoder;
use salvo::http::HeaderValue;
use salvo::http::header::{ACCEPT_ENCODING, CACHE_CONTROL, CONTENT_ENCODING, CONTENT_TYPE, VARY};
use salvo::prelude::*;
use sha2::{Digest, Sha256};

const CSS: &[u8] = include_bytes!("assets/app.css");
const HTMX: &[u8] = include_bytes!("assets/htmx-2.0.11.min.js");
const APP_JS: &[u8] = include_bytes!("assets/app.js");

/// One static file and its versioned name.
pub struct Asset {
    pub name: String,
    bytes: &'static [u8],
    gzipped: OnceLock<Vec<u8>>,
    content_type: &'static str,
}

impl Asset {
    /// The file gzip-compressed (best level: it is done once per process).
    fn gzipped(&self) -> &[u8] {
        self.gzipped.get_or_init(|| {
            let mut enc = GzEncoder::new(Vec::new(), Compression::best());
            // Writing into a Vec cannot fail; on the impossible error (empty), serve it as is.
            enc.write_all(self.bytes)
                .and_then(|()| enc.finish())
                .unwrap_or_default()
        })
    }
}

/// Whether the request's `Accept-Encoding` names gzip with a non-zero weight.
fn accepts_gzip(req: &Request) -> bool {
    req.headers()
        .get_all(ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|part| {
            let mut it = part.split(';').map(str::trim);
            let coding = it.next().unwrap_or_default();
            let q_zero = it.any(|p| {
                p.strip_prefix("q=")
                    .and_then(|q| q.parse::<f32>().ok())
                    .is_some_and(|q| q <= 0.0)
            });
            (coding.eq_ignore_ascii_case("gzip") || coding == "*") && !q_zero
        })
}

fn versioned(stem: &str, ext: &str, bytes: &'static [u8], content_type: &'static str) -> Asset {
    let digest = hex::encode(&Sha256::digest(bytes)[..6]);
    Asset {
        name: format!("{stem}-{digest}.{ext}"),
        bytes,
        gzipped: OnceLock::new(),
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
    headers.insert(VARY, HeaderValue::from_static("accept-encoding"));
    let gzipped = asset.gzipped();
    if accepts_gzip(req) && !gzipped.is_empty() {
        res.headers_mut()
            .insert(CONTENT_ENCODING, HeaderValue::from_static("gzip"));
        let _ = res.write_body(gzipped.to_vec());
    } else {
        let _ = res.write_body(asset.bytes.to_vec());
    }
}
