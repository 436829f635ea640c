//! Global master data every garden reads: species, families, cultivars, pests, diseases,
//! treatments, phases and sequences, starter kits, hardiness zones, glossary, overwintering,
//! companion planting, crop rotation, knowledge search, and the seed that fills them.
//! Reads need any caller; writes need a platform admin.

pub mod companions;
pub mod engine;
pub mod enrichment;
pub mod families;
pub mod fertilizers;
pub mod glossary;
pub mod imports;
pub mod ipm;
pub mod kits;
pub mod knowledge;
pub mod overwintering;
pub mod phases;
pub mod rotation;
pub mod seed;
pub mod species;
pub mod substrates;
pub mod vocab;
pub mod zones;

use salvo::Router;

/// Every catalogue route, mounted under `/api/v1`.
pub fn routers() -> Vec<Router> {
    let mut all = vec![
        families::routes::router(),
        species::routes::sequence_router(),
        species::routes::router(),
        species::routes::cultivars_router(),
        ipm::routes::router(),
        zones::routes::router(),
        glossary::routes::router(),
        kits::routes::router(),
        overwintering::routes::router(),
        substrates::routes::router(),
        fertilizers::routes::router(),
        companions::routes::router(),
        rotation::routes::router(),
        knowledge::routes::router(),
        imports::routes::router(),
        enrichment::routes::router(),
    ];
    all.extend(phases::routes::router());
    all
}
