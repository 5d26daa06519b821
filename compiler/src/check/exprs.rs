//! Expressions: literals, lists, records, fields, game queries and variants.

use harness_grammar::{Span, ast};

use super::{Checker, IntoSpan, Lowered, lowered, member_kind_name, poisoned};
use crate::codes::Code;
use crate::diagnostic::{Diagnostic, did_you_mean};
use crate::env::{self, MemberDef, Scope, TypeDef};
use crate::ir;
use crate::symbol::GameKind;
use crate::types::Ty;

impl Checker<'_> {
    /// Checks an expression against an expected type.
    pub(super) fn check(&mut self, expr: &ast::Expr, expected: &Ty) -> Lowered {
        let lowered = self.infer(expr, Some(expected));
        self.expect_ty(expr.span, &lowered.ty, expected);
        lowered
    }

    /// Infers an expression's type; `hint` is the expected type, when known, which guides list
    /// literals, closures and `None`.
    pub(super) fn infer(&mut self, expr: &ast::Expr, hint: Option<&Ty>) -> Lowered {
        harness_grammar::stack::guarded(|| self.infer_kind(expr, hint))
    }

    /// [`Checker::infer`] on the current stack segment.
    fn infer_kind(&mut self, expr: &ast::Expr, hint: Option<&Ty>) -> Lowered {
        let span = expr.span;
        use ast::ExprKind as E;
        match &expr.kind {
            E::Int(v) => lowered(ir::ExprKind::Lit(ir::Literal::Int(*v)), Ty::Int, span),
            E::Float(v) => lowered(ir::ExprKind::Lit(ir::Literal::Float(*v)), Ty::Float, span),
            E::Bool(v) => lowered(ir::ExprKind::Lit(ir::Literal::Bool(*v)), Ty::Bool, span),
            E::String(v) => lowered(
                ir::ExprKind::Lit(ir::Literal::String(v.clone())),
                Ty::String,
                span,
            ),
            E::Name(name) => self.name(name, span, hint),
            E::List(items) => self.list(items, span, hint),
            E::Record { name, fields } => self.record(name, fields, span),
            E::Field(base, field) => self.field(base, field, span, hint),
            E::Call(callee, args) => match &callee.kind {
                E::Field(base, name) => self.method(base, name, args, span, hint),
                E::Name(name) => self.call(name, args, span, hint),
                _ => {
                    self.infer(callee, None);
                    self.error(
                        Code::NotCallable,
                        callee.span,
                        "this expression cannot be called".to_owned(),
                        None,
                    );
                    poisoned(span)
                }
            },
            E::MethodCall(base, name, args) => self.method(base, name, args, span, hint),
            E::Index(base, index) => self.index(base, index, span),
            E::Unary(op, operand) => self.unary(*op, operand, span, hint),
            E::Binary(op, lhs, rhs) => self.binary(*op, lhs, rhs, span, hint),
            E::If {
                guards,
                then,
                otherwise,
            } => {
                let depth = self.locals.len();
                let guards = self.guards(guards);
                let then_end = then.span.end;
                let then = self.infer(then, hint);
                self.end_scope(depth, then_end);
                let ty = then.ty.clone();
                let otherwise = self.check(otherwise, &ty);
                lowered(
                    ir::ExprKind::If {
                        guards,
                        then: Box::new(then),
                        otherwise: Box::new(otherwise),
                    },
                    ty,
                    span,
                )
            }
            E::Match(scrutinee, arms) => self.match_expr(scrutinee, arms, span, hint),
            E::Block(lets, result) => {
                let depth = self.locals.len();
                let mut bound = Vec::new();
                for (pattern, value) in lets {
                    let value = self.infer(value, None);
                    let pattern = self.pattern(pattern, &value.ty.clone(), true);
                    bound.push((pattern, value));
                }
                let mut body = self.infer(result, hint);
                self.end_scope(depth, span.end);
                for (pattern, value) in bound.into_iter().rev() {
                    let ty = body.ty.clone();
                    body = lowered(
                        ir::ExprKind::Let {
                            pattern,
                            value: Box::new(value),
                            body: Box::new(body),
                        },
                        ty,
                        span,
                    );
                }
                body
            }
            E::Closure(..) => {
                self.error(
                    Code::ClosureEscapes,
                    span,
                    "a closure can only be passed directly to a builtin such as `filter` or `max_by`".to_owned(),
                    Some("pass it to the builtin that uses it, or write a `fn`".into()),
                );
                poisoned(span)
            }
            E::Error => poisoned(span),
        }
    }

    pub(super) fn list(&mut self, items: &[ast::Expr], span: Span, hint: Option<&Ty>) -> Lowered {
        let hint = hint.map(|h| self.shallow(h));
        // `[]` where a map is expected is the empty map; maps have no literal with entries.
        if let (true, Some(Ty::Map(..))) = (items.is_empty(), &hint) {
            let ty = hint.clone().unwrap_or(Ty::Error);
            return lowered(ir::ExprKind::EmptyMap, ty, span);
        }
        let (elem, is_set) = match &hint {
            Some(Ty::Set(t)) => ((**t).clone(), true),
            Some(Ty::List(t)) => ((**t).clone(), false),
            _ => (self.fresh(false), false),
        };
        let lowered_items: Vec<Lowered> =
            items.iter().map(|item| self.check(item, &elem)).collect();
        if items.is_empty() && !matches!(hint, Some(Ty::Set(_) | Ty::List(_) | Ty::Error)) {
            self.pending.push((elem.clone(), span));
        }
        if is_set {
            lowered(
                ir::ExprKind::Set(lowered_items),
                Ty::Set(Box::new(elem)),
                span,
            )
        } else {
            lowered(
                ir::ExprKind::List(lowered_items),
                Ty::List(Box::new(elem)),
                span,
            )
        }
    }

    pub(super) fn record(
        &mut self,
        name: &ast::Path,
        fields: &[(ast::Ident, ast::Expr)],
        span: Span,
    ) -> Lowered {
        let text = env::path_text(name);
        if let Some(last) = name.segments.last() {
            self.note_type_name(last, &text);
        }
        let record = match self.scope.types.get(&text) {
            Some(TypeDef::Alias(Ty::Record(record))) => record.clone(),
            Some(_) => {
                self.error(
                    Code::TypeMismatch,
                    name.span,
                    format!("`{text}` is not a record type"),
                    None,
                );
                return poisoned(span);
            }
            None => {
                let help = did_you_mean(&text, self.scope.types.keys().map(String::as_str));
                self.error(
                    Code::UnknownType,
                    name.span,
                    format!("unknown type `{text}`"),
                    help,
                );
                for (_, value) in fields {
                    self.infer(value, None);
                }
                return poisoned(span);
            }
        };
        let mut values: Vec<Option<Lowered>> = vec![None; record.fields.len()];
        for (field, value) in fields {
            match record.fields.iter().position(|(n, _)| *n == field.name) {
                Some(index) => {
                    self.note_field(field, &record);
                    let lowered_value = self.check(value, &record.fields[index].1.clone());
                    if values[index].is_some() {
                        self.error(
                            Code::Duplicate,
                            field.span,
                            format!("field `{}` is given twice", field.name),
                            None,
                        );
                    }
                    values[index] = Some(lowered_value);
                }
                None => {
                    self.unknown_field(field, &record);
                    self.infer(value, None);
                }
            }
        }
        let missing: Vec<&str> = record
            .fields
            .iter()
            .zip(&values)
            .filter(|(_, v)| v.is_none())
            .map(|((n, _), _)| n.as_str())
            .collect();
        if !missing.is_empty() {
            self.error(
                Code::MissingField,
                span,
                format!(
                    "record `{text}` is missing field(s): {}",
                    missing.join(", ")
                ),
                Some(format!(
                    "add {}",
                    missing
                        .iter()
                        .map(|m| format!("`{m}: ...`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            );
        }
        let values = values
            .into_iter()
            .map(|v| v.unwrap_or_else(|| poisoned(span)))
            .collect();
        lowered(ir::ExprKind::Record(values), Ty::Record(record), span)
    }

    /// True when `base` is a bare name that means a namespace (a type or a layer) rather than a
    /// value.
    pub(super) fn namespace<'e>(&self, base: &'e ast::Expr) -> Option<&'e ast::Ident> {
        let ast::ExprKind::Name(name) = &base.kind else {
            return None;
        };
        if self.local(&name.name).is_some()
            || self.find_member(&name.name).is_some()
            || self.scope.values.contains_key(&name.name)
        {
            return None;
        }
        Some(name)
    }

    pub(super) fn field(
        &mut self,
        base: &ast::Expr,
        field: &ast::Ident,
        span: Span,
        hint: Option<&Ty>,
    ) -> Lowered {
        if let ast::ExprKind::Name(n) = &base.kind
            && n.name == "game"
        {
            return self.game_query(field, None, span);
        }
        if let Some(ns) = self.namespace(base) {
            if let Some(TypeDef::Enum(index)) = self.scope.types.get(&ns.name) {
                self.note_type_name(ns, &ns.name);
                return self.variant(*index, field, &[], span, false);
            }
            if let Some(layer_id) = self.scope.layer(&ns.name) {
                self.note_layer(ns, layer_id);
                let Some(entry) = self.scope.layers[layer_id.index()].members.get(&field.name)
                else {
                    let help = did_you_mean(
                        &field.name,
                        self.scope.layers[layer_id.index()]
                            .members
                            .keys()
                            .map(String::as_str),
                    );
                    self.error(
                        Code::UnknownName,
                        field.span,
                        format!("layer `{}` has no member `{}`", ns.name, field.name),
                        help,
                    );
                    return poisoned(span);
                };
                let scope: &Scope = self.scope;
                let entry: &env::MemberEntry = entry;
                let entry = scope.layers[layer_id.index()]
                    .members
                    .get(&entry.key.name)
                    .unwrap_or(entry);
                return self.member_read(field, span, layer_id, entry, hint);
            }
        }
        let base = self.infer(base, None);
        match self.shallow(&base.ty) {
            Ty::Record(record) => match record.fields.iter().position(|(n, _)| *n == field.name) {
                Some(index) => {
                    self.note_field(field, &record);
                    let ty = record.fields[index].1.clone();
                    lowered(ir::ExprKind::Field(Box::new(base), index as u32), ty, span)
                }
                None => {
                    self.unknown_field(field, &record);
                    poisoned(span)
                }
            },
            Ty::Snapshot => {
                let Some((layer_id, entry)) = self.find_member(&field.name) else {
                    self.unknown_name(field);
                    return poisoned(span);
                };
                self.note_member(field, entry);
                if !self.sees(layer_id) {
                    self.higher_layer(field, layer_id);
                    return poisoned(span);
                }
                let (member, ty) = match &entry.def {
                    MemberDef::State(id, ty) => (ir::MemberRef::State(*id), ty.clone()),
                    MemberDef::Computed(id, ty) => (ir::MemberRef::Computed(*id), ty.clone()),
                    MemberDef::Tunable(id, ty, _) => (ir::MemberRef::Tunable(*id), ty.clone()),
                    other => {
                        self.error(
                            Code::UnknownField,
                            field.span,
                            format!("a snapshot holds state, computed values and tunables; `{}` is a {}", field.name, member_kind_name(other)),
                            None,
                        );
                        return poisoned(span);
                    }
                };
                self.uses.insert(entry.key.clone());
                self.node.snapshot_reads.push(entry.key.clone());
                lowered(
                    ir::ExprKind::SnapshotRead {
                        snapshot: Box::new(base),
                        member,
                    },
                    ty,
                    span,
                )
            }
            Ty::Error => poisoned(span),
            Ty::Var(_) => {
                self.error(
                    Code::CannotInfer,
                    base.span.into_span(),
                    "the type of this value must be known before its fields are read".to_owned(),
                    Some("annotate the closure parameter, for example `|s: Snapshot| ...`".into()),
                );
                poisoned(span)
            }
            other => {
                self.error(
                    Code::UnknownField,
                    field.span,
                    format!("`{other}` has no field `{}`", field.name),
                    None,
                );
                poisoned(span)
            }
        }
    }

    /// `game.name` (a property) or `game.name(args)` (a query function).
    pub(super) fn game_query(
        &mut self,
        name: &ast::Ident,
        args: Option<&[ast::Arg]>,
        span: Span,
    ) -> Lowered {
        if let Some(game) = &self.scope.game
            && game.queries.iter().any(|q| q.name == name.name)
        {
            self.note_game(name, GameKind::Query);
        }
        if self.in_constant_context() {
            self.not_constant(span, &format!("game query `game.{}`", name.name));
            return poisoned(span);
        }
        let Some(game) = &self.scope.game else {
            self.error(
                Code::NoGame,
                span,
                format!("`game.{}` needs a game", name.name),
                Some("add `use game <name>` at the top of the file".into()),
            );
            return poisoned(span);
        };
        let Some(query) = game.queries.iter().find(|q| q.name == name.name) else {
            let help = if game.effects.iter().any(|e| e.name == name.name) {
                Some(format!(
                    "`{}` is an effect: send it from an action with `emit game.{}(...)`",
                    name.name, name.name
                ))
            } else if game.observations.iter().any(|o| o.name == name.name) {
                Some(format!(
                    "`{}` is an observation: handle it with `on game.{}(...) {{ ... }}`",
                    name.name, name.name
                ))
            } else {
                did_you_mean(&name.name, game.queries.iter().map(|q| q.name.as_str()))
            };
            self.push(
                Diagnostic::new(
                    Code::UnknownGameMember,
                    name.span,
                    format!("game `{}` has no query `{}`", game.name, name.name),
                )
                .maybe_help(help),
            );
            if let Some(args) = args {
                for arg in args {
                    self.infer(&arg.value, None);
                }
            }
            return poisoned(span);
        };
        let query = query.clone();
        match (&query.sig, args) {
            (None, None) => lowered(
                ir::ExprKind::GameProperty(query.name.clone()),
                self.scope.normalize(&query.ty),
                span,
            ),
            (Some(sig), Some(args)) => {
                let params: Vec<(String, Ty)> = sig
                    .params
                    .iter()
                    .map(|p| (p.name.clone(), self.scope.normalize(&p.ty)))
                    .collect();
                let args = self.args(&params, args, span, &format!("query `game.{}`", name.name));
                lowered(
                    ir::ExprKind::GameCall {
                        name: query.name.clone(),
                        args,
                    },
                    self.scope.normalize(&sig.ret),
                    span,
                )
            }
            (Some(_), None) => {
                self.error(
                    Code::TypeMismatch,
                    span,
                    format!("`game.{}` is a query function", name.name),
                    Some(format!("call it: `game.{}(...)`", name.name)),
                );
                poisoned(span)
            }
            (None, Some(_)) => {
                self.error(
                    Code::NotCallable,
                    span,
                    format!("`game.{}` is a property, not a function", name.name),
                    Some(format!("remove the parentheses: `game.{}`", name.name)),
                );
                poisoned(span)
            }
        }
    }

    /// An enum variant value, `Enum.Variant` or `Enum.Variant(args)`.
    pub(super) fn variant(
        &mut self,
        index: usize,
        name: &ast::Ident,
        args: &[ast::Arg],
        span: Span,
        called: bool,
    ) -> Lowered {
        let info = self.scope.enums[index].clone();
        let ty = Ty::Enum(info.name.as_str().into());
        let Some(position) = info.variants.iter().position(|(v, _)| *v == name.name) else {
            let help = did_you_mean(&name.name, info.variants.iter().map(|(v, _)| v.as_str()));
            self.error(
                Code::UnknownVariant,
                name.span,
                format!("enum `{}` has no variant `{}`", info.name, name.name),
                help,
            );
            return poisoned(span);
        };
        self.note_variant(index, name);
        let payload_types = &info.variants[position].1;
        if !called && !payload_types.is_empty() {
            self.error(
                Code::Arity,
                span,
                format!(
                    "variant `{}.{}` takes {} value(s)",
                    info.name,
                    name.name,
                    payload_types.len()
                ),
                Some(format!("write `{}.{}(...)`", info.name, name.name)),
            );
            return poisoned(span);
        }
        let params: Vec<(String, Ty)> = payload_types
            .iter()
            .enumerate()
            .map(|(i, t)| (format!("{i}"), t.clone()))
            .collect();
        let payload = self.args(
            &params,
            args,
            span,
            &format!("variant `{}.{}`", info.name, name.name),
        );
        lowered(
            ir::ExprKind::Variant {
                enum_id: info.id,
                index: position as u32,
                payload,
            },
            ty,
            span,
        )
    }
}
