//! Operators and indexing.

use harness_grammar::{Span, ast};

use super::{Checker, Lowered, lowered, poisoned};
use crate::codes::Code;
use crate::diagnostic::Diagnostic;
use crate::ir;
use crate::signatures::{BuiltinKind, type_constructor};
use crate::types::Ty;

impl Checker<'_> {
    pub(super) fn index(&mut self, base: &ast::Expr, index: &ast::Expr, span: Span) -> Lowered {
        let base_lowered = self.infer(base, None);
        match self.shallow(&base_lowered.ty) {
            Ty::List(elem) => {
                let index = self.check(index, &Ty::Int);
                lowered(
                    ir::ExprKind::Index(Box::new(base_lowered), Box::new(index)),
                    *elem,
                    span,
                )
            }
            Ty::Map(key, value) => {
                let index = self.check(index, &key);
                lowered(
                    ir::ExprKind::Index(Box::new(base_lowered), Box::new(index)),
                    *value,
                    span,
                )
            }
            Ty::Error => {
                self.infer(index, None);
                poisoned(span)
            }
            other => {
                let owner = type_constructor(&other);
                let found = owner.and_then(|owner| {
                    self.builtins()
                        .find(|b| {
                            b.short_name == "index"
                                && matches!(&b.kind, BuiltinKind::Method(o) if *o == owner)
                        })
                        .cloned()
                });
                match found {
                    Some(builtin) => {
                        let arg = ast::Arg {
                            name: None,
                            value: index.clone(),
                            span: index.span,
                        };
                        self.call_builtin(&builtin, Some(base_lowered), &[arg], span, None)
                    }
                    None => {
                        self.error(
                            Code::NotIndexable,
                            base.span,
                            format!("a `{}` cannot be indexed", self.zonk(&other)),
                            Some("index a list with an `Int`, a map with a key, or a grid with a cell".into()),
                        );
                        self.infer(index, None);
                        poisoned(span)
                    }
                }
            }
        }
    }

    pub(super) fn unary(
        &mut self,
        op: ast::UnaryOp,
        operand: &ast::Expr,
        span: Span,
        hint: Option<&Ty>,
    ) -> Lowered {
        match op {
            ast::UnaryOp::Not => {
                let inner = self.check(operand, &Ty::Bool);
                lowered(ir::ExprKind::Unary(op, Box::new(inner)), Ty::Bool, span)
            }
            ast::UnaryOp::Neg => {
                let inner = self.infer(operand, hint);
                let numeric = self.fresh(true);
                if !self.unify(&inner.ty, &numeric) {
                    let found = self.zonk(&inner.ty);
                    self.error(
                        Code::BadOperands,
                        span,
                        format!("cannot negate a `{found}`"),
                        Some("`-` applies to `Int` and `Float`".into()),
                    );
                    return poisoned(span);
                }
                let ty = inner.ty.clone();
                lowered(ir::ExprKind::Unary(op, Box::new(inner)), ty, span)
            }
        }
    }

    pub(super) fn binary(
        &mut self,
        op: ast::BinaryOp,
        lhs: &ast::Expr,
        rhs: &ast::Expr,
        span: Span,
        hint: Option<&Ty>,
    ) -> Lowered {
        use ast::BinaryOp as B;
        let (left, right, ty) = match op {
            B::And | B::Or => (
                self.check(lhs, &Ty::Bool),
                self.check(rhs, &Ty::Bool),
                Ty::Bool,
            ),
            B::In | B::NotIn => {
                let right = self.infer(rhs, None);
                let left = match self.shallow(&right.ty) {
                    Ty::List(elem) | Ty::Set(elem) | Ty::Map(elem, _) => self.check(lhs, &elem),
                    Ty::Error => self.infer(lhs, None),
                    other => {
                        let left = self.infer(lhs, None);
                        self.error(
                            Code::BadOperands,
                            rhs.span,
                            format!(
                                "`{}` needs a list, a set or a map on its right, found `{}`",
                                op.symbol(),
                                self.zonk(&other)
                            ),
                            None,
                        );
                        left
                    }
                };
                (left, right, Ty::Bool)
            }
            _ => {
                let arithmetic = matches!(op, B::Add | B::Sub | B::Mul | B::Div | B::Rem);
                let left = self.infer(lhs, if arithmetic { hint } else { None });
                let right = self.infer(rhs, Some(&left.ty.clone()));
                if !self.unify(&left.ty, &right.ty) {
                    let (l, r) = (self.zonk(&left.ty), self.zonk(&right.ty));
                    let help = match (&l, &r) {
                        (Ty::Int, Ty::Float) | (Ty::Float, Ty::Int) => Some(
                            "there is no implicit conversion: use `.to_float()` on the `Int`"
                                .to_owned(),
                        ),
                        _ => None,
                    };
                    self.push(
                        Diagnostic::new(
                            Code::BadOperands,
                            span,
                            format!("cannot apply `{}` to `{l}` and `{r}`", op.symbol()),
                        )
                        .label(
                            Span {
                                start: left.span.start,
                                end: left.span.end,
                            },
                            format!("this is `{l}`"),
                        )
                        .label(
                            Span {
                                start: right.span.start,
                                end: right.span.end,
                            },
                            format!("this is `{r}`"),
                        )
                        .maybe_help(help),
                    );
                    return poisoned(span);
                }
                let operand = self.shallow(&left.ty);
                let ok = match op {
                    B::Eq | B::Ne => true,
                    B::Lt | B::Le | B::Gt | B::Ge => {
                        matches!(operand, Ty::String) || {
                            let numeric = self.fresh(true);
                            self.unify(&operand, &numeric)
                        }
                    }
                    _ => {
                        let numeric = self.fresh(true);
                        self.unify(&operand, &numeric)
                    }
                };
                if !ok {
                    self.error(
                        Code::BadOperands,
                        span,
                        format!(
                            "cannot apply `{}` to `{}`",
                            op.symbol(),
                            self.zonk(&operand)
                        ),
                        Some(if arithmetic {
                            "arithmetic applies to `Int` and `Float`".into()
                        } else {
                            "ordering applies to numbers and strings".into()
                        }),
                    );
                    return poisoned(span);
                }
                let ty = if arithmetic {
                    left.ty.clone()
                } else {
                    Ty::Bool
                };
                (left, right, ty)
            }
        };
        lowered(
            ir::ExprKind::Binary(op, Box::new(left), Box::new(right)),
            ty,
            span,
        )
    }
}
