//! The lowered program of `harnesses/examples/search.harness`, written by hand.
//!
//! Until the checker's `program(...)` entry point can lower the example, the runtime's
//! end-to-end tests and benchmark run this hand-lowered IR. Every node's span is looked up in
//! the real source text, so runtime diagnostics point at the right place in the file. The
//! [`Variant`]s build the broken versions a new user might write: a `requires` that fails
//! mid-game, a division by zero in a computed value, a revision that leaves a tunable's range,
//! and a `decide` that matches nothing.

use std::sync::Arc;

use harness_compiler::ir::*;
use harness_compiler::types::Ty;

/// The example's source text.
pub const SOURCE: &str = include_str!("../../harnesses/examples/search.harness");

/// The example's path, as [`Program::files`] records it.
pub const PATH: &str = "harnesses/examples/search.harness";

/// Deliberately broken versions of the example.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// The example as written.
    Example,
    /// `probe` also `requires probes < 2 else fail OFF_LINE`: fails on the third probe.
    RequiresFailsMidGame,
    /// `best_prob` divides by `answers - answers` (zero) instead of `total`.
    DivisionByZero,
    /// Reflection revises `noise_guess += 0.5` with no guard on the range.
    ReviseLeavesRange,
    /// Belief's unconditional `guess(best_cell)` rule is gone: once planning stops probing,
    /// no rule matches.
    NoRuleMatches,
}

/// Finds the `n`th occurrence (from 0) of `text` in the source.
fn span_n(text: &str, n: usize) -> SrcSpan {
    let start = SOURCE
        .match_indices(text)
        .nth(n)
        .map(|(i, _)| i)
        .unwrap_or_else(|| panic!("`{text}` (occurrence {n}) is not in search.harness"));
    SrcSpan { file: 0, start: start as u32, end: (start + text.len()) as u32 }
}

fn sp(text: &str) -> SrcSpan {
    span_n(text, 0)
}

fn ex(kind: ExprKind, ty: Ty, span: SrcSpan) -> Expr {
    Expr { kind, ty, span }
}

fn b(e: Expr) -> Box<Expr> {
    Box::new(e)
}

fn lit_i(i: i64, s: SrcSpan) -> Expr {
    ex(ExprKind::Lit(Literal::Int(i)), Ty::Int, s)
}

fn lit_f(f: f64, s: SrcSpan) -> Expr {
    ex(ExprKind::Lit(Literal::Float(f)), Ty::Float, s)
}

fn local(i: u32, ty: Ty, s: SrcSpan) -> Expr {
    ex(ExprKind::Local(LocalId(i)), ty, s)
}

fn state(i: u32, ty: Ty, s: SrcSpan) -> Expr {
    ex(ExprKind::Member(MemberRef::State(StateId(i))), ty, s)
}

fn computed(i: u32, ty: Ty, s: SrcSpan) -> Expr {
    ex(ExprKind::Member(MemberRef::Computed(ComputedId(i))), ty, s)
}

fn tunable(i: u32, s: SrcSpan) -> Expr {
    ex(ExprKind::Member(MemberRef::Tunable(TunableId(i))), Ty::Float, s)
}

fn cells(s: SrcSpan) -> Expr {
    ex(ExprKind::GameProperty("cells".into()), Ty::Int, s)
}

fn builtin(name: &str, args: Vec<Expr>, ty: Ty, s: SrcSpan) -> Expr {
    ex(ExprKind::CallBuiltin { name: name.into(), args }, ty, s)
}

fn call(f: u32, args: Vec<Expr>, ty: Ty, s: SrcSpan) -> Expr {
    ex(ExprKind::CallFn { func: FnId(f), args }, ty, s)
}

fn closure(params: &[u32], body: Expr) -> Expr {
    let s = body.span;
    ex(ExprKind::Closure { params: params.iter().map(|&p| LocalId(p)).collect(), body: b(body) }, Ty::Unit, s)
}

fn bin(op: BinaryOp, l: Expr, r: Expr, ty: Ty) -> Expr {
    let s = l.span.to_cover(r.span);
    ex(ExprKind::Binary(op, b(l), b(r)), ty, s)
}

fn dir(index: u32, s: SrcSpan) -> Expr {
    ex(ExprKind::Variant { enum_id: EnumId(0), index, payload: vec![] }, Ty::Enum("Dir".into()), s)
}

/// `range(0, game.cells)` at the `n`th occurrence.
fn all_cells(n: usize) -> Expr {
    let s = span_n("range(0, game.cells)", n);
    builtin("range", vec![lit_i(0, s), cells(s)], Ty::List(Box::new(Ty::Int)), s)
}

trait Cover {
    fn to_cover(self, other: SrcSpan) -> SrcSpan;
}

impl Cover for SrcSpan {
    fn to_cover(self, other: SrcSpan) -> SrcSpan {
        SrcSpan { file: self.file, start: self.start.min(other.start), end: self.end.max(other.end) }
    }
}

fn frame(names: &[&str]) -> Frame {
    Frame { locals: names.iter().map(|n| Local { name: (*n).into(), ty: Ty::Int }).collect() }
}

fn body(names: &[&str], expr: Expr) -> Body {
    Body { frame: frame(names), expr }
}

fn stmt(kind: StmtKind, s: SrcSpan) -> Stmt {
    Stmt { kind, span: s }
}

fn patch(slot: u32, op: AssignOp, value: Expr, s: SrcSpan) -> Stmt {
    stmt(StmtKind::Patch { place: Place { state: StateId(slot), path: vec![] }, op, value }, s)
}

fn emit(effect: &str, args: Vec<Expr>, s: SrcSpan) -> Stmt {
    stmt(StmtKind::Emit { effect: effect.into(), args }, s)
}

fn float_param(name: &str, layer: Option<u32>, default: f64, lo: f64, hi: f64, decl: &str) -> Param {
    let s = sp(decl);
    Param {
        name: name.into(),
        layer: layer.map(LayerId),
        ty: Ty::Float,
        default: body(&[], lit_f(default, s)),
        range: Some(Range { lo: Literal::Float(lo), hi: Literal::Float(hi), inclusive: true }),
        span: s,
    }
}

// Ids of this hand-lowered program.
const WEIGHTS: u32 = 0;
const SURPRISES: u32 = 1;
const ANSWERS: u32 = 2;
const PROBES: u32 = 3;
const COOLDOWN: u32 = 4;
const TOTAL: u32 = 0;
const BEST_CELL: u32 = 1;
const BEST_PROB: u32 = 2;
const BEST_PROBE: u32 = 3;
const SURPRISE_RATE: u32 = 4;
const ENTROPY: u32 = 5;
const TRUTH: u32 = 0;
const LIKELIHOOD: u32 = 1;
const PREDICTED: u32 = 2;
const INFO_GAIN: u32 = 3;
const UNCERTAINTY: u32 = 4;
const GUESS: u32 = 0;
const PROBE: u32 = 1;

/// The lowered example, or one of its broken variants.
pub fn program(variant: Variant) -> Arc<Program> {
    let float = Ty::Float;
    let list_f = Ty::List(Box::new(Ty::Float));

    // State.
    let s = sp("range(0, game.cells).map(|c| 1.0)");
    let weights_init = builtin("List.map", vec![all_cells(0), closure(&[0], lit_f(1.0, span_n("1.0", 1)))], list_f.clone(), s);
    let state_slot = |name: &str, layer: u32, ty: Ty, init: Body, decl: &str| StateSlot {
        name: name.into(),
        layer: LayerId(layer),
        ty,
        init,
        span: sp(decl),
    };
    let zero = |decl: &str| body(&[], lit_i(0, sp(decl)));
    let state_slots = vec![
        state_slot("weights", 0, list_f.clone(), body(&["c"], weights_init), "weights: List<Float>"),
        state_slot("surprises", 0, Ty::Int, zero("surprises: Int = 0"), "surprises: Int = 0"),
        state_slot("answers", 0, Ty::Int, zero("answers: Int = 0"), "answers: Int = 0"),
        state_slot("probes", 1, Ty::Int, zero("probes: Int = 0"), "probes: Int = 0"),
        state_slot("cooldown", 2, Ty::Int, zero("cooldown: Int = 0"), "cooldown: Int = 0"),
    ];

    // Computed values.
    let weights = |t: &str, n| state(WEIGHTS, list_f.clone(), span_n(t, n));
    let total_body = builtin("List.sum", vec![weights("weights.sum()", 0)], float.clone(), sp("weights.sum()"));
    let s = sp("range(0, game.cells).max_by(|c| weights[c])");
    let max_by = builtin(
        "List.max_by",
        vec![
            all_cells(1),
            closure(
                &[0],
                ex(
                    ExprKind::Index(b(weights("weights[c]", 0)), b(local(0, Ty::Int, sp("weights[c]")))),
                    float.clone(),
                    sp("weights[c]"),
                ),
            ),
        ],
        Ty::Option(Box::new(Ty::Int)),
        s,
    );
    let best_cell_body = ex(
        ExprKind::Match(
            b(max_by),
            vec![
                MatchArm {
                    pattern: Pattern {
                        kind: PatternKind::Some(Box::new(Pattern { kind: PatternKind::Bind(LocalId(1)), span: sp("Some(c)") })),
                        span: sp("Some(c)"),
                    },
                    body: local(1, Ty::Int, sp("Some(c) => c")),
                },
                MatchArm { pattern: Pattern { kind: PatternKind::None, span: sp("None => 0") }, body: lit_i(0, sp("None => 0")) },
            ],
        ),
        Ty::Int,
        sp("match range(0, game.cells).max_by(|c| weights[c]) { Some(c) => c, None => 0 }"),
    );
    let s = sp("weights[best_cell] / total");
    let numerator = ex(
        ExprKind::Index(b(weights("weights[best_cell]", 0)), b(computed(BEST_CELL, Ty::Int, sp("best_cell] / total")))),
        float.clone(),
        sp("weights[best_cell]"),
    );
    let denominator = if variant == Variant::DivisionByZero {
        let a = state(ANSWERS, Ty::Int, s);
        ex(
            ExprKind::Unary(UnaryOp::Neg, b(builtin("Int.to_float", vec![bin(BinaryOp::Sub, a.clone(), a, Ty::Int)], float.clone(), s))),
            float.clone(),
            s,
        )
    } else {
        computed(TOTAL, float.clone(), span_n("total", 1))
    };
    let best_prob_body = ex(ExprKind::Binary(BinaryOp::Div, b(numerator), b(denominator)), float.clone(), s);

    let s = sp("entropy - sim.next(probe(cell)).expect(|s| s.entropy)");
    let expected = builtin(
        "Preview.expect",
        vec![
            ex(
                ExprKind::SimNext { action: ActionId(PROBE), args: vec![local(0, Ty::Int, sp("probe(cell)"))] },
                Ty::Preview,
                sp("sim.next(probe(cell))"),
            ),
            closure(
                &[1],
                ex(
                    ExprKind::SnapshotRead { snapshot: b(local(1, Ty::Snapshot, sp("s.entropy"))), member: MemberRef::Computed(ComputedId(ENTROPY)) },
                    float.clone(),
                    sp("s.entropy"),
                ),
            ),
        ],
        float.clone(),
        sp("sim.next(probe(cell)).expect(|s| s.entropy)"),
    );
    let info_gain_body = ex(
        ExprKind::Binary(BinaryOp::Sub, b(computed(ENTROPY, float.clone(), s)), b(expected)),
        float.clone(),
        s,
    );
    let s = sp("range(0, game.cells).max_by(|c| info_gain(c))");
    let best_probe_body = builtin(
        "List.max_by",
        vec![all_cells(4), closure(&[0], call(INFO_GAIN, vec![local(0, Ty::Int, s)], float.clone(), sp("info_gain(c)")))],
        Ty::Option(Box::new(Ty::Int)),
        s,
    );
    // entropy = weights.map(|w| uncertainty(w / total)).sum()
    let s = sp("weights.map(|w| uncertainty(w / total)).sum()");
    let entropy_body = builtin(
        "List.sum",
        vec![builtin(
            "List.map",
            vec![
                state(WEIGHTS, list_f.clone(), s),
                closure(
                    &[0],
                    call(
                        UNCERTAINTY,
                        vec![bin(BinaryOp::Div, local(0, float.clone(), sp("w / total")), computed(TOTAL, float.clone(), sp("w / total")), float.clone())],
                        float.clone(),
                        sp("uncertainty(w / total)"),
                    ),
                ),
            ],
            list_f.clone(),
            s,
        )],
        float.clone(),
        s,
    );
    // uncertainty(p) = if p > 0.0 { -(p * p.ln()) } else { 0.0 }
    let s = sp("if p > 0.0 { -(p * p.ln()) } else { 0.0 }");
    let p = || local(0, float.clone(), s);
    let uncertainty_body = ex(
        ExprKind::If {
            guards: vec![Guard::Cond(bin(BinaryOp::Gt, p(), lit_f(0.0, s), Ty::Bool))],
            then: b(ex(
                ExprKind::Unary(UnaryOp::Neg, b(bin(BinaryOp::Mul, p(), builtin("Float.ln", vec![p()], float.clone(), sp("p.ln()")), float.clone()))),
                float.clone(),
                sp("-(p * p.ln())"),
            )),
            otherwise: b(lit_f(0.0, s)),
        },
        float.clone(),
        s,
    );
    let s = sp("if answers == 0 { 0.0 } else { surprises.to_float() / answers.to_float() }");
    let surprise_rate_body = ex(
        ExprKind::If {
            guards: vec![Guard::Cond(bin(BinaryOp::Eq, state(ANSWERS, Ty::Int, sp("answers == 0")), lit_i(0, sp("answers == 0")), Ty::Bool))],
            then: b(lit_f(0.0, sp("{ 0.0 }"))),
            otherwise: b(bin(
                BinaryOp::Div,
                builtin("Int.to_float", vec![state(SURPRISES, Ty::Int, sp("surprises.to_float()"))], float.clone(), sp("surprises.to_float()")),
                builtin("Int.to_float", vec![state(ANSWERS, Ty::Int, sp("answers.to_float()"))], float.clone(), sp("answers.to_float()")),
                float.clone(),
            )),
        },
        float.clone(),
        s,
    );
    let comp = |name: &str, layer: u32, ty: Ty, body: Body, decl: &str| Computed {
        name: name.into(),
        layer: LayerId(layer),
        ty,
        body,
        span: sp(decl),
    };
    let computed_values = vec![
        comp("total", 0, float.clone(), body(&[], total_body), "computed total"),
        comp("best_cell", 0, Ty::Int, body(&["c", "c"], best_cell_body), "computed best_cell"),
        comp("best_prob", 0, float.clone(), body(&[], best_prob_body), "computed best_prob"),
        comp("best_probe", 1, Ty::Option(Box::new(Ty::Int)), body(&["c"], best_probe_body), "computed best_probe"),
        comp("surprise_rate", 2, float.clone(), body(&[], surprise_rate_body), "computed surprise_rate"),
        comp("entropy", 0, float.clone(), body(&["w"], entropy_body), "computed entropy"),
    ];

    // Functions.
    let s = sp("if target < cell { Dir.Left } else if target > cell { Dir.Right } else { Dir.Here }");
    let target = |t| local(0, Ty::Int, sp(t));
    let cell = |t| local(1, Ty::Int, sp(t));
    let truth_body = ex(
        ExprKind::If {
            guards: vec![Guard::Cond(bin(BinaryOp::Lt, target("target < cell"), cell("target < cell"), Ty::Bool))],
            then: b(dir(0, sp("Dir.Left"))),
            otherwise: b(ex(
                ExprKind::If {
                    guards: vec![Guard::Cond(bin(BinaryOp::Gt, target("target > cell"), cell("target > cell"), Ty::Bool))],
                    then: b(dir(2, sp("Dir.Right"))),
                    otherwise: b(dir(1, sp("Dir.Here"))),
                },
                Ty::Enum("Dir".into()),
                sp("if target > cell { Dir.Right } else { Dir.Here }"),
            )),
        },
        Ty::Enum("Dir".into()),
        s,
    );
    let s = sp("if truth(target, cell) == dir { 1.0 - noise_guess } else { noise_guess / 2.0 }");
    let likelihood_body = ex(
        ExprKind::If {
            guards: vec![Guard::Cond(bin(
                BinaryOp::Eq,
                call(TRUTH, vec![target("truth(target, cell)"), cell("truth(target, cell)")], Ty::Enum("Dir".into()), sp("truth(target, cell)")),
                local(2, Ty::Enum("Dir".into()), sp("== dir")),
                Ty::Bool,
            ))],
            then: b(bin(BinaryOp::Sub, lit_f(1.0, sp("1.0 - noise_guess")), tunable(0, sp("1.0 - noise_guess")), float.clone())),
            otherwise: b(bin(BinaryOp::Div, tunable(0, sp("noise_guess / 2.0")), lit_f(2.0, sp("noise_guess / 2.0")), float.clone())),
        },
        float.clone(),
        s,
    );
    // predicted(cell, dir): locals cell 0, dir 1, t 2.
    let predicted_expr = |cell: Expr, dir: Expr, s: SrcSpan| -> Expr {
        let t = || local(2, Ty::Int, s);
        let mapped = builtin(
            "List.map",
            vec![
                all_cells(2),
                closure(
                    &[2],
                    bin(
                        BinaryOp::Mul,
                        ex(ExprKind::Index(b(state(WEIGHTS, list_f.clone(), s)), b(t())), float.clone(), s),
                        call(LIKELIHOOD, vec![t(), cell, dir], float.clone(), s),
                        float.clone(),
                    ),
                ),
            ],
            list_f.clone(),
            s,
        );
        bin(BinaryOp::Div, builtin("List.sum", vec![mapped], float.clone(), s), computed(TOTAL, float.clone(), s), float.clone())
    };
    let s = sp("range(0, game.cells).map(|t| weights[t] * likelihood(t, cell, dir)).sum() / total");
    let predicted_body = predicted_expr(local(0, Ty::Int, s), local(1, Ty::Enum("Dir".into()), s), s);
    let func = |name: &str, layer: u32, params: Vec<Ty>, ret: Ty, body: Body, decl: &str| Function {
        name: name.into(),
        layer: Some(LayerId(layer)),
        params,
        ret,
        body,
        span: sp(decl),
    };
    let dir_ty = Ty::Enum("Dir".into());
    let fns = vec![
        func("truth", 0, vec![Ty::Int, Ty::Int], dir_ty.clone(), body(&["target", "cell"], truth_body), "fn truth"),
        func("likelihood", 0, vec![Ty::Int, Ty::Int, dir_ty.clone()], float.clone(), body(&["target", "cell", "dir"], likelihood_body), "fn likelihood"),
        func("predicted", 0, vec![Ty::Int, dir_ty.clone()], float.clone(), body(&["cell", "dir", "t"], predicted_body), "fn predicted"),
        func("info_gain", 1, vec![Ty::Int], float.clone(), body(&["cell", "s"], info_gain_body), "fn info_gain"),
        func("uncertainty", 0, vec![float.clone()], float.clone(), body(&["p"], uncertainty_body), "fn uncertainty"),
    ];

    // Actions.
    let guess = Action {
        name: "guess".into(),
        layer: LayerId(0),
        params: vec![Ty::Int],
        frame: frame(&["cell"]),
        available: None,
        requires: vec![],
        body: vec![emit("guess", vec![local(0, Ty::Int, sp("game.guess(cell)"))], sp("emit game.guess(cell)"))],
        span: sp("action guess"),
    };
    let s = sp("cell >= 0 and cell < game.cells");
    let mut requires = vec![Requires {
        cond: bin(
            BinaryOp::And,
            bin(BinaryOp::Ge, local(0, Ty::Int, s), lit_i(0, s), Ty::Bool),
            bin(BinaryOp::Lt, local(0, Ty::Int, s), cells(s), Ty::Bool),
            Ty::Bool,
        ),
        error: ErrorId(0),
        span: sp("requires cell >= 0 and cell < game.cells else fail OFF_LINE"),
    }];
    if variant == Variant::RequiresFailsMidGame {
        requires.push(Requires {
            cond: bin(BinaryOp::Lt, state(PROBES, Ty::Int, s), lit_i(2, s), Ty::Bool),
            error: ErrorId(0),
            span: sp("requires cell >= 0 and cell < game.cells else fail OFF_LINE"),
        });
    }
    let s = sp("game.probes_left > 0");
    let probe = Action {
        name: "probe".into(),
        layer: LayerId(1),
        params: vec![Ty::Int],
        frame: frame(&["cell"]),
        available: Some(bin(BinaryOp::Gt, ex(ExprKind::GameProperty("probes_left".into()), Ty::Int, s), lit_i(0, s), Ty::Bool)),
        requires,
        body: vec![
            patch(PROBES, AssignOp::Add, lit_i(1, sp("patch probes += 1")), sp("patch probes += 1")),
            emit("probe", vec![local(0, Ty::Int, sp("game.probe(cell)"))], sp("emit game.probe(cell)")),
        ],
        span: sp("action probe"),
    };

    // Belief: model, handler, decide.
    let model_branch = |index: u32, text: &str, probability: bool| {
        let s = sp(text);
        let d = dir(index, s);
        ModelBranch {
            observation: "answer".into(),
            args: vec![local(0, Ty::Int, s), d.clone()],
            probability: probability.then(|| predicted_expr(local(0, Ty::Int, s), d, s)),
            span: s,
        }
    };
    let model = Model {
        effect: "probe".into(),
        frame: frame(&["cell", "dir", "t"]),
        branches: vec![
            model_branch(0, "game.answer(cell, Dir.Left) with probability predicted(cell, Dir.Left)", true),
            model_branch(1, "game.answer(cell, Dir.Here) with probability predicted(cell, Dir.Here)", true),
            model_branch(2, "game.answer(cell, Dir.Right) otherwise", false),
        ],
        span: sp("model game.probe(cell)"),
    };
    // on answer(cell, dir): locals cell 0, dir 1, t 2; `predicted` needs the pair as args.
    let s = sp("patch surprises += if predicted(cell, dir) < 0.1 { 1 } else { 0 }");
    let surprised = bin(
        BinaryOp::Lt,
        call(PREDICTED, vec![local(0, Ty::Int, s), local(1, dir_ty.clone(), s)], float.clone(), sp("predicted(cell, dir)")),
        lit_f(0.1, s),
        Ty::Bool,
    );
    let s2 = sp("patch weights = range(0, game.cells).map(|t| weights[t] * likelihood(t, cell, dir))");
    let t = || local(2, Ty::Int, s2);
    let handler = Handler {
        observation: "answer".into(),
        frame: frame(&["cell", "dir", "t"]),
        body: vec![
            patch(
                SURPRISES,
                AssignOp::Add,
                ex(ExprKind::If { guards: vec![Guard::Cond(surprised)], then: b(lit_i(1, s)), otherwise: b(lit_i(0, s)) }, Ty::Int, s),
                s,
            ),
            patch(ANSWERS, AssignOp::Add, lit_i(1, sp("patch answers += 1")), sp("patch answers += 1")),
            patch(
                WEIGHTS,
                AssignOp::Set,
                builtin(
                    "List.map",
                    vec![
                        all_cells(3),
                        closure(
                            &[2],
                            bin(
                                BinaryOp::Mul,
                                ex(ExprKind::Index(b(state(WEIGHTS, list_f.clone(), s2)), b(t())), float.clone(), s2),
                                call(LIKELIHOOD, vec![t(), local(0, Ty::Int, s2), local(1, dir_ty.clone(), s2)], float.clone(), s2),
                                float.clone(),
                            ),
                        ),
                    ],
                    list_f.clone(),
                    s2,
                ),
                s2,
            ),
        ],
        span: sp("on game.answer(cell, dir)"),
    };
    let belief_decide = if variant == Variant::NoRuleMatches {
        vec![]
    } else {
        vec![Rule {
            frame: frame(&[]),
            guards: vec![],
            action: ActionId(GUESS),
            args: vec![computed(BEST_CELL, Ty::Int, sp("guess(best_cell)"))],
            span: sp("guess(best_cell)"),
        }]
    };

    // Planning's rule: when best_prob < confidence, let Some(c) = best_probe,
    // info_gain(c) > min_gain => probe(c).
    let s = sp("when best_prob < confidence, let Some(c) = best_probe, info_gain(c) > min_gain => probe(c)");
    let planning_rule = Rule {
        frame: frame(&["c"]),
        guards: vec![
            Guard::Cond(bin(
                BinaryOp::Lt,
                computed(BEST_PROB, float.clone(), sp("best_prob < confidence")),
                ex(ExprKind::Config(ConfigId(0)), float.clone(), sp("confidence,")),
                Ty::Bool,
            )),
            Guard::Let(
                Pattern {
                    kind: PatternKind::Some(Box::new(Pattern { kind: PatternKind::Bind(LocalId(0)), span: span_n("Some(c)", 1) })),
                    span: span_n("Some(c)", 1),
                },
                computed(BEST_PROBE, Ty::Option(Box::new(Ty::Int)), span_n("best_probe", 1)),
            ),
            Guard::Cond(bin(
                BinaryOp::Gt,
                call(INFO_GAIN, vec![local(0, Ty::Int, s)], float.clone(), span_n("info_gain(c)", 1)),
                tunable(1, sp("min_gain => probe(c)")),
                Ty::Bool,
            )),
        ],
        action: ActionId(PROBE),
        args: vec![local(0, Ty::Int, sp("probe(c)"))],
        span: s,
    };

    // Reflection's revise blocks.
    let s = sp("surprise_rate > 0.2 and cooldown == 0 and noise_guess < 0.4");
    let gate = bin(
        BinaryOp::And,
        bin(
            BinaryOp::And,
            bin(BinaryOp::Gt, computed(SURPRISE_RATE, float.clone(), s), lit_f(0.2, s), Ty::Bool),
            bin(BinaryOp::Eq, state(COOLDOWN, Ty::Int, s), lit_i(0, s), Ty::Bool),
            Ty::Bool,
        ),
        bin(BinaryOp::Lt, tunable(0, s), lit_f(if variant == Variant::ReviseLeavesRange { 1.0 } else { 0.4 }, s), Ty::Bool),
        Ty::Bool,
    );
    let step = if variant == Variant::ReviseLeavesRange { 0.5 } else { 0.05 };
    let revise_stmt = sp("revise belief.noise_guess += 0.05");
    let revise = vec![
        Revise {
            frame: frame(&[]),
            cond: gate,
            body: vec![
                stmt(StmtKind::Revise { tunable: TunableId(0), op: AssignOp::Add, value: lit_f(step, revise_stmt) }, revise_stmt),
                patch(COOLDOWN, AssignOp::Set, lit_i(2, sp("patch cooldown = 2")), sp("patch cooldown = 2")),
            ],
            span: sp("revise when surprise_rate"),
        },
        Revise {
            frame: frame(&[]),
            cond: bin(BinaryOp::Gt, state(COOLDOWN, Ty::Int, sp("cooldown > 0")), lit_i(0, sp("cooldown > 0")), Ty::Bool),
            body: vec![patch(COOLDOWN, AssignOp::Sub, lit_i(1, sp("patch cooldown -= 1")), sp("patch cooldown -= 1"))],
            span: sp("revise when cooldown > 0"),
        },
    ];

    let layer = |name: &str, needs: Vec<u32>, decl: &str| Layer {
        name: name.into(),
        needs: needs.iter().map(|&l| LayerId(l)).collect(),
        below: needs.iter().map(|&l| LayerId(l)).collect(),
        state: vec![],
        tunables: vec![],
        computed: vec![],
        fns: vec![],
        actions: vec![],
        models: vec![],
        handlers: vec![],
        decide: vec![],
        revise: vec![],
        span: sp(decl),
    };
    let mut belief = layer("belief", vec![], "layer belief");
    belief.state = vec![StateId(WEIGHTS), StateId(SURPRISES), StateId(ANSWERS)];
    belief.tunables = vec![TunableId(0)];
    belief.computed = vec![ComputedId(TOTAL), ComputedId(BEST_CELL), ComputedId(BEST_PROB), ComputedId(ENTROPY)];
    belief.fns = vec![FnId(TRUTH), FnId(LIKELIHOOD), FnId(PREDICTED), FnId(UNCERTAINTY)];
    belief.actions = vec![ActionId(GUESS)];
    belief.models = vec![model];
    belief.handlers = vec![handler];
    belief.decide = belief_decide;
    let mut planning = layer("planning", vec![0], "layer planning");
    planning.state = vec![StateId(PROBES)];
    planning.tunables = vec![TunableId(1)];
    planning.computed = vec![ComputedId(BEST_PROBE)];
    planning.fns = vec![FnId(INFO_GAIN)];
    planning.actions = vec![ActionId(PROBE)];
    planning.decide = vec![planning_rule];
    let mut reflection = layer("reflection", vec![1], "layer reflection");
    reflection.below = vec![LayerId(0), LayerId(1)];
    reflection.state = vec![StateId(COOLDOWN)];
    reflection.computed = vec![ComputedId(SURPRISE_RATE)];
    reflection.revise = revise;

    Arc::new(Program {
        module: "examples.search".into(),
        game: Some("search".into()),
        files: vec![PATH.into()],
        enums: vec![EnumDef {
            name: "Dir".into(),
            variants: vec![("Left".into(), vec![]), ("Here".into(), vec![]), ("Right".into(), vec![])],
        }],
        errors: vec![ErrorDef {
            code: "OFF_LINE".into(),
            message: "the probed cell is not on the line".into(),
            span: sp("error OFF_LINE"),
        }],
        consts: vec![],
        config: vec![float_param("confidence", None, 0.9, 0.5, 1.0, "confidence: Float = 0.9 in 0.5..=1.0")],
        layers: vec![belief, planning, reflection],
        state: state_slots,
        tunables: vec![
            float_param("noise_guess", Some(0), 0.1, 0.01, 0.45, "tunable noise_guess"),
            float_param("min_gain", Some(1), 0.01, 0.0, 1.0, "tunable min_gain"),
        ],
        computed: computed_values,
        fns,
        actions: vec![guess, probe],
    })
}
