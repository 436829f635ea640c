//! Global fertilisers (`/fertilizers`): real products with their label analysis (NPK as
//! N-P₂O₅-K₂O %, secondary and micro nutrients), the EC one ml (or g) per litre adds, mixing
//! priority and form (domain 1.11). The mixing protocol doses them (`calculations::service`).
//! Garden-owned products come with the tenant side of issue 13.

pub mod model;
pub mod routes;
