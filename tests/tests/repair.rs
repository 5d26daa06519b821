//! The repair corpus: seeded single-fault mutants of the search bank (`harnesses/jit/search`),
//! repaired offline in at most two rounds, with the share valid after 0, 1 and 2 rounds per
//! diagnostic code; `harness patch`'s rules; and a thousand random mutants that never make the
//! toolchain fail internally.
//!
//! The corpus is committed under `tests/evolve/broken/` and must equal what the generator
//! makes; regenerate it with `UPDATE_REPAIR_CORPUS=1 cargo test -p harness-tests repair::`.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

use harness::games::Registry;
use harness::load::Sources;
use harness::mutate::{Mutant, mutants};
use harness::patch::{Edit, LayerReplacement, Patch, apply};
use harness::repair::repair;
use harness::validate::{Options, validate};
use harness_compiler::protocol::Protocol;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn bank() -> Vec<Sources> {
    let dir = root().join("../harnesses/jit/search");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "harness"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|path| {
            let name = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{e}"));
            Sources {
                name: name.clone(),
                files: vec![(format!("{name}.harness"), text)],
            }
        })
        .collect()
}

fn options() -> Options<'static> {
    Options {
        game: "search",
        protocol: Some(Protocol::Jit4),
        smoke: Some(("n16-p10", 0)),
        max_turns: 200,
    }
}

/// The committed corpus file of a mutant: its fault in a comment line, then its text.
fn corpus_file(index: usize, mutant: &Mutant) -> (String, String) {
    let name = format!("{index:02}-{}-{}.harness", mutant.kind, mutant.parent);
    let text = format!(
        "// parent harnesses/jit/search/{}.harness; fault: {}\n{}",
        mutant.parent, mutant.what, mutant.sources.files[0].1
    );
    (name, text)
}

/// A mutant as read back from its corpus file, with the comment line removed.
fn from_corpus(name: &str, text: &str) -> Sources {
    let body = text.split_once('\n').map_or("", |(_, rest)| rest);
    Sources {
        name: name.to_string(),
        files: vec![(name.to_string(), body.to_string())],
    }
}

#[test]
fn the_repair_corpus_is_what_the_seeded_generator_makes() {
    let corpus = mutants(&bank(), 0, 48);
    assert!(corpus.len() >= 40, "only {} mutants", corpus.len());
    let dir = root().join("evolve/broken");
    let expected: Vec<(String, String)> = corpus
        .iter()
        .enumerate()
        .map(|(i, m)| corpus_file(i, m))
        .collect();
    if std::env::var_os("UPDATE_REPAIR_CORPUS").is_some() {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        for (name, text) in &expected {
            std::fs::write(dir.join(name), text).unwrap_or_else(|e| panic!("{e}"));
        }
    }
    let mut committed: Vec<(String, String)> = std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .map(|e| {
                    (
                        e.file_name().to_string_lossy().into_owned(),
                        std::fs::read_to_string(e.path()).unwrap_or_default(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    committed.sort();
    assert!(
        committed == expected,
        "tests/evolve/broken is stale or missing: regenerate it with \
         `UPDATE_REPAIR_CORPUS=1 cargo test -p harness-tests repair::`"
    );
}

#[test]
fn bounded_repair_makes_every_did_you_mean_and_range_fault_valid_in_one_round() {
    let registry = Registry::standard();
    let parents = bank();
    let dir = root().join("evolve/broken");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect();
    names.sort();
    assert!(names.len() >= 40, "only {} mutants", names.len());
    // Per first error code: mutants, valid after 0, after at most 1, after at most 2 rounds.
    let mut table: BTreeMap<String, [usize; 4]> = BTreeMap::new();
    let mut slow = Vec::new();
    for name in &names {
        let text = std::fs::read_to_string(dir.join(name)).unwrap_or_default();
        let mutant = from_corpus(name, &text);
        let parent_name = name
            .trim_end_matches(".harness")
            .rsplit('-')
            .next()
            .unwrap_or_default();
        let parent = parents
            .iter()
            .find(|p| p.name == parent_name)
            .unwrap_or_else(|| panic!("{name}: no parent `{parent_name}`"));
        let parent = Sources {
            name: parent.name.clone(),
            files: vec![(name.clone(), parent.files[0].1.clone())],
        };
        let repaired = repair(&registry, &mutant, &options(), Some(&parent), 2);
        let first = validate(&registry, &mutant, &options());
        let code = first
            .errors()
            .next()
            .map_or("(none)".to_string(), |f| f.code.clone());
        let row = table.entry(code.clone()).or_default();
        row[0] += 1;
        for (rounds, cell) in row.iter_mut().skip(1).enumerate() {
            *cell += usize::from(repaired.valid_after.is_some_and(|n| n <= rounds));
        }
        let one_round = [
            "typo-name",
            "typo-method",
            "typo-variant",
            "typo-role",
            "range",
        ]
        .iter()
        .any(|kind| name.contains(&format!("-{kind}-")));
        if one_round && repaired.valid_after.is_none_or(|n| n > 1) {
            slow.push(format!(
                "{name}: first {code}, valid after {:?}, rounds {:#?}, last report {:?}",
                repaired.valid_after,
                repaired.rounds,
                repaired.report.errors().collect::<Vec<_>>()
            ));
        }
    }
    let mut out = String::from("code     mutants  valid@0  valid@1  valid@2\n");
    for (code, [n, v0, v1, v2]) in &table {
        let _ = writeln!(out, "{code:8} {n:7} {v0:8} {v1:8} {v2:8}");
    }
    let total: [usize; 4] = table.values().fold([0; 4], |mut acc, row| {
        for (a, r) in acc.iter_mut().zip(row) {
            *a += r;
        }
        acc
    });
    let _ = writeln!(
        out,
        "all      {:7} {:8} {:8} {:8}",
        total[0], total[1], total[2], total[3]
    );
    assert!(slow.is_empty(), "{out}\n{}", slow.join("\n"));
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(root().join("evolve"));
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.set_description(
        "Mutants of tests/evolve/broken by the code of their first error, and how many are valid \
         after 0, 1 and 2 offline repair rounds (harness repair --rounds 2 --smoke n16-p10).",
    );
    settings.bind(|| insta::assert_snapshot!("repair-table", out));
}

#[test]
fn a_patch_refuses_overlaps_and_formats_what_it_changes() {
    let parent = bank().remove(0);
    let file = parent.files[0].0.clone();
    let text = parent.files[0].1.clone();
    let at = text
        .find("lo: Int = 0")
        .unwrap_or_else(|| panic!("no `lo` in the bank's first harness"));
    let edit = |start: usize, end: usize, text: &str| Edit {
        file: file.clone(),
        start,
        end,
        text: text.to_string(),
    };
    // Two edits that overlap, or insert at one offset, are refused.
    for (a, b) in [((at, at + 6), (at + 4, at + 8)), ((at, at), (at, at))] {
        let patch = Patch {
            edits: vec![edit(a.0, a.1, "x"), edit(b.0, b.1, "y")],
            ..Patch::default()
        };
        assert!(apply(&parent, &patch).is_err());
    }
    // An edit past the end or an unknown file is refused.
    assert!(
        apply(
            &parent,
            &Patch {
                edits: vec![edit(0, text.len() + 1, "")],
                ..Patch::default()
            }
        )
        .is_err()
    );
    // An edit applies and the result is formatted (the spaces are normalised).
    let patch = Patch {
        edits: vec![edit(at, at + "lo: Int = 0".len(), "lo:   Int =    1")],
        ..Patch::default()
    };
    let applied = apply(&parent, &patch).unwrap_or_else(|e| panic!("{e}"));
    assert!(applied.sources.files[0].1.contains("lo: Int = 1"));
    assert!(applied.unformatted.is_empty());
    // A whole layer is replaced by name.
    let patch = Patch {
        layers: vec![LayerReplacement {
            file: file.clone(),
            layer: "planning".into(),
            text: "layer planning role planning needs memory {\n  computed directive: Option<Int> = Some(lo)\n}".into(),
        }],
        ..Patch::default()
    };
    let applied = apply(&parent, &patch).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        applied.sources.files[0]
            .1
            .contains("Option<Int> = Some(lo)")
    );
    let report = validate(&Registry::standard(), &applied.sources, &options());
    assert!(report.valid, "{report:#?}");
}

#[test]
fn a_thousand_random_mutants_never_fail_internally() {
    let registry = Registry::standard();
    let corpus = mutants(&bank(), 7, 1000);
    assert!(
        corpus.len() >= 500,
        "only {} distinct mutants",
        corpus.len()
    );
    let mut internal = Vec::new();
    for mutant in &corpus {
        let report = validate(&registry, &mutant.sources, &options());
        for finding in report.errors() {
            if finding.code == "E9999" || finding.code == "R0012" {
                internal.push(format!(
                    "{}: {}: {}",
                    mutant.what, finding.code, finding.message
                ));
            }
        }
    }
    assert!(internal.is_empty(), "{}", internal.join("\n"));
}
