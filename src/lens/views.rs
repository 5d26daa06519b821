//! The lens views as data, and their text form.
//!
//! Each view is a serialisable struct built from records and traces already in memory, so the
//! same value prints as text or as JSON and the building is tested without touching files.

use std::fmt::Write as _;

use harness_stdlib::ablation::{self, GameOutcome, InstanceEffect};
use serde::Serialize;

use super::trace::{Change, ConfidenceRow, GameEnd, LlmCall, TurnRow};
use crate::ablate::{GameRecord, Report, table};

/// How many boards the best and worst lists show.
const BOARD_LIST: usize = 5;

/// One board's results under one stack.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BoardRow {
    /// The board.
    pub instance: String,
    /// Games played on it.
    pub games: usize,
    /// Games won.
    pub wins: usize,
    /// Mean F1.
    pub f1_mean: f64,
    /// Mean shots.
    pub shots: f64,
    /// Mean questions.
    pub questions: f64,
}

/// Per-board rows of the outcomes, in first-appearance order.
pub fn board_rows(outcomes: &[&GameOutcome]) -> Vec<BoardRow> {
    let mut rows: Vec<BoardRow> = Vec::new();
    for game in outcomes {
        let index = match rows.iter().position(|row| row.instance == game.instance) {
            Some(index) => index,
            None => {
                rows.push(BoardRow {
                    instance: game.instance.clone(),
                    games: 0,
                    wins: 0,
                    f1_mean: 0.0,
                    shots: 0.0,
                    questions: 0.0,
                });
                rows.len() - 1
            }
        };
        // Running sums first; divided below once every game is in.
        let row = &mut rows[index];
        row.games += 1;
        row.wins += usize::from(game.won);
        row.f1_mean += game.f1;
        row.shots += f64::from(game.shots);
        row.questions += f64::from(game.questions);
    }
    for row in &mut rows {
        let n = row.games as f64;
        row.f1_mean /= n;
        row.shots /= n;
        row.questions /= n;
    }
    rows
}

/// The best and the worst boards by mean F1 (ties broken by board name, so the lists are
/// stable).
pub fn best_and_worst(rows: &[BoardRow]) -> (Vec<BoardRow>, Vec<BoardRow>) {
    let mut sorted = rows.to_vec();
    sorted.sort_by(|a, b| {
        b.f1_mean
            .total_cmp(&a.f1_mean)
            .then_with(|| a.instance.cmp(&b.instance))
    });
    let best: Vec<BoardRow> = sorted.iter().take(BOARD_LIST).cloned().collect();
    let worst: Vec<BoardRow> = sorted.iter().rev().take(BOARD_LIST).cloned().collect();
    (best, worst)
}

/// The `run` view.
#[derive(Clone, Debug, Serialize)]
pub struct RunView {
    /// Games finished.
    pub finished: usize,
    /// Games the manifest asks for.
    pub expected: usize,
    /// The stacks' rows, marginals and verdict, as `ablate` reports them.
    pub report: Report,
    /// The stack the board lists are about.
    pub stack: String,
    /// Its best boards by mean F1.
    pub best_boards: Vec<BoardRow>,
    /// Its worst boards by mean F1.
    pub worst_boards: Vec<BoardRow>,
    /// With `--layer`: that layer's per-board effect.
    pub layer_effect: Option<LayerEffect>,
}

/// A layer's per-board effect: treatment minus baseline stack, board by board.
#[derive(Clone, Debug, Serialize)]
pub struct LayerEffect {
    /// The layer.
    pub layer: String,
    /// The stack without it.
    pub baseline: String,
    /// The stack with it.
    pub treatment: String,
    /// The per-board effects.
    pub boards: Vec<InstanceEffect>,
}

fn board_table(out: &mut String, title: &str, rows: &[BoardRow]) {
    let _ = writeln!(out, "{title}");
    let _ = writeln!(
        out,
        "  {:<8} {:>5} {:>5} {:>7} {:>6} {:>6}",
        "board", "games", "wins", "F1", "shots", "quest"
    );
    for row in rows {
        let _ = writeln!(
            out,
            "  {:<8} {:>5} {:>5} {:>7.4} {:>6.1} {:>6.2}",
            row.instance, row.games, row.wins, row.f1_mean, row.shots, row.questions
        );
    }
}

fn effects_table(out: &mut String, effects: &[InstanceEffect], base: &str, treatment: &str) {
    let _ = writeln!(
        out,
        "  {:<8} {:>9} {:>9} {:>8} {:>6}",
        "board",
        format!("F1 {}", short(base)),
        format!("F1 {}", short(treatment)),
        "ΔF1",
        "Δwins"
    );
    for effect in effects {
        let _ = writeln!(
            out,
            "  {:<8} {:>9.4} {:>9.4} {:>+8.4} {:>+6}",
            effect.instance,
            effect.baseline_f1,
            effect.treatment_f1,
            effect.delta_f1,
            effect.delta_wins
        );
    }
    let mean = harness_stdlib::stats::mean(
        &effects
            .iter()
            .map(|effect| effect.delta_f1)
            .collect::<Vec<_>>(),
    );
    let up = effects
        .iter()
        .filter(|effect| effect.delta_f1 > 0.0)
        .count();
    let down = effects
        .iter()
        .filter(|effect| effect.delta_f1 < 0.0)
        .count();
    let _ = writeln!(
        out,
        "  mean ΔF1 {mean:+.4}; better on {up} boards, worse on {down}, equal on {}",
        effects.len() - up - down
    );
}

/// A column heading no wider than eight characters.
fn short(name: &str) -> String {
    name.chars().take(6).collect()
}

impl RunView {
    /// The view as text.
    pub fn render(&self) -> String {
        let mut out = table(&self.report);
        let _ = writeln!(out, "\ngames finished: {}/{}", self.finished, self.expected);
        if self.finished < self.expected {
            let _ = writeln!(
                out,
                "the run is incomplete; finish it with `harness ablate --resume <RUN>`"
            );
        }
        let _ = writeln!(out);
        board_table(
            &mut out,
            &format!("best boards of {} by mean F1", self.stack),
            &self.best_boards,
        );
        board_table(
            &mut out,
            &format!("worst boards of {} by mean F1", self.stack),
            &self.worst_boards,
        );
        if self.report.failures.is_empty() {
            let _ = writeln!(out, "no game ended in a runtime error");
        }
        if let Some(effect) = &self.layer_effect {
            let _ = writeln!(
                out,
                "\nper-board effect of `{}`: {} minus {}",
                effect.layer, effect.treatment, effect.baseline
            );
            effects_table(
                &mut out,
                &effect.boards,
                &effect.baseline,
                &effect.treatment,
            );
        }
        out
    }
}

/// The `game` view.
#[derive(Clone, Debug, Serialize)]
pub struct GameView {
    /// The run.
    pub run_id: String,
    /// The game's record.
    pub record: GameRecord,
    /// Its turns, at most `--max-turns` of them.
    pub turns: Vec<TurnRow>,
    /// Turns left out by `--max-turns`.
    pub hidden_turns: usize,
    /// How the trace says it ended.
    pub end: Option<GameEnd>,
}

fn changes(changes: &[Change]) -> String {
    changes
        .iter()
        .map(|change| format!("{} {}→{}", change.tunable, change.old, change.new))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The header line of a game: its key and its result.
fn game_header(out: &mut String, run_id: &str, record: &GameRecord) {
    let game = &record.outcome;
    let _ = writeln!(
        out,
        "game {} seed {} · stack {} · run {run_id}",
        record.instance, record.seed_index, record.stack
    );
    let _ = writeln!(
        out,
        "{} ({}) · F1 {:.4} · {} shots · {} questions · {} revisions · {} turns",
        if game.won { "won" } else { "lost" },
        record.end,
        game.f1,
        game.shots,
        game.questions,
        game.revisions,
        game.turns
    );
    if let Some(error) = &record.error {
        let _ = writeln!(out, "error: {error}");
    }
}

impl GameView {
    /// The view as text: one line per turn with the action and what came of it, then indented
    /// lines for gates, revisions, patches and problems.
    pub fn render(&self) -> String {
        let mut out = String::new();
        game_header(&mut out, &self.run_id, &self.record);
        let _ = writeln!(out);
        for row in &self.turns {
            // The last turn only receives the final observation, already shown as the result
            // of the turn before; a row with nothing of its own is left out.
            if row.action.is_none()
                && !row.gate_open
                && row.revisions.is_empty()
                && row.patches.is_empty()
                && row.problems.is_empty()
            {
                continue;
            }
            let result = row.result.join("; ");
            let by = match (&row.layer, row.rule) {
                (Some(layer), Some(rule)) => format!("{layer}#{rule}"),
                _ => String::new(),
            };
            let _ = writeln!(
                out,
                "{:>4}  {:<14} {:<24} {}",
                row.turn,
                by,
                row.action.as_deref().unwrap_or("(no action)"),
                if result.is_empty() {
                    String::new()
                } else {
                    format!("→ {result}")
                }
            );
            if row.previews > 0 {
                let best = row
                    .best_preview
                    .as_ref()
                    .map(|(action, value)| format!(", best {action} = {value:.4}"))
                    .unwrap_or_default();
                let _ = writeln!(out, "{:>20}previews: {}{best}", "", row.previews);
            }
            if row.gate_open {
                let _ = writeln!(out, "{:>20}gate open", "");
            }
            if !row.revisions.is_empty() {
                let _ = writeln!(out, "{:>20}revised: {}", "", changes(&row.revisions));
            }
            if !row.patches.is_empty() {
                let _ = writeln!(out, "{:>20}patched: {}", "", changes(&row.patches));
            }
            for problem in &row.problems {
                let _ = writeln!(out, "{:>20}{problem}", "");
            }
        }
        if self.hidden_turns > 0 {
            let _ = writeln!(
                out,
                "… {} more turns (raise --max-turns to see them)",
                self.hidden_turns
            );
        }
        if let Some(end) = &self.end {
            let metrics: Vec<String> = end
                .metrics
                .iter()
                .map(|(key, value)| format!("{key}={value}"))
                .collect();
            let _ = writeln!(out, "\nend: {} · {}", end.reason, metrics.join(" "));
        }
        out
    }
}

/// The `confidence` view of one game.
#[derive(Clone, Debug, Serialize)]
pub struct ConfidenceGameView {
    /// The run.
    pub run_id: String,
    /// The game's record.
    pub record: GameRecord,
    /// The threshold below which confidence counts as low.
    pub threshold: f64,
    /// Per-turn readings, at most `--max-turns` of them.
    pub turns: Vec<ConfidenceRow>,
    /// Turns left out by `--max-turns`.
    pub hidden_turns: usize,
}

impl ConfidenceGameView {
    /// The view as text.
    pub fn render(&self) -> String {
        let mut out = String::new();
        game_header(&mut out, &self.run_id, &self.record);
        let _ = writeln!(
            out,
            "confidence = max(0, 1 − (pred_ema + cal_ema)/2), low below {:.2}\n",
            self.threshold
        );
        let _ = writeln!(
            out,
            "{:>4} {:>8} {:>8} {:>6}  {:>4} {:>4}  {:<5} {:<22} revised",
            "turn", "pred_ema", "cal_ema", "conf", "low", "cool", "gate", "action"
        );
        for row in &self.turns {
            let _ = writeln!(
                out,
                "{:>4} {:>8.4} {:>8.4} {:>6.3}{} {:>4} {:>4}  {:<5} {:<22} {}",
                row.turn,
                row.prediction_ema,
                row.calibration_ema,
                row.confidence,
                if row.confidence < self.threshold {
                    "*"
                } else {
                    " "
                },
                row.low_confidence_streak,
                row.cooldown,
                if row.gate_open { "open" } else { "-" },
                row.action.as_deref().unwrap_or("-"),
                changes(&row.revisions)
            );
        }
        if self.hidden_turns > 0 {
            let _ = writeln!(
                out,
                "… {} more turns (raise --max-turns to see them)",
                self.hidden_turns
            );
        }
        let _ = writeln!(out, "(* below the threshold)");
        out
    }
}

/// One game's confidence summary.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GameConfidence {
    /// The board.
    pub instance: String,
    /// The replicate.
    pub seed_index: u32,
    /// Turns read.
    pub turns: usize,
    /// Mean confidence over the turns.
    pub avg_confidence: f64,
    /// Turns below the threshold.
    pub low_turns: usize,
    /// Turns with an open gate.
    pub gate_turns: usize,
    /// Revisions applied (turns with a revision).
    pub revisions: usize,
    /// Whether the game was won.
    pub won: bool,
}

/// Summarises a game's confidence rows.
pub fn game_confidence(
    record: &GameRecord,
    rows: &[ConfidenceRow],
    threshold: f64,
    revisions: usize,
) -> GameConfidence {
    let values: Vec<f64> = rows.iter().map(|row| row.confidence).collect();
    GameConfidence {
        instance: record.instance.clone(),
        seed_index: record.seed_index,
        turns: rows.len(),
        avg_confidence: harness_stdlib::stats::mean(&values),
        low_turns: values.iter().filter(|value| **value < threshold).count(),
        gate_turns: rows.iter().filter(|row| row.gate_open).count(),
        revisions,
        won: record.outcome.won,
    }
}

/// The `confidence` view of a whole stack: every game, lowest confidence first.
#[derive(Clone, Debug, Serialize)]
pub struct ConfidenceRunView {
    /// The run.
    pub run_id: String,
    /// The stack.
    pub stack: String,
    /// The threshold.
    pub threshold: f64,
    /// The games, lowest average confidence first.
    pub games: Vec<GameConfidence>,
}

impl ConfidenceRunView {
    /// The view as text.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "reflective confidence of stack {} · run {} · low below {:.2}\n",
            self.stack, self.run_id, self.threshold
        );
        let _ = writeln!(
            out,
            "{:<8} {:>4} {:>6} {:>8} {:>5} {:>6} {:>6} {:>4}",
            "board", "seed", "turns", "avg conf", "low", "gates", "revis", "won"
        );
        for game in &self.games {
            let _ = writeln!(
                out,
                "{:<8} {:>4} {:>6} {:>8.3} {:>5} {:>6} {:>6} {:>4}",
                game.instance,
                game.seed_index,
                game.turns,
                game.avg_confidence,
                game.low_turns,
                game.gate_turns,
                game.revisions,
                if game.won { "yes" } else { "no" }
            );
        }
        let _ = writeln!(
            out,
            "\nlook at one game with `harness lens confidence <RUN> --stack {} --game BOARD:SEED`",
            self.stack
        );
        out
    }
}

/// The `llm` view.
#[derive(Clone, Debug, Default, Serialize)]
pub struct LlmView {
    /// The run.
    pub run_id: String,
    /// Games read.
    pub games: usize,
    /// LLM calls.
    pub calls: usize,
    /// Games with at least one call.
    pub games_with_calls: usize,
    /// Calls whose outcome was not `ok`.
    pub failures: usize,
    /// Calls whose reply was replaced by the symbolic fallback.
    pub fallbacks: usize,
    /// Tokens over all calls.
    pub tokens: u64,
    /// Mean latency in milliseconds.
    pub latency_mean_ms: f64,
    /// 95th percentile latency in milliseconds.
    pub latency_p95_ms: f64,
    /// Calls per provider and model, as `provider/model`, with their count.
    pub models: Vec<(String, usize)>,
    /// Revisions applied from the symbolic presets (without an LLM).
    pub symbolic_revisions: usize,
    /// Games with such a revision.
    pub games_with_symbolic_revisions: usize,
}

impl LlmView {
    /// Builds the view from each game's calls and its revision count.
    pub fn build(run_id: &str, games: &[(Vec<LlmCall>, usize)]) -> LlmView {
        let calls: Vec<&LlmCall> = games.iter().flat_map(|(calls, _)| calls).collect();
        let mut latencies: Vec<f64> = calls.iter().map(|call| call.latency_ms).collect();
        latencies.sort_by(f64::total_cmp);
        let p95 = latencies
            .get((latencies.len() * 95).div_ceil(100).saturating_sub(1))
            .copied()
            .unwrap_or(0.0);
        let mut models: Vec<(String, usize)> = Vec::new();
        for call in &calls {
            let name = format!("{}/{}", call.provider, call.model);
            match models.iter_mut().find(|(known, _)| *known == name) {
                Some((_, count)) => *count += 1,
                None => models.push((name, 1)),
            }
        }
        // A revision in a game with no LLM call came from the symbolic presets.
        let symbolic: Vec<usize> = games
            .iter()
            .filter(|(calls, _)| calls.is_empty())
            .map(|(_, revisions)| *revisions)
            .collect();
        LlmView {
            run_id: run_id.to_string(),
            games: games.len(),
            calls: calls.len(),
            games_with_calls: games.iter().filter(|(calls, _)| !calls.is_empty()).count(),
            failures: calls.iter().filter(|call| call.outcome != "ok").count(),
            fallbacks: calls.iter().filter(|call| call.fallback).count(),
            tokens: calls.iter().map(|call| call.tokens).sum(),
            latency_mean_ms: harness_stdlib::stats::mean(&latencies),
            latency_p95_ms: p95,
            models,
            symbolic_revisions: symbolic.iter().sum(),
            games_with_symbolic_revisions: symbolic.iter().filter(|n| **n > 0).count(),
        }
    }

    /// The view as text.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "LLM use · run {} · {} games", self.run_id, self.games);
        if self.calls == 0 {
            let _ = writeln!(
                out,
                "this run made no LLM calls (no trace has an `llm_call` event): every decision and \
                 revision came from the symbolic harness"
            );
        } else {
            let _ = writeln!(
                out,
                "{} calls in {} games · {} failed · {} fell back to the symbolic policy",
                self.calls, self.games_with_calls, self.failures, self.fallbacks
            );
            let _ = writeln!(
                out,
                "{} tokens · latency mean {:.0} ms, p95 {:.0} ms",
                self.tokens, self.latency_mean_ms, self.latency_p95_ms
            );
            for (model, count) in &self.models {
                let _ = writeln!(out, "  {model}: {count} calls");
            }
        }
        let _ = writeln!(
            out,
            "symbolic fallbacks: {} revisions in {} games were applied from the symbolic presets",
            self.symbolic_revisions, self.games_with_symbolic_revisions
        );
        out
    }
}

/// A run as a compare header shows it.
#[derive(Clone, Debug, Serialize)]
pub struct RunHeader {
    /// The run.
    pub run_id: String,
    /// Its settings, as `key=value` words.
    pub settings: String,
    /// Its finished games.
    pub games: usize,
}

/// Games of two runs matched by stack, instance and seed.
#[derive(Clone, Debug, Default)]
pub struct Matching {
    /// The matched pairs, in the first run's order.
    pub pairs: Vec<(GameRecord, GameRecord)>,
    /// Games only the first run has.
    pub only_first: usize,
    /// Games only the second run has.
    pub only_second: usize,
}

/// Matches two runs' games by stack, instance and seed.
pub fn match_games(first: &[GameRecord], second: &[GameRecord]) -> Matching {
    let key = |record: &GameRecord| {
        (
            record.stack.clone(),
            record.instance.clone(),
            record.seed_index,
        )
    };
    let mut matching = Matching::default();
    for record in first {
        match second.iter().find(|other| key(other) == key(record)) {
            Some(other) => matching.pairs.push((record.clone(), other.clone())),
            None => matching.only_first += 1,
        }
    }
    matching.only_second = second.len() - matching.pairs.len();
    matching
}

/// One stack's change between two runs, over matched games.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StackDelta {
    /// The stack.
    pub stack: String,
    /// Matched games.
    pub games: usize,
    /// Wins in the first run and in the second.
    pub wins: (usize, usize),
    /// Win rates.
    pub win_rate: (f64, f64),
    /// Mean F1s.
    pub f1_mean: (f64, f64),
    /// Questions per game.
    pub questions: (f64, f64),
    /// Revisions per game.
    pub revisions: (f64, f64),
}

/// Per-stack deltas of matched games, in the order stacks first appear.
pub fn stack_deltas(matching: &Matching) -> Vec<StackDelta> {
    let mut stacks: Vec<&str> = Vec::new();
    for (record, _) in &matching.pairs {
        if !stacks.contains(&record.stack.as_str()) {
            stacks.push(&record.stack);
        }
    }
    stacks
        .into_iter()
        .map(|stack| {
            let (a, b): (Vec<GameOutcome>, Vec<GameOutcome>) = matching
                .pairs
                .iter()
                .filter(|(record, _)| record.stack == stack)
                .map(|(a, b)| (a.outcome.clone(), b.outcome.clone()))
                .unzip();
            let (ra, rb) = (ablation::row(stack, &[], &a), ablation::row(stack, &[], &b));
            StackDelta {
                stack: stack.to_string(),
                games: a.len(),
                wins: (ra.wins, rb.wins),
                win_rate: (ra.win_rate, rb.win_rate),
                f1_mean: (ra.f1_mean, rb.f1_mean),
                questions: (ra.questions_per_game, rb.questions_per_game),
                revisions: (ra.revisions_per_game, rb.revisions_per_game),
            }
        })
        .collect()
}

/// The `compare` view: run A (the positional run) against run B (`--compare`), Δ = A − B.
#[derive(Clone, Debug, Serialize)]
pub struct CompareView {
    /// Run A.
    pub a: RunHeader,
    /// Run B.
    pub b: RunHeader,
    /// Matched games.
    pub matched: usize,
    /// Games only A has.
    pub only_a: usize,
    /// Games only B has.
    pub only_b: usize,
    /// Per-stack changes.
    pub stacks: Vec<StackDelta>,
    /// The stack the per-board effects are about.
    pub stack: String,
    /// Per-board effects of A over B on that stack.
    pub boards: Vec<InstanceEffect>,
}

impl CompareView {
    /// The view as text.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "A: {} ({} games) {}",
            self.a.run_id, self.a.games, self.a.settings
        );
        let _ = writeln!(
            out,
            "B: {} ({} games) {}",
            self.b.run_id, self.b.games, self.b.settings
        );
        let _ = writeln!(
            out,
            "matched games (stack, board, seed): {} · only in A: {} · only in B: {} · Δ = A − B\n",
            self.matched, self.only_a, self.only_b
        );
        let _ = writeln!(
            out,
            "{:<22} {:>5} {:>11} {:>8} {:>17} {:>8} {:>14} {:>14}",
            "stack", "games", "wins A/B", "Δwins", "win rate A/B", "Δpp", "F1 A/B", "ΔF1"
        );
        for delta in &self.stacks {
            let _ = writeln!(
                out,
                "{:<22} {:>5} {:>11} {:>+8} {:>17} {:>+8.1} {:>14} {:>+14.4}",
                delta.stack,
                delta.games,
                format!("{}/{}", delta.wins.0, delta.wins.1),
                delta.wins.0 as i64 - delta.wins.1 as i64,
                format!(
                    "{:.1}%/{:.1}%",
                    delta.win_rate.0 * 100.0,
                    delta.win_rate.1 * 100.0
                ),
                (delta.win_rate.0 - delta.win_rate.1) * 100.0,
                format!("{:.4}/{:.4}", delta.f1_mean.0, delta.f1_mean.1),
                delta.f1_mean.0 - delta.f1_mean.1,
            );
        }
        let _ = writeln!(out, "\nper game: questions and revisions, A/B (Δ)");
        for delta in &self.stacks {
            let _ = writeln!(
                out,
                "  {:<20} questions {:.2}/{:.2} ({:+.2})   revisions {:.2}/{:.2} ({:+.2})",
                delta.stack,
                delta.questions.0,
                delta.questions.1,
                delta.questions.0 - delta.questions.1,
                delta.revisions.0,
                delta.revisions.1,
                delta.revisions.0 - delta.revisions.1,
            );
        }
        let _ = writeln!(out, "\nper-board effect on {} (A − B)", self.stack);
        let mut sorted = self.boards.clone();
        sorted.sort_by(|x, y| {
            y.delta_f1
                .total_cmp(&x.delta_f1)
                .then_with(|| x.instance.cmp(&y.instance))
        });
        effects_table(&mut out, &self.boards, "B", "A");
        let list = |items: &[InstanceEffect]| {
            items
                .iter()
                .map(|effect| format!("{} {:+.4}", effect.instance, effect.delta_f1))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let best: Vec<InstanceEffect> = sorted.iter().take(BOARD_LIST).cloned().collect();
        let worst: Vec<InstanceEffect> = sorted.iter().rev().take(BOARD_LIST).cloned().collect();
        let _ = writeln!(out, "  best:  {}", list(&best));
        let _ = writeln!(out, "  worst: {}", list(&worst));
        out
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn record(stack: &str, instance: &str, seed: u32, won: bool, f1: f64) -> GameRecord {
        GameRecord {
            stack: stack.into(),
            instance: instance.into(),
            seed_index: seed,
            outcome: GameOutcome {
                instance: instance.into(),
                seed_index: seed,
                won,
                f1,
                shots: 30,
                questions: 4,
                revisions: u32::from(won),
                llm_turns: 0,
                turns: 34,
            },
            end: "game_over".into(),
            error: None,
        }
    }

    #[test]
    fn games_match_by_stack_instance_and_seed() {
        let a = vec![
            record("L1", "B01", 0, true, 0.6),
            record("L1", "B01", 1, false, 0.4),
            record("L1-L2", "B01", 0, true, 0.7),
        ];
        let b = vec![
            record("L1-L2", "B01", 0, false, 0.5),
            record("L1", "B01", 0, false, 0.5),
            record("L1", "B02", 0, false, 0.5),
        ];
        let matching = match_games(&a, &b);
        assert_eq!(matching.pairs.len(), 2);
        assert_eq!((matching.only_first, matching.only_second), (1, 1));
        let deltas = stack_deltas(&matching);
        assert_eq!(deltas.len(), 2);
        assert_eq!(deltas[0].stack, "L1");
        assert_eq!(deltas[0].games, 1, "B01 seed 1 is not matched");
        assert_eq!(deltas[0].wins, (1, 0));
        assert!((deltas[1].f1_mean.0 - deltas[1].f1_mean.1 - 0.2).abs() < 1e-12);
    }

    #[test]
    fn boards_rank_by_mean_f1() {
        let records = [
            record("L1", "B01", 0, true, 0.9),
            record("L1", "B02", 0, false, 0.2),
            record("L1", "B02", 1, true, 0.4),
            record("L1", "B03", 0, true, 0.5),
        ];
        let outcomes: Vec<&GameOutcome> = records.iter().map(|r| &r.outcome).collect();
        let rows = board_rows(&outcomes);
        assert_eq!(rows[1].games, 2);
        assert!((rows[1].f1_mean - 0.3).abs() < 1e-12);
        let (best, worst) = best_and_worst(&rows);
        assert_eq!(best[0].instance, "B01");
        assert_eq!(worst[0].instance, "B02");
    }

    #[test]
    fn llm_view_counts_calls_and_symbolic_fallbacks() {
        let none = LlmView::build("r", &[(Vec::new(), 2), (Vec::new(), 0)]);
        assert_eq!((none.calls, none.symbolic_revisions), (0, 2));
        assert_eq!(none.games_with_symbolic_revisions, 1);
        assert!(none.render().contains("this run made no LLM calls"));
        let call = |latency_ms: f64, outcome: &str, fallback: bool| LlmCall {
            provider: "p".into(),
            model: "m".into(),
            tokens: 100,
            latency_ms,
            outcome: outcome.into(),
            fallback,
        };
        let calls: Vec<LlmCall> = (1..=20)
            .map(|i| {
                call(
                    f64::from(i) * 10.0,
                    if i == 3 { "timeout" } else { "ok" },
                    i == 3,
                )
            })
            .collect();
        let view = LlmView::build("r", &[(calls, 1), (Vec::new(), 1)]);
        assert_eq!((view.calls, view.failures, view.fallbacks), (20, 1, 1));
        assert_eq!(view.tokens, 2000);
        assert!((view.latency_p95_ms - 190.0).abs() < 1e-9);
        assert_eq!(
            view.symbolic_revisions, 1,
            "the LLM game's revision is not symbolic"
        );
        assert!(view.render().contains("20 calls in 1 games"));
    }
}
