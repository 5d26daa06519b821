//! Every registered game is known to every consumer: its declaration is valid, the checker and
//! the language server see its bindings (they share `Registry::signatures`), and a harness of it
//! under `harnesses/` checks.

use std::path::Path;

use harness::games::Registry;
use harness::load::Sources;

#[test]
fn every_registered_game_is_declared_and_known_to_the_checker() {
    let registry = Registry::standard();
    let signatures = registry.signatures();
    let runtime: Vec<String> = harness::report::runtime_metrics()
        .into_iter()
        .map(|m| m.name)
        .collect();
    for game in registry.games() {
        let manifest = game.manifest();
        manifest
            .validate()
            .unwrap_or_else(|error| panic!("{}: {error}", game.name()));
        for metric in &manifest.metrics {
            assert!(
                !runtime.contains(&metric.name),
                "{}: metric `{}` has the name of a runtime cost counter",
                game.name(),
                metric.name
            );
        }
        assert!(
            signatures.games.iter().any(|sig| sig.name == game.name()),
            "{} is missing from the signatures the checker and the language server use",
            game.name()
        );
        assert!(
            !game.instances().is_empty(),
            "{} has no instance",
            game.name()
        );
    }
}

#[test]
fn every_registered_game_has_a_harness_that_checks() {
    let registry = Registry::standard();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../harnesses");
    let mut files = Vec::new();
    let mut problems = Vec::new();
    harness::load::collect(&root, &mut files, &mut problems);
    assert!(problems.is_empty(), "{problems:?}");
    for game in registry.games() {
        let using: Vec<&std::path::PathBuf> = files
            .iter()
            .filter(|file| {
                std::fs::read_to_string(file)
                    .is_ok_and(|text| text.contains(&format!("use game {}\n", game.name())))
            })
            .collect();
        assert!(
            !using.is_empty(),
            "no harness under harnesses/ uses game {}",
            game.name()
        );
        for file in using {
            // A file may use another module of its folder, so it is checked with the folder,
            // as the module its header declares.
            let dir = file.parent().expect("a folder");
            let sources = Sources::load(Some(&dir.display().to_string())).expect("readable");
            let text = std::fs::read_to_string(file).expect("readable");
            let module = text
                .lines()
                .find_map(|line| line.strip_prefix("harness "))
                .map(str::trim);
            harness::load::compile(&registry, &sources, module)
                .unwrap_or_else(|e| panic!("{}: {e:?}", file.display()));
        }
    }
}
