//! Type inference: variables, unification and substitution.

use std::collections::BTreeMap;
use std::sync::Arc;

use harness_grammar::Span;

use super::Checker;
use crate::codes::Code;
use crate::types::Ty;

impl Checker<'_> {
    pub(super) fn fresh(&mut self, numeric: bool) -> Ty {
        self.vars.push((None, numeric));
        Ty::Var(self.vars.len() as u32 - 1)
    }

    /// Follows variable bindings at the top of a type.
    pub(super) fn shallow(&self, ty: &Ty) -> Ty {
        let mut ty = ty.clone();
        while let Ty::Var(v) = ty {
            match self
                .vars
                .get(v as usize)
                .and_then(|(binding, _)| binding.clone())
            {
                Some(bound) => ty = bound,
                None => break,
            }
        }
        ty
    }

    /// Substitutes every bound variable, deeply.
    pub(super) fn zonk(&self, ty: &Ty) -> Ty {
        match self.shallow(ty) {
            Ty::Option(t) => Ty::Option(Box::new(self.zonk(&t))),
            Ty::List(t) => Ty::List(Box::new(self.zonk(&t))),
            Ty::Set(t) => Ty::Set(Box::new(self.zonk(&t))),
            Ty::Map(k, v) => Ty::Map(Box::new(self.zonk(&k)), Box::new(self.zonk(&v))),
            Ty::Opaque(name, args) => Ty::Opaque(name, args.iter().map(|a| self.zonk(a)).collect()),
            Ty::Fn(params, ret) => Ty::Fn(
                params.iter().map(|p| self.zonk(p)).collect(),
                Box::new(self.zonk(&ret)),
            ),
            other => other,
        }
    }

    /// The final type for the IR: unbound numeric variables default to `Int`, others to the
    /// error type (an error was or will be reported for them).
    pub(super) fn finalize(&self, ty: &Ty) -> Ty {
        match self.shallow(ty) {
            Ty::Var(v) => {
                if self
                    .vars
                    .get(v as usize)
                    .is_some_and(|(_, numeric)| *numeric)
                {
                    Ty::Int
                } else {
                    Ty::Error
                }
            }
            Ty::Option(t) => Ty::Option(Box::new(self.finalize(&t))),
            Ty::List(t) => Ty::List(Box::new(self.finalize(&t))),
            Ty::Set(t) => Ty::Set(Box::new(self.finalize(&t))),
            Ty::Map(k, v) => Ty::Map(Box::new(self.finalize(&k)), Box::new(self.finalize(&v))),
            Ty::Opaque(name, args) => {
                Ty::Opaque(name, args.iter().map(|a| self.finalize(a)).collect())
            }
            Ty::Fn(params, ret) => Ty::Fn(
                params.iter().map(|p| self.finalize(p)).collect(),
                Box::new(self.finalize(&ret)),
            ),
            other => other,
        }
    }

    pub(super) fn occurs(&self, v: u32, ty: &Ty) -> bool {
        match self.shallow(ty) {
            Ty::Var(w) => v == w,
            Ty::Option(t) | Ty::List(t) | Ty::Set(t) => self.occurs(v, &t),
            Ty::Map(k, val) => self.occurs(v, &k) || self.occurs(v, &val),
            Ty::Opaque(_, args) => args.iter().any(|a| self.occurs(v, a)),
            Ty::Fn(params, ret) => params.iter().any(|p| self.occurs(v, p)) || self.occurs(v, &ret),
            _ => false,
        }
    }

    /// Makes two types equal, binding variables; false when they cannot be.
    pub(super) fn unify(&mut self, a: &Ty, b: &Ty) -> bool {
        let (a, b) = (self.shallow(a), self.shallow(b));
        match (&a, &b) {
            (Ty::Error, _) | (_, Ty::Error) => true,
            (Ty::Var(x), Ty::Var(y)) if x == y => true,
            (Ty::Var(v), other) | (other, Ty::Var(v)) => {
                let numeric = self.vars[*v as usize].1;
                if numeric {
                    match other {
                        Ty::Var(w) => self.vars[*w as usize].1 = true,
                        Ty::Int | Ty::Float => {}
                        _ => return false,
                    }
                }
                if self.occurs(*v, other) {
                    return false;
                }
                self.vars[*v as usize].0 = Some(other.clone());
                true
            }
            (Ty::Option(x), Ty::Option(y))
            | (Ty::List(x), Ty::List(y))
            | (Ty::Set(x), Ty::Set(y)) => self.unify(x, y),
            (Ty::Map(k1, v1), Ty::Map(k2, v2)) => self.unify(k1, k2) && self.unify(v1, v2),
            (Ty::Opaque(n1, a1), Ty::Opaque(n2, a2)) => {
                n1 == n2 && a1.len() == a2.len() && a1.iter().zip(a2).all(|(x, y)| self.unify(x, y))
            }
            (Ty::Fn(p1, r1), Ty::Fn(p2, r2)) => {
                p1.len() == p2.len()
                    && p1.iter().zip(p2).all(|(x, y)| self.unify(x, y))
                    && self.unify(r1, r2)
            }
            _ => a == b,
        }
    }

    /// Unifies the found type with the expected one, reporting a mismatch at `span`.
    pub(super) fn expect_ty(&mut self, span: Span, found: &Ty, expected: &Ty) {
        if !self.unify(found, expected) {
            let (found, expected) = (self.zonk(found), self.zonk(expected));
            let help = match (&found, &expected) {
                (Ty::Int, Ty::Float) => Some("convert with `.to_float()`".to_owned()),
                (Ty::Float, Ty::Int) => {
                    Some("convert with `.round()`, `.floor()` or `.ceil()`".to_owned())
                }
                (found, Ty::Option(inner)) if self.unify(found, inner) => {
                    Some("wrap the value in `Some(...)`".to_owned())
                }
                _ => None,
            };
            self.error(
                Code::TypeMismatch,
                span,
                format!("expected `{expected}`, found `{found}`"),
                help,
            );
        }
    }
}

pub(super) fn substitute(ty: &Ty, map: &BTreeMap<Arc<str>, Ty>) -> Ty {
    match ty {
        Ty::Generic(name) => map.get(name).cloned().unwrap_or(Ty::Error),
        Ty::Option(t) => Ty::Option(Box::new(substitute(t, map))),
        Ty::List(t) => Ty::List(Box::new(substitute(t, map))),
        Ty::Set(t) => Ty::Set(Box::new(substitute(t, map))),
        Ty::Map(k, v) => Ty::Map(Box::new(substitute(k, map)), Box::new(substitute(v, map))),
        Ty::Opaque(name, args) => Ty::Opaque(
            name.clone(),
            args.iter().map(|a| substitute(a, map)).collect(),
        ),
        Ty::Fn(params, ret) => Ty::Fn(
            params.iter().map(|p| substitute(p, map)).collect(),
            Box::new(substitute(ret, map)),
        ),
        other => other.clone(),
    }
}
