//! What Kultiva holds about one person, handed out and erased on request (GDPR articles 15, 17
//! and 20): the personal export (`export`) and the erasure of an account (`erasure`). Both read
//! the same list of garden tables a person's records live in (`authored`).

pub mod authored;
pub mod erasure;
pub mod export;
