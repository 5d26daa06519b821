//! Interpreter overhead: one decide phase of the search example on a 100-cell line, which
//! previews every one of the 100 candidate probes with `sim.next` (plus the chosen one once more
//! in the rule's guard), against the same policy written directly in Rust.
//!
//! Run with `cargo bench -p harness-tests --bench interpreter`; the ratio of the two medians is
//! the interpreter's overhead on this workload.

// `criterion_group!` generates an undocumented public function.
#![allow(missing_docs)]

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use harness_runtime::{Agent, GameKind, GameOptions, Limits, Machine, RngStreams, Switches};
use harness_search::LineSearch;
use harness_tests::search_example::{self as search_ir, Variant, natives};

const CELLS: usize = 100;
const NOISE: f64 = 0.1;

/// The belief's likelihood of answer `dir` (0 left, 1 here, 2 right) for a probe of `cell`.
fn likelihood(target: usize, cell: usize, dir: usize) -> f64 {
    let truth = match target.cmp(&cell) {
        std::cmp::Ordering::Less => 0,
        std::cmp::Ordering::Equal => 1,
        std::cmp::Ordering::Greater => 2,
    };
    if truth == dir {
        1.0 - NOISE
    } else {
        NOISE / 2.0
    }
}

fn predicted(weights: &[f64], cell: usize, dir: usize) -> f64 {
    let total: f64 = weights.iter().sum();
    weights
        .iter()
        .enumerate()
        .map(|(t, w)| w * likelihood(t, cell, dir))
        .sum::<f64>()
        / total
}

fn entropy(weights: &[f64]) -> f64 {
    let total: f64 = weights.iter().sum();
    weights
        .iter()
        .map(|w| w / total)
        .map(|p| if p > 0.0 { -(p * p.ln()) } else { 0.0 })
        .sum()
}

/// The expected entropy drop of probing `cell`, with the same work as the harness: the three
/// modelled answers, the handler's update (including its surprise check) on each branch, and the
/// entropy of each successor.
fn info_gain(weights: &[f64], cell: usize) -> f64 {
    let mut expected = 0.0;
    let mut rest = 1.0;
    for dir in 0..3 {
        let p = if dir < 2 {
            predicted(weights, cell, dir)
        } else {
            rest
        };
        rest -= p;
        let _surprised = predicted(weights, cell, dir) < 0.1;
        let next: Vec<f64> = weights
            .iter()
            .enumerate()
            .map(|(t, w)| w * likelihood(t, cell, dir))
            .collect();
        expected += p * entropy(&next);
    }
    entropy(weights) - expected
}

/// The planning layer's decision in Rust: the probe with the largest information gain.
fn decide_natively(weights: &[f64]) -> Option<usize> {
    let mut best: Option<(f64, usize)> = None;
    for cell in 0..weights.len() {
        let gain = info_gain(weights, cell);
        if best.is_none_or(|(b, _)| gain > b) {
            best = Some((gain, cell));
        }
    }
    let (_, cell) = best?;
    (info_gain(weights, cell) > 0.01).then_some(cell)
}

fn bench(c: &mut Criterion) {
    let machine = Machine::new(
        search_ir::program(Variant::Example),
        natives(),
        &Switches::default(),
        Limits::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let game = LineSearch
        .start("n100-p20", &GameOptions::default(), &RngStreams::new(1))
        .unwrap_or_else(|e| panic!("{e}"));
    let mut group = c.benchmark_group("decide_100_previews");
    group.sample_size(10);
    group.bench_function("interpreted", |b| {
        b.iter_batched(
            || Agent::start(&machine, game.as_ref()).unwrap_or_else(|e| panic!("{e}")),
            |mut agent| {
                agent
                    .decide(game.as_ref())
                    .unwrap_or_else(|e| panic!("{e}"))
            },
            BatchSize::SmallInput,
        )
    });
    let weights = vec![1.0; CELLS];
    group.bench_function("native_rust", |b| {
        b.iter(|| decide_natively(std::hint::black_box(&weights)))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
