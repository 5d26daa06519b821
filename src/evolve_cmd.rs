//! `harness evolve` and `harness archive`: evolving harnesses into an archive, and reading it.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use harness::evolve::{Archive, Config, Entry, Generator, Mode, evolve_with};
use harness::evolve_llm::{CANDIDATE_EFFECT, ClientModel, Model, REPAIR_EFFECT, reply};
use harness::games::Registry;
use harness::load::read_bank;

/// The arguments of `harness evolve`.
pub struct EvolveArgs<'a> {
    pub game: &'a str,
    pub bank: &'a Path,
    pub archive: &'a Path,
    pub mode: Mode,
    pub generator: Generator,
    pub rounds: usize,
    pub candidates: usize,
    pub refs: usize,
    pub repair_rounds: usize,
    pub instances: Option<&'a str>,
    pub seeds: u64,
    pub seed: u64,
    pub reward: &'a str,
    pub jobs: usize,
    pub llm: &'a crate::llm_args::LlmArgs,
}

fn fail(message: String) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::FAILURE
}

/// Runs the evolution and writes the archive.
pub fn evolve_run(args: &EvolveArgs<'_>) -> ExitCode {
    let started = Instant::now();
    let registry = Registry::standard();
    let kind = match registry.get(args.game) {
        Ok(kind) => kind,
        Err(message) => return fail(message),
    };
    let (instances, _) =
        match harness::plan::instances_and_options(&kind.manifest(), args.instances, &[]) {
            Ok(found) => found,
            Err(message) => return fail(message),
        };
    let bank = match read_bank(args.bank) {
        Ok(bank) if !bank.is_empty() => bank,
        Ok(_) => return fail(format!("no harness under {}", args.bank.display())),
        Err(message) => return fail(message),
    };
    let config = Config {
        game: args.game.to_string(),
        smoke: instances.first().cloned().unwrap_or_default(),
        instances,
        seeds: args.seeds,
        rounds: args.rounds,
        candidates: args.candidates,
        refs: args.refs,
        repair_rounds: args.repair_rounds,
        mode: args.mode,
        generator: args.generator,
        seed: args.seed,
        reward: args.reward.to_string(),
        jobs: args.jobs,
    };
    let mut model = match args.generator {
        Generator::Llm => {
            let items = [
                (CANDIDATE_EFFECT.to_string(), reply()),
                (REPAIR_EFFECT.to_string(), reply()),
            ];
            match args.llm.setup_for(&items, Vec::new()) {
                Ok(Some(setup)) => {
                    for warning in setup.warnings() {
                        eprintln!("warning: {warning}");
                    }
                    Some(ClientModel::new(setup.client()))
                }
                Ok(None) => {
                    return fail(
                        "--generator llm needs a model: --llm-provider ollama|openai|sim or \
                         --llm-replay DIR"
                            .into(),
                    );
                }
                Err(message) => return fail(message),
            }
        }
        _ if args.llm.llm_provider.is_some() || args.llm.llm_replay.is_some() => {
            return fail("the --llm-* flags are for --generator llm".into());
        }
        _ => None,
    };
    let archive = match evolve_with(
        &registry,
        &bank,
        &config,
        model.as_mut().map(|m| m as &mut dyn Model),
    ) {
        Ok(archive) => archive,
        Err(message) => return fail(message),
    };
    if let Err(message) = archive.write(args.archive) {
        return fail(message);
    }
    for round in &archive.rounds {
        println!(
            "round {:2}: {} candidate(s), selected {}, {}",
            round.round,
            round.candidates.len(),
            round.selected.as_deref().unwrap_or("none"),
            round.decision
        );
    }
    println!(
        "archive {}: {} entries, {} rejected, incumbent {} ({:.1} s wall)",
        args.archive.display(),
        archive.index.entries.len(),
        archive.index.rejected.len(),
        archive.index.incumbent.as_deref().unwrap_or("none"),
        started.elapsed().as_secs_f64()
    );
    ExitCode::SUCCESS
}

fn line(entry: &Entry) -> String {
    match &entry.metrics {
        Some(m) => format!(
            "{}  round {:2}  {:18}  reward {:.4} [{:.4}, {:.4}]  turns {:6.2}  steps {:9.1}{}",
            entry.id,
            entry.round,
            entry.generator,
            m.reward,
            m.reward_ci[0],
            m.reward_ci[1],
            m.latency,
            m.cost,
            if entry.retained { "  retained" } else { "" }
        ),
        None => format!(
            "{}  round {:2}  {:18}  rejected: {}",
            entry.id, entry.round, entry.generator, entry.reason
        ),
    }
}

/// The `harness archive` views.
pub fn archive_run(
    view: &str,
    dir: &Path,
    id: Option<&str>,
    other: Option<&PathBuf>,
    plot: Option<&Path>,
) -> ExitCode {
    let archive = match Archive::read(dir) {
        Ok(archive) => archive,
        Err(message) => return fail(message),
    };
    match view {
        "list" => {
            for (entry, _) in &archive.items {
                println!("{}", line(entry));
            }
            ExitCode::SUCCESS
        }
        "show" => {
            let Some((entry, sources)) =
                id.and_then(|id| archive.items.iter().find(|(e, _)| e.id.starts_with(id)))
            else {
                return fail("name an entry: `harness archive show ARCH ID`".into());
            };
            println!(
                "{}",
                serde_json::to_string_pretty(entry).unwrap_or_default()
            );
            for (path, text) in &sources.files {
                println!("// {path}\n{text}");
            }
            ExitCode::SUCCESS
        }
        "frontier" => {
            for entry in archive.frontier() {
                println!("{}", line(entry));
            }
            ExitCode::SUCCESS
        }
        "verify" => {
            let problems = archive.verify();
            for problem in &problems {
                println!("{problem}");
            }
            if problems.is_empty() {
                println!(
                    "verified: {} entries, {} rejected, {} rounds; every retention decision follows the rule",
                    archive.index.entries.len(),
                    archive.index.rejected.len(),
                    archive.rounds.len()
                );
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        "compare" => {
            let Some(other) = other else {
                return fail(
                    "name the second archive: `harness archive compare ARCH --with ARCH2`".into(),
                );
            };
            let second = match Archive::read(other) {
                Ok(archive) => archive,
                Err(message) => return fail(message),
            };
            println!(
                "round  {:>28}  {:>28}",
                format!("{:?}", archive.index.mode),
                format!("{:?}", second.index.mode)
            );
            let reward = |a: &Archive, round: usize| {
                a.rounds
                    .get(round)
                    .and_then(|r| r.metrics.as_ref())
                    .map_or("-".to_string(), |m| {
                        format!(
                            "{:.4} [{:.4}, {:.4}]",
                            m.reward, m.reward_ci[0], m.reward_ci[1]
                        )
                    })
            };
            for round in 0..archive.rounds.len().max(second.rounds.len()) {
                println!(
                    "{:5}  {:>28}  {:>28}",
                    round + 1,
                    reward(&archive, round),
                    reward(&second, round)
                );
            }
            // Over the stream: the mean reward of what each run executed, a round without a
            // valid candidate executing its incumbent.
            let mut bars = Vec::new();
            for (label, a) in [("first", &archive), ("second", &second)] {
                let executed: Vec<f64> = a
                    .rounds
                    .iter()
                    .filter_map(|r| {
                        r.metrics
                            .as_ref()
                            .or_else(|| r.incumbent_before.as_ref().map(|(_, m)| m))
                            .map(|m| m.reward)
                    })
                    .collect();
                let ci = harness_stdlib::stats::bootstrap_mean(&executed, 1000, 0.95, a.index.seed);
                println!(
                    "{label} ({:?}): mean executed reward over {} rounds {:.4} [{:.4}, {:.4}]",
                    a.index.mode,
                    executed.len(),
                    ci.estimate,
                    ci.lo,
                    ci.hi
                );
                bars.push(harness::plot::Group {
                    label: format!("{:?} ({label})", a.index.mode),
                    bars: vec![Some(harness::plot::Bar {
                        value: ci.estimate,
                        lo: ci.lo,
                        hi: ci.hi,
                        n: executed.len(),
                    })],
                });
            }
            if let Some(path) = plot {
                let svg = harness::plot::panels(
                    "Mean executed reward over the rounds",
                    "95% bootstrap interval over rounds; n counts rounds",
                    &[],
                    &[harness::plot::Panel {
                        axis: archive.index.metric.reward.clone(),
                        rate: false,
                        groups: bars,
                    }],
                );
                if let Err(e) =
                    crate::figure::write(path, &svg, &crate::figure::FigureArgs::default())
                {
                    return fail(e);
                }
                println!("wrote {}", path.display());
            }
            ExitCode::SUCCESS
        }
        other => fail(format!(
            "unknown view `{other}`; the views are list, show, frontier, verify, compare"
        )),
    }
}
