//! Where a webhook (or a Web Push endpoint) may point (no SSRF): `https://` to a name that
//! resolves to public addresses only. Loopback, private (RFC 1918, unique-local), link-local
//! (with the cloud metadata address 169.254.169.254), shared (100.64/10), unspecified,
//! multicast, broadcast and documentation addresses are refused, at creation and again at
//! every delivery (the name may resolve elsewhere by then: the delivery connects to the
//! address checked, nothing else). With `WEBHOOK_ALLOW_PRIVATE_TARGETS=true` (local set-ups,
//! tests) loopback targets are allowed, over `http://` as well.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use url::Url;

/// Why a target is refused (the text goes into a 422 detail).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused(pub String);

/// Checks the URL's form (scheme, host, no credentials, no fragment).
pub fn parse(raw: &str, allow_loopback: bool) -> Result<Url, Refused> {
    let url = Url::parse(raw).map_err(|_| Refused("must be an absolute https:// URL".into()))?;
    let host = url
        .host_str()
        .ok_or_else(|| Refused("must name a host".into()))?
        .to_owned();
    if !url.username().is_empty() || url.password().is_some() {
        return Err(Refused("must not carry credentials".into()));
    }
    if url.fragment().is_some() {
        return Err(Refused("must not have a fragment".into()));
    }
    match url.scheme() {
        "https" => {}
        "http" if allow_loopback && names_loopback(&host) => {}
        "http" => {
            return Err(Refused(
                "must use https:// (http:// is refused: the payload would travel in clear text)"
                    .into(),
            ));
        }
        _ => return Err(Refused("must be an https:// URL".into())),
    }
    Ok(url)
}

fn names_loopback(host: &str) -> bool {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    bare.eq_ignore_ascii_case("localhost")
        || bare.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Resolves the URL's host and checks every address; the first one is where to connect.
pub async fn resolve(url: &Url, allow_loopback: bool) -> Result<SocketAddr, Refused> {
    let host = url
        .host_str()
        .ok_or_else(|| Refused("must name a host".into()))?;
    let port = url
        .port_or_known_default()
        .ok_or_else(|| Refused("must name a port".into()))?;
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let addrs: Vec<SocketAddr> = match bare.parse::<IpAddr>() {
        Ok(ip) => vec![SocketAddr::new(ip, port)],
        Err(_) => tokio::time::timeout(
            std::time::Duration::from_secs(5),
            tokio::net::lookup_host((bare, port)),
        )
        .await
        .map_err(|_| Refused("its host name did not resolve in time".into()))?
        .map_err(|_| Refused("its host name does not resolve".into()))?
        .collect(),
    };
    if addrs.is_empty() {
        return Err(Refused("its host name does not resolve".into()));
    }
    for addr in &addrs {
        if let Some(why) = refused_address(addr.ip(), allow_loopback) {
            return Err(Refused(format!(
                "resolves to a {why} address, which the service may not reach"
            )));
        }
    }
    Ok(addrs[0])
}

/// Why an address is not a public one (`None`: it is).
pub fn refused_address(ip: IpAddr, allow_loopback: bool) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => refused_v4(v4, allow_loopback),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return refused_v4(v4, allow_loopback);
            }
            refused_v6(v6, allow_loopback)
        }
    }
}

fn refused_v4(ip: Ipv4Addr, allow_loopback: bool) -> Option<&'static str> {
    let [a, b, ..] = ip.octets();
    if ip.is_loopback() {
        return (!allow_loopback).then_some("loopback");
    }
    if ip.is_private() {
        Some("private")
    } else if ip.is_link_local() {
        Some("link-local or metadata")
    } else if a == 100 && (64..128).contains(&b) {
        Some("shared (carrier-grade NAT)")
    } else if ip.is_unspecified() || a == 0 {
        Some("unspecified")
    } else if ip.is_multicast() || ip.is_broadcast() || a >= 240 {
        Some("multicast or reserved")
    } else if ip.is_documentation() || (a == 198 && (b == 18 || b == 19)) {
        Some("documentation or benchmarking")
    } else if a == 192 && b == 0 && ip.octets()[2] == 0 {
        Some("protocol assignment")
    } else {
        None
    }
}

fn refused_v6(ip: Ipv6Addr, allow_loopback: bool) -> Option<&'static str> {
    let first = ip.segments()[0];
    if ip.is_loopback() {
        return (!allow_loopback).then_some("loopback");
    }
    if ip.is_unspecified() {
        Some("unspecified")
    } else if (first & 0xfe00) == 0xfc00 {
        Some("private (unique local)")
    } else if (first & 0xffc0) == 0xfe80 {
        Some("link-local")
    } else if ip.is_multicast() {
        Some("multicast")
    } else if first == 0x2001 && ip.segments()[1] == 0x0db8 {
        Some("documentation")
    } else if first == 0x0064 && ip.segments()[1] == 0xff9b {
        // NAT64 can reach any IPv4 address, private ones included.
        Some("NAT64")
    } else if ip.to_ipv4().is_some() && ip.segments()[..6] == [0; 6] {
        Some("IPv4-compatible")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_are_checked() {
        assert!(parse("https://hooks.example.org/x", false).is_ok());
        assert!(parse("http://hooks.example.org/x", false).is_err());
        assert!(parse("http://127.0.0.1:8080/x", false).is_err());
        assert!(parse("http://127.0.0.1:8080/x", true).is_ok());
        assert!(parse("http://localhost:8080/x", true).is_ok());
        assert!(parse("http://example.org/x", true).is_err());
        assert!(parse("ftp://example.org/x", false).is_err());
        assert!(parse("https://u:p@example.org/x", false).is_err());
        assert!(parse("not a url", false).is_err());
    }

    #[test]
    fn addresses_are_classified() {
        let refused = [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "224.0.0.1",
            "255.255.255.255",
            "::1",
            "fd00::1",
            "fe80::1",
            "::ffff:10.0.0.1",
            "::ffff:127.0.0.1",
            "64:ff9b::a00:1",
        ];
        for ip in refused {
            let ip: IpAddr = ip.parse().expect("ip");
            assert!(refused_address(ip, false).is_some(), "{ip}");
        }
        for ip in ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"] {
            let ip: IpAddr = ip.parse().expect("ip");
            assert_eq!(refused_address(ip, false), None, "{ip}");
        }
        assert_eq!(
            refused_address("127.0.0.1".parse().expect("ip"), true),
            None
        );
        assert!(refused_address("10.0.0.1".parse().expect("ip"), true).is_some());
    }
}
