use salvo::oapi::ToSchema;
use serde::Serialize;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::crypto::password::{PASSWORD_MAX_CHARS, PASSWORD_MIN_CHARS};
use crate::directory::AccountType;
use crate::values::json::{FromJson, JsonFields, Patch};

/// An e-mail address compared as a mailbox: the local part as written apart from ASCII case
/// (RFC 5321 leaves it to the receiving server; servers fold ASCII case), the domain
/// IDNA-normalised (UTS 46, kept in its Unicode form). A local part with a character that
/// folds onto another one (compatibility forms such as KELVIN SIGN or full-width letters,
/// letters whose case mapping is ASCII such as the dotless i, non-ASCII capitals) is refused:
/// it would otherwise be kept distinct from, yet read and be delivered like, another address.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Email(String);

/// Why a local-part character is refused (`None`: it is taken as written).
fn folding_char(c: char) -> Option<&'static str> {
    use unicode_normalization::UnicodeNormalization;
    if c.is_ascii() {
        return None;
    }
    let mut one = [0u8; 4];
    let written: &str = c.encode_utf8(&mut one);
    if written.nfkc().ne(written.chars()) {
        return Some("a compatibility character (such as KELVIN SIGN or a full-width letter)");
    }
    if c.to_lowercase().ne(std::iter::once(c)) {
        return Some("a non-ASCII capital letter (write it in lower case)");
    }
    if c.to_uppercase().any(|u| u.is_ascii()) {
        return Some("a letter whose capital is an ASCII letter (such as the dotless i)");
    }
    None
}

impl Email {
    pub const MAX_CHARS: usize = 254;

    pub fn parse(raw: &str) -> Result<Self, &'static str> {
        use unicode_normalization::UnicodeNormalization;
        let value = raw.trim();
        if value.is_empty() {
            return Err("e-mail address is empty");
        }
        if value.len() > Self::MAX_CHARS {
            return Err("e-mail address is longer than 254 characters");
        }
        let Some((local, domain)) = value.rsplit_once('@') else {
            return Err("e-mail address needs an @");
        };
        // Checked as written and once composed: NFC turns some characters (KELVIN SIGN, OHM
        // SIGN) into ASCII or other letters silently.
        if let Some(why) = local.chars().find_map(folding_char) {
            return Err(why);
        }
        let composed: String = local.nfc().collect();
        if let Some(why) = composed.chars().find_map(folding_char) {
            return Err(why);
        }
        let local = composed.to_ascii_lowercase();
        let local_ok = !local.is_empty()
            && local.len() <= 64
            && local
                .chars()
                .all(|c| !c.is_whitespace() && !c.is_control() && c != '@');
        if !local_ok {
            return Err("not a valid e-mail address");
        }
        // UTS 46 with the STD3 rules and DNS lengths: ASCII case, full-width forms and the
        // like map onto the one domain they name; then shown in its Unicode form.
        let ascii =
            idna::domain_to_ascii_strict(domain).map_err(|_| "not a valid e-mail address")?;
        let domain_ok = ascii.contains('.')
            && !ascii.ends_with('.')
            && ascii.split('.').all(|label| {
                !label.is_empty()
                    && label.len() <= 63
                    && !label.starts_with('-')
                    && !label.ends_with('-')
                    && label
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            });
        if !domain_ok {
            return Err("not a valid e-mail address");
        }
        let (domain, shown) = idna::domain_to_unicode(&ascii);
        if shown.is_err() {
            return Err("not a valid e-mail address");
        }
        let value = format!("{local}@{domain}");
        if value.len() > Self::MAX_CHARS {
            return Err("e-mail address is longer than 254 characters");
        }
        Ok(Self(value))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Email {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The user record of the specification.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[salvo(schema(name = "User"))]
pub struct User {
    /// User identifier.
    pub key: Uuid,
    /// E-mail address; null for service accounts.
    pub email: Option<String>,
    pub display_name: String,
    pub account_type: AccountType,
    pub email_verified: bool,
    pub is_active: bool,
    pub avatar_url: Option<String>,
    pub locale: String,
    pub timezone: String,
    #[serde(with = "time::serde::rfc3339::option")]
    pub last_login_at: Option<OffsetDateTime>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
}

/// What login needs beyond the public record.
#[derive(Debug, Clone)]
pub struct Credentials {
    pub user: User,
    pub password_hash: Option<String>,
    pub token_generation: i32,
    pub locked_until: Option<OffsetDateTime>,
}

/// What every authenticated request checks about its account, read together with the
/// account's record (one statement; `GET /users/me` answers with the record as read here).
#[derive(Debug, Clone)]
pub struct AccountStatus {
    pub user: User,
    pub token_generation: i32,
}

/// The fields of a profile change (`PATCH /users/me`, the settings page); an omitted field
/// stays as it was.
pub struct ProfileForm {
    pub display_name: Option<String>,
    pub locale: Option<String>,
    pub timezone: Option<String>,
    pub avatar_url: Patch<String>,
}

pub(crate) fn matches_locale(v: &str) -> bool {
    let mut parts = v.split('-');
    let lang_ok = parts
        .next()
        .is_some_and(|p| (2..=3).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_lowercase()));
    lang_ok
        && parts.all(|p| (2..=8).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_alphanumeric()))
}

pub(crate) fn matches_timezone(v: &str) -> bool {
    let mut parts = v.split('/');
    let first_ok = parts.next().is_some_and(|p| {
        p.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
            && p.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'+' | b'-'))
    });
    let rest: Vec<&str> = parts.collect();
    first_ok
        && rest.len() <= 2
        && rest.iter().all(|p| {
            !p.is_empty()
                && p.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'+' | b'-'))
        })
}

/// `http://` or `https://` and at least one more character, none of them blank.
fn is_http_url(url: &str) -> bool {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"));
    rest.is_some_and(|r| !r.is_empty() && !r.chars().any(crate::values::json::is_blank))
}

impl FromJson for ProfileForm {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let display_name = f.patch_text("display_name", 120);
        let locale = f.patch_text("locale", 35);
        let timezone = f.patch_text("timezone", 64);
        let avatar_url = f.patch_clearable("avatar_url", 500);
        if let Some(Some(l)) = &locale
            && !matches_locale(l)
        {
            f.reject_field(
                "locale",
                "must be a language tag such as de or en-GB",
                "value_error",
            );
        }
        if let Some(Some(t)) = &timezone
            && !matches_timezone(t)
        {
            f.reject_field(
                "timezone",
                "must be an IANA time zone name such as Europe/Berlin",
                "value_error",
            );
        }
        if let Some(Patch::Set(url)) = &avatar_url
            && !is_http_url(url)
        {
            f.reject_field("avatar_url", "must be an http(s) URL", "value_error");
        }
        Some(Self {
            display_name: display_name?,
            locale: locale?,
            timezone: timezone?,
            avatar_url: avatar_url?,
        })
    }
}

/// A password change: the current password (checked like a login) and the new one.
pub struct PasswordForm {
    pub current: String,
    pub new: String,
}

impl FromJson for PasswordForm {
    fn from_json(f: &mut JsonFields) -> Option<Self> {
        let current = f.secret("current_password", 1, PASSWORD_MAX_CHARS);
        let new = f.secret("new_password", PASSWORD_MIN_CHARS, PASSWORD_MAX_CHARS);
        Some(Self {
            current: current?,
            new: new?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emails_are_normalised_and_checked() {
        let ok = [
            ("Ann@Example.org", "ann@example.org"),
            ("  a.b+c@sub.example.co.uk ", "a.b+c@sub.example.co.uk"),
            ("grower@bücher.de", "grower@bücher.de"),
            ("grower@BÜCHER.de", "grower@bücher.de"),
            ("grower@xn--bcher-kva.de", "grower@bücher.de"),
            // Full-width letters in the domain name the same domain (UTS 46).
            ("kim@\u{FF45}xample.org", "kim@example.org"),
            ("kim@EXAMPLE.ORG", "kim@example.org"),
            // Non-ASCII local parts are kept as written.
            ("jörg@example.org", "jörg@example.org"),
            ("дом@example.org", "дом@example.org"),
            // Composed: the same text written decomposed is the same address.
            ("jo\u{308}rg@example.org", "jörg@example.org"),
        ];
        for (raw, want) in ok {
            assert_eq!(Email::parse(raw).map(|e| e.0), Ok(want.to_owned()), "{raw}");
        }
        let bad = [
            "",
            "plain",
            "@example.org",
            "a@",
            "a@localhost",
            "a b@example.org",
            "a@exa mple.org",
            "a@-example.org",
            "a@example..org",
            "a@b@example.org",
            "a\u{0}@example.org",
        ];
        for raw in bad {
            assert!(Email::parse(raw).is_err(), "{raw:?} accepted");
        }
        let long = format!("{}@example.org", "a".repeat(65));
        assert!(Email::parse(&long).is_err());
    }

    /// Local parts that Unicode case folding or compatibility mapping would turn into another
    /// address are refused, never merged with it; ASCII case alone folds.
    #[test]
    fn local_parts_that_fold_onto_another_address_are_refused() {
        let folding = [
            // KELVIN SIGN: lowercases and NFC-composes to ASCII k.
            ("\u{212A}im@example.org", "kim@example.org"),
            ("\u{212A}IM@example.org", "kim@example.org"),
            // LATIN SMALL LETTER DOTLESS I: its capital is ASCII I.
            ("k\u{131}m@example.org", "kim@example.org"),
            // LATIN CAPITAL LETTER I WITH DOT ABOVE: lowercases to i + U+0307.
            ("k\u{130}m@example.org", "kim@example.org"),
            // Full-width letters: NFKC maps them to ASCII.
            ("\u{FF4B}\u{FF49}\u{FF4D}@example.org", "kim@example.org"),
            ("\u{FF2B}im@example.org", "kim@example.org"),
            // LATIN SMALL LETTER LONG S: its capital is ASCII S.
            ("\u{17F}am@example.org", "sam@example.org"),
            // OHM SIGN composes to GREEK CAPITAL LETTER OMEGA; a ligature is NFKC "fi".
            ("\u{2126}@example.org", "ω@example.org"),
            ("\u{FB01}sh@example.org", "fish@example.org"),
            // Non-ASCII capitals would need Unicode lower-casing: refused, not folded.
            ("JÖRG@example.org", "jörg@example.org"),
        ];
        for (raw, other) in folding {
            assert!(Email::parse(raw).is_err(), "{raw:?} accepted");
            // The address it would fold onto is itself fine and stays distinct.
            assert_eq!(
                Email::parse(other).map(|e| e.0),
                Ok(other.to_owned()),
                "{other}"
            );
        }
        // ASCII case is the one folding of the local part.
        assert_eq!(
            Email::parse("KIM@example.org"),
            Email::parse("kim@example.org")
        );
        assert_ne!(
            Email::parse("jörg@example.org"),
            Email::parse("jorg@example.org")
        );
    }
}
