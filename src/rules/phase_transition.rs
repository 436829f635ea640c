//! Phase transitions of a plant (domain 2.11): forward within the sequence, back to a recurring
//! phase, or a cycle restart of a repeating (perennial) sequence; anything else is refused and
//! changes nothing. The sequence is the one the plant's species runs on at request time.

/// One phase of the sequence, as the rule needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry<'a> {
    pub phase_key: &'a str,
    pub order: i64,
    pub terminal: bool,
    pub recurring: bool,
}

/// The sequence the plant follows.
#[derive(Debug, Clone, Copy)]
pub struct Sequence<'a> {
    pub entries: &'a [Entry<'a>],
    pub repeating: bool,
    /// Where a repeating cycle restarts (the first entry when the sequence does not say).
    pub restart_order: Option<i64>,
}

/// Where the plant stands now (from its phase history).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Current<'a> {
    /// No history at all.
    Never,
    /// History exists, every row closed; `last_cycle` is the highest cycle number.
    BetweenCycles { last_cycle: i32 },
    /// An open row whose phase is not in the sequence (the species was rebound, or the
    /// catalogue dropped the phase).
    Unresolved { cycle: i32 },
    /// An open row on a phase of the sequence.
    In { phase_key: &'a str, cycle: i32 },
}

/// What kind of move an accepted transition is (stored as the history row's reason default).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Move {
    /// The first phase of a plant that never had one.
    Initial,
    /// A later phase of the same cycle.
    Forward,
    /// Back to a recurring phase within the cycle.
    Recurring,
    /// From the end of a repeating cycle to its restart phase: the next cycle.
    CycleRestart,
    /// A new cycle after all phases were closed.
    NewCycle,
    /// From an unresolved phase to a valid one of the plant's own sequence.
    Correction,
    /// Backward on the grower's explicit `force` (domain 2.11 (b)): allowed, with a warning
    /// kept in the history row.
    Forced,
}

impl Move {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Initial => "initial",
            Self::Forward => "forward",
            Self::Recurring => "recurring",
            Self::CycleRestart => "cycle_restart",
            Self::NewCycle => "new_cycle",
            Self::Correction => "correction",
            Self::Forced => "forced",
        }
    }
}

/// An accepted transition: the move and the cycle number of the new history row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    pub kind: Move,
    pub cycle: i32,
    pub target_order: i64,
}

/// Why a transition is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The sequence has no phases.
    EmptySequence,
    /// The target is not a phase of the plant's sequence.
    NotInSequence,
    /// The plant is already in the target phase.
    AlreadyInPhase,
    /// Backward to a phase that neither recurs nor restarts the cycle.
    Backward { from_order: i64, to_order: i64 },
}

/// The warning a forced move leaves in the history row.
pub fn forced_warning(from_order: i64, to_order: i64) -> String {
    format!(
        "forced backward transition from phase order {from_order} to {to_order}: neither a \
         recurring phase nor the cycle restart"
    )
}

impl Refusal {
    pub fn message(&self) -> String {
        match self {
            Self::EmptySequence => "the plant's phase sequence has no phases".into(),
            Self::NotInSequence => {
                "the target phase is not a phase of the sequence the plant's species runs on".into()
            }
            Self::AlreadyInPhase => "the plant is already in this phase".into(),
            Self::Backward {
                from_order,
                to_order,
            } => format!(
                "backward transition from phase order {from_order} to {to_order}: only a \
                 recurring phase or the cycle restart of a repeating sequence may come earlier"
            ),
        }
    }
}

/// Decides a transition to `target` (a phase key of the sequence). `force` lets a backward move
/// through (the caller records the warning); the same phase and a phase outside the sequence
/// stay refused whatever `force` says.
pub fn decide(
    seq: &Sequence,
    current: Current,
    target: &str,
    force: bool,
) -> Result<Decision, Refusal> {
    if seq.entries.is_empty() {
        return Err(Refusal::EmptySequence);
    }
    let to = seq
        .entries
        .iter()
        .find(|e| e.phase_key == target)
        .ok_or(Refusal::NotInSequence)?;
    let decision = |kind, cycle| Decision {
        kind,
        cycle,
        target_order: to.order,
    };
    let (from, cycle) = match current {
        Current::Never => return Ok(decision(Move::Initial, 1)),
        Current::BetweenCycles { last_cycle } => {
            return Ok(decision(Move::NewCycle, last_cycle.saturating_add(1)));
        }
        Current::Unresolved { cycle } => return Ok(decision(Move::Correction, cycle)),
        Current::In { phase_key, cycle } => {
            match seq.entries.iter().find(|e| e.phase_key == phase_key) {
                Some(from) => (from, cycle),
                // Not in the sequence: the caller reports it as unresolved; moving to any valid
                // phase corrects it.
                None => return Ok(decision(Move::Correction, cycle)),
            }
        }
    };
    if to.order == from.order {
        return Err(Refusal::AlreadyInPhase);
    }
    if to.order > from.order {
        return Ok(decision(Move::Forward, cycle));
    }
    let last_order = seq.entries.iter().map(|e| e.order).max().unwrap_or(0);
    let restart = seq.restart_order.unwrap_or(0);
    let at_cycle_end = from.terminal || from.order == last_order;
    if seq.repeating && at_cycle_end && to.order == restart {
        return Ok(decision(Move::CycleRestart, cycle.saturating_add(1)));
    }
    if to.recurring {
        return Ok(decision(Move::Recurring, cycle));
    }
    if force {
        return Ok(decision(Move::Forced, cycle));
    }
    Err(Refusal::Backward {
        from_order: from.order,
        to_order: to.order,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const fn e(
        phase_key: &'static str,
        order: i64,
        terminal: bool,
        recurring: bool,
    ) -> Entry<'static> {
        Entry {
            phase_key,
            order,
            terminal,
            recurring,
        }
    }

    const ANNUAL: &[Entry<'static>] = &[
        e("germ", 0, false, false),
        e("veg", 1, false, false),
        e("flower", 2, false, false),
        e("ripe", 3, true, false),
    ];
    const PERENNIAL: &[Entry<'static>] = &[
        e("veg", 0, false, true),
        e("flower", 1, false, true),
        e("rest", 2, true, false),
    ];
    // A repeating sequence that restarts at order 1 and has a recurring order-0 phase.
    const RESTART_AT_1: &[Entry<'static>] = &[
        e("wake", 0, false, false),
        e("grow", 1, false, false),
        e("prune", 2, false, true),
        e("sleep", 3, false, false),
    ];

    fn annual() -> Sequence<'static> {
        Sequence {
            entries: ANNUAL,
            repeating: false,
            restart_order: None,
        }
    }
    fn perennial() -> Sequence<'static> {
        Sequence {
            entries: PERENNIAL,
            repeating: true,
            restart_order: Some(0),
        }
    }
    fn restart_at_1() -> Sequence<'static> {
        Sequence {
            entries: RESTART_AT_1,
            repeating: true,
            restart_order: Some(1),
        }
    }

    fn inp(phase_key: &'static str, cycle: i32) -> Current<'static> {
        Current::In { phase_key, cycle }
    }

    type Case = (
        &'static str,
        Sequence<'static>,
        Current<'static>,
        &'static str,
        Result<(Move, i32), Refusal>,
    );

    #[test]
    fn transitions_table() {
        use Move::*;
        let cases: Vec<Case> = vec![
            (
                "first phase",
                annual(),
                Current::Never,
                "germ",
                Ok((Initial, 1)),
            ),
            (
                "start anywhere",
                annual(),
                Current::Never,
                "flower",
                Ok((Initial, 1)),
            ),
            (
                "forward by one",
                annual(),
                inp("germ", 1),
                "veg",
                Ok((Forward, 1)),
            ),
            (
                "forward skipping",
                annual(),
                inp("germ", 2),
                "ripe",
                Ok((Forward, 2)),
            ),
            (
                "same phase",
                annual(),
                inp("veg", 1),
                "veg",
                Err(Refusal::AlreadyInPhase),
            ),
            (
                "backward in an annual",
                annual(),
                inp("flower", 1),
                "veg",
                Err(Refusal::Backward {
                    from_order: 2,
                    to_order: 1,
                }),
            ),
            (
                "terminal annual cannot restart",
                annual(),
                inp("ripe", 1),
                "germ",
                Err(Refusal::Backward {
                    from_order: 3,
                    to_order: 0,
                }),
            ),
            (
                "unknown target",
                annual(),
                inp("veg", 1),
                "nope",
                Err(Refusal::NotInSequence),
            ),
            (
                "unknown target, never",
                annual(),
                Current::Never,
                "nope",
                Err(Refusal::NotInSequence),
            ),
            (
                "perennial restart",
                perennial(),
                inp("rest", 3),
                "veg",
                Ok((CycleRestart, 4)),
            ),
            (
                "back to a recurring phase",
                perennial(),
                inp("flower", 1),
                "veg",
                Ok((Recurring, 1)),
            ),
            (
                "restart only from the cycle end",
                restart_at_1(),
                inp("prune", 1),
                "grow",
                Err(Refusal::Backward {
                    from_order: 2,
                    to_order: 1,
                }),
            ),
            (
                "restart at its order",
                restart_at_1(),
                inp("sleep", 1),
                "grow",
                Ok((CycleRestart, 2)),
            ),
            (
                "end of cycle to a non-restart, non-recurring phase",
                restart_at_1(),
                inp("sleep", 1),
                "wake",
                Err(Refusal::Backward {
                    from_order: 3,
                    to_order: 0,
                }),
            ),
            (
                "end of cycle to a recurring phase",
                restart_at_1(),
                inp("sleep", 1),
                "prune",
                Ok((Recurring, 1)),
            ),
            (
                "between cycles",
                perennial(),
                Current::BetweenCycles { last_cycle: 2 },
                "veg",
                Ok((NewCycle, 3)),
            ),
            (
                "unresolved is corrected",
                annual(),
                Current::Unresolved { cycle: 2 },
                "veg",
                Ok((Correction, 2)),
            ),
            (
                "open row off the sequence",
                annual(),
                inp("gone", 1),
                "germ",
                Ok((Correction, 1)),
            ),
        ];
        for (name, seq, current, target, want) in cases {
            let got = decide(&seq, current, target, false).map(|d| (d.kind, d.cycle));
            assert_eq!(got, want, "{name}");
        }
    }

    #[test]
    fn an_empty_sequence_refuses_everything() {
        let seq = Sequence {
            entries: &[],
            repeating: false,
            restart_order: None,
        };
        assert_eq!(
            decide(&seq, Current::Never, "x", true),
            Err(Refusal::EmptySequence)
        );
    }

    #[test]
    fn the_decision_names_the_target_order() {
        let d = decide(&annual(), inp("germ", 1), "ripe", false).expect("forward");
        assert_eq!(d.target_order, 3);
        assert!(
            Refusal::Backward {
                from_order: 2,
                to_order: 1
            }
            .message()
            .contains("backward")
        );
    }

    #[test]
    fn force_lets_only_a_backward_move_through() {
        // Refused without force, forced with it; the cycle stays.
        assert!(matches!(
            decide(&annual(), inp("flower", 2), "veg", false),
            Err(Refusal::Backward { .. })
        ));
        let d = decide(&annual(), inp("flower", 2), "veg", true).expect("forced");
        assert_eq!((d.kind, d.cycle, d.target_order), (Move::Forced, 2, 1));
        // What force does not override: the same phase, a phase of another sequence.
        assert_eq!(
            decide(&annual(), inp("flower", 2), "flower", true),
            Err(Refusal::AlreadyInPhase)
        );
        assert_eq!(
            decide(&annual(), inp("flower", 2), "nope", true),
            Err(Refusal::NotInSequence)
        );
        // A move that needs no force is not reported as forced.
        let d = decide(&annual(), inp("veg", 1), "ripe", true).expect("forward");
        assert_eq!(d.kind, Move::Forward);
        assert!(forced_warning(2, 1).contains("forced backward"));
    }
}
