//! Structured logs through `tracing`: JSON lines by default, each carrying the request span
//! (request id, method, path, tenant).

use tracing_subscriber::EnvFilter;

use crate::config::LogFormat;

/// Installs the global subscriber once; later calls are ignored (tests start many services).
pub fn init(format: LogFormat) {
    let filter = EnvFilter::try_from_env("RUST_LOG")
        .unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn,salvo_core=warn,hyper=warn"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Json => builder
            .json()
            .with_current_span(true)
            .with_span_list(false)
            .flatten_event(true)
            .try_init(),
        LogFormat::Pretty => builder.try_init(),
    };
}
