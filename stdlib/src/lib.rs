//! The harness standard library: builtin registry, statistics, information measures and LLM effects.

/// The prelude: builtins every harness sees without a `use`, with their native implementations.
pub mod prelude;

/// Language-model effects: providers, typed replies, bounded calls, accounting, record and replay.
pub mod llm;

/// Statistics for experiments: Wilson intervals, bootstrap intervals, moving averages.
pub mod stats;

/// Ablation summaries: per-stack rows, marginals and the heavy-lifting verdict.
pub mod ablation;

/// Task-aware provisioning over a level sweep: the task-to-level map and the policies.
pub mod provision;
