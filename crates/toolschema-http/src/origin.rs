//! `Host` and `Origin` checks, against DNS rebinding: a web page in a browser must not reach a
//! server on this machine (or behind the firewall) by pointing its own name at it.
//!
//! A request's `Host` must name this machine (`localhost`, `127.0.0.1`, `::1`), the address the
//! server is bound to, or one of `--allowed-host`. An `Origin` header, when a browser sends one,
//! must be `http(s)://` one of those hosts, or one of `--allowed-origin`. Ports are not compared:
//! a rebinding attack changes names, not ports.

use crate::refusal::{Refusal, RefusalKind};
use http::header::{HOST, ORIGIN};
use http::{HeaderMap, StatusCode};

/// Whether `host` (a name or an address, IPv6 with or without brackets) is this machine.
pub fn is_loopback_name(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// The names and origins a server answers to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OriginPolicy {
    hosts: Vec<String>,
    origins: Vec<String>,
    any_host: bool,
}

impl OriginPolicy {
    /// This machine's names, the `bound` address, and `extra_hosts` (`*` allows any host);
    /// `extra_origins` are whole origins (`https://app.example.com`).
    pub fn new(bound: std::net::IpAddr, extra_hosts: &[String], extra_origins: &[String]) -> Self {
        let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "::1"]
            .iter()
            .map(|h| h.to_string())
            .collect();
        if !bound.is_unspecified() {
            hosts.push(bound.to_string());
        }
        let any_host = extra_hosts.iter().any(|h| h == "*");
        hosts.extend(
            extra_hosts
                .iter()
                .filter(|h| *h != "*")
                .map(|h| normalize_host(h)),
        );
        OriginPolicy {
            hosts,
            origins: extra_origins
                .iter()
                .map(|o| o.trim_end_matches('/').to_ascii_lowercase())
                .collect(),
            any_host,
        }
    }

    /// The host names accepted (without ports).
    pub fn hosts(&self) -> &[String] {
        &self.hosts
    }

    fn host_allowed(&self, authority: &str) -> bool {
        self.any_host || self.hosts.contains(&normalize_host(strip_port(authority)))
    }

    /// Refuse a request whose `Host` or `Origin` this server does not answer to.
    pub fn check(&self, headers: &HeaderMap) -> Result<(), Refusal> {
        let Some(host) = headers.get(HOST) else {
            return Err(Refusal::new(
                RefusalKind::ForbiddenOrigin,
                "the request has no Host header",
            )
            .with_status(StatusCode::BAD_REQUEST));
        };
        let host = host.to_str().unwrap_or("");
        if !self.host_allowed(host) {
            return Err(Refusal::new(
                RefusalKind::ForbiddenOrigin,
                format!(
                    "Host '{}' is not one this server answers to (start it with --allowed-host NAME to add one)",
                    host.escape_default()
                ),
            ));
        }
        for origin in headers.get_all(ORIGIN) {
            let origin = origin.to_str().unwrap_or("");
            if !self.origin_allowed(origin) {
                return Err(Refusal::new(
                    RefusalKind::ForbiddenOrigin,
                    format!(
                        "Origin '{}' may not use this server (start it with --allowed-origin ORIGIN to allow one)",
                        origin.escape_default()
                    ),
                ));
            }
        }
        Ok(())
    }

    fn origin_allowed(&self, origin: &str) -> bool {
        let normalized = origin.trim_end_matches('/').to_ascii_lowercase();
        if self.origins.contains(&normalized) {
            return true;
        }
        let authority = normalized
            .strip_prefix("http://")
            .or_else(|| normalized.strip_prefix("https://"));
        match authority {
            Some(authority) if !authority.contains('/') && !authority.contains('@') => {
                self.host_allowed(authority)
            }
            _ => false,
        }
    }
}

/// `host[:port]` or `[v6][:port]` without the port.
fn strip_port(authority: &str) -> &str {
    if let Some(rest) = authority.strip_prefix('[') {
        return match rest.find(']') {
            Some(end) => &authority[..end + 2],
            None => authority,
        };
    }
    match authority.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') && port.bytes().all(|b| b.is_ascii_digit()) => {
            host
        }
        _ => authority,
    }
}

/// Lowercase, without IPv6 brackets and without a trailing dot.
fn normalize_host(host: &str) -> String {
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .trim_end_matches('.')
        .to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;
    use proptest::prelude::*;

    fn headers(host: Option<&str>, origin: Option<&str>) -> HeaderMap {
        let mut map = HeaderMap::new();
        if let Some(host) = host {
            map.insert(HOST, HeaderValue::from_str(host).unwrap());
        }
        if let Some(origin) = origin {
            map.insert(ORIGIN, HeaderValue::from_str(origin).unwrap());
        }
        map
    }

    #[test]
    fn loopback_names_and_the_bound_address_pass() {
        let policy = OriginPolicy::new(
            "10.0.0.5".parse().unwrap(),
            &["MCP.example.com".into()],
            &["https://app.example.com".into()],
        );
        for host in [
            "localhost:8080",
            "127.0.0.1",
            "[::1]:9",
            "10.0.0.5:80",
            "mcp.example.com",
            "mcp.example.com.:443",
        ] {
            assert_eq!(policy.check(&headers(Some(host), None)), Ok(()), "{host}");
        }
        for origin in [
            "http://localhost:3000",
            "https://mcp.example.com",
            "https://app.example.com/",
        ] {
            assert_eq!(
                policy.check(&headers(Some("localhost"), Some(origin))),
                Ok(()),
                "{origin}"
            );
        }
    }

    #[test]
    fn other_names_and_origins_are_refused() {
        let policy = OriginPolicy::new("0.0.0.0".parse().unwrap(), &[], &[]);
        let refused = policy
            .check(&headers(Some("evil.example.com:8080"), None))
            .unwrap_err();
        assert_eq!(refused.status(), StatusCode::FORBIDDEN);
        assert_eq!(
            refused.message(),
            "Host 'evil.example.com:8080' is not one this server answers to (start it with --allowed-host NAME to add one)"
        );
        assert!(policy.check(&headers(Some("0.0.0.0"), None)).is_err());
        for origin in [
            "http://evil.example.com",
            "null",
            "http://localhost.evil.com",
            "http://user@localhost",
            "file://",
        ] {
            let refused = policy
                .check(&headers(Some("localhost"), Some(origin)))
                .unwrap_err();
            assert_eq!(refused.status(), StatusCode::FORBIDDEN, "{origin}");
        }
        let refused = policy.check(&headers(None, None)).unwrap_err();
        assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
        let any = OriginPolicy::new("0.0.0.0".parse().unwrap(), &["*".into()], &[]);
        assert_eq!(any.check(&headers(Some("anything:1"), None)), Ok(()));
    }

    proptest! {
        /// No header value makes the check panic, and a host is accepted only when it is one of
        /// the names the policy holds.
        #[test]
        fn any_host_is_checked_without_panic(host in "[ -~]{0,60}", origin in "[ -~]{0,60}") {
            let policy = OriginPolicy::new("127.0.0.1".parse().unwrap(), &[], &[]);
            let mut map = HeaderMap::new();
            if let Ok(value) = HeaderValue::from_str(&host) {
                map.insert(HOST, value);
            }
            if let Ok(value) = HeaderValue::from_str(&origin) {
                map.insert(ORIGIN, value);
            }
            if policy.check(&map).is_ok() {
                let name = normalize_host(strip_port(map[HOST].to_str().unwrap()));
                prop_assert!(policy.hosts().contains(&name));
            }
        }
    }
}
