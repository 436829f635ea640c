//! The diary analysis queue (specification, "Diary analysis"): states `requested`,
//! `in_progress`, `completed`, `failed`; a claim takes a lease (default 15 minutes, at most
//! 60); a lease that runs out without a result puts the entry back in the work queue (readers
//! then see it as `requested` again; the stored row keeps `in_progress` until the next claim
//! takes it over). A submit needs the current lease token before the lease expires.

use time::OffsetDateTime;

/// Lease length of a claim when none is asked for, in minutes.
pub const LEASE_DEFAULT_MINUTES: i64 = 15;
/// The longest lease a claim may ask for, in minutes.
pub const LEASE_MAX_MINUTES: i64 = 60;
/// The same two in seconds (a claim may ask in either unit).
pub const LEASE_DEFAULT_SECONDS: i64 = LEASE_DEFAULT_MINUTES * 60;
pub const LEASE_MAX_SECONDS: i64 = LEASE_MAX_MINUTES * 60;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnalysisState {
    Requested,
    InProgress,
    Completed,
    Failed,
}

impl AnalysisState {
    pub const ALL: &'static [(&'static str, AnalysisState)] = &[
        ("requested", Self::Requested),
        ("in_progress", Self::InProgress),
        ("completed", Self::Completed),
        ("failed", Self::Failed),
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Requested => "requested",
            Self::InProgress => "in_progress",
            Self::Completed => "completed",
            Self::Failed => "failed",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        Self::ALL.iter().find(|(n, _)| *n == raw).map(|(_, s)| *s)
    }
}

/// The state a reader sees: an `in_progress` entry whose lease has run out is back in the
/// queue, so it reads as `requested`.
pub fn effective(
    stored: Option<AnalysisState>,
    lease_expires_at: Option<OffsetDateTime>,
    now: OffsetDateTime,
) -> Option<AnalysisState> {
    match stored {
        Some(AnalysisState::InProgress) if !lease_valid(lease_expires_at, now) => {
            Some(AnalysisState::Requested)
        }
        other => other,
    }
}

/// Whether a lease still runs at `now` (it ends at its expiry instant, exclusive).
pub fn lease_valid(lease_expires_at: Option<OffsetDateTime>, now: OffsetDateTime) -> bool {
    lease_expires_at.is_some_and(|t| t > now)
}

/// The lease length a claim gets, in seconds: the default when none is asked for; within
/// 1..=3600.
pub fn lease_seconds(asked: Option<i64>) -> Result<i64, String> {
    match asked {
        None => Ok(LEASE_DEFAULT_SECONDS),
        Some(s) if (1..=LEASE_MAX_SECONDS).contains(&s) => Ok(s),
        Some(_) => Err(format!(
            "a lease lasts 1 to {LEASE_MAX_SECONDS} seconds ({LEASE_MAX_MINUTES} minutes)"
        )),
    }
}

/// What a claim may do with an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClaimVerdict {
    /// Requested, or in progress with a lapsed lease: the claim takes it.
    Take,
    /// In progress with a valid lease: `conflict.already_claimed`.
    AlreadyClaimed,
    /// Never marked, or already completed or failed: not in the work queue.
    NotQueued,
}

pub fn claim(
    stored: Option<AnalysisState>,
    lease_expires_at: Option<OffsetDateTime>,
    now: OffsetDateTime,
) -> ClaimVerdict {
    match stored {
        Some(AnalysisState::Requested) => ClaimVerdict::Take,
        Some(AnalysisState::InProgress) if lease_valid(lease_expires_at, now) => {
            ClaimVerdict::AlreadyClaimed
        }
        Some(AnalysisState::InProgress) => ClaimVerdict::Take,
        None | Some(AnalysisState::Completed) | Some(AnalysisState::Failed) => {
            ClaimVerdict::NotQueued
        }
    }
}

/// What a submit may do with an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubmitVerdict {
    Accept,
    /// The entry is not `in_progress` (never claimed, or already submitted): `conflict.not_claimed`.
    NotClaimed,
    /// In progress, but the lease ran out or the token is not the current lease's:
    /// `conflict.lease_expired`.
    LeaseExpired,
}

pub fn submit(
    stored: Option<AnalysisState>,
    lease_expires_at: Option<OffsetDateTime>,
    token_matches: bool,
    now: OffsetDateTime,
) -> SubmitVerdict {
    match stored {
        Some(AnalysisState::InProgress) => {
            if token_matches && lease_valid(lease_expires_at, now) {
                SubmitVerdict::Accept
            } else {
                SubmitVerdict::LeaseExpired
            }
        }
        _ => SubmitVerdict::NotClaimed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::Duration;

    #[test]
    fn an_expired_lease_reads_as_requested() {
        let now = OffsetDateTime::now_utc();
        let ip = Some(AnalysisState::InProgress);
        assert_eq!(
            effective(ip, Some(now + Duration::minutes(1)), now),
            Some(AnalysisState::InProgress)
        );
        assert_eq!(
            effective(ip, Some(now), now),
            Some(AnalysisState::Requested)
        );
        assert_eq!(effective(ip, None, now), Some(AnalysisState::Requested));
        assert_eq!(effective(None, None, now), None);
        assert_eq!(
            effective(Some(AnalysisState::Completed), None, now),
            Some(AnalysisState::Completed)
        );
    }

    #[test]
    fn lease_length_default_and_ceiling() {
        assert_eq!(lease_seconds(None), Ok(900));
        assert_eq!(lease_seconds(Some(1)), Ok(1));
        assert_eq!(lease_seconds(Some(3600)), Ok(3600));
        assert!(lease_seconds(Some(0)).is_err());
        assert!(lease_seconds(Some(3601)).is_err());
    }

    #[test]
    fn claim_table() {
        let now = OffsetDateTime::now_utc();
        let later = Some(now + Duration::minutes(5));
        let earlier = Some(now - Duration::seconds(1));
        use AnalysisState::*;
        for (stored, lease, want) in [
            (Some(Requested), None, ClaimVerdict::Take),
            (Some(InProgress), later, ClaimVerdict::AlreadyClaimed),
            (Some(InProgress), earlier, ClaimVerdict::Take),
            (None, None, ClaimVerdict::NotQueued),
            (Some(Completed), None, ClaimVerdict::NotQueued),
            (Some(Failed), None, ClaimVerdict::NotQueued),
        ] {
            assert_eq!(claim(stored, lease, now), want, "{stored:?} {lease:?}");
        }
    }

    #[test]
    fn submit_table() {
        let now = OffsetDateTime::now_utc();
        let later = Some(now + Duration::minutes(5));
        let earlier = Some(now - Duration::seconds(1));
        use AnalysisState::*;
        for (stored, lease, token, want) in [
            (Some(InProgress), later, true, SubmitVerdict::Accept),
            (Some(InProgress), later, false, SubmitVerdict::LeaseExpired),
            (Some(InProgress), earlier, true, SubmitVerdict::LeaseExpired),
            (Some(Requested), None, false, SubmitVerdict::NotClaimed),
            (Some(Completed), None, true, SubmitVerdict::NotClaimed),
            (Some(Failed), None, false, SubmitVerdict::NotClaimed),
            (None, None, false, SubmitVerdict::NotClaimed),
        ] {
            assert_eq!(
                submit(stored, lease, token, now),
                want,
                "{stored:?} {lease:?} {token}"
            );
        }
    }
}
