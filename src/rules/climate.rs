//! Per-phase ranges of air temperature, air humidity and nutrient-water temperature that the
//! alert scan judges sensors against. Pure rules; each range carries its source.
//!
//! Neither the reference (domain 1.4 names day/night temperature and humidity per phase
//! without numbers) nor the catalogue phases (`phases.json`: durations, BBCH, watering
//! interval) hold these numbers, so they come from the published guides named in each source.
//! Where two sources disagree on a bound, the narrower one holds (the alert comes earlier).
//! Fahrenheit figures are converted to °C and rounded to 0.1.
//!
//! Generic, by coarse phase (`plan_coverage::coarse_phase`):
//! - germination: 21.1-26.7 °C (70-80 °F, eXtension, "What are the requirements for germinating
//!   seeds?", 2008; UC's 68-86 °F is wider) and 75-100 % RH (Harris Seeds, "Environmental
//!   conditions for seeding crops indoors": over 75 %; eXtension: nearly 100 %);
//! - seedling: 15.6-23.9 °C (Mid-Atlantic Commercial Vegetable Production Recommendations,
//!   table A-4, as published by the University of Delaware's Weekly Crop Update (E. Ernest,
//!   "Times and temperatures for vegetable transplant production"): optimum day 65-75 °F and
//!   minimum night 60 °F for most crops) and 35-60 % RH (Harris Seeds: after germination
//!   35-60 % suffices);
//! - vegetative, flushing and harvest: 16-30 °C, flowering 16-29 °C (Bayer, "Temperature,
//!   humidity, and water in protected culture tomatoes": phosphorus deficiency below 16 °C,
//!   no lycopene above 30 °C; Ontario greenhouse tomato guide as quoted by grovida.us: blossoms
//!   injured above 29 °C). No published humidity band for these phases was found for crops in
//!   general: their humidity is judged through the VPD (`rules::alerts::vpd_range`).
//! - dormancy: none (the winter quarter depends on the species).
//! - nutrient water (`water_temperature_c`) in every fed phase: 18-22 °C, the mixing
//!   protocol's water (domain 2.14).
//!
//! Crops with their own figures (by scientific name) replace the generic temperature of the
//! phases they name: table A-4's germination and transplant (seedling) temperatures, and for
//! tomato the Bayer guide's 21-27 °C day and 17-18 °C night for the later phases (17-27 °C).

use super::alerts::Range;
use super::plan_coverage::REST_PLAN_PHASE;

/// A range as data: (min, max, source).
type Band = (f64, f64, &'static str);

const EXTENSION_GERMINATION: &str = "eXtension, \"What are the requirements for germinating \
     seeds?\" (2008): most seeds germinate very well at 70-80 °F (21.1-26.7 °C); the narrower \
     of it and UC's 68-86 °F";
const HARRIS_GERMINATION_RH: &str = "Harris Seeds, \"Environmental conditions for seeding \
     crops indoors\": germination needs over 75 % humidity (eXtension: nearly 100 %)";
const TABLE_A4_GENERIC: &str = "Mid-Atlantic Commercial Vegetable Production \
     Recommendations, table A-4 (University of Delaware Weekly Crop Update, E. Ernest, \"Times \
     and temperatures for vegetable transplant production\"): optimum day 65-75 °F, minimum \
     night 60 °F for most crops (15.6-23.9 °C)";
const HARRIS_SEEDLING_RH: &str = "Harris Seeds, \"Environmental conditions for seeding crops \
     indoors\": after germination 35-60 % humidity suffices";
const BAYER_GROWTH: &str = "Bayer, \"Temperature, humidity, and water in protected culture \
     tomatoes\": phosphorus deficiency symptoms below 16 °C, lycopene does not form above \
     30 °C; generic for crops without their own figures";
const BAYER_FLOWERING: &str = "Bayer, \"Temperature, humidity, and water in protected culture \
     tomatoes\" (below 16 °C phosphorus deficiency) and the Ontario greenhouse tomato guide as \
     quoted by grovida.us (blossoms injured above 29 °C, the lower of it and Bayer's 30 °C); \
     generic for crops without their own figures";
const MIXING_WATER: &str = "mixing protocol (domain 2.14): mix with water at 18-22 °C";
const BAYER_TOMATO: &str = "Bayer, \"Temperature, humidity, and water in protected culture \
     tomatoes\": optimal day 21-27 °C, night 17-18 °C (17-27 °C; narrower than the generic \
     16-30 °C)";

/// One crop's germination and transplant-growth temperatures (°C) from table A-4.
struct CropTemps {
    species: &'static str,
    name: &'static str,
    germination: (f64, f64),
    /// Minimum night to the top of the optimum day.
    seedling: (f64, f64),
    /// Its own band for the phases after the seedling, if a source gives one.
    growth: Option<Band>,
}

const TABLE_A4: &str = "Mid-Atlantic Commercial Vegetable Production Recommendations, table \
     A-4 (University of Delaware Weekly Crop Update, E. Ernest, \"Times and temperatures for \
     vegetable transplant production\")";

const CROPS: &[CropTemps] = &[
    CropTemps {
        species: "Solanum lycopersicum",
        name: "tomato",
        germination: (21.1, 26.7),
        seedling: (15.6, 23.9),
        growth: Some((17.0, 27.0, BAYER_TOMATO)),
    },
    CropTemps {
        species: "Capsicum annuum",
        name: "pepper",
        germination: (26.7, 32.2),
        seedling: (15.6, 23.9),
        growth: None,
    },
    CropTemps {
        species: "Solanum melongena",
        name: "eggplant",
        germination: (26.7, 32.2),
        seedling: (18.3, 29.4),
        growth: None,
    },
    CropTemps {
        species: "Cucumis sativus",
        name: "cucumber",
        germination: (18.3, 32.2),
        seedling: (18.3, 23.9),
        growth: None,
    },
    CropTemps {
        species: "Cucumis melo",
        name: "melon",
        germination: (23.9, 29.4),
        seedling: (18.3, 23.9),
        growth: None,
    },
    CropTemps {
        species: "Citrullus lanatus",
        name: "watermelon",
        germination: (26.7, 32.2),
        seedling: (18.3, 23.9),
        growth: None,
    },
    CropTemps {
        species: "Cucurbita pepo",
        name: "summer squash",
        germination: (29.4, 35.0),
        seedling: (18.3, 23.9),
        growth: None,
    },
    CropTemps {
        species: "Lactuca sativa",
        name: "lettuce",
        germination: (15.6, 21.1),
        seedling: (4.4, 18.3),
        growth: None,
    },
    CropTemps {
        species: "Brassica oleracea var. italica",
        name: "broccoli",
        germination: (15.6, 29.4),
        seedling: (15.6, 21.1),
        growth: None,
    },
    CropTemps {
        species: "Brassica oleracea var. capitata",
        name: "cabbage",
        germination: (15.6, 29.4),
        seedling: (15.6, 18.3),
        growth: None,
    },
    CropTemps {
        species: "Brassica oleracea var. botrytis",
        name: "cauliflower",
        germination: (18.3, 29.4),
        seedling: (15.6, 21.1),
        growth: None,
    },
    CropTemps {
        species: "Allium cepa",
        name: "onion",
        germination: (18.3, 29.4),
        seedling: (15.6, 21.1),
        growth: None,
    },
];

fn crop(species: Option<&str>) -> Option<&'static CropTemps> {
    let s = species?.trim();
    CROPS.iter().find(|c| c.species.eq_ignore_ascii_case(s))
}

/// The crop name the VPD chart knows a species by (`calculations::VPD_CROPS`): tomato.
pub fn vpd_crop(species: Option<&str>) -> Option<&'static str> {
    crop(species)
        .map(|c| c.name)
        .filter(|n| super::calculations::VPD_CROP_NAMES.contains(n))
}

fn range(metric: &'static str, (min, max, source): Band, whose: Option<&str>) -> Range {
    let phase_words = whose.map_or(String::new(), |w| format!("{w}: "));
    Range {
        metric,
        min: Some(min),
        max: Some(max),
        source: format!("{phase_words}{source}"),
    }
}

/// The air temperature range (°C) of a coarse phase, the crop's own where it has one.
pub fn temperature_range(coarse: &str, species: Option<&str>) -> Option<Range> {
    let c = crop(species);
    let own = |band: (f64, f64), what: &str| {
        c.map(|c| Range {
            metric: "temperature_c",
            min: Some(band.0),
            max: Some(band.1),
            source: format!("{} {what}, {TABLE_A4}", c.name),
        })
    };
    match coarse {
        "germination" => c
            .and_then(|c| own(c.germination, "optimum germination temperature"))
            .or_else(|| {
                Some(range(
                    "temperature_c",
                    (21.1, 26.7, EXTENSION_GERMINATION),
                    Some("germination"),
                ))
            }),
        "seedling" => c
            .and_then(|c| {
                own(
                    c.seedling,
                    "transplant growth (minimum night to the top of the optimum day)",
                )
            })
            .or_else(|| {
                Some(range(
                    "temperature_c",
                    (15.6, 23.9, TABLE_A4_GENERIC),
                    Some("seedling"),
                ))
            }),
        p if p == REST_PLAN_PHASE => None,
        p => {
            let generic = if p == "flowering" {
                (16.0, 29.0, BAYER_FLOWERING)
            } else {
                (16.0, 30.0, BAYER_GROWTH)
            };
            let band = c.and_then(|c| c.growth).unwrap_or(generic);
            Some(range("temperature_c", band, Some(p)))
        }
    }
}

/// The air humidity range (% RH) of a coarse phase; none where no source gives one (judged
/// through the VPD there).
pub fn humidity_range(coarse: &str) -> Option<Range> {
    match coarse {
        "germination" => Some(range(
            "humidity_percent",
            (75.0, 100.0, HARRIS_GERMINATION_RH),
            Some("germination"),
        )),
        "seedling" => Some(range(
            "humidity_percent",
            (35.0, 60.0, HARRIS_SEEDLING_RH),
            Some("seedling"),
        )),
        _ => None,
    }
}

/// The nutrient water's temperature range (°C) in a fed phase (none at rest).
pub fn water_temperature_range(coarse: &str) -> Option<Range> {
    (coarse != REST_PLAN_PHASE)
        .then(|| range("water_temperature_c", (18.0, 22.0, MIXING_WATER), None))
}

/// The range of a sensor metric the scan judges on its own (temperature, humidity, water
/// temperature) for a plant in a coarse phase.
pub fn range_for(metric: &str, coarse: &str, species: Option<&str>) -> Option<Range> {
    match metric {
        "temperature_c" => temperature_range(coarse, species),
        "humidity_percent" => humidity_range(coarse),
        "water_temperature_c" => water_temperature_range(coarse),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generic_phases_have_sourced_temperature_ranges() {
        let g = temperature_range("germination", None).expect("germination");
        assert_eq!((g.min, g.max), (Some(21.1), Some(26.7)));
        assert!(g.source.contains("eXtension"), "{}", g.source);
        let s = temperature_range("seedling", Some("Fixtura tomatoides")).expect("seedling");
        assert_eq!((s.min, s.max), (Some(15.6), Some(23.9)));
        assert!(s.source.contains("A-4"));
        let v = temperature_range("vegetative", None).expect("veg");
        assert_eq!((v.min, v.max), (Some(16.0), Some(30.0)));
        let f = temperature_range("flowering", None).expect("flowering");
        assert_eq!(f.max, Some(29.0), "the lower of 29 and 30 holds");
        assert!(temperature_range(REST_PLAN_PHASE, None).is_none());
    }

    #[test]
    fn crops_use_their_own_figures() {
        let t = temperature_range("vegetative", Some("Solanum lycopersicum")).expect("tomato");
        assert_eq!((t.min, t.max), (Some(17.0), Some(27.0)));
        assert!(t.source.contains("Bayer"));
        let p = temperature_range("germination", Some("capsicum annuum")).expect("pepper");
        assert_eq!((p.min, p.max), (Some(26.7), Some(32.2)));
        assert!(p.source.starts_with("pepper"));
        let l = temperature_range("seedling", Some("Lactuca sativa")).expect("lettuce");
        assert_eq!((l.min, l.max), (Some(4.4), Some(18.3)));
        // A crop without its own later-phase band keeps the generic one.
        let c = temperature_range("flowering", Some("Cucumis sativus")).expect("cucumber");
        assert_eq!(c.max, Some(29.0));
        assert_eq!(vpd_crop(Some("Solanum lycopersicum")), Some("tomato"));
        assert_eq!(vpd_crop(Some("Cucumis sativus")), None);
    }

    #[test]
    fn humidity_and_water_ranges() {
        let h = humidity_range("germination").expect("rh");
        assert_eq!((h.min, h.max), (Some(75.0), Some(100.0)));
        assert_eq!(humidity_range("seedling").and_then(|r| r.max), Some(60.0));
        assert!(humidity_range("vegetative").is_none());
        let w = water_temperature_range("flowering").expect("water");
        assert_eq!((w.min, w.max), (Some(18.0), Some(22.0)));
        assert!(w.source.contains("2.14"));
        assert!(water_temperature_range(REST_PLAN_PHASE).is_none());
        assert!(range_for("ph", "vegetative", None).is_none());
    }
}
