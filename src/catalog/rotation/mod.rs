//! Crop rotation (`/crop-rotation`): family successor rules and incompatible families.

pub mod model;
pub mod routes;
