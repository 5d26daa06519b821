//! Ablation summaries: per-stack rows with intervals, layer marginals and the heavy-lifting verdict.
//!
//! The input is one [`GameOutcome`] per finished game, tagged with the layer stack it ran under.
//! The rules follow the seed paper's pre-registered protocol: the primary metric is the win rate
//! (with a Wilson 95% interval), the secondary is mean F1 (with a bootstrap interval), and a layer
//! is heavy-lifting iff it has the single largest positive marginal on the primary metric.

use serde::{Deserialize, Serialize};

use crate::stats::{Interval, bootstrap_mean, wilson};

/// The confidence level of every interval in an ablation report.
pub const LEVEL: f64 = 0.95;
/// Bootstrap resamples for the F1 interval.
pub const RESAMPLES: usize = 2000;
/// Seed of the bootstrap generator, fixed so that reports are reproducible.
pub const BOOTSTRAP_SEED: u64 = 0x5eed_ab1a;

/// What one finished game contributes to a report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GameOutcome {
    /// The instance, for example a board id such as `B07`.
    pub instance: String,
    /// The replicate index on that instance.
    pub seed_index: u32,
    /// Whether the game was won.
    pub won: bool,
    /// The game's F1 (secondary metric).
    pub f1: f64,
    /// Shots taken.
    pub shots: u32,
    /// Questions asked.
    pub questions: u32,
    /// Revisions applied.
    pub revisions: u32,
    /// Turns in which an LLM was invoked.
    pub llm_turns: u32,
    /// Turns played (actions of any kind).
    pub turns: u32,
}

/// One row of the report: a layer stack and its aggregate results.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StackRow {
    /// The stack's name, e.g. `L1-L2` or `without reflection`.
    pub stack: String,
    /// The enabled layers, bottom first.
    pub layers: Vec<String>,
    /// Games played.
    pub games: usize,
    /// Games won.
    pub wins: usize,
    /// Win rate (the primary metric).
    pub win_rate: f64,
    /// Wilson interval of the win rate.
    pub win_rate_ci: Interval,
    /// Mean F1 (the secondary metric).
    pub f1_mean: f64,
    /// Bootstrap interval of the mean F1.
    pub f1_ci: Interval,
    /// Mean shots per game.
    pub shots_per_game: f64,
    /// Mean questions per game.
    pub questions_per_game: f64,
    /// Mean revisions per game.
    pub revisions_per_game: f64,
    /// LLM turns over all turns.
    pub llm_rate: f64,
    /// The marginal over the row below in the cumulative stack (`None` for the first row and
    /// for removals).
    pub marginal: Option<Marginal>,
}

/// A layer's marginal effect: the difference to the stack without it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Marginal {
    /// The layer whose effect this is.
    pub layer: String,
    /// Change of the win rate.
    pub win_rate: f64,
    /// Change of the mean F1.
    pub f1: f64,
}

/// Builds a row from the outcomes of one stack.
pub fn row(stack: &str, layers: &[String], outcomes: &[GameOutcome]) -> StackRow {
    let games = outcomes.len();
    let wins = outcomes.iter().filter(|game| game.won).count();
    let f1: Vec<f64> = outcomes.iter().map(|game| game.f1).collect();
    let per_game = |total: u32| {
        if games == 0 {
            0.0
        } else {
            f64::from(total) / games as f64
        }
    };
    let sum = |pick: fn(&GameOutcome) -> u32| outcomes.iter().map(pick).sum::<u32>();
    let turns = sum(|game| game.turns);
    let win_rate_ci = wilson(wins as u64, games as u64, LEVEL);
    let f1_ci = bootstrap_mean(&f1, RESAMPLES, LEVEL, BOOTSTRAP_SEED);
    StackRow {
        stack: stack.to_string(),
        layers: layers.to_vec(),
        games,
        wins,
        win_rate: win_rate_ci.estimate,
        win_rate_ci,
        f1_mean: f1_ci.estimate,
        f1_ci,
        shots_per_game: per_game(sum(|game| game.shots)),
        questions_per_game: per_game(sum(|game| game.questions)),
        revisions_per_game: per_game(sum(|game| game.revisions)),
        llm_rate: if turns == 0 {
            0.0
        } else {
            f64::from(sum(|game| game.llm_turns)) / f64::from(turns)
        },
        marginal: None,
    }
}

/// Fills in each cumulative row's marginal over the row before it. The layer credited is the
/// one the row adds, i.e. the last of its layers.
pub fn add_marginals(cumulative: &mut [StackRow]) {
    for index in 1..cumulative.len() {
        let (below, above) = cumulative.split_at_mut(index);
        let (below, row) = (&below[index - 1], &mut above[0]);
        row.marginal = Some(Marginal {
            layer: row.layers.last().cloned().unwrap_or_default(),
            win_rate: row.win_rate - below.win_rate,
            f1: row.f1_mean - below.f1_mean,
        });
    }
}

/// The heavy-lifting verdict under the pre-registered rule.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Verdict {
    /// One layer has the single largest positive marginal on the win rate.
    HeavyLifting {
        /// The layer.
        layer: String,
        /// Its marginal on the win rate.
        win_rate: f64,
    },
    /// No layer improved the win rate.
    NoPositiveMarginal,
    /// Two or more layers tie for the largest positive marginal, so no single layer qualifies.
    Tie {
        /// The tied layers.
        layers: Vec<String>,
        /// Their common marginal.
        win_rate: f64,
    },
}

/// Applies the rule to the marginals of the cumulative rows.
pub fn verdict(cumulative: &[StackRow]) -> Verdict {
    let marginals: Vec<&Marginal> = cumulative
        .iter()
        .filter_map(|row| row.marginal.as_ref())
        .collect();
    let best = marginals
        .iter()
        .map(|m| m.win_rate)
        .fold(f64::NEG_INFINITY, f64::max);
    if best <= 0.0 {
        return Verdict::NoPositiveMarginal;
    }
    // Win rates are ratios of small integers over the same number of games, so marginals that
    // are equal in exact arithmetic can differ in the last bit; compare with a tolerance far
    // below one game's weight.
    let tied: Vec<String> = marginals
        .iter()
        .filter(|m| (m.win_rate - best).abs() < 1e-9)
        .map(|m| m.layer.clone())
        .collect();
    match tied.as_slice() {
        [layer] => Verdict::HeavyLifting {
            layer: layer.clone(),
            win_rate: best,
        },
        _ => Verdict::Tie {
            layers: tied,
            win_rate: best,
        },
    }
}

/// A pair of layers that the primary and the secondary metric rank in opposite orders.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RankDisagreement {
    /// The layer the win rate ranks higher.
    pub by_win_rate: String,
    /// The layer the F1 ranks higher.
    pub by_f1: String,
}

/// Every pair of layers whose marginals are ordered differently by win rate and by F1.
pub fn rank_disagreements(cumulative: &[StackRow]) -> Vec<RankDisagreement> {
    let marginals: Vec<&Marginal> = cumulative
        .iter()
        .filter_map(|row| row.marginal.as_ref())
        .collect();
    let mut found = Vec::new();
    for (i, a) in marginals.iter().enumerate() {
        for b in &marginals[i + 1..] {
            let by_win_rate = a.win_rate.total_cmp(&b.win_rate);
            let by_f1 = a.f1.total_cmp(&b.f1);
            if by_win_rate.is_ne() && by_f1.is_ne() && by_win_rate != by_f1 {
                let (win_first, f1_first) = if by_win_rate.is_gt() { (a, b) } else { (b, a) };
                found.push(RankDisagreement {
                    by_win_rate: win_first.layer.clone(),
                    by_f1: f1_first.layer.clone(),
                });
            }
        }
    }
    found
}

/// One instance's signed effect: how a treatment's games on it differ from a baseline's.
///
/// This is one bar of the seed paper's Figure 3: the mean F1 a layer adds on a board over its
/// seeds (treatment: the stack with the layer; baseline: the stack below), or what changed on a
/// board between two runs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct InstanceEffect {
    /// The instance.
    pub instance: String,
    /// Baseline games on it.
    pub baseline_games: usize,
    /// Treatment games on it.
    pub treatment_games: usize,
    /// Baseline mean F1.
    pub baseline_f1: f64,
    /// Treatment mean F1.
    pub treatment_f1: f64,
    /// Treatment minus baseline mean F1.
    pub delta_f1: f64,
    /// Treatment wins minus baseline wins.
    pub delta_wins: i64,
}

/// The per-instance effects of a treatment over a baseline, in the order in which instances
/// first appear in the baseline, then in the treatment. An instance that only one side played
/// is left out: its difference is not defined.
pub fn instance_effects(
    baseline: &[GameOutcome],
    treatment: &[GameOutcome],
) -> Vec<InstanceEffect> {
    let mut order: Vec<&str> = Vec::new();
    for game in baseline.iter().chain(treatment) {
        if !order.contains(&game.instance.as_str()) {
            order.push(&game.instance);
        }
    }
    let summary = |games: &[GameOutcome], instance: &str| {
        let on: Vec<&GameOutcome> = games.iter().filter(|g| g.instance == instance).collect();
        let wins = on.iter().filter(|g| g.won).count() as i64;
        let f1 = crate::stats::mean(&on.iter().map(|g| g.f1).collect::<Vec<_>>());
        (on.len(), wins, f1)
    };
    order
        .into_iter()
        .filter_map(|instance| {
            let (baseline_games, baseline_wins, baseline_f1) = summary(baseline, instance);
            let (treatment_games, treatment_wins, treatment_f1) = summary(treatment, instance);
            (baseline_games > 0 && treatment_games > 0).then(|| InstanceEffect {
                instance: instance.to_string(),
                baseline_games,
                treatment_games,
                baseline_f1,
                treatment_f1,
                delta_f1: treatment_f1 - baseline_f1,
                delta_wins: treatment_wins - baseline_wins,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcomes(wins: usize, games: usize, f1: f64) -> Vec<GameOutcome> {
        (0..games)
            .map(|index| GameOutcome {
                instance: format!("B{:02}", index % 18 + 1),
                seed_index: (index / 18) as u32,
                won: index < wins,
                f1,
                shots: 30,
                questions: 2,
                revisions: 1,
                llm_turns: u32::from(index == 0),
                turns: 32,
            })
            .collect()
    }

    fn layers(names: &[&str]) -> Vec<String> {
        names.iter().map(|name| name.to_string()).collect()
    }

    #[test]
    fn rows_count_wins_and_rates() {
        let row = row("L1", &layers(&["belief"]), &outcomes(27, 54, 0.5));
        assert_eq!((row.games, row.wins), (54, 27));
        assert!((row.win_rate - 0.5).abs() < 1e-12);
        assert!((row.questions_per_game - 2.0).abs() < 1e-12);
        assert!((row.llm_rate - 1.0 / (54.0 * 32.0)).abs() < 1e-12);
        assert!((row.f1_mean - 0.5).abs() < 1e-12);
    }

    #[test]
    fn the_largest_single_positive_marginal_is_heavy_lifting() {
        let mut rows = vec![
            row("L1", &layers(&["belief"]), &outcomes(27, 54, 0.52)),
            row(
                "L1-L2",
                &layers(&["belief", "planning"]),
                &outcomes(40, 54, 0.54),
            ),
            row(
                "L1-L3",
                &layers(&["belief", "planning", "reflection"]),
                &outcomes(31, 54, 0.58),
            ),
        ];
        add_marginals(&mut rows);
        assert_eq!(rows[0].marginal, None);
        assert_eq!(
            rows[1].marginal.as_ref().map(|m| m.layer.as_str()),
            Some("planning")
        );
        match verdict(&rows) {
            Verdict::HeavyLifting { layer, .. } => assert_eq!(layer, "planning"),
            other => panic!("unexpected verdict {other:?}"),
        }
        // Reflection lowers the win rate but raises F1: the metrics disagree on its rank.
        assert_eq!(
            rank_disagreements(&rows),
            vec![RankDisagreement {
                by_win_rate: "planning".into(),
                by_f1: "reflection".into()
            }]
        );
    }

    #[test]
    fn ties_and_no_improvement_are_not_heavy_lifting() {
        let mut rows = vec![
            row("L1", &layers(&["a"]), &outcomes(10, 20, 0.5)),
            row("L1-L2", &layers(&["a", "b"]), &outcomes(12, 20, 0.5)),
            row("L1-L3", &layers(&["a", "b", "c"]), &outcomes(14, 20, 0.5)),
        ];
        add_marginals(&mut rows);
        assert!(matches!(verdict(&rows), Verdict::Tie { ref layers, .. } if layers.len() == 2));
        let mut flat = vec![
            row("L1", &layers(&["a"]), &outcomes(10, 20, 0.5)),
            row("L1-L2", &layers(&["a", "b"]), &outcomes(9, 20, 0.5)),
        ];
        add_marginals(&mut flat);
        assert_eq!(verdict(&flat), Verdict::NoPositiveMarginal);
    }
    #[test]
    fn instance_effects_are_mean_differences_per_instance() {
        let game = |instance: &str, seed: u32, won: bool, f1: f64| GameOutcome {
            instance: instance.into(),
            seed_index: seed,
            won,
            f1,
            shots: 30,
            questions: 0,
            revisions: 0,
            llm_turns: 0,
            turns: 30,
        };
        let baseline = vec![
            game("B02", 0, false, 0.4),
            game("B02", 1, true, 0.6),
            game("B01", 0, true, 0.7),
            game("B09", 0, true, 0.7),
        ];
        let treatment = vec![
            game("B01", 0, false, 0.5),
            game("B02", 0, true, 0.8),
            game("B02", 1, true, 0.8),
        ];
        let effects = instance_effects(&baseline, &treatment);
        let names: Vec<&str> = effects.iter().map(|e| e.instance.as_str()).collect();
        assert_eq!(names, vec!["B02", "B01"], "B09 has no treatment games");
        assert!((effects[0].delta_f1 - 0.3).abs() < 1e-12);
        assert_eq!(effects[0].delta_wins, 1);
        assert_eq!(
            (effects[0].baseline_games, effects[0].treatment_games),
            (2, 2)
        );
        assert!((effects[1].delta_f1 + 0.2).abs() < 1e-12);
        assert_eq!(effects[1].delta_wins, -1);
    }
}
