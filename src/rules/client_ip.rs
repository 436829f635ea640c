//! Who the client is, network-wise. The socket peer is the client, unless the peer is one of
//! the configured trusted proxies: then the client is the right-most `X-Forwarded-For`
//! address that is not itself a trusted proxy. A header sent by anybody else is ignored, so a
//! client cannot pick its own rate-limit bucket.

use std::net::{IpAddr, SocketAddr};
use std::str::FromStr;

use ipnet::IpNet;

/// The `TRUSTED_PROXIES` set: addresses and networks whose `X-Forwarded-For` is believed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedProxies(Vec<IpNet>);

impl TrustedProxies {
    /// Parses a comma-separated list of IP addresses and CIDR networks (`10.0.0.0/8`,
    /// `192.168.1.7`, `fd00::/8`). Every bad entry is reported, one problem each.
    pub fn parse(raw: &str) -> Result<Self, Vec<String>> {
        let mut nets = Vec::new();
        let mut problems = Vec::new();
        for entry in raw.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            match parse_network(entry) {
                Ok(net) => nets.push(net),
                Err(why) => problems.push(format!("TRUSTED_PROXIES entry {entry:?} {why}")),
            }
        }
        if problems.is_empty() {
            Ok(Self(nets))
        } else {
            Err(problems)
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = ip.to_canonical();
        self.0.iter().any(|net| net.contains(&ip))
    }
}

fn parse_network(entry: &str) -> Result<IpNet, String> {
    if entry.contains('/') {
        let net = IpNet::from_str(entry)
            .map_err(|_| "is not an IP address or a CIDR network such as 10.0.0.0/8".to_owned())?;
        if net != net.trunc() {
            return Err(format!("has host bits set (did you mean {}?)", net.trunc()));
        }
        Ok(net)
    } else {
        let ip = IpAddr::from_str(entry)
            .map_err(|_| "is not an IP address or a CIDR network such as 10.0.0.0/8".to_owned())?;
        Ok(IpNet::from(ip.to_canonical()))
    }
}

/// One hop of `X-Forwarded-For`: a bare address, `[v6]`, or an address with a port
/// (`1.2.3.4:5678`, `[::1]:80`) as some proxies write it.
fn parse_hop(raw: &str) -> Option<IpAddr> {
    let raw = raw.trim();
    let ip = IpAddr::from_str(raw)
        .ok()
        .or_else(|| SocketAddr::from_str(raw).ok().map(|s| s.ip()))
        .or_else(|| {
            raw.strip_prefix('[')
                .and_then(|r| r.strip_suffix(']'))
                .and_then(|r| IpAddr::from_str(r).ok())
        })?;
    Some(ip.to_canonical())
}

/// The client address of a request. `peer` is the socket peer (`None` for a non-IP socket,
/// which gives no client address); `forwarded_for` are the `X-Forwarded-For` header values in
/// the order received (each may list several comma-separated hops).
///
/// Only when the peer is trusted is the header read, from the right: each trusted hop is
/// skipped, and the first untrusted hop is the client. If every hop is trusted the left-most
/// one is the client; an unreadable hop stops the walk at the last trusted address before it
/// (what lies to its left cannot be vouched for).
pub fn client_ip<'a>(
    peer: Option<IpAddr>,
    forwarded_for: impl IntoIterator<Item = &'a str>,
    trusted: &TrustedProxies,
) -> Option<IpAddr> {
    let peer = peer?.to_canonical();
    if !trusted.contains(peer) {
        return Some(peer);
    }
    let hops: Vec<&str> = forwarded_for
        .into_iter()
        .flat_map(|value| value.split(','))
        .map(str::trim)
        .filter(|hop| !hop.is_empty())
        .collect();
    let mut client = peer;
    for hop in hops.iter().rev() {
        let Some(ip) = parse_hop(hop) else {
            break;
        };
        client = ip;
        if !trusted.contains(ip) {
            break;
        }
    }
    Some(client)
}

/// The rate-limit identity of a client address: an IPv4 address on its own, an IPv6 address
/// by its /64 network (one subscriber usually holds a whole /64 and could otherwise rotate
/// through it to multiply the quota).
pub fn limit_identity(ip: IpAddr) -> String {
    match ip.to_canonical() {
        IpAddr::V4(v4) => format!("ip:{v4}"),
        IpAddr::V6(v6) => match ipnet::Ipv6Net::new(v6, 64) {
            Ok(net) => format!("ip6:{}", net.trunc()),
            Err(_) => format!("ip6:{v6}"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(raw: &str) -> IpAddr {
        IpAddr::from_str(raw).expect("test address")
    }

    fn trusted(raw: &str) -> TrustedProxies {
        TrustedProxies::parse(raw).expect("valid list")
    }

    #[test]
    fn trusted_proxies_parse_addresses_and_networks() {
        let list = trusted(" 10.0.0.0/8, 192.168.1.7 ,fd00::/8,,::1");
        let cases = [
            ("10.1.2.3", true),
            ("11.0.0.1", false),
            ("192.168.1.7", true),
            ("192.168.1.8", false),
            ("fd12::1", true),
            ("fe80::1", false),
            ("::1", true),
            // An IPv4 peer seen on a dual-stack socket.
            ("::ffff:10.9.9.9", true),
            ("::ffff:11.9.9.9", false),
        ];
        for (addr, expected) in cases {
            assert_eq!(list.contains(ip(addr)), expected, "{addr}");
        }
        assert!(trusted("").is_empty());
        assert!(trusted(" , ").is_empty());
    }

    #[test]
    fn bad_trusted_proxies_are_each_reported() {
        let cases = [
            ("proxy.example.com", "is not an IP address"),
            ("10.0.0.0/33", "is not an IP address"),
            ("10.0.0.1/8", "did you mean 10.0.0.0/8?"),
            ("300.1.1.1", "is not an IP address"),
            ("*", "is not an IP address"),
        ];
        for (raw, why) in cases {
            let problems = TrustedProxies::parse(raw).expect_err(raw);
            assert_eq!(problems.len(), 1, "{raw}");
            assert!(problems[0].contains("TRUSTED_PROXIES"), "{problems:?}");
            assert!(problems[0].contains(why), "{raw}: {problems:?}");
        }
        let problems = TrustedProxies::parse("10.0.0.0/8,nope,also-bad").expect_err("two bad");
        assert_eq!(problems.len(), 2);
    }

    #[test]
    fn client_ip_follows_the_trusted_chain_only() {
        let proxies = trusted("10.0.0.0/8,127.0.0.1");
        // (peer, X-Forwarded-For values, expected client)
        let cases: &[(&str, &[&str], &str)] = &[
            // Untrusted peer: the header is ignored, whatever it says.
            ("203.0.113.9", &["198.51.100.1"], "203.0.113.9"),
            ("203.0.113.9", &[], "203.0.113.9"),
            // Trusted peer without a header: the proxy itself is the client.
            ("10.0.0.2", &[], "10.0.0.2"),
            // One proxy: the right-most entry.
            ("10.0.0.2", &["198.51.100.1"], "198.51.100.1"),
            // Spoofed entries left of the real client do not matter.
            ("10.0.0.2", &["1.1.1.1, 198.51.100.1"], "198.51.100.1"),
            // Several proxies: trusted hops are skipped from the right.
            (
                "10.0.0.2",
                &["1.1.1.1, 198.51.100.1, 10.0.0.7"],
                "198.51.100.1",
            ),
            // Repeated headers count as one list, in order.
            (
                "10.0.0.2",
                &["1.1.1.1", "198.51.100.1, 10.0.0.7"],
                "198.51.100.1",
            ),
            // Every hop trusted: the left-most one.
            ("10.0.0.2", &["10.0.0.5, 10.0.0.7"], "10.0.0.5"),
            // An unreadable hop stops at the last trusted address before it.
            ("10.0.0.2", &["198.51.100.1, garbage, 10.0.0.7"], "10.0.0.7"),
            ("10.0.0.2", &["unknown"], "10.0.0.2"),
            // Ports and brackets as some proxies write them.
            ("10.0.0.2", &["198.51.100.1:4711"], "198.51.100.1"),
            ("10.0.0.2", &["[2001:db8::1]:443"], "2001:db8::1"),
            ("10.0.0.2", &["[2001:db8::1]"], "2001:db8::1"),
            ("10.0.0.2", &[" 2001:db8::2 "], "2001:db8::2"),
            // IPv4-mapped addresses are their IPv4 selves, for peer and hops alike.
            ("::ffff:10.0.0.2", &["::ffff:198.51.100.1"], "198.51.100.1"),
            ("::ffff:203.0.113.9", &["198.51.100.1"], "203.0.113.9"),
            // Loopback trusted (a local proxy), empty entries skipped.
            ("127.0.0.1", &["198.51.100.1,, "], "198.51.100.1"),
        ];
        for (peer, headers, expected) in cases {
            assert_eq!(
                client_ip(Some(ip(peer)), headers.iter().copied(), &proxies),
                Some(ip(expected)),
                "peer {peer}, X-Forwarded-For {headers:?}"
            );
        }
    }

    #[test]
    fn without_trusted_proxies_the_peer_is_the_client() {
        let none = TrustedProxies::default();
        assert_eq!(
            client_ip(Some(ip("127.0.0.1")), ["198.51.100.1"], &none),
            Some(ip("127.0.0.1"))
        );
        assert_eq!(client_ip(None, ["198.51.100.1"], &none), None);
    }

    #[test]
    fn ipv6_clients_are_limited_per_64_network() {
        let cases = [
            ("198.51.100.1", "ip:198.51.100.1"),
            ("::ffff:198.51.100.1", "ip:198.51.100.1"),
            ("2001:db8:1:2:aaaa::1", "ip6:2001:db8:1:2::/64"),
            ("2001:db8:1:2:bbbb::9", "ip6:2001:db8:1:2::/64"),
            ("2001:db8:1:3::1", "ip6:2001:db8:1:3::/64"),
            ("::1", "ip6:::/64"),
        ];
        for (addr, identity) in cases {
            assert_eq!(limit_identity(ip(addr)), identity, "{addr}");
        }
    }
}
