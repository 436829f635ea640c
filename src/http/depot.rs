//! Typed access to what hoops put in the Depot, without unwraps in handlers.

use salvo::prelude::*;

use crate::auth::Principal;
use crate::error::AppError;
use crate::platform::access::TenantCtx;
use crate::state::AppState;

pub trait DepotExt {
    fn app_state(&self) -> Result<AppState, AppError>;
    fn tenant_ctx(&self) -> Result<&TenantCtx, AppError>;
    fn principal(&self) -> Result<&Principal, AppError>;
}

impl DepotExt for Depot {
    fn app_state(&self) -> Result<AppState, AppError> {
        self.get_typed::<AppState>()
            .cloned()
            .map_err(|_| AppError::internal("AppState missing from the depot (router wiring)"))
    }

    fn principal(&self) -> Result<&Principal, AppError> {
        self.get_typed::<Principal>().map_err(|_| {
            AppError::internal("Principal missing from the depot (route outside require_caller)")
        })
    }

    fn tenant_ctx(&self) -> Result<&TenantCtx, AppError> {
        self.get_typed::<TenantCtx>().map_err(|_| {
            AppError::internal("TenantCtx missing from the depot (route outside the tenant hoop)")
        })
    }
}

/// Service hoop that makes the shared state available to every handler.
pub struct InjectState(pub AppState);

#[async_trait]
impl Handler for InjectState {
    async fn handle(
        &self,
        _req: &mut Request,
        depot: &mut Depot,
        _res: &mut Response,
        _ctrl: &mut FlowCtrl,
    ) {
        depot.insert_typed(self.0.clone());
    }
}

/// Who a REST write is recorded as: `user:<id>` of the calling principal.
pub fn actor(depot: &Depot) -> Result<String, AppError> {
    Ok(format!("user:{}", depot.principal()?.user_id))
}
