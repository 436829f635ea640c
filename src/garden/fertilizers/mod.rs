//! Fertilisers as a garden sees them (`/t/{slug}/fertilizers`): the global catalogue products
//! and the garden's own, marked by `owner`. Own products have the same fields as global ones
//! (checked by the catalogue's field table) and are written by growers; global ones are
//! read-only here (403). The mixing protocol and nutrient plans resolve both through
//! [`service::resolve`].

pub mod model;
pub mod repo;
pub mod routes;
pub mod service;
