//! The cost queries of a module: its turn's bound (`cost`), the per-layer analyses it reads
//! (`layer_cost`, `layer_reads`, `slot_shapes`) and the E0901 diagnostics (`cost_diagnostics`).

// The accessors that salsa generates for interned structs carry no docs of their own.
#![allow(missing_docs)]

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::{
    GroupKey, Inputs, ModuleKey, check_group, environment, guarded, module_chunks, program_files,
};
use crate::check::ChunkCheck;
use crate::codes::Code;
use crate::cost::CostReport;
use crate::diagnostic::{Diagnostic, SourceText};
use crate::env;
use crate::ir::{self, SrcSpan};
use crate::lower;

/// The cost bound of a module's turn, per phase ([`crate::cost`]), with spans in the files of
/// [`program_files`]; the module's errors when it has any.
///
/// It reads the module's chunk checks through a [`lower::View`], its game's declared bounds and
/// the limit: an edit re-runs the analysis, but neither clones the chunks' IR nor moves their
/// spans, and the report only changes when a bound or a reported span does. The analyses of
/// the computed values and the walks of the layers' bodies come from [`layer_cost`], per layer
/// and state: after an edit inside one member, only its layer's are made again.
#[salsa::tracked(returns(ref))]
pub fn cost(db: &dyn salsa::Database, key: ModuleKey) -> Result<CostReport, Vec<Diagnostic>> {
    let module = key.module(db);
    let parts = module_chunks(db, key)?;
    let placed = parts.placed();
    let bounds = game_bounds(db, key);
    let limit = key.inputs(db).cost_limit(db);
    let view = match lower::view(parts.scope, &placed) {
        Ok(view) => view,
        Err(problem) => {
            return Err(vec![
                Diagnostic::internal(harness_grammar::Span::default(), problem).in_file(module),
            ]);
        }
    };
    // Each group of chunks belongs to one cost group: a layer's, or the items'.
    let mut groups = vec![Vec::new(); parts.scope.layers.len() + 1];
    let mut previous = None;
    for (index, (_, _, _, group, _)) in parts.chunks.iter().enumerate() {
        if previous == Some(*group) {
            continue;
        }
        previous = Some(*group);
        let cost_group = parts.chunks[index..]
            .iter()
            .take_while(|(_, _, _, other, _)| other == group)
            .find_map(|(_, _, layer, _, _)| *layer)
            .map_or(0, |l| l.index() + 1);
        if let Some(keys) = groups.get_mut(cost_group) {
            keys.push(*group);
        }
    }
    let kept = ModuleSummaries {
        db,
        module: key,
        layout: cost_layout(db, key),
        groups,
        contexts: RefCell::default(),
        plans: RefCell::default(),
        kept: RefCell::default(),
        chunks: RefCell::default(),
        reads: RefCell::default(),
    };
    let mut report = guarded(module, || crate::cost::analyse(&view, bounds, limit, &kept))
        .map_err(|internal| vec![*internal])?;
    // The analysis reports spans labelled by chunk (see `check_group`); each is moved into its
    // file here, and the lists sorted again in file order. Most reports name no span, so the
    // table of places is made only for one that does.
    let places: std::collections::HashMap<u32, (u32, u32)> = if report.over.is_empty() {
        std::collections::HashMap::new()
    } else {
        parts
            .chunks
            .iter()
            .map(|(file, offset, _, _, check)| (check.label, (*file, *offset)))
            .collect()
    };
    let place = |over: &mut Vec<(SrcSpan, u64)>| {
        for (span, _) in over.iter_mut() {
            let (file, offset) = places.get(&span.file).copied().unwrap_or_default();
            *span = SrcSpan {
                file,
                start: span.start + offset,
                end: span.end + offset,
            };
        }
        over.sort();
        over.dedup();
    };
    for phase in &mut report.phases {
        place(&mut phase.over);
    }
    place(&mut report.over);
    Ok(report)
}

/// The cost group of each computed value, function, tunable and state slot of a module, by id: 0 for the
/// items (the definitions outside layers, of every file of the program), `l + 1` for the members
/// of layer `l`. Read from the environment, so that an edit inside a body leaves it alone.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CostLayout {
    /// The group of each computed value.
    pub computed: Vec<u32>,
    /// The group of each function.
    pub fns: Vec<u32>,
    /// The group of each tunable.
    pub tunables: Vec<u32>,
    /// The group of each state slot.
    pub states: Vec<u32>,
}

/// The cost groups of a module's definitions ([`CostLayout`]).
#[salsa::tracked(returns(ref))]
pub fn cost_layout(db: &dyn salsa::Database, key: ModuleKey) -> CostLayout {
    fn place(slots: &mut Vec<u32>, id: u32, group: u32) {
        let id = id as usize;
        if slots.len() <= id {
            slots.resize(id + 1, 0);
        }
        slots[id] = group;
    }
    let mut layout = CostLayout::default();
    let env = environment(db, key.inputs(db));
    let Some(scope) = env.scopes.get(key.module(db)) else {
        return layout;
    };
    for (index, layer) in scope.layers.iter().enumerate() {
        let group = index as u32 + 1;
        for entry in layer.members.values() {
            match &entry.def {
                env::MemberDef::Computed(id, _) => place(&mut layout.computed, id.0, group),
                env::MemberDef::Fn(info) => place(&mut layout.fns, info.id.0, group),
                env::MemberDef::Tunable(id, ..) => place(&mut layout.tunables, id.0, group),
                env::MemberDef::State(id, _) => place(&mut layout.states, id.0, group),
                env::MemberDef::Action(..) => {}
            }
        }
    }
    layout
}

/// Groups of chunks named by their keys, interned: the content of a cost group, so that what is
/// worked out from a cost group's chunks is keyed on what they are, not on where they sit. Never
/// collected, for the same reason as [`Group`].
#[salsa::interned(no_lifetime, debug, revisions = usize::MAX)]
pub struct Chunks {
    /// The groups' keys.
    #[returns(ref)]
    pub keys: Vec<GroupKey>,
}

/// The checks of a group of chunks, in order.
fn chunk_checks(db: &dyn salsa::Database, chunks: Chunks) -> Vec<&ChunkCheck> {
    chunks
        .keys(db)
        .iter()
        .flat_map(|key| &check_group(db, *key).chunks)
        .collect()
}

/// The parts of a partial view ([`lower::partial`]) whose items are those of `items`, with the
/// functions and tunables of `defs`; the caller adds the computed values and state slots it
/// analyses.
fn view_parts<'a>(
    items: &[&'a ChunkCheck],
    defs: impl IntoIterator<Item = &'a &'a ChunkCheck>,
) -> lower::Parts<'a> {
    let mut parts = lower::Parts {
        items: items.iter().map(|check| &check.ir).collect(),
        computed: Default::default(),
        fns: Default::default(),
        tunables: Default::default(),
        state: Default::default(),
    };
    for check in defs {
        parts
            .fns
            .extend(check.ir.fns.iter().map(|(id, def)| (id.0, def)));
        parts
            .tunables
            .extend(check.ir.tunables.iter().map(|(id, def)| (id.0, def)));
    }
    parts
}

/// What the bodies of a group of chunks read outside themselves, per body.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct LayerReads {
    /// What the computed values and constants read, together.
    values: crate::cost::Needs,
    /// What each function reads, by id.
    fns: Vec<(ir::FnId, crate::cost::Needs)>,
    /// What the actions, handlers, revise blocks and decide rules read, together.
    turn: crate::cost::Needs,
    /// What the bodies of the actions, handlers and revise blocks read, together: the patch
    /// sites of the state's rounds ([`crate::cost::PatchSites`]).
    sites: crate::cost::Needs,
    /// Whether any of those bodies patches a state slot.
    patches: bool,
}

/// Whether statements patch a state slot.
#[derive(Default)]
struct Patches(bool);

impl crate::visit::Visit for Patches {
    fn stmt(&mut self, stmt: &ir::Stmt) {
        self.0 |= matches!(stmt.kind, ir::StmtKind::Patch { .. });
        crate::visit::walk::stmt(self, stmt);
    }
}

/// What the bodies of some chunks read ([`LayerReads`]).
#[salsa::tracked(returns(ref))]
pub(crate) fn layer_reads(db: &dyn salsa::Database, chunks: Chunks) -> LayerReads {
    let mut reads = LayerReads::default();
    for check in chunk_checks(db, chunks) {
        let ir = &check.ir;
        for (_, def) in &ir.computed {
            crate::visit::Visit::expr(&mut reads.values, &def.body.expr);
        }
        for (_, def) in &ir.consts {
            crate::visit::Visit::expr(&mut reads.values, &def.value.expr);
        }
        for (id, def) in &ir.fns {
            let mut needs = crate::cost::Needs::default();
            crate::visit::Visit::expr(&mut needs, &def.body.expr);
            reads.fns.push((*id, needs));
        }
        let turn = &mut reads.turn;
        for (_, action) in &ir.actions {
            if let Some(available) = &action.available {
                crate::visit::Visit::expr(turn, available);
            }
            for requires in &action.requires {
                crate::visit::Visit::expr(turn, &requires.cond);
            }
            crate::visit::walk::stmts(turn, &action.body);
        }
        for handler in &ir.handlers {
            crate::visit::walk::stmts(turn, &handler.body);
        }
        for revise in &ir.revises {
            crate::visit::Visit::expr(turn, &revise.cond);
            crate::visit::walk::stmts(turn, &revise.body);
        }
        let bodies = (ir.actions.iter().map(|(_, action)| &action.body))
            .chain(ir.handlers.iter().map(|handler| &handler.body))
            .chain(ir.revises.iter().map(|revise| &revise.body));
        let mut patches = Patches::default();
        for body in bodies {
            crate::visit::walk::stmts(&mut reads.sites, body);
            crate::visit::walk::stmts(&mut patches, body);
        }
        reads.patches |= patches.0;
        for rule in &ir.rules {
            for guard in &rule.guards {
                match guard {
                    ir::Guard::Cond(e) | ir::Guard::Let(_, e) => crate::visit::Visit::expr(turn, e),
                }
            }
            for arg in &rule.args {
                crate::visit::Visit::expr(turn, arg);
            }
        }
    }
    reads.fns.sort_by_key(|(id, _)| *id);
    reads
}

/// What [`layer_cost`] is keyed on: everything the analyses of a cost group's computed values
/// read. An edit inside another group's body leaves it equal, so the analyses are reused; a
/// chunk that moves in its file keeps its key, and spans are chunk-relative and labelled by
/// chunk, so the analyses do not move either.
#[salsa::interned(no_lifetime, debug, revisions = usize::MAX)]
pub(crate) struct LayerState {
    /// The module.
    pub(crate) module: ModuleKey,
    /// The group's own chunks.
    pub(crate) own: Chunks,
    /// The chunks of the items and of the groups whose functions and tunables the group's
    /// bodies use.
    pub(crate) others: Chunks,
    /// The shapes of the state slots the bodies read, by slot.
    #[returns(ref)]
    pub(crate) state: Vec<(u32, crate::cost::Shape)>,
    /// The shapes of the computed values of lower groups the bodies read, by id: a body reads
    /// only the shape of another group's value (its work is counted where it is evaluated).
    #[returns(ref)]
    pub(crate) lower: Vec<(u32, crate::cost::Shape)>,
    /// Whether the group's actions, handlers, revise blocks and decide rules are walked too
    /// ([`crate::cost::Turn`]): the key then names the slots and lower values they read as
    /// well.
    pub(crate) phases: bool,
}

/// The analyses of a cost group's computed values in one state, by id, with what each body
/// reads directly ([`crate::cost::summarise`]).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct LayerCost {
    computed: Vec<crate::cost::Summary>,
    /// The walk of the group's bodies, for a key that asks for it ([`LayerState::phases`]).
    turn: Option<Arc<crate::cost::LayerTurn>>,
}

impl LayerCost {
    fn get(
        &self,
        c: ir::ComputedId,
    ) -> Option<(Arc<crate::cost::Analysed>, Arc<crate::cost::Reach>)> {
        let at = self
            .computed
            .binary_search_by_key(&c, |(id, _, _)| *id)
            .ok()?;
        let (_, done, reads) = &self.computed[at];
        Some((done.clone(), reads.clone()))
    }
}

/// The analyses of one cost group's computed values in one state of the slots. It reads only
/// what its key names ([`LayerState`]), the module's scope (for its enums), the game's bounds
/// and the limit.
#[salsa::tracked(returns(ref))]
pub(crate) fn layer_cost(db: &dyn salsa::Database, key: LayerState) -> Option<Arc<LayerCost>> {
    let module = key.module(db);
    let inputs = module.inputs(db);
    let env = environment(db, inputs);
    let scope = env.scopes.get(module.module(db))?;
    let (own, others) = (
        chunk_checks(db, key.own(db)),
        chunk_checks(db, key.others(db)),
    );
    let mut parts = view_parts(&others, own.iter().chain(&others));
    let mut ids = Vec::new();
    for check in &own {
        for (id, def) in &check.ir.computed {
            parts.computed.insert(id.0, def);
            ids.push(*id);
        }
    }
    ids.sort();
    let view = lower::partial(scope, parts).ok()?;
    // The slots the group does not read keep the shape of no value; none of its bodies sees it.
    let mut state = Vec::new();
    for (slot, shape) in key.state(db) {
        let slot = *slot as usize;
        if state.len() <= slot {
            state.resize(slot + 1, crate::cost::Shape::default());
        }
        state[slot] = shape.clone();
    }
    let mut turn = crate::cost::Turn::default();
    if key.phases(db) {
        for check in &own {
            let ir = &check.ir;
            turn.actions
                .extend(ir.actions.iter().map(|(id, a)| (*id, a)));
            turn.handlers.extend(ir.handlers.iter());
            turn.revise.extend(ir.revises.iter());
            turn.decide.extend(ir.rules.iter());
        }
    }
    let lower = LowerShapes::new(key.lower(db));
    let (computed, turn) = crate::cost::summarise(
        &view,
        &ids,
        key.phases(db).then_some(&turn),
        state,
        game_bounds(db, module),
        inputs.cost_limit(db),
        &lower,
    );
    Some(Arc::new(LayerCost {
        computed,
        turn: turn.map(Arc::new),
    }))
}

/// What [`slot_shapes`] is keyed on: a group of layers whose patch sites read and write only
/// the state slots of the group's layers, with those slots' initial shapes. An edit inside
/// another layer leaves it equal, so the group's slots are not settled again.
#[salsa::interned(no_lifetime, debug, revisions = usize::MAX)]
pub(crate) struct SlotGroup {
    /// The module.
    pub(crate) module: ModuleKey,
    /// The chunks of each layer of the group that patches a slot, in layer order.
    #[returns(ref)]
    pub(crate) sites: Vec<Chunks>,
    /// The chunks of the items, of the group's layers and of every layer whose computed
    /// values, functions or tunables the sites' bodies read, directly or through others.
    pub(crate) values: Chunks,
    /// The initial shapes of the slots of the group's layers, by slot.
    #[returns(ref)]
    pub(crate) initial: Vec<(u32, crate::cost::Shape)>,
    /// The most times the handlers run in an episode ([`crate::cost::settle`]).
    pub(crate) observations: u64,
}

/// The shapes over an episode of the state slots of a group of layers ([`SlotGroup`]), by
/// slot: the rounds of the whole module's patches restricted to the group's, which give the
/// same shapes for its slots, as no other patch reads or writes them. `None` when the group's
/// definitions do not make a view. The computed values the patches read are analysed here: a
/// group is settled again only after an edit inside one of its layers or of what they read.
#[salsa::tracked(returns(ref))]
pub(crate) fn slot_shapes(
    db: &dyn salsa::Database,
    key: SlotGroup,
) -> Option<Vec<(u32, crate::cost::Shape)>> {
    let module = key.module(db);
    let inputs = module.inputs(db);
    let env = environment(db, inputs);
    let scope = env.scopes.get(module.module(db))?;
    let values = chunk_checks(db, key.values(db));
    let mut parts = view_parts(&values, &values);
    for check in &values {
        let ir = &check.ir;
        parts
            .computed
            .extend(ir.computed.iter().map(|(id, def)| (id.0, def)));
        parts
            .state
            .extend(ir.state.iter().map(|(id, def)| (id.0, def)));
    }
    let view = lower::partial(scope, parts).ok()?;
    let mut actions = Vec::new();
    let mut patches = crate::cost::PatchSites::default();
    for layer in key.sites(db) {
        let (mut handlers, mut revise) = (Vec::new(), Vec::new());
        for check in chunk_checks(db, *layer) {
            actions.extend(check.ir.actions.iter().map(|(id, action)| (*id, action)));
            handlers.extend(check.ir.handlers.iter());
            revise.extend(check.ir.revises.iter());
        }
        patches.layers.push((handlers, revise));
    }
    actions.sort_by_key(|(id, _)| *id);
    patches.actions = actions.into_iter().map(|(_, action)| action).collect();
    // The slots of other groups keep the shape of no value; no patch of this group reads one.
    let initial = key.initial(db);
    let mut shapes =
        vec![crate::cost::Shape::default(); initial.last().map_or(0, |(s, _)| *s as usize + 1)];
    for (slot, shape) in initial {
        shapes[*slot as usize] = shape.clone();
    }
    let settled = crate::cost::settle(
        &view,
        &patches,
        shapes,
        game_bounds(db, module),
        key.observations(db),
    );
    Some(
        initial
            .iter()
            .map(|(slot, _)| (*slot, settled[*slot as usize].clone()))
            .collect(),
    )
}

/// The shapes of lower groups' computed values, as a group's analysis ([`layer_cost`]) reads
/// them: each made once into an analysis with that shape, which every read shares.
struct LowerShapes {
    computed: Vec<(u32, Arc<crate::cost::Analysed>)>,
    reads: Arc<crate::cost::Reach>,
}

impl LowerShapes {
    fn new(lower: &[(u32, crate::cost::Shape)]) -> Self {
        LowerShapes {
            computed: lower
                .iter()
                .map(|(id, shape)| {
                    (
                        *id,
                        Arc::new(crate::cost::Analysed::of_shape(shape.clone())),
                    )
                })
                .collect(),
            reads: Arc::default(),
        }
    }
}

impl crate::cost::Summaries for LowerShapes {
    fn context(&self, _: &[crate::cost::Shape]) -> u32 {
        // The state of a group's analysis is its key's.
        0
    }

    fn get(
        &self,
        c: ir::ComputedId,
        _: u32,
    ) -> Option<(Arc<crate::cost::Analysed>, Arc<crate::cost::Reach>)> {
        let at = self
            .computed
            .binary_search_by_key(&c.0, |(id, _)| *id)
            .ok()?;
        Some((self.computed[at].1.clone(), self.reads.clone()))
    }

    fn turn(&self, _: usize, _: u32) -> Option<Arc<crate::cost::LayerTurn>> {
        // A group's analysis walks no other layer.
        None
    }

    fn settled(&self, _: &[crate::cost::Shape], _: u64) -> Option<Vec<crate::cost::Shape>> {
        // A group's analysis is given the state.
        None
    }
}

/// The analyses the module's analysis ([`cost`]) reads: every group's, in each state the
/// analysis names.
struct ModuleSummaries<'db> {
    db: &'db dyn salsa::Database,
    module: ModuleKey,
    layout: &'db CostLayout,
    /// The keys of the module's groups of chunks by cost group ([`CostLayout`]).
    groups: Vec<Vec<GroupKey>>,
    /// The states named so far, by number.
    contexts: RefCell<Vec<Vec<crate::cost::Shape>>>,
    /// What each group's analyses read, worked out at its first use, by group and by whether
    /// its bodies are walked too ([`LayerState::phases`]).
    plans: RefCell<Plans>,
    /// The groups' analyses fetched so far, by group and state number; `None` for a group that
    /// is analysed with its module.
    kept: RefCell<FxHashMap<(u32, u32), Option<&'db LayerCost>>>,
    /// The chunks of each cost group, interned at their first use.
    chunks: RefCell<Vec<Option<Chunks>>>,
    /// What each cost group's bodies read, fetched at its first use.
    reads: RefCell<Vec<Option<&'db LayerReads>>>,
}

/// The plans of a module's groups ([`ModuleSummaries::plan`]), by group and by whether the
/// group's bodies are walked too.
type Plans = FxHashMap<(u32, bool), Option<Arc<LayerPlan>>>;

/// What the analyses of one group read, whatever the state: the parts of its [`LayerState`]
/// that do not depend on the state, and which slots and lower values to take from it.
struct LayerPlan {
    own: Chunks,
    others: Chunks,
    /// The state slots the bodies read, sorted.
    states: Vec<u32>,
    /// The computed values of lower groups the bodies read, sorted, with their groups.
    lower: Vec<(ir::ComputedId, u32)>,
}

impl<'db> ModuleSummaries<'db> {
    /// What `group`'s analyses read, with `phases` those of its walk too, or `None` when the
    /// group cannot be analysed apart from its module: a body it analyses makes a preview
    /// (`sim.next`, which walks the whole module) or reads a computed value of a higher group
    /// (reading only lower ones keeps the keys finite).
    fn plan(&self, group: u32, phases: bool) -> Option<Arc<LayerPlan>> {
        if let Some(plan) = self.plans.borrow().get(&(group, phases)) {
            return plan.clone();
        }
        let plan = self.make_plan(group, phases).map(Arc::new);
        self.plans
            .borrow_mut()
            .insert((group, phases), plan.clone());
        plan
    }

    /// The chunks of the cost group `group`.
    fn chunks(&self, group: u32) -> Chunks {
        let mut interned = self.chunks.borrow_mut();
        if interned.len() <= group as usize {
            interned.resize(group as usize + 1, None);
        }
        *interned[group as usize].get_or_insert_with(|| {
            let keys = self.groups.get(group as usize).cloned().unwrap_or_default();
            Chunks::new(self.db, keys)
        })
    }

    fn make_plan(&self, group: u32, phases: bool) -> Option<LayerPlan> {
        let db = self.db;
        let own = self.chunks(group);
        let mut needs = crate::cost::Needs::default();
        needs.extend(&self.reads(group).values);
        if phases {
            needs.extend(&self.reads(group).turn);
        }
        needs.extend(&self.reads(0).values);
        // The functions the bodies call, and those they call in turn, each read in its group.
        let mut others = BTreeSet::from([0]);
        let mut seen = BTreeSet::new();
        while let Some(f) = needs.fns.pop() {
            if !seen.insert(f) {
                continue;
            }
            let home = *self.layout.fns.get(f.index())?;
            others.insert(home);
            let reads = self.reads(home);
            let at = reads.fns.binary_search_by_key(&f, |(id, _)| *id).ok()?;
            needs.extend(&reads.fns[at].1);
        }
        if needs.preview {
            return None;
        }
        for t in &needs.tunables {
            others.insert(*self.layout.tunables.get(t.index())?);
        }
        others.remove(&group);
        let others: Vec<GroupKey> = others
            .into_iter()
            .flat_map(|g| self.groups.get(g as usize).into_iter().flatten().copied())
            .collect();
        let read: BTreeSet<ir::ComputedId> = needs.computed.iter().copied().collect();
        let mut lower = Vec::new();
        for c in read {
            let home = *self.layout.computed.get(c.index())?;
            if home > group {
                return None;
            }
            if home < group {
                lower.push((c, home));
            }
        }
        let states: BTreeSet<u32> = needs.states.iter().map(|s| s.0).collect();
        Some(LayerPlan {
            own,
            others: Chunks::new(db, others),
            states: states.into_iter().collect(),
            lower,
        })
    }

    /// What the bodies of the cost group `group` read ([`layer_reads`]), fetched once.
    fn reads(&self, group: u32) -> &'db LayerReads {
        if let Some(Some(reads)) = self.reads.borrow().get(group as usize) {
            return reads;
        }
        let reads = layer_reads(self.db, self.chunks(group));
        let mut fetched = self.reads.borrow_mut();
        if fetched.len() <= group as usize {
            fetched.resize(group as usize + 1, None);
        }
        fetched[group as usize] = Some(reads);
        reads
    }

    /// What evaluating bodies that need `needs` reads, through the computed values and functions
    /// they read: the state slots (with repeats), and whether it analyses the definitions of
    /// each cost group (the items' always). `None` when it makes a preview (which walks the
    /// whole module) or reads a definition the layout does not place.
    fn closure(&self, needs: &crate::cost::Needs) -> Option<(Vec<ir::StateId>, Vec<bool>)> {
        let mut needs = needs.clone();
        needs.extend(&self.reads(0).values);
        let mut groups = vec![false; self.groups.len()];
        // The cost groups whose computed values' reads are taken, all together.
        let mut valued = vec![false; self.groups.len()];
        groups[0] = true;
        valued[0] = true;
        let mut fns = BTreeSet::new();
        let mut states = Vec::new();
        loop {
            if let Some(c) = needs.computed.pop() {
                let home = *self.layout.computed.get(c.index())? as usize;
                *groups.get_mut(home)? = true;
                if !std::mem::replace(valued.get_mut(home)?, true) {
                    needs.extend(&self.reads(home as u32).values);
                }
            } else if let Some(f) = needs.fns.pop() {
                if !fns.insert(f) {
                    continue;
                }
                let home = *self.layout.fns.get(f.index())?;
                *groups.get_mut(home as usize)? = true;
                let reads = self.reads(home);
                let at = reads.fns.binary_search_by_key(&f, |(id, _)| *id).ok()?;
                needs.extend(&reads.fns[at].1);
            } else if let Some(t) = needs.tunables.pop() {
                *groups.get_mut(*self.layout.tunables.get(t.index())? as usize)? = true;
            } else {
                break;
            }
        }
        if needs.preview {
            return None;
        }
        states.append(&mut needs.states);
        Some((states, groups))
    }

    /// The module's layers in groups that settle apart ([`SlotGroup`]): a layer whose bodies
    /// patch a slot is grouped with the layers of the slots those bodies read. `None` when the
    /// slots are settled with the module ([`Self::closure`]).
    fn slot_groups(&self) -> Option<Vec<SlotPlan>> {
        let count = self.groups.len();
        // Each cost group points towards the least cost group of its slot group.
        let mut parent: Vec<usize> = (0..count).collect();
        fn root(parent: &mut [usize], mut at: usize) -> usize {
            while parent[at] != at {
                parent[at] = parent[parent[at]];
                at = parent[at];
            }
            at
        }
        let mut reads: Vec<Option<Vec<bool>>> = vec![None; count];
        for (layer, read) in reads.iter_mut().enumerate().skip(1) {
            let own = self.reads(layer as u32);
            if !own.patches {
                continue;
            }
            let (states, groups) = self.closure(&own.sites)?;
            for slot in states {
                let home = *self.layout.states.get(slot.index())? as usize;
                let (a, b) = (root(&mut parent, layer), root(&mut parent, home));
                parent[a.max(b)] = a.min(b);
            }
            *read = Some(groups);
        }
        // Only the groups with a patch have slots that change.
        let mut index = vec![None; count];
        let mut plans: Vec<SlotPlan> = Vec::new();
        for (layer, read) in reads.iter().enumerate().skip(1) {
            let top = root(&mut parent, layer);
            if read.is_some() && index[top].is_none() {
                index[top] = Some(plans.len());
                plans.push(SlotPlan {
                    layers: Vec::new(),
                    sites: Vec::new(),
                    values: vec![false; count],
                });
            }
        }
        for (layer, read) in reads.into_iter().enumerate().skip(1) {
            let Some(at) = index[root(&mut parent, layer)] else {
                continue;
            };
            let plan = &mut plans[at];
            plan.layers.push(layer as u32);
            plan.values[layer] = true;
            if let Some(read) = read {
                plan.sites.push(layer as u32);
                for (value, read) in plan.values.iter_mut().zip(read) {
                    *value |= read;
                }
            }
        }
        Some(plans)
    }

    /// The analyses of `group` in the state numbered `context`; `None` for a group analysed
    /// with its module ([`ModuleSummaries::plan`]).
    fn group(&self, group: u32, context: u32) -> Option<&'db LayerCost> {
        if let Some(kept) = self.kept.borrow().get(&(group, context)) {
            return *kept;
        }
        let kept = self.analyse(group, context, false);
        self.kept.borrow_mut().insert((group, context), kept);
        kept
    }

    /// The analyses of `group` in the state numbered `context`, with `phases` its walk too.
    fn analyse(&self, group: u32, context: u32, phases: bool) -> Option<&'db LayerCost> {
        let db = self.db;
        let plan = self.plan(group, phases)?;
        let mut lower = Vec::with_capacity(plan.lower.len());
        for (c, home) in &plan.lower {
            let (done, _) = self.group(*home, context)?.get(*c)?;
            lower.push((c.0, done.shape().clone()));
        }
        let state: Vec<(u32, crate::cost::Shape)> = {
            let contexts = self.contexts.borrow();
            let full = contexts.get(context as usize)?;
            plan.states
                .iter()
                .map(|s| (*s, full.get(*s as usize).cloned().unwrap_or_default()))
                .collect()
        };
        let key = LayerState::new(db, self.module, plan.own, plan.others, state, lower, phases);
        layer_cost(db, key).as_deref()
    }
}

impl crate::cost::Summaries for ModuleSummaries<'_> {
    fn context(&self, state: &[crate::cost::Shape]) -> u32 {
        // The analysis returns to states it met (rounds that start from equal shapes): they
        // keep their number, so their groups' analyses are fetched once.
        let mut contexts = self.contexts.borrow_mut();
        match contexts.iter().position(|known| known.as_slice() == state) {
            Some(at) => at as u32,
            None => {
                contexts.push(state.to_vec());
                (contexts.len() - 1) as u32
            }
        }
    }

    fn get(
        &self,
        c: ir::ComputedId,
        context: u32,
    ) -> Option<(Arc<crate::cost::Analysed>, Arc<crate::cost::Reach>)> {
        let group = *self.layout.computed.get(c.index())?;
        self.group(group, context)?.get(c)
    }

    fn turn(&self, layer: usize, context: u32) -> Option<Arc<crate::cost::LayerTurn>> {
        let group = layer as u32 + 1;
        let kept = self.analyse(group, context, true)?;
        // The walk's key names all that the analyses of the group's computed values read, so
        // its analyses of them serve the module's reads in that state too.
        self.kept
            .borrow_mut()
            .entry((group, context))
            .or_insert(Some(kept));
        kept.turn.clone()
    }

    fn settled(
        &self,
        initial: &[crate::cost::Shape],
        observations: u64,
    ) -> Option<Vec<crate::cost::Shape>> {
        let db = self.db;
        let mut slots_of = vec![Vec::new(); self.groups.len()];
        for (slot, home) in self.layout.states.iter().enumerate() {
            slots_of.get_mut(*home as usize)?.push(slot);
        }
        let mut shapes = initial.to_vec();
        for plan in self.slot_groups()? {
            let slots: Vec<(u32, crate::cost::Shape)> = (plan.layers.iter())
                .flat_map(|layer| &slots_of[*layer as usize])
                .map(|slot| {
                    (
                        *slot as u32,
                        initial.get(*slot).cloned().unwrap_or_default(),
                    )
                })
                .collect();
            let sites: Vec<Chunks> = plan.sites.iter().map(|layer| self.chunks(*layer)).collect();
            let values: Vec<GroupKey> = (plan.values.iter().enumerate())
                .filter(|(_, read)| **read)
                .flat_map(|(group, _)| self.groups[group].iter().copied())
                .collect();
            let key = SlotGroup::new(
                db,
                self.module,
                sites,
                Chunks::new(db, values),
                slots,
                observations,
            );
            for (slot, shape) in slot_shapes(db, key).as_ref()? {
                *shapes.get_mut(*slot as usize)? = shape.clone();
            }
        }
        Some(shapes)
    }
}

/// One group of layers whose slots settle apart ([`ModuleSummaries::slot_groups`]).
struct SlotPlan {
    /// The group's layers, by cost group, in order.
    layers: Vec<u32>,
    /// Those whose bodies patch a slot.
    sites: Vec<u32>,
    /// Whether the patches' bodies read the definitions of each cost group; the group's own
    /// layers are read for their slots.
    values: Vec<bool>,
}

/// The query bounds declared by the game of a module, by query. A query of its own so that the
/// cost of a module depends on its game's bounds, not on the whole environment.
#[salsa::tracked(returns(ref))]
pub fn game_bounds(db: &dyn salsa::Database, key: ModuleKey) -> BTreeMap<String, u64> {
    environment(db, key.inputs(db))
        .scopes
        .get(key.module(db))
        .and_then(|scope| scope.game.as_ref())
        .map(|game| game.bounds.iter().cloned().collect())
        .unwrap_or_default()
}

/// E0901 for every module whose turn has a phase bounded above the limit, at the expressions
/// whose own bound passes it. Modules with errors are skipped: their bound needs a checked
/// program.
#[salsa::tracked(returns(ref))]
pub fn cost_diagnostics(db: &dyn salsa::Database, inputs: Inputs) -> Vec<Diagnostic> {
    let env = environment(db, inputs);
    // A file's text is read only for a diagnostic placed in it, so that an edit does not make
    // this query run again when every module stays within the limit.
    let sourced = |path: &str, diagnostic: Diagnostic| {
        let diagnostic = diagnostic.in_file(path);
        match inputs.files(db).iter().find(|f| f.path(db) == path) {
            Some(file) => {
                diagnostic.with_source(SourceText::new(path.to_owned(), file.text(db).clone()))
            }
            None => diagnostic,
        }
    };
    let mut out: Vec<Diagnostic> = Vec::new();
    let mut seen = BTreeSet::new();
    for (path, module) in &env.file_modules {
        let key = ModuleKey::new(db, inputs, module.clone());
        let Ok(report) = cost(db, key) else {
            continue;
        };
        let limit = crate::cost::show(report.limit);
        for (span, steps) in &report.over {
            let file = program_files(db, key)
                .get(span.file as usize)
                .cloned()
                .unwrap_or_else(|| path.clone());
            if !seen.insert((file.clone(), span.start, span.end, "")) {
                continue;
            }
            out.push(sourced(
                &file,
                Diagnostic::new(
                    Code::CostOverLimit,
                    harness_grammar::Span::new(span.start as usize, span.end as usize),
                    format!(
                        "this expression's work is bounded by {} steps per turn, over the limit \
                         of {limit}",
                        crate::cost::show(*steps)
                    ),
                )
                .help(
                    "make the aggregate smaller or aggregate once instead of once per element; \
                     `harness check --cost` shows the bound of each phase",
                ),
            ));
        }
        for phase in report.over_limit().filter(|p| p.over.is_empty()) {
            // Many parts, none over the limit alone: the module is the culprit.
            if seen.insert((path.clone(), 0, 0, phase.phase)) {
                out.push(sourced(
                    path,
                    Diagnostic::new(
                        Code::CostOverLimit,
                        harness_grammar::Span::new(0, 0),
                        format!(
                            "the {} phase of a turn of `{module}` is bounded by {} steps, over \
                             the limit of {limit}",
                            phase.phase,
                            crate::cost::show(phase.steps)
                        ),
                    )
                    .help("`harness check --cost` shows the bound of each phase"),
                ));
            }
        }
    }
    out
}
