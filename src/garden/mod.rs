//! Tenant data, one folder per capability; each reaches its tables only through `TenantTx`.

pub mod alerts;
pub mod calendar;
pub mod care;
pub mod contracts;
pub mod diary;
pub mod environment;
pub mod fertilizers;
pub mod fields;
pub mod harvest;
pub mod ipm;
pub mod nutrient_plans;
pub mod onboarding;
pub mod photos;
pub mod places;
pub mod plants;
pub mod runs;
pub mod sensors;
pub mod sites;
pub mod statements;
pub mod substrates;
pub mod tanks;
pub mod tasks;
pub mod transfer;
pub mod watering;
pub mod weather;
pub mod webhooks;
