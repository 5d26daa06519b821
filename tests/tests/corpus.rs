//! The one runner of the data-driven corpus: every case under `tests/cases`, every harness under
//! `harnesses/`, and the coverage of the diagnostic table.
//!
//! Regenerate the snapshots with `INSTA_UPDATE=always cargo test -p harness-tests` or review
//! them with `cargo insta review`.

use std::path::{Path, PathBuf};

use harness_compiler::codes::Code;
use harness_tests::{check, expectations, findings, render};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn harness_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for path in paths {
        if path.is_dir() {
            harness_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "harness") {
            out.push(path);
        }
    }
}

fn relative(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string()
}

#[test]
fn cases_report_what_they_expect() {
    let mut files = Vec::new();
    harness_files(&root().join("cases"), &mut files);
    assert!(!files.is_empty(), "no cases found under tests/cases");
    // Expectations first, for every case, so one run reports every case that disagrees; then
    // the snapshots, which stop at the first difference.
    let mut failures = Vec::new();
    let mut snapshots = Vec::new();
    for path in &files {
        let name = relative(path);
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{name}: {e}"));
        let diagnostics = check(&name, &text);
        let expected = expectations(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        let found = findings(&text, &diagnostics);
        if expected != found {
            failures.push(format!(
                "{name}:\n  expected {expected:?}\n  found    {found:?}\n{}",
                render(&diagnostics)
            ));
        }
        let snapshot = format!(
            "----- SOURCE -----\n{text}\n----- DIAGNOSTICS -----\n{}",
            render(&diagnostics)
        );
        snapshots.push((path, name, snapshot));
    }
    assert!(
        failures.is_empty(),
        "{} case(s) failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    for (path, name, snapshot) in snapshots {
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut settings = insta::Settings::clone_current();
        settings.set_snapshot_path(path.parent().unwrap_or(Path::new(".")));
        settings.set_prepend_module_to_snapshot(false);
        settings.set_omit_expression(true);
        settings.set_description(format!(
            "{name}: the rendered diagnostics of this case. Regenerate with `INSTA_UPDATE=always cargo test -p harness-tests` or `cargo insta review`."
        ));
        settings.bind(|| insta::assert_snapshot!(stem, snapshot));
    }
}

#[test]
fn every_code_has_a_case_and_a_page() {
    let mut files = Vec::new();
    harness_files(&root().join("cases/diagnostics"), &mut files);
    let mut missing = Vec::new();
    for code in Code::ALL {
        let info = code.info();
        for (what, text) in [
            ("title", info.title),
            ("explanation", info.explanation),
            ("example", info.example),
            ("fix", info.fix),
        ] {
            if text.trim().is_empty() {
                missing.push(format!("{}: empty {what}", info.code));
            }
        }
        if *code == Code::Internal {
            // No program should trigger an internal error; its page is checked above.
            continue;
        }
        let prefix = format!("{}-", info.code);
        let case = files.iter().find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(&prefix))
        });
        match case {
            None => missing.push(format!(
                "{}: no case named tests/cases/diagnostics/{prefix}*.harness",
                info.code
            )),
            Some(path) => {
                let text = std::fs::read_to_string(path).unwrap_or_default();
                let expected = expectations(&text).unwrap_or_default();
                if !expected.iter().any(|(_, _, c)| c == info.code) {
                    missing.push(format!(
                        "{}: {} does not expect it",
                        info.code,
                        relative(path)
                    ));
                }
            }
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

#[test]
fn table_examples_trigger_their_code() {
    let mut wrong = Vec::new();
    for code in Code::ALL {
        let info = code.info();
        if *code == Code::Internal {
            continue;
        }
        let diagnostics = check("example.harness", info.example);
        if !diagnostics.iter().any(|d| d.code == *code) {
            wrong.push(format!(
                "{}: its example reports {:?}",
                info.code,
                diagnostics
                    .iter()
                    .map(|d| d.code.as_str())
                    .collect::<Vec<_>>()
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn harnesses_are_in_the_canonical_format() {
    let mut files = Vec::new();
    harness_files(&root().join("../harnesses"), &mut files);
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        match harness_grammar::format::format(&text) {
            Ok(formatted) => assert!(
                formatted == text,
                "{} is not formatted; run `harness fmt harnesses`",
                relative(path)
            ),
            Err(error) => panic!("{} does not format: {error:?}", relative(path)),
        }
    }
}

#[test]
fn harnesses_check_cleanly() {
    let mut files = Vec::new();
    harness_files(&root().join("../harnesses"), &mut files);
    assert!(!files.is_empty(), "no harnesses found");
    let mut workspace = harness_compiler::Workspace::new(harness_tests::signatures());
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        workspace.set_file(&relative(path), &text);
    }
    let diagnostics = workspace.diagnostics();
    assert!(diagnostics.is_empty(), "{}", render(&diagnostics));
    for (module, _) in workspace.modules() {
        if let Err(errors) = workspace.program(&module) {
            panic!("{module} does not lower:\n{}", render(&errors));
        }
    }
}

#[test]
fn battleship_mini_lowers_to_the_expected_program() {
    let path = root().join("../harnesses/examples/battleship_mini.harness");
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let mut workspace = harness_compiler::Workspace::new(harness_tests::signatures());
    workspace.set_file("battleship_mini.harness", &text);
    let program = match workspace.program("examples.battleship_mini") {
        Ok(program) => program,
        Err(errors) => panic!("{}", render(&errors)),
    };
    let names: Vec<&str> = program.layers.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, ["belief", "planning", "reflection"]);
    assert_eq!(program.game.as_deref(), Some("battleship"));
    let reflection = &program.layers[2];
    assert_eq!(reflection.below.len(), 2);
    assert_eq!(reflection.revise.len(), 1);
    assert_eq!(program.layers[0].models.len(), 1);
    assert_eq!(program.layers[0].handlers.len(), 2);
    assert_eq!(program.layers[1].decide.len(), 1);
    // Every span points at the text it was lowered from, in the file.
    let slice = |span: harness_compiler::ir::SrcSpan| &text[span.start as usize..span.end as usize];
    let shoot = program
        .actions
        .iter()
        .find(|a| a.name == "shoot")
        .map(|a| a.span);
    assert!(shoot.is_some_and(|span| slice(span).starts_with("action shoot(cell: Cell)")));
    let ask = program.actions.iter().find(|a| a.name == "ask");
    assert_eq!(ask.map(|a| a.requires.len()), Some(2));
    let best = program
        .computed
        .iter()
        .find(|c| c.name == "best_question")
        .map(|c| c.body.expr.span);
    assert!(best.is_some_and(|span| slice(span).starts_with("game.questions().filter")));
    assert_eq!(slice(reflection.span), "reflection");
    // Ids index the arenas: each layer's members are owned by it.
    for (index, layer) in program.layers.iter().enumerate() {
        for id in &layer.state {
            assert_eq!(program.state[id.index()].layer.index(), index);
        }
        for id in &layer.computed {
            assert_eq!(program.computed[id.index()].layer.index(), index);
        }
    }
}

#[test]
fn the_grammar_corpus_never_makes_the_checker_fail_internally() {
    // The parser's corpus holds valid fragments and malformed files; the checker may reject
    // them, but never with an internal error.
    let mut files = Vec::new();
    harness_files(&root().join("../dsl-grammar/tests/corpus"), &mut files);
    assert!(!files.is_empty(), "no grammar corpus found");
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let diagnostics = check(&relative(path), &text);
        let internal: Vec<_> = diagnostics
            .iter()
            .filter(|d| d.code == Code::Internal)
            .collect();
        assert!(internal.is_empty(), "{}: {internal:?}", relative(path));
    }
}

/// `docs/builtins.md` is the registry's reference page as generated now; with
/// `UPDATE_REFERENCE=1` the test writes it first.
#[test]
fn builtin_reference_is_generated_from_the_registry() {
    let path = root().join("../docs/builtins.md");
    let page = harness_stdlib::prelude::reference_page();
    if std::env::var_os("UPDATE_REFERENCE").is_some() {
        std::fs::write(&path, &page).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == page,
        "docs/builtins.md is stale or missing: regenerate it with \
         `UPDATE_REFERENCE=1 cargo test -p harness-tests builtin_reference`"
    );
    // Every entry of the registry is on the page, with its signature and example.
    for entry in harness_stdlib::prelude::PRELUDE {
        assert!(
            page.contains(entry.sig) && page.contains(entry.example),
            "{} is missing from the page",
            entry.name
        );
    }
}
