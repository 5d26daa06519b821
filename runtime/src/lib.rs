//! The harness runtime: values, snapshots, interpreter, turn loop, sim.next, events and the Game
//! trait.
//!
//! The runtime executes a checked [`harness_compiler::ir::Program`]:
//!
//! 1. [`Machine::new`] resolves the layer [`Switches`] and evaluates constants, configuration and
//!    tunable defaults;
//! 2. a [`GameKind`] starts a [`Game`] from an instance and the [`RngStreams`] of a seed;
//! 3. [`run_episode`] (or an [`Agent`], phase by phase) runs the turn loop and returns an
//!    [`EpisodeResult`] with every [`Event`].
//!
//! The runtime never reads files, clocks or the terminal, and draws randomness only from the
//! named streams of [`streams::RngStreams`]. It returns events and results as data; the command
//! line renders them.

mod interp;
mod ops;

pub mod episode;
pub mod error;
pub mod event;
pub mod game;
pub mod machine;
pub mod native;
pub mod snapshot;
pub mod streams;
pub mod value;

pub use episode::{Agent, Decision, EndReason, EpisodeResult, run_episode};
pub use error::{ErrorCode, RtResult, RuntimeError};
pub use event::{Event, EventKind, EventSink, Phase, to_json_lines};
pub use game::{Effect, Game, GameKind, Observation};
pub use machine::{Limits, Machine, Switches};
pub use native::{NativeCtx, NativeError, NativeFn, Natives};
pub use snapshot::{Preview, Snapshot};
pub use streams::{RngStreams, Stream};
pub use value::{Float, Opaque, RecordValue, Value, VariantValue};
