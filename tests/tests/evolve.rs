//! `harness evolve` and its archive: deterministic runs, the retention rule re-checked by
//! `verify`, the frontier, a second game, and a thousand offline mutations that never make the
//! toolchain fail internally.

use std::path::Path;

use harness::evolve::{
    Archive, Config, Generator, Metrics, Mode, OPERATORS, evolve, mutate, retains,
};
use harness::games::Registry;
use harness::load::Sources;
use harness::validate::{Options, validate};
use harness_compiler::protocol::Protocol;
use harness_runtime::RngStreams;

fn bank(game: &str) -> Vec<Sources> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../harnesses/jit")
        .join(game);
    harness::load::read_bank(&dir).unwrap_or_else(|e| panic!("{e}"))
}

fn config(game: &str, instances: &[&str], reward: &str, mode: Mode) -> Config {
    Config {
        game: game.into(),
        instances: instances.iter().map(|s| s.to_string()).collect(),
        seeds: 3,
        rounds: 5,
        candidates: 3,
        refs: 3,
        repair_rounds: 2,
        mode,
        generator: Generator::Mutate,
        seed: 0,
        reward: reward.into(),
        smoke: instances[0].into(),
        jobs: 2,
    }
}

fn metrics(reward: f64, latency: f64, cost: f64) -> Metrics {
    Metrics {
        reward,
        reward_ci: [reward, reward],
        latency,
        cost,
        turns: 0,
        steps: 0,
        episodes: 1,
        errors: 0,
    }
}

#[test]
fn the_retention_rule_needs_the_reward_and_a_strict_improvement() {
    let incumbent = metrics(0.5, 5.0, 100.0);
    assert!(retains(&metrics(0.6, 9.0, 900.0), &incumbent));
    assert!(retains(&metrics(0.5, 4.0, 100.0), &incumbent));
    assert!(retains(&metrics(0.5, 5.0, 99.0), &incumbent));
    assert!(!retains(&metrics(0.5, 5.0, 100.0), &incumbent));
    assert!(!retains(&metrics(0.49, 1.0, 1.0), &incumbent));
}

#[test]
fn evolving_twice_writes_identical_archives_that_verify() {
    let registry = Registry::standard();
    let config = config("search", &["n16-p25", "n32-p20"], "score", Mode::Streaming);
    let first = evolve(&registry, &bank("search"), &config).unwrap_or_else(|e| panic!("{e}"));
    let second = evolve(&registry, &bank("search"), &config).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(first, second);
    assert_eq!(first.rounds.len(), 5);
    assert!(first.index.entries.len() > 5, "{:?}", first.index);
    assert_eq!(first.verify(), Vec::<String>::new());
    // The folder reads back as the archive it was written from.
    let dir = std::env::temp_dir().join(format!("harness-evolve-{}", std::process::id()));
    first.write(&dir).unwrap_or_else(|e| panic!("{e}"));
    let back = Archive::read(&dir).unwrap_or_else(|e| panic!("{e}"));
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(back.index, first.index);
    assert_eq!(back.rounds, first.rounds);
    assert_eq!(back.verify(), Vec::<String>::new());
    // The frontier holds the incumbent and no entry it dominates.
    let frontier = first.frontier();
    let incumbent = first.index.incumbent.clone().unwrap_or_default();
    assert!(frontier.iter().any(|e| e.id == incumbent));
    for a in &frontier {
        for b in &frontier {
            let (m, n) = (a.metrics.as_ref().unwrap(), b.metrics.as_ref().unwrap());
            let dominates = m.reward >= n.reward
                && m.latency <= n.latency
                && m.cost <= n.cost
                && (m.reward > n.reward || m.latency < n.latency || m.cost < n.cost);
            assert!(!dominates, "{} dominates {} on the frontier", a.id, b.id);
        }
    }
}

#[test]
fn verify_finds_a_retention_decision_that_breaks_the_rule() {
    let registry = Registry::standard();
    let config = config("search", &["n16-p10"], "score", Mode::Streaming);
    let mut archive = evolve(&registry, &bank("search"), &config).unwrap_or_else(|e| panic!("{e}"));
    let round = archive
        .rounds
        .iter_mut()
        .find(|r| r.decision == "kept the incumbent")
        .unwrap_or_else(|| panic!("no round kept the incumbent"));
    // Claim the rejected candidate was retained.
    round.incumbent_after = round.selected.clone();
    assert!(!archive.verify().is_empty());
}

#[test]
fn static_mode_keeps_the_banks_incumbent() {
    let registry = Registry::standard();
    let config = config("search", &["n16-p25"], "score", Mode::Static);
    let archive = evolve(&registry, &bank("search"), &config).unwrap_or_else(|e| panic!("{e}"));
    let start = archive.rounds[0]
        .incumbent_before
        .as_ref()
        .map(|(id, _)| id.clone());
    assert!(archive.rounds.iter().all(|r| r.incumbent_after == start));
    assert_eq!(archive.verify(), Vec::<String>::new());
}

#[test]
fn evolution_runs_on_a_second_game() {
    let registry = Registry::standard();
    let config = config("finance_ecl", &["default"], "success", Mode::Streaming);
    let archive =
        evolve(&registry, &bank("finance_ecl"), &config).unwrap_or_else(|e| panic!("{e}"));
    let incumbent = archive.index.incumbent.clone().unwrap_or_default();
    let reward = archive
        .items
        .iter()
        .find(|(e, _)| e.id == incumbent)
        .and_then(|(e, _)| e.metrics.as_ref())
        .map(|m| m.reward);
    assert_eq!(reward, Some(1.0));
    assert_eq!(archive.verify(), Vec::<String>::new());
}

#[test]
fn a_thousand_offline_mutations_never_fail_internally() {
    let registry = Registry::standard();
    let parents = bank("search");
    let options = Options {
        game: "search",
        protocol: Some(Protocol::Jit4),
        smoke: Some(("n16-p10", 0)),
        max_turns: 200,
    };
    let streams = RngStreams::new(11);
    let mut internal = Vec::new();
    let mut made = 0;
    for i in 0..1000usize {
        let mut stream = streams.stream(&format!("mutation/{i}"));
        let parent = &parents[i % parents.len()];
        let others: Vec<Sources> = parents
            .iter()
            .filter(|p| p.name != parent.name)
            .cloned()
            .collect();
        let operator = OPERATORS[i % OPERATORS.len()];
        let Some((change, child)) = mutate(parent, &others, operator, &mut stream) else {
            continue;
        };
        made += 1;
        let report = validate(&registry, &child, &options);
        for finding in report.errors() {
            if finding.code == "E9999" || finding.code == "R0012" {
                internal.push(format!(
                    "{}: {change}: {}: {}",
                    parent.name, finding.code, finding.message
                ));
            }
        }
    }
    assert!(made >= 900, "only {made} mutations");
    assert!(internal.is_empty(), "{}", internal.join("\n"));
}

#[test]
fn the_template_generator_draws_role_modules_from_the_references() {
    let registry = Registry::standard();
    let mut config = config("search", &["n16-p25"], "score", Mode::Streaming);
    config.generator = Generator::Template;
    let archive = evolve(&registry, &bank("search"), &config).unwrap_or_else(|e| panic!("{e}"));
    let made: Vec<_> = archive
        .items
        .iter()
        .filter(|(e, _)| e.generator == "template")
        .collect();
    assert!(!made.is_empty(), "{:#?}", archive.rounds);
    assert!(made.iter().all(|(e, _)| e.change.contains(" from ")));
    assert_eq!(archive.verify(), Vec::<String>::new());
}
