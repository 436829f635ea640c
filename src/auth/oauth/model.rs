//! Identity providers as the API shows them, and the admin's body for adding one.

use salvo::oapi::ToSchema;
use serde::Serialize;
use time::OffsetDateTime;

use crate::values::json::{FromJson, JsonFields};

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
    /// The OpenID issuer (`iss` of its ID tokens); `null` only on rows from before sign-in
    /// worked (such a provider finishes no login until it is registered anew).
    pub issuer: Option<String>,
    /// `null` when the endpoints come from the issuer's discovery document.
    pub authorize_url: Option<String>,
    pub token_url: Option<String>,
    pub jwks_url: Option<String>,
    /// `client_secret_basic` or `client_secret_post`; `null`: as discovery announces
    /// (`client_secret_basic` when offered).
    pub token_auth_method: Option<String>,
    pub client_id: String,
    /// Space-separated scopes requested at the provider.
    pub scopes: String,
    /// A disabled provider is not offered and completes no login.
    pub enabled: bool,
    /// Whether the provider's `email_verified` is believed: only then does a sign-in join an
    /// existing, confirmed local account with the same address, and does an account it opens
    /// count as confirmed.
    pub trust_email: bool,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
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

/// Body of `POST /admin/identity-providers`: an OpenID provider by its issuer (endpoints and
/// keys from `{issuer}/.well-known/openid-configuration`), or by its issuer and all three of
/// `authorize_url`, `token_url` and `jwks_url`.
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
    /// The OpenID issuer identifier, exactly as the provider's ID tokens carry it in `iss`:
    /// https (http only on loopback hosts).
    #[salvo(schema(
        max_length = 2000,
        pattern = r"^(https://[^\s#@/?\u0000-\u001F\u007F-\u009F]+|http://(localhost|127\.0\.0\.1|\[::1\])(:[0-9]{1,5})?)([/?][^\s#@\u0000-\u001F\u007F-\u009F]*)?$"
    ))]
    pub issuer: String,
    /// The provider's authorization endpoint; give it with `token_url` and `jwks_url`, or
    /// none of the three (discovery).
    #[salvo(schema(
        max_length = 2000,
        pattern = r"^(https://[^\s#@/?\u0000-\u001F\u007F-\u009F]+|http://(localhost|127\.0\.0\.1|\[::1\])(:[0-9]{1,5})?)([/?][^\s#@\u0000-\u001F\u007F-\u009F]*)?$"
    ))]
    pub authorize_url: Option<String>,
    /// The provider's token endpoint (see `authorize_url`).
    #[salvo(schema(
        max_length = 2000,
        pattern = r"^(https://[^\s#@/?\u0000-\u001F\u007F-\u009F]+|http://(localhost|127\.0\.0\.1|\[::1\])(:[0-9]{1,5})?)([/?][^\s#@\u0000-\u001F\u007F-\u009F]*)?$"
    ))]
    pub token_url: Option<String>,
    /// The provider's JSON Web Key Set (see `authorize_url`).
    #[salvo(schema(
        max_length = 2000,
        pattern = r"^(https://[^\s#@/?\u0000-\u001F\u007F-\u009F]+|http://(localhost|127\.0\.0\.1|\[::1\])(:[0-9]{1,5})?)([/?][^\s#@\u0000-\u001F\u007F-\u009F]*)?$"
    ))]
    pub jwks_url: Option<String>,
    /// How the service authenticates at the token endpoint; default: as discovery announces
    /// (`client_secret_basic` when offered), else `client_secret_basic`.
    #[salvo(schema(value_type = Option<TokenAuthMethod>))]
    pub token_auth_method: Option<String>,
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
    /// Space-separated; default `openid email profile`; must contain `openid`.
    #[salvo(schema(
        min_length = 1,
        max_length = 500,
        pattern = r"^[!#-\[\]-~]+( [!#-\[\]-~]+)*$"
    ))]
    pub scopes: Option<String>,
    /// Default `false`. Turn on only for a provider that confirms its users' addresses itself
    /// and lets nobody assert an address they do not own: its `email_verified` then joins a
    /// sign-in to the confirmed local account with that address.
    #[serde(default)]
    pub trust_email: bool,
}

/// The token endpoint's client authentication.
#[derive(Debug, Clone, Copy, serde::Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum TokenAuthMethod {
    ClientSecretBasic,
    ClientSecretPost,
}

/// Body of `PATCH /admin/identity-providers/{provider}`: at least one of the fields; an
/// omitted one is kept.
#[derive(Debug, Clone, serde::Deserialize, ToSchema)]
#[salvo(schema(name = "IdentityProviderUpdate"))]
#[serde(deny_unknown_fields)]
pub struct ProviderUpdate {
    /// `false` stops new logins at once (also flows already started); `true` offers the
    /// provider again.
    pub enabled: Option<bool>,
    /// Whether the provider's `email_verified` may join a sign-in to a confirmed local account
    /// (see `IdentityProviderCreate`). Turning it off does not undo identities linked before.
    pub trust_email: Option<bool>,
}

impl FromJson for ProviderUpdate {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        if !f.has("enabled") && !f.has("trust_email") {
            f.reject_field("enabled", "give enabled and/or trust_email", "missing");
            f.raw("enabled");
            f.raw("trust_email");
            return None;
        }
        let present = |f: &mut JsonFields, name: &'static str| {
            if f.has(name) {
                f.flag(name, false).map(Some)
            } else {
                Some(None)
            }
        };
        let enabled = present(f, "enabled");
        let trust_email = present(f, "trust_email");
        Some(Self {
            enabled: enabled?,
            trust_email: trust_email?,
        })
    }
}

/// A sign-in of the caller's account at an identity provider.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[salvo(schema(name = "LinkedIdentity"))]
pub struct Identity {
    pub id: uuid::Uuid,
    /// The provider's slug.
    pub provider: String,
    pub provider_name: String,
    /// The address the provider named at the last sign-in (for recognising it only).
    pub email: Option<String>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339::option")]
    pub last_login_at: Option<OffsetDateTime>,
}

/// Answer of `POST /auth/oauth/{provider}/link`.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[salvo(schema(name = "OAuthLinkStart"))]
pub struct LinkStart {
    /// Where to send the browser (a top-level navigation): the provider's authorization
    /// endpoint with `state`, `nonce` and the PKCE challenge.
    pub authorization_url: String,
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
        let issuer = f.text("issuer", 2000);
        let authorize_url = f.opt_long_text("authorize_url", 2000);
        let token_url = f.opt_long_text("token_url", 2000);
        let jwks_url = f.opt_long_text("jwks_url", 2000);
        let token_auth_method = f.opt_long_text("token_auth_method", 40);
        let client_id = f.text("client_id", 200);
        let client_secret = f.secret("client_secret", 1, 500);
        let scopes = f.opt_long_text("scopes", 500);
        let trust_email = f.flag("trust_email", false);

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
        let mut url_field = |name: &str, value: Option<&str>| {
            if value.is_some_and(|u| !is_endpoint_url(u)) {
                f.reject_field(
                    name,
                    "must be an https URL (http only for localhost) without credentials or fragment",
                    "value_error",
                );
                return false;
            }
            true
        };
        let flat = |v: &Option<Option<String>>| v.clone().flatten();
        let urls_ok = [
            url_field("issuer", issuer.as_deref()),
            url_field("authorize_url", flat(&authorize_url).as_deref()),
            url_field("token_url", flat(&token_url).as_deref()),
            url_field("jwks_url", flat(&jwks_url).as_deref()),
            url_field("icon_url", flat(&icon_url).as_deref()),
        ]
        .iter()
        .all(|ok| *ok);
        // All three endpoints or none (discovery): a half-given set is refused on the missing.
        let given = [
            ("authorize_url", flat(&authorize_url).is_some()),
            ("token_url", flat(&token_url).is_some()),
            ("jwks_url", flat(&jwks_url).is_some()),
        ];
        let mut endpoints_ok = true;
        if given.iter().any(|(_, g)| *g) {
            for (name, g) in given {
                if !g {
                    endpoints_ok = false;
                    f.reject_field(
                        name,
                        "give authorize_url, token_url and jwks_url together, or none of them (discovery from the issuer)",
                        "missing",
                    );
                }
            }
        }
        let token_auth_method = token_auth_method.and_then(|m| match m {
            Some(method) if method != "client_secret_basic" && method != "client_secret_post" => {
                f.reject_field(
                    "token_auth_method",
                    "must be one of: client_secret_basic, client_secret_post",
                    "value_error",
                );
                None
            }
            other => Some(other),
        });
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
            Some(list) if !list.split(' ').any(|t| t == "openid") => {
                f.reject_field(
                    "scopes",
                    "must contain openid (the login needs an ID token)",
                    "value_error",
                );
                None
            }
            other => Some(other),
        });
        if !urls_ok || !endpoints_ok {
            return None;
        }
        Some(Self {
            slug: slug?,
            display_name: display_name?,
            icon_url: icon_url?,
            issuer: issuer?,
            authorize_url: authorize_url?,
            token_url: token_url?,
            jwks_url: jwks_url?,
            token_auth_method: token_auth_method?,
            client_id: client_id?,
            client_secret: client_secret?,
            scopes: scopes?,
            trust_email: trust_email?,
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
