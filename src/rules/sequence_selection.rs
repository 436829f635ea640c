//! Which phase sequence an unbound species runs on (the specification's "Sequence selection for
//! an unbound species"; first match wins). There is no runner rule: runner species are bound
//! explicitly. Missing data never yields the annual harvest cycle. Rule 6 gives the annual
//! harvest cycle (`annual_harvest`, no flush): `indoor_default` ends in two weeks of plain
//! water before harvest, a hydroponic practice no vegetable is grown by, so a species runs on it
//! only when bound to it.

/// What the rules look at. `cycle_type` is the effective one: the cultivation cycle type when
/// set ("grown as annual"), else the botanical one; `None` when no lifecycle is recorded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SelectionInput<'a> {
    pub genus: Option<&'a str>,
    pub cycle_type: Option<&'a str>,
    pub flowering_strategy: Option<&'a str>,
    pub photosynthesis_type: Option<&'a str>,
    pub photoperiod_type: Option<&'a str>,
    pub growth_habit: Option<&'a str>,
}

/// The sequence names the rules can give.
pub const PHOTOPERIODIC_ORNAMENTAL: &str = "photoperiodic_ornamental";
pub const CLONAL_MONOCARP: &str = "clonal_monocarp";
pub const CAM_SUCCULENT_REST: &str = "cam_succulent_rest";
pub const CAM_DOUBLE_REST: &str = "cam_double_rest";
pub const FERN_SPORE: &str = "fern_spore";
pub const GEOPHYTE_FINE: &str = "geophyte_fine";
pub const PALM_EVERGREEN: &str = "palm_evergreen";
pub const EVERGREEN_FOLIAGE_PERENNIAL: &str = "evergreen_foliage_perennial";
pub const INDOOR_DEFAULT: &str = "indoor_default";
pub const ANNUAL_HARVEST: &str = "annual_harvest";

/// The phase no vegetable cycle may hold (plain water instead of feed before harvest).
pub const FLUSH_PHASE: &str = "flushing";

/// The sequences the seed must hold: those the rules name, and `indoor_default`.
pub const ALL: &[&str] = &[
    PHOTOPERIODIC_ORNAMENTAL,
    CLONAL_MONOCARP,
    CAM_SUCCULENT_REST,
    CAM_DOUBLE_REST,
    FERN_SPORE,
    GEOPHYTE_FINE,
    PALM_EVERGREEN,
    EVERGREEN_FOLIAGE_PERENNIAL,
    INDOOR_DEFAULT,
    ANNUAL_HARVEST,
];

/// Palms recognised by genus when the growth habit does not say `palm`.
const PALM_GENERA: &[&str] = &["chamaedorea", "dypsis", "howea", "livistona"];

/// Which rule matched (1–7) and the sequence it names.
pub fn select(input: &SelectionInput) -> (u8, &'static str) {
    let is = |v: Option<&str>, want: &str| v.is_some_and(|v| v.eq_ignore_ascii_case(want));
    let perennial = is(input.cycle_type, "perennial");
    let habit = |h: &str| is(input.growth_habit, h);
    // 1. Perennial short-day ornamental (annual short-day crops keep their harvest cycle).
    if is(input.photoperiod_type, "short_day") && perennial && !habit("bulb_geophyte") {
        return (1, PHOTOPERIODIC_ORNAMENTAL);
    }
    // 2. Monocarpic perennial epiphyte (bromeliads): offsets carry on.
    if is(input.flowering_strategy, "monocarpic") && perennial && habit("epiphyte") {
        return (2, CLONAL_MONOCARP);
    }
    // 3. CAM succulent: a cool, dry winter rest (Lithops rest twice a year).
    if is(input.photosynthesis_type, "cam") {
        return if is(input.genus, "lithops") {
            (3, CAM_DOUBLE_REST)
        } else {
            (3, CAM_SUCCULENT_REST)
        };
    }
    // 4. Ferns, bulbs and palms have a cycle of their own each.
    if habit("fern") {
        return (4, FERN_SPORE);
    }
    if habit("bulb_geophyte") {
        return (4, GEOPHYTE_FINE);
    }
    let palm_genus = input
        .genus
        .is_some_and(|g| PALM_GENERA.iter().any(|p| g.eq_ignore_ascii_case(p)));
    if habit("palm") || palm_genus {
        return (4, PALM_EVERGREEN);
    }
    // 5. Any other perennial.
    if perennial {
        return (5, EVERGREEN_FOLIAGE_PERENNIAL);
    }
    // 6. Known annual or biennial: the annual default cycle ending in a harvest, without a
    //    flush (vegetables are fed to the end; see the module's comment).
    if is(input.cycle_type, "annual") || is(input.cycle_type, "biennial") {
        return (6, ANNUAL_HARVEST);
    }
    // 7. Anything else, including no lifecycle at all: evergreen and repeating, never a harvest
    //    and end of life.
    (7, EVERGREEN_FOLIAGE_PERENNIAL)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input<'a>(
        genus: &'a str,
        cycle: Option<&'a str>,
        flowering: Option<&'a str>,
        photosynthesis: Option<&'a str>,
        photoperiod: Option<&'a str>,
        habit: Option<&'a str>,
    ) -> SelectionInput<'a> {
        SelectionInput {
            genus: Some(genus),
            cycle_type: cycle,
            flowering_strategy: flowering,
            photosynthesis_type: photosynthesis,
            photoperiod_type: photoperiod,
            growth_habit: habit,
        }
    }

    #[test]
    fn rules_in_order() {
        let p = Some("perennial");
        let a = Some("annual");
        let cases = [
            // 1: perennial short-day, not a bulb.
            (
                "Euphorbia",
                p,
                None,
                Some("c3"),
                Some("short_day"),
                Some("shrub"),
                1,
                PHOTOPERIODIC_ORNAMENTAL,
            ),
            // 1 beats 3: a short-day perennial CAM plant (Kalanchoe).
            (
                "Kalanchoe",
                p,
                None,
                Some("cam"),
                Some("short_day"),
                Some("succulent"),
                1,
                PHOTOPERIODIC_ORNAMENTAL,
            ),
            // Not 1: annual short-day crop keeps its harvest cycle.
            (
                "Glycine",
                a,
                None,
                Some("c3"),
                Some("short_day"),
                Some("herb"),
                6,
                ANNUAL_HARVEST,
            ),
            // Not 1: a short-day bulb falls to rule 4.
            (
                "Hippeastrum",
                p,
                None,
                Some("c3"),
                Some("short_day"),
                Some("bulb_geophyte"),
                4,
                GEOPHYTE_FINE,
            ),
            // 2: monocarpic perennial epiphyte.
            (
                "Guzmania",
                p,
                Some("monocarpic"),
                Some("cam"),
                None,
                Some("epiphyte"),
                2,
                CLONAL_MONOCARP,
            ),
            // Not 2: polycarpic epiphyte (orchid) -> perennial.
            (
                "Phalaenopsis",
                p,
                Some("polycarpic"),
                Some("c3"),
                None,
                Some("epiphyte"),
                5,
                EVERGREEN_FOLIAGE_PERENNIAL,
            ),
            // 3: CAM succulents, Lithops twice.
            (
                "Echeveria",
                p,
                None,
                Some("cam"),
                None,
                Some("succulent"),
                3,
                CAM_SUCCULENT_REST,
            ),
            (
                "Lithops",
                p,
                None,
                Some("cam"),
                None,
                Some("succulent"),
                3,
                CAM_DOUBLE_REST,
            ),
            // 3 also without a lifecycle record.
            (
                "Aloe",
                None,
                None,
                Some("cam"),
                None,
                Some("succulent"),
                3,
                CAM_SUCCULENT_REST,
            ),
            // 4: fern, bulb, palm (habit or genus).
            (
                "Nephrolepis",
                p,
                None,
                Some("c3"),
                None,
                Some("fern"),
                4,
                FERN_SPORE,
            ),
            (
                "Tulipa",
                p,
                None,
                Some("c3"),
                Some("long_day"),
                Some("bulb_geophyte"),
                4,
                GEOPHYTE_FINE,
            ),
            (
                "Phoenix",
                p,
                None,
                Some("c3"),
                None,
                Some("palm"),
                4,
                PALM_EVERGREEN,
            ),
            (
                "Howea",
                p,
                None,
                Some("c3"),
                None,
                Some("tree"),
                4,
                PALM_EVERGREEN,
            ),
            (
                "Chamaedorea",
                None,
                None,
                None,
                None,
                None,
                4,
                PALM_EVERGREEN,
            ),
            // 5: any other perennial.
            (
                "Monstera",
                p,
                None,
                Some("c3"),
                None,
                Some("vine"),
                5,
                EVERGREEN_FOLIAGE_PERENNIAL,
            ),
            // 6: known annual or biennial.
            (
                "Ocimum",
                a,
                None,
                Some("c3"),
                Some("day_neutral"),
                Some("herb"),
                6,
                ANNUAL_HARVEST,
            ),
            (
                "Daucus",
                Some("biennial"),
                None,
                Some("c3"),
                Some("long_day"),
                Some("herb"),
                6,
                ANNUAL_HARVEST,
            ),
            // 7: nothing recorded, or an unknown cycle type.
            (
                "Yucca",
                None,
                None,
                None,
                None,
                None,
                7,
                EVERGREEN_FOLIAGE_PERENNIAL,
            ),
            (
                "Yucca",
                None,
                None,
                Some("c3"),
                None,
                Some("shrub"),
                7,
                EVERGREEN_FOLIAGE_PERENNIAL,
            ),
            (
                "Mystery",
                Some("unknown"),
                None,
                None,
                None,
                Some("herb"),
                7,
                EVERGREEN_FOLIAGE_PERENNIAL,
            ),
        ];
        for (genus, cycle, flowering, ps, pp, habit, rule, want) in cases {
            let got = select(&input(genus, cycle, flowering, ps, pp, habit));
            assert_eq!(got, (rule, want), "{genus} {cycle:?} {habit:?}");
        }
    }

    #[test]
    fn missing_data_never_gives_the_annual_cycle() {
        let empty = SelectionInput::default();
        assert_eq!(select(&empty), (7, EVERGREEN_FOLIAGE_PERENNIAL));
        assert_ne!(select(&empty).1, INDOOR_DEFAULT);
        assert_ne!(select(&empty).1, ANNUAL_HARVEST);
    }

    #[test]
    fn rule_6_never_gives_a_vegetable_the_flushing_cycle() {
        // (genus, cycle type, habit): unbound vegetables of the catalogue, annual or biennial
        // (the cultivation cycle type of potato, runner bean and sweet potato is annual).
        let cases = [
            ("Raphanus", "annual", "herb"),
            ("Solanum", "annual", "herb"),
            ("Daucus", "biennial", "herb"),
            ("Brassica", "biennial", "herb"),
            ("Brassica", "annual", "herb"),
            ("Phaseolus", "annual", "vine"),
            ("Pisum", "annual", "vine"),
            ("Cucurbita", "annual", "vine"),
            ("Cucumis", "annual", "vine"),
            ("Allium", "biennial", "herb"),
            ("Beta", "biennial", "herb"),
            ("Zea", "annual", "herb"),
            ("Ipomoea", "annual", "vine"),
        ];
        for (genus, cycle, habit) in cases {
            let got = select(&input(
                genus,
                Some(cycle),
                None,
                Some("c3"),
                Some("long_day"),
                Some(habit),
            ));
            assert_eq!(got, (6, ANNUAL_HARVEST), "{genus} {cycle}");
            assert_ne!(got.1, INDOOR_DEFAULT, "{genus}: no flush before harvest");
        }
        // No rule names indoor_default at all: it is reached only by binding.
        for i in [
            SelectionInput::default(),
            input("Zea", Some("annual"), None, Some("c4"), None, None),
            input(
                "Glycine",
                Some("annual"),
                None,
                None,
                Some("short_day"),
                None,
            ),
        ] {
            assert_ne!(select(&i).1, INDOOR_DEFAULT, "{i:?}");
        }
    }

    #[test]
    fn case_of_values_does_not_matter() {
        let i = input("LITHOPS", Some("PERENNIAL"), None, Some("CAM"), None, None);
        assert_eq!(select(&i), (3, CAM_DOUBLE_REST));
    }
}
