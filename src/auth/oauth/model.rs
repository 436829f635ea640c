//! Identity providers as the API shows them, and the admin's body for adding one.

use salvo::oapi::ToSchema;
use serde::Serialize;
use time::OffsetDateTime;

use crate::http::json::{FromJson, JsonFields};

/// What the login page needs to offer a provider.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[salvo(schema(name = "OAuthProvider"))]
pub struct PublicProvider {
    pub slug: String,
    pub display_name: String,
    pub icon_url: Option<String>,
}

/// A provider as the platform admin sees it; the client secret is never shown.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[salvo(schema(name = "IdentityProvider"))]
pub struct Provider {
    pub slug: String,
    pub display_name: String,
    pub icon_url: Option<String>,
    pub authorize_url: String,
    pub token_url: String,
    pub client_id: String,
    /// Space-separated scopes requested at the provider.
    pub scopes: String,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
}

impl From<Provider> for PublicProvider {
    fn from(p: Provider) -> Self {
        Self {
            slug: p.slug,
            display_name: p.display_name,
            icon_url: p.icon_url,
        }
    }
}

/// Body of `POST /admin/identity-providers`.
#[derive(Debug, Clone, serde::Deserialize, ToSchema)]
#[salvo(schema(name = "IdentityProviderCreate"))]
#[serde(deny_unknown_fields)]
pub struct NewProvider {
    /// 1–40 characters of `a-z`, `0-9` and `-`, not starting or ending with `-`.
    #[salvo(schema(
        min_length = 1,
        max_length = 40,
        pattern = r"^[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?$"
    ))]
    pub slug: String,
    #[salvo(schema(
        min_length = 1,
        max_length = 100,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$"
    ))]
    pub display_name: String,
    /// https URL (http only on loopback hosts).
    #[salvo(schema(
        max_length = 2000,
        pattern = r"^(https://[^\s#@/?\u0000-\u001F\u007F-\u009F]+|http://(localhost|127\.0\.0\.1|\[::1\])(:[0-9]{1,5})?)([/?][^\s#@\u0000-\u001F\u007F-\u009F]*)?$"
    ))]
    pub icon_url: Option<String>,
    /// The provider's authorization endpoint: https (http only on loopback hosts).
    #[salvo(schema(
        max_length = 2000,
        pattern = r"^(https://[^\s#@/?\u0000-\u001F\u007F-\u009F]+|http://(localhost|127\.0\.0\.1|\[::1\])(:[0-9]{1,5})?)([/?][^\s#@\u0000-\u001F\u007F-\u009F]*)?$"
    ))]
    pub authorize_url: String,
    /// The provider's token endpoint: https (http only on loopback hosts).
    #[salvo(schema(
        max_length = 2000,
        pattern = r"^(https://[^\s#@/?\u0000-\u001F\u007F-\u009F]+|http://(localhost|127\.0\.0\.1|\[::1\])(:[0-9]{1,5})?)([/?][^\s#@\u0000-\u001F\u007F-\u009F]*)?$"
    ))]
    pub token_url: String,
    #[salvo(schema(
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\s\u0000-\u001F\u007F-\u009F]+$"
    ))]
    pub client_id: String,
    /// Stored encrypted with `FERNET_KEY`; never returned.
    #[salvo(schema(
        min_length = 1,
        max_length = 500,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]+$"
    ))]
    pub client_secret: String,
    /// Space-separated; default `openid email profile`.
    #[salvo(schema(
        min_length = 1,
        max_length = 500,
        pattern = r"^[!#-\[\]-~]+( [!#-\[\]-~]+)*$"
    ))]
    pub scopes: Option<String>,
}

/// A provider slug: `a-z`, `0-9`, `-`, 1–40 characters, no hyphen at either end.
pub fn is_provider_slug(raw: &str) -> bool {
    !raw.is_empty()
        && raw.len() <= 40
        && !raw.starts_with('-')
        && !raw.ends_with('-')
        && raw
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// What an endpoint URL may look like: https, or http on a loopback host (local development
/// and tests); no credentials (`@`), no fragment. The OpenAPI schema publishes the same pattern.
const ENDPOINT_URL: &str = r"^(https://[^\s#@/?\u0000-\u001F\u007F-\u009F]+|http://(localhost|127\.0\.0\.1|\[::1\])(:[0-9]{1,5})?)([/?][^\s#@\u0000-\u001F\u007F-\u009F]*)?$";

static ENDPOINT_URL_RE: std::sync::LazyLock<Option<regex::Regex>> =
    std::sync::LazyLock::new(|| regex::Regex::new(ENDPOINT_URL).ok());

/// An endpoint URL the service will send browsers or requests to (see [`ENDPOINT_URL`]).
pub fn is_endpoint_url(raw: &str) -> bool {
    ENDPOINT_URL_RE.as_ref().is_some_and(|re| re.is_match(raw))
}

/// Scopes: space-separated tokens of printable ASCII without `"` and `\` (RFC 6749 3.3).
fn is_scope_list(raw: &str) -> bool {
    !raw.is_empty()
        && raw.split(' ').all(|token| {
            !token.is_empty()
                && token
                    .bytes()
                    .all(|b| (0x21..=0x7e).contains(&b) && b != b'"' && b != b'\\')
        })
}

impl FromJson for NewProvider {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let slug = f.text("slug", 40);
        let display_name = f.text("display_name", 100);
        let icon_url = f.opt_long_text("icon_url", 2000);
        let authorize_url = f.text("authorize_url", 2000);
        let token_url = f.text("token_url", 2000);
        let client_id = f.text("client_id", 200);
        let client_secret = f.secret("client_secret", 1, 500);
        let scopes = f.opt_long_text("scopes", 500);

        let slug = slug.filter(|s| {
            let ok = is_provider_slug(s);
            if !ok {
                f.reject_field(
                    "slug",
                    "1-40 of a-z, 0-9 and -, no hyphen at either end",
                    "value_error",
                );
            }
            ok
        });
        let mut url_field = |name: &str, value: &Option<String>| {
            if value.as_deref().is_some_and(|u| !is_endpoint_url(u)) {
                f.reject_field(
                    name,
                    "must be an https URL (http only for localhost) without credentials or fragment",
                    "value_error",
                );
                return false;
            }
            true
        };
        let urls_ok = [
            url_field("authorize_url", &authorize_url),
            url_field("token_url", &token_url),
            url_field("icon_url", &icon_url.clone().flatten()),
        ]
        .iter()
        .all(|ok| *ok);
        let client_id = client_id.filter(|id| {
            let ok = !id.chars().any(char::is_whitespace);
            if !ok {
                f.reject_field("client_id", "must not contain white space", "value_error");
            }
            ok
        });
        let scopes = scopes.and_then(|s| match s {
            Some(list) if !is_scope_list(&list) => {
                f.reject_field("scopes", "space-separated scope tokens", "value_error");
                None
            }
            other => Some(other),
        });
        if !urls_ok {
            return None;
        }
        Some(Self {
            slug: slug?,
            display_name: display_name?,
            icon_url: icon_url?,
            authorize_url: authorize_url?,
            token_url: token_url?,
            client_id: client_id?,
            client_secret: client_secret?,
            scopes: scopes?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_urls_are_https_or_loopback_http() {
        for ok in [
            "https://id.example.org/authorize",
            "https://id.example.org/o/oauth2/auth?prompt=consent",
            "https://0",
            "http://127.0.0.1:9000/authorize",
            "http://localhost/authorize",
        ] {
            assert!(is_endpoint_url(ok), "{ok}");
        }
        for bad in [
            "http://id.example.org/authorize",
            "ftp://id.example.org/",
            "https://user:pw@id.example.org/",
            "https://id.example.org/#frag",
            "javascript:alert(1)",
            "http://localhost.evil.org/",
            "not a url",
        ] {
            assert!(!is_endpoint_url(bad), "{bad}");
        }
    }

    #[test]
    fn provider_slugs_and_scopes() {
        assert!(is_provider_slug("google"));
        assert!(is_provider_slug("my-idp-2"));
        assert!(!is_provider_slug("-x"));
        assert!(!is_provider_slug("Google"));
        assert!(!is_provider_slug(""));
        assert!(is_scope_list("openid email profile"));
        assert!(!is_scope_list("openid  email"));
        assert!(!is_scope_list("a\"b"));
    }
}
