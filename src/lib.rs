//! The experiment engine: the game registry, loading harnesses, plans, the parallel executor,
//! result folders, reports and the lens over them.
//!
//! This is the library half of the `harness` package; `src/main.rs` is the command line over
//! it. It sits at the edge of the pipeline, so unlike the library crates it reads and writes
//! files (harness sources, result folders), but it never prints, reads the clock or draws
//! progress: the caller does (see `docs/decisions/0010-experiment-engine.md`).

pub mod ablate;
pub mod estimate;
pub mod evolve;
pub mod evolve_llm;
pub mod exec;
pub mod folder;
pub mod games;
pub mod lens;
pub mod load;
pub mod mutate;
pub mod patch;
pub mod plan;
pub mod plot;
pub mod provision;
pub mod repair;
pub mod report;
pub mod runs;
pub mod slurm;
pub mod validate;
