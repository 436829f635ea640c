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
}
