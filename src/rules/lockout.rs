//! Account lockout after repeated failed logins: 5 failures lock the account for 15 minutes,
//! each further lock (without a successful login in between) doubles that, capped at 4 hours.

use std::time::Duration;

/// Failed logins in a row that lock the account.
pub const FAILURES_BEFORE_LOCK: i32 = 5;
const FIRST_LOCK: Duration = Duration::from_secs(15 * 60);
const LONGEST_LOCK: Duration = Duration::from_secs(4 * 60 * 60);

/// How long the next lock lasts, given how many locks came before it since the last success.
pub fn lock_duration(previous_locks: i32) -> Duration {
    let doublings = previous_locks.clamp(0, 16) as u32;
    FIRST_LOCK
        .checked_mul(1u32 << doublings)
        .map_or(LONGEST_LOCK, |d| d.min(LONGEST_LOCK))
}

/// Whole minutes (rounded up) for the 423 message.
pub fn minutes_left(remaining: Duration) -> u64 {
    remaining.as_secs().div_ceil(60).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locks_double_and_cap_at_four_hours() {
        let cases = [
            (-1, 15),
            (0, 15),
            (1, 30),
            (2, 60),
            (3, 120),
            (4, 240),
            (5, 240),
            (40, 240),
        ];
        for (previous, minutes) in cases {
            assert_eq!(
                lock_duration(previous),
                Duration::from_secs(minutes * 60),
                "after {previous} locks"
            );
        }
    }

    #[test]
    fn remaining_time_rounds_up_to_minutes() {
        assert_eq!(minutes_left(Duration::from_secs(1)), 1);
        assert_eq!(minutes_left(Duration::from_secs(60)), 1);
        assert_eq!(minutes_left(Duration::from_secs(61)), 2);
        assert_eq!(minutes_left(Duration::ZERO), 1);
    }
}
