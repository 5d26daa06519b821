//! The game registry: every game the command line, the language server and the tests know,
//! and the bundled default harness.
//!
//! Adding a game touches its crate under `games/<name>/` and one line of
//! [`Registry::standard`]; every consumer (checking, running, ablating, the lens, `harness
//! games`, the language server) reads the registry, so none of them changes. This module is the
//! one place outside the game crates that names a game.

use std::sync::Arc;

use harness_compiler::signatures::SignatureSet;
use harness_runtime::GameKind;

/// The games a tool knows, in listing order.
#[derive(Clone, Default)]
pub struct Registry {
    games: Vec<Arc<dyn GameKind>>,
}

impl Registry {
    /// The games that ship with harness: one line per game.
    pub fn standard() -> Registry {
        Registry::default()
            .with(harness_battleship::play::Battleship)
            .with(harness_search::LineSearch)
            .with(harness_mci::game::Mci(harness_mci::suite::Domain::Cooling))
            .with(harness_mci::game::Mci(harness_mci::suite::Domain::Grid))
            .with(harness_procedure::Procedure(
                harness_procedure::Task::FinanceEcl,
            ))
            .with(harness_procedure::Procedure(
                harness_procedure::Task::LegalClause,
            ))
            .with(harness_repair::Repair)
    }

    /// The registry with one more game (a later game of the same name replaces an earlier one).
    pub fn with(mut self, game: impl GameKind + 'static) -> Registry {
        self.games.retain(|known| known.name() != game.name());
        self.games.push(Arc::new(game));
        self
    }

    /// The games, in listing order.
    pub fn games(&self) -> impl Iterator<Item = &Arc<dyn GameKind>> {
        self.games.iter()
    }

    /// The game called `name`.
    pub fn get(&self, name: &str) -> Result<Arc<dyn GameKind>, String> {
        self.games
            .iter()
            .find(|game| game.name() == name)
            .cloned()
            .ok_or_else(|| {
                let names: Vec<&str> = self.games.iter().map(|game| game.name()).collect();
                format!("unknown game `{name}`; the games are {}", names.join(", "))
            })
    }

    /// Every signature a harness can use: the prelude, the runtime's preview methods and every
    /// game's bindings.
    pub fn signatures(&self) -> SignatureSet {
        let mut set = harness_stdlib::prelude::signatures();
        set.extend(harness_runtime::signatures());
        for game in &self.games {
            set.game(game.bindings());
        }
        set
    }
}

/// The name under which the bundled default harness is recorded in result folders.
pub const BUNDLED: &str = "<bundled>/harnesses/battleship";

/// The bundled default harness (the seed paper's four-layer Battleship harness), compiled into
/// the binary so that `harness ablate` runs from any directory.
const BUNDLED_FILES: [(&str, &str); 4] = [
    (
        "harnesses/battleship/belief.harness",
        include_str!("../harnesses/battleship/belief.harness"),
    ),
    (
        "harnesses/battleship/planning.harness",
        include_str!("../harnesses/battleship/planning.harness"),
    ),
    (
        "harnesses/battleship/reflection.harness",
        include_str!("../harnesses/battleship/reflection.harness"),
    ),
    (
        "harnesses/battleship/revision.harness",
        include_str!("../harnesses/battleship/revision.harness"),
    ),
];

/// The bundled harness's files, as path and text.
pub fn bundled_sources() -> Vec<(String, String)> {
    BUNDLED_FILES
        .iter()
        .map(|(path, text)| (path.to_string(), text.to_string()))
        .collect()
}

/// What `harness games describe` shows of a game.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Description {
    /// The game's name.
    pub name: String,
    /// One sentence on the game.
    pub about: String,
    /// What it declares for experiments.
    pub manifest: harness_runtime::GameManifest,
    /// Its bindings, one line each: types, enums, queries, effects, observations, methods.
    pub bindings: Vec<String>,
}

/// Describes a game: its manifest and its bindings as the checker sees them.
pub fn describe(game: &dyn GameKind) -> Description {
    let sig = game.bindings();
    let params = |params: &[harness_compiler::signatures::ParamSig]| {
        params
            .iter()
            .map(|p| format!("{}: {}", p.name, p.ty))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut bindings = Vec::new();
    for ty in &sig.types {
        bindings.push(format!("type {}  // {}", ty.name, ty.doc));
    }
    for e in &sig.enums {
        let variants: Vec<&str> = e.variants.iter().map(|(v, _)| v.as_str()).collect();
        bindings.push(format!(
            "enum {} {{ {} }}  // {}",
            e.name,
            variants.join(", "),
            e.doc
        ));
    }
    for q in &sig.queries {
        let call = match &q.sig {
            Some(sig) => format!(
                "game.{}({}) -> {}",
                q.name,
                sig.params
                    .iter()
                    .map(|p| format!("{}: {}", p.name, p.ty))
                    .collect::<Vec<_>>()
                    .join(", "),
                q.ty
            ),
            None => format!("game.{}: {}", q.name, q.ty),
        };
        bindings.push(format!("query {call}  // {}", q.doc));
    }
    for m in &sig.effects {
        bindings.push(format!(
            "effect game.{}({})  // {}",
            m.name,
            params(&m.params),
            m.doc
        ));
    }
    for m in &sig.observations {
        bindings.push(format!(
            "observation game.{}({})  // {}",
            m.name,
            params(&m.params),
            m.doc
        ));
    }
    for b in &sig.builtins {
        bindings.push(format!("method {}  // {}", b.text, b.doc));
    }
    Description {
        name: game.name().to_string(),
        about: game.about().to_string(),
        manifest: game.manifest(),
        bindings,
    }
}
