//! Noisy Collaborative Battleship: rules, boards, questions, belief backends and kernels.
//!
//! Boards, ships, regions and shot masks are 64-bit bitboards (bit `row * 8 + col`). The crate
//! reproduces the reference implementation of "How Much Heavy Lifting Can an Agent Harness Do?"
//! bit for bit (PRNG, boards, seeds, the `mcmc-compat` sampler, question values, and the L1/L2
//! policies in [`reference`]), and loads Grand et al.'s 18 boards for the `grand` protocol.

pub mod belief;
pub mod board;
pub mod cell;
pub mod game;
pub mod grand;
pub mod kernels;
pub mod paper;
pub mod play;
pub mod prng;
pub mod questions;
pub mod reference;
pub mod render;

pub use belief::{Belief, McmcCompat, SampleSet};
pub use board::{Board, Color, Placement, Ship};
pub use cell::Cell;
pub use game::{Game, Metrics, Protocol, ShotOutcome, Spotter};
pub use questions::{Question, RegionSpec, catalogue};
