//! A program prepared for running: layer switches resolved, configuration, constants and
//! tunable defaults evaluated.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use harness_compiler::ir::{ActionId, EnumId, LayerId, Model, Program, SrcSpan};
use harness_compiler::types::Ty;

use crate::compiled::{Compiled, Node, NodeBranch};
use crate::error::{ErrorCode, RtResult, RuntimeError};
use crate::event::Phase;
use crate::game::{Effect, Game, Observation};
use crate::interp::Eval;
use crate::llm::LlmHost;
use crate::native::Natives;
use crate::ops;
use crate::snapshot::Snapshot;
use crate::value::{Value, VariantValue};

/// Which layers run and which parameters are set: `--layers`, `--without` and `--set`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Switches {
    /// The enabled layers; `None` enables every layer.
    pub layers: Option<Vec<String>>,
    /// Layers switched off.
    pub without: Vec<String>,
    /// `name=value` settings of config parameters or tunable defaults, in order.
    pub set: Vec<(String, String)>,
    /// Settings given as JSON data (`--set-json name=FILE`), for values of structured types
    /// (lists, maps, records) that a `name=value` text cannot spell.
    pub set_json: Vec<(String, serde_json::Value)>,
}

/// Limits that keep a run finite whatever the program does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Evaluation steps allowed per turn (the second line of defence behind totality).
    pub steps_per_turn: u64,
    /// Turns after which the episode stops even if the game has not ended.
    pub max_turns: u32,
    /// Bytes of collections and strings a turn may build (lists, sets, maps, strings made by
    /// builtins, literals and operators), summed over the turn: the bound that keeps a turn from
    /// exhausting the heap (see [`crate::ErrorCode::MemoryExhausted`]).
    pub memory_per_turn: u64,
}

/// The default per-turn step budget: evaluation steps plus the elements builtins walk and build.
/// It is the checker's default cost limit, so a harness that checks never meets R0009 on it.
pub const DEFAULT_STEPS_PER_TURN: u64 = harness_compiler::cost::DEFAULT_LIMIT;

/// The default per-turn memory budget, 256 MiB.
pub const DEFAULT_MEMORY_PER_TURN: u64 = 256 << 20;

impl Default for Limits {
    fn default() -> Self {
        Self {
            steps_per_turn: DEFAULT_STEPS_PER_TURN,
            max_turns: harness_compiler::cost::TURN_CAP as u32,
            memory_per_turn: DEFAULT_MEMORY_PER_TURN,
        }
    }
}

/// A program ready to run: everything that does not change during an episode.
pub struct Machine {
    pub(crate) program: Arc<Program>,
    /// The program as the evaluator runs it.
    pub(crate) compiled: Compiled,
    pub(crate) enabled: Vec<bool>,
    /// The enabled layers, bottom-up (dependency order).
    pub(crate) order: Vec<LayerId>,
    pub(crate) config: Vec<Value>,
    pub(crate) consts: Vec<Value>,
    pub(crate) tunable_defaults: Vec<Value>,
    pub(crate) budget: u64,
    pub(crate) limits: Limits,
    enums: Vec<(Arc<str>, Vec<Arc<str>>)>,
    /// The payload-free variants, built once: evaluating `Dir.Left` then copies a pointer.
    unit_variants: Vec<Vec<Value>>,
    /// The actions' names, shared with the previews that name them.
    pub(crate) action_names: Vec<Arc<str>>,
    /// The handlers, as (layer, handler) positions in the program, that bound an observation's
    /// fields: the only ones an observation is checked against.
    pub(crate) bounded_handlers: Vec<(usize, usize)>,
    models: BTreeMap<String, (LayerId, usize)>,
    llm: Option<Arc<dyn LlmHost>>,
}

/// A game that has no view: used while constants and defaults are evaluated, which cannot read
/// the game.
struct NoGame;

impl Game for NoGame {
    fn query(&self, name: &str, _: &[Value]) -> Result<Value, String> {
        Err(format!(
            "`game.{name}` cannot be read before the episode starts"
        ))
    }
    fn view_version(&self) -> u64 {
        0
    }
    fn apply(&mut self, _: &Effect) -> Result<(), String> {
        Err("no game".into())
    }
    fn take_observations(&mut self) -> Vec<Observation> {
        Vec::new()
    }
    fn is_over(&self) -> bool {
        true
    }
    fn metrics(&self) -> BTreeMap<String, Value> {
        BTreeMap::new()
    }
}

fn switch_error(span: SrcSpan, message: String) -> RuntimeError {
    RuntimeError::new(ErrorCode::BadSwitch, span, message)
}

impl Machine {
    /// Prepares `program` with `natives` (builtins, the game's queries and opaque methods) and
    /// the layer switches. Fails when a switch names an unknown layer or parameter, a `--set`
    /// value does not parse or lies outside its range, or a default cannot be evaluated.
    pub fn new(
        program: Arc<Program>,
        natives: Natives,
        switches: &Switches,
        limits: Limits,
    ) -> RtResult<Machine> {
        let layer_index = |name: &str| {
            program
                .layers
                .iter()
                .position(|l| l.name == name)
                .ok_or_else(|| {
                    let known: Vec<_> = program.layers.iter().map(|l| l.name.as_str()).collect();
                    switch_error(
                        SrcSpan::default(),
                        format!(
                            "there is no layer `{name}`; the layers are {}",
                            known.join(", ")
                        ),
                    )
                })
        };
        let mut enabled = vec![switches.layers.is_none(); program.layers.len()];
        for name in switches.layers.iter().flatten() {
            enabled[layer_index(name)?] = true;
        }
        for name in &switches.without {
            enabled[layer_index(name)?] = false;
        }
        // Layers come in dependency order, so one pass disables every layer that needs a
        // disabled one, transitively.
        for (i, layer) in program.layers.iter().enumerate() {
            if layer.below.iter().any(|l| !enabled[l.index()]) {
                enabled[i] = false;
            }
        }
        let order: Vec<LayerId> = (0..program.layers.len())
            .filter(|&i| enabled[i])
            .map(|i| LayerId(i as u32))
            .collect();
        if order.is_empty() && !program.layers.is_empty() {
            return Err(switch_error(
                SrcSpan::default(),
                "the switches leave no layer enabled (a layer is off when a layer it needs is off)"
                    .to_string(),
            ));
        }
        let mut models = BTreeMap::new();
        for &layer in &order {
            // Later (higher) layers overwrite: the highest enabled layer's model wins.
            for (i, model) in program.layers[layer.index()].models.iter().enumerate() {
                models.insert(model.effect.clone(), (layer, i));
            }
        }
        let enums: Vec<(Arc<str>, Vec<Arc<str>>)> = program
            .enums
            .iter()
            .map(|e| {
                (
                    Arc::from(e.name.as_str()),
                    e.variants
                        .iter()
                        .map(|(v, _)| Arc::from(v.as_str()))
                        .collect(),
                )
            })
            .collect();
        let unit_variants = enums
            .iter()
            .map(|(enum_name, variants)| {
                variants
                    .iter()
                    .enumerate()
                    .map(|(index, name)| {
                        Value::Variant(Arc::new(VariantValue {
                            enum_name: enum_name.clone(),
                            index: index as u32,
                            name: name.clone(),
                            payload: Vec::new(),
                        }))
                    })
                    .collect()
            })
            .collect();
        let compiled = Compiled::new(&program, &natives);
        let bounded_handlers = program
            .layers
            .iter()
            .enumerate()
            .flat_map(|(l, layer)| {
                let handlers = layer.handlers.iter().enumerate();
                handlers
                    .filter(|(_, h)| h.bounds.iter().any(Option::is_some))
                    .map(move |(i, _)| (l, i))
            })
            .collect();
        let mut machine = Machine {
            unit_variants,
            bounded_handlers,
            action_names: program
                .actions
                .iter()
                .map(|a| Arc::from(a.name.as_str()))
                .collect(),
            program: program.clone(),
            compiled,
            enabled,
            order,
            config: Vec::new(),
            consts: Vec::new(),
            tunable_defaults: Vec::new(),
            budget: limits.steps_per_turn,
            limits,
            enums,
            models,
            llm: None,
        };
        let empty = Snapshot::new(Vec::new(), Vec::new(), 0);
        for (def, body) in program.consts.iter().zip(&machine.compiled.consts) {
            let value = Eval::new(&machine, &NoGame, (0, Phase::Start, None)).body_value(
                &empty,
                body,
                def.value.frame.locals.len(),
            )?;
            machine.consts.push(value);
        }
        /// A setting's value as given: text to parse, or JSON data to convert.
        enum Given<'a> {
            Text(&'a str),
            Json(&'a serde_json::Value),
        }
        let mut settings: BTreeMap<&str, Given<'_>> = BTreeMap::new();
        let given = switches
            .set
            .iter()
            .map(|(name, text)| (name, Given::Text(text)))
            .chain(
                switches
                    .set_json
                    .iter()
                    .map(|(name, json)| (name, Given::Json(json))),
            );
        for (name, value) in given {
            let known = program
                .config
                .iter()
                .chain(&program.tunables)
                .any(|p| &p.name == name);
            if !known {
                let names: Vec<&str> = program
                    .config
                    .iter()
                    .chain(&program.tunables)
                    .map(|p| p.name.as_str())
                    .collect();
                let hint =
                    match harness_compiler::diagnostic::did_you_mean(name, names.iter().copied()) {
                        Some(suggestion) => format!("; {suggestion}"),
                        None => format!("; the parameters are {}", names.join(", ")),
                    };
                return Err(switch_error(
                    SrcSpan::default(),
                    format!(
                        "`--set {name}=...`: there is no config parameter or tunable `{name}`{hint}"
                    ),
                ));
            }
            settings.insert(name, value);
        }
        // The defaults enabled layers set for lower layers' tunables; where two do, the highest
        // enabled layer wins, as for effect models.
        let mut layer_defaults: BTreeMap<usize, (&harness_compiler::ir::Body, &Node)> =
            BTreeMap::new();
        for &layer in &machine.order {
            let compiled = &machine.compiled.layers[layer.index()].tunable_defaults;
            for (it, node) in program.layers[layer.index()]
                .tunable_defaults
                .iter()
                .zip(compiled)
            {
                layer_defaults.insert(it.tunable.index(), (&it.value, node));
            }
        }
        for params in [&program.config, &program.tunables] {
            let is_config = std::ptr::eq(params, &program.config);
            let mut values = Vec::new();
            for (index, def) in params.iter().enumerate() {
                let value = match settings.get(def.name.as_str()) {
                    Some(Given::Text(text)) => {
                        machine.parse_setting(&def.ty, text).ok_or_else(|| {
                            switch_error(
                                def.span,
                                format!(
                                    "`--set {}={text}`: not a value of type {}",
                                    def.name, def.ty
                                ),
                            )
                        })?
                    }
                    Some(Given::Json(json)) => {
                        machine.json_setting(&def.ty, json).map_err(|why| {
                            switch_error(
                                def.span,
                                format!(
                                    "`--set-json {}`: not a value of type {}: {why}",
                                    def.name, def.ty
                                ),
                            )
                        })?
                    }
                    None => {
                        let (default, node) = match layer_defaults.get(&index) {
                            Some(&it) if !is_config => it,
                            _ if is_config => (&def.default, &machine.compiled.config[index]),
                            _ => (&def.default, &machine.compiled.tunables[index]),
                        };
                        Eval::new(&machine, &NoGame, (0, Phase::Start, None)).body_value(
                            &empty,
                            node,
                            default.frame.locals.len(),
                        )?
                    }
                };
                if let Some(range) = &def.range
                    && !ops::in_range(&value, range)
                {
                    let what = match &value {
                        Value::List(v) => format!("has {} elements, which lies", v.len()),
                        Value::Set(v) => format!("has {} elements, which lies", v.len()),
                        Value::Map(v) => format!("has {} entries, which lies", v.len()),
                        _ => format!("= {value} lies"),
                    };
                    return Err(switch_error(
                        def.span,
                        format!(
                            "`{}` {what} outside its range {}",
                            def.name,
                            ops::range_text(range)
                        ),
                    ));
                }
                values.push(value);
            }
            if is_config {
                machine.config = values;
            } else {
                machine.tunable_defaults = values;
            }
        }
        Ok(machine)
    }

    /// Converts JSON data to a value of type `ty`: numbers, booleans and strings as themselves,
    /// enum variants as `"Variant"` or `"Enum.Variant"`, lists and sets as arrays, options as
    /// `null` or the value, records as objects with every field, and maps as objects (for
    /// `String` keys) or arrays of `[key, value]` pairs. The error says where the data is wrong.
    fn json_setting(&self, ty: &Ty, json: &serde_json::Value) -> Result<Value, String> {
        use serde_json::Value as J;
        let wrong = |what: &str| Err(format!("expected {what}, found `{json}`"));
        match (ty, json) {
            (Ty::Int, J::Number(n)) => match n.as_i64() {
                Some(i) => Ok(Value::Int(i)),
                None => wrong("an integer"),
            },
            (Ty::Float, J::Number(n)) => match n.as_f64().and_then(Value::float) {
                Some(value) => Ok(value),
                None => wrong("a finite number"),
            },
            (Ty::Bool, J::Bool(b)) => Ok(Value::Bool(*b)),
            (Ty::String, J::String(text)) => Ok(Value::str(text)),
            (Ty::Enum(_), J::String(text)) => self
                .parse_setting(ty, text)
                .ok_or_else(|| format!("`{text}` is not a variant of {ty}")),
            (Ty::Option(_), J::Null) => Ok(Value::none()),
            (Ty::Option(inner), _) => Ok(Value::some(self.json_setting(inner, json)?)),
            (Ty::List(inner), J::Array(items)) => Ok(Value::list(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| {
                        self.json_setting(inner, item)
                            .map_err(|why| format!("at [{i}]: {why}"))
                    })
                    .collect::<Result<_, _>>()?,
            )),
            (Ty::Set(inner), J::Array(items)) => {
                let mut set = std::collections::BTreeSet::new();
                for (i, item) in items.iter().enumerate() {
                    set.insert(
                        self.json_setting(inner, item)
                            .map_err(|why| format!("at [{i}]: {why}"))?,
                    );
                }
                Ok(Value::Set(Arc::new(set)))
            }
            (Ty::Map(key, value), J::Object(fields)) if **key == Ty::String => {
                let mut map = BTreeMap::new();
                for (name, item) in fields {
                    map.insert(
                        Value::str(name),
                        self.json_setting(value, item)
                            .map_err(|why| format!("at key `{name}`: {why}"))?,
                    );
                }
                Ok(Value::Map(Arc::new(map)))
            }
            (Ty::Map(key, value), J::Array(pairs)) => {
                let mut map = BTreeMap::new();
                for (i, pair) in pairs.iter().enumerate() {
                    let J::Array(kv) = pair else {
                        return Err(format!("at [{i}]: expected a `[key, value]` pair"));
                    };
                    let [k, v] = kv.as_slice() else {
                        return Err(format!("at [{i}]: expected a `[key, value]` pair"));
                    };
                    let k = self
                        .json_setting(key, k)
                        .map_err(|why| format!("at [{i}] key: {why}"))?;
                    let v = self
                        .json_setting(value, v)
                        .map_err(|why| format!("at [{i}] value: {why}"))?;
                    map.insert(k, v);
                }
                Ok(Value::Map(Arc::new(map)))
            }
            (Ty::Record(record), J::Object(fields)) => {
                if let Some(extra) = fields
                    .keys()
                    .find(|name| !record.fields.iter().any(|(field, _)| field == *name))
                {
                    return Err(format!("the record has no field `{extra}`"));
                }
                let values = record
                    .fields
                    .iter()
                    .map(|(name, field_ty)| match fields.get(name) {
                        Some(item) => self
                            .json_setting(field_ty, item)
                            .map_err(|why| format!("in field `{name}`: {why}")),
                        None if matches!(field_ty, Ty::Option(_)) => Ok(Value::none()),
                        None => Err(format!("the field `{name}` is missing")),
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(Value::Record(Arc::new(crate::value::RecordValue {
                    ty: record.clone(),
                    values,
                })))
            }
            _ => Err(format!("expected a value of type {ty}, found `{json}`")),
        }
    }

    /// Parses a `--set` value of type `ty`.
    fn parse_setting(&self, ty: &Ty, text: &str) -> Option<Value> {
        match ty {
            Ty::Int => text.replace('_', "").parse().ok().map(Value::Int),
            Ty::Float => text.parse().ok().and_then(Value::float),
            Ty::Bool => text.parse().ok().map(Value::Bool),
            Ty::String => Some(Value::str(text)),
            Ty::Enum(name) => {
                let e = self.program.enums.iter().position(|e| *e.name == **name)?;
                let variant = text.rsplit('.').next()?;
                let index = self.program.enums[e]
                    .variants
                    .iter()
                    .position(|(v, p)| v == variant && p.is_empty())?;
                self.variant(
                    EnumId(e as u32),
                    index as u32,
                    Vec::new(),
                    SrcSpan::default(),
                )
                .ok()
            }
            _ => None,
        }
    }

    /// Sends the LLM calls of every episode run with [`crate::run_episode`] to `host`. Without
    /// a host, every call fails with `NotConfigured` and no IO happens. A host with a per-game
    /// budget serves one episode at a time; for parallel episodes, use
    /// [`crate::run_episode_with_llm`] with a host per episode.
    pub fn with_llm_host(mut self, host: Arc<dyn LlmHost>) -> Self {
        self.llm = Some(host);
        self
    }

    /// The machine's LLM host, if it has one.
    pub fn llm_host(&self) -> Option<&dyn LlmHost> {
        self.llm.as_deref()
    }

    /// The program.
    pub fn program(&self) -> &Program {
        &self.program
    }

    /// True when `layer` runs under the switches.
    pub fn is_enabled(&self, layer: LayerId) -> bool {
        self.enabled.get(layer.index()).copied().unwrap_or(false)
    }

    /// The enabled layers' names, bottom-up.
    pub fn enabled_layers(&self) -> Vec<String> {
        self.order.iter().map(|&l| self.layer_name(l)).collect()
    }

    /// The gated game effects the enabled layers provide: the union of their `uses`.
    pub fn provided_effects(&self) -> BTreeSet<String> {
        self.order
            .iter()
            .filter_map(|l| self.program.layers.get(l.index()))
            .flat_map(|layer| layer.uses.iter().cloned())
            .collect()
    }

    /// The values of the config parameters, by name, after `--set`.
    pub fn config_values(&self) -> BTreeMap<String, Value> {
        self.program
            .config
            .iter()
            .map(|p| p.name.clone())
            .zip(self.config.iter().cloned())
            .collect()
    }

    /// Every config parameter and tunable default in effect (after `--set`), as name and
    /// value, in declaration order: config first, then tunables.
    pub fn effective_settings(&self) -> Vec<(String, Value)> {
        self.program
            .config
            .iter()
            .zip(&self.config)
            .chain(self.program.tunables.iter().zip(&self.tunable_defaults))
            .map(|(param, value)| (param.name.clone(), value.clone()))
            .collect()
    }

    /// The limits.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    pub(crate) fn layer_name(&self, layer: LayerId) -> String {
        self.program
            .layers
            .get(layer.index())
            .map(|l| l.name.clone())
            .unwrap_or_default()
    }

    pub(crate) fn action_name(&self, action: ActionId) -> &str {
        self.program
            .actions
            .get(action.index())
            .map_or("?", |a| a.name.as_str())
    }

    /// The model of `effect` in the highest enabled layer that declares one, with its compiled
    /// branches.
    pub(crate) fn model(&self, effect: &str) -> Option<(&Model, &[NodeBranch])> {
        let &(layer, i) = self.models.get(effect)?;
        let model = self.program.layers[layer.index()].models.get(i)?;
        let branches = self.compiled.layers[layer.index()].models.get(i)?;
        Some((model, branches))
    }

    /// The dependency bit of state slot `i`.
    pub(crate) fn state_dep(&self, i: usize) -> usize {
        i
    }

    /// The dependency bit of tunable `i`.
    pub(crate) fn tunable_dep(&self, i: usize) -> usize {
        self.program.state.len() + i
    }

    /// The dependency bit of the game's view.
    pub(crate) fn game_dep(&self) -> usize {
        self.program.state.len() + self.program.tunables.len()
    }

    pub(crate) fn variant(
        &self,
        enum_id: EnumId,
        index: u32,
        payload: Vec<Value>,
        span: SrcSpan,
    ) -> RtResult<Value> {
        if payload.is_empty()
            && let Some(v) = self
                .unit_variants
                .get(enum_id.index())
                .and_then(|vs| vs.get(index as usize))
        {
            return Ok(v.clone());
        }
        let (enum_name, variants) = self.enums.get(enum_id.index()).ok_or_else(|| {
            RuntimeError::new(ErrorCode::Internal, span, "internal error: unknown enum")
        })?;
        let name = variants.get(index as usize).cloned().ok_or_else(|| {
            RuntimeError::new(ErrorCode::Internal, span, "internal error: unknown variant")
        })?;
        Ok(Value::Variant(Arc::new(VariantValue {
            enum_name: enum_name.clone(),
            index,
            name,
            payload,
        })))
    }
}
