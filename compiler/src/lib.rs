//! The harness checker: salsa queries, name resolution, types, layer isolation, diagnostics and lowering.

pub mod ir;
pub mod types;
