//! `harness lens`: views over result folders written by `harness ablate`.
//!
//! - `run`: the run's header, per-stack rows as `ablate` prints them, best and worst boards;
//! - `game`: a turn-by-turn account of one game, read from its trace;
//! - `confidence`: the reflective monitor's confidence, gate and revisions over a game's turns,
//!   or per game over a whole stack;
//! - `llm`: LLM calls, failures, fallbacks, tokens and latency;
//! - `compare`: two runs, game by game, with per-board signed effects.
//!
//! `--plot FILE.svg` draws the view's figure with the pure functions of [`crate::plot`]. Every
//! problem with the folder or the options ends in a one-line error and exit status 1.

mod trace;
mod views;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use harness_stdlib::ablation::{GameOutcome, InstanceEffect, instance_effects};
use serde::Serialize;

use crate::ablate::{self, GameRecord};
use crate::plot;
use crate::results::{RunFolder, StackSpec};
use trace::{TraceEvent, confidence_rows, llm_calls, parse, revision_turns, turns};
use views::{
    CompareView, ConfidenceGameView, ConfidenceRunView, GameView, LayerEffect, LlmView, RunHeader,
    RunView, best_and_worst, board_rows, game_confidence, match_games, stack_deltas,
};

/// The confidence threshold of the Battleship reflection layer, used when the run's settings do
/// not override it.
const DEFAULT_THRESHOLD: f64 = 0.72;

/// Where runs are looked for when none is named.
const RUNS: &str = "results/runs";

/// The views.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum View {
    /// The run: settings, per-stack rows, best and worst boards, failed games.
    Run,
    /// One game turn by turn.
    Game,
    /// The reflective confidence, gate and revisions of a game (or of every game of a stack).
    Confidence,
    /// LLM calls, failures, fallbacks, tokens and latency.
    Llm,
    /// Two runs game by game.
    Compare,
}

/// What `harness lens` was asked to show.
pub struct LensArgs {
    /// The view.
    pub view: View,
    /// The run folder (default: the latest under `results/runs`).
    pub run: Option<PathBuf>,
    /// The stack (default: the top cumulative stack).
    pub stack: Option<String>,
    /// `BOARD:SEED`.
    pub game: Option<String>,
    /// The board, with `seed`.
    pub board: Option<String>,
    /// The seed index, with `board`.
    pub seed: Option<u32>,
    /// The layer whose per-board effect to show.
    pub layer: Option<String>,
    /// The run to compare with.
    pub compare: Option<PathBuf>,
    /// Print JSON instead of text.
    pub json: bool,
    /// Write the view's figure here.
    pub plot: Option<PathBuf>,
    /// Show at most this many turns.
    pub max_turns: Option<usize>,
}

/// Runs the command.
pub fn run(args: &LensArgs) -> ExitCode {
    match show(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

/// A run folder read into memory: its manifest and finished games. Traces are read on demand.
struct Run {
    folder: RunFolder,
    /// The harness module, from the summary when the run completed, else the harness path.
    harness: String,
    records: Vec<GameRecord>,
    expected: usize,
}

impl Run {
    fn open(path: &Path) -> Result<Run, String> {
        let folder = RunFolder::open(path).map_err(|error| {
            let mut message = error.to_string();
            if let Some(child) = latest_run(path) {
                message.push_str(&format!(
                    "; it holds run folders, such as `{}`",
                    child.display()
                ));
            }
            message
        })?;
        let manifest = folder.manifest().clone();
        let mut records = Vec::new();
        for spec in &manifest.stacks {
            for instance in &manifest.instances {
                for seed in 0..manifest.seeds {
                    if let Some(record) = folder
                        .finished_game::<GameRecord>(&spec.name, instance, seed)
                        .map_err(|error| error.to_string())?
                    {
                        records.push(record);
                    }
                }
            }
        }
        let summary: Option<serde_json::Value> =
            folder.summary().map_err(|error| error.to_string())?;
        let harness = summary
            .as_ref()
            .and_then(|summary| summary.get("harness"))
            .and_then(serde_json::Value::as_str)
            .map_or_else(|| manifest.harness.clone(), str::to_string);
        let expected = manifest.stacks.len() * manifest.instances.len() * manifest.seeds as usize;
        Ok(Run {
            folder,
            harness,
            records,
            expected,
        })
    }

    fn id(&self) -> &str {
        &self.folder.manifest().run_id
    }

    fn stacks(&self) -> &[StackSpec] {
        &self.folder.manifest().stacks
    }

    /// The stacks with whether each is cumulative; removals are named `without LAYER`.
    fn stack_kinds(&self) -> Vec<(StackSpec, bool)> {
        self.stacks()
            .iter()
            .map(|spec| (spec.clone(), !spec.name.starts_with("without ")))
            .collect()
    }

    fn stack_names(&self) -> String {
        self.stacks()
            .iter()
            .map(|spec| spec.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The named stack (case-insensitively), or the top cumulative stack.
    fn stack(&self, name: Option<&str>) -> Result<String, String> {
        match name {
            Some(name) => self
                .stacks()
                .iter()
                .find(|spec| spec.name.eq_ignore_ascii_case(name))
                .map(|spec| spec.name.clone())
                .ok_or_else(|| {
                    format!(
                        "run {} has no stack `{name}`; its stacks are {}",
                        self.id(),
                        self.stack_names()
                    )
                }),
            None => self
                .stack_kinds()
                .into_iter()
                .rev()
                .find(|(_, cumulative)| *cumulative)
                .map(|(spec, _)| spec.name)
                .ok_or_else(|| format!("run {} has no stacks", self.id())),
        }
    }

    fn outcomes(&self, stack: &str) -> Vec<GameOutcome> {
        self.records
            .iter()
            .filter(|record| record.stack == stack)
            .map(|record| record.outcome.clone())
            .collect()
    }

    fn setting(&self, name: &str) -> Option<&str> {
        self.folder
            .manifest()
            .settings
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    fn threshold(&self) -> f64 {
        self.setting("confidence_threshold")
            .and_then(|value| value.parse().ok())
            .unwrap_or(DEFAULT_THRESHOLD)
    }

    /// A game's record and parsed trace.
    fn game(&self, stack: &str, key: &GameKey) -> Result<(GameRecord, Vec<TraceEvent>), String> {
        let manifest = self.folder.manifest();
        let instance = manifest
            .instances
            .iter()
            .find(|known| known.eq_ignore_ascii_case(&key.board))
            .ok_or_else(|| {
                format!(
                    "run {} has no board `{}`; its boards are {}",
                    self.id(),
                    key.board,
                    manifest.instances.join(", ")
                )
            })?;
        let record = self
            .records
            .iter()
            .find(|record| {
                record.stack == stack
                    && &record.instance == instance
                    && record.seed_index == key.seed
            })
            .cloned()
            .ok_or_else(|| {
                format!(
                    "run {} has no finished game {instance} seed {} on stack {stack} (seeds are \
                     0..{}); finish the run with `harness ablate --resume` or pick another game",
                    self.id(),
                    key.seed,
                    manifest.seeds
                )
            })?;
        let events = self.events(&record)?;
        Ok((record, events))
    }

    fn events(&self, record: &GameRecord) -> Result<Vec<TraceEvent>, String> {
        let text = self
            .folder
            .trace(&record.stack, &record.instance, record.seed_index)
            .map_err(|error| error.to_string())?;
        parse(
            &text,
            &format!(
                "of {} {} seed {}",
                record.stack, record.instance, record.seed_index
            ),
        )
    }

    fn header(&self) -> RunHeader {
        RunHeader {
            run_id: self.id().to_string(),
            settings: self
                .folder
                .manifest()
                .settings
                .iter()
                .map(|(key, value)| format!("{key}={value}"))
                .collect::<Vec<_>>()
                .join(" "),
            games: self.records.len(),
        }
    }

    /// The per-board effect of a layer within this run: the cumulative stack that adds it
    /// against the one below, or else the full stack against its removal.
    fn layer_effect(&self, layer: &str) -> Result<LayerEffect, String> {
        let kinds = self.stack_kinds();
        let cumulative: Vec<&StackSpec> = kinds
            .iter()
            .filter(|(_, cumulative)| *cumulative)
            .map(|(spec, _)| spec)
            .collect();
        let layers: Vec<&str> = cumulative
            .last()
            .map(|spec| spec.layers.iter().map(String::as_str).collect())
            .unwrap_or_default();
        let Some(name) = layers
            .iter()
            .find(|known| known.eq_ignore_ascii_case(layer))
        else {
            return Err(format!(
                "run {} has no layer `{layer}`; its layers are {}",
                self.id(),
                layers.join(", ")
            ));
        };
        let pair = cumulative
            .windows(2)
            .find(|pair| pair[1].layers.last().map(String::as_str) == Some(name))
            .map(|pair| (pair[0].name.clone(), pair[1].name.clone()))
            .or_else(|| {
                let removal = format!("without {name}");
                kinds
                    .iter()
                    .find(|(spec, _)| spec.name == removal)
                    .zip(cumulative.last())
                    .map(|((without, _), full)| (without.name.clone(), full.name.clone()))
            });
        let (baseline, treatment) = pair.ok_or_else(|| {
            format!(
                "run {} has no stack without `{name}` below one with it (it is the first layer); \
                 pick another layer",
                self.id()
            )
        })?;
        Ok(LayerEffect {
            layer: (*name).to_string(),
            boards: instance_effects(&self.outcomes(&baseline), &self.outcomes(&treatment)),
            baseline,
            treatment,
        })
    }
}

/// The lexicographically last subfolder of `parent` that has a manifest.
fn latest_run(parent: &Path) -> Option<PathBuf> {
    let mut runs: Vec<PathBuf> = std::fs::read_dir(parent)
        .ok()?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.join("manifest.json").is_file())
        .collect();
    runs.sort();
    runs.pop()
}

/// A game named by board and seed index.
#[derive(Clone, Debug, PartialEq, Eq)]
struct GameKey {
    board: String,
    seed: u32,
}

/// Parses `BOARD:SEED`.
fn parse_game(text: &str) -> Result<GameKey, String> {
    let (board, seed) = text
        .split_once(':')
        .ok_or_else(|| format!("--game `{text}` is not BOARD:SEED, such as B07:1"))?;
    let seed = seed
        .trim()
        .parse()
        .map_err(|_| format!("--game `{text}`: the seed `{seed}` is not a whole number"))?;
    Ok(GameKey {
        board: board.trim().to_string(),
        seed,
    })
}

/// The game the options name, if any.
fn game_key(args: &LensArgs) -> Result<Option<GameKey>, String> {
    match (&args.game, &args.board) {
        (Some(_), Some(_)) => Err("give either --game BOARD:SEED or --board, not both".into()),
        (Some(game), None) => parse_game(game).map(Some),
        (None, Some(board)) => Ok(Some(GameKey {
            board: board.clone(),
            seed: args.seed.unwrap_or(0),
        })),
        (None, None) if args.seed.is_some() => Err("--seed needs --board".into()),
        (None, None) => Ok(None),
    }
}

/// Keeps at most `max` items, returning how many were dropped.
fn truncate<T>(items: &mut Vec<T>, max: Option<usize>) -> usize {
    let keep = max.unwrap_or(usize::MAX);
    let hidden = items.len().saturating_sub(keep);
    items.truncate(keep);
    hidden
}

/// A view ready to print, and its figure if it has one.
struct Shown {
    text: String,
    json: String,
    svg: Option<String>,
}

fn shown<T: Serialize>(view: &T, text: String, svg: Option<String>) -> Result<Shown, String> {
    Ok(Shown {
        text,
        json: serde_json::to_string_pretty(view).map_err(|error| error.to_string())?,
        svg,
    })
}

fn show(args: &LensArgs) -> Result<(), String> {
    let path = match &args.run {
        Some(path) => path.clone(),
        None => latest_run(Path::new(RUNS)).ok_or_else(|| {
            format!("no run folder under {RUNS}; run `harness ablate` first or name a run folder")
        })?,
    };
    let run = Run::open(&path)?;
    let shown = build(args, &run)?;
    // The figure is checked and written before the view is printed, so that a failed --plot
    // does not follow a page of output.
    if let Some(file) = &args.plot {
        let svg = shown.svg.as_deref().ok_or_else(|| {
            "--plot draws `run`, `run --layer`, `compare` and `confidence --game`; this view has \
             no figure"
                .to_string()
        })?;
        std::fs::write(file, svg)
            .map_err(|error| format!("cannot write {}: {error}", file.display()))?;
    }
    if args.json {
        println!("{}", shown.json);
    } else {
        print!("{}", shown.text);
    }
    if let Some(file) = &args.plot {
        eprintln!("wrote {}", file.display());
    }
    Ok(())
}

/// Builds the asked-for view of an open run (and, for `compare`, opens the other run).
fn build(args: &LensArgs, run: &Run) -> Result<Shown, String> {
    let wants_plot = args.plot.is_some();
    match args.view {
        View::Run => {
            let stack = run.stack(args.stack.as_deref())?;
            let report = ablate::report(
                run.folder.manifest(),
                &run.harness,
                &run.stack_kinds(),
                &run.records,
            );
            let outcomes = run.outcomes(&stack);
            let (best_boards, worst_boards) =
                best_and_worst(&board_rows(&outcomes.iter().collect::<Vec<_>>()));
            let layer_effect = args
                .layer
                .as_deref()
                .map(|layer| run.layer_effect(layer))
                .transpose()?;
            let svg = wants_plot.then(|| match &layer_effect {
                Some(effect) => effects_plot(
                    &format!("Per-board effect of {} · {}", effect.layer, run.id()),
                    &format!(
                        "ΔF1 = F1({}) − F1({}), mean over each board's seeds",
                        effect.treatment, effect.baseline
                    ),
                    &effect.boards,
                ),
                None => win_rate_plot(&report, run.id()),
            });
            let view = RunView {
                finished: run.records.len(),
                expected: run.expected,
                report,
                stack,
                best_boards,
                worst_boards,
                layer_effect,
            };
            shown(&view, view.render(), svg)
        }
        View::Game => {
            let key = game_key(args)?
                .ok_or("the game view needs a game: --game B07:1 (or --board B07 --seed 1)")?;
            let stack = run.stack(args.stack.as_deref())?;
            let (record, events) = run.game(&stack, &key)?;
            let (mut rows, end) = turns(&events);
            let hidden_turns = truncate(&mut rows, args.max_turns);
            let view = GameView {
                run_id: run.id().to_string(),
                record,
                turns: rows,
                hidden_turns,
                end,
            };
            shown(&view, view.render(), None)
        }
        View::Confidence => {
            let stack = run.stack(args.stack.as_deref())?;
            let threshold = run.threshold();
            let no_monitor = || {
                format!(
                    "stack {stack} of run {} has no reflective monitor (its traces never patch a \
                     `monitor` state); pick a stack with the reflection layer with --stack",
                    run.id()
                )
            };
            match game_key(args)? {
                Some(key) => {
                    let (record, events) = run.game(&stack, &key)?;
                    let mut rows = confidence_rows(&events);
                    if rows.is_empty() {
                        return Err(no_monitor());
                    }
                    let svg = wants_plot.then(|| confidence_plot(&record, &rows, threshold));
                    let hidden_turns = truncate(&mut rows, args.max_turns);
                    let view = ConfidenceGameView {
                        run_id: run.id().to_string(),
                        record,
                        threshold,
                        turns: rows,
                        hidden_turns,
                    };
                    shown(&view, view.render(), svg)
                }
                None => {
                    let mut games = Vec::new();
                    for record in run.records.iter().filter(|record| record.stack == stack) {
                        let events = run.events(record)?;
                        let rows = confidence_rows(&events);
                        if !rows.is_empty() {
                            let revisions = revision_turns(&events).len();
                            games.push(game_confidence(record, &rows, threshold, revisions));
                        }
                    }
                    if games.is_empty() {
                        return Err(no_monitor());
                    }
                    games.sort_by(|a, b| {
                        a.avg_confidence
                            .total_cmp(&b.avg_confidence)
                            .then_with(|| a.instance.cmp(&b.instance))
                            .then(a.seed_index.cmp(&b.seed_index))
                    });
                    let view = ConfidenceRunView {
                        run_id: run.id().to_string(),
                        stack,
                        threshold,
                        games,
                    };
                    shown(&view, view.render(), None)
                }
            }
        }
        View::Llm => {
            let mut games = Vec::new();
            for record in &run.records {
                let events = run.events(record)?;
                games.push((llm_calls(&events), revision_turns(&events).len()));
            }
            let view = LlmView::build(run.id(), &games);
            shown(&view, view.render(), None)
        }
        View::Compare => {
            let other = args
                .compare
                .as_deref()
                .ok_or("the compare view needs the other run: --compare RUN2")?;
            let other = Run::open(other)?;
            let matching = match_games(&run.records, &other.records);
            if matching.pairs.is_empty() {
                return Err(format!(
                    "runs {} and {} have no game in common (same stack, board and seed)",
                    run.id(),
                    other.id()
                ));
            }
            let stack = match (&args.stack, &args.layer) {
                (Some(_), Some(_)) => {
                    return Err("give either --stack or --layer to compare, not both".into());
                }
                (_, Some(layer)) => run.layer_effect(layer)?.treatment,
                (stack, None) => run.stack(stack.as_deref())?,
            };
            let (a, b): (Vec<GameOutcome>, Vec<GameOutcome>) = matching
                .pairs
                .iter()
                .filter(|(record, _)| record.stack == stack)
                .map(|(a, b)| (a.outcome.clone(), b.outcome.clone()))
                .unzip();
            let boards = instance_effects(&b, &a);
            let svg = wants_plot.then(|| {
                effects_plot(
                    &format!("Per-board ΔF1 on {stack}: run A − run B"),
                    &format!(
                        "ΔF1 = A − B, mean over seeds · A {} · B {}",
                        timestamp(run.id()),
                        timestamp(other.id())
                    ),
                    &boards,
                )
            });
            let view = CompareView {
                a: run.header(),
                b: other.header(),
                matched: matching.pairs.len(),
                only_a: matching.only_first,
                only_b: matching.only_second,
                stacks: stack_deltas(&matching),
                stack,
                boards,
            };
            shown(&view, view.render(), svg)
        }
    }
}

/// Per-stack win rates with their Wilson intervals.
fn win_rate_plot(report: &ablate::Report, run_id: &str) -> String {
    let bars: Vec<plot::Bar> = report
        .rows
        .iter()
        .chain(&report.removals)
        .map(|row| plot::Bar {
            label: row.stack.clone(),
            value: row.win_rate,
            lo: row.win_rate_ci.lo,
            hi: row.win_rate_ci.hi,
        })
        .collect();
    plot::bars_with_intervals(
        &format!("Win rate by stack · {run_id}"),
        "win rate (95% Wilson interval)",
        &bars,
    )
}

/// Per-board signed F1 effects (the paper's Figure 3).
fn effects_plot(title: &str, x_label: &str, boards: &[InstanceEffect]) -> String {
    let effects: Vec<plot::Effect> = boards
        .iter()
        .map(|board| plot::Effect {
            label: board.instance.clone(),
            value: board.delta_f1,
        })
        .collect();
    plot::signed_effects(title, x_label, &effects)
}

/// The timestamp that starts a run id (`20261130-162326__battleship__abc` → `20261130-162326`),
/// short enough for an axis label.
fn timestamp(run_id: &str) -> &str {
    run_id.split("__").next().unwrap_or(run_id)
}

/// A game's confidence trace.
fn confidence_plot(record: &GameRecord, rows: &[trace::ConfidenceRow], threshold: f64) -> String {
    let points: Vec<plot::TracePoint> = rows
        .iter()
        .map(|row| plot::TracePoint {
            turn: row.turn,
            value: row.confidence,
            gate_open: row.gate_open,
            revised: !row.revisions.is_empty(),
        })
        .collect();
    plot::confidence_trace(
        &format!(
            "Confidence · {} {} seed {}",
            record.stack, record.instance, record.seed_index
        ),
        threshold,
        &points,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{FORMAT, Manifest};
    use views::tests::record;

    /// A belief-only game: two shots, then the end.
    const PLAIN: &str = r#"{"turn":1,"phase":"decide","layer":"belief","event":"chosen","action":"shoot","args":["A1"],"rule":0}
{"turn":2,"phase":"observe","layer":null,"event":"observation","name":"shot","args":["A1",true]}
{"turn":2,"phase":"observe","layer":"belief","event":"patch","field":"belief.hits","old":0,"new":1}
{"turn":2,"phase":"decide","layer":"belief","event":"chosen","action":"shoot","args":["A2"],"rule":0}
{"turn":3,"phase":"observe","layer":null,"event":"observation","name":"shot","args":["A2",false]}
{"turn":3,"phase":"end","layer":null,"event":"episode_end","reason":"game_over","metrics":{"f1":0.5,"won":false}}
"#;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("harness-lens-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// A run of two stacks on two boards with one seed each; `shift` is added to every F1 of
    /// the top stack so that two runs differ.
    fn make_run(parent: &Path, id: &str, shift: f64) -> PathBuf {
        let layers = |names: &[&str]| names.iter().map(|name| name.to_string()).collect();
        let manifest = Manifest {
            format: FORMAT.into(),
            run_id: id.into(),
            program_version: "0.1.0".into(),
            harness: "harnesses/battleship".into(),
            harness_hash: "abc".into(),
            game: "battleship".into(),
            stacks: vec![
                StackSpec {
                    name: "L1".into(),
                    layers: layers(&["belief"]),
                },
                StackSpec {
                    name: "L1-L2".into(),
                    layers: layers(&["belief", "reflection"]),
                },
            ],
            instances: vec!["B01".into(), "B02".into()],
            seeds: 1,
            settings: vec![
                ("protocol".into(), "paper".into()),
                ("confidence_threshold".into(), "0.65".into()),
            ],
        };
        let folder = RunFolder::create(parent, manifest).unwrap();
        for (board, f1) in [("B01", 0.5), ("B02", 0.3)] {
            let plain = record("L1", board, 0, false, f1);
            folder.record_game("L1", board, 0, &plain, PLAIN).unwrap();
            let reflective = record("L1-L2", board, 0, true, f1 + 0.1 + shift);
            folder
                .record_game("L1-L2", board, 0, &reflective, trace::tests::TRACE)
                .unwrap();
        }
        parent.join(id)
    }

    fn args(view: View) -> LensArgs {
        LensArgs {
            view,
            run: None,
            stack: None,
            game: None,
            board: None,
            seed: None,
            layer: None,
            compare: None,
            json: false,
            plot: Some(PathBuf::from("unused.svg")),
            max_turns: None,
        }
    }

    #[test]
    fn every_view_renders_from_a_run_folder() {
        let parent = scratch("views");
        let run = Run::open(&make_run(&parent, "20260101-000000__t__a", 0.0)).unwrap();
        let other = make_run(&parent, "20250101-000000__t__b", -0.2);
        assert_eq!(
            latest_run(&parent),
            Some(parent.join("20260101-000000__t__a"))
        );

        let shown = build(&args(View::Run), &run).unwrap();
        assert!(shown.text.contains("games finished: 4/4"), "{}", shown.text);
        assert!(shown.text.contains("best boards of L1-L2"));
        let svg = shown.svg.unwrap();
        assert_eq!(
            svg.matches("opacity=\"0.85\"").count(),
            2,
            "one bar per stack"
        );
        assert!(svg.contains("100.0%"));

        let mut by_layer = args(View::Run);
        by_layer.layer = Some("reflection".into());
        let shown = build(&by_layer, &run).unwrap();
        assert!(
            shown
                .text
                .contains("per-board effect of `reflection`: L1-L2 minus L1")
        );
        assert!(shown.text.contains("+0.1000"), "{}", shown.text);
        assert_eq!(
            shown.svg.unwrap().matches("<rect x=").count(),
            2,
            "one bar per board"
        );

        let mut game = args(View::Game);
        game.game = Some("b02:0".into());
        let shown = build(&game, &run).unwrap();
        assert!(
            shown.text.contains("game B02 seed 0 · stack L1-L2"),
            "{}",
            shown.text
        );
        assert!(shown.text.contains("revised: reflection.coarse_quota 6→5"));
        assert!(shown.svg.is_none());
        game.stack = Some("l1".into());
        game.max_turns = Some(1);
        let text = build(&game, &run).unwrap().text;
        assert!(
            text.contains("shoot A1") && text.contains("→ shot A1 yes"),
            "{text}"
        );
        assert!(text.contains("2 more turns"), "{text}");

        let mut confidence = args(View::Confidence);
        confidence.board = Some("B01".into());
        let shown = build(&confidence, &run).unwrap();
        assert!(
            shown.text.contains("low below 0.65"),
            "the run's threshold is used"
        );
        assert!(shown.text.contains("0.500*"), "{}", shown.text);
        let svg = shown.svg.unwrap();
        assert_eq!(svg.matches("<circle").count(), 1, "one revision");
        assert!(svg.contains("threshold 0.65"));
        confidence.board = None;
        confidence.json = true;
        let shown = build(&confidence, &run).unwrap();
        let json: serde_json::Value = serde_json::from_str(&shown.json).unwrap();
        assert_eq!(json["games"].as_array().map(Vec::len), Some(2));
        assert!(shown.svg.is_none(), "the per-game table has no figure");
        confidence.stack = Some("L1".into());
        let error = build(&confidence, &run).err().unwrap();
        assert!(error.contains("no reflective monitor"), "{error}");

        let shown = build(&args(View::Llm), &run).unwrap();
        assert!(shown.text.contains("this run made no LLM calls"));
        assert!(
            shown.text.contains("2 revisions in 2 games"),
            "{}",
            shown.text
        );

        let mut compare = args(View::Compare);
        compare.compare = Some(other);
        let shown = build(&compare, &run).unwrap();
        assert!(shown.text.contains("matched games (stack, board, seed): 4"));
        assert!(shown.text.contains("+0.2000"), "{}", shown.text);
        let svg = shown.svg.unwrap();
        assert!(svg.contains("run A − run B") && svg.contains("A 20260101-000000"));
        std::fs::remove_dir_all(parent).unwrap();
    }

    #[test]
    fn missing_games_and_foreign_folders_are_clear_errors() {
        let parent = scratch("errors");
        let root = make_run(&parent, "20260101-000000__t__a", 0.0);
        let error = Run::open(&parent).err().unwrap();
        assert!(error.contains("not a run folder") && error.contains("it holds run folders"));
        let run = Run::open(&root).unwrap();
        let mut game = args(View::Game);
        let error = build(&game, &run).err().unwrap();
        assert!(error.contains("needs a game"), "{error}");
        game.game = Some("B01:4".into());
        let error = build(&game, &run).err().unwrap();
        assert!(error.contains("no finished game B01 seed 4"), "{error}");
        game.game = Some("B01:x".into());
        assert!(
            build(&game, &run)
                .err()
                .unwrap()
                .contains("not a whole number")
        );
        let mut layer = args(View::Run);
        layer.layer = Some("belief".into());
        assert!(build(&layer, &run).err().unwrap().contains("first layer"));
        std::fs::write(root.join("traces/l1/b01-s0.jsonl"), "{broken\n").unwrap();
        game.game = Some("B01:0".into());
        game.stack = Some("L1".into());
        let error = build(&game, &run).err().unwrap();
        assert!(error.contains("is corrupt: line 1"), "{error}");
        std::fs::remove_dir_all(parent).unwrap();
    }

    #[test]
    fn games_are_named_by_board_and_seed() {
        assert_eq!(
            parse_game(" B07 : 1").unwrap(),
            GameKey {
                board: "B07".into(),
                seed: 1
            }
        );
        assert!(parse_game("B07").is_err());
        assert_eq!(timestamp("20261130-162326__x__y"), "20261130-162326");
    }
}
