//! The tools. Each module declares its tools as `pub static` records; `ALL` lists them in the
//! order `tools/list` shows them.

pub mod account;
pub mod calendar;
pub mod care;
pub mod catalog;
pub mod diary;
pub mod feeding;
pub mod harvest;
pub mod ipm;
pub mod knowledge;
pub mod nutrient_plans;
pub mod nutrition;
pub mod phases;
pub mod photos;
pub mod places;
pub mod plants;
pub mod runs;
pub mod sensors;
pub mod shared;
pub mod substrates;
pub mod tasks;
pub mod view;
pub mod webhooks;

use super::registry::Tool;

pub static ALL: &[&Tool] = &[
    &account::LIST_TENANTS,
    &account::GET_MCP_ACTIVITY,
    &catalog::LIST_SPECIES,
    &catalog::GET_SPECIES_INFO,
    &catalog::LIST_CULTIVARS,
    &catalog::GET_CULTIVAR,
    &catalog::LIST_PESTS,
    &catalog::GET_PEST,
    &catalog::LIST_DISEASES,
    &catalog::GET_DISEASE,
    &catalog::GET_TREATMENT,
    &phases::LIST_PHASE_DEFINITIONS,
    &phases::GET_SPECIES_PHASE_SEQUENCE,
    &phases::LIST_PHASE_SEQUENCES,
    &phases::LIST_SPECIES_BY_PHASE_SEQUENCE,
    &phases::GET_SPECIES_LIFECYCLE,
    &catalog::LIST_HARDINESS_ZONES,
    &catalog::SEARCH_GLOSSARY,
    &knowledge::SEARCH_PLANT_KNOWLEDGE,
    &catalog::LIST_STARTER_KITS,
    &catalog::LIST_OVERWINTERING_PROFILES,
    &phases::ASSIGN_SPECIES_PHASE_SEQUENCE,
    &plants::LIST_PLANTS,
    &plants::GET_PLANT,
    &plants::LIST_PLANTS_AT_LOCATION,
    &plants::GET_PLANT_PHASE_STATUS,
    &plants::GET_PLANT_PHASE_HISTORY,
    &runs::LIST_PLANTING_RUNS,
    &plants::ARCHIVE_PLANT,
    &plants::SET_PLANT_LOCATION,
    &plants::VALIDATE_PLANTING,
    &plants::SET_PLANT_SUBSTRATE,
    &plants::TRANSITION_PLANT_PHASE,
    &places::GET_LOCATION,
    &substrates::LIST_SUBSTRATES,
    &substrates::GET_SUBSTRATE,
    &substrates::PREVIEW_SUBSTRATE_MIX,
    &substrates::LIST_SUBSTRATE_BATCHES,
    &substrates::GET_SUBSTRATE_BATCH,
    &substrates::CHECK_BATCH_REUSABILITY,
    &substrates::CREATE_SUBSTRATE_MIX,
    &nutrition::CALCULATE_MIXING_PROTOCOL,
    &places::CREATE_SITE,
    &calendar::GET_SOWING_CALENDAR,
    &ipm::GET_PLANT_INSPECTIONS,
    &photos::GET_DIARY_ENTRY_PHOTOS,
    &harvest::GET_HARVEST_READINESS,
    &ipm::CREATE_INSPECTION,
    &ipm::APPLY_TREATMENT,
    &harvest::RECORD_HARVEST,
    &tasks::LIST_TASKS,
    &care::GET_DUE_CARE_TASKS,
    &care::GET_PLANT_CARE_LOG,
    &care::CONFIRM_CARE_TASK,
    &nutrient_plans::LIST_NUTRIENT_PLANS,
    &nutrient_plans::GET_NUTRIENT_PLAN,
    &nutrient_plans::GET_PLANT_NUTRIENT_PLAN,
    &nutrient_plans::LIST_FERTILIZERS,
    &nutrient_plans::VALIDATE_NUTRIENT_PLAN_COVERAGE,
    &nutrient_plans::ASSIGN_NUTRIENT_PLAN,
    &nutrient_plans::CLONE_NUTRIENT_PLAN,
    &nutrient_plans::SET_NUTRIENT_PLAN_PHASE_TARGETS,
    &feeding::GET_PLANT_DIAGNOSTICS,
    &feeding::RECORD_FEEDING_EVENT,
    &diary::LIST_DIARY_ENTRIES,
    &diary::GET_DIARY_ENTRY,
    &diary::ADD_PLANT_DIARY_ENTRY,
    &diary::LIST_PENDING_DIARY_ANALYSES,
    &diary::CLAIM_DIARY_ANALYSIS,
    &diary::SUBMIT_DIARY_ANALYSIS,
    &webhooks::LIST_WEBHOOKS,
    &sensors::GET_ENVIRONMENT,
    &sensors::RECORD_SENSOR_READINGS,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_schemas_closed() {
        let mut names: Vec<&str> = ALL.iter().map(|t| t.name).collect();
        names.sort_unstable();
        let n = names.len();
        names.dedup();
        assert_eq!(names.len(), n, "duplicate tool names");
        for tool in ALL {
            let schema = crate::mcp::args::input_schema(tool.all_args(), tool.rules);
            assert_eq!(schema["additionalProperties"], false, "{}", tool.name);
            assert!(!tool.description.is_empty(), "{}", tool.name);
        }
    }
}
