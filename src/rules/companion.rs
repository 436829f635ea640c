//! Companion planting (domain 2.5): the live plants in neighbour slots (and others sharing the
//! slot) against the planned species. A catalogue pair marked incompatible is a conflict; how
//! well it is supported decides what it costs: an `established` conflict (a shared disease or
//! pest, proven allelopathy, needs that cannot be met in one bed) needs the grower's
//! acknowledgement (`INCOMPATIBLE_COMPANION` without it), a `traditional` one (garden lore,
//! and every pair that does not say) is an advisory warning. Compatible neighbours are
//! reported as benefits.

/// A live plant next to the planned one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Neighbour<'a> {
    pub plant_key: &'a str,
    pub species_key: &'a str,
}

/// A catalogue pair (order does not matter).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pair<'a> {
    pub a: &'a str,
    pub b: &'a str,
    pub compatible: bool,
    pub score: Option<f64>,
    pub reason: Option<&'a str>,
    /// How well the pair is supported.
    pub evidence: Evidence,
    pub source: Option<&'a str>,
}

/// How well a companion rule is supported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Evidence {
    /// Documented mechanism or extension-service advice.
    Established,
    /// Garden lore; also what a pair without a stated evidence level is.
    Traditional,
}

impl Evidence {
    pub const ALL: &'static [&'static str] = &["established", "traditional"];

    pub fn parse(raw: Option<&str>) -> Self {
        match raw {
            Some("established") => Self::Established,
            _ => Self::Traditional,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Established => "established",
            Self::Traditional => "traditional",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Conflict {
    pub plant_key: String,
    pub species_key: String,
    pub reason: Option<String>,
    pub evidence: Evidence,
    pub source: Option<String>,
}

impl Conflict {
    /// Whether planting anyway needs the grower's acknowledgement.
    pub fn needs_acknowledgement(&self) -> bool {
        self.evidence == Evidence::Established
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Benefit {
    pub plant_key: String,
    pub species_key: String,
    pub score: Option<f64>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    pub conflicts: Vec<Conflict>,
    /// Best first.
    pub benefits: Vec<Benefit>,
}

pub fn check(species: &str, neighbours: &[Neighbour], pairs: &[Pair]) -> Outcome {
    let mut out = Outcome::default();
    for n in neighbours {
        let pair = pairs.iter().find(|p| {
            (p.a == species && p.b == n.species_key) || (p.b == species && p.a == n.species_key)
        });
        match pair {
            Some(p) if !p.compatible => out.conflicts.push(Conflict {
                plant_key: n.plant_key.to_owned(),
                species_key: n.species_key.to_owned(),
                reason: p.reason.map(str::to_owned),
                evidence: p.evidence,
                source: p.source.map(str::to_owned),
            }),
            Some(p) => out.benefits.push(Benefit {
                plant_key: n.plant_key.to_owned(),
                species_key: n.species_key.to_owned(),
                score: p.score,
            }),
            None => {}
        }
    }
    out.benefits
        .sort_by(|a, b| b.score.unwrap_or(0.0).total_cmp(&a.score.unwrap_or(0.0)));
    // Those that need an acknowledgement first.
    out.conflicts.sort_by_key(|c| !c.needs_acknowledgement());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAIRS: &[Pair<'static>] = &[
        Pair {
            a: "tomato",
            b: "basil",
            compatible: true,
            score: Some(0.9),
            reason: None,
            evidence: Evidence::Traditional,
            source: None,
        },
        Pair {
            a: "tomato",
            b: "parsley",
            compatible: true,
            score: Some(0.7),
            reason: None,
            evidence: Evidence::Traditional,
            source: None,
        },
        Pair {
            a: "fennel",
            b: "tomato",
            compatible: false,
            score: None,
            reason: Some("fennel inhibits nightshades"),
            evidence: Evidence::Traditional,
            source: None,
        },
        Pair {
            a: "potato",
            b: "tomato",
            compatible: false,
            score: None,
            reason: Some("late blight"),
            evidence: Evidence::Established,
            source: Some("extension advice"),
        },
    ];

    fn n(plant: &'static str, species: &'static str) -> Neighbour<'static> {
        Neighbour {
            plant_key: plant,
            species_key: species,
        }
    }

    /// (case, planned species, neighbours, conflicting plants, benefiting plants best first)
    type Case = (
        &'static str,
        &'static str,
        Vec<Neighbour<'static>>,
        Vec<&'static str>,
        Vec<&'static str>,
    );

    #[test]
    fn companion_table() {
        // (case, planned species, neighbours, conflicting plants, benefiting plants best first)
        let cases: Vec<Case> = vec![
            ("no neighbours", "tomato", vec![], vec![], vec![]),
            (
                "unrelated neighbour",
                "tomato",
                vec![n("p1", "carrot")],
                vec![],
                vec![],
            ),
            (
                "same species",
                "tomato",
                vec![n("p1", "tomato")],
                vec![],
                vec![],
            ),
            (
                "incompatible, listed the other way round",
                "tomato",
                vec![n("p1", "fennel")],
                vec!["p1"],
                vec![],
            ),
            (
                "incompatible as the planned one",
                "fennel",
                vec![n("p1", "tomato")],
                vec!["p1"],
                vec![],
            ),
            (
                "benefits best first",
                "tomato",
                vec![n("p1", "parsley"), n("p2", "basil")],
                vec![],
                vec!["p2", "p1"],
            ),
            (
                "one bad neighbour among good ones",
                "tomato",
                vec![n("p1", "basil"), n("p2", "fennel")],
                vec!["p2"],
                vec!["p1"],
            ),
        ];
        for (name, species, neighbours, conflicts, benefits) in cases {
            let got = check(species, &neighbours, PAIRS);
            let c: Vec<&str> = got.conflicts.iter().map(|c| c.plant_key.as_str()).collect();
            let b: Vec<&str> = got.benefits.iter().map(|b| b.plant_key.as_str()).collect();
            assert_eq!(c, conflicts, "{name}: conflicts");
            assert_eq!(b, benefits, "{name}: benefits");
        }
    }

    #[test]
    fn only_established_conflicts_need_acknowledging() {
        let got = check("tomato", &[n("p1", "fennel"), n("p2", "potato")], PAIRS);
        let c: Vec<(&str, bool)> = got
            .conflicts
            .iter()
            .map(|c| (c.plant_key.as_str(), c.needs_acknowledgement()))
            .collect();
        // The established one first; the folklore one stays, as advice.
        assert_eq!(c, [("p2", true), ("p1", false)]);
        assert_eq!(got.conflicts[0].source.as_deref(), Some("extension advice"));
        assert_eq!(Evidence::parse(None), Evidence::Traditional);
        assert_eq!(Evidence::parse(Some("established")), Evidence::Established);
    }

    #[test]
    fn a_conflict_carries_the_reason() {
        let got = check("tomato", &[n("p1", "fennel")], PAIRS);
        assert_eq!(
            got.conflicts[0].reason.as_deref(),
            Some("fennel inhibits nightshades")
        );
    }
}
