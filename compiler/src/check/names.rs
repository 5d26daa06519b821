//! Names: locals, layer members, items and the diagnostics for unknown or unreachable ones.

use std::sync::Arc;

use harness_grammar::{Span, ast};

use super::{Checker, Ctx, Lowered, lowered, member_kind_name, poisoned};
use crate::codes::Code;
use crate::diagnostic::{Diagnostic, did_you_mean};
use crate::env::{self, DefKey, FnInfo, MemberDef, Scope, ValueDef};
use crate::ir::{self, LayerId, LocalId};
use crate::symbol::Symbol;
use crate::types::{RecordTy, Ty};

impl<'a> Checker<'a> {
    /// Finds a layer member by name: the current layer first, then the layers it needs (nearest
    /// first), then any other layer (so that a read of a higher layer gets its own diagnostic).
    pub(super) fn find_member(&self, name: &str) -> Option<(LayerId, &'a env::MemberEntry)> {
        let scope: &'a Scope = self.scope;
        scope.find_member(self.layer, name)
    }

    pub(super) fn local(&self, name: &str) -> Option<LocalId> {
        self.locals
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, id)| *id)
    }

    /// Every name a bare identifier could refer to here, for suggestions.
    pub(super) fn names_in_scope(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.locals.iter().map(|(n, _)| n.as_str()).collect();
        if let Some(own) = self.layer {
            let mut visible = vec![own];
            visible.extend(self.scope.layers[own.index()].below.iter().copied());
            for id in visible {
                names.extend(
                    self.scope.layers[id.index()]
                        .members
                        .keys()
                        .map(String::as_str),
                );
            }
        }
        names.extend(self.scope.values.keys().map(String::as_str));
        names
    }

    pub(super) fn unknown_name(&mut self, name: &ast::Ident) {
        let help = did_you_mean(&name.name, self.names_in_scope());
        self.push(
            Diagnostic::new(
                Code::UnknownName,
                name.span,
                format!("unknown name `{}`", name.name),
            )
            .primary("not found in this scope")
            .maybe_help(help),
        );
    }

    pub(super) fn unknown_field(&mut self, field: &ast::Ident, record: &RecordTy) {
        let ty = Ty::Record(Arc::new(record.clone()));
        let help = did_you_mean(&field.name, record.fields.iter().map(|(n, _)| n.as_str()))
            .unwrap_or_else(|| {
                format!(
                    "the fields of `{ty}` are: {}",
                    record
                        .fields
                        .iter()
                        .map(|(n, _)| n.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            });
        self.push(
            Diagnostic::new(
                Code::UnknownField,
                field.span,
                format!("`{ty}` has no field `{}`", field.name),
            )
            .primary("unknown field")
            .help(help),
        );
    }

    pub(super) fn higher_layer(&mut self, name: &ast::Ident, owner: LayerId) {
        let owner = &self.scope.layers[owner.index()];
        let message = match self.current_layer() {
            Some(own) => format!(
                "layer `{}` reads `{}` of layer `{}`, which it does not need",
                own.name, name.name, owner.name
            ),
            None => format!(
                "`{}` is a member of layer `{}`; top-level items cannot read layer members",
                name.name, owner.name
            ),
        };
        let help = match self.current_layer() {
            Some(own) => format!(
                "a layer reads only its own members and those of the layers it needs; move `{}` down, or make `{}` need `{}` if it really is below",
                name.name, own.name, owner.name
            ),
            None => "move the item into a layer, or pass the value as a parameter".to_owned(),
        };
        self.push(
            Diagnostic::new(Code::HigherLayerRead, name.span, message)
                .primary("read here")
                .help(help),
        );
    }

    pub(super) fn not_constant(&mut self, span: Span, what: &str) {
        let help = match self.ctx {
            Ctx::Const => {
                "a constant reads only literals, other constants and pure builtins; use `config` for run parameters"
            }
            Ctx::Config => "a config default reads only literals and constants",
            _ => "a tunable default reads only literals, constants and config",
        };
        self.push(
            Diagnostic::new(
                Code::NotConstant,
                span,
                format!(
                    "{what} cannot be read here: the value must be known before the episode starts"
                ),
            )
            .help(help),
        );
    }

    pub(super) fn in_constant_context(&self) -> bool {
        matches!(self.ctx, Ctx::Const | Ctx::Config | Ctx::Tunable)
    }

    /// A bare name in expression position.
    pub(super) fn name(&mut self, name: &ast::Ident, span: Span, hint: Option<&Ty>) -> Lowered {
        if let Some(id) = self.local(&name.name) {
            self.note_local(name, id);
            let ty = self.frame[id.index()].ty.clone();
            return lowered(ir::ExprKind::Local(id), ty, span);
        }
        if name.name == "None" {
            self.note(name.span, Symbol::option_variant("None"));
            let inner = self.fresh(false);
            return lowered(ir::ExprKind::None, Ty::Option(Box::new(inner)), span);
        }
        if name.name == "game" || name.name == "sim" {
            self.error(
                Code::UnknownName,
                span,
                format!("`{}` is not a value", name.name),
                Some(format!("use one of its members: `{}.<name>`", name.name)),
            );
            return poisoned(span);
        }
        if let Some((layer_id, entry)) = self.find_member(&name.name) {
            return self.member_read(name, span, layer_id, entry, hint);
        }
        if let Some((def, key, _)) = self.scope.values.get(&name.name) {
            self.note_value(name, def, key);
            let key = key.clone();
            match def {
                ValueDef::Const { id, ty } => {
                    self.uses.insert(key.clone());
                    self.node.refs.push(key);
                    return lowered(ir::ExprKind::Const(*id), ty.clone(), span);
                }
                ValueDef::Config { id, ty } => {
                    if matches!(self.ctx, Ctx::Const | Ctx::Config) {
                        self.not_constant(span, &format!("config entry `{}`", name.name));
                    }
                    self.uses.insert(key);
                    return lowered(ir::ExprKind::Config(*id), ty.clone(), span);
                }
                ValueDef::Fn(info) => {
                    let info = info.clone();
                    return self.fn_ref(name, span, &info, key, hint);
                }
            }
        }
        if self.scope.types.contains_key(&name.name) {
            self.note_type_name(name, &name.name);
            self.error(
                Code::UnknownName,
                span,
                format!("`{}` is a type, not a value", name.name),
                Some(format!(
                    "use one of its variants or functions: `{}.<name>`",
                    name.name
                )),
            );
            return poisoned(span);
        }
        self.unknown_name(name);
        poisoned(span)
    }

    /// A function used as a value: allowed only where a function type is expected.
    pub(super) fn fn_ref(
        &mut self,
        name: &ast::Ident,
        span: Span,
        info: &FnInfo,
        key: DefKey,
        hint: Option<&Ty>,
    ) -> Lowered {
        let ty = Ty::Fn(
            info.params.iter().map(|(_, t)| t.clone()).collect(),
            Box::new(info.ret.clone()),
        );
        match hint.map(|h| self.shallow(h)) {
            Some(Ty::Fn(..)) => {
                self.uses.insert(key.clone());
                self.node.refs.push(key);
                lowered(ir::ExprKind::FnRef(info.id), ty, span)
            }
            _ => {
                self.error(
                    Code::TypeMismatch,
                    span,
                    format!("function `{}` is used as a value", name.name),
                    Some(format!("call it: `{}(...)`", name.name)),
                );
                poisoned(span)
            }
        }
    }

    pub(super) fn member_read(
        &mut self,
        name: &ast::Ident,
        span: Span,
        layer_id: LayerId,
        entry: &env::MemberEntry,
        hint: Option<&Ty>,
    ) -> Lowered {
        self.note_member(name, entry);
        if self.in_constant_context() {
            self.not_constant(
                span,
                &format!("{} `{}`", member_kind_name(&entry.def), name.name),
            );
            return poisoned(span);
        }
        if !self.sees(layer_id) {
            self.higher_layer(name, layer_id);
            return poisoned(span);
        }
        let key = entry.key.clone();
        match &entry.def {
            MemberDef::State(id, ty) => {
                self.uses.insert(key);
                lowered(
                    ir::ExprKind::Member(ir::MemberRef::State(*id)),
                    ty.clone(),
                    span,
                )
            }
            MemberDef::Tunable(id, ty, _) => {
                self.uses.insert(key);
                lowered(
                    ir::ExprKind::Member(ir::MemberRef::Tunable(*id)),
                    ty.clone(),
                    span,
                )
            }
            MemberDef::Computed(id, ty) => {
                self.uses.insert(key.clone());
                self.node.refs.push(key);
                lowered(
                    ir::ExprKind::Member(ir::MemberRef::Computed(*id)),
                    ty.clone(),
                    span,
                )
            }
            MemberDef::Fn(info) => self.fn_ref(name, span, info, key, hint),
            MemberDef::Action(..) => {
                self.error(
                    Code::NotCallable,
                    span,
                    format!("`{}` is an action; actions are chosen by decide rules or previewed with `sim.next`", name.name),
                    Some(format!("to preview it: `sim.next({}(...))`", name.name)),
                );
                poisoned(span)
            }
        }
    }
}
