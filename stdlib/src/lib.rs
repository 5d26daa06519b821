//! The harness standard library: builtin registry, statistics, information measures and LLM effects.

pub mod prelude;
