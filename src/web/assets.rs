//! The pages' static files, compiled into the binary: the stylesheet, htmx (npm package
//! `htmx.org` 2.0.11, BSD Zero Clause, vendored in `assets/` with its licence), the small
//! script that configures it and the icon. Each file's name carries a digest of its bytes, so
//! it can be cached for a year and a new build is a new URL. A browser that accepts brotli gets
//! the file brotli-compressed, else one that accepts gzip gets it gzipped, each made once, at
//! first use, at the coding's best level (htmx is 51 kB as is, 17 kB gzipped: it matters on a
//! weak mobile connection). Pages are compressed per response by `http::compression`.
//!
//! Beside them, outside `/app/assets`: `/favicon.ico` (the icon, for browsers that ask before
//! reading a page's `<link rel="icon">`) and the web app manifest
//! `/app/manifest.webmanifest` (name, the icon as SVG and as 192 and 512 px PNGs, `start_url`
//! `/app`, standalone).

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
const ICON_SVG: &[u8] = include_bytes!("assets/icon.svg");
// The icon drawn at the two sizes Android's and iOS's home screens ask for (rendered from
// icon.svg by Chromium; they are redrawn only when the SVG changes).
const ICON_192_PNG: &[u8] = include_bytes!("assets/icon-192.png");
const ICON_512_PNG: &[u8] = include_bytes!("assets/icon-512.png");

/// One static file and its versioned name.
pub struct Asset {
    pub name: String,
    bytes: &'static [u8],
    gzipped: OnceLock<Vec<u8>>,
    brotli: OnceLock<Vec<u8>>,
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

    /// The file brotli-compressed (quality 11, window 2^22: once per process).
    fn brotli(&self) -> &[u8] {
        self.brotli.get_or_init(|| {
            let mut enc = brotli::CompressorWriter::new(Vec::new(), 4096, 11, 22);
            // `into_inner` finishes the stream.
            match enc.write_all(self.bytes) {
                Ok(()) => enc.into_inner(),
                Err(_) => Vec::new(),
            }
        })
    }
}

/// Whether the request's `Accept-Encoding` names `coding` (or `*`) with a non-zero weight.
fn accepts(req: &Request, coding: &str) -> bool {
    req.headers()
        .get_all(ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|part| {
            let mut it = part.split(';').map(str::trim);
            let named = it.next().unwrap_or_default();
            let q_zero = it.any(|p| {
                p.strip_prefix("q=")
                    .and_then(|q| q.parse::<f32>().ok())
                    .is_some_and(|q| q <= 0.0)
            });
            (named.eq_ignore_ascii_case(coding) || named == "*") && !q_zero
        })
}

fn versioned(stem: &str, ext: &str, bytes: &'static [u8], content_type: &'static str) -> Asset {
    let digest = hex::encode(&Sha256::digest(bytes)[..6]);
    Asset {
        name: format!("{stem}-{digest}.{ext}"),
        bytes,
        gzipped: OnceLock::new(),
        brotli: OnceLock::new(),
        content_type,
    }
}

pub static STYLESHEET: LazyLock<Asset> =
    LazyLock::new(|| versioned("app", "css", CSS, "text/css; charset=utf-8"));
pub static HTMX_JS: LazyLock<Asset> =
    LazyLock::new(|| versioned("htmx", "js", HTMX, "text/javascript; charset=utf-8"));
pub static SCRIPT: LazyLock<Asset> =
    LazyLock::new(|| versioned("app", "js", APP_JS, "text/javascript; charset=utf-8"));
pub static ICON: LazyLock<Asset> =
    LazyLock::new(|| versioned("icon", "svg", ICON_SVG, "image/svg+xml"));
pub static ICON_192: LazyLock<Asset> =
    LazyLock::new(|| versioned("icon-192", "png", ICON_192_PNG, "image/png"));
pub static ICON_512: LazyLock<Asset> =
    LazyLock::new(|| versioned("icon-512", "png", ICON_512_PNG, "image/png"));

/// `/app/assets/{file}` as a URL path.
pub fn url(asset: &Asset) -> String {
    format!("/app/assets/{}", asset.name)
}

/// Writes a file with its type and caching, brotli or gzip when the browser takes it.
fn send(req: &Request, res: &mut Response, asset: &Asset, cache: &'static str) {
    let headers = res.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(asset.content_type));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static(cache));
    headers.insert(VARY, HeaderValue::from_static("accept-encoding"));
    let coded = if accepts(req, "br") && !asset.brotli().is_empty() {
        Some(("br", asset.brotli()))
    } else if accepts(req, "gzip") && !asset.gzipped().is_empty() {
        Some(("gzip", asset.gzipped()))
    } else {
        None
    };
    match coded {
        // Only when it is smaller: a tiny file stays as it is.
        Some((coding, bytes)) if bytes.len() < asset.bytes.len() => {
            res.headers_mut()
                .insert(CONTENT_ENCODING, HeaderValue::from_static(coding));
            let _ = res.write_body(bytes.to_vec());
        }
        _ => {
            let _ = res.write_body(asset.bytes.to_vec());
        }
    }
}

/// Serves `/app/assets/{file}`; any other name is a 404.
#[handler]
pub async fn serve(req: &mut Request, res: &mut Response) {
    let name = req.param::<String>("file").unwrap_or_default();
    let found = [
        &*STYLESHEET,
        &*HTMX_JS,
        &*SCRIPT,
        &*ICON,
        &*ICON_192,
        &*ICON_512,
    ]
    .into_iter()
    .find(|a| a.name == name);
    let Some(asset) = found else {
        res.status_code(StatusCode::NOT_FOUND);
        res.render(Text::Plain("not found"));
        return;
    };
    send(req, res, asset, "public, max-age=31536000, immutable");
}

/// `/favicon.ico`: the icon (SVG; browsers go by the content type, not the name), cached for
/// a day since the name carries no version.
#[handler]
pub async fn favicon(req: &mut Request, res: &mut Response) {
    send(req, res, &ICON, "public, max-age=86400");
}

/// The web app manifest: an installed Kultiva opens on `/app`, standalone, with the icon.
static MANIFEST: LazyLock<String> = LazyLock::new(|| {
    serde_json::json!({
        "name": "Kultiva",
        "short_name": "Kultiva",
        "description": "Garden and grow records: plants, places, care, harvests.",
        "id": "/app",
        "start_url": "/app",
        "scope": "/app",
        "display": "standalone",
        "background_color": "#fbfcfa",
        "theme_color": "#2e6b30",
        "icons": [
            { "src": url(&ICON), "sizes": "any", "type": "image/svg+xml", "purpose": "any" },
            { "src": url(&ICON_192), "sizes": "192x192", "type": "image/png", "purpose": "any" },
            { "src": url(&ICON_512), "sizes": "512x512", "type": "image/png", "purpose": "any" }
        ],
    })
    .to_string()
});

/// `/app/manifest.webmanifest` (`application/manifest+json`, cached for a day).
#[handler]
pub async fn manifest(res: &mut Response) {
    let headers = res.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("application/manifest+json"),
    );
    headers.insert(
        CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=86400"),
    );
    let _ = res.write_body(MANIFEST.as_bytes().to_vec());
}
