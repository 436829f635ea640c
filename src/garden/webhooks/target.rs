//! Where a webhook (or a Web Push endpoint) may point (no SSRF): `https://` to a name that
//! resolves to public addresses only. Loopback, private (RFC 1918, unique-local), link-local
//! (with the cloud metadata address 169.254.169.254), shared (100.64/10), unspecified,
//! multicast, broadcast and documentation addresses are refused, and every block of the IANA
//! special-purpose registries but the few ordinary global ones (AS112, AMT); in IPv6 only
//! global unicast `2000::/3` counts (so site-local, IPv4-translated and what the registries
//! add later are refused), Teredo is refused, and 6to4 only with a public embedded IPv4
//! address. At creation and again at
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
    let [a, b, c, _] = ip.octets();
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
    } else if a == 192 && b == 0 && c == 0 {
        // Its anycast services (PCP, TURN) answer from the nearest, often local, server.
        Some("protocol assignment")
    } else if a == 192 && b == 88 && c == 99 {
        Some("6to4 relay anycast")
    } else {
        None
    }
}

/// The IPv4 address a 6to4 address (`2002:AABB:CCDD::/48`, RFC 3056) is relayed to.
fn six_to_four_embedded(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    (s[0] == 0x2002).then(|| {
        let [a, b] = s[1].to_be_bytes();
        let [c, d] = s[2].to_be_bytes();
        Ipv4Addr::new(a, b, c, d)
    })
}

/// IPv6: only global unicast (`2000::/3`) is reachable, less its special-purpose blocks. So
/// everything outside it (site-local `fec0::/10`, IPv4-compatible and IPv4-translated
/// `::ffff:0:a.b.c.d`, discard-only, NAT64, ...) is refused whatever the registries add later.
fn refused_v6(ip: Ipv6Addr, allow_loopback: bool) -> Option<&'static str> {
    let s = ip.segments();
    if ip.is_loopback() {
        return (!allow_loopback).then_some("loopback");
    }
    if let Some(v4) = six_to_four_embedded(ip) {
        // A relay delivers to the embedded IPv4 address: it must be a public one.
        return refused_v4(v4, false).map(|_| "6to4 with a non-public embedded IPv4");
    }
    if (s[0] & 0xe000) != 0x2000 {
        return Some(if ip.is_unspecified() {
            "unspecified"
        } else if (s[0] & 0xfe00) == 0xfc00 {
            "private (unique local)"
        } else if (s[0] & 0xffc0) == 0xfe80 {
            "link-local"
        } else if (s[0] & 0xffc0) == 0xfec0 {
            "site-local"
        } else if ip.is_multicast() {
            "multicast"
        } else if s[0] == 0x0064 && s[1] == 0xff9b {
            // NAT64 can reach any IPv4 address, private ones included.
            "NAT64"
        } else if s[..4] == [0; 4] && (s[4] == 0 || s[4] == 0xffff) {
            "IPv4-compatible or IPv4-translated"
        } else {
            "reserved (not global unicast)"
        });
    }
    if s[0] == 0x2001 && s[1] == 0 {
        // Teredo hides an IPv4 address and port behind a relay.
        Some("Teredo")
    } else if (s[0] == 0x2001 && s[1] == 0x0db8) || (s[0] == 0x3fff && s[1] < 0x1000) {
        Some("documentation")
    } else if s[0] == 0x2001 && s[1] < 0x0200 {
        // IETF protocol assignments (2001::/23): only AMT (2001:3::/32) and AS112
        // (2001:4:112::/48) are ordinary global hosts; the rest are local anycast services,
        // benchmarking or identifiers that are no locators (ORCHID, DET).
        let amt = s[1] == 0x0003;
        let as112 = s[1] == 0x0004 && s[2] == 0x0112;
        (!(amt || as112)).then_some("protocol assignment")
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
            // The ranges of issue 43: 6to4 embedding the metadata address, site-local,
            // IPv4-translated, Teredo.
            "2002:a9fe:a9fe::1",
            "2002:7f00:1::1",
            "fec0::1",
            "::ffff:0:a9fe:a9fe",
            "::ffff:0:93.184.215.14",
            "2001:0:4136:e378:8000:63bf:3fff:fdd2",
        ];
        for ip in refused {
            let ip: IpAddr = ip.parse().expect("ip");
            assert!(refused_address(ip, false).is_some(), "{ip}");
        }
        for ip in [
            "93.184.215.14",
            "2606:2800:21f:cb07:6820:80da:af6b:8b2c",
            // 6to4 relayed to a public IPv4 address.
            "2002:5db8:d70e::1",
        ] {
            let ip: IpAddr = ip.parse().expect("ip");
            assert_eq!(refused_address(ip, false), None, "{ip}");
        }
        assert_eq!(
            refused_address("127.0.0.1".parse().expect("ip"), true),
            None
        );
        assert!(refused_address("10.0.0.1".parse().expect("ip"), true).is_some());
    }

    /// One row of the IANA IPv4 or IPv6 Special-Purpose Address Registry
    /// (iana.org/assignments/iana-ipv4-special-registry, .../iana-ipv6-special-registry).
    struct Special {
        block: &'static str,
        name: &'static str,
        rfc: &'static str,
        /// The registry's "Globally Reachable" (`None`: N/A).
        global: Option<bool>,
        /// Whether the service lets targets in it (only globally reachable, ordinary hosts).
        allowed: bool,
    }

    const fn row(
        block: &'static str,
        name: &'static str,
        rfc: &'static str,
        global: Option<bool>,
        allowed: bool,
    ) -> Special {
        Special {
            block,
            name,
            rfc,
            global,
            allowed,
        }
    }

    const IPV4_SPECIAL: &[Special] = &[
        row("0.0.0.0/8", "This network", "RFC 791", Some(false), false),
        row(
            "0.0.0.0/32",
            "This host on this network",
            "RFC 1122",
            Some(false),
            false,
        ),
        row("10.0.0.0/8", "Private-Use", "RFC 1918", Some(false), false),
        row(
            "100.64.0.0/10",
            "Shared Address Space",
            "RFC 6598",
            Some(false),
            false,
        ),
        row("127.0.0.0/8", "Loopback", "RFC 1122", Some(false), false),
        row(
            "169.254.0.0/16",
            "Link Local",
            "RFC 3927",
            Some(false),
            false,
        ),
        row(
            "172.16.0.0/12",
            "Private-Use",
            "RFC 1918",
            Some(false),
            false,
        ),
        row(
            "192.0.0.0/24",
            "IETF Protocol Assignments",
            "RFC 6890",
            Some(false),
            false,
        ),
        row(
            "192.0.0.0/29",
            "IPv4 Service Continuity Prefix",
            "RFC 7335",
            Some(false),
            false,
        ),
        row(
            "192.0.0.8/32",
            "IPv4 dummy address",
            "RFC 7600",
            Some(false),
            false,
        ),
        // Globally reachable, but the nearest server answers: often the local gateway.
        row(
            "192.0.0.9/32",
            "Port Control Protocol Anycast",
            "RFC 7723",
            Some(true),
            false,
        ),
        row(
            "192.0.0.10/32",
            "Traversal Using Relays around NAT Anycast",
            "RFC 8155",
            Some(true),
            false,
        ),
        row(
            "192.0.0.170/32",
            "NAT64/DNS64 Discovery",
            "RFC 8880",
            Some(false),
            false,
        ),
        row(
            "192.0.0.171/32",
            "NAT64/DNS64 Discovery",
            "RFC 8880",
            Some(false),
            false,
        ),
        row(
            "192.0.2.0/24",
            "Documentation (TEST-NET-1)",
            "RFC 5737",
            Some(false),
            false,
        ),
        row("192.31.196.0/24", "AS112-v4", "RFC 7535", Some(true), true),
        row("192.52.193.0/24", "AMT", "RFC 7450", Some(true), true),
        row(
            "192.88.99.0/24",
            "Deprecated (6to4 Relay Anycast)",
            "RFC 7526",
            None,
            false,
        ),
        row(
            "192.88.99.2/32",
            "6a44-relay anycast address",
            "RFC 6751",
            Some(true),
            false,
        ),
        row(
            "192.168.0.0/16",
            "Private-Use",
            "RFC 1918",
            Some(false),
            false,
        ),
        row(
            "192.175.48.0/24",
            "Direct Delegation AS112 Service",
            "RFC 7534",
            Some(true),
            true,
        ),
        row(
            "198.18.0.0/15",
            "Benchmarking",
            "RFC 2544",
            Some(false),
            false,
        ),
        row(
            "198.51.100.0/24",
            "Documentation (TEST-NET-2)",
            "RFC 5737",
            Some(false),
            false,
        ),
        row(
            "203.0.113.0/24",
            "Documentation (TEST-NET-3)",
            "RFC 5737",
            Some(false),
            false,
        ),
        row("240.0.0.0/4", "Reserved", "RFC 1112", Some(false), false),
        row(
            "255.255.255.255/32",
            "Limited Broadcast",
            "RFC 919",
            Some(false),
            false,
        ),
    ];

    const IPV6_SPECIAL: &[Special] = &[
        row(
            "::1/128",
            "Loopback Address",
            "RFC 4291",
            Some(false),
            false,
        ),
        row(
            "::/128",
            "Unspecified Address",
            "RFC 4291",
            Some(false),
            false,
        ),
        // Checked as the IPv4 address it maps (a public one is allowed, as that address is).
        row(
            "::ffff:0:0/96",
            "IPv4-mapped Address",
            "RFC 4291",
            Some(false),
            false,
        ),
        // Globally reachable, but a translator reaches private IPv4 addresses as well.
        row(
            "64:ff9b::/96",
            "IPv4-IPv6 Translat.",
            "RFC 6052",
            Some(true),
            false,
        ),
        row(
            "64:ff9b:1::/48",
            "IPv4-IPv6 Translat.",
            "RFC 8215",
            Some(false),
            false,
        ),
        row(
            "100::/64",
            "Discard-Only Address Block",
            "RFC 6666",
            Some(false),
            false,
        ),
        row(
            "2001::/23",
            "IETF Protocol Assignments",
            "RFC 2928",
            Some(false),
            false,
        ),
        row("2001::/32", "TEREDO", "RFC 4380", None, false),
        row(
            "2001:1::1/128",
            "Port Control Protocol Anycast",
            "RFC 7723",
            Some(true),
            false,
        ),
        row(
            "2001:1::2/128",
            "Traversal Using Relays around NAT Anycast",
            "RFC 8155",
            Some(true),
            false,
        ),
        row(
            "2001:1::3/128",
            "DNS-SD Service Registration Protocol Anycast",
            "RFC 9665",
            Some(true),
            false,
        ),
        row(
            "2001:2::/48",
            "Benchmarking",
            "RFC 5180",
            Some(false),
            false,
        ),
        row("2001:3::/32", "AMT", "RFC 7450", Some(true), true),
        row("2001:4:112::/48", "AS112-v6", "RFC 7535", Some(true), true),
        row(
            "2001:10::/28",
            "Deprecated (previously ORCHID)",
            "RFC 4843",
            None,
            false,
        ),
        // Identifiers, not locators: nothing to deliver to.
        row("2001:20::/28", "ORCHIDv2", "RFC 7343", Some(true), false),
        row(
            "2001:30::/28",
            "Drone Remote ID Protocol Entity Tags (DETs) Prefix",
            "RFC 9374",
            Some(true),
            false,
        ),
        row(
            "2001:db8::/32",
            "Documentation",
            "RFC 3849",
            Some(false),
            false,
        ),
        // Relayed to the embedded IPv4 address; the samples embed non-public ones (a public
        // one is allowed, see `addresses_are_classified`).
        row("2002::/16", "6to4", "RFC 3056", None, false),
        row(
            "2620:4f:8000::/48",
            "Direct Delegation AS112 Service",
            "RFC 7534",
            Some(true),
            true,
        ),
        row("3fff::/20", "Documentation", "RFC 9637", Some(false), false),
        row(
            "5f00::/16",
            "Segment Routing (SRv6) SIDs",
            "RFC 9602",
            Some(false),
            false,
        ),
        row("fc00::/7", "Unique-Local", "RFC 4193", Some(false), false),
        row(
            "fe80::/10",
            "Link-Local Unicast",
            "RFC 4291",
            Some(false),
            false,
        ),
    ];

    /// The first, last and a middle address of a block.
    fn v4_samples(block: &str) -> [IpAddr; 3] {
        let (net, len) = block.split_once('/').expect("cidr");
        let net = u32::from(net.parse::<Ipv4Addr>().expect("ipv4"));
        let len: u32 = len.parse().expect("length");
        let host = u32::MAX.checked_shr(len).unwrap_or(0);
        let first = net & !host;
        let last = first | host;
        [first, last, first + host / 2 + host.min(1)].map(|n| IpAddr::V4(Ipv4Addr::from(n)))
    }

    fn v6_samples(block: &str) -> [IpAddr; 3] {
        let (net, len) = block.split_once('/').expect("cidr");
        let net = u128::from(net.parse::<Ipv6Addr>().expect("ipv6"));
        let len: u32 = len.parse().expect("length");
        let host = u128::MAX.checked_shr(len).unwrap_or(0);
        let first = net & !host;
        let last = first | host;
        // 6to4 and IPv4-mapped addresses stand for the IPv4 address they carry: their
        // sample carries the cloud metadata address 169.254.169.254.
        let middle = match block {
            "2002::/16" => u128::from("2002:a9fe:a9fe::1".parse::<Ipv6Addr>().expect("ipv6")),
            "::ffff:0:0/96" => {
                u128::from("::ffff:169.254.169.254".parse::<Ipv6Addr>().expect("ipv6"))
            }
            _ => first + host / 2 + host.min(1),
        };
        [first, last, middle].map(|n| IpAddr::V6(Ipv6Addr::from(n)))
    }

    #[test]
    fn every_iana_special_purpose_block_is_refused_unless_global_and_safe() {
        let rows = IPV4_SPECIAL
            .iter()
            .map(|r| (r, v4_samples(r.block)))
            .chain(IPV6_SPECIAL.iter().map(|r| (r, v6_samples(r.block))));
        for (r, samples) in rows {
            assert!(
                !r.allowed || r.global == Some(true),
                "{} ({}, {}): only a globally reachable block may be allowed",
                r.block,
                r.name,
                r.rfc
            );
            for ip in samples {
                let verdict = refused_address(ip, false);
                if r.allowed {
                    assert_eq!(verdict, None, "{ip} in {} ({}, {})", r.block, r.name, r.rfc);
                } else {
                    assert!(
                        verdict.is_some(),
                        "{ip} in {} ({}, {}) accepted",
                        r.block,
                        r.name,
                        r.rfc
                    );
                }
            }
        }
    }
}
