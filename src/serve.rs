//! Serving: bind, serve until SIGTERM/SIGINT, drain in-flight requests, close pools.
//!
//! The graceful stop also answers the connections still waiting in the kernel's accept
//! queue: closing a listening socket resets every connection queued on it, and under load a
//! few always are. So on the signal the listening socket first gets a packet filter that drops
//! the SYN of every new connection attempt (it is ignored, the client's TCP retries its SYN a
//! second later and then meets the restarted server or a refusal, never a reset) but lets the
//! final ACK of a handshake already under way through, so that one completes and is queued;
//! the server keeps accepting for [`QUEUE_SETTLE`]; then salvo stops accepting and this module
//! accepts what is left in the queue itself, answers each with 503 `SERVICE_UNAVAILABLE`
//! (`Retry-After`, `Connection: close`), and only then shuts the listening socket down.

use std::io::ErrorKind;
use std::net::SocketAddr;
use std::os::fd::AsFd;
use std::sync::Arc;
use std::time::Duration;

use salvo::conn::TcpListener;
use salvo::prelude::*;
use salvo::server::ServerHandle;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::app::build_service;
use crate::error::{AppError, ErrorCode, UNAVAILABLE_RETRY_AFTER_SECONDS};
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
    /// The private metrics listener (`METRICS_BIND_ADDRESS`), when bound.
    metrics: Option<Server<salvo::conn::tcp::TcpAcceptor>>,
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
        metrics: None,
    })
}

impl Bound {
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    pub fn handle(&self) -> ServerHandle {
        self.server.handle()
    }

    /// Binds the private metrics listener (`GET /metrics` without a credential), served beside
    /// the API until the API server stops. Returns its address (tests bind port 0).
    pub async fn bind_metrics(&mut self, addr: SocketAddr) -> std::io::Result<SocketAddr> {
        let acceptor = TcpListener::new(addr)
            .try_bind()
            .await
            .map_err(std::io::Error::other)?;
        let local = acceptor.local_addr()?;
        self.metrics = Some(Server::new(acceptor));
        Ok(local)
    }

    /// What the graceful stop needs: the server's handle and the listening socket.
    pub fn stopper(&self) -> Stopper {
        Stopper {
            handle: self.server.handle(),
            listener: self.listener.clone(),
            drained: self.drained.clone(),
        }
    }

    /// Serves (with the mail delivery, tool-audit and photo rendition workers beside it) until the handle stops the server, then
    /// stops the worker and closes the state's pools.
    pub async fn serve(self, state: AppState) {
        // The web pages need sign-in: full mode only.
        let pages = (state.config().service_mode == crate::config::ServiceMode::Full)
            .then(crate::web::router);
        let service = build_service(state.clone(), pages);
        let mail = crate::mail::worker::start(state.clone());
        let audit = crate::state::audit::start(state.clone());
        let feed = crate::state::cache_feed::start(state.clone());
        let reaper = crate::tenancy::reaper::start(state.clone());
        let renditions = crate::garden::photos::worker::start(state.clone());
        let webhooks = crate::garden::webhooks::worker::start(state.clone());
        let digest = crate::notify::digest::job::start(state.clone());
        let alerts = crate::notify::alerts::job::start(state.clone());
        let weather = crate::notify::weather::job::start(state.clone());
        let mqtt = crate::notify::mqtt::start(state.clone());
        let metrics = self.metrics.map(|server| {
            let handle = server.handle();
            let service = crate::http::metrics::private_service(state.clone());
            (handle, tokio::spawn(server.serve(service)))
        });
        self.server.serve(service).await;
        if let Some((handle, served)) = metrics {
            // The scraper notices the gap; nothing in flight there needs draining.
            handle.stop_forceful();
            let _ = served.await;
        }
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
        renditions.stop().await;
        webhooks.stop().await;
        if let Some(digest) = digest {
            digest.stop().await;
        }
        if let Some(alerts) = alerts {
            alerts.stop().await;
        }
        if let Some(weather) = weather {
            weather.stop().await;
        }
        if let Some(mqtt) = mqtt {
            mqtt.stop().await;
        }
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
/// and then meets the closed port or another replica) instead of queueing them to be reset,
/// while a handshake already under way still completes and is queued (then answered).
///
/// A socket filter (`SO_ATTACH_FILTER`) on a TCP socket runs in `tcp_v4_rcv`/`tcp_v6_rcv`
/// with the segment starting at its TCP header: byte 13 holds the flags. The listener's filter
/// sees both the SYN of a new attempt and the final ACK of a handshake whose SYN came earlier
/// (the kernel runs the listener's filter before `tcp_check_req` creates the connection), so
/// a drop-all filter would strand that handshake (the client believes it is connected, the
/// server never queues it, and closing the listener resets it). This one drops only segments
/// with SYN set and ACK clear. Connections created from the listener afterwards inherit the
/// filter: on an established connection a bare SYN is never needed, so it changes nothing.
#[cfg(target_os = "linux")]
fn ignore_new_connections(listener: &std::net::TcpListener) {
    use socket2::SockRef;
    if let Err(err) = SockRef::from(listener).attach_filter(&DROP_SYNS) {
        tracing::warn!(error = %err, "cannot filter the listening socket; queued connections may be reset");
    }
}

/// Classic BPF: drop a TCP segment with SYN set and ACK clear (a new connection attempt),
/// keep every other segment whole.
#[cfg(target_os = "linux")]
const DROP_SYNS: [socket2::SockFilter; 5] = {
    use socket2::SockFilter;
    const TCP_FLAGS_OFFSET: u32 = 13;
    const SYN: u32 = 0x02;
    const ACK: u32 = 0x10;
    [
        // ldb [13]: A = the TCP flags byte (BPF_LD | BPF_B | BPF_ABS).
        SockFilter::new(0x30, 0, 0, TCP_FLAGS_OFFSET),
        // and #(SYN|ACK) (BPF_ALU | BPF_AND | BPF_K).
        SockFilter::new(0x54, 0, 0, SYN | ACK),
        // jeq #SYN: SYN without ACK falls through to the drop, anything else jumps to keep
        // (BPF_JMP | BPF_JEQ | BPF_K).
        SockFilter::new(0x15, 0, 1, SYN),
        // ret #0: drop.
        SockFilter::new(0x06, 0, 0, 0),
        // ret #0xffffffff: keep the whole segment.
        SockFilter::new(0x06, 0, 0, u32::MAX),
    ]
};

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

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use socket2::{SockFilter, SockRef};
    use std::net::{TcpListener, TcpStream};
    use std::time::Instant;

    /// Accepts from a non-blocking listener, waiting up to `within`.
    fn accept_within(listener: &TcpListener, within: Duration) -> Option<TcpStream> {
        let until = Instant::now() + within;
        loop {
            match listener.accept() {
                Ok((stream, _)) => return Some(stream),
                Err(err) if err.kind() == ErrorKind::WouldBlock && Instant::now() < until => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(_) => return None,
            }
        }
    }

    /// The kernel behaviour the stop relies on, on a real loopback listener. A handshake is
    /// held half done (a test filter drops the client's bare final ACK, as the old drop-all
    /// filter did); then the stop's filter goes on. A new attempt gets no answer at all (its
    /// SYN is dropped: a timeout, not a refusal or reset), while the half-done handshake
    /// completes when the listener retransmits its SYN-ACK (after about 1 s) and the client's
    /// repeated ACK now passes: it lands in the accept queue, where the stop answers it.
    #[test]
    fn the_stop_filter_ignores_new_attempts_but_completes_a_half_done_handshake() {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.set_nonblocking(true).expect("nonblocking");
        let addr = listener.local_addr().expect("addr");
        // ldb [13]; jeq #ACK (flags exactly ACK) -> drop; else keep.
        let drop_bare_acks = [
            SockFilter::new(0x30, 0, 0, 13),
            SockFilter::new(0x15, 0, 1, 0x10),
            SockFilter::new(0x06, 0, 0, 0),
            SockFilter::new(0x06, 0, 0, u32::MAX),
        ];
        SockRef::from(&listener)
            .attach_filter(&drop_bare_acks)
            .expect("attach the test filter");
        let half_done = TcpStream::connect_timeout(&addr, Duration::from_secs(2))
            .expect("the SYN is answered with a SYN-ACK");
        assert!(
            accept_within(&listener, Duration::from_millis(300)).is_none(),
            "the final ACK was held back, nothing is queued yet"
        );

        ignore_new_connections(&listener);
        let late = TcpStream::connect_timeout(&addr, Duration::from_millis(1500));
        assert_eq!(
            late.map(|_| ()).map_err(|e| e.kind()),
            Err(ErrorKind::TimedOut),
            "a new attempt is ignored (its SYN dropped), neither accepted nor refused"
        );
        let accepted = accept_within(&listener, Duration::from_secs(5))
            .expect("the half-done handshake completed under the stop's filter");
        assert_eq!(
            accepted.peer_addr().expect("peer"),
            half_done.local_addr().expect("local"),
            "the queued connection is the half-done one"
        );
        assert!(
            accept_within(&listener, Duration::from_millis(200)).is_none(),
            "the ignored attempt never reached the queue"
        );
    }
}
