//! Delivery rules of the mail outbox: when to try again, when to give up, and how a recipient
//! appears in logs.

use std::time::Duration;

/// Delivery attempts before a mail is marked `failed`.
pub const MAX_ATTEMPTS: i32 = 8;
/// The wait after the first failed attempt; it doubles with every further failure.
pub const FIRST_RETRY: Duration = Duration::from_secs(30);
/// The longest wait between two attempts.
pub const LONGEST_RETRY: Duration = Duration::from_secs(3600);

/// What happens to a mail after a failed attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterFailure {
    /// Try again after this long.
    RetryIn(Duration),
    /// Give up: the mail is marked `failed`.
    GiveUp,
}

/// `attempts` counts the attempt that just failed (1 after the first). A permanent refusal
/// (an SMTP 5xx such as an unknown recipient) is not retried.
pub fn after_failure(attempts: i32, permanent: bool) -> AfterFailure {
    if permanent || attempts >= MAX_ATTEMPTS {
        return AfterFailure::GiveUp;
    }
    let doublings = attempts.clamp(1, 17) as u32 - 1;
    AfterFailure::RetryIn(
        FIRST_RETRY
            .saturating_mul(1 << doublings)
            .min(LONGEST_RETRY),
    )
}

/// A recipient as logs show it: the first character of the local part and the domain
/// (`a***@example.org`), so an operator can tell mails apart without reading addresses.
pub fn redacted_recipient(address: &str) -> String {
    match address.rsplit_once('@') {
        Some((local, domain)) => {
            let first: String = local.chars().take(1).collect();
            format!("{first}***@{domain}")
        }
        None => "***".to_owned(),
    }
}

/// Text a user wrote (a garden's name, a display name) as a plain-text mail shows it: one line
/// in double quotes, marked as quoted, with nothing a mail client turns into a link. Control
/// characters become spaces; `://` becomes `[:]//`, a dot between two letters or digits `[.]`
/// and `@` ` [at] `, so neither `https://evil.example`, `evil.example` nor `x@evil.example`
/// is linked; double quotes inside become single ones, so the quote cannot be closed early.
/// At most `MAX_QUOTED_CHARS` characters of the original are shown (an ellipsis marks the cut).
pub fn quoted_user_text(raw: &str) -> String {
    let chars: Vec<char> = raw
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let cut = chars.len() > MAX_QUOTED_CHARS;
    let chars = &chars[..chars.len().min(MAX_QUOTED_CHARS)];
    let mut out = String::with_capacity(chars.len() + 8);
    out.push('"');
    for (i, &c) in chars.iter().enumerate() {
        let before = i.checked_sub(1).and_then(|j| chars.get(j)).copied();
        let after = chars.get(i + 1).copied();
        match c {
            ':' if chars.get(i + 1) == Some(&'/') && chars.get(i + 2) == Some(&'/') => {
                out.push_str("[:]");
            }
            '.' if before.is_some_and(char::is_alphanumeric)
                && after.is_some_and(char::is_alphanumeric) =>
            {
                out.push_str("[.]");
            }
            '@' => out.push_str(" [at] "),
            '"' => out.push('\''),
            c => out.push(c),
        }
    }
    if cut {
        out.push('…');
    }
    out.push('"');
    out
}

/// The longest user-written text a mail quotes.
pub const MAX_QUOTED_CHARS: usize = 80;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_back_off_exponentially_then_give_up() {
        let secs = |s| AfterFailure::RetryIn(Duration::from_secs(s));
        let cases = [
            (1, false, secs(30)),
            (2, false, secs(60)),
            (3, false, secs(120)),
            (4, false, secs(240)),
            (5, false, secs(480)),
            (6, false, secs(960)),
            (7, false, secs(1920)),
            (8, false, AfterFailure::GiveUp),
            (9, false, AfterFailure::GiveUp),
            (1, true, AfterFailure::GiveUp),
            (0, false, secs(30)),
            (-3, false, secs(30)),
        ];
        for (attempts, permanent, expected) in cases {
            assert_eq!(
                after_failure(attempts, permanent),
                expected,
                "attempts {attempts}, permanent {permanent}"
            );
        }
    }

    #[test]
    fn the_wait_never_exceeds_the_cap() {
        for attempts in 1..MAX_ATTEMPTS {
            match after_failure(attempts, false) {
                AfterFailure::RetryIn(d) => assert!(d <= LONGEST_RETRY, "{attempts}"),
                AfterFailure::GiveUp => panic!("gave up early at {attempts}"),
            }
        }
    }

    #[test]
    fn recipients_are_redacted() {
        let cases = [
            ("anna@example.org", "a***@example.org"),
            ("x@y.test", "x***@y.test"),
            ("ärger@beispiel.de", "ä***@beispiel.de"),
            ("a@b@c.test", "a***@c.test"),
            ("@example.org", "***@example.org"),
            ("no-at-sign", "***"),
        ];
        for (raw, expected) in cases {
            assert_eq!(redacted_recipient(raw), expected, "{raw}");
        }
    }

    #[test]
    fn user_text_is_quoted_and_never_a_link() {
        let cases = [
            ("Allotment 7", "\"Allotment 7\""),
            ("No. 7 garden", "\"No. 7 garden\""),
            (
                "Click https://evil.example/login now",
                "\"Click https[:]//evil[.]example/login now\"",
            ),
            ("www.evil.example", "\"www[.]evil[.]example\""),
            (
                "write to x@evil.example",
                "\"write to x [at] evil[.]example\"",
            ),
            (
                "line\nbreak\r\tand \"quote\"",
                "\"line break  and 'quote'\"",
            ),
        ];
        for (raw, shown) in cases {
            assert_eq!(quoted_user_text(raw), shown, "{raw:?}");
        }
        let long = "a".repeat(200);
        let shown = quoted_user_text(&long);
        assert_eq!(shown.chars().count(), MAX_QUOTED_CHARS + 3);
        assert!(shown.ends_with("…\""));
        for raw in ["http://a.b", "HTTPS://A.B", "ftp://x", "mailto:a@b.c"] {
            let shown = quoted_user_text(raw);
            assert!(!shown.contains("://") && !shown.contains('@'), "{shown}");
        }
    }
}
