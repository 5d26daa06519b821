//! Calls: builtins, methods, functions, `sim.next` and argument lists.

use std::collections::BTreeMap;

use harness_grammar::{Span, ast};

use super::infer::substitute;
use super::{Checker, IntoSpan, Lowered, lowered, member_kind_name, param_list, poisoned};
use crate::codes::Code;
use crate::diagnostic::{Diagnostic, did_you_mean};
use crate::env::{DefKey, FnInfo, MemberDef, TypeDef, ValueDef};
use crate::ir;
use crate::signatures::{Builtin, BuiltinKind, FnSig, type_constructor};
use crate::symbol::Symbol;
use crate::types::Ty;

impl Checker<'_> {
    pub(super) fn visible_builtin(&self, builtin: &Builtin) -> bool {
        match &builtin.module {
            None => true,
            Some(module) => match self.scope.std_imports.get(module) {
                Some(None) => true,
                Some(Some(names)) => {
                    names.contains(&builtin.short_name)
                        || matches!(&builtin.kind, BuiltinKind::Method(owner) | BuiltinKind::Static(owner) if names.contains(owner))
                }
                None => false,
            },
        }
    }

    /// Builtins of the library and the game, in a stable order.
    pub(super) fn builtins(&self) -> impl Iterator<Item = &Builtin> {
        let game = self.scope.game.iter().flat_map(|g| g.builtins.iter());
        self.sigs
            .builtins
            .iter()
            .filter(|b| self.visible_builtin(b))
            .chain(game)
    }

    pub(super) fn method(
        &mut self,
        base: &ast::Expr,
        name: &ast::Ident,
        args: &[ast::Arg],
        span: Span,
        hint: Option<&Ty>,
    ) -> Lowered {
        if let ast::ExprKind::Name(n) = &base.kind {
            if n.name == "game" {
                return self.game_query(name, Some(args), span);
            }
            if n.name == "sim" {
                return self.sim(name, args, span);
            }
        }
        if let Some(ns) = self.namespace(base) {
            if let Some(TypeDef::Enum(index)) = self.scope.types.get(&ns.name) {
                self.note_type_name(ns, &ns.name);
                return self.variant(*index, name, args, span, true);
            }
            if self.scope.types.contains_key(&ns.name) {
                self.note_type_name(ns, &ns.name);
                let found = self
                    .builtins()
                    .find(|b| {
                        b.short_name == name.name
                            && matches!(&b.kind, BuiltinKind::Static(owner) if *owner == ns.name)
                    })
                    .cloned();
                return match found {
                    Some(builtin) => {
                        self.note_builtin(name, &builtin);
                        self.call_builtin(&builtin, None, args, span, hint)
                    }
                    None => {
                        let candidates: Vec<String> = self
                            .builtins()
                            .filter(|b| matches!(&b.kind, BuiltinKind::Static(owner) if *owner == ns.name))
                            .map(|b| b.short_name.clone())
                            .collect();
                        let help = did_you_mean(&name.name, candidates.iter().map(String::as_str));
                        self.error(
                            Code::UnknownMethod,
                            name.span,
                            format!("type `{}` has no function `{}`", ns.name, name.name),
                            help,
                        );
                        poisoned(span)
                    }
                };
            }
        }
        let receiver = self.infer(base, None);
        let receiver_ty = self.shallow(&receiver.ty);
        if matches!(receiver_ty, Ty::Error) {
            for arg in args {
                self.infer_loose(&arg.value);
            }
            return poisoned(span);
        }
        if matches!(receiver_ty, Ty::Var(_)) {
            self.error(
                Code::CannotInfer,
                base.span,
                format!(
                    "the type of this value must be known to call `.{}()` on it",
                    name.name
                ),
                Some("annotate the closure parameter or give the value a declared type".into()),
            );
            return poisoned(span);
        }
        let Some(owner) = type_constructor(&receiver_ty) else {
            self.error(
                Code::UnknownMethod,
                name.span,
                format!("`{receiver_ty}` has no methods"),
                None,
            );
            return poisoned(span);
        };
        let found = self
            .builtins()
            .find(|b| {
                b.short_name == name.name
                    && matches!(&b.kind, BuiltinKind::Method(o) if *o == owner)
            })
            .cloned();
        match found {
            Some(builtin) => {
                self.note_builtin(name, &builtin);
                self.call_builtin(&builtin, Some(receiver), args, span, hint)
            }
            None => {
                let candidates: Vec<String> = self
                    .builtins()
                    .filter(|b| matches!(&b.kind, BuiltinKind::Method(o) if *o == owner))
                    .map(|b| b.short_name.clone())
                    .collect();
                let help = did_you_mean(&name.name, candidates.iter().map(String::as_str));
                self.push(
                    Diagnostic::new(
                        Code::UnknownMethod,
                        name.span,
                        format!(
                            "`{}` has no method `{}`",
                            self.zonk(&receiver_ty),
                            name.name
                        ),
                    )
                    .maybe_help(help),
                );
                for arg in args {
                    self.infer_loose(&arg.value);
                }
                poisoned(span)
            }
        }
    }

    /// Checks an argument whose expected type is unknown because the call failed, so that
    /// errors inside it are still reported. Closures are accepted silently here.
    pub(super) fn infer_loose(&mut self, expr: &ast::Expr) {
        if !matches!(expr.kind, ast::ExprKind::Closure(..)) {
            self.infer(expr, None);
        }
    }

    pub(super) fn sim(&mut self, name: &ast::Ident, args: &[ast::Arg], span: Span) -> Lowered {
        if name.name != "next" {
            self.error(
                Code::UnknownMethod,
                name.span,
                format!("`sim` has no function `{}`", name.name),
                Some("the only one is `sim.next(action(args))`".into()),
            );
            return poisoned(span);
        }
        if self.layer.is_none() || self.in_constant_context() {
            self.error(
                Code::SimNextArgument,
                span,
                "`sim.next` previews an action, so it is only allowed inside layers".to_owned(),
                None,
            );
            return poisoned(span);
        }
        let [arg] = args else {
            self.error(
                Code::Arity,
                span,
                format!(
                    "`sim.next` takes one action call, found {} argument(s)",
                    args.len()
                ),
                None,
            );
            return poisoned(span);
        };
        let Some((action, action_args)) = self.action_call(&arg.value, Code::SimNextArgument)
        else {
            return poisoned(span);
        };
        if let ast::ExprKind::Call(callee, _) = &arg.value.kind
            && let ast::ExprKind::Name(action_name) = &callee.kind
            && let Some((_, entry)) = self.find_member(&action_name.name)
        {
            self.node.sims.push((entry.key.clone(), span));
        }
        lowered(
            ir::ExprKind::SimNext {
                action,
                args: action_args,
            },
            Ty::Preview,
            span,
        )
    }

    pub(super) fn call(
        &mut self,
        name: &ast::Ident,
        args: &[ast::Arg],
        span: Span,
        hint: Option<&Ty>,
    ) -> Lowered {
        if let Some(id) = self.local(&name.name) {
            self.note_local(name, id);
            self.error(
                Code::NotCallable,
                name.span,
                format!("`{}` is a local value, not a function", name.name),
                None,
            );
            return poisoned(span);
        }
        if name.name == "Some" {
            self.note(name.span, Symbol::option_variant("Some"));
            let inner_hint = match hint.map(|h| self.shallow(h)) {
                Some(Ty::Option(inner)) => *inner,
                _ => self.fresh(false),
            };
            let values = self.args(
                &[("value".to_owned(), inner_hint.clone())],
                args,
                span,
                "`Some`",
            );
            let value = values.into_iter().next().unwrap_or_else(|| poisoned(span));
            return lowered(
                ir::ExprKind::Some(Box::new(value)),
                Ty::Option(Box::new(inner_hint)),
                span,
            );
        }
        if let Some((layer_id, entry)) = self.find_member(&name.name) {
            self.note_member(name, entry);
            match &entry.def {
                MemberDef::Fn(info) => {
                    if self.in_constant_context() {
                        self.not_constant(span, &format!("function `{}`", name.name));
                        return poisoned(span);
                    }
                    if !self.sees(layer_id) {
                        self.higher_layer(name, layer_id);
                        return poisoned(span);
                    }
                    let (info, key) = (info.clone(), entry.key.clone());
                    return self.call_fn(name, &info, key, args, span);
                }
                MemberDef::Action(..) => {
                    self.error(
                        Code::NotCallable,
                        name.span,
                        format!("`{}` is an action; actions are chosen by decide rules or previewed with `sim.next`", name.name),
                        Some(format!("to preview it: `sim.next({}(...))`", name.name)),
                    );
                    return poisoned(span);
                }
                other => {
                    self.error(
                        Code::NotCallable,
                        name.span,
                        format!(
                            "`{}` is a {}, not a function",
                            name.name,
                            member_kind_name(other)
                        ),
                        None,
                    );
                    return poisoned(span);
                }
            }
        }
        if let Some((def, key, _)) = self.scope.values.get(&name.name) {
            self.note_value(name, def, key);
            return match def {
                ValueDef::Fn(info) => {
                    let (info, key) = (info.clone(), key.clone());
                    self.call_fn(name, &info, key, args, span)
                }
                _ => {
                    self.error(
                        Code::NotCallable,
                        name.span,
                        format!("`{}` is a value, not a function", name.name),
                        None,
                    );
                    poisoned(span)
                }
            };
        }
        let found = self
            .builtins()
            .find(|b| b.short_name == name.name && b.kind == BuiltinKind::Function)
            .cloned();
        if let Some(builtin) = found {
            self.note_builtin(name, &builtin);
            return self.call_builtin(&builtin, None, args, span, hint);
        }
        let mut candidates = self
            .names_in_scope()
            .into_iter()
            .map(str::to_owned)
            .collect::<Vec<_>>();
        candidates.extend(
            self.builtins()
                .filter(|b| b.kind == BuiltinKind::Function)
                .map(|b| b.short_name.clone()),
        );
        let help = did_you_mean(&name.name, candidates.iter().map(String::as_str));
        self.push(
            Diagnostic::new(
                Code::UnknownName,
                name.span,
                format!("unknown function `{}`", name.name),
            )
            .primary("not found in this scope")
            .maybe_help(help),
        );
        for arg in args {
            self.infer_loose(&arg.value);
        }
        poisoned(span)
    }

    pub(super) fn call_fn(
        &mut self,
        name: &ast::Ident,
        info: &FnInfo,
        key: DefKey,
        args: &[ast::Arg],
        span: Span,
    ) -> Lowered {
        self.uses.insert(key.clone());
        self.node.refs.push(key);
        let args = self.args(
            &info.params,
            args,
            span,
            &format!("function `{}`", name.name),
        );
        lowered(
            ir::ExprKind::CallFn {
                func: info.id,
                args,
            },
            info.ret.clone(),
            span,
        )
    }

    /// Instantiates a builtin's generics and checks a call of it.
    pub(super) fn call_builtin(
        &mut self,
        builtin: &Builtin,
        receiver: Option<Lowered>,
        args: &[ast::Arg],
        span: Span,
        hint: Option<&Ty>,
    ) -> Lowered {
        let sig: FnSig = builtin.sig.clone();
        let mut map = BTreeMap::new();
        for generic in &sig.generics {
            let var = self.fresh(generic.numeric);
            map.insert(generic.name.clone(), var);
        }
        let subst = |ty: &Ty| self.scope.normalize(&substitute(ty, &map));
        let mut params: Vec<(String, Ty)> = sig
            .params
            .iter()
            .map(|p| (p.name.clone(), subst(&p.ty)))
            .collect();
        let ret = subst(&sig.ret);
        if let Some(hint) = hint {
            // The expected result guides the instantiation (for example of an empty collection),
            // but a mismatch is reported by the caller, against the whole call.
            let snapshot = self.vars.clone();
            if !self.unify(&ret, hint) {
                self.vars = snapshot;
            }
        }
        let mut lowered_args = Vec::new();
        if let Some(receiver) = receiver {
            let (_, self_ty) = params.remove(0);
            if !self.unify(&receiver.ty, &self_ty) {
                let found = self.zonk(&receiver.ty);
                self.error(
                    Code::TypeMismatch,
                    receiver.span.into_span(),
                    format!(
                        "`{}` needs a receiver of type `{}`, found `{found}`",
                        builtin.short_name,
                        self.zonk(&self_ty)
                    ),
                    None,
                );
            }
            lowered_args.push(receiver);
        }
        lowered_args.extend(self.args(&params, args, span, &format!("`{}`", builtin.short_name)));
        lowered(
            ir::ExprKind::CallBuiltin {
                name: builtin.name.clone(),
                args: lowered_args,
            },
            ret,
            span,
        )
    }

    /// Matches arguments to parameters (positional, then named) and checks each.
    pub(super) fn args(
        &mut self,
        params: &[(String, Ty)],
        args: &[ast::Arg],
        span: Span,
        what: &str,
    ) -> Vec<Lowered> {
        let mut slots: Vec<Option<Lowered>> = vec![None; params.len()];
        let mut next = 0;
        for arg in args {
            let index = match &arg.name {
                None => {
                    let index = next;
                    next += 1;
                    if index >= params.len() {
                        self.error(
                            Code::Arity,
                            arg.span,
                            format!(
                                "{what} takes {} argument(s), but more are given",
                                params.len()
                            ),
                            Some(format!("the parameters are ({})", param_list(params))),
                        );
                        self.infer_loose(&arg.value);
                        continue;
                    }
                    index
                }
                Some(name) => match params.iter().position(|(p, _)| *p == name.name) {
                    Some(index) if slots[index].is_none() => index,
                    Some(_) => {
                        self.error(
                            Code::NamedArgument,
                            name.span,
                            format!("parameter `{}` is given twice", name.name),
                            None,
                        );
                        self.infer_loose(&arg.value);
                        continue;
                    }
                    None => {
                        let help = did_you_mean(&name.name, params.iter().map(|(p, _)| p.as_str()))
                            .unwrap_or_else(|| {
                                format!("the parameters are ({})", param_list(params))
                            });
                        self.error(
                            Code::NamedArgument,
                            name.span,
                            format!("{what} has no parameter `{}`", name.name),
                            Some(help),
                        );
                        self.infer_loose(&arg.value);
                        continue;
                    }
                },
            };
            let expected = params[index].1.clone();
            slots[index] = Some(self.arg(&arg.value, &expected));
        }
        let missing: Vec<&str> = params
            .iter()
            .zip(&slots)
            .filter(|(_, s)| s.is_none())
            .map(|((p, _), _)| p.as_str())
            .collect();
        if !missing.is_empty() && slots.len() >= missing.len() {
            self.error(
                Code::Arity,
                span,
                format!(
                    "{what} takes {} argument(s), but {} are given",
                    params.len(),
                    params.len() - missing.len()
                ),
                Some(format!("the parameters are ({})", param_list(params))),
            );
        }
        slots
            .into_iter()
            .map(|s| s.unwrap_or_else(|| poisoned(span)))
            .collect()
    }

    /// One argument: closures and function names are allowed where a function type is expected.
    pub(super) fn arg(&mut self, value: &ast::Expr, expected: &Ty) -> Lowered {
        let expected_now = self.shallow(expected);
        match (&value.kind, &expected_now) {
            (ast::ExprKind::Closure(params, body), Ty::Fn(param_tys, ret)) => {
                if params.len() != param_tys.len() {
                    self.error(
                        Code::Arity,
                        value.span,
                        format!(
                            "this closure takes {} parameter(s), but {} are expected",
                            params.len(),
                            param_tys.len()
                        ),
                        None,
                    );
                    return poisoned(value.span);
                }
                let depth = self.locals.len();
                let mut ids = Vec::new();
                for (param, ty) in params.iter().zip(param_tys) {
                    if let Some(annotation) = &param.ty {
                        let annotated = self.resolve(annotation);
                        self.expect_ty(annotation.span(), &annotated, ty);
                    }
                    ids.push(self.new_local(&param.name, ty.clone()));
                }
                let body = self.check(body, ret);
                self.end_scope(depth, value.span.end);
                lowered(
                    ir::ExprKind::Closure {
                        params: ids,
                        body: Box::new(body),
                    },
                    expected_now.clone(),
                    value.span,
                )
            }
            (ast::ExprKind::Closure(..), _) => {
                self.error(
                    Code::ClosureEscapes,
                    value.span,
                    format!(
                        "a closure is passed where a `{}` is expected",
                        self.zonk(expected)
                    ),
                    None,
                );
                poisoned(value.span)
            }
            _ => self.check(value, expected),
        }
    }
}
