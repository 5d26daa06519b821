//! L3 `mra`: the reflective agent (§7): bucketed question budgets, an exploit threshold,
//! prediction/calibration error EMAs, and preset policy revisions gated by counterfactual
//! previews.

use crate::belief::Belief;
use crate::cell::{Cell, cells_of};
use crate::game::Game;
use crate::kernels::{
    Scorer, ScoringContext, best_cell, board_value, frontier, hit_clusters, shot_value,
};
use crate::questions::{Family, Group, catalogue};
use crate::reference::wma::Bucket;
use crate::reference::{Decision, Policy, TurnOutcome};

/// Which revision preset library to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PresetVersion {
    /// The paper-era presets of commit `fb9d0f9` (the paper's L3 row).
    PaperEra,
    /// The presets of HEAD `9946d67` (after `21cbff2`), including the exploit-failure relief
    /// term in the previews.
    Head,
}

/// The five non-repair revision presets, in their tie-breaking order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RevisionKind {
    /// Fewer coarse questions, one more local one.
    CoarseRoiCollapse,
    /// One more late question, earlier salvage.
    LateDiffuseReprobe,
    /// Earlier salvage and a lower exploit threshold.
    ClusterCloseoutBias,
    /// Reopen the local budget.
    ReopenLocalProbe,
    /// More local and late questions after confident misses.
    ConfidenceCollapseReprobe,
}

impl RevisionKind {
    /// All five in tie-breaking order.
    pub const ALL: [RevisionKind; 5] = [
        RevisionKind::CoarseRoiCollapse,
        RevisionKind::LateDiffuseReprobe,
        RevisionKind::ClusterCloseoutBias,
        RevisionKind::ReopenLocalProbe,
        RevisionKind::ConfidenceCollapseReprobe,
    ];

    /// The reference's preset name, e.g. `coarse_roi_collapse`.
    pub const fn name(self) -> &'static str {
        match self {
            RevisionKind::CoarseRoiCollapse => "coarse_roi_collapse",
            RevisionKind::LateDiffuseReprobe => "late_diffuse_reprobe",
            RevisionKind::ClusterCloseoutBias => "cluster_closeout_bias",
            RevisionKind::ReopenLocalProbe => "reopen_local_probe",
            RevisionKind::ConfidenceCollapseReprobe => "confidence_collapse_reprobe",
        }
    }
}

/// Settings of the reflective agent (the reference's MEL defaults).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MraConfig {
    /// Preset library.
    pub presets: PresetVersion,
    /// Whether revisions may apply at all.
    pub revision_enabled: bool,
    /// Confidence below this needs revision (0.72).
    pub confidence_threshold: f64,
    /// Observations between revisions (3).
    pub cooldown: u32,
    /// Minimum preview delta (0.01).
    pub min_revision_delta: f64,
    /// Let the coarse preset fire with a delta down to −min_revision_delta (`mra`: true).
    pub allow_loose_coarse: bool,
}

impl Default for MraConfig {
    fn default() -> Self {
        Self {
            presets: PresetVersion::PaperEra,
            revision_enabled: true,
            confidence_threshold: 0.72,
            cooldown: 3,
            min_revision_delta: 0.01,
            allow_loose_coarse: true,
        }
    }
}

/// The revisable policy parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Params {
    coarse: u32,
    local: u32,
    late: u32,
    salvage: u32,
    exploit: f64,
}

impl Params {
    fn budget(&self, b: Bucket) -> u32 {
        match b {
            Bucket::Coarse => self.coarse,
            Bucket::Local => self.local,
            Bucket::Late => self.late,
        }
    }

    fn total(&self) -> u32 {
        self.coarse + self.local + self.late
    }

    fn patched(self, kind: RevisionKind, version: PresetVersion) -> Self {
        let mut p = self;
        let head = version == PresetVersion::Head;
        let salvage = |s: u32, d: u32| s.saturating_sub(d).max(12);
        let exploit = |e: f64, d: f64, floor: f64| (e - d).max(floor);
        match kind {
            RevisionKind::CoarseRoiCollapse => {
                p.coarse = p.coarse.saturating_sub(1);
                p.local += 1;
            }
            RevisionKind::LateDiffuseReprobe => {
                p.local = p.local.saturating_sub(1);
                p.late += 1;
                p.salvage = salvage(p.salvage, 1);
            }
            RevisionKind::ClusterCloseoutBias => {
                p.salvage = salvage(p.salvage, 1);
                p.exploit = exploit(p.exploit, 0.05, 0.40);
            }
            RevisionKind::ReopenLocalProbe if head => {
                p.local += 2;
                p.salvage = salvage(p.salvage, 1);
                p.exploit = exploit(p.exploit, 0.1, 0.45);
            }
            RevisionKind::ReopenLocalProbe => {
                p.local += 1;
                p.exploit = exploit(p.exploit, 0.05, 0.45);
            }
            RevisionKind::ConfidenceCollapseReprobe if head => {
                p.local += 2;
                p.late += 1;
                p.salvage = salvage(p.salvage, 2);
                p.exploit = exploit(p.exploit, 0.1, 0.40);
            }
            RevisionKind::ConfidenceCollapseReprobe => {
                p.local += 1;
                p.late += 1;
                p.salvage = salvage(p.salvage, 1);
                p.exploit = exploit(p.exploit, 0.05, 0.40);
            }
        }
        p
    }
}

/// The prediction recorded with an action.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Prediction {
    question: bool,
    hit_prob: f64,
    answer_prob: f64,
    gain: f64,
    baseline: f64,
}

/// The reflective agent `mra` with its per-game MEL state. Create one per game.
#[derive(Clone, Debug)]
pub struct Mra {
    config: MraConfig,
    params: Params,
    used: [u32; 3],
    frontier_count: u32,
    largest_cluster: u32,
    prediction: Prediction,
    deltas: [f64; 5],
    prediction_ema: f64,
    calibration_ema: f64,
    observed: u32,
    miss_streak: u32,
    question_failure_streak: u32,
    lock_streak: u32,
    low_confidence_streak: u32,
    cooldown: u32,
    revisions: Vec<RevisionKind>,
}

impl Default for Mra {
    fn default() -> Self {
        Self::new(MraConfig::default())
    }
}

fn bucket_index(b: Bucket) -> usize {
    match b {
        Bucket::Coarse => 0,
        Bucket::Local => 1,
        Bucket::Late => 2,
    }
}

/// The first ten templates of a mode's family set, in catalogue order (the reference never
/// records asked questions, so this list never changes).
fn candidates(mode: Bucket) -> impl Iterator<Item = usize> {
    let in_set = move |f: Family| match mode {
        Bucket::Coarse => f.group() == Group::Coarse,
        Bucket::Local => f.group() == Group::Local,
        Bucket::Late => f.group() == Group::Coarse || f == Family::Block2x2,
    };
    catalogue()
        .iter()
        .enumerate()
        .filter(move |(_, q)| in_set(q.family))
        .map(|(i, _)| i)
        .take(10)
}

/// Best shot of the turn: cell, hit probability and value.
#[derive(Clone, Copy, Debug)]
struct Shot {
    cell: Cell,
    p: f64,
    value: f64,
}

/// Best question of a mode: catalogue index, adjusted score, P(yes).
type BestQuestion = Option<(usize, f64, f64)>;

impl Mra {
    /// A fresh agent (per game).
    pub fn new(config: MraConfig) -> Self {
        Self {
            config,
            params: Params {
                coarse: 6,
                local: 2,
                late: 4,
                salvage: 16,
                exploit: 0.55,
            },
            used: [0; 3],
            frontier_count: 0,
            largest_cluster: 0,
            prediction: Prediction::default(),
            deltas: [0.0; 5],
            prediction_ema: 0.0,
            calibration_ema: 0.0,
            observed: 0,
            miss_streak: 0,
            question_failure_streak: 0,
            lock_streak: 0,
            low_confidence_streak: 0,
            cooldown: 0,
            revisions: Vec::new(),
        }
    }

    /// The revisions applied so far, in order.
    pub fn revisions(&self) -> &[RevisionKind] {
        &self.revisions
    }

    /// max(0, 1 − (prediction EMA + calibration EMA)/2).
    pub fn model_confidence(&self) -> f64 {
        (1.0 - (self.prediction_ema + self.calibration_ema) / 2.0).max(0.0)
    }

    /// The question bucket for a policy: coarse without a hit cluster, late in the salvage
    /// phase (turn ≥ salvage start, a hit, empty frontier), else local.
    fn mode(&self, p: &Params, turn: u32, hits: u32) -> Bucket {
        if self.largest_cluster == 0 {
            Bucket::Coarse
        } else if turn >= p.salvage && hits > 0 && self.frontier_count == 0 {
            Bucket::Late
        } else {
            Bucket::Local
        }
    }

    fn open(&self, p: &Params, b: Bucket) -> bool {
        self.used[bucket_index(b)] < p.budget(b)
    }

    /// Counterfactual preview of a policy (§7.5), in boardValue units.
    fn preview(
        &self,
        p: &Params,
        turn: u32,
        hits: u32,
        shot: Shot,
        best: &mut dyn FnMut(Bucket) -> BestQuestion,
    ) -> f64 {
        let mode = self.mode(p, turn, hits);
        let open = self.open(p, mode);
        let bqv = if open {
            best(mode).map_or(0.0, |(_, v, _)| v)
        } else {
            0.0
        };
        let preferred = open && bqv > shot.value && shot.p < p.exploit;
        let immediate = if preferred { bqv } else { shot.value };
        let mut reopened = 0.0f64;
        for b in [Bucket::Local, Bucket::Late] {
            if !self.open(&self.params, b) && self.open(p, b) {
                reopened = reopened.max(best(b).map_or(0.0, |(_, v, _)| v));
            }
        }
        let reopen_bonus = 0.5 * (reopened - shot.value).max(0.0);
        let relief = if self.config.presets == PresetVersion::Head
            && (self.miss_streak > 0 || self.lock_streak > 0)
        {
            (self.params.exploit - p.exploit).max(0.0)
                * (f64::from(self.miss_streak) + (0.5 * f64::from(self.lock_streak)).max(1.0))
        } else {
            0.0
        };
        immediate + reopen_bonus + relief
    }

    fn eligible(&self, kind: RevisionKind, game: &Game) -> bool {
        let p = &self.params;
        let turn = game.turn();
        match kind {
            RevisionKind::CoarseRoiCollapse => {
                turn <= 10 && game.hit_count() == 0 && self.used[0] >= 2 && p.coarse > 2
            }
            RevisionKind::LateDiffuseReprobe => {
                turn >= p.salvage
                    && self.frontier_count == 0
                    && self.largest_cluster > 0
                    && p.late < 6
            }
            RevisionKind::ClusterCloseoutBias => self.largest_cluster >= 2 && p.exploit > 0.4,
            RevisionKind::ReopenLocalProbe => {
                let mode = self.mode(p, turn, game.hit_count());
                mode == Bucket::Local
                    && !self.open(p, mode)
                    && (self.lock_streak >= 2 || self.question_failure_streak >= 2)
                    && p.total() <= 14
            }
            RevisionKind::ConfidenceCollapseReprobe => {
                self.miss_streak >= 2 && self.lock_streak >= 2 && p.total() <= 13
            }
        }
    }

    fn maybe_revise(&mut self, game: &Game) {
        let min = self.config.min_revision_delta;
        let mut best: Option<(RevisionKind, f64)> = None;
        for (k, kind) in RevisionKind::ALL.into_iter().enumerate() {
            let delta = self.deltas[k];
            let candidate = self.eligible(kind, game)
                && if kind == RevisionKind::CoarseRoiCollapse && self.config.allow_loose_coarse {
                    delta >= -min
                } else if kind == RevisionKind::CoarseRoiCollapse {
                    delta >= 0.0
                } else {
                    delta > min
                };
            if candidate && best.is_none_or(|(_, d)| delta > d) {
                best = Some((kind, delta));
            }
        }
        let needs = self.model_confidence() < self.config.confidence_threshold;
        if let Some((kind, delta)) = best {
            let positive = delta > min || kind == RevisionKind::CoarseRoiCollapse;
            if self.config.revision_enabled
                && needs
                && self.cooldown == 0
                && self.low_confidence_streak >= 2
                && positive
            {
                self.params = self.params.patched(kind, self.config.presets);
                self.cooldown = self.config.cooldown;
                self.revisions.push(kind);
            }
        }
    }
}

impl Policy for Mra {
    fn decide(&mut self, game: &Game, belief: &dyn Belief) -> Option<Decision> {
        let (hits, misses) = (game.hits(), game.misses());
        let revealed = hits | misses;
        let (h, total, turn) = (game.hit_count(), game.total_ship_cells(), game.turn());
        let probs = belief.hit_probabilities(revealed);
        let mut shot: Option<Shot> = None;
        for cell in cells_of(!revealed) {
            let p = probs[cell.index()];
            let value = shot_value(p, h, total);
            if shot.is_none_or(|s| value > s.value) {
                shot = Some(Shot { cell, p, value });
            }
        }
        let shot = shot?;
        self.frontier_count = frontier(hits, misses).count_ones();
        self.largest_cluster = hit_clusters(hits)
            .iter()
            .map(|c| c.count_ones())
            .max()
            .unwrap_or(0);

        let ctx = ScoringContext::new(belief.samples(), hits, misses, total, game.model_epsilon());
        let mut cache: [Option<BestQuestion>; 3] = [None; 3];
        let mut best = |mode: Bucket| -> BestQuestion {
            *cache[bucket_index(mode)].get_or_insert_with(|| {
                let scorer = if mode == Bucket::Coarse {
                    Scorer::Coarse
                } else {
                    Scorer::Salvage
                };
                let mut best: BestQuestion = None;
                for i in candidates(mode) {
                    let s = ctx.score(&catalogue()[i], scorer);
                    if s.adjusted > best.map_or(0.0, |(_, v, _)| v) {
                        best = Some((i, s.adjusted, s.preview.p_yes));
                    }
                }
                best
            })
        };

        let current = self.params;
        let base = self.preview(&current, turn, h, shot, &mut best);
        for (k, kind) in RevisionKind::ALL.into_iter().enumerate() {
            let p = current.patched(kind, self.config.presets);
            self.deltas[k] = self.preview(&p, turn, h, shot, &mut best) - base;
        }

        let mode = self.mode(&current, turn, h);
        let open = self.open(&current, mode);
        let question = if game.questions_remaining() > 0 && open {
            best(mode)
        } else {
            None
        };
        let baseline = board_value(h, total);
        if let Some((i, value, p_yes)) = question
            && value > shot.value
            && shot.p < current.exploit
        {
            self.used[bucket_index(mode)] += 1;
            self.prediction = Prediction {
                question: true,
                hit_prob: shot.p,
                answer_prob: p_yes,
                gain: (value - baseline).max(0.0),
                baseline,
            };
            return Some(Decision::Ask(catalogue()[i].clone()));
        }
        self.prediction = Prediction {
            question: false,
            hit_prob: shot.p,
            answer_prob: 0.0,
            gain: (shot.value - baseline).max(0.0),
            baseline,
        };
        Some(Decision::Shoot(shot.cell))
    }

    fn after_turn(&mut self, game: &Game, belief: &dyn Belief, outcome: TurnOutcome) {
        let pred = self.prediction;
        let (signal, realized, hit) = match outcome {
            TurnOutcome::Shot(o) => {
                let now = board_value(game.hit_count(), game.total_ship_cells());
                (
                    f64::from(u8::from(o.hit)),
                    (now - pred.baseline).max(0.0),
                    o.hit,
                )
            }
            TurnOutcome::Answer(a) => {
                let revealed = game.revealed();
                let probs = belief.hit_probabilities(revealed);
                let best = best_cell(&probs, revealed).map_or(0.0, |(_, p)| p);
                (
                    f64::from(u8::from(a)),
                    (best - pred.hit_prob).max(0.0),
                    false,
                )
            }
        };
        let expected = if pred.question {
            pred.answer_prob
        } else {
            pred.hit_prob
        };
        let prediction_error = (signal - expected).abs();
        let calibration_error = (realized - pred.gain).abs();
        if self.observed == 0 {
            self.prediction_ema = prediction_error;
            self.calibration_ema = calibration_error;
        } else {
            self.prediction_ema = (3.0 * self.prediction_ema + prediction_error) / 4.0;
            self.calibration_ema = (3.0 * self.calibration_ema + calibration_error) / 4.0;
        }
        self.observed += 1;
        let confident_shot = !pred.question && pred.hit_prob >= self.params.exploit;
        self.miss_streak = if confident_shot && !hit {
            self.miss_streak + 1
        } else {
            0
        };
        self.question_failure_streak = if pred.question && pred.gain > realized {
            self.question_failure_streak + 1
        } else {
            0
        };
        self.lock_streak = if confident_shot {
            self.lock_streak + 1
        } else {
            0
        };
        self.cooldown = self.cooldown.saturating_sub(1);
        if !game.is_won() {
            let needs = self.model_confidence() < self.config.confidence_threshold;
            self.low_confidence_streak = if needs {
                self.low_confidence_streak + 1
            } else {
                0
            };
        }
        self.maybe_revise(game);
    }
}
