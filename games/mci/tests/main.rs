//! The crate's integration tests, one module per file beside this one, linked into one binary.

mod no_leak;
mod physics;
mod suite;
