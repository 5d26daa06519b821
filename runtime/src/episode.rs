//! The turn loop: observe → reflect → revise → decide → act, until the game ends.
//!
//! An [`Agent`] holds the working snapshot of one episode and runs phases against a [`Game`].
//! [`run_episode`] drives a whole episode and returns an [`EpisodeResult`]: how it ended, the
//! game's metrics and every event. A runtime error ends the episode but never loses it: the
//! error is an event and part of the result.

use std::collections::BTreeMap;

use harness_compiler::ir::{ActionId, LayerId, SrcSpan};
use serde::{Deserialize, Serialize};

use crate::error::{ErrorCode, RtResult, RuntimeError};
use crate::event::{Event, EventKind, Phase};
use crate::game::Game;
use crate::interp::{Change, Eval, StepLog};
use crate::llm::{LlmCallLog, LlmHost};
use crate::machine::Machine;
use crate::snapshot::Snapshot;
use crate::value::Value;

/// The action a `decide` phase chose.
#[derive(Clone, Debug, PartialEq)]
pub struct Decision {
    /// The layer whose rule chose it.
    pub layer: LayerId,
    /// The rule's index among the layer's rules.
    pub rule: usize,
    /// The chosen action.
    pub action: ActionId,
    /// Its arguments.
    pub args: Vec<Value>,
    /// The rule's span.
    pub span: SrcSpan,
}

/// Why an episode ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    /// The game said so.
    GameOver,
    /// The turn limit was reached first.
    TurnLimit,
    /// A runtime error stopped the episode.
    Error,
    /// The harness ended the episode with `halt`.
    Halted,
}

impl EndReason {
    /// The name of the reason in traces and records.
    pub fn name(self) -> &'static str {
        match self {
            EndReason::GameOver => "game_over",
            EndReason::TurnLimit => "turn_limit",
            EndReason::Error => "error",
            EndReason::Halted => "halted",
        }
    }
}

/// What an episode cost the runtime, counted deterministically: the same inputs give the same
/// counts on any machine. These are reported beside the game's own metrics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Costs {
    /// Actions taken.
    pub turns: u64,
    /// Expression-evaluation steps, over every phase of every turn.
    pub steps: u64,
    /// `sim.next` previews made.
    pub previews: u64,
    /// Revise blocks that changed a tunable (one per turn and layer at most).
    pub revisions: u64,
    /// LLM calls, including failed ones and calls that found no LLM configured.
    pub llm_calls: u64,
    /// Turns in which an LLM was called.
    pub llm_turns: u64,
    /// Prompt tokens of the LLM calls, where the provider reported them.
    pub prompt_tokens: u64,
    /// Completion tokens of the LLM calls, where the provider reported them.
    pub completion_tokens: u64,
    /// Actions chosen (or forced) by a layer above the lowest enabled one: the turns in which
    /// an upper layer overrode the base's default, whose share of `turns` is an orchestrator's
    /// revision rate.
    #[serde(default)]
    pub overrides: u64,
}

impl Costs {
    /// The names of the counters, in declaration order: the keys of [`Costs::pairs`].
    pub const NAMES: [&'static str; 9] = [
        "turns",
        "steps",
        "previews",
        "revisions",
        "llm_calls",
        "llm_turns",
        "prompt_tokens",
        "completion_tokens",
        "overrides",
    ];

    /// The counters as name and value, in the order of [`Costs::NAMES`].
    pub fn pairs(&self) -> [(&'static str, u64); 9] {
        let values = [
            self.turns,
            self.steps,
            self.previews,
            self.revisions,
            self.llm_calls,
            self.llm_turns,
            self.prompt_tokens,
            self.completion_tokens,
            self.overrides,
        ];
        let mut out = [("", 0); 9];
        for (slot, (name, value)) in out.iter_mut().zip(Costs::NAMES.into_iter().zip(values)) {
            *slot = (name, value);
        }
        out
    }

    /// Adds what an evaluator spent since it was last asked.
    fn absorb(&mut self, ev: &mut Eval<'_>) {
        let (steps, previews) = ev.take_counts();
        self.steps += steps;
        self.previews += previews;
    }

    /// Counts the LLM calls of a finished episode's events.
    fn count_llm(&mut self, events: &[Event]) {
        let mut last_turn = None;
        for event in events {
            if let EventKind::LlmCall {
                prompt_tokens,
                completion_tokens,
                ..
            } = &event.kind
            {
                self.llm_calls += 1;
                self.prompt_tokens += prompt_tokens.unwrap_or(0);
                self.completion_tokens += completion_tokens.unwrap_or(0);
                if last_turn != Some(event.turn) {
                    self.llm_turns += 1;
                    last_turn = Some(event.turn);
                }
            }
        }
    }
}

/// The record of one episode.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EpisodeResult {
    /// Actions taken.
    pub turns: u32,
    /// How it ended.
    pub end: EndReason,
    /// The error that ended it, if one did.
    pub error: Option<RuntimeError>,
    /// The reason given by the `halt` that ended it, if one did.
    pub halt: Option<String>,
    /// The game's metrics at the end.
    pub metrics: BTreeMap<String, Value>,
    /// What the episode cost the runtime.
    pub costs: Costs,
    /// Every event, in order.
    #[serde(skip)]
    pub events: Vec<Event>,
    /// Every LLM call with its full accounting (latency and attempts included), in order.
    pub llm_calls: Vec<LlmCallLog>,
}

/// The harness side of one episode: the working snapshot and the events so far.
///
/// Cloning an agent is forking it: the copy shares every value with the original until one
/// of them changes it (snapshots and values are copy-on-write), and continues exactly as the
/// original would.
#[derive(Clone)]
pub struct Agent<'m> {
    m: &'m Machine,
    snap: Snapshot,
    turn: u32,
    seen_view: u64,
    events: Vec<Event>,
    llm: Option<&'m dyn LlmHost>,
    llm_calls: Vec<LlmCallLog>,
    costs: Costs,
    halted: Option<String>,
    /// Actions taken (turns whose action ran), counted by the episode drivers.
    actions: u32,
    /// Whether the agent records its trace. An untraced agent (a replay's, see
    /// [`EpisodeRun::fork_untraced`]) keeps only its LLM-call events, which its costs count.
    traced: bool,
    /// Spare evaluation frames, which each phase's evaluator hands on to the next so that a
    /// phase does not begin by allocating them afresh.
    frames: Vec<Vec<Value>>,
}

impl<'m> Agent<'m> {
    /// Starts an episode: evaluates the enabled layers' state initialisers in slot order against
    /// the game's initial view.
    pub fn start(m: &'m Machine, game: &dyn Game) -> RtResult<Agent<'m>> {
        let program = &m.program;
        let mut snap = Snapshot::new(
            vec![Value::Unit; program.state.len()],
            m.tunable_defaults.clone(),
            program.computed.len(),
        );
        let mut ev = Eval::new(m, game, (0, Phase::Start, None));
        for (i, slot) in program.state.iter().enumerate() {
            if m.is_enabled(slot.layer) {
                ev.retag(Phase::Start, Some(slot.layer));
                let value = ev.state_init(&snap, i)?;
                snap.set_state(i, value, m.state_dep(i));
            }
        }
        let mut costs = Costs::default();
        costs.absorb(&mut ev);
        let events = std::mem::take(&mut ev.events);
        Ok(Agent {
            m,
            snap,
            turn: 0,
            seen_view: game.view_version(),
            events,
            llm: m.llm_host(),
            llm_calls: Vec::new(),
            costs,
            halted: None,
            actions: 0,
            traced: true,
            frames: ev.take_frames(),
        })
    }

    /// Sends this episode's LLM calls to `host` instead of the machine's (`None`: no LLM, every
    /// call fails with `NotConfigured`). A host counts one episode's budget, so parallel runners
    /// give each episode its own.
    pub fn with_llm_host(mut self, host: Option<&'m dyn LlmHost>) -> Self {
        self.llm = host;
        self
    }

    /// What the episode has cost so far (the LLM counters are filled in by [`run_episode`]).
    pub fn costs(&self) -> Costs {
        self.costs
    }

    /// Takes the accounting of the LLM calls made since the last call.
    pub fn take_llm_calls(&mut self) -> Vec<LlmCallLog> {
        std::mem::take(&mut self.llm_calls)
    }

    /// The working snapshot.
    pub fn snapshot(&self) -> &Snapshot {
        &self.snap
    }

    /// The reason of the `halt` an action ran, once one has: the episode is over.
    pub fn halted(&self) -> Option<&str> {
        self.halted.as_deref()
    }

    /// The current turn (0 before the first).
    pub fn turn(&self) -> u32 {
        self.turn
    }

    /// Takes the events recorded since the last call.
    pub fn take_events(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.events)
    }

    /// The value of a computed value in the working snapshot, by name; `None` when there is no
    /// such value or its layer is disabled.
    pub fn computed(&mut self, game: &dyn Game, name: &str) -> Option<RtResult<Value>> {
        let id = self
            .m
            .program
            .computed
            .iter()
            .position(|c| c.name == name)?;
        let def = &self.m.program.computed[id];
        if !self.m.is_enabled(def.layer) {
            return None;
        }
        self.sync_view(game);
        let mut ev = self.eval(game, (self.turn, Phase::Reflect, Some(def.layer)));
        let value = ev.computed(
            &self.snap,
            harness_compiler::ir::ComputedId(id as u32),
            def.span,
        );
        self.keep_frames(&mut ev);
        Some(value)
    }

    /// Records the event `kind` builds, which an untraced agent (a replay's) never builds.
    fn emit(
        &mut self,
        phase: Phase,
        layer: Option<LayerId>,
        span: SrcSpan,
        kind: impl FnOnce() -> EventKind,
    ) {
        if !self.traced {
            return;
        }
        let kind = kind();
        let layer = layer.map(|l| self.m.layer_name(l));
        self.events.push(Event {
            turn: self.turn,
            phase,
            layer,
            span,
            kind,
        });
    }

    /// An evaluator for one phase of this agent's turn, tracing as the agent does, with the
    /// agent's spare frames (the phase gives them back with [`Agent::keep_frames`]).
    fn eval<'a>(&mut self, game: &'a dyn Game, tag: (u32, Phase, Option<LayerId>)) -> Eval<'a>
    where
        'm: 'a,
    {
        // Built where it is returned: an evaluator changed after it is built would be copied
        // out whole.
        let frames = std::mem::take(&mut self.frames);
        Eval::with_frames(self.m, game, tag, self.traced, frames)
    }

    /// Takes back the spare frames of a phase's evaluator for the next phase.
    fn keep_frames(&mut self, ev: &mut Eval<'_>) {
        self.frames = ev.take_frames();
    }

    /// A fork of the agent that records no trace from here on: its events are only the LLM
    /// calls so far, which its costs count at the end, so forking does not copy the trace.
    fn fork_untraced(&self) -> Agent<'m> {
        Agent {
            m: self.m,
            snap: self.snap.clone(),
            turn: self.turn,
            seen_view: self.seen_view,
            events: self
                .events
                .iter()
                .filter(|event| matches!(event.kind, EventKind::LlmCall { .. }))
                .cloned()
                .collect(),
            llm: self.llm,
            llm_calls: self.llm_calls.clone(),
            costs: self.costs,
            halted: self.halted.clone(),
            actions: self.actions,
            traced: false,
            frames: Vec::new(),
        }
    }

    fn record(&mut self, phase: Phase, log: StepLog) -> Vec<crate::game::Effect> {
        for change in log.changes {
            match change {
                Change::Patch {
                    layer,
                    field,
                    old,
                    new,
                    span,
                } => {
                    self.emit(phase, Some(layer), span, || EventKind::Patch {
                        field,
                        old,
                        new,
                    });
                }
                Change::Transition {
                    layer,
                    field,
                    from,
                    to,
                    span,
                } => {
                    self.emit(phase, Some(layer), span, || EventKind::Transition {
                        field,
                        from,
                        to,
                    });
                }
                Change::Revision {
                    layer,
                    tunable,
                    old,
                    new,
                    span,
                } => {
                    self.emit(phase, Some(layer), span, || EventKind::Revision {
                        tunable,
                        old,
                        new,
                    });
                }
            }
        }
        log.effects.into_iter().map(|(e, _)| e).collect()
    }

    /// Drops memoised values that read the game's view when the view has changed.
    fn sync_view(&mut self, game: &dyn Game) {
        let version = game.view_version();
        if version != self.seen_view {
            self.snap.invalidate(self.m.game_dep());
            self.seen_view = version;
        }
    }

    /// The observe phase: runs the handlers on each observation the game has sent.
    pub fn observe(&mut self, game: &mut dyn Game) -> RtResult<()> {
        let observations = game.take_observations();
        self.sync_view(game);
        let mut ev = self.eval(game, (self.turn, Phase::Observe, None));
        for obs in observations {
            self.emit(Phase::Observe, None, SrcSpan::default(), || {
                EventKind::Observation {
                    name: obs.name.to_string(),
                    args: obs.args.clone(),
                }
            });
            self.check_bounds(&obs.name, &obs.args)?;
            let mut log = StepLog::default();
            let result = ev.observe(&mut self.snap, &obs.name, &obs.args, &mut log);
            self.events.append(&mut ev.events);
            self.costs.absorb(&mut ev);
            self.record(Phase::Observe, log);
            result?;
        }
        self.keep_frames(&mut ev);
        Ok(())
    }

    /// Checks an observation against the bounds its game declares for its fields (which the
    /// checker's cost bound relies on): a field over its bound ends the phase with R0011, the
    /// game's fault, before any handler reads it.
    fn check_bounds(&self, name: &str, args: &[crate::value::Value]) -> RtResult<()> {
        let layers = &self.m.program.layers;
        let handlers = self.m.bounded_handlers.iter();
        let bounded = handlers.map(|&(layer, i)| &layers[layer].handlers[i]);
        for h in bounded.filter(|h| h.observation == name) {
            for (i, (arg, bound)) in args.iter().zip(&h.bounds).enumerate() {
                if let Some(max) = bound
                    && !arg.within(*max)
                {
                    let field = h.frame.locals.get(i).map_or("?", |l| l.name.as_str());
                    return Err(RuntimeError::new(
                        ErrorCode::Native,
                        h.span,
                        format!(
                            "the game sent `{name}` with its field `{field}` over the bound of \
                             {max} it declares (at most {max} elements per collection, and \
                             integers in 0..={max}); the game must keep its declared bounds"
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// The reflect and revise phases: evaluates every enabled layer's revise gates (recorded as
    /// gate events), then runs, bottom-up, the first revise block per layer whose gate held.
    pub fn reflect_and_revise(&mut self, game: &dyn Game) -> RtResult<()> {
        self.sync_view(game);
        let m = self.m;
        let mut ev = self.eval(game, (self.turn, Phase::Reflect, None));
        ev.llm = self.llm;
        let mut chosen = Vec::new();
        for &layer in &m.order {
            ev.retag(Phase::Reflect, Some(layer));
            let mut first = None;
            for (i, block) in m.program.layers[layer.index()].revise.iter().enumerate() {
                let held = ev.revise_gate(&self.snap, layer, i);
                self.events.append(&mut ev.events);
                let held = held?.as_bool().unwrap_or(false);
                self.emit(Phase::Reflect, Some(layer), block.cond.span, || {
                    EventKind::Gate {
                        gate: format!("revise #{i}"),
                        value: held,
                    }
                });
                if held && first.is_none() {
                    first = Some(i);
                }
            }
            if let Some(i) = first {
                chosen.push((layer, i));
            }
        }
        self.costs.absorb(&mut ev);
        for (layer, i) in chosen {
            ev.retag(Phase::Revise, Some(layer));
            // A revise block is atomic like an action: it runs on a copy that replaces the
            // working snapshot only when every statement succeeded.
            let mut work = self.snap.clone();
            let mut log = StepLog::default();
            let result = ev.revise(&mut work, layer, i, &mut log);
            self.events.append(&mut ev.events);
            self.llm_calls.append(&mut ev.llm_calls);
            self.costs.absorb(&mut ev);
            result?;
            self.snap = work;
            if log
                .changes
                .iter()
                .any(|change| matches!(change, Change::Revision { .. }))
            {
                self.costs.revisions += 1;
            }
            self.record(Phase::Revise, log);
        }
        self.keep_frames(&mut ev);
        Ok(())
    }

    /// The decide phase: tries the enabled layers top-down and their rules in order, and returns
    /// the first rule whose guards hold and whose action is available.
    pub fn decide(&mut self, game: &dyn Game) -> RtResult<Decision> {
        self.sync_view(game);
        let m = self.m;
        let mut ev = self.eval(game, (self.turn, Phase::Decide, None));
        let result = (|| {
            for &layer in m.order.iter().rev() {
                ev.retag(Phase::Decide, Some(layer));
                for (i, rule) in m.program.layers[layer.index()].decide.iter().enumerate() {
                    let Some(args) = ev.rule(&self.snap, layer, i)? else {
                        continue;
                    };
                    if ev.available(&self.snap, rule.action, &args)? {
                        return Ok(Decision {
                            layer,
                            rule: i,
                            action: rule.action,
                            args,
                            span: rule.span,
                        });
                    }
                }
            }
            let span = m
                .order
                .last()
                .map(|l| m.program.layers[l.index()].span)
                .unwrap_or_default();
            Err(RuntimeError::new(
                ErrorCode::NoDecision,
                span,
                format!(
                    "no decide rule matched in any enabled layer ({}); add an unconditional rule \
                     at the end of the lowest layer's `decide` block",
                    m.enabled_layers().join(", ")
                ),
            ))
        })();
        self.events.append(&mut ev.events);
        self.costs.absorb(&mut ev);
        self.keep_frames(&mut ev);
        let decision = result?;
        self.emit(Phase::Decide, Some(decision.layer), decision.span, || {
            EventKind::Chosen {
                action: m.action_name(decision.action).to_string(),
                args: decision.args.clone(),
                rule: decision.rule,
            }
        });
        Ok(decision)
    }

    /// A decision the caller makes instead of the decide phase: `action(args)`, which must be
    /// an action of an enabled layer, with the right number of arguments, available now.
    /// Records a `forced` event naming the `intervention`; [`Agent::act`] then runs it as it
    /// runs a chosen action. The outer error is a runtime error of the availability check; the
    /// inner one says why the decision cannot be forced.
    pub fn force(
        &mut self,
        game: &dyn Game,
        action: &str,
        args: Vec<Value>,
        intervention: &str,
    ) -> RtResult<Result<Decision, String>> {
        self.sync_view(game);
        let m = self.m;
        let Some(id) = m.program.actions.iter().position(|a| a.name == action) else {
            return Ok(Err(format!("the program has no action `{action}`")));
        };
        let def = &m.program.actions[id];
        if !m.is_enabled(def.layer) {
            return Ok(Err(format!(
                "action `{action}` belongs to layer `{}`, which is off",
                m.layer_name(def.layer)
            )));
        }
        if def.params.len() != args.len() {
            return Ok(Err(format!(
                "action `{action}` takes {} argument(s), not {}",
                def.params.len(),
                args.len()
            )));
        }
        let action_id = ActionId(id as u32);
        let mut ev = self.eval(game, (self.turn, Phase::Decide, Some(def.layer)));
        let available = ev.available(&self.snap, action_id, &args);
        self.events.append(&mut ev.events);
        self.costs.absorb(&mut ev);
        self.keep_frames(&mut ev);
        if !available? {
            return Ok(Err(format!("action `{action}` is not available now")));
        }
        self.emit(Phase::Decide, Some(def.layer), def.span, || {
            EventKind::Forced {
                action: action.to_string(),
                args: args.clone(),
                intervention: intervention.to_string(),
            }
        });
        Ok(Ok(Decision {
            layer: def.layer,
            rule: usize::MAX,
            action: action_id,
            args,
            span: def.span,
        }))
    }

    /// The act phase: runs the chosen action atomically and sends its effects to the game.
    pub fn act(&mut self, game: &mut dyn Game, decision: &Decision) -> RtResult<()> {
        self.sync_view(game);
        let m = self.m;
        let def = &m.program.actions[decision.action.index()];
        let mut ev = self.eval(game, (self.turn, Phase::Act, Some(def.layer)));
        ev.llm = self.llm;
        if m.order.first() != Some(&decision.layer) {
            self.costs.overrides += 1;
        }
        let step = ev.step(
            &mut self.snap,
            decision.action,
            &decision.args,
            decision.span,
        );
        self.events.append(&mut ev.events);
        self.llm_calls.append(&mut ev.llm_calls);
        self.costs.absorb(&mut ev);
        self.keep_frames(&mut ev);
        let log = match step? {
            Ok(log) => log,
            Err(error) => {
                self.emit(Phase::Act, Some(def.layer), error.span, || {
                    EventKind::Rejected {
                        action: def.name.clone(),
                        error: error.clone(),
                    }
                });
                return Err(error);
            }
        };
        let spans: Vec<SrcSpan> = log.effects.iter().map(|(_, span)| *span).collect();
        let halt = log.halt.clone();
        let effects = self.record(Phase::Act, log);
        for (effect, span) in effects.into_iter().zip(spans) {
            self.emit(Phase::Act, Some(def.layer), span, || EventKind::Effect {
                name: effect.name.to_string(),
                args: effect.args.clone(),
            });
            game.apply(&effect).map_err(|message| {
                RuntimeError::new(
                    ErrorCode::EffectRejected,
                    def.span,
                    format!("the game rejected `game.{}`: {message}", effect.name),
                )
            })?;
        }
        // The halt takes effect after the step's effects, so an action can report and stop.
        self.halted = halt;
        Ok(())
    }

    /// Starts the next turn, for a caller that runs the phases one by one (as
    /// [`Agent::run_turn`] does).
    pub fn next_turn(&mut self) {
        self.turn += 1;
    }

    /// One whole turn: observe, reflect, revise, decide, act. Returns false, without acting,
    /// when the game is over after the observe phase. After a turn whose action ran `halt`,
    /// [`Agent::halted`] says so and the caller ends the episode.
    pub fn run_turn(&mut self, game: &mut dyn Game) -> RtResult<bool> {
        self.next_turn();
        self.observe(game)?;
        if game.is_over() {
            return Ok(false);
        }
        self.reflect_and_revise(game)?;
        let decision = self.decide(game)?;
        self.act(game, &decision)?;
        Ok(true)
    }
}

/// How far a driver got: the episode ended, or it paused at a checkpoint.
enum Step {
    /// The turn has observed and revised; its decision is still to be made.
    Paused,
    /// The episode is over.
    Ended(EndReason),
}

/// One whole turn; the reason when the episode ended with it (or before it).
fn whole_turn(agent: &mut Agent<'_>, game: &mut dyn Game) -> RtResult<Option<EndReason>> {
    if agent.turn() >= agent.m.limits.max_turns {
        return Ok(Some(EndReason::TurnLimit));
    }
    if !agent.run_turn(game)? {
        return Ok(Some(EndReason::GameOver));
    }
    agent.actions += 1;
    Ok(agent.halted().map(|_| EndReason::Halted))
}

/// Runs whole turns until the episode ends.
fn run_out(agent: &mut Agent<'_>, game: &mut dyn Game) -> RtResult<EndReason> {
    loop {
        if let Some(end) = whole_turn(agent, game)? {
            return Ok(end);
        }
    }
}

/// Runs whole turns until turn `pause` has observed and revised (before its decision), or the
/// episode ends first.
fn advance_to(agent: &mut Agent<'_>, game: &mut dyn Game, pause: u32) -> RtResult<Step> {
    while agent.turn() + 1 < pause {
        if let Some(end) = whole_turn(agent, game)? {
            return Ok(Step::Ended(end));
        }
    }
    if agent.turn() >= agent.m.limits.max_turns {
        return Ok(Step::Ended(EndReason::TurnLimit));
    }
    agent.next_turn();
    agent.observe(game)?;
    if game.is_over() {
        return Ok(Step::Ended(EndReason::GameOver));
    }
    agent.reflect_and_revise(game)?;
    Ok(Step::Paused)
}

/// Finishes a paused turn with `decision` (or the decide phase's, when `None`) and runs on
/// until the episode ends.
fn resume(
    agent: &mut Agent<'_>,
    game: &mut dyn Game,
    decision: Option<Decision>,
) -> RtResult<EndReason> {
    let decision = match decision {
        Some(decision) => decision,
        None => agent.decide(game)?,
    };
    agent.act(game, &decision)?;
    agent.actions += 1;
    if agent.halted().is_some() {
        return Ok(EndReason::Halted);
    }
    run_out(agent, game)
}

/// The record of an episode whose driver stopped with `outcome`.
fn conclude(
    agent: Option<&mut Agent<'_>>,
    game: &dyn Game,
    outcome: RtResult<EndReason>,
) -> EpisodeResult {
    let (mut events, llm_calls, mut costs, turns, last_turn, halt) = match agent {
        Some(agent) => (
            agent.take_events(),
            agent.take_llm_calls(),
            agent.costs(),
            agent.actions,
            agent.turn(),
            agent.halted().map(str::to_owned),
        ),
        None => (Vec::new(), Vec::new(), Costs::default(), 0, 0, None),
    };
    let (end, error) = match outcome {
        Ok(end) => (end, None),
        Err(error) => {
            events.push(Event {
                turn: last_turn,
                phase: Phase::End,
                layer: None,
                span: error.span,
                kind: EventKind::Error {
                    error: error.clone(),
                },
            });
            (EndReason::Error, Some(error))
        }
    };
    let metrics = game.metrics();
    events.push(Event {
        turn: last_turn,
        phase: Phase::End,
        layer: None,
        span: SrcSpan::default(),
        kind: EventKind::EpisodeEnd {
            reason: end.name().to_string(),
            metrics: metrics.clone(),
            halt: halt.clone(),
        },
    });
    costs.turns = u64::from(turns);
    costs.count_llm(&events);
    EpisodeResult {
        turns,
        end,
        error,
        halt,
        metrics,
        costs,
        events,
        llm_calls,
    }
}

/// Runs one episode of `machine` against `game` until the game ends, the turn limit is reached
/// or a runtime error occurs. LLM calls go to the machine's host, if it has one.
pub fn run_episode(machine: &Machine, game: &mut dyn Game) -> EpisodeResult {
    run_episode_with_llm(machine, game, machine.llm_host())
}

/// [`run_episode`] with this episode's own LLM host (`None`: no LLM).
pub fn run_episode_with_llm(
    machine: &Machine,
    game: &mut dyn Game,
    llm: Option<&dyn LlmHost>,
) -> EpisodeResult {
    game.provision(&machine.provided_effects());
    match Agent::start(machine, game) {
        Ok(agent) => {
            let mut agent = agent.with_llm_host(llm);
            let outcome = run_out(&mut agent, game);
            conclude(Some(&mut agent), game, outcome)
        }
        Err(error) => conclude(None, game, Err(error)),
    }
}

/// Where an [`EpisodeRun`] stands.
#[derive(Clone)]
enum Stage {
    /// Between turns.
    Running,
    /// Inside a turn that has observed and revised, before its decision.
    Paused,
    /// Inside a paused turn whose decision was made (decided or forced), before its action.
    Decided(Decision),
    /// Over.
    Ended(RtResult<EndReason>),
}

/// An episode that owns its game and can stop at a checkpoint, be forked there and be given a
/// decision: the unit of counterfactual replay.
///
/// A checkpoint is turn `t` after its observe, reflect and revise phases and before its
/// decision ([`EpisodeRun::pause_at`]). [`EpisodeRun::fork`] copies agent and game there, so
/// that the copy continues exactly as the original would; [`EpisodeRun::reseed`] switches the
/// game's later draws to common random numbers, so that two reseeded branches differ only
/// where their decisions differ; [`EpisodeRun::force`] makes the checkpoint's decision.
/// [`EpisodeRun::finish`] runs to the end and returns the whole episode's record, prefix
/// included, exactly as [`run_episode_with_llm`] would have produced it for the same decisions.
pub struct EpisodeRun<'m> {
    /// The agent, or the runtime error that stopped it from starting.
    agent: Result<Agent<'m>, RuntimeError>,
    game: Box<dyn Game>,
    stage: Stage,
}

impl<'m> EpisodeRun<'m> {
    /// Starts an episode of `machine` on `game` with this LLM host (`None`: no LLM).
    pub fn start(
        machine: &'m Machine,
        mut game: Box<dyn Game>,
        llm: Option<&'m dyn LlmHost>,
    ) -> EpisodeRun<'m> {
        game.provision(&machine.provided_effects());
        match Agent::start(machine, game.as_ref()) {
            Ok(agent) => EpisodeRun {
                agent: Ok(agent.with_llm_host(llm)),
                game,
                stage: Stage::Running,
            },
            Err(error) => EpisodeRun {
                agent: Err(error),
                game,
                stage: Stage::Running,
            },
        }
    }

    /// Runs to the checkpoint of turn `turn` (from 1). True when the episode is paused there;
    /// false when it ended first or is already past it (a checkpoint whose decision was made
    /// counts as past).
    pub fn pause_at(&mut self, turn: u32) -> bool {
        let Ok(agent) = &mut self.agent else {
            return false;
        };
        match &self.stage {
            Stage::Running if agent.turn() < turn => {
                match advance_to(agent, self.game.as_mut(), turn) {
                    Ok(Step::Paused) => {
                        self.stage = Stage::Paused;
                        true
                    }
                    Ok(Step::Ended(end)) => {
                        self.stage = Stage::Ended(Ok(end));
                        false
                    }
                    Err(error) => {
                        self.stage = Stage::Ended(Err(error));
                        false
                    }
                }
            }
            Stage::Paused => agent.turn() == turn,
            _ => false,
        }
    }

    /// The current turn (0 before the first).
    pub fn turn(&self) -> u32 {
        self.agent.as_ref().map_or(0, Agent::turn)
    }

    /// True at a checkpoint whose decision is still to be made.
    pub fn is_paused(&self) -> bool {
        matches!(self.stage, Stage::Paused)
    }

    /// The value of a computed value now, by name (see [`Agent::computed`]).
    pub fn computed(&mut self, name: &str) -> Option<RtResult<Value>> {
        let agent = self.agent.as_mut().ok()?;
        agent.computed(self.game.as_ref(), name)
    }

    /// What the episode has cost the runtime so far (its LLM counters are counted when it
    /// finishes): at a checkpoint, the prefix's cost, which a replay's cost is counted beyond.
    pub fn costs(&self) -> Costs {
        self.agent
            .as_ref()
            .map_or_else(|_| Costs::default(), Agent::costs)
    }

    /// The game's metrics now (see [`Game::metrics`]).
    pub fn metrics(&self) -> BTreeMap<String, Value> {
        self.game.metrics()
    }

    /// A copy of the episode that continues exactly as this one would; `None` when the game
    /// cannot be forked (see [`Game::fork`]).
    pub fn fork(&self) -> Option<EpisodeRun<'m>> {
        Some(EpisodeRun {
            agent: self.agent.clone(),
            game: self.game.fork()?,
            stage: self.stage.clone(),
        })
    }

    /// [`EpisodeRun::fork`] for a replay whose outcome and costs alone are read: the fork
    /// records no trace from here on, and its result's events are only the LLM calls (which
    /// its costs count) and the end (with its error, if one ends it). It continues exactly as a
    /// traced fork would, with the same metrics, costs and LLM calls.
    pub fn fork_untraced(&self) -> Option<EpisodeRun<'m>> {
        Some(EpisodeRun {
            agent: self
                .agent
                .as_ref()
                .map(Agent::fork_untraced)
                .map_err(Clone::clone),
            game: self.game.fork()?,
            stage: self.stage.clone(),
        })
    }

    /// Switches the game's later draws to common random numbers under `salt` (see
    /// [`Game::reseed`]); false when the game cannot.
    pub fn reseed(&mut self, salt: u64) -> bool {
        self.game.reseed(salt)
    }

    /// At a checkpoint, runs the decide phase and returns its decision, which the episode then
    /// takes; `None` when the episode is not paused. A runtime error ends the episode.
    pub fn decide(&mut self) -> Option<(String, Vec<Value>)> {
        let Stage::Paused = self.stage else {
            return None;
        };
        let agent = self.agent.as_mut().ok()?;
        match agent.decide(self.game.as_ref()) {
            Ok(decision) => {
                let named = (
                    agent.m.action_name(decision.action).to_string(),
                    decision.args.clone(),
                );
                self.stage = Stage::Decided(decision);
                Some(named)
            }
            Err(error) => {
                self.stage = Stage::Ended(Err(error));
                None
            }
        }
    }

    /// At a checkpoint, makes `action(args)` the turn's decision instead of the decide phase's,
    /// recording a `forced` event that names `intervention` (see [`Agent::force`]). An error
    /// says why it cannot be forced and leaves the checkpoint as it was; a runtime error of the
    /// availability check ends the episode.
    pub fn force(
        &mut self,
        action: &str,
        args: Vec<Value>,
        intervention: &str,
    ) -> Result<(), String> {
        let Stage::Paused = self.stage else {
            return Err("the episode is not at a checkpoint".into());
        };
        let Ok(agent) = self.agent.as_mut() else {
            return Err("the episode did not start".into());
        };
        match agent.force(self.game.as_ref(), action, args, intervention) {
            Ok(Ok(decision)) => {
                self.stage = Stage::Decided(decision);
                Ok(())
            }
            Ok(Err(message)) => Err(message),
            Err(error) => {
                let message = error.to_string();
                self.stage = Stage::Ended(Err(error));
                Err(message)
            }
        }
    }

    /// Runs the episode to its end and returns its record: every event from the start.
    pub fn finish(mut self) -> EpisodeResult {
        let stage = std::mem::replace(&mut self.stage, Stage::Running);
        let agent = match &mut self.agent {
            Ok(agent) => agent,
            Err(error) => return conclude(None, self.game.as_ref(), Err(error.clone())),
        };
        let game = self.game.as_mut();
        let outcome = match stage {
            Stage::Ended(outcome) => outcome,
            Stage::Running => run_out(agent, game),
            Stage::Paused => resume(agent, game, None),
            Stage::Decided(decision) => resume(agent, game, Some(decision)),
        };
        conclude(Some(agent), self.game.as_ref(), outcome)
    }
}
