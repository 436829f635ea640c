//! Who is calling, as established by the authentication hoop.

use std::sync::Arc;

use uuid::Uuid;

use crate::directory::AccountType;
use crate::directory::users::model::User;

/// How the caller proved who it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credential {
    /// A JWT access token.
    AccessToken,
    /// An API key; `tenant_scope` limits it to one tenant.
    ApiKey {
        key_id: Uuid,
        tenant_scope: Option<Uuid>,
    },
    /// Light mode: nobody authenticates, the system user acts.
    Light,
}

#[derive(Debug, Clone)]
pub struct Principal {
    pub user_id: Uuid,
    pub account_type: AccountType,
    pub credential: Credential,
    /// The caller's user record, read by the same statement that checked the credential, so
    /// `GET /users/me` needs no second query. `None` in light mode.
    pub account: Option<Arc<User>>,
}

impl Principal {
    pub fn is_light(&self) -> bool {
        self.credential == Credential::Light
    }

    /// Account-wide actions (logout-all, password and profile changes, key management,
    /// creating gardens, answering invitations) are not for a key scoped to one garden: 403.
    pub fn require_account_wide(&self) -> Result<(), crate::error::AppError> {
        if self.tenant_scope().is_some() {
            return Err(crate::error::AppError::new(
                crate::error::ErrorCode::Forbidden,
                "this API key is limited to one garden; account-wide actions need an access \
                 token or an unscoped key",
            ));
        }
        Ok(())
    }

    /// Grants (calendar feeds, invitations, role changes, removals, service accounts) need a
    /// person: an access token from a login (or light mode), never an API key, so a leaked
    /// key cannot make itself or anyone else permanent. 403 `FORBIDDEN` naming the rule.
    pub fn require_person(&self, what: &str) -> Result<(), crate::error::AppError> {
        match self.credential {
            Credential::AccessToken | Credential::Light => Ok(()),
            Credential::ApiKey { .. } => Err(crate::error::AppError::new(
                crate::error::ErrorCode::Forbidden,
                format!(
                    "{what} by a logged-in person only: send an access token from a login, \
                     not an API key"
                ),
            )
            .with_details(vec![crate::error::ErrorDetail::new(
                "authorization",
                "an API key cannot grant access",
                "person_required",
            )])),
        }
    }

    /// The tenant an API key is limited to, if any.
    pub fn tenant_scope(&self) -> Option<Uuid> {
        match self.credential {
            Credential::ApiKey { tenant_scope, .. } => tenant_scope,
            _ => None,
        }
    }
}
