//! Line search: a teaching game for the harness runtime.
//!
//! A target hides in one of `n` cells on a line. Each turn the agent either probes a cell and
//! hears whether the target lies to the `Left`, `Here` or to the `Right` of it, or makes its one
//! final guess. Answers are noisy: with probability `noise` the game reports one of the two
//! wrong directions instead, chosen uniformly. Probes are limited; an episode ends with the
//! guess, or with the probes spent and no guess made.
//!
//! The target and the noise are drawn from the runtime's named streams `search.target` and
//! `search.noise`, so an instance and a seed fix the whole episode. The agent-visible view is
//! the number of cells and the probes left and used; the target and the noise level are ground
//! truth and never visible to a harness.

use std::collections::BTreeMap;
use std::sync::Arc;

use harness_compiler::signatures::GameSig;
use harness_runtime::{
    Effect, EffectDraws, Game, GameKind, GameManifest, GameOptions, InstanceSet, MetricSpec,
    Natives, Observation, RngStreams, Value, VariantValue,
};

/// The name in `use game search`.
pub const NAME: &str = "search";

/// The instances: cells and noise in percent, in a fixed order.
const INSTANCES: &[(&str, i64, u32)] = &[
    ("n16-p10", 16, 10),
    ("n16-p25", 16, 25),
    ("n32-p10", 32, 10),
    ("n32-p20", 32, 20),
    ("n64-p15", 64, 15),
    ("n100-p20", 100, 20),
];

/// The stream the answer noise draws from.
const NOISE_STREAM: &str = "search.noise";

/// The direction enum's name, as the game's bindings declare it.
pub const DIR: &str = "Dir";

/// The direction names in declaration order: `Dir.Left`, `Dir.Here`, `Dir.Right`.
pub const DIRECTIONS: [&str; 3] = ["Left", "Here", "Right"];

/// The `Dir` value with this index (0 left, 1 here, 2 right).
pub fn direction(index: u32) -> Value {
    let name = DIRECTIONS.get(index as usize).copied().unwrap_or("Here");
    Value::Variant(Arc::new(VariantValue {
        enum_name: Arc::from(DIR),
        index,
        name: Arc::from(name),
        payload: Vec::new(),
    }))
}

/// The game kind: its instances and how to start them.
#[derive(Clone, Copy, Debug, Default)]
pub struct LineSearch;

/// The game's experiment surface: whether the target was found, the score and the probes.
pub fn manifest() -> GameManifest {
    use harness_runtime::{Better::*, MetricKind::*, MetricRole::*};
    GameManifest {
        metrics: vec![
            MetricSpec::new(
                "solved",
                Rate,
                Higher,
                Primary,
                "Whether the final guess found the target.",
            )
            .labelled("solve rate")
            .counted("solved"),
            MetricSpec::new(
                "score",
                Mean,
                Higher,
                Secondary,
                "1 - probes / (budget + 1) when solved, else 0.",
            ),
            MetricSpec::new("probes", Count, Lower, Cost, "Probes made."),
            MetricSpec::new("guessed", Rate, Higher, Info, "Whether a guess was made.").hidden(),
        ],
        instance_sets: vec![InstanceSet {
            name: "all".to_string(),
            doc: "Six lines of 16 to 100 cells with answer noise from 10% to 25%.".to_string(),
            instances: INSTANCES
                .iter()
                .map(|(id, _, _)| (*id).to_string())
                .collect(),
            implies: Vec::new(),
        }],
        options: Vec::new(),
    }
}

impl GameKind for LineSearch {
    fn name(&self) -> &str {
        NAME
    }

    fn about(&self) -> &str {
        "Line search: find a hidden target on a line of cells with noisy probes."
    }

    fn manifest(&self) -> GameManifest {
        manifest()
    }

    fn bindings(&self) -> GameSig {
        let mut sig = GameSig::new(
            NAME,
            "Find a hidden target on a line of cells with noisy probes.",
        );
        sig.enumeration(
            "enum Dir { Left, Here, Right }",
            "Where the target lies, seen from a probed cell.",
        )
        .query(
            "cells: Int",
            "The number of cells; the target is in `0..cells`.",
            "game.cells",
        )
        .query(
            "probes_left: Int",
            "How many probes remain.",
            "game.probes_left > 0",
        )
        .query(
            "probes_used: Int",
            "How many probes were made.",
            "game.probes_used",
        )
        .effect(
            "fn probe(cell: Int)",
            "Probe a cell; the game answers with `answer`.",
        )
        .effect(
            "fn guess(cell: Int)",
            "The final guess; the game answers with `verdict` and ends.",
        )
        .observation(
            "fn answer(cell: Int, dir: Dir)",
            "The (noisy) direction of the target from the probed cell.",
        )
        .observation(
            "fn verdict(correct: Bool)",
            "Whether the final guess was right.",
        );
        // The longest line of any instance bounds `cells` for the checker's cost bound.
        let longest = INSTANCES
            .iter()
            .map(|&(_, cells, _)| cells)
            .max()
            .unwrap_or(0);
        sig.bound("cells", longest.unsigned_abs());
        sig
    }

    fn natives(&self) -> Natives {
        // The game has no opaque types and so no methods: cells are `Int`s.
        Natives::new()
    }

    fn start(
        &self,
        instance: &str,
        _options: &GameOptions,
        streams: &RngStreams,
    ) -> Result<Box<dyn Game>, String> {
        let &(_, cells, noise) = INSTANCES
            .iter()
            .find(|(id, _, _)| *id == instance)
            .ok_or_else(|| {
                format!(
                    "unknown instance `{instance}`; the instances are {}",
                    self.instances().join(", ")
                )
            })?;
        Ok(Box::new(Episode::new(
            cells,
            f64::from(noise) / 100.0,
            streams,
        )))
    }
}

/// One episode: ground truth and the agent-visible counters.
#[derive(Clone, Debug)]
pub struct Episode {
    cells: i64,
    noise: f64,
    target: i64,
    budget: i64,
    probes: i64,
    guess: Option<i64>,
    version: u64,
    pending: Vec<Observation>,
    noise_draws: EffectDraws,
    streams: RngStreams,
}

impl Episode {
    /// An episode on `cells` cells with answer noise `noise`.
    pub fn new(cells: i64, noise: f64, streams: &RngStreams) -> Self {
        let target = streams.stream("search.target").below(cells.max(1) as u64) as i64;
        // Two probes per halving of the line, plus slack: enough to be confident at low noise,
        // tight at high noise.
        let budget = 2 * (64 - (cells.max(1) as u64).leading_zeros()) as i64 + 2;
        Self {
            cells,
            noise,
            target,
            budget,
            probes: 0,
            guess: None,
            version: 0,
            pending: Vec::new(),
            noise_draws: EffectDraws::new(streams.stream(NOISE_STREAM)),
            streams: *streams,
        }
    }

    /// The hidden target (ground truth; for tests and reports, never for harnesses).
    pub fn target(&self) -> i64 {
        self.target
    }

    fn cell_arg(&self, effect: &Effect) -> Result<i64, String> {
        match effect.args.first() {
            Some(Value::Int(c)) if (0..self.cells).contains(c) => Ok(*c),
            Some(other) => Err(format!("cell {other} is not on the line 0..{}", self.cells)),
            None => Err("missing cell".into()),
        }
    }
}

impl Game for Episode {
    fn query(&self, name: &str, args: &[Value]) -> Result<Value, String> {
        if !args.is_empty() {
            return Err(format!("`{name}` takes no arguments"));
        }
        match name {
            "cells" => Ok(Value::Int(self.cells)),
            "probes_left" => Ok(Value::Int(self.budget - self.probes)),
            "probes_used" => Ok(Value::Int(self.probes)),
            other => Err(format!("the search game has no query `{other}`")),
        }
    }

    fn view_version(&self) -> u64 {
        self.version
    }

    fn apply(&mut self, effect: &Effect) -> Result<(), String> {
        if self.guess.is_some() {
            return Err("the episode is over".into());
        }
        match &*effect.name {
            "probe" => {
                let cell = self.cell_arg(effect)?;
                if self.probes >= self.budget {
                    return Err("no probes left".into());
                }
                self.probes += 1;
                let truth = match self.target.cmp(&cell) {
                    std::cmp::Ordering::Less => 0,
                    std::cmp::Ordering::Equal => 1,
                    std::cmp::Ordering::Greater => 2,
                };
                let rng = self.noise_draws.for_effect(format_args!("probe:{cell}"));
                let answer = if rng.chance(self.noise) {
                    // One of the two wrong directions, uniformly.
                    (truth + 1 + rng.below(2) as u32) % 3
                } else {
                    truth
                };
                self.pending.push(Observation {
                    name: Arc::from("answer"),
                    args: vec![Value::Int(cell), direction(answer)],
                });
            }
            "guess" => {
                let cell = self.cell_arg(effect)?;
                self.guess = Some(cell);
                self.pending.push(Observation {
                    name: Arc::from("verdict"),
                    args: vec![Value::Bool(cell == self.target)],
                });
            }
            other => return Err(format!("the search game accepts no effect `{other}`")),
        }
        self.version += 1;
        Ok(())
    }

    fn take_observations(&mut self) -> Vec<Observation> {
        std::mem::take(&mut self.pending)
    }

    fn is_over(&self) -> bool {
        self.guess.is_some()
    }

    fn fork(&self) -> Option<Box<dyn Game>> {
        Some(Box::new(self.clone()))
    }

    fn reseed(&mut self, salt: u64) -> bool {
        self.noise_draws.reseed(&self.streams, NOISE_STREAM, salt);
        true
    }

    fn metrics(&self) -> BTreeMap<String, Value> {
        let solved = self.guess == Some(self.target);
        let score = if solved {
            1.0 - self.probes as f64 / (self.budget + 1) as f64
        } else {
            0.0
        };
        BTreeMap::from([
            ("guessed".to_string(), Value::Bool(self.guess.is_some())),
            ("probes".to_string(), Value::Int(self.probes)),
            (
                "score".to_string(),
                Value::float(score).unwrap_or(Value::Int(0)),
            ),
            ("solved".to_string(), Value::Bool(solved)),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probe(cell: i64) -> Effect {
        Effect {
            name: Arc::from("probe"),
            args: vec![Value::Int(cell)],
        }
    }

    #[test]
    fn bindings_parse_and_name_every_effect_and_observation() {
        let sig = LineSearch.bindings();
        assert!(sig.problems.is_empty(), "{:?}", sig.problems);
        let names = |m: &[harness_compiler::signatures::MessageSig]| {
            m.iter().map(|m| m.name.clone()).collect::<Vec<_>>()
        };
        assert_eq!(names(&sig.effects), ["probe", "guess"]);
        assert_eq!(names(&sig.observations), ["answer", "verdict"]);
        assert_eq!(sig.enums[0].variants.len(), DIRECTIONS.len());
    }

    #[test]
    fn the_same_seed_gives_the_same_episode() {
        let run = |seed| {
            let mut game = LineSearch
                .start("n32-p20", &GameOptions::default(), &RngStreams::new(seed))
                .unwrap_or_else(|e| panic!("{e}"));
            for c in 0..8 {
                game.apply(&probe(c * 4)).unwrap_or_else(|e| panic!("{e}"));
            }
            game.take_observations()
        };
        assert_eq!(run(3), run(3));
        assert_ne!(run(3), run(4));
    }

    #[test]
    fn noiseless_answers_point_at_the_target_and_a_guess_ends_the_game() {
        let mut game = Episode::new(10, 0.0, &RngStreams::new(1));
        let target = game.target();
        game.apply(&probe(target)).unwrap_or_else(|e| panic!("{e}"));
        let obs = game.take_observations();
        assert_eq!(obs[0].args[1], direction(1));
        game.apply(&Effect {
            name: Arc::from("guess"),
            args: vec![Value::Int(target)],
        })
        .unwrap_or_else(|e| panic!("{e}"));
        assert!(game.is_over());
        assert_eq!(game.metrics()["solved"], Value::Bool(true));
        assert!(game.apply(&probe(0)).is_err());
    }

    #[test]
    fn probes_are_limited_and_cells_checked() {
        let mut game = Episode::new(4, 0.1, &RngStreams::new(1));
        assert!(game.apply(&probe(9)).is_err());
        while game.query("probes_left", &[]) != Ok(Value::Int(0)) {
            game.apply(&probe(1)).unwrap_or_else(|e| panic!("{e}"));
        }
        assert!(game.apply(&probe(1)).is_err());
    }
}
