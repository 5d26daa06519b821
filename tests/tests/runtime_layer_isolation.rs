//! Property: switching layers off never changes a value computed in a layer that is still on.
//!
//! Programs are generated: two to four layers, each needing a random subset of the layers before
//! it, each with a state slot, computed values reading its own members and those of the layers
//! below it, and a handler that patches its slot on every `tick` observation. The same ticks are
//! fed to the full program and to the program with a random set of layers switched off; after
//! every tick, every computed value of every layer still on must be equal in both runs, and a
//! disabled layer must leave no event.
//!
//! The same generated programs also carry the bound check of observations: a field over a bound
//! a handler declares ends the observe phase before any handler runs.

use std::collections::BTreeMap;
use std::sync::Arc;

use harness_compiler::ir::*;
use harness_compiler::types::Ty;
use harness_runtime::{
    Agent, Effect, Game, Limits, Machine, Natives, Observation, RngStreams, Switches, Value,
};
use proptest::prelude::*;

/// A game that sends one scripted `tick(v)` observation per call.
struct Script(Vec<i64>);

impl Game for Script {
    fn query(&self, name: &str, _: &[Value]) -> Result<Value, String> {
        Err(format!("no query {name}"))
    }
    fn view_version(&self) -> u64 {
        self.0.len() as u64
    }
    fn apply(&mut self, _: &Effect) -> Result<(), String> {
        Ok(())
    }
    fn take_observations(&mut self) -> Vec<Observation> {
        self.0
            .pop()
            .map(|v| Observation {
                name: Arc::from("tick"),
                args: vec![Value::Int(v)],
            })
            .into_iter()
            .collect()
    }
    fn is_over(&self) -> bool {
        self.0.is_empty()
    }
    fn metrics(&self) -> BTreeMap<String, Value> {
        BTreeMap::new()
    }
}

fn ex(kind: ExprKind) -> Expr {
    Expr {
        kind,
        ty: Ty::Int,
        span: SrcSpan::default(),
    }
}

fn int(i: i64) -> Expr {
    ex(ExprKind::Lit(Literal::Int(i)))
}

fn bin(op: BinaryOp, a: Expr, b: Expr) -> Expr {
    ex(ExprKind::Binary(op, Box::new(a), Box::new(b)))
}

/// `(a * k + b + c) % 997`: bounded, so no generated program overflows.
fn mix(a: Expr, k: i64, b: Expr, c: i64) -> Expr {
    bin(
        BinaryOp::Rem,
        bin(
            BinaryOp::Add,
            bin(BinaryOp::Add, bin(BinaryOp::Mul, a, int(k)), b),
            int(c),
        ),
        int(997),
    )
}

/// Generates a program from `seed`.
fn generate(seed: u64) -> Arc<Program> {
    let mut rng = RngStreams::new(seed).stream("program");
    let n = 2 + rng.below(3) as usize;
    let mut layers: Vec<Layer> = Vec::new();
    let mut state = Vec::new();
    let mut computed: Vec<Computed> = Vec::new();
    for i in 0..n {
        let needs: Vec<LayerId> = (0..i)
            .filter(|_| rng.chance(0.6))
            .map(|j| LayerId(j as u32))
            .collect();
        let mut below: Vec<LayerId> = needs.clone();
        for need in &needs {
            below.extend(layers[need.index()].below.iter().copied());
        }
        below.sort();
        below.dedup();
        let visible: Vec<usize> = below.iter().map(|l| l.index()).chain([i]).collect();
        state.push(StateSlot {
            name: format!("s{i}"),
            layer: LayerId(i as u32),
            ty: Ty::Int,
            init: Body {
                frame: Frame::default(),
                expr: int(rng.below(10) as i64),
            },
            span: SrcSpan::default(),
        });
        // Members this layer may read: its own slot and computed values, and those below it.
        let readable = |rng: &mut harness_runtime::Stream, computed: &[Computed]| -> Expr {
            let options: Vec<MemberRef> = visible
                .iter()
                .map(|&l| MemberRef::State(StateId(l as u32)))
                .chain(
                    computed
                        .iter()
                        .enumerate()
                        .filter(|(_, c)| visible.contains(&c.layer.index()))
                        .map(|(j, _)| MemberRef::Computed(ComputedId(j as u32))),
                )
                .collect();
            ex(ExprKind::Member(
                options[rng.below(options.len() as u64) as usize],
            ))
        };
        let mut own = Vec::new();
        for _ in 0..1 + rng.below(2) {
            let (a, b) = (readable(&mut rng, &computed), readable(&mut rng, &computed));
            let expr = mix(a, 1 + rng.below(9) as i64, b, rng.below(50) as i64);
            own.push(ComputedId(computed.len() as u32));
            computed.push(Computed {
                name: format!("c{}", computed.len()),
                layer: LayerId(i as u32),
                ty: Ty::Int,
                body: Body {
                    frame: Frame::default(),
                    expr,
                },
                span: SrcSpan::default(),
            });
        }
        let tick = ex(ExprKind::Local(LocalId(0)));
        let value = mix(
            tick,
            1 + rng.below(9) as i64,
            readable(&mut rng, &computed),
            rng.below(50) as i64,
        );
        let value = bin(
            BinaryOp::Rem,
            bin(
                BinaryOp::Add,
                value,
                ex(ExprKind::Member(MemberRef::State(StateId(i as u32)))),
            ),
            int(997),
        );
        let handler = Handler {
            observation: "tick".into(),
            bounds: vec![None],
            frame: Frame {
                locals: vec![Local {
                    name: "v".into(),
                    ty: Ty::Int,
                }],
            },
            body: vec![Stmt {
                kind: StmtKind::Patch {
                    place: Place {
                        state: StateId(i as u32),
                        path: vec![],
                    },
                    op: AssignOp::Set,
                    value,
                },
                span: SrcSpan::default(),
            }],
            span: SrcSpan::default(),
        };
        layers.push(Layer {
            name: format!("l{i}"),
            needs,
            below,
            uses: vec![],
            state: vec![StateId(i as u32)],
            tunables: vec![],
            computed: own,
            fns: vec![],
            actions: vec![],
            models: vec![],
            handlers: vec![handler],
            decide: vec![],
            revise: vec![],
            tunable_defaults: vec![],
            machines: vec![],
            span: SrcSpan::default(),
        });
    }
    Arc::new(Program {
        module: "generated".into(),
        game: None,
        files: vec![],
        enums: vec![],
        errors: vec![],
        consts: vec![],
        config: vec![],
        layers,
        state,
        tunables: vec![],
        computed,
        fns: vec![],
        actions: vec![],
        llms: vec![],
    })
}

/// The values of every enabled computed value after each tick, and the layers named by events.
fn trace(
    program: &Arc<Program>,
    without: &[String],
    ticks: &[i64],
) -> (Vec<BTreeMap<String, Value>>, Vec<String>) {
    let switches = Switches {
        layers: None,
        without: without.to_vec(),
        set: vec![],
        set_json: vec![],
    };
    let Ok(machine) = Machine::new(
        program.clone(),
        Natives::new(),
        &switches,
        Limits::default(),
    ) else {
        // Every layer is off: there is nothing to compare.
        return (Vec::new(), Vec::new());
    };
    let mut game = Script(ticks.iter().rev().copied().collect());
    let mut agent = Agent::start(&machine, &game).unwrap_or_else(|e| panic!("{e}"));
    let mut values = Vec::new();
    while !game.is_over() {
        agent.observe(&mut game).unwrap_or_else(|e| panic!("{e}"));
        let mut now = BTreeMap::new();
        for c in &program.computed {
            if let Some(v) = agent.computed(&game, &c.name) {
                now.insert(c.name.clone(), v.unwrap_or_else(|e| panic!("{e}")));
            }
        }
        values.push(now);
    }
    let layers = agent
        .take_events()
        .into_iter()
        .filter_map(|e| e.layer)
        .collect();
    (values, layers)
}

/// An observation whose field passes a bound its game declares, as the top layer's handler
/// records it, ends the observe phase with R0011 before any handler runs; the observation
/// before it, within the bound, runs through.
#[test]
fn an_observation_over_a_declared_bound_ends_the_phase_before_any_handler() {
    let mut program = (*generate(7)).clone();
    let top = program.layers.len() - 1;
    program.layers[top].handlers[0].bounds = vec![Some(500)];
    let program = Arc::new(program);
    let machine = Machine::new(
        program.clone(),
        Natives::new(),
        &Switches::default(),
        Limits::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    // The script is read from its end: 10 first, then 900.
    let mut game = Script(vec![900, 10]);
    let mut agent = Agent::start(&machine, &game).unwrap_or_else(|e| panic!("{e}"));
    agent.observe(&mut game).unwrap_or_else(|e| panic!("{e}"));
    let before = agent.take_events().len();
    let error = agent.observe(&mut game).expect_err("900 is over the bound");
    assert_eq!(error.code, "R0011");
    assert!(
        error.message.contains("over the bound of 500"),
        "{}",
        error.message
    );
    // Only the observation itself is recorded: no handler patched anything.
    let events = agent.take_events();
    assert_eq!(events.len(), 1, "{events:?}");
    assert!(before > 1, "the first observation ran its handlers");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn disabling_layers_never_changes_values_of_layers_still_on(
        seed in any::<u64>(),
        off_mask in 0u8..16,
        ticks in proptest::collection::vec(0i64..100, 1..8),
    ) {
        let program = generate(seed);
        let without: Vec<String> = program
            .layers
            .iter()
            .enumerate()
            .filter(|(i, _)| off_mask & (1 << i) != 0)
            .map(|(_, l)| l.name.clone())
            .collect();
        let (full, _) = trace(&program, &[], &ticks);
        let (partial, event_layers) = trace(&program, &without, &ticks);
        let enabled = |name: &str| {
            let layer = program.layers.iter().find(|l| l.name == name);
            layer.is_some_and(|l| {
                !without.contains(&l.name) && l.below.iter().all(|b| !without.contains(&program.layers[b.index()].name))
            })
        };
        for (step, values) in partial.iter().enumerate() {
            for (name, value) in values {
                prop_assert_eq!(Some(value), full[step].get(name), "{} after tick {}", name, step);
            }
            // Every computed value of an enabled layer is there; none of a disabled one.
            let expected = program.computed.iter().filter(|c| enabled(&program.layers[c.layer.index()].name)).count();
            prop_assert_eq!(values.len(), expected);
        }
        for layer in event_layers {
            prop_assert!(enabled(&layer), "event of disabled layer {}", layer);
        }
    }
}
