//! A builtin that calls a closure on every element (`max_by`, `filter`, `map`...) walks a
//! closure whose body is one native call on held values and its parameter without calling the
//! closure per element (see `NativeCtx::call_each`). These tests run the same harnesses with
//! the standard natives and with every native seeing a context that calls the closure once per
//! element, and require the same result, steps, trace and error, under every step budget up to
//! the turn's need and under memory budgets that run out midway through a walk. A third set of
//! natives gives every native a batch form (see `harness_runtime::NativeBatchFn`), which the walk
//! calls instead of the native per element when the budgets allow, and must agree as well.

use std::sync::Arc;

use harness::games::Registry;
use harness_compiler::Workspace;
use harness_runtime::{
    EpisodeResult, GameOptions, Limits, Machine, NativeCtx, NativeError, Natives, RngStreams,
    Switches, Value, run_episode,
};

/// A context that answers every call as the one it wraps, except that it walks a list by
/// calling the closure on each element: the default of [`NativeCtx::call_each`].
struct PerCall<'a>(&'a mut dyn NativeCtx);

impl NativeCtx for PerCall<'_> {
    fn call(&mut self, closure: &Value, args: &[Value]) -> Result<Value, NativeError> {
        self.0.call(closure, args)
    }

    fn in_preview(&self) -> bool {
        self.0.in_preview()
    }

    fn memory_left(&self) -> u64 {
        self.0.memory_left()
    }
}

/// A context for a native called by a batch form, which calls no closure.
struct NoCalls;

impl NativeCtx for NoCalls {
    fn call(&mut self, _: &Value, _: &[Value]) -> Result<Value, NativeError> {
        Err(NativeError::msg("a batch form calls no closure"))
    }
}

/// The natives of `game` and the prelude; the same with every native given a [`PerCall`]
/// context; and the same with every native given a batch form that calls it on each element,
/// failing at the first element it fails on or answers anything but a `Float` for.
fn natives(game: &str) -> (Natives, Natives, Natives) {
    let registry = Registry::standard();
    let kind = registry.get(game).unwrap_or_else(|e| panic!("{e}"));
    let mut bulk = harness_stdlib::prelude::natives();
    bulk.extend(&kind.natives());
    let mut per_call = Natives::new();
    for name in bulk.names() {
        let native = bulk.get(name).cloned().unwrap_or_else(|| panic!("{name}"));
        per_call.register(name, move |ctx, args| native(&mut PerCall(ctx), args));
    }
    let mut batched = bulk.clone();
    for name in bulk.names() {
        let native = bulk.get(name).cloned().unwrap_or_else(|| panic!("{name}"));
        batched.register_batch(name, move |args, at, items, out| {
            let mut args = args.to_vec();
            for (k, x) in items.iter().enumerate() {
                args[at] = x.clone();
                match native(&mut NoCalls, &args) {
                    Ok(Value::Float(f)) => out.push(f.get()),
                    _ => return Err(k),
                }
            }
            Ok(())
        });
    }
    (bulk, per_call, batched)
}

/// A search harness whose decision reads `big`, defined by `expr`, beside held values of every
/// kind a closure body reads: state slots, computed values and lists.
fn harness(expr: &str) -> String {
    format!(
        "harness bulk.calls\nuse game search\nuse std.stats.{{ema, wilson_lower}}\nlayer l {{\n  state {{\n    n: Int = 12\n    \
         a: Float = 0.25\n  }}\n  computed xs: List<Int> = range(0, 40).map(|i| i % 7)\n  \
         computed ys: List<Int> = [3, 5]\n  computed w: Float = 0.5\n  computed fs: List<Float> = \
         xs.map(|i| float(i))\n  computed gs: List<Float> = range(1, 30).map(|i| float(10 - i))\n  \
         computed big: Int = {expr}\n  action guess(cell: Int) {{\n    emit game.guess(cell)\n  \
         }}\n  decide {{\n    when big > 0 => guess(0)\n    guess(1)\n  }}\n}}\n"
    )
}

fn episode(
    program: &Arc<harness_compiler::ir::Program>,
    natives: &Natives,
    limits: Limits,
) -> EpisodeResult {
    let registry = Registry::standard();
    let kind = registry.get("search").unwrap_or_else(|e| panic!("{e}"));
    let machine = Machine::new(
        program.clone(),
        natives.clone(),
        &Switches::default(),
        limits,
    )
    .unwrap_or_else(|e| panic!("setup failed: {e}"));
    let mut game = kind
        .start("n16-p10", &GameOptions::default(), &RngStreams::new(0))
        .unwrap_or_else(|e| panic!("{e}"));
    run_episode(&machine, game.as_mut())
}

/// What two runs must agree on.
fn outcome(r: &EpisodeResult) -> String {
    format!(
        "{:?} {} {:?} {:?} {:?} {:?}",
        r.end, r.turns, r.error, r.metrics, r.costs, r.events
    )
}

#[test]
fn walking_a_closure_in_bulk_or_in_batches_counts_and_fails_as_calling_it_per_element() {
    let cases = [
        "match xs.max_by(|i| wilson_lower(i, n)) { Some(i) => i, None => 0 }",
        "match xs.min_by(|i| wilson_lower(n, i)) { Some(i) => i, None => 0 }",
        "match fs.max_by(|x| ema(a, x, w)) { Some(x) => round(x), None => 0 }",
        "match xs.to_set().max_by(|i| wilson_lower(i, n)) { Some(i) => i, None => 0 }",
        "xs.filter(|i| ys.contains(i)).len()",
        "xs.count(|i| ys.contains(i))",
        "if xs.any(|i| ys.contains(i)) and xs.all(|i| xs.contains(i)) { 1 } else { 2 }",
        "if xs.all(|i| ys.contains(i)) { 1 } else { 2 }",
        "xs.map(|i| range(i, n)).len()",
        "round(fs.sum_by(|x| ema(x, a, w)) + fs.max_of(|x| ema(w, x, a)))",
        "gs.map(|x| ln(x)).len()",
    ];
    let (bulk, per_call, batched) = natives("search");
    for expr in cases {
        let mut ws = Workspace::new(Registry::standard().signatures());
        ws.set_file("bulk.harness", &harness(expr));
        let program = ws
            .program("bulk.calls")
            .unwrap_or_else(|d| panic!("{expr}: does not check: {d:?}"));
        let one_turn = Limits {
            max_turns: 1,
            ..Limits::default()
        };
        let full = episode(&program, &bulk, Limits::default());
        // `ln` fails on the tenth element of `gs`, which is zero; everything else runs.
        assert_eq!(
            full.error.is_some(),
            expr.contains("ln"),
            "{expr}: {:?}",
            full.error
        );
        // The bulk and the batched walks end as the per-element walk does under `limits`.
        let agree = |limits: Limits, within: &str| {
            let expected = outcome(&episode(&program, &per_call, limits));
            assert_eq!(
                outcome(&episode(&program, &bulk, limits)),
                expected,
                "{expr}{within}"
            );
            assert_eq!(
                outcome(&episode(&program, &batched, limits)),
                expected,
                "{expr} in batches{within}"
            );
        };
        agree(Limits::default(), "");
        let need = episode(&program, &bulk, one_turn).costs.steps;
        for steps_per_turn in 1..=need + 1 {
            let limits = Limits {
                steps_per_turn,
                ..one_turn
            };
            agree(limits, &format!(" within {steps_per_turn} steps"));
        }
        for memory_per_turn in (0..4096).step_by(97) {
            let limits = Limits {
                memory_per_turn,
                ..one_turn
            };
            agree(limits, &format!(" within {memory_per_turn} bytes"));
        }
    }
}
