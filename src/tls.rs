//! The process's one TLS crypto provider: rustls with ring, the provider lettre's SMTP transport
//! already builds. reqwest is built without a provider of its own (its default would compile a
//! second one), so every reqwest client in the process — the enrichment client, tests, tools —
//! relies on this being installed before it is built.

/// Installs ring as the process default; calling it again changes nothing.
pub fn install_crypto_provider() {
    // An error only says a provider is installed already.
    let _ = rustls::crypto::ring::default_provider().install_default();
}
