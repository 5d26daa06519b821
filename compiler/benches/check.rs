//! Checker benchmarks: a cold check of a generated 10,000-line harness, and the re-check after a
//! one-line edit inside one `computed` body, through the query database.
//!
//! Run with `cargo bench -p harness-compiler --bench check`.

// `criterion_group!` generates an undocumented public function.
#![allow(missing_docs)]

use std::fmt::Write;
use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use harness_compiler::Workspace;
use harness_compiler::signatures::SignatureSet;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A well-formed harness of about `lines` lines: a stack of layers, each with state, computed
/// values, functions, an action, a handler-free decide block and a revise block.
fn generate(lines: usize) -> String {
    let mut text = String::from(
        "harness bench.generated\n\nerror TOO_BIG = \"the counter is too big\"\nconst LIMIT: Int = 1000\n\n",
    );
    let per_layer = 50;
    let layers = lines / per_layer;
    for l in 0..layers {
        let needs = if l == 0 {
            String::new()
        } else {
            format!(" needs layer{}", l - 1)
        };
        let _ = writeln!(text, "/// Layer number {l}.\nlayer layer{l}{needs} {{");
        let _ = writeln!(text, "  tunable step{l}: Int = 1 in 0..=10");
        let _ = writeln!(
            text,
            "  state {{\n    count{l}: Int = 0\n    total{l}: Float = 0.0\n    flags{l}: List<Bool> = [true, false]\n  }}"
        );
        for c in 0..10 {
            let previous = if c == 0 {
                format!("count{l}")
            } else {
                format!("value{l}_{}", c - 1)
            };
            let _ = writeln!(
                text,
                "  computed value{l}_{c}: Int = if {previous} > {c} {{ {previous} - 1 }} else {{ {previous} + step{l} }}"
            );
            let _ = writeln!(
                text,
                "  computed ratio{l}_{c}: Float = if value{l}_{c} > 0 {{ total{l} / 2.0 }} else {{ 0.5 }}"
            );
        }
        let ratios: Vec<String> = (0..10).map(|c| format!("ratio{l}_{c}")).collect();
        let _ = writeln!(text, "  computed sum{l}: Float = {}", ratios.join(" + "));
        let _ = writeln!(
            text,
            "  fn scale{l}(x: Int, by: Int) -> Int = x * by + LIMIT"
        );
        let _ = writeln!(
            text,
            "  fn pick{l}(x: Int) -> Bool = match x {{ 0 => true, 1 => false, _ => x > 2 }}"
        );
        let _ = writeln!(
            text,
            "  action advance{l}(by: Int)\n    available when count{l} < LIMIT\n    requires by > 0 else fail TOO_BIG\n  {{\n    let next = scale{l}(by, 2)\n    patch count{l} += next\n    patch total{l} = total{l} + ratio{l}_9\n    patch flags{l}[0] = pick{l}(value{l}_9)\n  }}"
        );
        let _ = writeln!(
            text,
            "  decide {{\n    when value{l}_9 < LIMIT, sum{l} < 100.0, flags{l}[1] == false => advance{l}(1)\n  }}"
        );
        if l > 0 {
            let _ = writeln!(
                text,
                "  revise when ratio{l}_0 > 0.9 {{\n    revise layer{}.step{} = 2\n  }}",
                l - 1,
                l - 1
            );
        }
        // Pad each layer to `per_layer` lines with comments, as real harnesses have.
        let written = text.lines().count();
        for _ in written..(l + 1) * per_layer + 5 {
            text.push_str("  // A comment line of the kind that explains a member.\n");
        }
        text.push_str("}\n\n");
    }
    text
}

fn benches(c: &mut Criterion) {
    let text = generate(10_000);
    let edited = text.replacen(
        "computed value3_5: Int = if",
        "computed value3_5: Int = if 1 + 1 == 2 and",
        1,
    );
    {
        let mut workspace = Workspace::new(SignatureSet::default());
        workspace.set_file("bench.harness", &text);
        let diagnostics = workspace.diagnostics();
        assert!(
            diagnostics.is_empty(),
            "the generated harness must check cleanly: {:?}",
            diagnostics.first().map(|d| &d.message)
        );
        workspace.set_file("bench.harness", &edited);
        assert!(
            workspace.diagnostics().is_empty(),
            "the edited harness must check cleanly"
        );
    }
    let lines = text.lines().count();
    c.bench_function(&format!("cold check, {lines} lines"), |b| {
        // The workspace is returned so that criterion drops it outside the timed region: the
        // check is measured, not the teardown of its memo tables.
        b.iter_with_large_drop(|| {
            let mut workspace = Workspace::new(SignatureSet::default());
            workspace.set_file("bench.harness", black_box(&text));
            black_box(workspace.diagnostics());
            workspace
        })
    });

    let mut workspace = Workspace::new(SignatureSet::default());
    workspace.set_file("bench.harness", &text);
    workspace.diagnostics();
    let mut flip = false;
    c.bench_function(
        &format!("re-check after a one-line computed edit, {lines} lines"),
        |b| {
            b.iter(|| {
                flip = !flip;
                workspace.set_file("bench.harness", if flip { &edited } else { &text });
                black_box(workspace.diagnostics())
            })
        },
    );
}

criterion_group!(checker, benches);
criterion_main!(checker);
