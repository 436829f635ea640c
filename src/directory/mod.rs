//! Who is who: the records identity rests on. The user records (`platform.users`), the
//! memberships that give a user a role in a garden (`platform.memberships`), the roles and
//! kinds of account, and the grants an account handed out (which end with the authority they
//! came from). Records and their SQL only: how a caller proves who it is lives in `auth`, the
//! account and garden services built on these records in `auth` and `platform`, both of which
//! use this module and neither of which it knows.

pub mod grants;
pub mod memberships;
pub mod roles;
pub mod users;

pub use roles::{AccountType, Role};
