//! The REST hoop of the garden sub-tree `/api/v1/t/{slug}/…` (after `require_caller`): the
//! garden and the caller's role in it, resolved and migrated, go into the Depot as a
//! `TenantCtx`; anything else is the same 404.

use salvo::prelude::*;

use crate::http::depot::DepotExt;
use crate::platform::access::resolve_for;

/// Hoop for the tenant sub-tree (after `require_caller`).
#[handler]
pub async fn tenant_hoop(
    req: &mut Request,
    depot: &mut Depot,
    res: &mut Response,
    ctrl: &mut FlowCtrl,
) {
    let resolved = async {
        let state = depot.app_state()?;
        let principal = depot.principal()?;
        let slug = req.param::<String>("slug").unwrap_or_default();
        resolve_for(&state, principal, &slug).await
    }
    .await;
    match resolved {
        Ok(ctx) => {
            tracing::Span::current().record("tenant", tracing::field::display(&ctx.tenant.slug));
            depot.insert_typed(ctx);
        }
        Err(err) => err.halt(req, res, ctrl),
    }
}
