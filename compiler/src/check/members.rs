//! Layer members: state, tunables, computed values, actions, handlers, rules, models and revise blocks.

use harness_grammar::{Span, ast};

use super::stmts::range_text;
use super::{Block, Checker, ChunkCheck, Ctx, Lowered, NodeKind, method_call, rel};
use crate::codes::Code;
use crate::diagnostic::{Diagnostic, did_you_mean};
use crate::env::{self, MemberDef};
use crate::ir;
use crate::symbol::GameKind;
use crate::types::Ty;

impl<'a> Checker<'a> {
    pub(super) fn member_def(&self, name: &str) -> Option<&'a MemberDef> {
        self.member_entry(name).map(|entry| &entry.def)
    }

    pub(super) fn member(&mut self, member: &ast::Member, out: &mut ChunkCheck) {
        let Some(layer) = self.layer else { return };
        match member {
            ast::Member::State(block) => {
                for field in &block.fields {
                    self.begin(Ctx::Layer, NodeKind::Other, None, field.name.span);
                    let ty = self.resolve(&field.ty);
                    let init = self.body(&field.init, &ty);
                    if let Some(MemberDef::State(id, _)) = self.member_def(&field.name.name) {
                        out.ir.state.push((
                            *id,
                            ir::StateSlot {
                                name: field.name.name.clone(),
                                layer,
                                ty,
                                init,
                                span: rel(field.span),
                            },
                        ));
                    }
                }
            }
            ast::Member::Tunable(param) => {
                self.begin(Ctx::Tunable, NodeKind::Other, None, param.name.span);
                let lowered = self.param(param, Some(layer));
                if let Some(MemberDef::Tunable(id, ..)) = self.member_def(&param.name.name) {
                    out.ir.tunables.push((*id, lowered));
                }
            }
            ast::Member::TunableDefault(it) => {
                self.begin(Ctx::Tunable, NodeKind::Other, None, it.span);
                let Some((tunable, ty, range)) = self.tunable_default_target(&it.target) else {
                    return;
                };
                let value = self.body(&it.value, &ty);
                if let (Some(range), Some(literal)) = (&range, env::literal(&it.value))
                    && env::in_range(&literal, range) == Some(false)
                {
                    self.error(
                        Code::DefaultOutOfRange,
                        it.value.span,
                        "this default lies outside the tunable's range".to_owned(),
                        Some(format!("stay within {}", range_text(range))),
                    );
                }
                out.ir.tunable_defaults.push(ir::TunableDefault {
                    tunable,
                    value,
                    span: rel(it.span),
                });
            }
            ast::Member::Computed(decl) => {
                let def = self.member_def(&decl.name.name);
                self.begin(
                    Ctx::Computed,
                    NodeKind::Computed,
                    Some(self.layer_key(&decl.name.name)),
                    decl.name.span,
                );
                let ty = self.resolve(&decl.ty);
                let body = self.body(&decl.body, &ty);
                if let Some(MemberDef::Computed(id, _)) = def {
                    out.ir.computed.push((
                        *id,
                        ir::Computed {
                            name: decl.name.name.clone(),
                            layer,
                            ty,
                            body,
                            span: rel(decl.span),
                        },
                    ));
                }
            }
            ast::Member::Fn(decl) => {
                let def = self.member_def(&decl.name.name);
                self.begin(
                    Ctx::Layer,
                    NodeKind::Fn,
                    Some(self.layer_key(&decl.name.name)),
                    decl.name.span,
                );
                let lowered = self.function(decl);
                if let Some(MemberDef::Fn(info)) = def {
                    out.ir.fns.push((info.id, lowered));
                }
            }
            ast::Member::Action(decl) => {
                let def = self.member_def(&decl.name.name);
                self.begin(
                    Ctx::Layer,
                    NodeKind::Action,
                    Some(self.layer_key(&decl.name.name)),
                    decl.name.span,
                );
                let mut params = Vec::new();
                for param in &decl.params {
                    let ty = self.resolve(&param.ty);
                    self.new_local(&param.name, ty.clone());
                    params.push(ty);
                }
                let available = decl.available.as_ref().map(|cond| {
                    let mut e = self.check(cond, &Ty::Bool);
                    self.fix_expr(&mut e);
                    e
                });
                let mut requires = Vec::new();
                for clause in &decl.requires {
                    let mut cond = self.check(&clause.cond, &Ty::Bool);
                    self.fix_expr(&mut cond);
                    self.note_error_code(&clause.code);
                    match self.scope.errors.get(&clause.code.name) {
                        Some((id, key)) => {
                            self.uses.insert(key.clone());
                            requires.push(ir::Requires {
                                cond,
                                error: *id,
                                span: rel(clause.span),
                            });
                        }
                        None => {
                            let help = did_you_mean(
                                &clause.code.name,
                                self.scope.errors.keys().map(String::as_str),
                            )
                            .unwrap_or_else(|| {
                                format!(
                                    "declare it: `error {} = \"what went wrong\"`",
                                    clause.code.name
                                )
                            });
                            self.error(
                                Code::UnknownError,
                                clause.code.span,
                                format!("error code `{}` is not declared", clause.code.name),
                                Some(help),
                            );
                        }
                    }
                }
                let known = self.known_states.len();
                if let Some(cond) = &decl.available {
                    let facts = state_facts(cond);
                    self.known_states.extend(facts);
                }
                let mut body = self.block(&decl.body, Block::Action);
                self.known_states.truncate(known);
                self.fix_stmts(&mut body);
                let frame = self.take_frame();
                if let Some(MemberDef::Action(id, _)) = def {
                    out.ir.actions.push((
                        *id,
                        ir::Action {
                            name: decl.name.name.clone(),
                            layer,
                            params,
                            frame,
                            available,
                            requires,
                            body,
                            span: rel(decl.span),
                        },
                    ));
                }
            }
            ast::Member::Machine(decl) => {
                if let Some(lowered) = self.machine(decl) {
                    out.ir.machines.push(lowered);
                }
            }
            ast::Member::Model(model) => {
                self.begin(Ctx::Layer, NodeKind::InPreview, None, model.effect.span);
                if let Some(lowered) = self.model(model) {
                    out.ir.models.push(lowered);
                }
            }
            ast::Member::On(handler) => {
                self.begin(
                    Ctx::Layer,
                    NodeKind::InPreview,
                    None,
                    handler.observation.span,
                );
                let Some(fields) = self.message_path(&handler.observation, false) else {
                    return;
                };
                self.bind_message_params(
                    &handler.params,
                    &fields,
                    handler.observation.span,
                    "observation",
                );
                let mut body = self.block(&handler.body, Block::Handler);
                self.fix_stmts(&mut body);
                let frame = self.take_frame();
                let observation = handler
                    .observation
                    .segments
                    .last()
                    .map(|s| s.name.clone())
                    .unwrap_or_default();
                let bounds = fields
                    .iter()
                    .map(|(field, _)| {
                        let key = crate::signatures::observation_field(&observation, field);
                        let game = self.scope.game.as_ref()?;
                        game.bounds.iter().find(|(k, _)| *k == key).map(|(_, b)| *b)
                    })
                    .collect();
                out.ir.handlers.push(ir::Handler {
                    observation,
                    bounds,
                    frame,
                    body,
                    span: rel(handler.span),
                });
            }
            ast::Member::Decide(decide) => {
                for rule in &decide.rules {
                    self.begin(Ctx::Layer, NodeKind::Other, None, rule.span);
                    let depth = self.locals.len();
                    let mut guards = self.guards(&rule.guards);
                    let call = self.action_call(&rule.action, Code::RuleNotAction);
                    self.end_scope(depth, rule.span.end);
                    self.fix_guards(&mut guards);
                    let Some((action, mut args)) = call else {
                        continue;
                    };
                    args.iter_mut().for_each(|a| self.fix_expr(a));
                    let frame = self.take_frame();
                    out.ir.rules.push(ir::Rule {
                        frame,
                        guards,
                        action,
                        args,
                        span: rel(rule.span),
                    });
                }
            }
            ast::Member::Revise(revise) => {
                self.begin(Ctx::Layer, NodeKind::Other, None, revise.span);
                let mut cond = self.check(&revise.cond, &Ty::Bool);
                self.fix_expr(&mut cond);
                let mut body = self.block(&revise.body, Block::Revise);
                self.fix_stmts(&mut body);
                let frame = self.take_frame();
                out.ir.revises.push(ir::Revise {
                    frame,
                    cond,
                    body,
                    span: rel(revise.span),
                });
            }
            ast::Member::Invalid(_) => {}
        }
    }

    /// Reports an emit of a gated effect from a layer that is not provided with it: neither it
    /// nor a layer it needs declares `uses game.<name>`.
    pub(super) fn check_gate(&mut self, name: &ast::Ident) {
        let gated = self
            .scope
            .game
            .as_ref()
            .is_some_and(|g| g.gated.iter().any(|e| e == &name.name));
        if !gated {
            return;
        }
        let provides = |layer: &env::LayerInfo| layer.uses.contains(&name.name);
        let (provided, layer) = match self.current_layer() {
            Some(own) => (
                provides(own)
                    || own
                        .below
                        .iter()
                        .filter_map(|id| self.scope.layers.get(id.index()))
                        .any(provides),
                Some(own.name.clone()),
            ),
            None => (false, None),
        };
        if provided {
            return;
        }
        let effect = &name.name;
        let (message, help) = match layer {
            Some(own) => (
                format!(
                    "layer `{own}` emits `game.{effect}`, which the game gates, but neither it nor a layer it needs declares `uses game.{effect}`"
                ),
                format!(
                    "add `uses game.{effect}` to the layer that provides this tool (`layer {own} ... uses game.{effect} {{`), or emit it from a layer that needs one that does"
                ),
            ),
            None => (
                format!("`game.{effect}` is gated: only a layer that uses it may emit it"),
                "move the action into a layer that declares `uses game.{effect}`".to_owned(),
            ),
        };
        self.push(
            Diagnostic::new(Code::UngatedEffect, name.span, message)
                .primary("gated effect")
                .help(help),
        );
    }

    /// Looks up `game.name` as an effect (`effect`) or an observation, reporting problems.
    pub(super) fn message_path(
        &mut self,
        path: &ast::Path,
        effect: bool,
    ) -> Option<Vec<(String, Ty)>> {
        let (code, what) = if effect {
            (Code::UnknownEffect, "effect")
        } else {
            (Code::UnknownObservation, "observation")
        };
        let [base, name] = path.segments.as_slice() else {
            self.error(code, path.span, format!("expected `game.<{what}>`"), None);
            return None;
        };
        if base.name != "game" {
            self.error(
                code,
                path.span,
                format!("expected `game.<{what}>`, found `{}`", env::path_text(path)),
                None,
            );
            return None;
        }
        self.message(name, effect)
    }

    pub(super) fn message(&mut self, name: &ast::Ident, effect: bool) -> Option<Vec<(String, Ty)>> {
        let (code, what) = if effect {
            (Code::UnknownEffect, "effect")
        } else {
            (Code::UnknownObservation, "observation")
        };
        let Some(game) = &self.scope.game else {
            self.error(
                Code::NoGame,
                name.span,
                format!("`game.{}` needs a game", name.name),
                Some("add `use game <name>` at the top of the file".into()),
            );
            return None;
        };
        let list = if effect {
            &game.effects
        } else {
            &game.observations
        };
        match list.iter().find(|m| m.name == name.name) {
            Some(message) => {
                let kind = if effect {
                    GameKind::Effect
                } else {
                    GameKind::Observation
                };
                self.note_game(name, kind);
                Some(
                    message
                        .params
                        .iter()
                        .map(|p| (p.name.clone(), self.scope.normalize(&p.ty)))
                        .collect(),
                )
            }
            None => {
                let help = did_you_mean(&name.name, list.iter().map(|m| m.name.as_str()))
                    .unwrap_or_else(|| {
                        format!(
                            "the game's {what}s are: {}",
                            list.iter()
                                .map(|m| m.name.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        )
                    });
                self.error(
                    code,
                    name.span,
                    format!("game `{}` has no {what} `{}`", game.name, name.name),
                    Some(help),
                );
                None
            }
        }
    }

    pub(super) fn bind_message_params(
        &mut self,
        params: &[ast::Ident],
        fields: &[(String, Ty)],
        span: Span,
        what: &str,
    ) {
        if params.len() != fields.len() {
            let expected = fields
                .iter()
                .map(|(n, t)| format!("{n}: {t}"))
                .collect::<Vec<_>>()
                .join(", ");
            self.error(
                Code::MessageParams,
                span,
                format!(
                    "this {what} has {} field(s), but {} name(s) are bound",
                    fields.len(),
                    params.len()
                ),
                Some(format!("bind one name per field: ({expected})")),
            );
        }
        for (i, param) in params.iter().enumerate() {
            let ty = fields.get(i).map_or(Ty::Error, |(_, t)| t.clone());
            self.new_local(param, ty);
        }
    }

    pub(super) fn model(&mut self, model: &ast::Model) -> Option<ir::Model> {
        let params = self.message_path(&model.effect, true)?;
        self.bind_message_params(&model.params, &params, model.effect.span, "effect");
        let mut branches = Vec::new();
        let count = model.branches.len();
        let mut otherwise_seen = false;
        for (i, branch) in model.branches.iter().enumerate() {
            if branch.probability.is_none() {
                if otherwise_seen || i + 1 != count {
                    self.error(
                        Code::OtherwiseNotLast,
                        branch.span,
                        "an `otherwise` branch must be the last and only one".to_owned(),
                        Some("keep one `otherwise` branch, at the end".into()),
                    );
                }
                otherwise_seen = true;
            }
            let probability = branch.probability.as_ref().map(|p| {
                let mut e = self.check(p, &Ty::Float);
                self.fix_expr(&mut e);
                e
            });
            let Some((name, args)) = self.observation_call(&branch.observation) else {
                continue;
            };
            let mut args = args;
            args.iter_mut().for_each(|a| self.fix_expr(a));
            branches.push(ir::ModelBranch {
                observation: name,
                args,
                probability,
                span: rel(branch.span),
            });
        }
        let frame = self.take_frame();
        Some(ir::Model {
            effect: model
                .effect
                .segments
                .last()
                .map(|s| s.name.clone())
                .unwrap_or_default(),
            frame,
            branches,
            span: rel(model.span),
        })
    }

    /// `game.observation(args)` in a model branch.
    pub(super) fn observation_call(&mut self, expr: &ast::Expr) -> Option<(String, Vec<Lowered>)> {
        let Some((base, name, args)) = method_call(expr) else {
            self.error(
                Code::UnknownObservation,
                expr.span,
                "expected an observation: `game.<observation>(...)`".to_owned(),
                None,
            );
            return None;
        };
        if !matches!(&base.kind, ast::ExprKind::Name(n) if n.name == "game") {
            self.error(
                Code::UnknownObservation,
                expr.span,
                "expected an observation: `game.<observation>(...)`".to_owned(),
                None,
            );
            return None;
        }
        let fields = self.message(name, false)?;
        let args = self.args(
            &fields,
            args,
            expr.span,
            &format!("observation `{}`", name.name),
        );
        Some((name.name.clone(), args))
    }
}

/// The (field, variant) pairs a condition proves when it holds: its `field == Enum.Variant`
/// conjuncts (either way round).
pub(super) fn state_facts(cond: &ast::Expr) -> Vec<(String, String)> {
    match &cond.kind {
        ast::ExprKind::Binary(ast::BinaryOp::And, left, right) => {
            let mut facts = state_facts(left);
            facts.extend(state_facts(right));
            facts
        }
        ast::ExprKind::Binary(ast::BinaryOp::Eq, left, right) => match (&left.kind, &right.kind) {
            (ast::ExprKind::Name(field), ast::ExprKind::Field(base, variant))
            | (ast::ExprKind::Field(base, variant), ast::ExprKind::Name(field))
                if matches!(base.kind, ast::ExprKind::Name(_)) =>
            {
                vec![(field.name.clone(), variant.name.clone())]
            }
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

impl Checker<'_> {
    /// `machine field { ... }`: the field must be this layer's state of an enum type, governed
    /// by one machine, and every state a variant of the enum.
    fn machine(&mut self, decl: &ast::MachineDecl) -> Option<ir::MachineDef> {
        let field = &decl.field;
        if self
            .machines
            .iter()
            .filter(|(f, _)| *f == field.name)
            .count()
            > 1
        {
            self.error(
                Code::BadMachine,
                field.span,
                format!("`{}` has more than one machine", field.name),
                Some("write every transition of the field in one `machine`".into()),
            );
            return None;
        }
        let Some(MemberDef::State(id, ty)) = self.member_def(&field.name).cloned() else {
            self.error(
                Code::BadMachine,
                field.span,
                format!("`{}` is not a state field of this layer", field.name),
                Some("a machine governs a field declared in this layer's `state` block".into()),
            );
            return None;
        };
        let variants: Vec<String> = match &ty {
            Ty::Enum(name) => self
                .scope
                .enums
                .iter()
                .find(|e| e.name == **name)
                .map(|e| e.variants.iter().map(|(v, _)| v.clone()).collect())
                .unwrap_or_default(),
            _ => Vec::new(),
        };
        if variants.is_empty() {
            self.error(
                Code::BadMachine,
                field.span,
                format!("`{}` has type {}, not an enum", field.name, ty),
                Some(
                    "a machine's states are the variants of an enum: give the field an enum type"
                        .into(),
                ),
            );
            return None;
        }
        let index = |ck: &mut Self, state: &ast::Ident| -> Option<u32> {
            let found = variants.iter().position(|v| *v == state.name);
            if found.is_none() {
                let help = did_you_mean(&state.name, variants.iter().map(String::as_str))
                    .or_else(|| Some(format!("the states are {}", variants.join(", "))));
                ck.error(
                    Code::UnknownVariant,
                    state.span,
                    format!("`{}` is not a variant of {}", state.name, ty),
                    help,
                );
            }
            found.map(|i| i as u32)
        };
        let mut edges = Vec::new();
        let mut ok = true;
        for chain in &decl.chains {
            let mut from: Option<Option<u32>> = chain.any.map(|_| None);
            for state in &chain.states {
                let Some(to) = index(self, state) else {
                    ok = false;
                    from = None;
                    continue;
                };
                if let Some(source) = from {
                    edges.push((source, to));
                }
                from = Some(Some(to));
            }
        }
        ok.then(|| ir::MachineDef {
            state: id,
            edges,
            span: rel(decl.span),
        })
    }
}
