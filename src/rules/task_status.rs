//! Task states (domain 2.7): pending, in_progress, completed, skipped, failed, dormant.
//! start: pending → in_progress; complete: pending | in_progress → completed; skip: pending |
//! in_progress → skipped; fail: in_progress → failed; reopen: completed | skipped → pending.
//! Deleting is allowed only for pending, skipped and dormant tasks. Everything else is
//! `INVALID_STATUS_TRANSITION` (422). Dormant tasks become pending only when their plant enters
//! the trigger phase (never by an action).

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskStatus {
    Pending,
    InProgress,
    Completed,
    Skipped,
    Failed,
    Dormant,
}

impl TaskStatus {
    pub const ALL: &'static [(&'static str, TaskStatus)] = &[
        ("pending", Self::Pending),
        ("in_progress", Self::InProgress),
        ("completed", Self::Completed),
        ("skipped", Self::Skipped),
        ("failed", Self::Failed),
        ("dormant", Self::Dormant),
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::InProgress => "in_progress",
            Self::Completed => "completed",
            Self::Skipped => "skipped",
            Self::Failed => "failed",
            Self::Dormant => "dormant",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        Self::ALL.iter().find(|(n, _)| *n == raw).map(|(_, s)| *s)
    }

    /// Whether a task in this state may be deleted.
    pub fn deletable(self) -> bool {
        matches!(self, Self::Pending | Self::Skipped | Self::Dormant)
    }

    /// Whether the task is still to be done (shown as open work and in the calendar).
    pub fn open(self) -> bool {
        matches!(self, Self::Pending | Self::InProgress | Self::Dormant)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskAction {
    Start,
    Complete,
    Skip,
    Fail,
    Reopen,
}

impl TaskAction {
    pub const ALL: &'static [(&'static str, TaskAction)] = &[
        ("start", Self::Start),
        ("complete", Self::Complete),
        ("skip", Self::Skip),
        ("fail", Self::Fail),
        ("reopen", Self::Reopen),
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Start => "start",
            Self::Complete => "complete",
            Self::Skip => "skip",
            Self::Fail => "fail",
            Self::Reopen => "reopen",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        Self::ALL.iter().find(|(n, _)| *n == raw).map(|(_, s)| *s)
    }

    /// The state the action leads to from `from`; `None` when the move is not allowed.
    pub fn apply(self, from: TaskStatus) -> Option<TaskStatus> {
        use TaskStatus::*;
        match (self, from) {
            (Self::Start, Pending) => Some(InProgress),
            (Self::Complete, Pending | InProgress) => Some(Completed),
            (Self::Skip, Pending | InProgress) => Some(Skipped),
            (Self::Fail, InProgress) => Some(Failed),
            (Self::Reopen, Completed | Skipped) => Some(Pending),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::TaskAction::*;
    use super::TaskStatus::*;
    use super::*;

    #[test]
    fn every_action_from_every_state() {
        // (action, from, expected): the whole table of domain 2.7, allowed and refused moves.
        let table = [
            (Start, Pending, Some(InProgress)),
            (Start, InProgress, None),
            (Start, Completed, None),
            (Start, Skipped, None),
            (Start, Failed, None),
            (Start, Dormant, None),
            (Complete, Pending, Some(Completed)),
            (Complete, InProgress, Some(Completed)),
            (Complete, Completed, None),
            (Complete, Skipped, None),
            (Complete, Failed, None),
            (Complete, Dormant, None),
            (Skip, Pending, Some(Skipped)),
            (Skip, InProgress, Some(Skipped)),
            (Skip, Completed, None),
            (Skip, Dormant, None),
            (Fail, InProgress, Some(Failed)),
            (Fail, Pending, None),
            (Fail, Completed, None),
            (Reopen, Completed, Some(Pending)),
            (Reopen, Skipped, Some(Pending)),
            (Reopen, Pending, None),
            (Reopen, InProgress, None),
            (Reopen, Failed, None),
            (Reopen, Dormant, None),
        ];
        for (action, from, want) in table {
            assert_eq!(action.apply(from), want, "{action:?} from {from:?}");
        }
    }

    #[test]
    fn only_unstarted_or_skipped_tasks_can_be_deleted() {
        let deletable: Vec<&str> = TaskStatus::ALL
            .iter()
            .filter(|(_, s)| s.deletable())
            .map(|(n, _)| *n)
            .collect();
        assert_eq!(deletable, ["pending", "skipped", "dormant"]);
    }

    #[test]
    fn names_round_trip() {
        for (n, s) in TaskStatus::ALL {
            assert_eq!(TaskStatus::parse(n), Some(*s));
            assert_eq!(s.as_str(), *n);
        }
        for (n, a) in TaskAction::ALL {
            assert_eq!(TaskAction::parse(n), Some(*a));
            assert_eq!(a.as_str(), *n);
        }
    }
}
