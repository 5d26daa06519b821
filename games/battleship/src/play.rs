//! Battleship for the harness runtime: the game kind, one episode's view, and native methods.
//!
//! The runtime sees the game only through this module: queries of the agent-visible view
//! (`game.shots_left`, `game.unknown_cells()`...), the effects `fire(cell)` and `ask(q)`, the
//! observations `shot(cell, hit)` and `answer(q, yes)`, and the opaque types `Cell`, `Question`,
//! `Posterior` and `Grid<Float>` with their methods. Ground truth (the board) never leaves the
//! episode.
//!
//! Seeds: an episode of instance `B07` with seed `k` is the reference's replicate `k` of that
//! board. In the `paper` protocol the game seed is the reference's hash of board id and `k`,
//! which seeds the spotter and the `mcmc-compat` sampler exactly as the reference does, so
//! published games replay move for move. In the `grand` protocol the replicate seeds are 42,
//! 111 and 1337.

use std::any::Any;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock, Mutex, OnceLock};

use harness_compiler::signatures::GameSig;
use harness_runtime::{
    Effect, EffectDraws, Float, Game as RuntimeGame, GameKind, GameManifest, GameOptions,
    InstanceSet, MetricSpec, NativeCtx, NativeError, Natives, Observation, Opaque, OptionSpec,
    OptionType, RngStreams, Value,
};

use crate::belief::{
    Belief, Fleet, Mcmc, McmcCompat, McmcConfig, SampleSet, Smc, SmcConfig, untempered_likelihood,
};
use crate::board::{Board, Color};
use crate::cell::{Cell, cells_of};
use crate::game::{Game, Protocol, ShotOutcome, Spotter};
use crate::kernels;
use crate::questions::{Family, Group, Question, catalogue};
use crate::{grand, paper};

/// The replicate seeds of the grand protocol, by seed index.
pub const GRAND_SEEDS: [i64; 3] = [42, 111, 1337];

/// The flip probability a belief assumes in the grand protocol, whose spotter is truthful.
pub const GRAND_MODEL_EPSILON: f64 = 0.1;

/// The name in `use game battleship`.
pub const NAME: &str = "battleship";

/// Battleship: the factory of episodes under either protocol.
#[derive(Clone, Copy, Debug, Default)]
pub struct Battleship;

/// The protocol named by the `protocol` option (the paper's when it is absent).
pub fn protocol_of(options: &GameOptions) -> Result<Protocol, String> {
    match options.get("protocol") {
        None | Some("paper") => Ok(Protocol::Paper),
        Some("grand") => Ok(Protocol::Grand),
        Some(other) => Err(format!(
            "unknown protocol `{other}`; the protocols are paper and grand"
        )),
    }
}

/// The option that selects the protocol's value.
fn protocol_name(protocol: Protocol) -> &'static str {
    match protocol {
        Protocol::Paper => "paper",
        Protocol::Grand => "grand",
    }
}

fn board(protocol: Protocol, instance: &str) -> Result<Board, String> {
    let unknown = || {
        format!(
            "unknown board `{instance}`: the boards are B01 to B18 (e.g. `--instances B01,B07`)"
        )
    };
    let index = paper::paper_board_index(instance).ok_or_else(unknown)?;
    match protocol {
        Protocol::Paper => paper::paper_board(index).ok_or_else(unknown),
        Protocol::Grand => grand::grand_board(index)
            .ok_or_else(unknown)?
            .map_err(|error| format!("board `{instance}` does not parse: {error}")),
    }
}

/// The game's experiment surface: its metrics, its two board suites and the protocol option.
pub fn manifest() -> GameManifest {
    use harness_runtime::{Better::*, MetricKind::*, MetricRole::*};
    let suite = |protocol: Protocol, doc: &str| InstanceSet {
        name: protocol_name(protocol).to_string(),
        doc: doc.to_string(),
        instances: paper::PAPER_BOARD_IDS
            .iter()
            .map(|id| id.to_string())
            .collect(),
        implies: vec![("protocol".to_string(), protocol_name(protocol).to_string())],
    };
    GameManifest {
        metrics: vec![
            MetricSpec::new(
                "won",
                Rate,
                Higher,
                Primary,
                "Whether every ship cell was hit within the shot budget.",
            )
            .labelled("win rate")
            .counted("wins"),
            MetricSpec::new(
                "f1",
                Mean,
                Higher,
                Secondary,
                "F1 of the shots against the ship cells.",
            )
            .labelled("F1"),
            MetricSpec::new("shots", Count, Lower, Cost, "Shots fired."),
            MetricSpec::new("questions", Count, Lower, Cost, "Questions asked.").labelled("quest"),
            MetricSpec::new("precision", Mean, Higher, Info, "Hits over shots.").hidden(),
            MetricSpec::new(
                "recall",
                Mean,
                Higher,
                Info,
                "Ship cells hit over ship cells.",
            )
            .hidden(),
            MetricSpec::new("hits", Count, Higher, Info, "Shots that hit a ship.").hidden(),
            MetricSpec::new(
                "ship_cells",
                Count,
                Neither,
                Info,
                "Cells covered by ships.",
            )
            .hidden(),
        ],
        instance_sets: vec![
            suite(
                Protocol::Paper,
                "The seed paper's 18 boards (the reference's generateBoard(1001..1018)), played \
                 with a spotter who lies with probability 0.1; seeds are the reference's replicates.",
            ),
            suite(
                Protocol::Grand,
                "Grand et al.'s 18 boards, played with a truthful spotter who reveals the hit \
                 ship's colour; seeds 0, 1, 2 are their replicate seeds 42, 111 and 1337.",
            ),
        ],
        options: vec![OptionSpec {
            name: "protocol".to_string(),
            doc: "The rules of play and the board suite: `paper` (the seed paper's) or `grand` \
                  (Grand et al.'s)."
                .to_string(),
            ty: OptionType::Choice(vec!["paper".to_string(), "grand".to_string()]),
            default: "paper".to_string(),
        }],
    }
}

impl GameKind for Battleship {
    fn name(&self) -> &str {
        NAME
    }

    fn about(&self) -> &str {
        "Noisy collaborative Battleship: find the ships on an 8x8 board with shots and yes/no questions."
    }

    fn manifest(&self) -> GameManifest {
        manifest()
    }

    fn bindings(&self) -> GameSig {
        crate::bindings::game()
    }

    fn natives(&self) -> Natives {
        natives()
    }

    fn start(
        &self,
        instance: &str,
        options: &GameOptions,
        streams: &RngStreams,
    ) -> Result<Box<dyn RuntimeGame>, String> {
        let protocol = protocol_of(options)?;
        let board = board(protocol, instance)?;
        let seed_index = streams.seed();
        let (game_seed, spotter, epsilon) = match protocol {
            Protocol::Paper => {
                let seed = paper::game_seed(instance, seed_index as usize);
                (seed, Spotter::paper(seed), crate::game::PAPER_EPSILON)
            }
            Protocol::Grand => {
                let seed = GRAND_SEEDS
                    .get(seed_index as usize)
                    .copied()
                    .ok_or_else(|| {
                        format!("the grand protocol has seeds 0, 1 and 2, not {seed_index}")
                    })?;
                (seed, Spotter::truthful(), GRAND_MODEL_EPSILON)
            }
        };
        Ok(Box::new(Episode {
            game: Game::new(board, protocol, spotter),
            game_seed,
            epsilon,
            pending: Vec::new(),
            version: 0,
            keyed_flips: None,
        }))
    }

    fn describe_instance(
        &self,
        instance: &str,
        options: &GameOptions,
    ) -> Option<Result<String, String>> {
        Some(protocol_of(options).and_then(|protocol| {
            crate::render::render_instance(protocol, instance).map_err(|error| error.to_string())
        }))
    }
}

/// The stream a forked episode's spotter flips are keyed in.
const SPOTTER_STREAM: &str = "battleship.spotter";

/// One running game as the runtime sees it.
#[derive(Clone)]
struct Episode {
    game: Game,
    game_seed: i64,
    epsilon: f64,
    pending: Vec<Observation>,
    version: u64,
    /// After a reseed, the keyed draws of the spotter's flips (one per question asked); before
    /// it, the spotter's own stream, as in the paper.
    keyed_flips: Option<EffectDraws>,
}

/// The 64 cells as runtime values, built once: queries that list cells share them instead of
/// allocating every element anew on every call.
fn cell_values() -> &'static [Value] {
    static CELLS: OnceLock<Vec<Value>> = OnceLock::new();
    CELLS.get_or_init(|| {
        cells_of(u64::MAX)
            .map(|cell| Value::opaque(CellValue::new(cell)))
            .collect()
    })
}

fn cell_value(cell: Cell) -> Value {
    cell_values()[cell.index()].clone()
}

/// The question catalogue as one runtime list, built once (see [`cell_values`]).
fn question_values() -> &'static Value {
    static QUESTIONS: OnceLock<Value> = OnceLock::new();
    QUESTIONS.get_or_init(|| {
        Value::list(
            catalogue()
                .iter()
                .map(|q| Value::opaque(QuestionValue::new(Arc::new(q.clone()))))
                .collect(),
        )
    })
}

fn question_value(question: &Question) -> Value {
    let shared = match question_values() {
        Value::List(items) => items.iter().find(|v| {
            v.as_opaque::<QuestionValue>()
                .is_some_and(|q| *q.0 == *question)
        }),
        _ => None,
    };
    shared
        .cloned()
        .unwrap_or_else(|| Value::opaque(QuestionValue::new(Arc::new(question.clone()))))
}

fn float(x: f64) -> Result<Value, NativeError> {
    Value::float(x).ok_or_else(|| NativeError::msg(format!("a battleship kernel produced {x}")))
}

fn int(x: impl Into<i64>) -> Value {
    Value::Int(x.into())
}

fn cells_list(mask: u64) -> Value {
    Value::list(cells_of(mask).map(cell_value).collect())
}

fn arg<'a, T: Opaque>(args: &'a [Value], index: usize, what: &str) -> Result<&'a T, NativeError> {
    args.get(index)
        .and_then(Value::as_opaque::<T>)
        .ok_or_else(|| NativeError::msg(format!("expected a {what} as argument {}", index + 1)))
}

fn int_arg(args: &[Value], index: usize) -> Result<i64, NativeError> {
    args.get(index)
        .and_then(Value::as_int)
        .ok_or_else(|| NativeError::msg(format!("expected an Int as argument {}", index + 1)))
}

fn bool_arg(args: &[Value], index: usize) -> Result<bool, NativeError> {
    args.get(index)
        .and_then(Value::as_bool)
        .ok_or_else(|| NativeError::msg(format!("expected a Bool as argument {}", index + 1)))
}

impl Episode {
    fn query_value(&self, name: &str, args: &[Value]) -> Result<Value, NativeError> {
        let game = &self.game;
        Ok(match name {
            "shots_left" => int(game.shots_remaining()),
            "questions_left" => int(game.questions_remaining()),
            "turn" => int(game.turn()),
            "hits" => int(game.hit_count()),
            "misses" => int(game.misses().count_ones()),
            "ship_cells" => int(game.total_ship_cells()),
            "won" => Value::Bool(game.is_won()),
            "ship_lengths" => Value::list(
                game.board()
                    .ships()
                    .iter()
                    .map(|ship| int(ship.len() as i64))
                    .collect(),
            ),
            "ships_sunk" => int(game.sunk().iter().filter(|sunk| **sunk).count() as i64),
            "epsilon" => float(self.epsilon)?,
            "unknown_cells" => cells_list(game.unknown()),
            "hit_cells" => cells_list(game.hits()),
            "is_unknown" => {
                let cell = arg::<CellValue>(args, 0, "Cell")?;
                Value::Bool(game.unknown() & cell.0.bit() != 0)
            }
            "questions" => question_values().clone(),
            "frontier" => cells_list(kernels::frontier(game.hits(), game.misses())),
            "open_frontier" => cells_list(kernels::frontier(self.unsunk_hits(), game.misses())),
            "largest_cluster" => int(kernels::hit_clusters(game.hits())
                .iter()
                .map(|c| c.count_ones())
                .max()
                .unwrap_or(0)),
            "cluster_relevance" => {
                let question = arg::<QuestionValue>(args, 0, "Question")?;
                float(kernels::cluster_relevance(
                    question.0.region,
                    &kernels::hit_clusters(game.hits()),
                ))?
            }
            "prior" => {
                let particles = int_arg(args, 0)?;
                let particles = usize::try_from(particles)
                    .ok()
                    .filter(|&n| (1..=100_000).contains(&n))
                    .ok_or_else(|| {
                        NativeError::msg(format!(
                            "particles must be in 1..=100000, not {particles}"
                        ))
                    })?;
                let backend = match args.get(1) {
                    Some(Value::Str(name)) => name.to_string(),
                    _ => {
                        return Err(NativeError::msg(
                            "expected the backend's name as argument 2",
                        ));
                    }
                };
                Value::opaque(PosteriorValue::new(
                    self.belief(&backend, particles)?,
                    self.epsilon,
                ))
            }
            _ => {
                return Err(NativeError::msg(format!(
                    "battleship has no query `{name}`"
                )));
            }
        })
    }

    /// A fresh belief of the named backend, seeded from the game seed.
    fn belief(&self, backend: &str, particles: usize) -> Result<BeliefImpl, NativeError> {
        let fleet = match self.game.protocol() {
            Protocol::Paper => Fleet::paper(),
            Protocol::Grand => Fleet::from_tracker(&self.game.tracker())
                .map_err(|error| NativeError::msg(format!("cannot read the fleet: {error}")))?,
        };
        Ok(match backend {
            "mcmc" => BeliefImpl::Mcmc(Mcmc::new(
                fleet,
                self.game_seed,
                McmcConfig {
                    samples: particles,
                    ..McmcConfig::default()
                },
            )),
            "smc" => BeliefImpl::Smc(Smc::new(
                fleet,
                self.game_seed,
                SmcConfig {
                    particles,
                    ..SmcConfig::default()
                },
            )),
            "mcmc-compat" if self.game.protocol() == Protocol::Paper => {
                BeliefImpl::McmcCompat(McmcCompat::new(self.game_seed, particles).map_err(
                    |error| NativeError::msg(format!("cannot start the sampler: {error}")),
                )?)
            }
            "mcmc-compat" => {
                return Err(NativeError::msg(
                    "the mcmc-compat belief knows only the paper fleet; use mcmc or smc with --protocol grand",
                ));
            }
            other => {
                return Err(NativeError::msg(format!(
                    "unknown belief backend `{other}`: choose mcmc, smc or mcmc-compat"
                )));
            }
        })
    }

    /// Hit cells of ships not known to be sunk: all hits in the paper protocol, which never
    /// reveals sinking.
    fn unsunk_hits(&self) -> u64 {
        let sunk = self.game.sunk();
        let mut mask = self.game.hits();
        if self.game.protocol() == Protocol::Grand {
            for (ship, sunk) in self.game.board().ships().iter().zip(sunk) {
                if sunk {
                    mask &= !ship.mask();
                }
            }
        }
        mask
    }
}

impl RuntimeGame for Episode {
    fn query(&self, name: &str, args: &[Value]) -> Result<Value, String> {
        self.query_value(name, args).map_err(|error| match error {
            NativeError::Failed(_, message) => message,
            NativeError::Runtime(mut error) => std::mem::take(&mut error.message),
        })
    }

    fn view_version(&self) -> u64 {
        self.version
    }

    fn apply(&mut self, effect: &Effect) -> Result<(), String> {
        let observation = match &*effect.name {
            "fire" => {
                let cell = effect
                    .args
                    .first()
                    .and_then(Value::as_opaque::<CellValue>)
                    .ok_or("fire expects a Cell")?
                    .0;
                let outcome = self.game.shoot(cell).map_err(|error| error.to_string())?;
                // Grand et al.'s protocol also shows the colour of the ship hit and announces a
                // sinking; the paper protocol never does, so its games see only `shot`.
                if let Some(color) = outcome.color {
                    self.pending.push(Observation {
                        name: Arc::from("shot"),
                        args: vec![cell_value(cell), Value::Bool(true)],
                    });
                    Observation {
                        name: Arc::from("ship"),
                        args: vec![
                            cell_value(cell),
                            Value::str(color.name()),
                            Value::Bool(outcome.sunk.is_some()),
                        ],
                    }
                } else {
                    Observation {
                        name: Arc::from("shot"),
                        args: vec![cell_value(cell), Value::Bool(outcome.hit)],
                    }
                }
            }
            "ask" => {
                let question = effect
                    .args
                    .first()
                    .and_then(Value::as_opaque::<QuestionValue>)
                    .ok_or("ask expects a Question")?
                    .0
                    .clone();
                let epsilon = self.game.spotter_epsilon();
                let flip = self.keyed_flips.as_mut().map(|draws| {
                    epsilon > 0.0
                        && draws
                            .for_effect(format_args!("ask:{}", question.id))
                            .next_f64()
                            < epsilon
                });
                let answer = self
                    .game
                    .ask_flipped(&question, flip)
                    .map_err(|error| error.to_string())?;
                Observation {
                    name: Arc::from("answer"),
                    args: vec![question_value(&question), Value::Bool(answer)],
                }
            }
            other => {
                return Err(format!(
                    "battleship accepts `fire` and `ask`, not `{other}`"
                ));
            }
        };
        self.version += 1;
        self.pending.push(observation);
        Ok(())
    }

    fn take_observations(&mut self) -> Vec<Observation> {
        std::mem::take(&mut self.pending)
    }

    fn is_over(&self) -> bool {
        self.game.is_over()
    }

    fn fork(&self) -> Option<Box<dyn RuntimeGame>> {
        Some(Box::new(self.clone()))
    }

    fn reseed(&mut self, salt: u64) -> bool {
        // Shots draw nothing; only the spotter's flips are random.
        let streams = RngStreams::new(self.game_seed as u64);
        let mut draws = EffectDraws::new(streams.stream(SPOTTER_STREAM));
        draws.reseed(&streams, SPOTTER_STREAM, salt);
        self.keyed_flips = Some(draws);
        true
    }

    fn metrics(&self) -> BTreeMap<String, Value> {
        let metrics = self.game.metrics();
        let mut out = BTreeMap::new();
        let mut put_float = |name: &str, x: f64| {
            if let Some(value) = Value::float(x) {
                out.insert(name.to_string(), value);
            }
        };
        put_float("f1", metrics.f1);
        put_float("precision", metrics.precision);
        put_float("recall", metrics.recall);
        out.insert("won".into(), Value::Bool(self.game.is_won()));
        out.insert("shots".into(), int(self.game.shots_fired()));
        out.insert("questions".into(), int(self.game.questions_asked()));
        out.insert("hits".into(), int(self.game.hit_count()));
        out.insert("ship_cells".into(), int(self.game.total_ship_cells()));
        out
    }
}

/// A cell of the board, shown as its id (`D5`).
#[derive(Debug)]
pub struct CellValue(pub Cell, Box<str>);

impl CellValue {
    /// The value of `cell`, with its JSON text kept for comparisons.
    pub fn new(cell: Cell) -> Self {
        let text = serde_json::Value::String(cell.to_string()).to_string();
        CellValue(cell, text.into())
    }
}

impl Opaque for CellValue {
    fn type_name(&self) -> &str {
        "Cell"
    }

    fn to_json(&self) -> serde_json::Value {
        serde_json::Value::String(self.0.to_string())
    }

    fn json_text(&self) -> Cow<'_, str> {
        Cow::Borrowed(&self.1)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A question (a region of the board), shown as its id (`row:A`).
#[derive(Debug)]
pub struct QuestionValue(pub Arc<Question>, Box<str>);

impl QuestionValue {
    /// The value of `question`, with its JSON text kept for comparisons (questions sit in sets).
    pub fn new(question: Arc<Question>) -> Self {
        let text = serde_json::Value::String(question.id.clone()).to_string();
        QuestionValue(question, text.into())
    }
}

impl Opaque for QuestionValue {
    fn type_name(&self) -> &str {
        "Question"
    }

    fn to_json(&self) -> serde_json::Value {
        serde_json::Value::String(self.0.id.clone())
    }

    fn json_text(&self) -> Cow<'_, str> {
        Cow::Borrowed(&self.1)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A belief backend behind a posterior value.
#[derive(Clone, Debug)]
enum BeliefImpl {
    McmcCompat(McmcCompat),
    Mcmc(Mcmc),
    Smc(Smc),
}

impl BeliefImpl {
    fn as_belief(&self) -> &dyn Belief {
        match self {
            BeliefImpl::McmcCompat(belief) => belief,
            BeliefImpl::Mcmc(belief) => belief,
            BeliefImpl::Smc(belief) => belief,
        }
    }

    fn as_belief_mut(&mut self) -> &mut dyn Belief {
        match self {
            BeliefImpl::McmcCompat(belief) => belief,
            BeliefImpl::Mcmc(belief) => belief,
            BeliefImpl::Smc(belief) => belief,
        }
    }

    /// The number of samples the backend holds after any update, when it is fixed: the
    /// reference's chain always keeps N.
    fn fixed_sample_count(&self) -> Option<usize> {
        match self {
            BeliefImpl::McmcCompat(belief) => Some(belief.particles()),
            BeliefImpl::Mcmc(_) | BeliefImpl::Smc(_) => None,
        }
    }

    fn name(&self) -> &'static str {
        match self {
            BeliefImpl::McmcCompat(_) => "mcmc-compat",
            BeliefImpl::Mcmc(_) => "mcmc",
            BeliefImpl::Smc(_) => "smc",
        }
    }

    /// The likelihood of an answer that agrees (or not) with a sample, as this backend
    /// conditions on answers: the reference's tempered 0.82/0.18 for `mcmc-compat`, the true
    /// flip model for the others.
    fn answer_likelihood(&self, matches: bool, epsilon: f64) -> f64 {
        match self {
            BeliefImpl::McmcCompat(_) => kernels::answer_likelihood(matches, epsilon),
            BeliefImpl::Mcmc(_) | BeliefImpl::Smc(_) => untempered_likelihood(matches, epsilon),
        }
    }
}

/// A real observation that a backend folds in.
#[derive(Clone, Copy, Debug)]
enum Update {
    Shot(ShotOutcome),
    Answer {
        region: u64,
        yes: bool,
        epsilon: f64,
    },
}

impl Update {
    fn apply(self, belief: &mut BeliefImpl) {
        match self {
            Update::Shot(outcome) => belief.as_belief_mut().observe_shot(&outcome),
            Update::Answer {
                region,
                yes,
                epsilon,
            } => belief.as_belief_mut().observe_answer(region, yes, epsilon),
        }
    }
}

/// A backend's state, computed on first use: the first state as given, a later one as its
/// predecessor's state with one more real observation folded in.
type LazyBelief = LazyLock<BeliefImpl, Box<dyn FnOnce() -> BeliefImpl + Send>>;

/// A posterior over boards: the sampler's state after the real observations, and, inside a
/// `sim.next` preview, importance weights for hypothetical observations.
///
/// Previews never run the sampler: they must not draw randomness, and the reference values
/// questions by reweighting the current samples. So in a preview, `observe_answer` multiplies
/// each sample's weight by the answer's likelihood and `observe_shot` zeroes the samples that
/// disagree with the shot; outside a preview both run the backend's full update.
///
/// That update (a whole sampler run, the costliest step of a turn) waits until something reads
/// the samples. The handler of an episode's last observation (the winning shot) folds it into
/// the posterior, but nothing reads that posterior again, so its run never happens. A backend
/// draws only from its own generator, in its own order, so an update run later gives the same
/// samples as one run at once. Only backends whose sample count is fixed wait: the count shows
/// in the value's JSON form, which the trace records whether or not the update has run.
#[derive(Clone, Debug)]
pub struct PosteriorValue {
    belief: Arc<LazyBelief>,
    /// The backend's name.
    backend: &'static str,
    /// The number of samples the backend holds after every update, when it is fixed.
    fixed_samples: Option<usize>,
    /// Weights replacing the samples' own, after hypothetical observations.
    weights: Option<Arc<Vec<f64>>>,
    /// Cells revealed so far (hits and misses), known to the posterior through its shots.
    revealed: u64,
    /// The flip probability the belief conditions answers with.
    epsilon: f64,
    /// Number of observations folded in, real or hypothetical: part of the value's identity.
    observations: u32,
    /// The hit probabilities, computed on first use: a turn reads them once per question it
    /// scores (through `region_mass`), and the value never changes.
    probs: OnceLock<[f64; 64]>,
    /// The region masses of those probabilities, likewise computed once.
    masses: OnceLock<Arc<kernels::RegionMasses>>,
    /// The last region `p_yes` was asked about, with its answer: scoring a question asks it
    /// twice in a row (the answer model of its preview, then its split quality).
    last_p_yes: LastPYes,
}

/// One remembered `(region, p_yes)` pair of a posterior. A copy of the posterior remembers the
/// same pair, which holds for it as well.
#[derive(Debug, Default)]
struct LastPYes(Mutex<Option<(u64, f64)>>);

impl Clone for LastPYes {
    fn clone(&self) -> Self {
        LastPYes(Mutex::new(self.remembered()))
    }
}

impl LastPYes {
    /// The remembered pair; none while another thread holds the lock.
    fn remembered(&self) -> Option<(u64, f64)> {
        self.0.try_lock().ok().and_then(|last| *last)
    }

    /// The remembered answer for `region`, if that is the region remembered.
    fn get(&self, region: u64) -> Option<f64> {
        self.remembered()
            .and_then(|(r, p)| (r == region).then_some(p))
    }

    /// Remembers `p` as the answer for `region`; a posterior read by two threads at once
    /// may remember nothing, which costs only the recomputation.
    fn set(&self, region: u64, p: f64) {
        if let Ok(mut last) = self.0.try_lock() {
            *last = Some((region, p));
        }
    }
}

impl PosteriorValue {
    fn new(belief: BeliefImpl, epsilon: f64) -> Self {
        Self {
            backend: belief.name(),
            fixed_samples: belief.fixed_sample_count(),
            belief: Arc::new(LazyLock::new(Box::new(move || belief))),
            weights: None,
            revealed: 0,
            epsilon,
            observations: 0,
            probs: OnceLock::new(),
            masses: OnceLock::new(),
            last_p_yes: LastPYes::default(),
        }
    }

    /// A copy to fold one more observation into, without the caches of this value's
    /// probabilities.
    fn successor(&self) -> PosteriorValue {
        PosteriorValue {
            belief: self.belief.clone(),
            backend: self.backend,
            fixed_samples: self.fixed_samples,
            weights: self.weights.clone(),
            revealed: self.revealed,
            epsilon: self.epsilon,
            observations: self.observations + 1,
            probs: OnceLock::new(),
            masses: OnceLock::new(),
            last_p_yes: LastPYes::default(),
        }
    }

    fn samples(&self) -> &SampleSet {
        self.belief.as_belief().samples()
    }

    /// This posterior's backend state with one more real observation: computed now, or on
    /// first use when the backend's sample count is fixed (see [`PosteriorValue`]).
    fn updated(&self, update: Update) -> Arc<LazyBelief> {
        let run = {
            let prior = self.belief.clone();
            move || {
                let mut belief = BeliefImpl::clone(&prior);
                update.apply(&mut belief);
                belief
            }
        };
        if self.fixed_samples.is_some() {
            Arc::new(LazyLock::new(Box::new(run)))
        } else {
            let belief = run();
            Arc::new(LazyLock::new(Box::new(move || belief)))
        }
    }

    fn weights(&self) -> &[f64] {
        match &self.weights {
            Some(weights) => weights,
            None => &self.samples().weights,
        }
    }

    fn hit_probabilities(&self) -> &[f64; 64] {
        self.probs.get_or_init(|| {
            kernels::weighted_hit_probabilities(
                &self.samples().unions,
                self.weights(),
                self.revealed,
            )
        })
    }

    /// The region masses of the unrevealed cells.
    fn region_masses(&self) -> &kernels::RegionMasses {
        self.masses.get_or_init(|| {
            Arc::new(kernels::RegionMasses::new(
                self.hit_probabilities(),
                !self.revealed,
            ))
        })
    }

    fn p_yes(&self, region: u64) -> f64 {
        if let Some(p) = self.last_p_yes.get(region) {
            return p;
        }
        let p = kernels::weighted_p_yes(&self.samples().unions, self.weights(), region);
        self.last_p_yes.set(region, p);
        p
    }

    /// Multiplies the weights by `factor(union)` and renormalises; all-zero mass stays zero.
    fn reweighted(&self, factor: impl Fn(u64) -> f64) -> Vec<f64> {
        let mut weights: Vec<f64> = self
            .samples()
            .unions
            .iter()
            .zip(self.weights())
            .map(|(&union, &weight)| weight * factor(union))
            .collect();
        let total: f64 = weights.iter().sum();
        if total > 0.0 {
            for weight in &mut weights {
                *weight /= total;
            }
        }
        weights
    }

    fn observe_shot(&self, cell: Cell, hit: bool, hypothetical: bool) -> PosteriorValue {
        let mut next = self.successor();
        next.revealed |= cell.bit();
        if hypothetical {
            let weights =
                self.reweighted(|union| f64::from(u8::from((union & cell.bit() != 0) == hit)));
            next.weights = Some(Arc::new(weights));
        } else {
            next.belief = self.updated(Update::Shot(ShotOutcome {
                cell,
                hit,
                color: None,
                sunk: None,
            }));
            next.weights = None;
        }
        next
    }

    /// Conditions on the colour of a hit ship (and on its sinking), as Grand et al.'s protocol
    /// reveals them. Previews never produce this observation, so it always runs the backend.
    fn observe_ship(&self, cell: Cell, color: Color, sunk: bool) -> PosteriorValue {
        let mut next = self.successor();
        next.revealed |= cell.bit();
        next.belief = self.updated(Update::Shot(ShotOutcome {
            cell,
            hit: true,
            color: Some(color),
            sunk: sunk.then_some(color),
        }));
        next.weights = None;
        next
    }

    fn observe_answer(&self, region: u64, yes: bool, hypothetical: bool) -> PosteriorValue {
        let mut next = self.successor();
        if hypothetical {
            // The two likelihoods, computed once rather than per sample: the factor of a
            // sample depends only on whether it agrees with the answer.
            let agree = self.belief.answer_likelihood(true, self.epsilon);
            let disagree = self.belief.answer_likelihood(false, self.epsilon);
            let weights = self.reweighted(|union| {
                if (union & region != 0) == yes {
                    agree
                } else {
                    disagree
                }
            });
            next.weights = Some(Arc::new(weights));
        } else {
            next.belief = self.updated(Update::Answer {
                region,
                yes,
                epsilon: self.epsilon,
            });
            next.weights = None;
        }
        next
    }
}

impl Opaque for PosteriorValue {
    fn type_name(&self) -> &str {
        "Posterior"
    }

    fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "backend": self.backend,
            "samples": self.fixed_samples.unwrap_or_else(|| self.samples().len()),
            "observations": self.observations,
            "hypothetical": self.weights.is_some(),
        })
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// Hit probabilities by cell: `grid[cell]`.
#[derive(Debug)]
pub struct GridValue(pub [f64; 64]);

impl Opaque for GridValue {
    fn type_name(&self) -> &str {
        "Grid"
    }

    fn to_json(&self) -> serde_json::Value {
        serde_json::Value::Array(
            self.0
                .iter()
                .map(|p| serde_json::json!((p * 1e6).round() / 1e6))
                .collect(),
        )
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The native methods of the battleship types.
pub fn natives() -> Natives {
    let mut natives = Natives::new();
    natives.register("Cell.index", |_, args| {
        Ok(int(arg::<CellValue>(args, 0, "Cell")?.0.index() as i64))
    });
    natives.register("Cell.row", |_, args| {
        Ok(int(arg::<CellValue>(args, 0, "Cell")?.0.row() as i64))
    });
    natives.register("Cell.col", |_, args| {
        Ok(int(arg::<CellValue>(args, 0, "Cell")?.0.col() as i64))
    });
    natives.register("Question.id", |_, args| {
        Ok(Value::str(&arg::<QuestionValue>(args, 0, "Question")?.0.id))
    });
    natives.register("Question.family", |_, args| {
        Ok(Value::str(
            arg::<QuestionValue>(args, 0, "Question")?.0.family.name(),
        ))
    });
    natives.register("Question.is_coarse", |_, args| {
        Ok(Value::Bool(
            arg::<QuestionValue>(args, 0, "Question")?.0.family.group() == Group::Coarse,
        ))
    });
    natives.register("Question.is_block", |_, args| {
        Ok(Value::Bool(
            arg::<QuestionValue>(args, 0, "Question")?.0.family == Family::Block2x2,
        ))
    });
    natives.register("Question.size", |_, args| {
        Ok(int(arg::<QuestionValue>(args, 0, "Question")?
            .0
            .region
            .count_ones()))
    });
    natives.register("Grid.index", |_, args| {
        let grid = arg::<GridValue>(args, 0, "Grid")?;
        let cell = arg::<CellValue>(args, 1, "Cell")?;
        float(grid.0[cell.0.index()])
    });
    // `|c| hit_prob[c]` is the commonest closure that `max_by` and `filter` walk: its batch form
    // downcasts the grid once for all the cells.
    natives.register_batch("Grid.index", |args, at, cells, out| {
        let grid = match at {
            1 => arg::<GridValue>(args, 0, "Grid").map_err(|_| 0usize)?,
            _ => return Err(0),
        };
        for (k, cell) in cells.iter().enumerate() {
            let cell = cell.as_opaque::<CellValue>().ok_or(k)?;
            out.push(Float::new(grid.0[cell.0.index()]).ok_or(k)?.get());
        }
        Ok(())
    });
    natives.register("Posterior.hit_probabilities", |_, args| {
        let posterior = arg::<PosteriorValue>(args, 0, "Posterior")?;
        Ok(Value::opaque(GridValue(*posterior.hit_probabilities())))
    });
    natives.register("Posterior.p_yes", |_, args| {
        let posterior = arg::<PosteriorValue>(args, 0, "Posterior")?;
        float(posterior.p_yes(arg::<QuestionValue>(args, 1, "Question")?.0.region))
    });
    natives.register("Posterior.ess", |_, args| {
        let posterior = arg::<PosteriorValue>(args, 0, "Posterior")?;
        float(kernels::ess(posterior.weights()))
    });
    natives.register("Posterior.region_mass", |_, args| {
        // The expected number of ship cells among the unrevealed cells of the region, per cell.
        let posterior = arg::<PosteriorValue>(args, 0, "Posterior")?;
        let question = arg::<QuestionValue>(args, 1, "Question")?;
        float(posterior.region_masses().of(&question.0))
    });
    natives.register("Posterior.observe_shot", |ctx: &mut dyn NativeCtx, args| {
        let posterior = arg::<PosteriorValue>(args, 0, "Posterior")?;
        let cell = arg::<CellValue>(args, 1, "Cell")?.0;
        let hit = bool_arg(args, 2)?;
        Ok(Value::opaque(posterior.observe_shot(
            cell,
            hit,
            ctx.in_preview(),
        )))
    });
    natives.register("Posterior.observe_ship", |_, args| {
        let posterior = arg::<PosteriorValue>(args, 0, "Posterior")?;
        let cell = arg::<CellValue>(args, 1, "Cell")?.0;
        let color = match args.get(2) {
            Some(Value::Str(name)) => Color::ALL
                .into_iter()
                .find(|color| color.name() == name.as_str())
                .ok_or_else(|| NativeError::msg(format!("`{name}` is not a ship colour")))?,
            _ => return Err(NativeError::msg("expected the ship's colour as argument 3")),
        };
        let sunk = bool_arg(args, 3)?;
        Ok(Value::opaque(posterior.observe_ship(cell, color, sunk)))
    });
    natives.register(
        "Posterior.observe_answer",
        |ctx: &mut dyn NativeCtx, args| {
            let posterior = arg::<PosteriorValue>(args, 0, "Posterior")?;
            let region = arg::<QuestionValue>(args, 1, "Question")?.0.region;
            let yes = bool_arg(args, 2)?;
            Ok(Value::opaque(posterior.observe_answer(
                region,
                yes,
                ctx.in_preview(),
            )))
        },
    );
    natives
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_cells_and_questions_keep_their_json_text_and_order() {
        // Equality and order of opaque values compare this text, so it must be the JSON form.
        let questions = match question_values() {
            Value::List(items) => items.as_ref().clone(),
            other => panic!("the catalogue is a list, not {other}"),
        };
        for value in cell_values().iter().chain(&questions) {
            let Value::Opaque(o) = value else {
                panic!("{value} is not opaque")
            };
            assert_eq!(o.json_text(), o.to_json().to_string());
        }
        assert_eq!(cell_values().len(), 64);
        assert_eq!(questions.len(), catalogue().len());
        // A question handed back by the game is the catalogue's own value.
        let asked = question_value(&catalogue()[5]);
        assert!(
            matches!((&asked, &questions[5]), (Value::Opaque(a), Value::Opaque(b)) if Arc::ptr_eq(a, b))
        );
        // Values built apart compare as their text does.
        let fresh = Value::opaque(QuestionValue::new(Arc::new(catalogue()[5].clone())));
        assert_eq!(fresh, questions[5]);
        assert_eq!(
            questions[3].cmp(&questions[4]),
            questions[3].to_string().cmp(&questions[4].to_string())
        );
    }

    #[test]
    fn a_posterior_successor_recomputes_its_probabilities() {
        let belief = McmcCompat::new(64964, 50).expect("a belief");
        let prior = PosteriorValue::new(BeliefImpl::McmcCompat(belief), 0.1);
        let before = *prior.hit_probabilities();
        let cell = Cell::new(27).expect("a cell");
        let after = prior.observe_shot(cell, false, true);
        assert_eq!(after.hit_probabilities()[27], 0.0);
        assert_eq!(*prior.hit_probabilities(), before);
        assert_eq!(
            after.region_masses().cell[27],
            0.0,
            "the masses are the successor's"
        );
        // The remembered answer of `p_yes` is the posterior's own and the region's: asked
        // again, of another region, of the successor or of a copy, it is what the samples say.
        let direct = |posterior: &PosteriorValue, region: u64| {
            kernels::weighted_p_yes(&posterior.samples().unions, posterior.weights(), region)
        };
        let row = (24..32)
            .map(|c| Cell::new(c).expect("a cell").bit())
            .sum::<u64>();
        for (posterior, region) in [
            (&prior, row),
            (&prior, row),
            (&prior, cell.bit()),
            (&after, cell.bit()),
            (&after, row),
        ] {
            assert_eq!(posterior.p_yes(region), direct(posterior, region));
        }
        assert_eq!(
            after.p_yes(cell.bit()),
            0.0,
            "the successor saw a miss there"
        );
        assert_eq!(prior.clone().p_yes(row), direct(&prior, row));
    }

    /// A context for natives that call no closure.
    struct NoCalls;

    impl NativeCtx for NoCalls {
        fn call(&mut self, _: &Value, _: &[Value]) -> Result<Value, NativeError> {
            Err(NativeError::msg("no closure here"))
        }
    }

    #[test]
    fn the_batch_form_of_grid_index_agrees_with_the_native_and_fails_where_it_would() {
        let natives = natives();
        let native = natives.get("Grid.index").expect("the native");
        let batch = natives.batch("Grid.index").expect("its batch form");
        let mut grid = [0.0; 64];
        for (i, p) in grid.iter_mut().enumerate() {
            *p = i as f64 / 64.0;
        }
        let grid = Value::opaque(GridValue(grid));
        let cells = cell_values();
        let each = cells
            .iter()
            .map(|c| native(&mut NoCalls, &[grid.clone(), c.clone()]).expect("a probability"))
            .map(|p| p.as_f64().expect("a number"))
            .collect::<Vec<_>>();
        let mut out = Vec::new();
        assert_eq!(
            batch(&[grid.clone(), Value::Int(0)], 1, cells, &mut out),
            Ok(())
        );
        assert_eq!(out, each);
        // The ordinary form fails on a value that is not a cell, and the batch at that element;
        // a batch over grids rather than cells is left to the ordinary form.
        let mixed = [cells[3].clone(), Value::Int(7)];
        assert!(native(&mut NoCalls, &[grid.clone(), mixed[1].clone()]).is_err());
        assert_eq!(
            batch(&[grid.clone(), Value::Int(0)], 1, &mixed, &mut Vec::new()),
            Err(1)
        );
        assert_eq!(
            batch(&[grid, cells[0].clone()], 0, cells, &mut Vec::new()),
            Err(0)
        );
    }
}
