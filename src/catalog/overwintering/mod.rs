//! Overwintering profiles (`/overwintering`): what a species needs in winter.

pub mod model;
pub mod routes;
