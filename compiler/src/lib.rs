//! The harness checker: salsa queries, name resolution, types, layer isolation, diagnostics and lowering.

pub mod check;
pub mod codes;
pub mod diagnostic;
pub mod env;
pub mod ir;
pub mod parse;
pub mod signatures;
pub mod split;
pub mod types;
