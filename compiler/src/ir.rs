//! The checked program, lowered to the form the interpreter runs.
//!
//! A [`Program`] is produced only from a workspace without errors, so every reference in it is
//! resolved and every expression is well typed: the interpreter never looks a name up and never
//! meets a type mismatch. What it can meet are the runtime errors the language defines (integer
//! overflow, division by zero, an index out of range, `None` unwrapped, a NaN), which it reports
//! with the [`SrcSpan`] of the node that failed.
//!
//! # Shape
//!
//! Definitions live in flat arenas on [`Program`] and refer to each other by index ([`StateId`],
//! [`ComputedId`], [`FnId`]...). Each definition records the [`LayerId`] that owns it, and each
//! [`Layer`] lists the definitions it owns, so switching a layer off is a matter of skipping its
//! lists. Layers are stored in dependency order: a layer comes after every layer it needs.
//!
//! # Frames and locals
//!
//! Every body (a `fn`, a `computed`, an action, a handler, a model, a decide rule, a revise block,
//! a state initialiser...) owns a [`Frame`]: the list of its local variables. A [`LocalId`] is an
//! index into the frame of the body being evaluated. Parameters come first, in declaration order;
//! then every `let`, pattern binding and closure parameter in the body gets its own slot, so an
//! interpreter can allocate `frame.locals.len()` value slots once per call. Closures never escape
//! the builtin call they are passed to, so they capture nothing: their body reads the enclosing
//! frame directly, and their parameters are slots of that same frame.
//!
//! # Evaluation order
//!
//! Expressions are evaluated left to right, operands before operators, the receiver of a method
//! before its arguments, record literal fields in declaration order of the record type. `and` and
//! `or` short-circuit. Guards are evaluated left to right and stop at the first that fails.
//!
//! # Semantics the interpreter implements
//!
//! - **Computed values are never stale.** A read of a computed value ([`ExprKind::Member`] of a
//!   [`MemberRef::Computed`]) returns the value of its body in the current working snapshot,
//!   including patches already applied by the running step. Memoise with dependency tracking; do
//!   not recompute on every read.
//! - **Actions are atomic.** Running an action: bind the arguments; evaluate `available` (false:
//!   the action is not available, which is an error if it was chosen); evaluate every `requires`
//!   in order (the first false one fails the step with its [`ErrorId`]); then run the body. Patches
//!   apply to the working snapshot immediately, so later statements and computed values see them.
//!   If anything fails, the whole step is discarded: no patch applies and no effect is sent.
//!   Emitted effects are collected and sent to the game, in order, after the step commits.
//! - **Layer switches.** A disabled layer contributes no state, computed values, actions,
//!   handlers, models, decide rules or revise blocks; its tunables keep their defaults; the layers
//!   that need it are disabled too. The checker guarantees that no enabled layer refers to a
//!   disabled one.
//! - **Turn phases.** `observe`: for each observation from the game, the handlers for it run in
//!   layer order (bottom-up). `reflect`/`revise`: for each enabled layer (bottom-up), the first
//!   revise block whose condition holds runs (at most one revision per layer per turn).
//!   `decide`: layers are tried top-down; within a layer, rules in order; the first rule whose
//!   guards hold chooses its action; a layer with no matching rule falls through to the one below.
//!   `act`: the chosen action runs atomically.
//! - **`sim.next`.** [`ExprKind::SimNext`] copies the working snapshot, runs the action on the
//!   copy (availability and requires included; a failing step yields a preview with no branches),
//!   and for each emitted effect expands the branches of the highest enabled layer's [`Model`] of
//!   that effect (weights: the `with probability` values, the `otherwise` branch takes the
//!   remaining mass), running the observation handlers on each branch copy. The result is a
//!   [`crate::types::Ty::Preview`] value: weighted successor snapshots. No randomness is drawn and
//!   the game is not touched. The checker guarantees that nothing evaluated inside a preview calls
//!   `sim.next` again. An effect without a model leaves the snapshot unchanged with weight 1.
//! - **Revisions.** [`StmtKind::Revise`] sets a tunable of a lower layer; the interpreter clamps
//!   nothing: a value outside the declared range is a runtime error at the statement's span (the
//!   checker rejects literal revisions that are out of range).

use crate::types::Ty;

/// Index of a file in [`Program::files`].
pub type FileId = u32;

macro_rules! ids {
    ($($(#[$doc:meta])* $name:ident),* $(,)?) => {$(
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub u32);

        impl $name {
            /// The index into the arena this id refers to.
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }
    )*};
}

ids! {
    /// Index into [`Program::layers`].
    LayerId,
    /// Index into [`Program::state`].
    StateId,
    /// Index into [`Program::tunables`].
    TunableId,
    /// Index into [`Program::config`].
    ConfigId,
    /// Index into [`Program::consts`].
    ConstId,
    /// Index into [`Program::computed`].
    ComputedId,
    /// Index into [`Program::fns`].
    FnId,
    /// Index into [`Program::actions`].
    ActionId,
    /// Index into [`Program::errors`].
    ErrorId,
    /// Index into [`Program::enums`].
    EnumId,
    /// Index into the [`Frame`] of the body being evaluated.
    LocalId,
    /// Index into [`Program::llms`].
    LlmId,
}

/// A source location: a byte range in one of [`Program::files`]. Serialises as
/// `{"file", "start", "end"}`, the shape trace events use.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    serde::Serialize,
    serde::Deserialize,
)]
pub struct SrcSpan {
    /// The file.
    pub file: FileId,
    /// Offset of the first byte.
    pub start: u32,
    /// Offset one past the last byte.
    pub end: u32,
}

/// A whole checked program: one root module and every module it uses.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    /// The root module's name (`examples.search`), or the file path when it has no header.
    pub module: String,
    /// The game named by `use game <name>`, if any.
    pub game: Option<String>,
    /// The source files, by path; [`SrcSpan::file`] indexes this list.
    pub files: Vec<String>,
    /// The enums: user-declared ones and those of the standard library or game that the
    /// program uses.
    pub enums: Vec<EnumDef>,
    /// The declared error codes.
    pub errors: Vec<ErrorDef>,
    /// Constants. They may read each other in any order (the checker rejects cycles), so
    /// evaluate them on demand and memoise, or in dependency order.
    pub consts: Vec<ConstDef>,
    /// Run parameters, set with `--set name=value`.
    pub config: Vec<Param>,
    /// The layers, in dependency order.
    pub layers: Vec<Layer>,
    /// All state slots of all layers.
    pub state: Vec<StateSlot>,
    /// All tunables of all layers.
    pub tunables: Vec<Param>,
    /// All computed values of all layers.
    pub computed: Vec<Computed>,
    /// All functions: top-level ones (no layer) and layer-local ones.
    pub fns: Vec<Function>,
    /// All actions of all layers.
    pub actions: Vec<Action>,
    /// The LLM effects declared with `llm` items.
    pub llms: Vec<LlmDef>,
}

/// The name of the prelude enum of LLM failure kinds.
pub const LLM_FAILURE_ENUM: &str = "LlmFailure";

/// The variants of [`LLM_FAILURE_ENUM`], in declaration order: the kinds of failure an LLM call
/// can end in. `NotConfigured` is a call made without an LLM host; `InPreview` a call reached
/// inside a `sim.next` preview, which never calls out; `Invalid` a reply that fails the item's
/// `ensure`; `RequestTooLarge` a prompt over the transport's size limit, never sent.
pub const LLM_FAILURE_VARIANTS: [&str; 12] = [
    "Transport",
    "Timeout",
    "HttpStatus",
    "MalformedJson",
    "SchemaViolation",
    "OutOfRange",
    "BudgetExhausted",
    "ReplayMissing",
    "NotConfigured",
    "InPreview",
    "Invalid",
    "RequestTooLarge",
];

/// The name of the result enum of LLM calls replying with `reply`: `LlmResult<Reply>`, with the
/// variants `Ok(reply)` (index 0) and `Failed(LlmFailure)` (index 1).
pub fn llm_result_name(reply: &Ty) -> String {
    format!("LlmResult<{reply}>")
}

/// An `llm` item: an LLM effect with its prompt templates and reply shape.
#[derive(Clone, Debug, PartialEq)]
pub struct LlmDef {
    /// The name, as in `emit llm.<name>(...)`.
    pub name: String,
    /// The parameters, in order: name and type. Their values are rendered as text into the
    /// templates.
    pub params: Vec<(String, Ty)>,
    /// The system prompt template, with `{param}` and `{schema}` placeholders.
    pub system: String,
    /// The user prompt template.
    pub user: String,
    /// The declared reply type.
    pub reply: Ty,
    /// The reply type as data, for validation by the host.
    pub shape: LlmShape,
    /// The `ensure` checks of a typed reply, in order.
    pub ensures: Vec<LlmEnsure>,
    /// `retry N with "..."`.
    pub retry: Option<LlmRetry>,
    /// The `LlmResult<Reply>` enum the call's value belongs to.
    pub result_enum: EnumId,
    /// The [`LLM_FAILURE_ENUM`] enum.
    pub failure_enum: EnumId,
    /// The declaration.
    pub span: SrcSpan,
}

/// The most further attempts a `retry` may ask for.
pub const MAX_LLM_RETRIES: u32 = 5;

/// One `ensure` of an `llm` item.
#[derive(Clone, Debug, PartialEq)]
pub struct LlmEnsure {
    /// The condition; local 0 is the typed reply, then come the item's parameters.
    pub condition: Body,
    /// What a failure says (the `else` text, or one naming the condition).
    pub message: String,
    /// The clause.
    pub span: SrcSpan,
}

/// `retry N with "..."` of an `llm` item.
#[derive(Clone, Debug, PartialEq)]
pub struct LlmRetry {
    /// Further attempts after the first, at most [`MAX_LLM_RETRIES`].
    pub count: u32,
    /// The feedback template: `{error}` is what was wrong, plus the item's placeholders.
    pub feedback: String,
}

/// The shape of an LLM reply: what the host validates the model's JSON against.
#[derive(Clone, Debug, PartialEq)]
pub enum LlmShape {
    /// A record: a JSON object with these fields, in the record type's declaration order.
    Record(Vec<LlmField>),
    /// An enum of unit variants: one of the tags.
    Enum(LlmEnum),
}

/// An enum of unit variants in an LLM reply, matched by variant name.
#[derive(Clone, Debug, PartialEq)]
pub struct LlmEnum {
    /// The enum.
    pub enum_id: EnumId,
    /// Its variant names, in declaration order.
    pub variants: Vec<String>,
    /// The variants the reply may take, in declaration order: all of them, or the subset of a
    /// `where field in {A, B}` bound.
    pub allowed: Vec<String>,
}

/// One field of a record reply.
#[derive(Clone, Debug, PartialEq)]
pub struct LlmField {
    /// The field's name, which is the JSON key.
    pub name: String,
    /// Its kind.
    pub kind: LlmFieldKind,
    /// The `where` range of a numeric field (of the number inside an optional field, or of each
    /// item of a list of numbers).
    pub range: Option<Range>,
}

/// The kinds of field an LLM reply may have.
#[derive(Clone, Debug, PartialEq)]
pub enum LlmFieldKind {
    /// A whole number.
    Int,
    /// A finite number.
    Float,
    /// `true` or `false`.
    Bool,
    /// Free text.
    String,
    /// One of an enum's unit variants.
    Enum(LlmEnum),
    /// `Option<T>`: the value, or `None` when the reply leaves the key out or gives `null`.
    Optional(Box<LlmFieldKind>),
    /// `List<T>`: between `min_len` and `max_len` items (the item's `len` bound is mandatory).
    List {
        /// The kind of every item.
        item: Box<LlmFieldKind>,
        /// The fewest items.
        min_len: u32,
        /// The most items.
        max_len: u32,
    },
    /// A record: a JSON object with these fields, in declaration order.
    Record(Vec<LlmField>),
}

/// An enum type and its variants.
#[derive(Clone, Debug, PartialEq)]
pub struct EnumDef {
    /// The name, as [`Ty::Enum`] spells it: the bare name (`Dir`) for the enums of a game, of the
    /// standard library and of the program's root module; `module.Name` for an enum declared in
    /// another harness module the program uses. A game that builds enum values uses the bare
    /// name.
    pub name: String,
    /// The variants in declaration order: name and payload types. A variant value is
    /// `(EnumId, variant index, payload)`.
    pub variants: Vec<(String, Vec<Ty>)>,
}

/// A declared error code, `error CODE = "message"`.
#[derive(Clone, Debug, PartialEq)]
pub struct ErrorDef {
    /// The code, for example `BUDGET_CLOSED`.
    pub code: String,
    /// The message reported when a `requires` with this code fails.
    pub message: String,
    /// The declaration.
    pub span: SrcSpan,
}

/// A constant; its value is computed once, before the episode starts.
#[derive(Clone, Debug, PartialEq)]
pub struct ConstDef {
    /// The name.
    pub name: String,
    /// The declared type.
    pub ty: Ty,
    /// The value; reads only literals, other constants and builtins.
    pub value: Body,
    /// The declaration.
    pub span: SrcSpan,
}

/// A value known at check time: a literal, or a range bound. Serialises as the bare value.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(untagged)]
pub enum Literal {
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A boolean.
    Bool(bool),
    /// A string.
    String(String),
}

/// An inclusive or exclusive range of allowed values, with literal bounds.
#[derive(Clone, Debug, PartialEq)]
pub struct Range {
    /// The lower bound (always inclusive).
    pub lo: Literal,
    /// The upper bound.
    pub hi: Literal,
    /// True when `hi` itself is allowed (`..=`).
    pub inclusive: bool,
}

/// A `config` entry or a `tunable`: a named parameter with a default and an optional range.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    /// The name.
    pub name: String,
    /// The owning layer; `None` for `config` entries.
    pub layer: Option<LayerId>,
    /// The declared type.
    pub ty: Ty,
    /// The default value; reads only constants and (for tunables) config.
    pub default: Body,
    /// The allowed range, checked whenever the value is set (by `--set` or `revise`).
    pub range: Option<Range>,
    /// The declaration.
    pub span: SrcSpan,
}

/// A layer: what it needs and what it owns.
#[derive(Clone, Debug, PartialEq)]
pub struct Layer {
    /// The name.
    pub name: String,
    /// The layers it names in `needs`.
    pub needs: Vec<LayerId>,
    /// Every layer it needs, directly or transitively, in dependency order.
    pub below: Vec<LayerId>,
    /// The gated game effects it provides (`uses game.e`), sorted.
    pub uses: Vec<String>,
    /// Its state slots, in declaration order.
    pub state: Vec<StateId>,
    /// Its tunables.
    pub tunables: Vec<TunableId>,
    /// Its computed values.
    pub computed: Vec<ComputedId>,
    /// Its layer-local functions.
    pub fns: Vec<FnId>,
    /// Its actions.
    pub actions: Vec<ActionId>,
    /// Its effect models.
    pub models: Vec<Model>,
    /// Its observation handlers, in declaration order.
    pub handlers: Vec<Handler>,
    /// Its decide rules, in order (all `decide` blocks concatenated).
    pub decide: Vec<Rule>,
    /// Its revise blocks, in declaration order.
    pub revise: Vec<Revise>,
    /// The defaults it sets for tunables of the layers it needs, while it is on.
    pub tunable_defaults: Vec<TunableDefault>,
    /// The layer's `machine`s: the allowed transitions of some of its state fields.
    pub machines: Vec<MachineDef>,
    /// The declaration.
    pub span: SrcSpan,
}

/// A state slot: a field of a layer's `state` block.
#[derive(Clone, Debug, PartialEq)]
pub struct StateSlot {
    /// The name.
    pub name: String,
    /// The owning layer.
    pub layer: LayerId,
    /// The declared type.
    pub ty: Ty,
    /// The initial value, evaluated when the episode starts, in slot order (layers in
    /// dependency order, fields in declaration order); it may read constants, config, tunables,
    /// game queries and earlier slots.
    pub init: Body,
    /// The declaration.
    pub span: SrcSpan,
}

/// `machine field { ... }`: the transitions a state field of an enum type may take. A patch of
/// the whole field to another variant must follow an edge (the checker proves literal ones, the
/// interpreter checks the rest, R0017), and each transition is a trace event.
#[derive(Clone, Debug, PartialEq)]
pub struct MachineDef {
    /// The governed state field.
    pub state: StateId,
    /// The edges as variant indices: `(Some(from), to)`, or `(None, to)` from every state.
    pub edges: Vec<(Option<u32>, u32)>,
    /// The declaration.
    pub span: SrcSpan,
}

impl MachineDef {
    /// Whether the machine allows moving from variant `from` to variant `to` (staying put is
    /// not a transition and always allowed).
    pub fn allows(&self, from: u32, to: u32) -> bool {
        from == to
            || self
                .edges
                .iter()
                .any(|(f, t)| *t == to && f.is_none_or(|f| f == from))
    }
}

/// A `computed` value.
#[derive(Clone, Debug, PartialEq)]
pub struct Computed {
    /// The name.
    pub name: String,
    /// The owning layer.
    pub layer: LayerId,
    /// The declared type.
    pub ty: Ty,
    /// The defining expression; pure and total.
    pub body: Body,
    /// The declaration.
    pub span: SrcSpan,
}

/// A `fn`: pure, non-recursive, its body one expression.
#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    /// The name.
    pub name: String,
    /// The owning layer; `None` for a top-level function.
    pub layer: Option<LayerId>,
    /// The parameter types; the parameters are locals `0..params.len()` of the body's frame.
    pub params: Vec<Ty>,
    /// The result type.
    pub ret: Ty,
    /// The body.
    pub body: Body,
    /// The declaration.
    pub span: SrcSpan,
}

/// An expression together with the frame of locals it uses.
#[derive(Clone, Debug, PartialEq)]
pub struct Body {
    /// The locals of this body.
    pub frame: Frame,
    /// The expression.
    pub expr: Expr,
}

/// The local variables of one body.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Frame {
    /// The locals, indexed by [`LocalId`]; parameters first.
    pub locals: Vec<Local>,
}

/// One local variable.
#[derive(Clone, Debug, PartialEq)]
pub struct Local {
    /// Its name in the source, for traces and error messages.
    pub name: String,
    /// Its type.
    pub ty: Ty,
}

/// An `action`.
#[derive(Clone, Debug, PartialEq)]
pub struct Action {
    /// The name.
    pub name: String,
    /// The owning layer.
    pub layer: LayerId,
    /// The parameter types; the parameters are locals `0..params.len()` of [`Action::frame`].
    pub params: Vec<Ty>,
    /// The locals of the precondition, the validations and the body, which share one frame.
    pub frame: Frame,
    /// The precondition (`available when`); absent means always available.
    pub available: Option<Expr>,
    /// The validations, checked in order before any patch applies.
    pub requires: Vec<Requires>,
    /// The statements.
    pub body: Vec<Stmt>,
    /// The declaration.
    pub span: SrcSpan,
}

/// `requires cond else fail CODE`.
#[derive(Clone, Debug, PartialEq)]
pub struct Requires {
    /// The condition that must hold.
    pub cond: Expr,
    /// The error the step fails with when it does not.
    pub error: ErrorId,
    /// The clause.
    pub span: SrcSpan,
}

/// A `model game.effect(params) { branches }`.
#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    /// The modelled effect's name in the game bindings (`probe`).
    pub effect: String,
    /// The locals; the effect's arguments are locals `0..n` where `n` is the effect's arity.
    pub frame: Frame,
    /// The outcomes.
    pub branches: Vec<ModelBranch>,
    /// The declaration.
    pub span: SrcSpan,
}

/// One outcome of a model.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelBranch {
    /// The observation's name in the game bindings (`answer`).
    pub observation: String,
    /// The observation's fields, positional, in declaration order.
    pub args: Vec<Expr>,
    /// The probability (a `Float` in `0..=1`, checked at runtime); `None` for `otherwise`.
    pub probability: Option<Expr>,
    /// The branch.
    pub span: SrcSpan,
}

/// An `on game.observation(params) { body }` handler.
#[derive(Clone, Debug, PartialEq)]
pub struct Handler {
    /// The observation's name in the game bindings.
    pub observation: String,
    /// The bounds the game declares for the observation's fields, one per field in order
    /// ([`crate::signatures::GameSig::observation_bound`]).
    pub bounds: Vec<Option<u64>>,
    /// The locals; the observation's fields are locals `0..n`, in declaration order.
    pub frame: Frame,
    /// The statements: patches and lets (no effects).
    pub body: Vec<Stmt>,
    /// The declaration.
    pub span: SrcSpan,
}

/// One decide rule.
#[derive(Clone, Debug, PartialEq)]
pub struct Rule {
    /// The locals bound by the guards and used by the arguments.
    pub frame: Frame,
    /// The guards; all must hold. Empty for an unconditional rule.
    pub guards: Vec<Guard>,
    /// The chosen action.
    pub action: ActionId,
    /// Its arguments, positional.
    pub args: Vec<Expr>,
    /// The rule.
    pub span: SrcSpan,
}

/// A `revise when cond { body }` block.
#[derive(Clone, Debug, PartialEq)]
pub struct Revise {
    /// The locals of the condition and the body.
    pub frame: Frame,
    /// The gate.
    pub cond: Expr,
    /// Revisions of lower tunables and patches of the layer's own state.
    pub body: Vec<Stmt>,
    /// The block.
    pub span: SrcSpan,
}

/// `tunable layer.name = value`: while the layer holding it is on, the tunable starts from
/// `value` instead of its declared default (a `--set` still wins).
#[derive(Clone, Debug, PartialEq)]
pub struct TunableDefault {
    /// The needed layer's tunable.
    pub tunable: TunableId,
    /// The default in effect, evaluated once when the machine is prepared.
    pub value: Body,
    /// The member.
    pub span: SrcSpan,
}

/// A guard of a rule or an `if`.
#[derive(Clone, Debug, PartialEq)]
pub enum Guard {
    /// A `Bool` condition.
    Cond(Expr),
    /// Holds when the value matches the pattern; binds its locals for later guards and the body.
    Let(Pattern, Expr),
}

/// A statement.
#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    /// What it does.
    pub kind: StmtKind,
    /// Where it was written.
    pub span: SrcSpan,
}

/// The kinds of statement.
#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    /// Evaluates the value and binds the pattern, which the checker guarantees to be
    /// irrefutable (a binding or a wildcard).
    Let(Pattern, Expr),
    /// Writes the place. With [`AssignOp::Set`] the place gets the value; otherwise the place's
    /// current value is combined with the value (`+=` on a number adds, on a `List` appends the
    /// element list, on a `Set` unions).
    Patch {
        /// The written place.
        place: Place,
        /// The operator.
        op: AssignOp,
        /// The value or operand.
        value: Expr,
    },
    /// `let pattern = emit llm.name(args)`: calls an LLM effect (or, inside a preview or without
    /// a host, fails without calling) and binds its `LlmResult` value.
    LetLlm {
        /// The irrefutable pattern bound to the result.
        pattern: Pattern,
        /// The effect.
        llm: LlmId,
        /// The arguments, positional.
        args: Vec<Expr>,
    },
    /// Sends an effect to the game after the step commits.
    Emit {
        /// The effect's name in the game bindings (`probe`).
        effect: String,
        /// The arguments, positional.
        args: Vec<Expr>,
    },
    /// Changes a tunable of a lower layer; the result must lie in the tunable's range.
    Revise {
        /// The tunable.
        tunable: TunableId,
        /// The operator.
        op: AssignOp,
        /// The value or operand.
        value: Expr,
    },
    /// Runs `then` when all guards hold, `otherwise` when one fails.
    If {
        /// The guards.
        guards: Vec<Guard>,
        /// The statements when they hold.
        then: Vec<Stmt>,
        /// The statements otherwise (possibly empty).
        otherwise: Vec<Stmt>,
    },
    /// `halt reason`: the episode ends once the action has committed and its effects have gone
    /// to the game. The first `halt` of a step decides the reason.
    Halt {
        /// The reason, recorded in the episode's end event and result.
        reason: String,
    },
}

/// The operator of a patch or revision.
pub use harness_grammar::ast::AssignOp;

/// A written place: a state slot, possibly followed by record fields and element keys.
#[derive(Clone, Debug, PartialEq)]
pub struct Place {
    /// The state slot, always one owned by the layer of the statement.
    pub state: StateId,
    /// The steps into the slot's value.
    pub path: Vec<PlaceStep>,
}

/// One step of a [`Place`].
#[derive(Clone, Debug, PartialEq)]
pub enum PlaceStep {
    /// A record field, by index in the record type's declaration order.
    Field(u32),
    /// A list element (by `Int` index; out of range is a runtime error) or a map entry (by key;
    /// a patch with `=` inserts the key, a compound operator on a missing key is a runtime
    /// error).
    Index(Expr),
}

/// An expression with its type and span.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    /// What it computes.
    pub kind: ExprKind,
    /// Its resolved type.
    pub ty: Ty,
    /// Where it was written.
    pub span: SrcSpan,
}

/// A reference to a member that a snapshot holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemberRef {
    /// A state slot.
    State(StateId),
    /// A computed value (evaluated in the snapshot).
    Computed(ComputedId),
    /// A tunable.
    Tunable(TunableId),
}

/// The kinds of expression.
#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// A literal value.
    Lit(Literal),
    /// A local of the current frame.
    Local(LocalId),
    /// A member of the current snapshot: state, computed value or tunable.
    Member(MemberRef),
    /// A config value.
    Config(ConfigId),
    /// A constant.
    Const(ConstId),
    /// A game query without arguments (`game.probes_left`), read from the agent-visible view.
    GameProperty(String),
    /// A game query with arguments (`game.is_unknown(cell)`).
    GameCall {
        /// The query's name in the bindings.
        name: String,
        /// The arguments, positional.
        args: Vec<Expr>,
    },
    /// A call of a `fn`.
    CallFn {
        /// The function.
        func: FnId,
        /// The arguments, positional.
        args: Vec<Expr>,
    },
    /// A call of a builtin by its registry name: a free function (`abs`), a method (`List.max_by`,
    /// receiver first) or a static function of a type (`Posterior.prior`). Arguments are
    /// positional in the signature's parameter order; named arguments were reordered.
    CallBuiltin {
        /// The registry name.
        name: String,
        /// The arguments, positional, receiver first for methods.
        args: Vec<Expr>,
    },
    /// A closure, only as an argument of a builtin. Its parameters are locals of the enclosing
    /// frame; calling it assigns them and evaluates the body.
    Closure {
        /// The parameters.
        params: Vec<LocalId>,
        /// The body.
        body: Box<Expr>,
    },
    /// A `fn` passed where a closure is expected (`max_by(value_of_question)`).
    FnRef(FnId),
    /// An enum variant value.
    Variant {
        /// The enum.
        enum_id: EnumId,
        /// The variant's index in declaration order.
        index: u32,
        /// The payload, positional.
        payload: Vec<Expr>,
    },
    /// `Some(value)`.
    Some(Box<Expr>),
    /// `None`.
    None,
    /// A record value; the fields in declaration order of the record type.
    Record(Vec<Expr>),
    /// A list literal.
    List(Vec<Expr>),
    /// A set literal (a list literal where a set was expected); duplicates collapse.
    Set(Vec<Expr>),
    /// The empty map: `[]` where a map was expected (maps have no literal with entries).
    EmptyMap,
    /// Reads a record field by index.
    Field(Box<Expr>, u32),
    /// `base[index]`: a list element by `Int` index or a map value by key; a missing element is
    /// a runtime error. Indexing an opaque type is a [`ExprKind::CallBuiltin`] of its `index`
    /// method instead.
    Index(Box<Expr>, Box<Expr>),
    /// A prefix operator.
    Unary(UnaryOp, Box<Expr>),
    /// An infix operator. Both operands of arithmetic and comparisons have the same type
    /// (`Int` or `Float`; comparisons also on any type with `==`/`!=`); `in`/`not in` test
    /// membership in a list, a set or a map's keys.
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    /// `if guards { then } else { otherwise }`.
    If {
        /// The guards.
        guards: Vec<Guard>,
        /// The value when they hold.
        then: Box<Expr>,
        /// The value otherwise.
        otherwise: Box<Expr>,
    },
    /// `match`: the first arm whose pattern matches gives the value; the checker guarantees
    /// that some arm matches.
    Match(Box<Expr>, Vec<MatchArm>),
    /// `let pattern = value` followed by the rest of a block.
    Let {
        /// The irrefutable pattern.
        pattern: Pattern,
        /// The bound value.
        value: Box<Expr>,
        /// The rest of the block.
        body: Box<Expr>,
    },
    /// `sim.next(action(args))`: a preview of the action's outcomes; see the module docs.
    SimNext {
        /// The previewed action.
        action: ActionId,
        /// Its arguments, positional.
        args: Vec<Expr>,
    },
    /// `s.member` where `s` is a successor snapshot of a preview.
    SnapshotRead {
        /// The snapshot.
        snapshot: Box<Expr>,
        /// The member read in it.
        member: MemberRef,
    },
}

/// Prefix operators.
pub use harness_grammar::ast::UnaryOp;

/// Infix operators.
pub use harness_grammar::ast::BinaryOp;

/// One `match` arm.
#[derive(Clone, Debug, PartialEq)]
pub struct MatchArm {
    /// The pattern.
    pub pattern: Pattern,
    /// The value when it matches.
    pub body: Expr,
}

/// A pattern.
#[derive(Clone, Debug, PartialEq)]
pub struct Pattern {
    /// What it matches.
    pub kind: PatternKind,
    /// Where it was written.
    pub span: SrcSpan,
}

/// The kinds of pattern.
#[derive(Clone, Debug, PartialEq)]
pub enum PatternKind {
    /// Matches anything.
    Wildcard,
    /// Matches anything and binds it.
    Bind(LocalId),
    /// Matches an equal value.
    Lit(Literal),
    /// Matches `Some(p)`.
    Some(Box<Pattern>),
    /// Matches `None`.
    None,
    /// Matches a variant of an enum whose payload matches the sub-patterns.
    Variant {
        /// The enum.
        enum_id: EnumId,
        /// The variant's index.
        index: u32,
        /// Patterns for the payload, positional.
        payload: Vec<Pattern>,
    },
}
