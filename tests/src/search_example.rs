//! The search example (`harnesses/examples/search.harness`) and the mistakes a new user makes in
//! it, compiled by the real checker for the runtime's end-to-end tests and benchmark.
//!
//! Each [`Variant`] is the example with one textual edit, so every runtime diagnostic in the
//! tests points into a real source text ([`source`]).

use std::sync::Arc;

use harness_compiler::Workspace;
use harness_compiler::ir::{Program, SrcSpan};
use harness_compiler::signatures::SignatureSet;
use harness_runtime::{GameKind, Natives};
use harness_search::LineSearch;

/// The example's source text.
pub const SOURCE: &str = include_str!("../../harnesses/examples/search.harness");

/// The example's path in the workspace.
pub const PATH: &str = "harnesses/examples/search.harness";

/// The example, or a deliberately broken version of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// The example as written.
    Example,
    /// `probe` also `requires game.probes_used < 2`: the third probe fails at run time.
    RequiresFailsMidGame,
    /// `best_prob` divides by `(answers - answers).to_float()`, which is zero.
    DivisionByZero,
    /// Reflection revises `noise_guess += 0.5` and no longer guards the range.
    ReviseLeavesRange,
    /// Belief's unconditional `guess(best_cell)` rule is gone: once planning stops probing, no
    /// rule matches in any layer.
    NoRuleMatches,
}

/// The source text of a variant.
pub fn source(variant: Variant) -> String {
    let edits: &[(&str, &str)] = match variant {
        Variant::Example => &[],
        Variant::RequiresFailsMidGame => &[(
            "else fail OFF_LINE\n",
            "else fail OFF_LINE\n    requires game.probes_used < 2 else fail OFF_LINE\n",
        )],
        Variant::DivisionByZero => &[(
            "weights[best_cell] / total",
            "weights[best_cell] / (answers - answers).to_float()",
        )],
        Variant::ReviseLeavesRange => &[
            ("and noise_guess < 0.4 {", "{"),
            (
                "revise belief.noise_guess += 0.05",
                "revise belief.noise_guess += 0.5",
            ),
        ],
        Variant::NoRuleMatches => &[("  decide {\n    guess(best_cell)\n  }\n", "")],
    };
    let mut text = SOURCE.to_string();
    for (from, to) in edits {
        assert!(
            text.contains(from),
            "the example no longer contains `{from}`"
        );
        text = text.replacen(from, to, 1);
    }
    text
}

/// The text of `span` in a variant's source.
pub fn text_at(variant: Variant, span: SrcSpan) -> String {
    source(variant)
        .get(span.start as usize..span.end as usize)
        .unwrap_or_default()
        .to_string()
}

/// Everything the checker needs to know: the prelude, the runtime's preview methods and the
/// search game's bindings.
pub fn signatures() -> SignatureSet {
    let mut set = harness_stdlib::prelude::signatures();
    set.extend(harness_runtime::signatures());
    set.game(LineSearch.bindings());
    set
}

/// The natives the example runs with: the prelude and the game's.
pub fn natives() -> Natives {
    let mut natives = harness_stdlib::prelude::natives();
    natives.extend(&LineSearch.natives());
    natives
}

/// The checked and lowered program of a variant. Panics with the diagnostics when it does not
/// check, which is a test failure.
pub fn program(variant: Variant) -> Arc<Program> {
    let mut workspace = Workspace::new(signatures());
    workspace.set_file(PATH, &source(variant));
    workspace
        .program("examples.search")
        .unwrap_or_else(|diagnostics| {
            let list: Vec<String> = diagnostics
                .iter()
                .map(|d| format!("{:?} {}", d.code, d.message))
                .collect();
            panic!("{variant:?} does not check:\n{}", list.join("\n"))
        })
}
