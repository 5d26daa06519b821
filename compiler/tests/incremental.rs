//! Edit-sequence tests: after an edit, only the queries the edit affects run again.

use harness_compiler::Workspace;
use harness_compiler::signatures::SignatureSet;

const PLANNER: &str = "\
harness demo.planner

layer belief {
  state { n: Int = 0 }
  computed double: Int = n * 2
  computed triple: Int = n * 3
  computed total: Int = double + triple
  action bump() { patch n += 1 }
  decide { when total < 100 => bump() }
}
";

const OTHER: &str = "\
harness demo.other

const LIMIT: Int = 3
fn twice(x: Int) -> Int = x * 2
layer l {
  computed value: Int = twice(LIMIT)
  decide { }
}
";

fn workspace() -> Workspace {
    let mut workspace = Workspace::with_query_log(SignatureSet::default());
    workspace.set_file("planner.harness", PLANNER);
    workspace.set_file("other.harness", OTHER);
    workspace
}

/// The names of the queries in a log, with how often each ran.
fn counts(log: &[String]) -> std::collections::BTreeMap<String, usize> {
    let mut out = std::collections::BTreeMap::new();
    for entry in log {
        let name = entry.split('(').next().unwrap_or(entry).to_owned();
        *out.entry(name).or_insert(0) += 1;
    }
    out
}

#[test]
fn editing_one_computed_body_rechecks_only_that_member() {
    let mut workspace = workspace();
    assert!(workspace.diagnostics().iter().all(|d| !d.is_error()));
    workspace.database().start_log();

    // A body edit that also changes the length, so every later member moves in the file.
    workspace.set_file("planner.harness", &PLANNER.replace("n * 3", "n * 3 + 1"));
    let diagnostics = workspace.diagnostics();
    assert!(diagnostics.iter().all(|d| !d.is_error()), "{diagnostics:?}");

    let log = workspace.database().take_log();
    let ran = counts(&log);
    // The edited file is split again, and only the edited member's group is parsed and checked.
    assert_eq!(ran.get("outline"), Some(&1), "{log:#?}");
    assert_eq!(ran.get("parsed_group"), Some(&1), "{log:#?}");
    assert_eq!(ran.get("group_signature"), Some(&1), "{log:#?}");
    assert_eq!(ran.get("check_group"), Some(&1), "{log:#?}");
    // The file's signatures and facts are collected again but come out equal, so neither the
    // environment nor the whole-program checks re-run, and the other file is not looked at.
    assert_eq!(ran.get("file_signature"), Some(&1), "{log:#?}");
    assert_eq!(ran.get("group_keys"), Some(&1), "{log:#?}");
    assert_eq!(ran.get("file_facts"), Some(&1), "{log:#?}");
    assert_eq!(ran.get("environment"), None, "{log:#?}");
    assert_eq!(ran.get("global_checks"), None, "{log:#?}");
    assert_eq!(ran.get("file_diagnostics"), Some(&1), "{log:#?}");
    // The edited module's cost bound is recomputed (the added `+ 1` is one more step, so the
    // E0901 list is rebuilt too) from a view of its chunk checks: no program is lowered.
    assert_eq!(ran.get("program"), None, "{log:#?}");
    assert_eq!(ran.get("cost"), Some(&1), "{log:#?}");
    assert_eq!(ran.get("cost_diagnostics"), Some(&1), "{log:#?}");
    // Of its analyses per layer, only those of the computed values of the edited layer, whose
    // chunks are new, are made again.
    assert_eq!(ran.get("layer_reads"), Some(&1), "{log:#?}");
    assert_eq!(ran.get("layer_cost"), Some(&1), "{log:#?}");
    // The slots of the edited layer are settled again, as the layer's chunks are new.
    assert_eq!(ran.get("slot_shapes"), Some(&1), "{log:#?}");
    assert_eq!(ran.len(), 13, "no other query runs: {log:#?}");
}

#[test]
fn an_edit_that_leaves_the_bound_equal_does_not_rebuild_the_cost_diagnostics() {
    let mut workspace = workspace();
    workspace.diagnostics();
    workspace.database().start_log();
    // The same work in another spelling: the checks change (their spans move), the bound not.
    workspace.set_file("planner.harness", &PLANNER.replace("n * 3", "n  *  3"));
    workspace.diagnostics();
    let log = workspace.database().take_log();
    let ran = counts(&log);
    assert_eq!(ran.get("cost"), Some(&1), "{log:#?}");
    assert_eq!(ran.get("cost_diagnostics"), None, "{log:#?}");
}

#[test]
fn diagnostics_and_the_cost_bound_share_one_analysis() {
    let workspace = workspace();
    workspace.database().start_log();
    assert!(workspace.diagnostics().iter().all(|d| !d.is_error()));
    let report = workspace.cost("demo.planner").expect("the planner checks");
    assert!(report.turn > 0, "{report:?}");
    workspace
        .program("demo.planner")
        .expect("the planner checks");
    let ran = counts(&workspace.database().take_log());
    // One analysis per module, though the diagnostics and the report were each asked for; the
    // program is lowered only for the one module asked for, as the analysis does not read it.
    assert_eq!(ran.get("program"), Some(&1), "{ran:?}");
    assert_eq!(ran.get("cost"), Some(&2), "{ran:?}");
    assert_eq!(ran.get("cost_diagnostics"), Some(&1), "{ran:?}");
    // Asking again runs nothing.
    workspace.diagnostics();
    workspace.cost("demo.planner").expect("the planner checks");
    workspace
        .program("demo.planner")
        .expect("the planner checks");
    assert_eq!(workspace.database().take_log(), Vec::<String>::new());
}

#[test]
fn an_edit_to_one_module_leaves_the_cost_of_another_alone() {
    let mut workspace = workspace();
    workspace.diagnostics();
    workspace
        .cost("demo.other")
        .expect("the other module checks");
    workspace.database().start_log();
    workspace.set_file("planner.harness", &PLANNER.replace("n * 3", "n * 3 + 1"));
    workspace.diagnostics();
    workspace
        .cost("demo.other")
        .expect("the other module checks");
    let log = workspace.database().take_log();
    // Only the edited module is analysed again.
    let ran = counts(&log);
    assert_eq!(ran.get("cost"), Some(&1), "{log:#?}");
}

#[test]
fn a_new_cost_limit_reruns_the_analysis_but_not_the_lowering() {
    let mut workspace = workspace();
    assert!(
        workspace
            .diagnostics()
            .iter()
            .all(|d| d.code.as_str() != "E0901")
    );
    workspace.database().start_log();
    workspace.set_cost_limit(1);
    let diagnostics = workspace.diagnostics();
    assert!(
        diagnostics.iter().any(|d| d.code.as_str() == "E0901"),
        "a limit of one step rejects every turn: {diagnostics:?}"
    );
    let ran = counts(&workspace.database().take_log());
    assert_eq!(ran.get("program"), None, "{ran:?}");
    assert_eq!(ran.get("cost"), Some(&2), "{ran:?}");
    assert_eq!(workspace.cost("demo.planner").map(|r| r.limit), Ok(1));
}

#[test]
fn editing_a_declared_type_rechecks_the_readers() {
    let mut workspace = workspace();
    workspace.diagnostics();
    workspace.database().start_log();

    workspace.set_file(
        "planner.harness",
        &PLANNER.replace("computed double: Int", "computed double: Float"),
    );
    let diagnostics = workspace.diagnostics();
    // `double` now disagrees with its body and with `total`, which reads it.
    let codes: Vec<&str> = diagnostics.iter().map(|d| d.code.as_str()).collect();
    assert!(codes.contains(&"E0201"), "{codes:?}");
    assert!(codes.contains(&"E0207"), "{codes:?}");

    let ran = counts(&workspace.database().take_log());
    // A signature changed: every group of the workspace is checked again.
    assert!(ran.get("check_group").copied().unwrap_or(0) > 1, "{ran:?}");
}

#[test]
fn diagnostics_follow_an_edit_and_its_undo() {
    let mut workspace = workspace();
    assert!(workspace.diagnostics().iter().all(|d| !d.is_error()));
    workspace.set_file(
        "planner.harness",
        &PLANNER.replace("double + triple", "doubel + triple"),
    );
    let diagnostics = workspace.file_diagnostics("planner.harness");
    assert_eq!(diagnostics.len(), 2, "{diagnostics:?}");
    assert_eq!(diagnostics[0].code.as_str(), "W0002");
    assert_eq!(diagnostics[1].code.as_str(), "E0101");
    assert_eq!(
        diagnostics[1].help.as_deref(),
        Some("did you mean `double`?")
    );
    let start = PLANNER.find("double + triple").unwrap_or_default() as u32;
    assert_eq!(diagnostics[1].span.start, start);
    workspace.set_file("planner.harness", PLANNER);
    assert!(workspace.diagnostics().iter().all(|d| !d.is_error()));
}

/// A harness `demo.<name>` of `layers` layers, each needing the one before it, with a state slot
/// `count<l>` and the members `members(l)` gives.
fn stack(name: &str, layers: usize, members: impl Fn(usize) -> String) -> String {
    let mut text = format!("harness demo.{name}\n\nconst LIMIT: Int = 1000\n\n");
    for l in 0..layers {
        let needs = if l == 0 {
            String::new()
        } else {
            format!(" needs layer{}", l - 1)
        };
        text.push_str(&format!(
            "layer layer{l}{needs} {{\n  state {{ count{l}: Int = 0 }}\n{}}}\n\n",
            members(l)
        ));
    }
    text
}

/// A harness of `layers` layers of the benchmark's kind, each with computed values, a function,
/// an action and a decide rule.
fn layered(layers: usize) -> String {
    stack("layered", layers, |l| {
        format!(
            "  computed a{l}: Int = count{l} + 1\n  computed b{l}: Int = a{l} * 2\n  fn twice{l}(x: Int) -> Int = x * 2\n  action bump{l}() {{ patch count{l} += twice{l}(b{l}) }}\n  decide {{ when b{l} < LIMIT => bump{l}() }}\n"
        )
    })
}

/// A checked workspace of `layered(layers)` after a one-line edit of layer 1's `a1`, with the
/// queries of the re-check logged.
fn edited_layered(layers: usize) -> Workspace {
    let text = layered(layers);
    let mut workspace = Workspace::with_query_log(SignatureSet::default());
    workspace.set_file("layered.harness", &text);
    assert_eq!(workspace.diagnostics(), Vec::new());
    workspace.database().start_log();
    workspace.set_file(
        "layered.harness",
        &text.replacen(
            "computed a1: Int = count1 + 1",
            "computed a1: Int = count1 + 1 + 1",
            1,
        ),
    );
    assert_eq!(workspace.diagnostics(), Vec::new());
    workspace
}

#[test]
fn a_body_edit_reruns_the_same_queries_whatever_the_size_of_the_file() {
    // The queries an edit re-runs must not grow with the file: only the edited member's group
    // is parsed and checked; the rest are the per-file and whole-program collections.
    let mut ran_by_size = Vec::new();
    for layers in [3, 30] {
        let workspace = edited_layered(layers);
        let log = workspace.database().take_log();
        let ran = counts(&log);
        assert_eq!(ran.get("check_group"), Some(&1), "{log:#?}");
        assert_eq!(ran.get("program"), None, "{log:#?}");
        ran_by_size.push(ran);
    }
    assert_eq!(ran_by_size[0], ran_by_size[1]);
}

#[test]
fn a_body_edit_validates_one_memo_per_group_not_per_member() {
    // After an edit that moves every later member, each unchanged layer's check is found valid
    // as one memo: the validations grow by a few per layer (its check, parse and signature),
    // not by one or more per chunk (a layer of `layered` has six). The edited layer's group is
    // the one check that executes.
    let mut validated_by_size = Vec::new();
    for layers in [3, 30] {
        let workspace = edited_layered(layers);
        let ran = counts(&workspace.database().take_log());
        assert_eq!(ran.get("check_group"), Some(&1), "{ran:?}");
        let validated = counts(&workspace.database().take_validated());
        // Every group but the edited one: the other layers and the two items (the header and
        // the constant), each a group of its own.
        assert_eq!(
            validated.get("check_group"),
            Some(&(layers + 1)),
            "{validated:?}"
        );
        // The cost bound keeps one analysis of each layer's computed values per state of the
        // slots it meets ([`a_body_edit_analyses_again_only_the_computed_values_of_its_layer`])
        // and the shapes of each layer's slots ([`a_body_edit_settles_again_only_the_slots_of_its_layer`]):
        // those are validated per layer too, and counted apart.
        let cost = ["layer_cost", "layer_reads", "slot_shapes"];
        validated_by_size.push((
            validated
                .iter()
                .filter(|(name, _)| !cost.contains(&name.as_str()))
                .map(|(_, n)| n)
                .sum::<usize>(),
            validated.get("layer_reads").copied().unwrap_or(0),
            validated.get("slot_shapes").copied().unwrap_or(0),
        ));
    }
    let per_layer = (validated_by_size[1].0 - validated_by_size[0].0) / 27;
    assert!(
        per_layer <= 3,
        "{per_layer} memo validations per added layer: {validated_by_size:?}"
    );
    // What each layer's computed values read is validated once per layer, and so are the
    // shapes of each layer's slots.
    assert_eq!(
        validated_by_size[1].1 - validated_by_size[0].1,
        27,
        "{validated_by_size:?}"
    );
    assert_eq!(
        validated_by_size[1].2 - validated_by_size[0].2,
        27,
        "{validated_by_size:?}"
    );
}

#[test]
fn cost_diagnostics_follow_an_edit_that_moves_them() {
    // With a limit of one step every phase is over it, at expressions spread over the file;
    // an edit before them that changes the length must move each, as a fresh check places it.
    let text = layered(4);
    let edited = text.replacen(
        "computed a0: Int = count0 + 1",
        "computed a0: Int = count0 + 1 + 2 + 3",
        1,
    );
    let mut workspace = Workspace::new(SignatureSet::default());
    workspace.set_cost_limit(1);
    workspace.set_file("layered.harness", &text);
    let before = workspace.diagnostics();
    assert!(
        before.iter().filter(|d| d.code.as_str() == "E0901").count() > 1,
        "{before:?}"
    );
    workspace.set_file("layered.harness", &edited);
    let after = workspace.diagnostics();
    let mut fresh = Workspace::new(SignatureSet::default());
    fresh.set_cost_limit(1);
    fresh.set_file("layered.harness", &edited);
    let spans = |ds: &[harness_compiler::diagnostic::Diagnostic]| -> Vec<(String, u32, u32)> {
        ds.iter()
            .map(|d| (d.code.as_str().to_owned(), d.span.start, d.span.end))
            .collect()
    };
    assert_eq!(spans(&after), spans(&fresh.diagnostics()));
    assert_ne!(
        spans(&after),
        spans(&before),
        "the edit moves the later expressions"
    );
}

/// The cost analysis is kept per layer: after an edit inside one member's body, only the
/// computed values of its layer are analysed again (in each state of the slots the analysis
/// meets), those of every other layer are reused, and the report is the one a fresh workspace
/// gives for the edited text.
#[test]
fn a_body_edit_analyses_again_only_the_computed_values_of_its_layer() {
    let layers = 30;
    let text = layered(layers);
    // The edit also changes how `count7` grows, a slot that only layer 7 reads.
    let edited = text.replacen(
        "computed a7: Int = count7 + 1",
        "computed a7: Int = count7 + 1 + 1",
        1,
    );
    let (workspace, cold, log) = clean_recheck("layered", &text, &edited);
    let ran = counts(&log);
    let (cold_groups, groups) = (cold["layer_cost"], ran["layer_cost"]);
    assert_eq!(cold_groups, layers * groups, "{log:#?}");
    assert_ne!(workspace.cost("demo.layered"), {
        let mut before = Workspace::new(SignatureSet::default());
        before.set_file("layered.harness", &text);
        before.cost("demo.layered")
    });
}

/// The shapes of the state slots over an episode are settled per group of layers whose patches
/// share slots: after an edit inside one layer, only the slots of that layer are settled again,
/// however many layers the file has, and the report is the one a fresh workspace gives.
#[test]
fn a_body_edit_settles_again_only_the_slots_of_its_layer() {
    for layers in [3, 30] {
        let text = layered(layers);
        // The edit changes how `count1` grows: its patch reads `b1`, which reads `a1`.
        let edited = text.replacen(
            "computed a1: Int = count1 + 1",
            "computed a1: Int = count1 + 1 + 1",
            1,
        );
        let (workspace, cold, log) = clean_recheck("layered", &text, &edited);
        // A cold check settles each layer's slots apart, as no layer's patches read another's.
        assert_eq!(cold.get("slot_shapes"), Some(&layers), "{cold:?}");
        assert_eq!(counts(&log).get("slot_shapes"), Some(&1), "{log:#?}");
        let validated = counts(&workspace.database().take_validated());
        assert_eq!(
            validated.get("slot_shapes"),
            Some(&(layers - 1)),
            "{validated:?}"
        );
    }
}

/// Layers whose patches read each other's slots settle together: an edit inside one settles
/// the slots of both again, in one query, and the report is the one a fresh workspace gives.
#[test]
fn layers_whose_patches_read_each_other_settle_together() {
    let text = stack("linked", 4, |l| {
        let read = if l == 2 { "count1" } else { "1" };
        format!(
            "  action bump{l}() {{ patch count{l} += {read} }}\n  decide {{ when count{l} < LIMIT => bump{l}() }}\n"
        )
    });
    let edited = text.replacen("patch count1 += 1", "patch count1 += 1 + 1", 1);
    let (_, cold, log) = clean_recheck("linked", &text, &edited);
    // Layers 1 and 2 are one group; layers 0 and 3 one each.
    assert_eq!(cold.get("slot_shapes"), Some(&3), "{cold:?}");
    assert_eq!(counts(&log).get("slot_shapes"), Some(&1), "{log:#?}");
}

/// A harness of `layers` layers whose bodies read only their state: no computed values, so what
/// the cost analysis keeps of a layer is the walk of its action and decide rule.
fn counters(layers: usize) -> String {
    stack("counters", layers, |l| {
        format!(
            "  action bump{l}() {{ patch count{l} += 1 }}\n  decide {{ when count{l} < LIMIT => bump{l}() }}\n"
        )
    })
}

/// The walk of each layer's actions, handlers, revise and decide bodies is kept per layer and
/// state of the slots: a cold check walks every layer once, in the state the phases see; after
/// an edit inside one layer, only that layer is walked again, and the report is the one a fresh
/// workspace gives for the edited text.
#[test]
fn a_body_edit_walks_again_only_the_bodies_of_its_layer() {
    let layers = 20;
    let text = counters(layers);
    let edited = text.replacen("patch count7 += 1", "patch count7 += 1 + 1", 1);
    let (_, cold, log) = clean_recheck("counters", &text, &edited);
    assert_eq!(cold.get("layer_cost"), Some(&layers), "{cold:?}");
    let ran = counts(&log);
    assert_eq!(ran.get("cost"), Some(&1), "{log:#?}");
    assert_eq!(ran.get("layer_cost"), Some(&1), "{log:#?}");
}

/// Checks `text` of the harness `demo.<name>` cold, then `edited`, both cleanly, with the queries
/// logged; the edited workspace's cost report must be the one a fresh workspace gives for
/// `edited`. Returns the workspace, the cold check's queries by name and the re-check's log.
fn clean_recheck(
    name: &str,
    text: &str,
    edited: &str,
) -> (
    Workspace,
    std::collections::BTreeMap<String, usize>,
    Vec<String>,
) {
    let path = format!("{name}.harness");
    let module = format!("demo.{name}");
    let mut workspace = Workspace::with_query_log(SignatureSet::default());
    workspace.set_file(&path, text);
    workspace.database().start_log();
    assert_eq!(workspace.diagnostics(), Vec::new());
    let cold = counts(&workspace.database().take_log());
    workspace.set_file(&path, edited);
    assert_eq!(workspace.diagnostics(), Vec::new());
    let log = workspace.database().take_log();
    let mut fresh = Workspace::new(SignatureSet::default());
    fresh.set_file(&path, edited);
    assert_eq!(workspace.cost(&module), fresh.cost(&module));
    (workspace, cold, log)
}
