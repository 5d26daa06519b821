//! Walks lowered IR to replace inference variables by final types.

use super::Checker;
use crate::ir;

impl Checker<'_> {
    pub(super) fn fix_expr(&self, expr: &mut ir::Expr) {
        expr.ty = self.finalize(&expr.ty);
        use ir::ExprKind as K;
        match &mut expr.kind {
            K::GameCall { args, .. }
            | K::CallFn { args, .. }
            | K::CallBuiltin { args, .. }
            | K::SimNext { args, .. } => args.iter_mut().for_each(|a| self.fix_expr(a)),
            K::Variant { payload, .. } => payload.iter_mut().for_each(|a| self.fix_expr(a)),
            K::Record(items) | K::List(items) | K::Set(items) => {
                items.iter_mut().for_each(|a| self.fix_expr(a))
            }
            K::Closure { body, .. } => self.fix_expr(body),
            K::Some(inner) | K::Field(inner, _) | K::Unary(_, inner) => self.fix_expr(inner),
            K::SnapshotRead { snapshot, .. } => self.fix_expr(snapshot),
            K::Index(a, b) | K::Binary(_, a, b) => {
                self.fix_expr(a);
                self.fix_expr(b);
            }
            K::If {
                guards,
                then,
                otherwise,
            } => {
                self.fix_guards(guards);
                self.fix_expr(then);
                self.fix_expr(otherwise);
            }
            K::Match(scrutinee, arms) => {
                self.fix_expr(scrutinee);
                arms.iter_mut().for_each(|arm| self.fix_expr(&mut arm.body));
            }
            K::Let { value, body, .. } => {
                self.fix_expr(value);
                self.fix_expr(body);
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

    pub(super) fn fix_guards(&self, guards: &mut [ir::Guard]) {
        for guard in guards {
            match guard {
                ir::Guard::Cond(e) | ir::Guard::Let(_, e) => self.fix_expr(e),
            }
        }
    }

    pub(super) fn fix_stmts(&self, stmts: &mut [ir::Stmt]) {
        for stmt in stmts {
            match &mut stmt.kind {
                ir::StmtKind::Let(_, e) | ir::StmtKind::Revise { value: e, .. } => self.fix_expr(e),
                ir::StmtKind::Patch { place, value, .. } => {
                    for step in &mut place.path {
                        if let ir::PlaceStep::Index(e) = step {
                            self.fix_expr(e);
                        }
                    }
                    self.fix_expr(value);
                }
                ir::StmtKind::Emit { args, .. } | ir::StmtKind::LetLlm { args, .. } => {
                    args.iter_mut().for_each(|a| self.fix_expr(a))
                }
                ir::StmtKind::If {
                    guards,
                    then,
                    otherwise,
                } => {
                    self.fix_guards(guards);
                    self.fix_stmts(then);
                    self.fix_stmts(otherwise);
                }
            }
        }
    }
}
