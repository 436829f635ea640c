//! Weather (issue 40): the hourly forecast of each site with coordinates from an
//! Open-Meteo-compatible API (`WEATHER_URL`), stored as readings of origin `weather`, and the
//! frost alerts a forecast low implies for the plants at outdoor sites (`rules::frost`).

pub mod forecast;
pub mod repo;
pub mod service;
