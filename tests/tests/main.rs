//! The workspace's integration tests, one module per file beside this one, linked into one binary.

mod arco;
mod battleship_reproduction;
mod builtin_examples;
mod bulk_calls;
mod corpus;
mod cost;
mod engine;
mod estimate;
mod evolve;
mod evolve_llm;
mod fork;
mod interp_proptest;
mod jit;
mod linear;
mod llm_l4;
mod llm_rich;
mod llm_sim;
mod mci_operator;
mod registry;
mod repair;
mod runtime_layer_isolation;
mod runtime_search;
mod runtime_semantics;
mod third_game;
