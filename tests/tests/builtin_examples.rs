//! Every example of the builtin reference (`docs/builtins.md`, generated from the prelude's
//! registry) is run: each is a `Bool` expression stated to be `true`, checked by the checker,
//! evaluated by the interpreter with the prelude's natives, and required to call the builtin it
//! documents (as the checker resolved its names).

use std::collections::{BTreeMap, BTreeSet};

use harness::games::Registry;
use harness::load::{Sources, compile};
use harness_compiler::Workspace;
use harness_compiler::ide::{self, Symbol};
use harness_runtime::{Agent, Effect, Limits, Machine, Observation, Switches, Value};
use harness_stdlib::prelude::{EXAMPLE_DECLARATIONS, PRELUDE};

/// A game that nothing is asked of: the examples read no game.
struct Nothing;

impl harness_runtime::Game for Nothing {
    fn query(&self, name: &str, _: &[Value]) -> Result<Value, String> {
        Err(format!("no query {name}"))
    }
    fn view_version(&self) -> u64 {
        0
    }
    fn apply(&mut self, _: &Effect) -> Result<(), String> {
        Err("no effects".into())
    }
    fn take_observations(&mut self) -> Vec<Observation> {
        Vec::new()
    }
    fn is_over(&self) -> bool {
        true
    }
    fn metrics(&self) -> BTreeMap<String, Value> {
        BTreeMap::new()
    }
}

/// A harness with one computed value per example, `example<i>` for `PRELUDE[i]`, importing
/// the standard-library builtins the examples need.
fn examples_harness() -> String {
    let mut imports: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for entry in PRELUDE {
        if let Some(module) = entry.module {
            let short = entry.name.rsplit('.').next().unwrap_or(entry.name);
            imports.entry(module).or_default().insert(short);
        }
    }
    let mut text = String::from("harness builtin.examples\n");
    for (module, names) in &imports {
        let names: Vec<&str> = names.iter().copied().collect();
        text.push_str(&format!("use {module}.{{{}}}\n", names.join(", ")));
    }
    text.push_str(EXAMPLE_DECLARATIONS);
    text.push_str("\nlayer examples {\n");
    for (i, entry) in PRELUDE.iter().enumerate() {
        text.push_str(&format!(
            "  computed example{i}: Bool = {}\n",
            entry.example
        ));
    }
    text.push_str("}\n");
    text
}

#[test]
fn every_builtin_example_holds_and_calls_its_builtin() {
    let text = examples_harness();
    let path = "examples.harness";
    let registry = Registry::standard();

    // Each example calls the builtin it documents: the checker's record of the example's line
    // names it.
    let mut workspace = Workspace::new(registry.signatures());
    workspace.set_file(path, &text);
    let errors: Vec<String> = workspace
        .diagnostics()
        .iter()
        .filter(|d| d.is_error())
        .map(|d| format!("{}: {}", &text[d.span.range()], d.message))
        .collect();
    assert!(errors.is_empty(), "the examples do not check: {errors:#?}");
    let mut called: BTreeMap<usize, BTreeSet<String>> = BTreeMap::new();
    for token in ide::semantic_tokens(&workspace, path) {
        if let Some((Symbol::Builtin(name), _)) = ide::symbol_at(&workspace, path, token.span.start)
        {
            let line = text[..token.span.start as usize].matches('\n').count();
            called.entry(line).or_default().insert(name);
        }
    }
    let first_line = text
        .lines()
        .position(|l| l.starts_with("  computed example0:"))
        .unwrap_or_default();
    let mut wrong = Vec::new();
    for (i, entry) in PRELUDE.iter().enumerate() {
        let names = called.get(&(first_line + i)).cloned().unwrap_or_default();
        if !names.contains(entry.name) {
            wrong.push(format!(
                "{}: `{}` calls {names:?}",
                entry.name, entry.example
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "examples that do not call their builtin: {wrong:#?}"
    );

    // Each example evaluates to `true`.
    let sources = Sources {
        name: path.into(),
        files: vec![(path.into(), text.clone())],
    };
    let program = compile(&registry, &sources, None).unwrap_or_else(|e| panic!("{e}"));
    let machine = Machine::new(
        program,
        harness_stdlib::prelude::natives(),
        &Switches::default(),
        Limits::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let game = Nothing;
    let mut agent = Agent::start(&machine, &game).unwrap_or_else(|e| panic!("{e}"));
    let mut failed = Vec::new();
    for (i, entry) in PRELUDE.iter().enumerate() {
        match agent.computed(&game, &format!("example{i}")) {
            Some(Ok(Value::Bool(true))) => {}
            other => failed.push(format!(
                "{}: `{}` gives {other:?}",
                entry.name, entry.example
            )),
        }
    }
    assert!(failed.is_empty(), "examples that do not hold: {failed:#?}");
}
