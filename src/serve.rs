//! Serving: bind, serve until SIGTERM/SIGINT, drain in-flight requests, close pools.

use std::net::SocketAddr;

use salvo::conn::TcpListener;
use salvo::prelude::*;
use salvo::server::ServerHandle;

use crate::http::build_service;
use crate::state::AppState;

/// A bound, not yet serving server. Binding first lets callers learn the port (tests bind
/// port 0) before requests flow.
pub struct Bound {
    server: Server<salvo::conn::tcp::TcpAcceptor>,
    local_addr: SocketAddr,
}

pub async fn bind(addr: SocketAddr) -> std::io::Result<Bound> {
    let acceptor = TcpListener::new(addr)
        .try_bind()
        .await
        .map_err(std::io::Error::other)?;
    let local_addr = acceptor.local_addr()?;
    Ok(Bound {
        server: Server::new(acceptor),
        local_addr,
    })
}

impl Bound {
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    pub fn handle(&self) -> ServerHandle {
        self.server.handle()
    }

    /// Serves (with the mail delivery and tool-audit workers beside it) until the handle stops the server, then
    /// stops the worker and closes the state's pools.
    pub async fn serve(self, state: AppState) {
        let service = build_service(state.clone());
        let mail = crate::mail::worker::start(state.clone());
        let audit = crate::mcp::audit::start(state.clone());
        let feed = crate::cache::feed::start(state.clone());
        self.server.serve(service).await;
        feed.stop().await;
        if let Some(mail) = mail {
            mail.stop().await;
        }
        if let Some(audit) = audit {
            audit.stop().await;
        }
        state.close().await;
        tracing::info!("server stopped; pools closed");
    }
}

/// Stops the server gracefully on the first SIGTERM or SIGINT: no new connections, in-flight
/// requests finish within `grace`.
pub fn stop_on_signal(handle: ServerHandle, grace: std::time::Duration) {
    tokio::spawn(async move {
        wait_for_signal().await;
        tracing::info!(
            grace_seconds = grace.as_secs(),
            "shutdown signal received; draining"
        );
        handle.stop_graceful(grace);
    });
}

async fn wait_for_signal() {
    let ctrl_c = async {
        if let Err(err) = tokio::signal::ctrl_c().await {
            tracing::error!(error = %err, "cannot listen for SIGINT");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(err) => {
                tracing::error!(error = %err, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = term => {}
    }
}
