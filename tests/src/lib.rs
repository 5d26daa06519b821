//! The data-driven test corpus: .harness cases with inline expectations and snapshots.
//!
//! The library part holds what several test files and benchmarks share: for now the lowered
//! program of the search example ([`search_ir`]).

pub mod search_ir;
