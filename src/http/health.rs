//! Unauthenticated health and mode routes.

use std::time::Duration;

use salvo::oapi::ToSchema;

use salvo::prelude::*;
use serde::Serialize;

use super::depot::DepotExt;
use crate::error::AppError;
use crate::state::AppState;
use crate::store::redis;

pub const VERSION: &str = env!("CARGO_PKG_VERSION");

#[derive(Debug, Serialize, ToSchema)]
pub struct Liveness {
    /// Always `alive` while the process serves.
    pub status: &'static str,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Readiness {
    /// `ready` or `not_ready`.
    pub status: &'static str,
    /// PostgreSQL (platform schema) answered.
    pub database: bool,
    /// Redis answered (with a Redis Cluster: every master answered and reports
    /// `cluster_state:ok`).
    pub redis: bool,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Health {
    /// `healthy` when the database answers, `degraded` otherwise.
    pub status: &'static str,
    pub version: &'static str,
    /// `full` or `light`.
    pub mode: &'static str,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ModeFeatures {
    /// Authentication is required (full mode).
    pub auth: bool,
    /// Several tenants can exist and be addressed by slug.
    pub multi_tenant: bool,
    /// The MCP tool server answers under /api/v1/mcp.
    pub mcp: bool,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Mode {
    /// `full` or `light`.
    pub mode: &'static str,
    pub features: ModeFeatures,
}

async fn database_answers(state: &AppState) -> bool {
    let check = sqlx::query_scalar::<_, i32>("SELECT 1").fetch_one(state.platform_pool());
    matches!(
        tokio::time::timeout(Duration::from_secs(2), check).await,
        Ok(Ok(1))
    )
}

/// Liveness: the process is up and serving.
#[endpoint(tags("health"), operation_id = "health_live",
    responses((status_code = 200, description = "alive", body = Liveness)))]
pub async fn live() -> Json<Liveness> {
    Json(Liveness { status: "alive" })
}

/// Readiness: PostgreSQL and Redis answer (a Redis Cluster also reports `cluster_state:ok` on
/// every master). 503 while either does not.
#[endpoint(tags("health"), operation_id = "health_ready",
    responses(
        (status_code = 200, description = "ready", body = Readiness),
        (status_code = 503, description = "not ready: a dependency does not answer", body = Readiness),
    ))]
pub async fn ready(depot: &mut Depot, res: &mut Response) -> Result<Json<Readiness>, AppError> {
    let state = depot.app_state()?;
    let (database, redis) = tokio::join!(database_answers(&state), redis::ready(state.redis()));
    if !redis {
        crate::metrics::redis_error(crate::metrics::RedisUse::Readiness);
    }
    let ok = database && redis;
    if !ok {
        res.status_code(StatusCode::SERVICE_UNAVAILABLE);
    }
    Ok(Json(Readiness {
        status: if ok { "ready" } else { "not_ready" },
        database,
        redis,
    }))
}

/// Service health with version and deployment mode.
#[endpoint(tags("health"), operation_id = "health",
    responses((status_code = 200, description = "service health", body = Health)))]
pub async fn health(depot: &mut Depot) -> Result<Json<Health>, AppError> {
    let state = depot.app_state()?;
    let database = database_answers(&state).await;
    Ok(Json(Health {
        status: if database { "healthy" } else { "degraded" },
        version: VERSION,
        mode: state.config().service_mode.as_str(),
    }))
}

/// The deployment mode and which features it switches on.
#[endpoint(tags("health"), operation_id = "get_mode",
    responses((status_code = 200, description = "deployment mode", body = Mode)))]
pub async fn mode(depot: &mut Depot) -> Result<Json<Mode>, AppError> {
    let state = depot.app_state()?;
    let config = state.config();
    let full = config.service_mode == crate::config::ServiceMode::Full;
    Ok(Json(Mode {
        mode: config.service_mode.as_str(),
        features: ModeFeatures {
            auth: full,
            multi_tenant: full,
            mcp: config.mcp_server_enabled,
        },
    }))
}
