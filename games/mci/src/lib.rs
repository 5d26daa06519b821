//! Infrastructure operations: a liquid-cooling loop and the IEEE 14-bus grid, their task suites,
//! the privileged oracle and the rule graders (the seed paper "Task-Aware Harness Provisioning
//! for LLM Agents in Mission-Critical Infrastructure Operations").

pub mod cooling;
pub mod game;
pub mod grid;
pub mod knowledge;
pub mod numeric;
pub mod suite;
pub mod task;
pub mod telemetry;
