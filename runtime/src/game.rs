//! The `Game` trait: what the runtime needs from an environment.
//!
//! A game crate provides a [`GameKind`] (its name, its instances, its bindings for the checker,
//! and a way to start an episode) and, per episode, a [`Game`]: the agent-visible view through
//! queries, the effects it accepts, the observations it sends back, when the episode ends and
//! its metrics. Ground truth stays inside the game; a harness sees only what queries return.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use harness_compiler::signatures::GameSig;
use serde::Serialize;

use crate::manifest::{GameManifest, GameOptions};
use crate::native::Natives;
use crate::streams::RngStreams;
use crate::value::Value;

/// An effect the harness sends to the game, for example `game.probe(3)`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Effect {
    /// The effect's name without the `game.` prefix.
    pub name: Arc<str>,
    /// The arguments, positional, in the order of the effect's signature.
    pub args: Vec<Value>,
}

/// An observation the game sends to the harness, for example `game.answer(3, Dir.Left)`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Observation {
    /// The observation's name without the `game.` prefix.
    pub name: Arc<str>,
    /// The fields, positional, in the order of the observation's signature.
    pub args: Vec<Value>,
}

/// A kind of game: the factory for its episodes.
pub trait GameKind: Send + Sync {
    /// The name used in `use game NAME` and `--game NAME`.
    fn name(&self) -> &str;

    /// One sentence on what the game is, for `harness games`.
    fn about(&self) -> &str;

    /// What the game declares for experiments: metrics, instance sets and options.
    fn manifest(&self) -> GameManifest;

    /// The identifiers of the game's instances, in a fixed order: every instance of every set.
    fn instances(&self) -> Vec<String> {
        self.manifest().all_instances()
    }

    /// The bindings the checker sees after `use game NAME`: the game's types, enums, queries,
    /// effects and observations. Only the agent-visible view appears here.
    fn bindings(&self) -> GameSig;

    /// Native implementations of the game's queries (registered as `game.NAME`, receiving the
    /// episode's view as no argument: see [`Game::query`]) and of its opaque types' methods
    /// (registered as `Type.method`).
    fn natives(&self) -> Natives;

    /// Starts an episode of `instance` under `options` (checked against the manifest). The game
    /// draws all its randomness from `streams`.
    fn start(
        &self,
        instance: &str,
        options: &GameOptions,
        streams: &RngStreams,
    ) -> Result<Box<dyn Game>, String>;

    /// A picture or description of one instance for people (`harness games describe`), or
    /// `None` when the game has nothing to show beyond its name.
    fn describe_instance(
        &self,
        instance: &str,
        options: &GameOptions,
    ) -> Option<Result<String, String>> {
        let _ = (instance, options);
        None
    }
}

/// One running episode of a game.
pub trait Game: Send {
    /// Answers the query `game.NAME(args)` on the agent-visible view.
    fn query(&self, name: &str, args: &[Value]) -> Result<Value, String>;

    /// A number that changes whenever the agent-visible view changes, so that computed values
    /// that read queries are recomputed exactly when they might differ.
    fn view_version(&self) -> u64;

    /// Applies an effect the harness emitted. An effect the game cannot accept is an error.
    fn apply(&mut self, effect: &Effect) -> Result<(), String>;

    /// Takes the observations the game has produced since the last call, in order.
    fn take_observations(&mut self) -> Vec<Observation>;

    /// True when the episode has ended; the harness cannot extend it.
    fn is_over(&self) -> bool;

    /// The episode's metrics so far, by name (for example `solved`, `probes`).
    fn metrics(&self) -> BTreeMap<String, Value>;

    /// Told once, before the first turn: the gated effects that the enabled layers provide
    /// (the union of their `uses`). A game whose tools form levels reads its registry here, to
    /// refuse the others and to meter the schema it exposes; the default ignores it.
    fn provision(&mut self, provided: &BTreeSet<String>) {
        let _ = provided;
    }

    /// A copy of the episode as it stands, which continues exactly as this one would: the same
    /// view, the same pending observations and the same random draws in the same order. `None`
    /// (the default) when the game cannot be copied; a forked episode then cannot be made.
    fn fork(&self) -> Option<Box<dyn Game>> {
        None
    }

    /// Switches the episode's later random draws to common random numbers under `salt`: from
    /// now on, the `j`-th occurrence of an effect with the same arguments draws the same
    /// outcome in every copy reseeded with `salt`, whatever the copies did before (see
    /// [`crate::EffectDraws`]). Different salts are independent replicates. Returns false (the
    /// default) when the game cannot key its draws; a game whose effects draw nothing after the
    /// start returns true and changes nothing.
    fn reseed(&mut self, salt: u64) -> bool {
        let _ = salt;
        false
    }
}
