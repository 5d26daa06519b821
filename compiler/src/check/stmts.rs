//! Statements, guards and places.

use harness_grammar::{Span, ast};

use super::{Block, Checker, Lowered, is_llm_call, member_kind_name, method_call, param_list, rel};
use crate::codes::Code;
use crate::diagnostic::{Diagnostic, did_you_mean};
use crate::env::{self, MemberDef};
use crate::ir;
use crate::symbol::{DefKind, Symbol};
use crate::types::Ty;

impl Checker<'_> {
    pub(super) fn block(&mut self, block: &ast::Block, kind: Block) -> Vec<ir::Stmt> {
        let depth = self.locals.len();
        let stmts = block
            .stmts
            .iter()
            .filter_map(|stmt| self.stmt(stmt, kind))
            .collect();
        self.end_scope(depth, block.span.end);
        stmts
    }

    pub(super) fn stmt(&mut self, stmt: &ast::Stmt, kind: Block) -> Option<ir::Stmt> {
        let span = rel(stmt.span());
        let lowered = match stmt {
            ast::Stmt::Let(pattern, value, _) => {
                let value = self.infer(value, None);
                let pattern = self.pattern(pattern, &value.ty.clone(), true);
                ir::StmtKind::Let(pattern, value)
            }
            ast::Stmt::Patch(patch) => {
                self.check_transition(patch);
                let place = self.place(&patch.target)?;
                let (place, place_ty) = place;
                let value = self.assign_value(patch, &place_ty);
                ir::StmtKind::Patch {
                    place,
                    op: patch.op,
                    value,
                }
            }
            ast::Stmt::LetEmit(pattern, expr, span) => self.llm_call(pattern, expr, *span, kind)?,
            ast::Stmt::Emit(expr, span) if is_llm_call(expr) => {
                self.error(
                    Code::LlmOutsideBlock,
                    *span,
                    "the reply of an LLM call must be bound".to_owned(),
                    Some(
                        "write `let reply = emit llm.name(args)` and handle `reply` with `match`"
                            .into(),
                    ),
                );
                if let Some((_, _, args)) = method_call(expr) {
                    for arg in args {
                        self.infer_loose(&arg.value);
                    }
                }
                return None;
            }
            ast::Stmt::Emit(expr, span) => {
                if kind != Block::Action {
                    self.error(
                        Code::EmitOutsideAction,
                        *span,
                        "`emit` is only allowed in actions".to_owned(),
                        Some("move the effect into an action; handlers and revise blocks only patch state".into()),
                    );
                }
                let (base, name, args) = method_call(expr).filter(|(base, ..)| matches!(&base.kind, ast::ExprKind::Name(n) if n.name == "game"))
                    .or_else(|| {
                        self.error(Code::UnknownEffect, expr.span, "expected an effect: `emit game.<effect>(...)`".to_owned(), None);
                        None
                    })?;
                let _ = base;
                let params = self.message(name, true)?;
                self.check_gate(name);
                let args = self.args(&params, args, expr.span, &format!("effect `{}`", name.name));
                ir::StmtKind::Emit {
                    effect: name.name.clone(),
                    args,
                }
            }
            ast::Stmt::Revise(patch) => {
                if kind != Block::Revise {
                    self.error(
                        Code::ReviseOutsideBlock,
                        patch.span,
                        "`revise` statements are only allowed in `revise when ... { }` blocks"
                            .to_owned(),
                        Some(
                            "move it into a revise block, so it runs in the turn's revise phase"
                                .into(),
                        ),
                    );
                }
                let (tunable, ty, range) = self.revise_target(&patch.target)?;
                let value = self.assign_value(patch, &ty);
                if let (ast::AssignOp::Set, Some(range), Some(literal)) =
                    (patch.op, &range, env::literal(&patch.value))
                    && env::in_range(&literal, range) == Some(false)
                {
                    self.error(
                            Code::ReviseOutOfRange,
                            patch.value.span,
                            format!("this revision sets the tunable outside its range {}", range_text(range)),
                            Some("stay within the declared range, or widen it where the tunable is declared".into()),
                        );
                }
                ir::StmtKind::Revise {
                    tunable,
                    op: patch.op,
                    value,
                }
            }
            ast::Stmt::If(if_stmt) => self.if_stmt(if_stmt, kind),
            ast::Stmt::Halt(halt) => {
                // Ending the episode is an effect on the world, so it is allowed where effects
                // are: in actions, whose steps are atomic and visible in the trace.
                if kind != Block::Action {
                    self.error(
                        Code::EmitOutsideAction,
                        halt.span,
                        "`halt` is only allowed in actions".to_owned(),
                        Some("move it into an action and choose that action in `decide`".into()),
                    );
                }
                ir::StmtKind::Halt {
                    reason: halt.reason.text().to_owned(),
                }
            }
            ast::Stmt::Invalid(_) => return None,
        };
        Some(ir::Stmt {
            kind: lowered,
            span,
        })
    }

    /// `let pattern = emit llm.name(args)`.
    pub(super) fn llm_call(
        &mut self,
        pattern: &ast::Pattern,
        expr: &ast::Expr,
        span: Span,
        kind: Block,
    ) -> Option<ir::StmtKind> {
        if kind == Block::Handler {
            self.error(
                Code::LlmOutsideBlock,
                span,
                "LLM calls are only allowed in revise blocks and actions".to_owned(),
                Some("move the call into a `revise when ... { }` block or an action".into()),
            );
        }
        let Some((_, name, args)) = method_call(expr).filter(|_| is_llm_call(expr)) else {
            self.error(
                Code::UnknownLlm,
                expr.span,
                "only LLM effects have a value: expected `emit llm.<effect>(...)`".to_owned(),
                Some(
                    "game effects produce no value; write `emit game.effect(...)` on its own"
                        .into(),
                ),
            );
            self.infer_loose(expr);
            return None;
        };
        let found = self.scope.llms.get(&name.name);
        if let Some(info) = found {
            self.note(name.span, Symbol::Def(info.key.clone(), DefKind::Fn));
        }
        let Some(info) = found.cloned() else {
            let help = did_you_mean(&name.name, self.scope.llms.keys().map(String::as_str))
                .or_else(|| {
                    Some(
                        "declare it: `llm name(params) -> Reply { system \"...\" user \"...\" }`"
                            .into(),
                    )
                });
            self.error(
                Code::UnknownLlm,
                name.span,
                format!("unknown LLM effect `{}`", name.name),
                help,
            );
            for arg in args {
                self.infer_loose(&arg.value);
            }
            return None;
        };
        if args.len() != info.params.len() {
            self.error(
                Code::LlmArguments,
                expr.span,
                format!(
                    "LLM effect `{}` takes {} argument(s), found {}",
                    name.name,
                    info.params.len(),
                    args.len()
                ),
                Some(format!("the parameters are ({})", param_list(&info.params))),
            );
            for arg in args {
                self.infer_loose(&arg.value);
            }
            return None;
        }
        let args = self.args(
            &info.params,
            args,
            expr.span,
            &format!("LLM effect `{}`", name.name),
        );
        let pattern = self.pattern(pattern, &info.result, true);
        Some(ir::StmtKind::LetLlm {
            pattern,
            llm: info.id,
            args,
        })
    }

    pub(super) fn if_stmt(&mut self, if_stmt: &ast::IfStmt, kind: Block) -> ir::StmtKind {
        let depth = self.locals.len();
        let guards = self.guards(&if_stmt.guards);
        let known = self.known_states.len();
        for guard in &if_stmt.guards {
            if let ast::Guard::Cond(cond) = guard {
                let facts = super::members::state_facts(cond);
                self.known_states.extend(facts);
            }
        }
        let then = self.block(&if_stmt.then, kind);
        self.known_states.truncate(known);
        self.end_scope(depth, if_stmt.then.span.end);
        let otherwise = if_stmt
            .otherwise
            .as_ref()
            .map(|b| self.block(b, kind))
            .unwrap_or_default();
        ir::StmtKind::If {
            guards,
            then,
            otherwise,
        }
    }

    /// Proves that a patch setting a machine's field to a literal state follows an edge: from
    /// the state the enclosing guards prove, or, where none does, from some state.
    fn check_transition(&mut self, patch: &ast::Patch) {
        let (ast::ExprKind::Name(field), ast::AssignOp::Set) = (&patch.target.kind, patch.op)
        else {
            return;
        };
        let ast::ExprKind::Field(base, target) = &patch.value.kind else {
            return;
        };
        if !matches!(base.kind, ast::ExprKind::Name(_)) {
            return;
        }
        let Some((_, edges)) = self.machines.iter().find(|(f, _)| *f == field.name) else {
            return;
        };
        let from = self
            .known_states
            .iter()
            .rev()
            .find(|(f, _)| *f == field.name)
            .map(|(_, v)| v.clone());
        let into = |source: Option<&str>| {
            edges.iter().any(|(f, t)| {
                *t == target.name && (f.is_none() || source.is_none() || f.as_deref() == source)
            })
        };
        match from {
            Some(from) if from != target.name && !into(Some(&from)) => {
                self.error(
                    Code::TransitionNotAnEdge,
                    patch.span,
                    format!(
                        "`{}` cannot go from `{from}` to `{}`: the machine has no such edge",
                        field.name, target.name
                    ),
                    Some(format!(
                        "add `{from} -> {}` to the machine of `{}`, or move through the states it allows",
                        target.name, field.name
                    )),
                );
            }
            None if !into(None) => {
                self.error(
                    Code::TransitionNotAnEdge,
                    patch.span,
                    format!(
                        "no transition of the machine of `{}` leads to `{}`",
                        field.name, target.name
                    ),
                    Some(format!(
                        "add an edge into `{}` (`* -> {}` allows it from every state)",
                        target.name, target.name
                    )),
                );
            }
            _ => {}
        }
    }

    /// The value of a patch or revision, checked against the place's type and operator.
    pub(super) fn assign_value(&mut self, patch: &ast::Patch, place_ty: &Ty) -> Lowered {
        match patch.op {
            ast::AssignOp::Set => self.check(&patch.value, place_ty),
            op => {
                let value = self.infer(&patch.value, Some(place_ty));
                let target = self.shallow(place_ty);
                let ok = match (&target, op) {
                    (Ty::Int | Ty::Float | Ty::Error, _) => self.unify(&value.ty, &target),
                    (Ty::List(_) | Ty::Set(_), ast::AssignOp::Add) => {
                        self.unify(&value.ty, &target)
                    }
                    (Ty::Var(_), _) => self.unify(&value.ty, &target),
                    _ => false,
                };
                if !ok {
                    let (found, target) = (self.zonk(&value.ty), self.zonk(&target));
                    self.error(
                        Code::BadOperands,
                        patch.span,
                        format!(
                            "cannot apply `{}` to a `{target}` place with a `{found}` value",
                            assign_symbol(op)
                        ),
                        None,
                    );
                }
                value
            }
        }
    }

    /// Resolves the target of a `patch`: a state field of the current layer, then fields and
    /// elements.
    pub(super) fn place(&mut self, target: &ast::Expr) -> Option<(ir::Place, Ty)> {
        match &target.kind {
            ast::ExprKind::Name(name) => {
                if let Some(id) = self.local(&name.name) {
                    self.note_local(name, id);
                    self.error(
                        Code::PatchNotState,
                        target.span,
                        format!("`{}` is a local binding, not state", name.name),
                        Some("only state fields can be patched".into()),
                    );
                    return None;
                }
                let own = self.layer;
                let found = self.find_member(&name.name);
                if let Some((_, entry)) = found {
                    self.note_member(name, entry);
                }
                match found {
                    Some((layer_id, entry)) => match &entry.def {
                        MemberDef::State(id, ty) if Some(layer_id) == own => Some((
                            ir::Place {
                                state: *id,
                                path: Vec::new(),
                            },
                            ty.clone(),
                        )),
                        MemberDef::State(..) => {
                            let owner = &self.scope.layers[layer_id.index()].name;
                            self.error(
                                Code::ForeignPatch,
                                target.span,
                                format!("`{}` is state of layer `{owner}`; a layer patches only its own state", name.name),
                                Some(format!("to change `{owner}`, have it declare a `tunable` and `revise` it")),
                            );
                            None
                        }
                        other => {
                            let what = member_kind_name(other);
                            self.error(
                                Code::PatchNotState,
                                target.span,
                                format!("`{}` is a {what}, not state", name.name),
                                Some(if matches!(other, MemberDef::Tunable(..)) {
                                    "a tunable changes only through `revise` from a layer that needs it".to_owned()
                                } else {
                                    "patch the state it is computed from".to_owned()
                                }),
                            );
                            None
                        }
                    },
                    None => {
                        if self.scope.values.contains_key(&name.name) {
                            self.error(
                                Code::PatchNotState,
                                target.span,
                                format!("`{}` is not state", name.name),
                                Some("only state fields can be patched".into()),
                            );
                        } else {
                            self.unknown_name(name);
                        }
                        None
                    }
                }
            }
            ast::ExprKind::Field(base, field) => {
                let (mut place, ty) = self.place(base)?;
                match self.shallow(&ty) {
                    Ty::Record(record) => {
                        match record.fields.iter().position(|(n, _)| *n == field.name) {
                            Some(index) => {
                                self.note_field(field, &record);
                                place.path.push(ir::PlaceStep::Field(index as u32));
                                Some((place, record.fields[index].1.clone()))
                            }
                            None => {
                                self.unknown_field(field, &record);
                                None
                            }
                        }
                    }
                    Ty::Error => None,
                    other => {
                        self.error(
                            Code::UnknownField,
                            field.span,
                            format!("`{other}` has no fields"),
                            None,
                        );
                        None
                    }
                }
            }
            ast::ExprKind::Index(base, index) => {
                let (mut place, ty) = self.place(base)?;
                let (key, elem) = match self.shallow(&ty) {
                    Ty::List(elem) => (Ty::Int, *elem),
                    Ty::Map(key, value) => (*key, *value),
                    Ty::Error => return None,
                    other => {
                        self.error(
                            Code::NotIndexable,
                            base.span,
                            format!("a `{other}` place cannot be indexed in a patch"),
                            Some("patch a list element or a map entry".into()),
                        );
                        return None;
                    }
                };
                let key = self.check(index, &key);
                place.path.push(ir::PlaceStep::Index(key));
                Some((place, elem))
            }
            // The parser accepts only names, fields and elements as places.
            _ => {
                self.push(Diagnostic::internal(
                    target.span,
                    "the parser produced a patch target that is not a place",
                ));
                None
            }
        }
    }

    /// Resolves the target of a `revise`: `layer.tunable` (or a bare tunable name).
    /// The tunable a `revise` statement changes: its own layer's or a needed layer's.
    pub(super) fn revise_target(
        &mut self,
        target: &ast::Expr,
    ) -> Option<(ir::TunableId, Ty, Option<ir::Range>)> {
        let (layer_id, id, ty, range) = self.tunable_place(target)?;
        // A layer may revise its own tunables and those of the layers it needs: both are
        // parameters it is allowed to read, and the declared range still bounds every change
        // (docs/decisions/0006-revise-own-tunables.md).
        if Some(layer_id) != self.layer && !self.sees(layer_id) {
            self.not_needed(
                target,
                layer_id,
                "revise it",
                "a layer revises only its own tunables and those of the layers it needs",
            );
            return None;
        }
        Some((id, ty, range))
    }

    /// The tunable whose default a `tunable layer.name = value` member sets: a needed layer's,
    /// never the layer's own (whose default is written where it is declared).
    pub(super) fn tunable_default_target(
        &mut self,
        target: &ast::Expr,
    ) -> Option<(ir::TunableId, Ty, Option<ir::Range>)> {
        let (layer_id, id, ty, range) = self.tunable_place(target)?;
        if Some(layer_id) == self.layer {
            self.error(
                Code::OwnTunableDefault,
                target.span,
                "a layer cannot set the default of its own tunable this way".to_owned(),
                Some("write the default where the tunable is declared".into()),
            );
            return None;
        }
        if !self.sees(layer_id) {
            self.not_needed(
                target,
                layer_id,
                "set its defaults",
                "a layer sets the defaults of the tunables of the layers it needs",
            );
            return None;
        }
        Some((id, ty, range))
    }

    fn not_needed(&mut self, target: &ast::Expr, layer_id: ir::LayerId, what: &str, help: &str) {
        let own = self
            .current_layer()
            .map(|l| l.name.clone())
            .unwrap_or_default();
        let other = self.scope.layers[layer_id.index()].name.clone();
        self.error(
            Code::ReviseNotNeeded,
            target.span,
            format!("layer `{own}` does not need layer `{other}`, so it cannot {what}"),
            Some(help.into()),
        );
    }

    /// Resolves `layer.tunable` (or a bare name of the layer's own) to the tunable, its layer,
    /// type and range, reporting a place that is not a tunable.
    fn tunable_place(
        &mut self,
        target: &ast::Expr,
    ) -> Option<(ir::LayerId, ir::TunableId, Ty, Option<ir::Range>)> {
        let (layer_name, name) = match &target.kind {
            ast::ExprKind::Field(base, name) => match &base.kind {
                ast::ExprKind::Name(layer) => (Some(layer), name),
                _ => (None, name),
            },
            ast::ExprKind::Name(name) => (None, name),
            _ => {
                self.error(
                    Code::ReviseNotTunable,
                    target.span,
                    "expected `layer.tunable`".to_owned(),
                    None,
                );
                return None;
            }
        };
        let layer_id = match layer_name {
            Some(layer) => match self.scope.layer(&layer.name) {
                Some(id) => {
                    self.note_layer(layer, id);
                    id
                }
                None => {
                    let help = did_you_mean(
                        &layer.name,
                        self.scope.layers.iter().map(|l| l.name.as_str()),
                    );
                    self.error(
                        Code::UnknownLayer,
                        layer.span,
                        format!("unknown layer `{}`", layer.name),
                        help,
                    );
                    return None;
                }
            },
            None => match self.find_member(&name.name) {
                Some((id, _)) => id,
                None => {
                    self.unknown_name(name);
                    return None;
                }
            },
        };
        let info = &self.scope.layers[layer_id.index()];
        let Some(entry) = info.members.get(&name.name) else {
            let help = did_you_mean(&name.name, info.members.keys().map(String::as_str));
            self.error(
                Code::UnknownName,
                name.span,
                format!("layer `{}` has no member `{}`", info.name, name.name),
                help,
            );
            return None;
        };
        self.note_member(name, entry);
        let MemberDef::Tunable(id, ty, range) = &entry.def else {
            let what = member_kind_name(&entry.def);
            self.error(
                Code::ReviseNotTunable,
                target.span,
                format!("`{}.{}` is a {what}, not a tunable", info.name, name.name),
                Some(format!(
                    "declare it in layer `{}` as `tunable {}: Type = default in lo..=hi`",
                    info.name, name.name
                )),
            );
            return None;
        };
        Some((layer_id, *id, ty.clone(), range.clone()))
    }

    pub(super) fn guards(&mut self, guards: &[ast::Guard]) -> Vec<ir::Guard> {
        guards
            .iter()
            .map(|guard| match guard {
                ast::Guard::Cond(cond) => ir::Guard::Cond(self.check(cond, &Ty::Bool)),
                ast::Guard::Let(pattern, value) => {
                    let value = self.infer(value, None);
                    let pattern = self.pattern(pattern, &value.ty.clone(), false);
                    ir::Guard::Let(pattern, value)
                }
            })
            .collect()
    }

    /// An action call in a decide rule or `sim.next`: the action and its positional arguments.
    pub(super) fn action_call(
        &mut self,
        expr: &ast::Expr,
        code: Code,
    ) -> Option<(ir::ActionId, Vec<Lowered>)> {
        let ast::ExprKind::Call(callee, args) = &expr.kind else {
            self.error(
                code,
                expr.span,
                "expected an action call, such as `shoot(cell)`".to_owned(),
                None,
            );
            return None;
        };
        let ast::ExprKind::Name(name) = &callee.kind else {
            self.error(
                code,
                expr.span,
                "expected an action call, such as `shoot(cell)`".to_owned(),
                None,
            );
            return None;
        };
        let Some((layer_id, entry)) = self.find_member(&name.name) else {
            self.unknown_name(name);
            return None;
        };
        self.note_member(name, entry);
        let MemberDef::Action(id, params) = &entry.def else {
            self.error(
                code,
                callee.span,
                format!(
                    "`{}` is a {}, not an action",
                    name.name,
                    member_kind_name(&entry.def)
                ),
                None,
            );
            return None;
        };
        let (id, params, key) = (*id, params.clone(), entry.key.clone());
        if !self.sees(layer_id) {
            self.higher_layer(name, layer_id);
            return None;
        }
        self.uses.insert(key);
        let args = self.args(&params, args, expr.span, &format!("action `{}`", name.name));
        Some((id, args))
    }
}

fn assign_symbol(op: ast::AssignOp) -> &'static str {
    match op {
        ast::AssignOp::Set => "=",
        ast::AssignOp::Add => "+=",
        ast::AssignOp::Sub => "-=",
        ast::AssignOp::Mul => "*=",
    }
}

pub(super) fn range_text(range: &ir::Range) -> String {
    let show = |l: &ir::Literal| match l {
        ir::Literal::Int(v) => v.to_string(),
        ir::Literal::Float(v) => format!("{v:?}"),
        ir::Literal::Bool(v) => v.to_string(),
        ir::Literal::String(v) => format!("{v:?}"),
    };
    format!(
        "{}..{}{}",
        show(&range.lo),
        if range.inclusive { "=" } else { "" },
        show(&range.hi)
    )
}
