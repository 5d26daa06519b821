//! Interpreter semantics on small hand-lowered programs: computed values are never stale, also
//! inside one action; memo entries are dropped exactly when what they read changes; the
//! evaluation budget and the one-step depth of `sim.next` are enforced with located errors.

use std::collections::BTreeMap;
use std::sync::Arc;

use harness_compiler::ir::*;
use harness_compiler::types::Ty;
use harness_runtime::{
    Agent, Effect, EndReason, Game, Limits, Machine, Natives, Observation, Switches, Value,
    run_episode,
};

/// A game that counts `tick` effects and ends after three.
struct Ticks(i64);

impl Game for Ticks {
    fn query(&self, name: &str, _: &[Value]) -> Result<Value, String> {
        Err(format!("no query {name}"))
    }
    fn view_version(&self) -> u64 {
        self.0 as u64
    }
    fn apply(&mut self, effect: &Effect) -> Result<(), String> {
        if &*effect.name == "tick" {
            self.0 += 1;
            Ok(())
        } else {
            Err("unknown effect".into())
        }
    }
    fn take_observations(&mut self) -> Vec<Observation> {
        Vec::new()
    }
    fn is_over(&self) -> bool {
        self.0 >= 3
    }
    fn metrics(&self) -> BTreeMap<String, Value> {
        BTreeMap::from([("ticks".to_string(), Value::Int(self.0))])
    }
}

/// A distinct span per node, so tests can tell which node an error names.
fn at(n: u32) -> SrcSpan {
    SrcSpan {
        file: 0,
        start: n,
        end: n + 1,
    }
}

fn ex(kind: ExprKind, n: u32) -> Expr {
    Expr {
        kind,
        ty: Ty::Int,
        span: at(n),
    }
}

fn int(i: i64, n: u32) -> Expr {
    ex(ExprKind::Lit(Literal::Int(i)), n)
}

fn member(m: MemberRef, n: u32) -> Expr {
    ex(ExprKind::Member(m), n)
}

fn bin(op: BinaryOp, a: Expr, b: Expr, n: u32) -> Expr {
    ex(ExprKind::Binary(op, Box::new(a), Box::new(b)), n)
}

const X: MemberRef = MemberRef::State(StateId(0));
const Y: MemberRef = MemberRef::State(StateId(1));
const DOUBLE: MemberRef = MemberRef::Computed(ComputedId(0));
const YSQ: MemberRef = MemberRef::Computed(ComputedId(1));

fn body(expr: Expr) -> Body {
    Body {
        frame: Frame::default(),
        expr,
    }
}

/// state x = 0, y = 3, seen = -1; computed double = x * 2, ysq = y * y, and a third computed
/// `extra` given by the caller; action bump available when double < 100 and ysq == 9
/// { patch x += 1; patch seen = double; emit tick() }; decide { bump() }.
fn counter(extra: Expr) -> Arc<Program> {
    let slot = |name: &str, init: i64, n| StateSlot {
        name: name.into(),
        layer: LayerId(0),
        ty: Ty::Int,
        init: body(int(init, n)),
        span: at(n),
    };
    let computed = |name: &str, expr: Expr, n| Computed {
        name: name.into(),
        layer: LayerId(0),
        ty: Ty::Int,
        body: Body {
            frame: Frame {
                locals: vec![Local {
                    name: "s".into(),
                    ty: Ty::Snapshot,
                }],
            },
            expr,
        },
        span: at(n),
    };
    let available = bin(
        BinaryOp::And,
        bin(BinaryOp::Lt, member(DOUBLE, 30), int(100, 31), 32),
        bin(BinaryOp::Eq, member(YSQ, 33), int(9, 34), 35),
        36,
    );
    let patch = |slot: u32, op: AssignOp, value: Expr, n: u32| Stmt {
        kind: StmtKind::Patch {
            place: Place {
                state: StateId(slot),
                path: vec![],
            },
            op,
            value,
        },
        span: at(n),
    };
    let bump = Action {
        name: "bump".into(),
        layer: LayerId(0),
        params: vec![],
        frame: Frame::default(),
        available: Some(available),
        requires: vec![],
        body: vec![
            patch(0, AssignOp::Add, int(1, 40), 41),
            patch(2, AssignOp::Set, member(DOUBLE, 42), 43),
            Stmt {
                kind: StmtKind::Emit {
                    effect: "tick".into(),
                    args: vec![],
                },
                span: at(44),
            },
        ],
        span: at(45),
    };
    Arc::new(Program {
        module: "counter".into(),
        game: None,
        files: vec!["counter.harness".into()],
        enums: vec![],
        errors: vec![],
        consts: vec![],
        config: vec![],
        layers: vec![Layer {
            name: "base".into(),
            needs: vec![],
            below: vec![],
            uses: vec![],
            state: vec![StateId(0), StateId(1), StateId(2)],
            tunables: vec![],
            computed: vec![ComputedId(0), ComputedId(1), ComputedId(2)],
            fns: vec![],
            actions: vec![ActionId(0)],
            models: vec![],
            handlers: vec![],
            decide: vec![Rule {
                frame: Frame::default(),
                guards: vec![],
                action: ActionId(0),
                args: vec![],
                span: at(50),
            }],
            revise: vec![],
            tunable_defaults: vec![],
            machines: vec![],
            span: at(60),
        }],
        state: vec![slot("x", 0, 1), slot("y", 3, 2), slot("seen", -1, 3)],
        tunables: vec![],
        computed: vec![
            computed(
                "double",
                bin(BinaryOp::Mul, member(X, 10), int(2, 11), 12),
                13,
            ),
            computed(
                "ysq",
                bin(BinaryOp::Mul, member(Y, 14), member(Y, 15), 16),
                17,
            ),
            computed("extra", extra, 18),
        ],
        fns: vec![],
        actions: vec![bump],
        llms: vec![],
    })
}

fn machine(program: Arc<Program>, limits: Limits) -> Machine {
    Machine::new(program, Natives::new(), &Switches::default(), limits)
        .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn a_computed_value_read_after_a_patch_in_the_same_action_is_fresh() {
    let m = machine(counter(int(0, 19)), Limits::default());
    let mut game = Ticks(0);
    let mut agent = Agent::start(&m, &game).unwrap_or_else(|e| panic!("{e}"));
    for expected in [2, 4, 6] {
        let decision = agent.decide(&game).unwrap_or_else(|e| panic!("{e}"));
        agent
            .act(&mut game, &decision)
            .unwrap_or_else(|e| panic!("{e}"));
        // `available when double < 100` memoised `double` before the body ran; the body's
        // `patch seen = double` must still see the patched x.
        assert_eq!(agent.snapshot().state(2), &Value::Int(expected));
    }
}

#[test]
fn an_action_that_fails_after_a_patch_leaves_every_slot_as_it_was() {
    // `bump` with an overflowing patch of y after its patches of x and of `seen = double`.
    let mut program = (*counter(int(0, 19))).clone();
    program.actions[0].body.insert(
        2,
        Stmt {
            kind: StmtKind::Patch {
                place: Place {
                    state: StateId(1),
                    path: vec![],
                },
                op: AssignOp::Set,
                value: bin(BinaryOp::Add, int(i64::MAX, 50), int(1, 51), 52),
            },
            span: at(53),
        },
    );
    let m = machine(Arc::new(program), Limits::default());
    let mut game = Ticks(0);
    let mut agent = Agent::start(&m, &game).unwrap_or_else(|e| panic!("{e}"));
    let before = agent.snapshot().state_values().to_vec();
    let decision = agent.decide(&game).unwrap_or_else(|e| panic!("{e}"));
    let error = agent
        .act(&mut game, &decision)
        .expect_err("the patch of y overflows");
    assert_eq!(error.code, "R0001");
    assert_eq!(agent.snapshot().state_values(), &before[..]);
    // The body memoised `double` of x = 1; the value read now is that of x = 0.
    assert_eq!(
        agent.computed(&game, "double").and_then(Result::ok),
        Some(Value::Int(0))
    );
}

#[test]
fn a_patch_drops_exactly_the_memo_entries_that_read_the_patched_slot() {
    let m = machine(counter(int(0, 19)), Limits::default());
    let mut game = Ticks(0);
    let mut agent = Agent::start(&m, &game).unwrap_or_else(|e| panic!("{e}"));
    let decision = agent.decide(&game).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        agent.snapshot().memoised(),
        2,
        "double and ysq are memoised by the availability check"
    );
    agent
        .act(&mut game, &decision)
        .unwrap_or_else(|e| panic!("{e}"));
    // x changed: `double` was dropped (and memoised again by `patch seen = double`), while
    // `ysq`, which reads only y, survived the patch.
    assert_eq!(agent.snapshot().memoised(), 2);
    assert_eq!(
        agent.computed(&game, "ysq").and_then(Result::ok),
        Some(Value::Int(9))
    );
    assert_eq!(
        agent.computed(&game, "double").and_then(Result::ok),
        Some(Value::Int(2))
    );
}

#[test]
fn the_per_turn_budget_stops_a_run_with_a_located_error() {
    let m = machine(
        counter(int(0, 19)),
        Limits {
            steps_per_turn: 4,
            max_turns: 10,
            ..Limits::default()
        },
    );
    let result = run_episode(&m, &mut Ticks(0));
    assert_eq!(result.end, EndReason::Error);
    let error = result.error.unwrap_or_else(|| panic!("no error"));
    assert_eq!(error.code, "R0009");
    assert!(
        error.span.start >= 10,
        "the span names the node that ran out: {:?}",
        error.span
    );
    // With enough budget the same program runs to the game's end.
    let ok = run_episode(
        &machine(counter(int(0, 19)), Limits::default()),
        &mut Ticks(0),
    );
    assert_eq!((ok.end, ok.turns), (EndReason::GameOver, 3));
}

#[test]
fn sim_next_inside_a_preview_is_a_runtime_error() {
    // extra = sim.next(bump()).expect(|s| s.extra): reading `extra` in the preview previews again.
    let read = Expr {
        kind: ExprKind::SnapshotRead {
            snapshot: Box::new(Expr {
                kind: ExprKind::Local(LocalId(0)),
                ty: Ty::Snapshot,
                span: at(20),
            }),
            member: MemberRef::Computed(ComputedId(2)),
        },
        ty: Ty::Float,
        span: at(21),
    };
    let preview = Expr {
        kind: ExprKind::SimNext {
            action: ActionId(0),
            args: vec![],
        },
        ty: Ty::Preview,
        span: at(22),
    };
    let closure = Expr {
        kind: ExprKind::Closure {
            params: vec![LocalId(0)],
            body: Box::new(read),
        },
        ty: Ty::Unit,
        span: at(23),
    };
    let extra = ex(
        ExprKind::CallBuiltin {
            name: "Preview.expect".into(),
            args: vec![preview, closure],
        },
        24,
    );
    let m = machine(counter(extra), Limits::default());
    let game = Ticks(0);
    let mut agent = Agent::start(&m, &game).unwrap_or_else(|e| panic!("{e}"));
    let error = agent
        .computed(&game, "extra")
        .and_then(Result::err)
        .unwrap_or_else(|| panic!("no error"));
    assert_eq!((error.code, error.span), ("R0010", at(22)));
    // The preview left the working snapshot alone: x is still 0 and the game untouched.
    assert_eq!(agent.snapshot().state(0), &Value::Int(0));
    assert_eq!(game.0, 0);
}
