//! Planting run states (domain 2.6): planned → active | cancelled; active → harvesting |
//! completed | cancelled; harvesting → completed | cancelled; completed and cancelled are final.
//! And which operations each state allows (`INVALID_RUN_STATE` otherwise).

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunStatus {
    Planned,
    Active,
    Harvesting,
    Completed,
    Cancelled,
}

impl RunStatus {
    pub const ALL: &'static [(&'static str, RunStatus)] = &[
        ("planned", Self::Planned),
        ("active", Self::Active),
        ("harvesting", Self::Harvesting),
        ("completed", Self::Completed),
        ("cancelled", Self::Cancelled),
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Planned => "planned",
            Self::Active => "active",
            Self::Harvesting => "harvesting",
            Self::Completed => "completed",
            Self::Cancelled => "cancelled",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        Self::ALL.iter().find(|(n, _)| *n == raw).map(|(_, s)| *s)
    }

    /// The states this one may move to.
    pub fn next(self) -> &'static [RunStatus] {
        use RunStatus::*;
        match self {
            Planned => &[Active, Cancelled],
            Active => &[Harvesting, Completed, Cancelled],
            Harvesting => &[Completed, Cancelled],
            Completed | Cancelled => &[],
        }
    }

    pub fn can_become(self, to: RunStatus) -> bool {
        self.next().contains(&to)
    }

    /// Entering it sets `started_at`.
    pub fn starts(self) -> bool {
        self == Self::Active
    }

    /// Entering it sets `completed_at`.
    pub fn ends(self) -> bool {
        matches!(self, Self::Completed | Self::Cancelled)
    }
}

/// Operations guarded by the run's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunOp {
    /// Add existing plants: planned or active.
    AddPlants,
    /// Create plants for the run: planned only.
    CreatePlants,
}

impl RunOp {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::AddPlants => "add plants",
            Self::CreatePlants => "create plants",
        }
    }

    pub fn allowed_in(self, status: RunStatus) -> bool {
        use RunStatus::*;
        match self {
            Self::AddPlants => matches!(status, Planned | Active),
            Self::CreatePlants => status == Planned,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::RunStatus::*;
    use super::*;

    #[test]
    fn transition_table() {
        let allowed = [
            (Planned, Active),
            (Planned, Cancelled),
            (Active, Harvesting),
            (Active, Completed),
            (Active, Cancelled),
            (Harvesting, Completed),
            (Harvesting, Cancelled),
        ];
        for (_, from) in RunStatus::ALL {
            for (_, to) in RunStatus::ALL {
                assert_eq!(
                    from.can_become(*to),
                    allowed.contains(&(*from, *to)),
                    "{} -> {}",
                    from.as_str(),
                    to.as_str()
                );
            }
        }
    }

    #[test]
    fn operation_guards() {
        let cases = [
            (RunOp::AddPlants, Planned, true),
            (RunOp::AddPlants, Active, true),
            (RunOp::AddPlants, Harvesting, false),
            (RunOp::AddPlants, Completed, false),
            (RunOp::AddPlants, Cancelled, false),
            (RunOp::CreatePlants, Planned, true),
            (RunOp::CreatePlants, Active, false),
            (RunOp::CreatePlants, Completed, false),
        ];
        for (op, status, want) in cases {
            assert_eq!(
                op.allowed_in(status),
                want,
                "{} in {}",
                op.as_str(),
                status.as_str()
            );
        }
    }

    #[test]
    fn names_round_trip() {
        for (name, s) in RunStatus::ALL {
            assert_eq!(RunStatus::parse(name), Some(*s));
            assert_eq!(s.as_str(), *name);
        }
        assert_eq!(RunStatus::parse("done"), None);
        assert!(Active.starts() && Completed.ends() && Cancelled.ends() && !Harvesting.ends());
    }
}
