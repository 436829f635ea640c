//! The tools. Each module declares its tools as `pub static` records; `ALL` lists them in the
//! order `tools/list` shows them.

pub mod account;

use super::registry::Tool;

pub static ALL: &[&Tool] = &[&account::LIST_TENANTS, &account::GET_MCP_ACTIVITY];
