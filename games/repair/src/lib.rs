//! Repair: a long-horizon game of hidden faults, noisy evidence, regressions and stalls.
//!
//! A code base has `M` modules, `F` of which hold a hidden fault of kind `Logic`, `Config` or
//! `Dependency`. The agent inspects modules, patches them, runs the test suite and finally
//! submits, which ends the episode. The rules, fixed before any estimate was run
//! (`docs/chill.md` records them with the expected findings):
//!
//! - `inspect(m)` answers `evidence(m, suspicious, hint)`. With probability `n` (the instance's
//!   noise) the suspicion is flipped; a faulty module's hint names its true kind unless that
//!   flip happened, any other hint is a uniformly drawn kind.
//! - `fix(m, kind)` answers `patched(m)`. The right kind fixes a faulty module, a wrong kind
//!   leaves it faulty, and a patch of a healthy module breaks it with probability 0.3 (a
//!   regression, of a uniformly drawn kind).
//! - `run_tests()` answers `tests(failing)`: the number of faulty modules, off by one (up or
//!   down, never below zero) with probability 0.25.
//! - `submit()` answers `verdict(passed)`, true when no module is faulty, and ends the episode.
//! - With probability `s` per effect the tools stall: the effect does nothing and answers
//!   `empty()`, and so does every later effect until `reset()` (answered `ready()`). `reset`
//!   and `submit` never stall.
//! - Every effect counts (the metric `effects`); after 150 the episode is over, unsolved
//!   unless it was submitted.
//! - The simulated main-agent tokens `tokens_env` are 400 + 60·turn per effect, 1500 + 60·turn
//!   for `run_tests` (the test log is long and the context grows).
//!
//! The faults are drawn from the stream `repair.faults`; the effects' outcomes from
//! `repair.effects`, in order, until the episode is forked and reseeded: then keyed by the
//! effect and its arguments (see [`harness_runtime::EffectDraws`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use harness_compiler::signatures::GameSig;
use harness_runtime::{
    Effect, EffectDraws, Game, GameKind, GameManifest, GameOptions, InstanceSet, MetricSpec,
    Natives, Observation, RngStreams, Value, VariantValue,
};

/// The name in `use game repair`.
pub const NAME: &str = "repair";

/// The instances: modules, faults, evidence noise in percent and stall chance in percent.
const INSTANCES: &[(&str, usize, usize, u32, u32)] = &[
    ("m12-f1-n10-s0", 12, 1, 10, 0),
    ("m12-f2-n20-s5", 12, 2, 20, 5),
    ("m16-f2-n20-s10", 16, 2, 20, 10),
    ("m16-f3-n25-s5", 16, 3, 25, 5),
    ("m24-f2-n15-s10", 24, 2, 15, 10),
    ("m24-f3-n25-s10", 24, 3, 25, 10),
];

/// The turn cap.
pub const MAX_TURNS: i64 = 150;
/// The chance that a patch of a healthy module breaks it.
pub const REGRESSION: f64 = 0.3;
/// The chance that the test count is off by one.
pub const FLAKY: f64 = 0.25;

/// The fault kind enum's name, as the game's bindings declare it.
pub const KIND: &str = "Kind";
/// The kinds in declaration order.
pub const KINDS: [&str; 3] = ["Logic", "Config", "Dependency"];

const FAULT_STREAM: &str = "repair.faults";
const EFFECT_STREAM: &str = "repair.effects";

/// The `Kind` value with this index.
pub fn kind(index: usize) -> Value {
    let index = index.min(KINDS.len() - 1);
    Value::Variant(Arc::new(VariantValue {
        enum_name: Arc::from(KIND),
        index: index as u32,
        name: Arc::from(KINDS[index]),
        payload: Vec::new(),
    }))
}

/// The game kind.
#[derive(Clone, Copy, Debug, Default)]
pub struct Repair;

/// The game's experiment surface.
pub fn manifest() -> GameManifest {
    use harness_runtime::{Better::*, MetricKind::*, MetricRole::*};
    GameManifest {
        metrics: vec![
            MetricSpec::new(
                "solved",
                Rate,
                Higher,
                Primary,
                "Whether the submission passed: no module was faulty.",
            )
            .labelled("success")
            .counted("solved"),
            MetricSpec::new(
                "tokens_env",
                Count,
                Lower,
                Cost,
                "Simulated main-agent tokens: 400 + 60·turn per effect, 1500 + 60·turn for tests.",
            ),
            MetricSpec::new(
                "effects",
                Count,
                Lower,
                Cost,
                "Effects sent, stalled ones included (the cap is 150).",
            ),
            MetricSpec::new(
                "regressions",
                Count,
                Lower,
                Secondary,
                "Healthy modules a patch broke.",
            ),
            MetricSpec::new(
                "submitted",
                Rate,
                Higher,
                Info,
                "Whether a submission was made.",
            )
            .hidden(),
        ],
        instance_sets: vec![InstanceSet {
            name: "all".to_string(),
            doc: "Six code bases of 12 to 24 modules, 1 to 3 faults, 10-25% evidence noise and \
                  0-10% stalls."
                .to_string(),
            instances: INSTANCES.iter().map(|(id, ..)| (*id).to_string()).collect(),
            implies: Vec::new(),
        }],
        options: Vec::new(),
    }
}

impl GameKind for Repair {
    fn name(&self) -> &str {
        NAME
    }

    fn about(&self) -> &str {
        "Repair: find and patch hidden faults with noisy inspections, flaky tests and stalls."
    }

    fn manifest(&self) -> GameManifest {
        manifest()
    }

    fn bindings(&self) -> GameSig {
        let mut sig = GameSig::new(
            NAME,
            "Find and patch the hidden faults of a code base, then submit.",
        );
        sig.enumeration(
            "enum Kind { Logic, Config, Dependency }",
            "The kind of a fault; a patch must name the right one.",
        )
        .query(
            "modules: Int",
            "The number of modules; they are `0..modules`.",
            "game.modules",
        )
        .query(
            "turns_left: Int",
            "Effects left before the cap of 150.",
            "game.turns_left > 0",
        )
        .effect(
            "fn inspect(module: Int)",
            "Inspect a module; answered with `evidence` (or `empty` when stalled).",
        )
        .effect(
            "fn fix(module: Int, kind: Kind)",
            "Patch a module for a fault of `kind`; answered with `patched`.",
        )
        .effect(
            "fn run_tests()",
            "Run the test suite; answered with `tests`.",
        )
        .effect(
            "fn submit()",
            "Submit the code base; answered with `verdict`, and the episode ends.",
        )
        .effect(
            "fn reset()",
            "Restart stalled tools; answered with `ready`.",
        )
        .observation(
            "fn evidence(module: Int, suspicious: Bool, hint: Kind)",
            "What an inspection saw (noisy).",
        )
        .observation("fn patched(module: Int)", "A patch was applied.")
        .observation(
            "fn tests(failing: Int)",
            "How many modules fail their tests (flaky by one).",
        )
        .observation("fn verdict(passed: Bool)", "Whether the submission passed.")
        .observation(
            "fn empty()",
            "The tools are stalled and did nothing; `reset` restarts them.",
        )
        .observation("fn ready()", "The tools were restarted.");
        // The sizes the checker's cost bound uses: the largest code base of the instances, and
        // the turn cap.
        let most = INSTANCES.iter().map(|i| i.1).max().unwrap_or(1);
        sig.bound("modules", most as u64)
            .bound("turns_left", MAX_TURNS.unsigned_abs());
        sig
    }

    fn natives(&self) -> Natives {
        Natives::new()
    }

    fn start(
        &self,
        instance: &str,
        _options: &GameOptions,
        streams: &RngStreams,
    ) -> Result<Box<dyn Game>, String> {
        let &(_, modules, faults, noise, stall) = INSTANCES
            .iter()
            .find(|(id, ..)| *id == instance)
            .ok_or_else(|| {
                format!(
                    "unknown instance `{instance}`; the instances are {}",
                    self.instances().join(", ")
                )
            })?;
        Ok(Box::new(Episode::new(
            modules,
            faults,
            f64::from(noise) / 100.0,
            f64::from(stall) / 100.0,
            streams,
        )))
    }
}

/// One episode: the hidden faults and the counters.
#[derive(Clone, Debug)]
pub struct Episode {
    /// Per module, the kind of its fault, if it has one.
    faults: Vec<Option<usize>>,
    noise: f64,
    stall: f64,
    stalled: bool,
    turn: i64,
    tokens: i64,
    regressions: i64,
    verdict: Option<bool>,
    version: u64,
    pending: Vec<Observation>,
    draws: EffectDraws,
    streams: RngStreams,
}

impl Episode {
    /// An episode of `modules` modules with `faults` faults, evidence noise `noise` and stall
    /// chance `stall`.
    pub fn new(
        modules: usize,
        faults: usize,
        noise: f64,
        stall: f64,
        streams: &RngStreams,
    ) -> Self {
        let mut rng = streams.stream(FAULT_STREAM);
        let mut kinds = vec![None; modules.max(1)];
        let mut placed = 0;
        while placed < faults.min(kinds.len()) {
            let m = rng.below(kinds.len() as u64) as usize;
            if kinds[m].is_none() {
                kinds[m] = Some(rng.below(KINDS.len() as u64) as usize);
                placed += 1;
            }
        }
        Self {
            faults: kinds,
            noise,
            stall,
            stalled: false,
            turn: 0,
            tokens: 0,
            regressions: 0,
            verdict: None,
            version: 0,
            pending: Vec::new(),
            draws: EffectDraws::new(streams.stream(EFFECT_STREAM)),
            streams: *streams,
        }
    }

    /// The modules that are faulty now (ground truth; for tests, never for harnesses).
    pub fn faulty(&self) -> Vec<usize> {
        (0..self.faults.len())
            .filter(|&m| self.faults[m].is_some())
            .collect()
    }

    fn module_arg(&self, effect: &Effect) -> Result<usize, String> {
        match effect.args.first() {
            Some(Value::Int(m)) if (0..self.faults.len() as i64).contains(m) => Ok(*m as usize),
            Some(other) => Err(format!(
                "module {other} is not one of 0..{}",
                self.faults.len()
            )),
            None => Err("missing module".into()),
        }
    }

    fn kind_arg(effect: &Effect) -> Result<usize, String> {
        match effect.args.get(1) {
            Some(Value::Variant(v)) if &*v.enum_name == KIND => Ok(v.index as usize),
            _ => Err("fix expects a Kind as its second argument".into()),
        }
    }

    fn observe(&mut self, name: &str, args: Vec<Value>) {
        self.pending.push(Observation {
            name: Arc::from(name),
            args,
        });
    }
}

impl Game for Episode {
    fn query(&self, name: &str, args: &[Value]) -> Result<Value, String> {
        if !args.is_empty() {
            return Err(format!("`{name}` takes no arguments"));
        }
        match name {
            "modules" => Ok(Value::Int(self.faults.len() as i64)),
            "turns_left" => Ok(Value::Int(MAX_TURNS - self.turn)),
            other => Err(format!("the repair game has no query `{other}`")),
        }
    }

    fn view_version(&self) -> u64 {
        self.version
    }

    fn apply(&mut self, effect: &Effect) -> Result<(), String> {
        if self.is_over() {
            return Err("the episode is over".into());
        }
        let name = &*effect.name;
        // Validate the arguments before anything counts.
        let module = match name {
            "inspect" | "fix" => Some(self.module_arg(effect)?),
            "run_tests" | "submit" | "reset" => None,
            other => return Err(format!("the repair game accepts no effect `{other}`")),
        };
        let patch_kind = if name == "fix" {
            Some(Self::kind_arg(effect)?)
        } else {
            None
        };
        self.turn += 1;
        self.version += 1;
        self.tokens += if name == "run_tests" { 1500 } else { 400 } + 60 * self.turn;
        let rng = match (module, patch_kind) {
            (Some(m), Some(k)) => self.draws.for_effect(format_args!("{name}:{m}:{k}")),
            (Some(m), None) => self.draws.for_effect(format_args!("{name}:{m}")),
            _ => self.draws.for_effect(format_args!("{name}")),
        };
        match name {
            "submit" => {
                let passed = self.faults.iter().all(Option::is_none);
                self.verdict = Some(passed);
                self.observe("verdict", vec![Value::Bool(passed)]);
                return Ok(());
            }
            "reset" => {
                self.stalled = false;
                self.observe("ready", Vec::new());
                return Ok(());
            }
            _ => {}
        }
        if !self.stalled && self.stall > 0.0 && rng.chance(self.stall) {
            self.stalled = true;
        }
        if self.stalled {
            self.observe("empty", Vec::new());
            return Ok(());
        }
        match (name, module) {
            ("inspect", Some(m)) => {
                let fault = self.faults[m];
                let flipped = rng.chance(self.noise);
                let suspicious = fault.is_some() != flipped;
                let hint = match fault {
                    Some(k) if !flipped => k,
                    _ => rng.below(KINDS.len() as u64) as usize,
                };
                self.observe(
                    "evidence",
                    vec![Value::Int(m as i64), Value::Bool(suspicious), kind(hint)],
                );
            }
            ("fix", Some(m)) => {
                let k = patch_kind.unwrap_or(0);
                match self.faults[m] {
                    Some(fault) if fault == k => self.faults[m] = None,
                    Some(_) => {}
                    None => {
                        if rng.chance(REGRESSION) {
                            self.faults[m] = Some(rng.below(KINDS.len() as u64) as usize);
                            self.regressions += 1;
                        }
                    }
                }
                self.observe("patched", vec![Value::Int(m as i64)]);
            }
            _ => {
                let truth = self.faults.iter().filter(|f| f.is_some()).count() as i64;
                let failing = if rng.chance(FLAKY) {
                    if rng.chance(0.5) {
                        truth + 1
                    } else {
                        (truth - 1).max(0)
                    }
                } else {
                    truth
                };
                self.observe("tests", vec![Value::Int(failing)]);
            }
        }
        Ok(())
    }

    fn take_observations(&mut self) -> Vec<Observation> {
        std::mem::take(&mut self.pending)
    }

    fn is_over(&self) -> bool {
        self.verdict.is_some() || self.turn >= MAX_TURNS
    }

    fn metrics(&self) -> BTreeMap<String, Value> {
        BTreeMap::from([
            (
                "solved".to_string(),
                Value::Bool(self.verdict == Some(true)),
            ),
            ("submitted".to_string(), Value::Bool(self.verdict.is_some())),
            ("effects".to_string(), Value::Int(self.turn)),
            ("regressions".to_string(), Value::Int(self.regressions)),
            ("tokens_env".to_string(), Value::Int(self.tokens)),
        ])
    }

    fn fork(&self) -> Option<Box<dyn Game>> {
        Some(Box::new(self.clone()))
    }

    fn reseed(&mut self, salt: u64) -> bool {
        self.draws.reseed(&self.streams, EFFECT_STREAM, salt);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn effect(name: &str, args: Vec<Value>) -> Effect {
        Effect {
            name: Arc::from(name),
            args,
        }
    }

    #[test]
    fn bindings_parse_and_every_instance_starts() {
        let sig = Repair.bindings();
        assert!(sig.problems.is_empty(), "{:?}", sig.problems);
        for id in Repair.instances() {
            let game = Repair
                .start(&id, &GameOptions::default(), &RngStreams::new(1))
                .unwrap_or_else(|e| panic!("{e}"));
            assert!(!game.is_over());
        }
        assert!(
            Repair
                .start("m1", &GameOptions::default(), &RngStreams::new(1))
                .is_err()
        );
    }

    #[test]
    fn the_right_patch_fixes_and_a_clean_submission_passes() {
        let mut game = Episode::new(6, 2, 0.0, 0.0, &RngStreams::new(3));
        let faulty = game.faulty();
        assert_eq!(faulty.len(), 2);
        for &m in &faulty {
            game.apply(&effect("inspect", vec![Value::Int(m as i64)]))
                .unwrap_or_else(|e| panic!("{e}"));
            let obs = game.take_observations();
            assert_eq!(obs[0].args[1], Value::Bool(true), "noiseless evidence");
            let hint = obs[0].args[2].clone();
            game.apply(&effect("fix", vec![Value::Int(m as i64), hint]))
                .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(&*game.take_observations()[0].name, "patched");
        }
        assert!(game.faulty().is_empty());
        game.apply(&effect("submit", vec![]))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(game.is_over());
        assert_eq!(game.metrics()["solved"], Value::Bool(true));
        // 2 inspections, 2 patches and the submission: 5 turns of 400 + 60·turn tokens.
        assert_eq!(game.metrics()["tokens_env"], Value::Int(5 * 400 + 60 * 15));
        assert!(game.apply(&effect("reset", vec![])).is_err());
    }

    #[test]
    fn a_stall_answers_empty_until_reset() {
        let mut game = Episode::new(4, 1, 0.0, 1.0, &RngStreams::new(1));
        game.apply(&effect("inspect", vec![Value::Int(0)]))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(&*game.take_observations()[0].name, "empty");
        game.apply(&effect("run_tests", vec![]))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(&*game.take_observations()[0].name, "empty");
        game.apply(&effect("reset", vec![]))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(&*game.take_observations()[0].name, "ready");
    }

    #[test]
    fn bad_arguments_are_refused_without_counting_a_turn() {
        let mut game = Episode::new(4, 1, 0.1, 0.0, &RngStreams::new(1));
        assert!(game.apply(&effect("inspect", vec![Value::Int(9)])).is_err());
        assert!(
            game.apply(&effect("fix", vec![Value::Int(1), Value::Int(0)]))
                .is_err()
        );
        assert!(game.apply(&effect("jump", vec![])).is_err());
        assert_eq!(game.metrics()["effects"], Value::Int(0));
    }

    #[test]
    fn the_cap_ends_the_episode() {
        let mut game = Episode::new(4, 1, 0.1, 0.0, &RngStreams::new(1));
        for _ in 0..MAX_TURNS {
            game.apply(&effect("run_tests", vec![]))
                .unwrap_or_else(|e| panic!("{e}"));
        }
        assert!(game.is_over());
        assert_eq!(game.metrics()["solved"], Value::Bool(false));
    }

    #[test]
    fn reseeded_copies_agree_on_the_same_effect_whatever_came_before() {
        let mut a = Episode::new(12, 2, 0.25, 0.0, &RngStreams::new(9));
        let mut b = a.clone();
        assert!(a.reseed(4) && b.reseed(4));
        a.apply(&effect("inspect", vec![Value::Int(1)]))
            .unwrap_or_else(|e| panic!("{e}"));
        a.apply(&effect("inspect", vec![Value::Int(2)]))
            .unwrap_or_else(|e| panic!("{e}"));
        b.apply(&effect("inspect", vec![Value::Int(2)]))
            .unwrap_or_else(|e| panic!("{e}"));
        let last = |g: &mut Episode| g.take_observations().pop();
        assert_eq!(last(&mut a), last(&mut b));
    }
}
