//! The harness runtime: values, snapshots, interpreter, turn loop, sim.next, events and the Game
//! trait.
//!
//! The runtime never reads files, clocks or the terminal, and draws randomness only from the
//! named streams of [`streams::RngStreams`]. It returns events and results as data; the command
//! line renders them.

pub mod error;
pub mod event;
pub mod game;
pub mod native;
pub mod streams;
pub mod value;

pub use error::{ErrorCode, RtResult, RuntimeError};
pub use game::{Effect, Game, GameKind, Observation};
pub use native::{NativeCtx, NativeError, NativeFn, Natives};
pub use streams::{RngStreams, Stream};
pub use value::{Float, Opaque, RecordValue, Value, VariantValue};
