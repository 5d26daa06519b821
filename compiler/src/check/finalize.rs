//! Replaces inference variables in lowered IR by final types.

use super::Checker;
use crate::ir;
use crate::visit::{VisitMut, walk_mut};

/// The IR walk that gives every expression its final type.
struct Finalize<'c, 'a>(&'c Checker<'a>);

impl VisitMut for Finalize<'_, '_> {
    fn expr(&mut self, expr: &mut ir::Expr) {
        expr.ty = self.0.finalize(&expr.ty);
        walk_mut::expr(self, expr);
    }
}

impl Checker<'_> {
    pub(super) fn fix_expr(&self, expr: &mut ir::Expr) {
        Finalize(self).expr(expr);
    }

    pub(super) fn fix_guards(&self, guards: &mut [ir::Guard]) {
        walk_mut::guards(&mut Finalize(self), guards);
    }

    pub(super) fn fix_stmts(&self, stmts: &mut [ir::Stmt]) {
        walk_mut::stmts(&mut Finalize(self), stmts);
    }
}
