//! The crate's integration tests, one module per file beside this one, linked into one binary.

mod belief_accuracy;
mod belief_games;
mod reproduction;
