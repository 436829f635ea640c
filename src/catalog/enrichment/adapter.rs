//! The adapter trait every source implements, the registry of sources, and what a source
//! answers.

use std::sync::OnceLock;
use std::time::Duration;

use futures_util::future::BoxFuture;
use salvo::oapi::ToSchema;
use serde::Serialize;

use crate::config::Config;
use crate::error::{AppError, ErrorCode};

/// A source's answer for a scientific name.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct SourceMatch {
    /// The source's own identifier of the taxon.
    pub external_id: Option<String>,
    /// The name with authorship, as the source writes it.
    pub scientific_name: Option<String>,
    pub canonical_name: Option<String>,
    pub rank: Option<String>,
    /// Taxonomic status (`ACCEPTED`, `SYNONYM`, …).
    pub status: Option<String>,
    pub family: Option<String>,
    pub genus: Option<String>,
    /// The source's confidence in the match, 0–100.
    pub confidence: Option<i64>,
}

/// Why a source call failed.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("{0} is unreachable: {1}")]
    Unreachable(&'static str, String),
    #[error("{0} answered {1}")]
    Upstream(&'static str, u16),
    #[error("{0} limits requests (retry after {1:?} s)")]
    RateLimited(&'static str, Option<u64>),
    #[error("{0} answered something unreadable: {1}")]
    Unreadable(&'static str, String),
}

impl From<SourceError> for AppError {
    fn from(e: SourceError) -> Self {
        match e {
            SourceError::RateLimited(source, retry) => AppError::rate_limited(
                format!("rate limit exceeded: the source {source} limits requests"),
                retry.unwrap_or(crate::error::RATE_LIMIT_RETRY_AFTER_SECONDS),
            ),
            other => {
                tracing::warn!(error = %other, "enrichment source failed");
                AppError::new(ErrorCode::ExternalSourceError, other.to_string())
            }
        }
    }
}

/// One external botanical source.
pub trait BotanicalSource: Send + Sync {
    fn name(&self) -> &'static str;
    fn description(&self) -> &'static str;
    fn base_url(&self) -> &str;
    /// Looks a scientific name up; `None` when the source knows no such taxon.
    fn lookup<'a>(
        &'a self,
        http: &'a Http,
        scientific_name: &'a str,
    ) -> BoxFuture<'a, Result<Option<SourceMatch>, SourceError>>;
}

/// The HTTP client the adapters share, with the configured timeout; `None` only if the TLS
/// client could not be built (then every call is a 502, never a panic).
#[derive(Debug, Clone)]
pub struct Http {
    pub client: Option<reqwest::Client>,
    pub timeout: Duration,
}

/// A client for http and https sources: rustls with the ring provider (the one the mail
/// transport already uses) and the Mozilla root certificates, so https needs no system store.
fn build_client() -> Option<reqwest::Client> {
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    let tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .ok()?
        .with_root_certificates(roots)
        .with_no_client_auth();
    reqwest::Client::builder()
        .use_preconfigured_tls(tls)
        .build()
        .ok()
}

impl Http {
    pub fn new(config: &Config) -> Self {
        static CLIENT: OnceLock<Option<reqwest::Client>> = OnceLock::new();
        Self {
            client: CLIENT.get_or_init(build_client).clone(),
            timeout: config.enrichment_timeout,
        }
    }

    /// GETs JSON; maps transport failures, 429 and other non-2xx answers to [`SourceError`].
    pub async fn get_json(
        &self,
        source: &'static str,
        url: reqwest::Url,
    ) -> Result<serde_json::Value, SourceError> {
        let client = self.client.as_ref().ok_or_else(|| {
            SourceError::Unreachable(source, "no HTTP client (TLS setup failed)".into())
        })?;
        let res = client
            .get(url)
            .timeout(self.timeout)
            .header("accept", "application/json")
            .send()
            .await
            .map_err(|e| SourceError::Unreachable(source, e.to_string()))?;
        let status = res.status();
        if status.as_u16() == 429 {
            let retry = res
                .headers()
                .get("retry-after")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse().ok());
            return Err(SourceError::RateLimited(source, retry));
        }
        if !status.is_success() {
            return Err(SourceError::Upstream(source, status.as_u16()));
        }
        res.json()
            .await
            .map_err(|e| SourceError::Unreadable(source, e.to_string()))
    }
}

/// Every configured source.
pub fn registry(config: &Config) -> Vec<Box<dyn BotanicalSource>> {
    vec![Box::new(super::gbif::Gbif::new(
        &config.enrichment_gbif_url,
    ))]
}

/// The named source, or 404 `ADAPTER_NOT_FOUND`.
pub fn find(config: &Config, name: &str) -> Result<Box<dyn BotanicalSource>, AppError> {
    registry(config)
        .into_iter()
        .find(|s| s.name() == name)
        .ok_or_else(|| {
            AppError::new(
                ErrorCode::AdapterNotFound,
                format!("no adapter for the source {name:?}"),
            )
        })
}
