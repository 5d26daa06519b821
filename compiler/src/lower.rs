//! Assembles a module's [`ir::Program`] from the lowered chunks.
//!
//! Each chunk check lowers its own definitions with spans relative to the chunk; this module
//! places them in the program's arenas by id and moves every span into its file.

use std::collections::BTreeMap;

use crate::check::ChunkIr;
use crate::env::Scope;
use crate::ir::{self, SrcSpan};

/// A lowered chunk with where it sits: the file index in the program and the chunk's offset.
pub struct Placed<'a> {
    /// Index into [`ir::Program::files`].
    pub file: u32,
    /// The chunk's byte offset in its file.
    pub offset: u32,
    /// The layer of a member chunk.
    pub layer: Option<ir::LayerId>,
    /// The lowered chunk.
    pub ir: &'a ChunkIr,
}

/// Builds the program; `Err` names a definition that no chunk lowered (a bug in the checker).
pub fn assemble(
    scope: &Scope,
    game: Option<String>,
    files: Vec<String>,
    layer_spans: &[SrcSpan],
    chunks: &[Placed<'_>],
) -> Result<ir::Program, String> {
    let mut consts = BTreeMap::new();
    let mut config = BTreeMap::new();
    let mut errors = BTreeMap::new();
    let mut fns = BTreeMap::new();
    let mut state = BTreeMap::new();
    let mut tunables = BTreeMap::new();
    let mut computed = BTreeMap::new();
    let mut actions = BTreeMap::new();
    let mut llms = BTreeMap::new();
    let mut layers: Vec<ir::Layer> = scope
        .layers
        .iter()
        .map(|info| ir::Layer {
            name: info.name.clone(),
            needs: info.needs.clone(),
            below: info.below.iter().copied().collect(),
            state: Vec::new(),
            tunables: Vec::new(),
            computed: Vec::new(),
            fns: Vec::new(),
            actions: Vec::new(),
            models: Vec::new(),
            handlers: Vec::new(),
            decide: Vec::new(),
            revise: Vec::new(),
            span: SrcSpan::default(),
        })
        .collect();
    for placed in chunks {
        let shift = Shift {
            file: placed.file,
            offset: placed.offset,
        };
        let chunk = placed.ir.clone();
        for (id, mut it) in chunk.consts {
            shift.body(&mut it.value);
            it.span = shift.span(it.span);
            consts.insert(id, it);
        }
        for (id, mut it) in chunk.config {
            shift.body(&mut it.default);
            it.span = shift.span(it.span);
            config.insert(id, it);
        }
        for (id, mut it) in chunk.errors {
            it.span = shift.span(it.span);
            errors.insert(id, it);
        }
        for (id, mut it) in chunk.fns {
            shift.body(&mut it.body);
            it.span = shift.span(it.span);
            fns.insert(id, it);
        }
        for (id, mut it) in chunk.state {
            shift.body(&mut it.init);
            it.span = shift.span(it.span);
            state.insert(id, it);
        }
        for (id, mut it) in chunk.tunables {
            shift.body(&mut it.default);
            it.span = shift.span(it.span);
            tunables.insert(id, it);
        }
        for (id, mut it) in chunk.computed {
            shift.body(&mut it.body);
            it.span = shift.span(it.span);
            computed.insert(id, it);
        }
        for (id, mut it) in chunk.llms {
            it.span = shift.span(it.span);
            llms.insert(id, it);
        }
        for (id, mut it) in chunk.actions {
            if let Some(e) = &mut it.available {
                shift.expr(e);
            }
            for r in &mut it.requires {
                shift.expr(&mut r.cond);
                r.span = shift.span(r.span);
            }
            shift.stmts(&mut it.body);
            it.span = shift.span(it.span);
            actions.insert(id, it);
        }
        let Some(layer) = placed.layer.and_then(|id| layers.get_mut(id.index())) else {
            continue;
        };
        for mut it in chunk.models {
            for b in &mut it.branches {
                b.args.iter_mut().for_each(|e| shift.expr(e));
                if let Some(p) = &mut b.probability {
                    shift.expr(p);
                }
                b.span = shift.span(b.span);
            }
            it.span = shift.span(it.span);
            layer.models.push(it);
        }
        for mut it in chunk.handlers {
            shift.stmts(&mut it.body);
            it.span = shift.span(it.span);
            layer.handlers.push(it);
        }
        for mut it in chunk.rules {
            shift.guards(&mut it.guards);
            it.args.iter_mut().for_each(|e| shift.expr(e));
            it.span = shift.span(it.span);
            layer.decide.push(it);
        }
        for mut it in chunk.revises {
            shift.expr(&mut it.cond);
            shift.stmts(&mut it.body);
            it.span = shift.span(it.span);
            layer.revise.push(it);
        }
    }
    for (index, info) in scope.layers.iter().enumerate() {
        let layer = &mut layers[index];
        for entry in info.members.values() {
            match &entry.def {
                crate::env::MemberDef::State(id, _) => layer.state.push(*id),
                crate::env::MemberDef::Tunable(id, ..) => layer.tunables.push(*id),
                crate::env::MemberDef::Computed(id, _) => layer.computed.push(*id),
                crate::env::MemberDef::Fn(info) => layer.fns.push(info.id),
                crate::env::MemberDef::Action(id, _) => layer.actions.push(*id),
            }
        }
        layer.state.sort();
        layer.tunables.sort();
        layer.computed.sort();
        layer.fns.sort();
        layer.actions.sort();
        layer.span = layer_spans.get(index).copied().unwrap_or_default();
    }
    Ok(ir::Program {
        module: scope.module.clone(),
        game,
        files,
        enums: scope
            .enums
            .iter()
            .map(|e| ir::EnumDef {
                name: e.name.clone(),
                variants: e.variants.clone(),
            })
            .collect(),
        errors: dense(errors, "error")?,
        consts: dense(consts, "constant")?,
        config: dense(config, "config entry")?,
        layers,
        state: dense(state, "state slot")?,
        tunables: dense(tunables, "tunable")?,
        computed: dense(computed, "computed value")?,
        fns: dense(fns, "function")?,
        actions: dense(actions, "action")?,
        llms: dense(llms, "LLM effect")?,
    })
}

/// The values of a map keyed by consecutive ids `0..n`, or the first missing id.
fn dense<K: Ord + Copy + std::fmt::Debug + Into<u32>, V>(
    map: BTreeMap<K, V>,
    what: &str,
) -> Result<Vec<V>, String> {
    let mut out = Vec::with_capacity(map.len());
    for (expected, (id, value)) in map.into_iter().enumerate() {
        if (id.into() as usize) != expected {
            return Err(format!("{what} {expected} was not lowered"));
        }
        out.push(value);
    }
    Ok(out)
}

macro_rules! into_u32 {
    ($($id:ident),*) => {$(
        impl From<ir::$id> for u32 {
            fn from(id: ir::$id) -> u32 {
                id.0
            }
        }
    )*};
}

into_u32!(
    ErrorId, ConstId, ConfigId, StateId, TunableId, ComputedId, FnId, ActionId, LlmId
);

/// Moves spans from chunk-relative to file-relative.
struct Shift {
    file: u32,
    offset: u32,
}

impl Shift {
    fn span(&self, span: SrcSpan) -> SrcSpan {
        SrcSpan {
            file: self.file,
            start: span.start + self.offset,
            end: span.end + self.offset,
        }
    }

    fn body(&self, body: &mut ir::Body) {
        self.expr(&mut body.expr);
    }

    fn pattern(&self, pattern: &mut ir::Pattern) {
        pattern.span = self.span(pattern.span);
        match &mut pattern.kind {
            ir::PatternKind::Some(inner) => self.pattern(inner),
            ir::PatternKind::Variant { payload, .. } => {
                payload.iter_mut().for_each(|p| self.pattern(p))
            }
            _ => {}
        }
    }

    fn guards(&self, guards: &mut [ir::Guard]) {
        for guard in guards {
            match guard {
                ir::Guard::Cond(e) => self.expr(e),
                ir::Guard::Let(p, e) => {
                    self.pattern(p);
                    self.expr(e);
                }
            }
        }
    }

    fn stmts(&self, stmts: &mut [ir::Stmt]) {
        for stmt in stmts {
            stmt.span = self.span(stmt.span);
            match &mut stmt.kind {
                ir::StmtKind::Let(p, e) => {
                    self.pattern(p);
                    self.expr(e);
                }
                ir::StmtKind::Revise { value, .. } => self.expr(value),
                ir::StmtKind::Patch { place, value, .. } => {
                    for step in &mut place.path {
                        if let ir::PlaceStep::Index(e) = step {
                            self.expr(e);
                        }
                    }
                    self.expr(value);
                }
                ir::StmtKind::Emit { args, .. } => args.iter_mut().for_each(|a| self.expr(a)),
                ir::StmtKind::LetLlm { pattern, args, .. } => {
                    self.pattern(pattern);
                    args.iter_mut().for_each(|a| self.expr(a));
                }
                ir::StmtKind::If {
                    guards,
                    then,
                    otherwise,
                } => {
                    self.guards(guards);
                    self.stmts(then);
                    self.stmts(otherwise);
                }
            }
        }
    }

    fn expr(&self, expr: &mut ir::Expr) {
        expr.span = self.span(expr.span);
        use ir::ExprKind as K;
        match &mut expr.kind {
            K::GameCall { args, .. }
            | K::CallFn { args, .. }
            | K::CallBuiltin { args, .. }
            | K::SimNext { args, .. } => args.iter_mut().for_each(|a| self.expr(a)),
            K::Variant { payload, .. } => payload.iter_mut().for_each(|a| self.expr(a)),
            K::Record(items) | K::List(items) | K::Set(items) => {
                items.iter_mut().for_each(|a| self.expr(a))
            }
            K::Closure { body, .. } => self.expr(body),
            K::Some(inner) | K::Field(inner, _) | K::Unary(_, inner) => self.expr(inner),
            K::SnapshotRead { snapshot, .. } => self.expr(snapshot),
            K::Index(a, b) | K::Binary(_, a, b) => {
                self.expr(a);
                self.expr(b);
            }
            K::If {
                guards,
                then,
                otherwise,
            } => {
                self.guards(guards);
                self.expr(then);
                self.expr(otherwise);
            }
            K::Match(scrutinee, arms) => {
                self.expr(scrutinee);
                for arm in arms {
                    self.pattern(&mut arm.pattern);
                    self.expr(&mut arm.body);
                }
            }
            K::Let {
                pattern,
                value,
                body,
            } => {
                self.pattern(pattern);
                self.expr(value);
                self.expr(body);
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
}
