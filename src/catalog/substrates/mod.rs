//! Global substrates (`/substrates`): the catalogue's soils, coco, clay pebbles, … with their
//! pH/EC base, structure and reuse limits (domain 1.7, 2.4). Gardens add their own substrates
//! and mixes in their schema (`garden::substrates`); the garden listing shows both.

pub mod model;
pub mod routes;
