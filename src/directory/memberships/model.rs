use salvo::oapi::ToSchema;
use serde::Serialize;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::directory::{AccountType, Role};

/// A member of a tenant.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Member {
    pub user_key: Uuid,
    /// Shown to the garden's admins only (and to the member itself); `null` for everyone else,
    /// who see the display name.
    pub email: Option<String>,
    pub display_name: String,
    pub account_type: AccountType,
    pub role: Role,
    #[serde(with = "time::serde::rfc3339")]
    pub joined_at: OffsetDateTime,
}
