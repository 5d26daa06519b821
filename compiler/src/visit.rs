//! The one walk over the lowered IR, shared by every traversal of it.
//!
//! [`Visit`] reads the IR and [`VisitMut`] rewrites it in place; both are generated from one
//! definition, so a new kind of node is visited everywhere once it is visited here. A traversal
//! overrides the methods for the nodes it cares about and calls the matching function of
//! [`walk`] or [`walk_mut`] to go on into the node's children. The checker replaces inference
//! variables with it ([`crate::check`]), the program assembly moves spans into their files with
//! it ([`crate::lower`]), the editor queries collect the types of expressions with it
//! ([`crate::ide`]), and the runtime resolves the builtin call sites of a program with it.
//!
//! The walk visits, in source order, every expression, pattern and statement, and every span:
//! those of the nodes and those of the definitions, `requires` clauses and model branches that
//! hold them. Before the body of a definition it visits the definition's frame (its locals), so
//! a traversal can tell the types of the locals its patterns bind.

use crate::check::ChunkIr;
use crate::ir::{self, Expr, Pattern, SrcSpan, Stmt};

macro_rules! visitor {
    ($(#[$doc:meta])* $visit:ident, $walk:ident, ($($mut:tt)?)) => {
        $(#[$doc])*
        pub trait $visit {
            /// Visits an expression; by default its span and its parts.
            fn expr(&mut self, expr: &$($mut)? Expr) {
                $walk::expr(self, expr);
            }

            /// Visits a pattern; by default its span and its sub-patterns.
            fn pattern(&mut self, pattern: &$($mut)? Pattern) {
                $walk::pattern(self, pattern);
            }

            /// Visits a statement; by default its span and its parts.
            fn stmt(&mut self, stmt: &$($mut)? Stmt) {
                $walk::stmt(self, stmt);
            }

            /// Visits a span; by default nothing.
            fn span(&mut self, span: &$($mut)? SrcSpan) {
                let _ = span;
            }

            /// Visits the frame (the locals) of the definition whose body is walked next; by
            /// default nothing.
            fn frame(&mut self, frame: &$($mut)? ir::Frame) {
                let _ = frame;
            }
        }

        /// The default walks of
        #[doc = concat!("[`", stringify!($visit), "`]")]
        /// : each visits a node's span and children through the visitor.
        pub mod $walk {
            use super::*;

            /// Visits the span and the parts of an expression.
            pub fn expr<V: $visit + ?Sized>(v: &mut V, expr: &$($mut)? Expr) {
                harness_grammar::stack::guarded(|| expr_kind(v, expr))
            }

            /// [`expr`] on the current stack segment.
            fn expr_kind<V: $visit + ?Sized>(v: &mut V, expr: &$($mut)? Expr) {
                use ir::ExprKind as K;
                v.span(&$($mut)? expr.span);
                match &$($mut)? expr.kind {
                    K::GameCall { args, .. }
                    | K::CallFn { args, .. }
                    | K::CallBuiltin { args, .. }
                    | K::SimNext { args, .. }
                    | K::Variant { payload: args, .. }
                    | K::Record(args)
                    | K::List(args)
                    | K::Set(args) => exprs(v, args),
                    K::Closure { body: inner, .. }
                    | K::Some(inner)
                    | K::Field(inner, _)
                    | K::Unary(_, inner)
                    | K::SnapshotRead { snapshot: inner, .. } => v.expr(inner),
                    K::Index(a, b) | K::Binary(_, a, b) => {
                        v.expr(a);
                        v.expr(b);
                    }
                    K::If { guards: gs, then, otherwise } => {
                        guards(v, gs);
                        v.expr(then);
                        v.expr(otherwise);
                    }
                    K::Match(scrutinee, arms) => {
                        v.expr(scrutinee);
                        for arm in arms {
                            v.pattern(&$($mut)? arm.pattern);
                            v.expr(&$($mut)? arm.body);
                        }
                    }
                    K::Let { pattern, value, body } => {
                        v.pattern(pattern);
                        v.expr(value);
                        v.expr(body);
                    }
                    K::Lit(_)
                    | K::Local(_)
                    | K::Member(_)
                    | K::Config(_)
                    | K::Const(_)
                    | K::GameProperty(_)
                    | K::FnRef(_)
                    | K::EmptyMap
                    | K::None => {}
                }
            }

            /// Visits expressions in order.
            pub fn exprs<V: $visit + ?Sized>(v: &mut V, exprs: &$($mut)? [Expr]) {
                for expr in exprs {
                    v.expr(expr);
                }
            }

            /// Visits the span and the sub-patterns of a pattern.
            pub fn pattern<V: $visit + ?Sized>(v: &mut V, pattern: &$($mut)? Pattern) {
                v.span(&$($mut)? pattern.span);
                match &$($mut)? pattern.kind {
                    ir::PatternKind::Some(inner) => v.pattern(inner),
                    ir::PatternKind::Variant { payload, .. } => {
                        for p in payload {
                            v.pattern(p);
                        }
                    }
                    ir::PatternKind::Wildcard
                    | ir::PatternKind::Bind(_)
                    | ir::PatternKind::Lit(_)
                    | ir::PatternKind::None => {}
                }
            }

            /// Visits guards in order: a `let` guard's pattern, then its value.
            pub fn guards<V: $visit + ?Sized>(v: &mut V, guards: &$($mut)? [ir::Guard]) {
                for guard in guards {
                    match guard {
                        ir::Guard::Cond(e) => v.expr(e),
                        ir::Guard::Let(p, e) => {
                            v.pattern(p);
                            v.expr(e);
                        }
                    }
                }
            }

            /// Visits statements in order.
            pub fn stmts<V: $visit + ?Sized>(v: &mut V, stmts: &$($mut)? [Stmt]) {
                for stmt in stmts {
                    v.stmt(stmt);
                }
            }

            /// Visits the span and the parts of a statement.
            pub fn stmt<V: $visit + ?Sized>(v: &mut V, stmt: &$($mut)? Stmt) {
                v.span(&$($mut)? stmt.span);
                match &$($mut)? stmt.kind {
                    ir::StmtKind::Let(p, e) => {
                        v.pattern(p);
                        v.expr(e);
                    }
                    ir::StmtKind::Revise { value, .. } => v.expr(value),
                    ir::StmtKind::Patch { place, value, .. } => {
                        for step in &$($mut)? place.path {
                            if let ir::PlaceStep::Index(e) = step {
                                v.expr(e);
                            }
                        }
                        v.expr(value);
                    }
                    ir::StmtKind::Emit { args, .. } => exprs(v, args),
                    ir::StmtKind::Halt { .. } => {}
                    ir::StmtKind::LetLlm { pattern, args, .. } => {
                        v.pattern(pattern);
                        exprs(v, args);
                    }
                    ir::StmtKind::If { guards: gs, then, otherwise } => {
                        guards(v, gs);
                        stmts(v, then);
                        stmts(v, otherwise);
                    }
                }
            }

            /// Visits every definition of a lowered chunk: their bodies and their spans.
            pub fn chunk<V: $visit + ?Sized>(v: &mut V, chunk: &$($mut)? ChunkIr) {
                for (_, it) in &$($mut)? chunk.consts {
                    const_def(v, it);
                }
                for (_, it) in &$($mut)? chunk.config {
                    param(v, it);
                }
                for (_, it) in &$($mut)? chunk.errors {
                    v.span(&$($mut)? it.span);
                }
                for (_, it) in &$($mut)? chunk.fns {
                    function(v, it);
                }
                for (_, it) in &$($mut)? chunk.state {
                    state_slot(v, it);
                }
                for (_, it) in &$($mut)? chunk.tunables {
                    param(v, it);
                }
                for (_, it) in &$($mut)? chunk.computed {
                    computed(v, it);
                }
                for (_, it) in &$($mut)? chunk.llms {
                    llm(v, it);
                }
                for (_, it) in &$($mut)? chunk.actions {
                    action(v, it);
                }
                for it in &$($mut)? chunk.models {
                    model(v, it);
                }
                for it in &$($mut)? chunk.handlers {
                    handler(v, it);
                }
                for it in &$($mut)? chunk.rules {
                    rule(v, it);
                }
                for it in &$($mut)? chunk.revises {
                    revise(v, it);
                }
                for it in &$($mut)? chunk.tunable_defaults {
                    tunable_default(v, it);
                }
                for it in &$($mut)? chunk.machines {
                    v.span(&$($mut)? it.span);
                }
            }

            /// Visits every definition of an assembled program: their bodies and their spans,
            /// the layers' own definitions after the program's lists, layer by layer.
            pub fn program<V: $visit + ?Sized>(v: &mut V, program: &$($mut)? ir::Program) {
                for it in &$($mut)? program.consts {
                    const_def(v, it);
                }
                for it in &$($mut)? program.config {
                    param(v, it);
                }
                for it in &$($mut)? program.errors {
                    v.span(&$($mut)? it.span);
                }
                for it in &$($mut)? program.fns {
                    function(v, it);
                }
                for it in &$($mut)? program.state {
                    state_slot(v, it);
                }
                for it in &$($mut)? program.tunables {
                    param(v, it);
                }
                for it in &$($mut)? program.computed {
                    computed(v, it);
                }
                for it in &$($mut)? program.llms {
                    llm(v, it);
                }
                for it in &$($mut)? program.actions {
                    action(v, it);
                }
                for layer in &$($mut)? program.layers {
                    for it in &$($mut)? layer.models {
                        model(v, it);
                    }
                    for it in &$($mut)? layer.handlers {
                        handler(v, it);
                    }
                    for it in &$($mut)? layer.decide {
                        rule(v, it);
                    }
                    for it in &$($mut)? layer.revise {
                        revise(v, it);
                    }
                    for it in &$($mut)? layer.tunable_defaults {
                        tunable_default(v, it);
                    }
                    for it in &$($mut)? layer.machines {
                        v.span(&$($mut)? it.span);
                    }
                    v.span(&$($mut)? layer.span);
                }
            }

            /// Visits a definition's body: its frame, then its expression.
            fn body<V: $visit + ?Sized>(v: &mut V, body: &$($mut)? ir::Body) {
                v.frame(&$($mut)? body.frame);
                v.expr(&$($mut)? body.expr);
            }

            fn const_def<V: $visit + ?Sized>(v: &mut V, it: &$($mut)? ir::ConstDef) {
                body(v, &$($mut)? it.value);
                v.span(&$($mut)? it.span);
            }

            /// A config entry or a tunable.
            fn param<V: $visit + ?Sized>(v: &mut V, it: &$($mut)? ir::Param) {
                body(v, &$($mut)? it.default);
                v.span(&$($mut)? it.span);
            }

            fn function<V: $visit + ?Sized>(v: &mut V, it: &$($mut)? ir::Function) {
                body(v, &$($mut)? it.body);
                v.span(&$($mut)? it.span);
            }

            fn state_slot<V: $visit + ?Sized>(v: &mut V, it: &$($mut)? ir::StateSlot) {
                body(v, &$($mut)? it.init);
                v.span(&$($mut)? it.span);
            }

            fn computed<V: $visit + ?Sized>(v: &mut V, it: &$($mut)? ir::Computed) {
                body(v, &$($mut)? it.body);
                v.span(&$($mut)? it.span);
            }

            /// An `llm` item: each `ensure` condition with its clause, then the declaration.
            fn llm<V: $visit + ?Sized>(v: &mut V, it: &$($mut)? ir::LlmDef) {
                for ensure in &$($mut)? it.ensures {
                    body(v, &$($mut)? ensure.condition);
                    v.span(&$($mut)? ensure.span);
                }
                v.span(&$($mut)? it.span);
            }

            fn action<V: $visit + ?Sized>(v: &mut V, it: &$($mut)? ir::Action) {
                v.frame(&$($mut)? it.frame);
                if let Some(e) = &$($mut)? it.available {
                    v.expr(e);
                }
                for r in &$($mut)? it.requires {
                    v.expr(&$($mut)? r.cond);
                    v.span(&$($mut)? r.span);
                }
                stmts(v, &$($mut)? it.body);
                v.span(&$($mut)? it.span);
            }

            fn model<V: $visit + ?Sized>(v: &mut V, it: &$($mut)? ir::Model) {
                v.frame(&$($mut)? it.frame);
                for b in &$($mut)? it.branches {
                    exprs(v, &$($mut)? b.args);
                    if let Some(p) = &$($mut)? b.probability {
                        v.expr(p);
                    }
                    v.span(&$($mut)? b.span);
                }
                v.span(&$($mut)? it.span);
            }

            fn handler<V: $visit + ?Sized>(v: &mut V, it: &$($mut)? ir::Handler) {
                v.frame(&$($mut)? it.frame);
                stmts(v, &$($mut)? it.body);
                v.span(&$($mut)? it.span);
            }

            fn rule<V: $visit + ?Sized>(v: &mut V, it: &$($mut)? ir::Rule) {
                v.frame(&$($mut)? it.frame);
                guards(v, &$($mut)? it.guards);
                exprs(v, &$($mut)? it.args);
                v.span(&$($mut)? it.span);
            }

            fn revise<V: $visit + ?Sized>(v: &mut V, it: &$($mut)? ir::Revise) {
                v.frame(&$($mut)? it.frame);
                v.expr(&$($mut)? it.cond);
                stmts(v, &$($mut)? it.body);
                v.span(&$($mut)? it.span);
            }

            /// A layer's default for a needed layer's tunable.
            fn tunable_default<V: $visit + ?Sized>(v: &mut V, it: &$($mut)? ir::TunableDefault) {
                body(v, &$($mut)? it.value);
                v.span(&$($mut)? it.span);
            }
        }
    };
}

visitor!(
    /// A traversal that reads the IR.
    Visit,
    walk,
    ()
);

visitor!(
    /// A traversal that rewrites the IR in place.
    VisitMut,
    walk_mut,
    (mut)
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Workspace;
    use crate::signatures::SignatureSet;
    use crate::types::Ty;

    /// Counts what a walk visits.
    #[derive(Default)]
    struct Count {
        exprs: usize,
        patterns: usize,
        stmts: usize,
        spans: usize,
    }

    impl Visit for Count {
        fn expr(&mut self, expr: &Expr) {
            self.exprs += 1;
            walk::expr(self, expr);
        }
        fn pattern(&mut self, pattern: &Pattern) {
            self.patterns += 1;
            walk::pattern(self, pattern);
        }
        fn stmt(&mut self, stmt: &Stmt) {
            self.stmts += 1;
            walk::stmt(self, stmt);
        }
        fn span(&mut self, _: &SrcSpan) {
            self.spans += 1;
        }
    }

    /// Moves every span, as the program assembly does.
    struct Shift(u32);

    impl VisitMut for Shift {
        fn span(&mut self, span: &mut SrcSpan) {
            span.start += self.0;
            span.end += self.0;
        }
    }

    const PROGRAM: &str = "\
harness t.visit
layer l {
  state { n: Int = 0, xs: List<Int> = [], o: Option<Int> = None }
  computed c: Int = match Some(n) { Some(k) => k + 1, None => 0 }
  action a(by: Int) available when n < 9 {
    let m = by * 2
    if let Some(x) = o { patch xs[0] = x + m } else { patch n += m }
  }
  decide { when let Some(x) = o, x > 0 => a(x) }
}
";

    fn program() -> std::sync::Arc<ir::Program> {
        let mut ws = Workspace::new(SignatureSet::default());
        ws.set_file("t.harness", PROGRAM);
        match ws.program("t.visit") {
            Ok(program) => program,
            Err(errors) => panic!("{errors:?}"),
        }
    }

    #[test]
    fn the_walk_reaches_patterns_statements_and_every_span() {
        let program = program();
        let mut count = Count::default();
        let action = &program.actions[0];
        if let Some(e) = &action.available {
            count.expr(e);
        }
        walk::stmts(&mut count, &action.body);
        // `let m = by * 2` and the `if` with its two patches.
        assert_eq!(count.stmts, 4);
        // `m`, and `Some(x)` with its `x`.
        assert_eq!(count.patterns, 3);
        assert!(count.exprs >= 12, "{}", count.exprs);
        assert_eq!(count.spans, count.exprs + count.patterns + count.stmts);

        let mut count = Count::default();
        count.expr(&program.computed[0].body.expr);
        // `Some(k)`, `k` and `None`.
        assert_eq!(count.patterns, 3);
    }

    /// An `llm` item after other items, so that its chunk starts well into the file.
    const ASKER: &str = "\
harness t.asker
type Count = { value: Int }
const MOST: Int = 3
llm pick(limit: Int) -> Count
  ensure reply.value <= limit else \"within the limit\"
{
  system \"Answer with a number.\"
  user \"a number up to {limit}\"
}
layer l {
  state { n: Int = 0 }
  action ask() {
    let reply = emit llm.pick(MOST)
    patch n = match reply { LlmResult.Ok(v) => v.value, LlmResult.Failed(_) => 0 }
  }
  decide { when n == 0 => ask() }
}
";

    #[test]
    fn the_program_walk_reaches_ensure_clauses_and_their_spans_lie_in_the_file() {
        let mut ws = Workspace::new(SignatureSet::default());
        ws.set_file("t.harness", ASKER);
        let program = match ws.program("t.asker") {
            Ok(program) => program,
            Err(errors) => panic!("{errors:?}"),
        };
        let ensure = &program.llms[0].ensures[0];
        let at = |needle: &str| ASKER.find(needle).expect("in the text") as u32;
        assert_eq!(ensure.span.start, at("ensure"));
        assert_eq!(ensure.condition.expr.span.start, at("reply.value"));
        assert_eq!(ensure.condition.expr.span.file, 0);

        /// Collects the start of every span.
        struct Starts(Vec<u32>);
        impl Visit for Starts {
            fn span(&mut self, span: &SrcSpan) {
                self.0.push(span.start);
            }
        }
        let mut starts = Starts(Vec::new());
        walk::program(&mut starts, &program);
        for needle in ["ensure", "reply.value", "limit else", "MOST)", "n == 0"] {
            assert!(starts.0.contains(&at(needle)), "`{needle}` is visited");
        }
    }

    #[test]
    fn a_mutable_walk_moves_every_span_it_visits() {
        let program = program();
        let mut action = program.actions[0].clone();
        walk_mut::stmts(&mut Shift(1000), &mut action.body);
        struct Low(usize);
        impl Visit for Low {
            fn span(&mut self, span: &SrcSpan) {
                if span.start < 1000 {
                    self.0 += 1;
                }
            }
        }
        let mut low = Low(0);
        walk::stmts(&mut low, &action.body);
        assert_eq!(low.0, 0, "every span of the body was moved");
        let mut low = Low(0);
        walk::stmts(&mut low, &program.actions[0].body);
        assert!(low.0 > 0, "the original is untouched");
        assert!(matches!(program.computed[0].ty, Ty::Int));
    }
}
