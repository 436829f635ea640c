//! Use cases of the caller's own account record (REST `/users/me` and the settings page).

use uuid::Uuid;

use crate::directory::users::model::{ProfileForm, User};
use crate::directory::users::repo::{self, ProfileChange};
use crate::error::AppError;
use crate::state::AppState;
use crate::values::json::Patch;

/// Changes the caller's display name, locale, time zone or avatar; an omitted field stays.
pub async fn update_profile(
    state: &AppState,
    user: Uuid,
    form: &ProfileForm,
) -> Result<User, AppError> {
    let avatar = match &form.avatar_url {
        Patch::Keep => None,
        Patch::Clear => Some(None),
        Patch::Set(url) => Some(Some(url.as_str())),
    };
    let user = repo::update_profile(
        state.platform_pool(),
        user,
        &ProfileChange {
            display_name: form.display_name.as_deref(),
            locale: form.locale.as_deref(),
            timezone: form.timezone.as_deref(),
            avatar_url: avatar,
        },
    )
    .await?
    .ok_or_else(|| AppError::not_found("user"))?;
    state.caches().forget_user(user.key);
    Ok(user)
}
