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

mod calls;
mod compiled;
mod interp;
mod ops;

pub mod episode;
pub mod error;
pub mod event;
pub mod game;
pub mod llm;
pub mod machine;
pub mod manifest;
pub mod native;
pub mod snapshot;
pub mod streams;
pub mod value;

/// The signatures of the methods the runtime itself implements: a preview's `expect`, `prob`
/// `branches` and `weights`. The checker needs them next to the standard library's.
pub fn signatures() -> harness_compiler::signatures::SignatureSet {
    let mut set = harness_compiler::signatures::SignatureSet::default();
    set.builtin(
        "fn expect(self: Preview, f: fn(Snapshot) -> Float) -> Float",
        "The expected value of `f` over the preview's successor snapshots.",
        "sim.next(probe(c)).expect(|s| s.entropy)",
    )
    .builtin(
        "fn prob(self: Preview, f: fn(Snapshot) -> Bool) -> Float",
        "The probability that `f` holds in a successor snapshot.",
        "sim.next(probe(c)).prob(|s| s.best_prob > 0.9)",
    )
    .builtin(
        "fn branches(self: Preview) -> List<Snapshot>",
        "The successor snapshots, in model order; `weights()` gives their probabilities.",
        "sim.next(probe(c)).branches().len()",
    )
    .builtin(
        "fn weights(self: Preview) -> List<Float>",
        "The probabilities of the successor snapshots, in the order of `branches()`.",
        "sim.next(probe(c)).weights().sum() == 1.0",
    );
    set
}

pub use episode::{
    Agent, Costs, Decision, EndReason, EpisodeResult, EpisodeRun, run_episode, run_episode_with_llm,
};
pub use error::{ErrorCode, ErrorDetails, RtResult, RuntimeError};
pub use event::{
    Event, EventKind, Phase, TraceEvent, TraceEventKind, TraceFile, to_json_lines, write_json_lines,
};
pub use game::{Effect, Game, GameKind, Observation};
pub use llm::{
    LlmAccounting, LlmAnswer, LlmCall, LlmCallLog, LlmFailureInfo, LlmFailureKind, LlmHost,
    LlmMessage,
};
pub use machine::{Limits, Machine, Switches};
pub use manifest::{
    Better, GameManifest, GameOptions, InstanceSet, MetricKind, MetricRole, MetricSpec, OptionSpec,
    OptionType,
};
pub use native::{NativeBatchFn, NativeCtx, NativeError, NativeFn, Natives, key_of};
pub use snapshot::{Preview, Snapshot};
pub use streams::{EffectDraws, RngStreams, Stream};
pub use value::{Float, Opaque, RecordValue, Value, VariantValue};
