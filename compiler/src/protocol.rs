//! Harness protocols: rules about the roles layers declare, checked on top of the language.
//!
//! A layer may declare a role (`layer recall role memory needs ...`). Without a protocol the
//! role documents the layer; a protocol gives roles a meaning and checks it. The one protocol
//! today is [`Protocol::Jit4`], the four-module protocol of just-in-time harness evolution: a
//! harness is a memory, a planning, a capability and an action layer, run in that order, where
//! memory keeps what was observed, planning exposes a `directive`, capability exposes the set of
//! game effects the action layer may use (`computed exposed: Set<Effect>`), and the action layer
//! alone decides and emits, each effect gated on the capability's set. Because the rules hold
//! for any game's bindings (every game has the enum `Effect` of its effects, see
//! [`crate::signatures::EFFECT_ENUM`]), a generated harness can be checked for the protocol
//! before it is ever run.
//!
//! The protocol applies to each root program of a workspace: a module that no other loaded
//! module uses, together with the modules it uses. Programs with errors of their own are left to
//! those errors.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use harness_grammar::Span;
use harness_grammar::ast::{self, BinaryOp};

use crate::Workspace;
use crate::codes::Code;
use crate::diagnostic::{Diagnostic, SourceText, did_you_mean};
use crate::ir::{self, ExprKind, MemberRef, Program, StmtKind};
use crate::signatures::EFFECT_ENUM;
use crate::types::Ty;

/// A protocol that `harness check --protocol NAME` can enforce.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Protocol {
    /// Four roles, memory → planning → capability → action.
    Jit4,
}

/// The roles of [`Protocol::Jit4`], bottom to top: each needs the one before it.
pub const JIT4_ROLES: [&str; 4] = ["memory", "planning", "capability", "action"];

/// The computed value a planning layer exposes.
pub const DIRECTIVE: &str = "directive";

/// The computed value a capability layer exposes: the effects the action layer may use.
pub const EXPOSED: &str = "exposed";

impl Protocol {
    /// Every protocol.
    pub const ALL: &'static [Protocol] = &[Protocol::Jit4];

    /// The protocol's name as `--protocol` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Jit4 => "jit4",
        }
    }

    /// Looks a protocol up by name.
    pub fn parse(name: &str) -> Option<Protocol> {
        Protocol::ALL.iter().copied().find(|p| p.name() == name)
    }

    /// The protocol's roles, bottom to top.
    pub fn roles(self) -> &'static [&'static str] {
        match self {
            Protocol::Jit4 => &JIT4_ROLES,
        }
    }
}

impl Workspace {
    /// The diagnostics of `protocol` over every root program of the workspace that checks
    /// cleanly, sorted by file and position.
    pub fn protocol_diagnostics(&self, protocol: Protocol) -> Vec<Diagnostic> {
        let modules = self.modules();
        let programs: Vec<Arc<Program>> = modules
            .iter()
            .filter_map(|(module, _)| self.program(module).ok())
            .collect();
        // A module is a root unless another module's program holds its file.
        let used: BTreeSet<&str> = programs
            .iter()
            .flat_map(|program| {
                let own = modules
                    .iter()
                    .find(|(module, _)| *module == program.module)
                    .map(|(_, path)| path.as_str());
                program
                    .files
                    .iter()
                    .map(String::as_str)
                    .filter(move |file| Some(*file) != own)
            })
            .collect();
        let mut roles = RoleTable::default();
        let mut out = Vec::new();
        for program in &programs {
            let own = modules
                .iter()
                .find(|(module, _)| *module == program.module)
                .map(|(_, path)| path.as_str());
            if own.is_some_and(|path| used.contains(path)) {
                continue;
            }
            let sources = program
                .files
                .iter()
                .map(|path| {
                    let text = self.text(path).unwrap_or_else(|| Arc::from(""));
                    roles.load(path, &text);
                    SourceText::new(path.clone(), text)
                })
                .collect::<Vec<_>>();
            let found = Checker {
                protocol,
                program,
                roles: &roles,
                out: Vec::new(),
            }
            .run();
            for (file, diagnostic) in found {
                let source = sources[file].clone();
                out.push(
                    diagnostic
                        .in_file(program.files[file].clone())
                        .with_source(source),
                );
            }
        }
        out.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
        out.dedup_by(|a, b| {
            a.sort_key() == b.sort_key() && a.message == b.message && a.file == b.file
        });
        out
    }
}

/// The roles written in the files: for each file, layer name to the `role` word and its span.
#[derive(Default)]
struct RoleTable {
    files: BTreeMap<String, BTreeMap<String, (String, Span)>>,
}

impl RoleTable {
    fn load(&mut self, path: &str, text: &str) {
        if self.files.contains_key(path) {
            return;
        }
        let parse = harness_grammar::parse(text);
        let layers = parse
            .file
            .items
            .iter()
            .filter_map(|item| match item {
                ast::Item::Layer(layer) => layer
                    .role
                    .as_ref()
                    .map(|role| (layer.name.name.clone(), (role.name.clone(), role.span))),
                _ => None,
            })
            .collect();
        self.files.insert(path.to_owned(), layers);
    }

    fn role(&self, path: &str, layer: &str) -> Option<&(String, Span)> {
        self.files.get(path)?.get(layer)
    }
}

/// One run of the protocol over one program; diagnostics carry the index of their file.
struct Checker<'a> {
    protocol: Protocol,
    program: &'a Program,
    roles: &'a RoleTable,
    out: Vec<(usize, Diagnostic)>,
}

fn span(at: ir::SrcSpan) -> Span {
    Span {
        start: at.start,
        end: at.end,
    }
}

impl Checker<'_> {
    fn push(&mut self, at: ir::SrcSpan, diagnostic: Diagnostic) {
        self.out.push((at.file as usize, diagnostic));
    }

    fn run(mut self) -> Vec<(usize, Diagnostic)> {
        let program = self.program;
        let roles = self.protocol.roles();
        let protocol = self.protocol.name();
        // Each layer's role index, when it declares one of the protocol's roles.
        let mut role_of: Vec<Option<usize>> = vec![None; program.layers.len()];
        let mut player: Vec<Option<usize>> = vec![None; roles.len()];
        for (index, layer) in program.layers.iter().enumerate() {
            let path = &program.files[layer.span.file as usize];
            match self.roles.role(path, &layer.name) {
                None => self.push(
                    layer.span,
                    Diagnostic::new(
                        Code::RoleMissing,
                        span(layer.span),
                        format!(
                            "layer `{}` declares no role, but protocol {protocol} gives every layer one",
                            layer.name
                        ),
                    )
                    .help(format!(
                        "declare its role: `layer {} role <role> ...`, with one of {}",
                        layer.name,
                        quoted(roles)
                    )),
                ),
                Some((word, at)) => {
                    let at_ir = ir::SrcSpan {
                        file: layer.span.file,
                        start: at.start,
                        end: at.end,
                    };
                    match roles.iter().position(|r| r == word) {
                        None => {
                            let help = did_you_mean(word, roles.iter().copied())
                                .unwrap_or_else(|| format!("use one of {}", quoted(roles)));
                            self.push(
                                at_ir,
                                Diagnostic::new(
                                    Code::RoleRepeated,
                                    *at,
                                    format!("`{word}` is not a role of protocol {protocol}"),
                                )
                                .help(help),
                            );
                        }
                        Some(role) => match player[role] {
                            Some(first) => {
                                let first = &program.layers[first];
                                let mut diagnostic = Diagnostic::new(
                                    Code::RoleRepeated,
                                    *at,
                                    format!(
                                        "layers `{}` and `{}` both play the role `{word}`",
                                        first.name, layer.name
                                    ),
                                )
                                .help(format!(
                                    "protocol {protocol} has one layer per role: merge the two layers, or give this one another role"
                                ));
                                if first.span.file == layer.span.file {
                                    diagnostic =
                                        diagnostic.label(span(first.span), "the role's first layer");
                                }
                                self.push(at_ir, diagnostic);
                            }
                            None => {
                                player[role] = Some(index);
                                role_of[index] = Some(role);
                            }
                        },
                    }
                }
            }
        }
        // The place that reports a role nobody plays: the top layer, or the start of the file.
        let top = program.layers.last().map(|l| l.span).unwrap_or_default();
        for (role, who) in player.iter().enumerate() {
            if who.is_none() {
                self.push(
                    top,
                    Diagnostic::new(
                        Code::RoleMissing,
                        span(top),
                        format!(
                            "no layer plays the role `{}` that protocol {protocol} requires",
                            roles[role]
                        ),
                    )
                    .help(format!(
                        "add a layer `layer {0} role {0} ...` (the roles, bottom to top: {1})",
                        roles[role],
                        quoted(roles)
                    )),
                );
            }
        }
        self.chain(&role_of, &player);
        match self.protocol {
            Protocol::Jit4 => self.jit4(&role_of, &player),
        }
        self.out
    }

    /// Each role needs the role below it, and no layer needs one of its own role or above.
    fn chain(&mut self, role_of: &[Option<usize>], player: &[Option<usize>]) {
        let program = self.program;
        let roles = self.protocol.roles();
        for (index, layer) in program.layers.iter().enumerate() {
            let Some(role) = role_of[index] else { continue };
            for need in &layer.needs {
                if let Some(theirs) = role_of[need.index()]
                    && theirs >= role
                {
                    self.push(
                        layer.span,
                        Diagnostic::new(
                            Code::RoleChain,
                            span(layer.span),
                            format!(
                                "the {} layer `{}` needs the {} layer `{}`, which is not below it",
                                roles[role],
                                layer.name,
                                roles[theirs],
                                program.layers[need.index()].name
                            ),
                        )
                        .help(format!("the roles build bottom to top: {}", chain(roles))),
                    );
                }
            }
            if role == 0 {
                continue;
            }
            let Some(below) = player[role - 1] else {
                continue;
            };
            if !layer.needs.iter().any(|need| need.index() == below) {
                let below = &program.layers[below].name;
                self.push(
                    layer.span,
                    Diagnostic::new(
                        Code::RoleChain,
                        span(layer.span),
                        format!(
                            "the {} layer `{}` does not need the {} layer `{below}`",
                            roles[role],
                            layer.name,
                            roles[role - 1]
                        ),
                    )
                    .help(format!(
                        "add it to the layer's `needs` (`layer {} role {} needs {below}`); the roles build bottom to top: {}",
                        layer.name,
                        roles[role],
                        chain(roles)
                    )),
                );
            }
        }
    }

    fn jit4(&mut self, role_of: &[Option<usize>], player: &[Option<usize>]) {
        let program = self.program;
        let [_, planning, capability, action] = [0, 1, 2, 3].map(|r| player[r]);
        // Only the action layer decides or emits.
        for (index, layer) in program.layers.iter().enumerate() {
            let Some(role) = role_of[index] else { continue };
            if Some(index) == action {
                continue;
            }
            if let Some(rule) = layer.decide.first() {
                self.push(
                    rule.span,
                    Diagnostic::new(
                        Code::RoleActs,
                        span(rule.span),
                        format!(
                            "the {} layer `{}` has a `decide` rule; only the action layer decides",
                            JIT4_ROLES[role], layer.name
                        ),
                    )
                    .help("move the rule, and the actions it chooses, into the action layer"),
                );
            }
            for id in &layer.actions {
                let act = &program.actions[id.index()];
                if let Some((effect, at)) = emits(&act.body).into_iter().next() {
                    self.push(
                        at,
                        Diagnostic::new(
                            Code::RoleActs,
                            span(at),
                            format!(
                                "action `{}` of the {} layer `{}` emits `game.{effect}`; only the action layer emits",
                                act.name, JIT4_ROLES[role], layer.name
                            ),
                        )
                        .help("move the action into the action layer, gated on the capability's `exposed` set"),
                    );
                }
            }
        }
        if let Some(planning) = planning {
            let layer = &program.layers[planning];
            if !layer
                .computed
                .iter()
                .any(|id| program.computed[id.index()].name == DIRECTIVE)
            {
                self.push(
                    layer.span,
                    Diagnostic::new(
                        Code::NoDirective,
                        span(layer.span),
                        format!(
                            "the planning layer `{}` exposes no `computed {DIRECTIVE}`",
                            layer.name
                        ),
                    )
                    .help(format!(
                        "declare what the layer tells the layers above, for example `computed {DIRECTIVE}: Option<Int> = None` for a planner that directs nothing"
                    )),
                );
            }
        }
        let mut exposed_id = None;
        if let Some(capability) = capability {
            let layer = &program.layers[capability];
            let wanted = Ty::Set(Box::new(Ty::Enum(EFFECT_ENUM.into())));
            let found = layer
                .computed
                .iter()
                .find(|id| program.computed[id.index()].name == EXPOSED);
            match found {
                Some(id) if program.computed[id.index()].ty == wanted => exposed_id = Some(*id),
                Some(id) => {
                    let computed = &program.computed[id.index()];
                    self.push(
                        computed.span,
                        Diagnostic::new(
                            Code::NoExposed,
                            span(computed.span),
                            format!(
                                "`{EXPOSED}` of the capability layer `{}` has type `{}`, not `Set<{EFFECT_ENUM}>`",
                                layer.name, computed.ty
                            ),
                        )
                        .help(format!(
                            "declare it `computed {EXPOSED}: Set<{EFFECT_ENUM}> = [...]`, a set of the game's effects (`{EFFECT_ENUM}.name`)"
                        )),
                    );
                }
                None => self.push(
                    layer.span,
                    Diagnostic::new(
                        Code::NoExposed,
                        span(layer.span),
                        format!(
                            "the capability layer `{}` exposes no `computed {EXPOSED}: Set<{EFFECT_ENUM}>`",
                            layer.name
                        ),
                    )
                    .help(format!(
                        "declare the effects the action layer may use, for example `computed {EXPOSED}: Set<{EFFECT_ENUM}> = [{EFFECT_ENUM}.name]`"
                    )),
                ),
            }
        }
        let (Some(action), Some(exposed)) = (action, exposed_id) else {
            return;
        };
        let layer = &program.layers[action];
        for id in &layer.actions {
            let act = &program.actions[id.index()];
            let gated = act
                .available
                .as_ref()
                .map(|cond| gates(program, cond, exposed))
                .unwrap_or_default();
            let mut reported = BTreeSet::new();
            for (effect, at) in emits(&act.body) {
                if gated.contains(&effect) || !reported.insert(effect.clone()) {
                    continue;
                }
                self.push(
                    at,
                    Diagnostic::new(
                        Code::UnexposedEffect,
                        span(at),
                        format!(
                            "action `{}` emits `game.{effect}` without checking that the capability layer exposes it",
                            act.name
                        ),
                    )
                    .primary("not gated on `exposed`")
                    .help(format!(
                        "gate the action: `available when {EFFECT_ENUM}.{effect} in {EXPOSED}` (joined with `and` to any other condition)"
                    )),
                );
            }
        }
    }
}

/// The game effects a list of statements emits, with where, in source order.
fn emits(stmts: &[ir::Stmt]) -> Vec<(String, ir::SrcSpan)> {
    let mut out = Vec::new();
    for stmt in stmts {
        match &stmt.kind {
            StmtKind::Emit { effect, .. } => out.push((effect.clone(), stmt.span)),
            StmtKind::If {
                then, otherwise, ..
            } => {
                out.extend(emits(then));
                out.extend(emits(otherwise));
            }
            _ => {}
        }
    }
    out
}

/// The effects an `available when` condition requires to be in `exposed`: its top-level `and`
/// conjuncts of the form `Effect.name in exposed`.
fn gates(program: &Program, cond: &ir::Expr, exposed: ir::ComputedId) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut todo = vec![cond];
    while let Some(expr) = todo.pop() {
        let ExprKind::Binary(op, lhs, rhs) = &expr.kind else {
            continue;
        };
        match op {
            BinaryOp::And => {
                todo.push(lhs);
                todo.push(rhs);
            }
            BinaryOp::In => {
                if let (
                    ExprKind::Variant { enum_id, index, .. },
                    ExprKind::Member(MemberRef::Computed(id)),
                ) = (&lhs.kind, &rhs.kind)
                    && *id == exposed
                    && let Some(def) = program.enums.get(enum_id.index())
                    && def.name == EFFECT_ENUM
                    && let Some((variant, _)) = def.variants.get(*index as usize)
                {
                    out.insert(variant.clone());
                }
            }
            _ => {}
        }
    }
    out
}

fn quoted(roles: &[&str]) -> String {
    roles
        .iter()
        .map(|r| format!("`{r}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn chain(roles: &[&str]) -> String {
    roles.join(" ← ")
}
