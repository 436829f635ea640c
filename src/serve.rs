//! Serving: bind, serve until SIGTERM/SIGINT, drain in-flight requests, close pools.
//!
//! The graceful stop also answers the connections still waiting in the kernel's accept
//! queue: closing a listening socket resets every connection queued on it, and under load a
//! few always are. So on the signal the listening socket first gets a drop-all packet filter
//! (new connection attempts are ignored, the client's TCP retries its SYN a second later and
//! then meets the restarted server or a refusal, never a reset); the server keeps accepting
//! for [`QUEUE_SETTLE`]; then salvo stops accepting and this module accepts what is left in
//! the queue itself, answers each with 503 `SERVICE_UNAVAILABLE` (`Retry-After`,
//! `Connection: close`), and only then shuts the listening socket down.

use std::io::ErrorKind;
use std::net::SocketAddr;
use std::os::fd::AsFd;
use std::sync::Arc;
use std::time::Duration;

use salvo::conn::TcpListener;
use salvo::prelude::*;
use salvo::server::ServerHandle;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::error::{AppError, ErrorCode, UNAVAILABLE_RETRY_AFTER_SECONDS};
use crate::http::build_service;
use crate::state::AppState;

/// How long the server keeps accepting (and serving normally) after the signal, the filter
/// already on: long enough to take what the queue held, short against the grace period.
const QUEUE_SETTLE: Duration = Duration::from_millis(100);
/// Rounds of "accept until the queue is empty" after salvo stopped accepting, this far apart:
/// a handshake that was completing when the filter went on lands in one of them.
const QUEUE_SWEEPS: u32 = 5;
const QUEUE_SWEEP_GAP: Duration = Duration::from_millis(20);
/// A refused straggler's request is read (so closing does not reset it) for at most this long.
const REFUSE_READ_TIMEOUT: Duration = Duration::from_secs(2);
/// Request head bytes read from a refused straggler, at most.
const REFUSE_READ_LIMIT: usize = 64 * 1024;

/// A bound, not yet serving server. Binding first lets callers learn the port (tests bind
/// port 0) before requests flow.
pub struct Bound {
    server: Server<salvo::conn::tcp::TcpAcceptor>,
    local_addr: SocketAddr,
    /// A second descriptor of the listening socket, for the graceful stop (see module doc).
    listener: Arc<std::net::TcpListener>,
    drained: Arc<Drained>,
}

/// Whether a graceful stop began, and when it answered the queued connections.
#[derive(Default)]
struct Drained {
    started: std::sync::atomic::AtomicBool,
    done: tokio::sync::Notify,
}

pub async fn bind(addr: SocketAddr) -> std::io::Result<Bound> {
    let acceptor = TcpListener::new(addr)
        .try_bind()
        .await
        .map_err(std::io::Error::other)?;
    let local_addr = acceptor.local_addr()?;
    let listener = std::net::TcpListener::from(acceptor.inner().as_fd().try_clone_to_owned()?);
    Ok(Bound {
        server: Server::new(acceptor),
        local_addr,
        listener: Arc::new(listener),
        drained: Arc::default(),
    })
}

impl Bound {
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    pub fn handle(&self) -> ServerHandle {
        self.server.handle()
    }

    /// What the graceful stop needs: the server's handle and the listening socket.
    pub fn stopper(&self) -> Stopper {
        Stopper {
            handle: self.server.handle(),
            listener: self.listener.clone(),
            drained: self.drained.clone(),
        }
    }

    /// Serves (with the mail delivery and tool-audit workers beside it) until the handle stops the server, then
    /// stops the worker and closes the state's pools.
    pub async fn serve(self, state: AppState) {
        let service = build_service(state.clone());
        let mail = crate::mail::worker::start(state.clone());
        let audit = crate::mcp::audit::start(state.clone());
        let feed = crate::cache::feed::start(state.clone());
        let reaper = crate::tenancy::reaper::start(state.clone());
        self.server.serve(service).await;
        if self
            .drained
            .started
            .load(std::sync::atomic::Ordering::SeqCst)
        {
            // The queued connections' answers are written before the process may exit; each
            // is bounded by its read timeouts.
            let _ =
                tokio::time::timeout(4 * REFUSE_READ_TIMEOUT, self.drained.done.notified()).await;
        }
        reaper.stop().await;
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

/// Makes the listening socket ignore new connection attempts (the client's TCP retries its SYN
/// and then meets the closed port or another replica) instead of queueing them to be reset.
#[cfg(target_os = "linux")]
fn ignore_new_connections(listener: &std::net::TcpListener) {
    use socket2::{SockFilter, SockRef};
    // Classic BPF `ret #0`: every packet to the listening socket is dropped, SYNs included.
    let drop_all = [SockFilter::new(0x06, 0, 0, 0)];
    if let Err(err) = SockRef::from(listener).attach_filter(&drop_all) {
        tracing::warn!(error = %err, "cannot filter the listening socket; queued connections may be reset");
    }
}

/// Socket filters are Linux's: elsewhere the queue is still answered, but a connection attempt
/// landing during the stop may be reset.
#[cfg(not(target_os = "linux"))]
fn ignore_new_connections(_listener: &std::net::TcpListener) {}

/// What stops a bound server gracefully ([`Bound::stopper`]).
#[derive(Clone)]
pub struct Stopper {
    handle: ServerHandle,
    listener: Arc<std::net::TcpListener>,
    drained: Arc<Drained>,
}

impl Stopper {
    /// The graceful stop: no connection attempt after this is taken (they are ignored, not
    /// reset), the ones already queued are served or answered 503, in-flight requests finish
    /// within `grace`.
    pub async fn stop_graceful(&self, grace: Duration) {
        self.drained
            .started
            .store(true, std::sync::atomic::Ordering::SeqCst);
        ignore_new_connections(&self.listener);
        tokio::time::sleep(QUEUE_SETTLE).await;
        self.handle.stop_graceful(grace);
        let mut refusals = tokio::task::JoinSet::new();
        for sweep in 0..QUEUE_SWEEPS {
            if sweep > 0 {
                tokio::time::sleep(QUEUE_SWEEP_GAP).await;
            }
            loop {
                match self.listener.accept() {
                    Ok((stream, _)) => {
                        refusals.spawn(refuse(stream));
                    }
                    Err(err) if err.kind() == ErrorKind::WouldBlock => break,
                    Err(err) if err.kind() == ErrorKind::Interrupted => {}
                    Err(err) => {
                        tracing::warn!(error = %err, "accepting a queued connection while stopping failed");
                        break;
                    }
                }
            }
        }
        // The queue is empty and nothing new gets in: leave the listening state (later
        // attempts are refused at once) although salvo still holds its descriptor.
        if let Err(err) = socket2::SockRef::from(&*self.listener).shutdown(std::net::Shutdown::Read)
        {
            tracing::warn!(error = %err, "cannot shut the listening socket down");
        }
        let refused = refusals.len();
        refusals.join_all().await;
        tracing::info!(refused, "stopped accepting; queued connections answered");
        self.drained.done.notify_one();
    }
}

/// Answers a connection that queued while the server stopped: reads its request head (so the
/// close is a FIN, not a reset), then a 503 with `Connection: close`.
async fn refuse(stream: std::net::TcpStream) {
    let answered = async {
        stream.set_nonblocking(true)?;
        let mut stream = tokio::net::TcpStream::from_std(stream)?;
        let mut head = Vec::with_capacity(1024);
        let mut buf = [0u8; 4096];
        let read = tokio::time::timeout(REFUSE_READ_TIMEOUT, async {
            while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < REFUSE_READ_LIMIT {
                let n = stream.read(&mut buf).await?;
                if n == 0 {
                    break;
                }
                head.extend_from_slice(&buf[..n]);
            }
            Ok::<_, std::io::Error>(())
        })
        .await;
        if !matches!(read, Ok(Ok(()))) || head.is_empty() {
            return Ok(());
        }
        let line = String::from_utf8_lossy(&head);
        let mut parts = line.split_whitespace();
        let method = parts.next().unwrap_or("GET").to_owned();
        let path = parts
            .next()
            .unwrap_or("/")
            .split('?')
            .next()
            .unwrap_or("/")
            .to_owned();
        let (_, body) = AppError::new(
            ErrorCode::ServiceUnavailable,
            "the server is restarting; retry the request",
        )
        .into_body(&path, &method);
        let body = serde_json::to_vec(&body).map_err(std::io::Error::other)?;
        let answer = format!(
            "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n\
             retry-after: {UNAVAILABLE_RETRY_AFTER_SECONDS}\r\nconnection: close\r\n\
             content-length: {}\r\n\r\n",
            body.len()
        );
        stream.write_all(answer.as_bytes()).await?;
        stream.write_all(&body).await?;
        stream.shutdown().await?;
        // Whatever else the client sends (a body) is read and ignored until it closes, so
        // our close never resets it.
        let _ = tokio::time::timeout(REFUSE_READ_TIMEOUT, async {
            while stream.read(&mut buf).await.unwrap_or(0) > 0 {}
        })
        .await;
        Ok::<_, std::io::Error>(())
    }
    .await;
    if let Err(err) = answered {
        tracing::debug!(error = %err, "answering a queued connection while stopping failed");
    }
}

/// Stops the server gracefully on the first SIGTERM or SIGINT (see [`Stopper`]).
pub fn stop_on_signal(stopper: Stopper, grace: Duration) {
    tokio::spawn(async move {
        wait_for_signal().await;
        tracing::info!(
            grace_seconds = grace.as_secs(),
            "shutdown signal received; draining"
        );
        stopper.stop_graceful(grace).await;
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
