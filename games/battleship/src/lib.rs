//! Noisy Collaborative Battleship: rules, boards, questions, belief backends and kernels.
//!
//! Boards, ships, regions and shot masks are 64-bit bitboards (bit `row * 8 + col`). The crate
//! reproduces the reference implementation of "How Much Heavy Lifting Can an Agent Harness Do?"
//! bit for bit (PRNG, boards, seeds, the `mcmc-compat` sampler, question values, and the L1/L2
//! policies in [`mod@reference`]), and loads Grand et al.'s 18 boards for the `grand` protocol.
//!
//! Entry points for bindings:
//! - boards: [`paper::paper_board`], [`paper::generate_board`], [`paper::game_seed`],
//!   [`grand::grand_board`], [`render::render_board`], [`render::render_suite`];
//! - rules: [`Game`] (`shoot`, `ask`, budgets, `metrics`), [`Spotter`];
//! - questions: [`catalogue`] (83 templates), [`RegionSpec`] (`parse_json`, `compile`);
//! - beliefs: the [`Belief`] trait, [`Mcmc`] (the default), [`Smc`], [`McmcCompat`] and the
//!   exact reference [`belief::ExactPosterior`] (see [`mod@belief`] for when to use which);
//! - kernels: [`kernels`] (hit probabilities, EIG, question value, masses, clusters, scores);
//! - oracles: [`reference::Greedy`], [`reference::Wma`], [`reference::Mra`],
//!   [`reference::play_paper_game`].

pub mod belief;
pub mod bindings;
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

pub use belief::{Belief, Fleet, Mcmc, McmcCompat, SampleSet, Smc};
pub use board::{Board, Color, Placement, Ship};
pub use cell::Cell;
pub use game::{Game, Metrics, Protocol, ShotOutcome, Spotter};
pub use questions::{Question, RegionSpec, catalogue};
