//! The syntax tree of a `.harness` file: every node carries the byte span it was parsed from.
//!
//! The tree is produced by [`crate::parse`] and is the contract between the parser, the checker,
//! the formatter and the editor support. It is *recovering*: where the source is malformed, the
//! parser inserts an error node (for example [`ExprKind::Error`] or [`Item::Invalid`]) that covers
//! the bad text, so later stages can still look at everything around it. Together with the token
//! stream of [`crate::Parse::tokens`], which keeps comments and whitespace, the tree is lossless:
//! every byte of the input belongs to a token, and every token to the span of some node.

use serde::Serialize;

/// A half-open byte range `start..end` into the source text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Span {
    /// Offset of the first byte.
    pub start: u32,
    /// Offset one past the last byte.
    pub end: u32,
}

impl Span {
    /// Builds a span from two offsets.
    pub fn new(start: usize, end: usize) -> Self {
        Self {
            start: start as u32,
            end: end as u32,
        }
    }

    /// The smallest span that covers both `self` and `other`.
    pub fn to(self, other: Span) -> Span {
        Span {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }

    /// The span as a `usize` range, for slicing the source text.
    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }

    /// Number of bytes covered.
    pub fn len(self) -> usize {
        (self.end - self.start) as usize
    }

    /// True when the span covers no byte (for example a node inserted by recovery).
    pub fn is_empty(self) -> bool {
        self.start == self.end
    }
}

/// A name as written in the source.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Ident {
    /// The text of the name.
    pub name: String,
    /// Where it was written.
    pub span: Span,
}

/// A dotted name such as `battleship.planning` or `std.belief`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Path {
    /// The segments, in order.
    pub segments: Vec<Ident>,
    /// The whole path.
    pub span: Span,
}

/// One `.harness` file.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct File {
    /// The `harness a.b` header, naming the module; absent when the file does not start with one.
    pub module: Option<Path>,
    /// The top-level items in source order.
    pub items: Vec<Item>,
    /// The whole file.
    pub span: Span,
}

/// Documentation written as `///` lines right above an item or member.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Docs {
    /// The lines without their `///` prefix, joined with newlines.
    pub text: String,
}

/// A top-level item.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Item {
    /// `use game battleship`, `use std.belief.{Posterior}` or `use battleship.belief`.
    Use(Use),
    /// `type Name = { field: Type, ... }` or `type Name = Type`.
    TypeAlias(TypeAlias),
    /// `enum Name { A, B(Int) }`.
    Enum(EnumDecl),
    /// `const NAME: Type = expr`.
    Const(ConstDecl),
    /// `config { name: Type = expr in lo..=hi }`.
    Config(ConfigBlock),
    /// `fn name(params) -> Type = expr`.
    Fn(FnDecl),
    /// `error CODE = "message"`: a declared failure code for `requires ... else fail CODE`.
    Error(ErrorDecl),
    /// `layer name role r needs a, b uses game.e { members }`.
    Layer(Layer),
    /// `llm name(params) -> Reply where ... { system "..." user "..." }`: an LLM effect.
    Llm(LlmDecl),
    /// Text that could not be parsed as an item; recovery skipped to the next item keyword.
    Invalid(Span),
}

impl Item {
    /// The span of the whole item.
    pub fn span(&self) -> Span {
        match self {
            Item::Use(it) => it.span,
            Item::TypeAlias(it) => it.span,
            Item::Enum(it) => it.span,
            Item::Const(it) => it.span,
            Item::Config(it) => it.span,
            Item::Fn(it) => it.span,
            Item::Error(it) => it.span,
            Item::Layer(it) => it.span,
            Item::Llm(it) => it.span,
            Item::Invalid(span) => *span,
        }
    }
}

/// What a `use` item imports.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum UseKind {
    /// `use game battleship`: the game's bindings, reachable as `game.<name>`.
    Game(Ident),
    /// `use a.b` (every public name of module `a.b`) or `use a.b.{x, y}` (only those).
    Module {
        /// The module path, for example `std.belief` or `battleship.belief`.
        path: Path,
        /// The listed names, or `None` for a glob import of the whole module.
        names: Option<Vec<Ident>>,
    },
}

/// A `use` item.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Use {
    /// What is imported.
    pub kind: UseKind,
    /// The whole item.
    pub span: Span,
}

/// A `type` alias.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TypeAlias {
    /// Documentation lines.
    pub docs: Docs,
    /// The alias name.
    pub name: Ident,
    /// The aliased type (often a record type).
    pub ty: TypeExpr,
    /// The whole item.
    pub span: Span,
}

/// An `enum` declaration.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EnumDecl {
    /// Documentation lines.
    pub docs: Docs,
    /// The enum name.
    pub name: Ident,
    /// The variants in declaration order.
    pub variants: Vec<Variant>,
    /// The whole item.
    pub span: Span,
}

/// One enum variant, `Name` or `Name(T1, T2)`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Variant {
    /// The variant name.
    pub name: Ident,
    /// The payload types; empty for a unit variant.
    pub payload: Vec<TypeExpr>,
    /// The whole variant.
    pub span: Span,
}

/// A `const` item.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ConstDecl {
    /// Documentation lines.
    pub docs: Docs,
    /// The constant's name.
    pub name: Ident,
    /// Its declared type.
    pub ty: TypeExpr,
    /// Its value; must be evaluable at check time.
    pub value: Expr,
    /// The whole item.
    pub span: Span,
}

/// The `config { ... }` block: run parameters set with `--set name=value`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ConfigBlock {
    /// The parameters in declaration order.
    pub params: Vec<Param>,
    /// The whole block.
    pub span: Span,
}

/// A declared parameter with a default and an optional range: a `config` entry or a `tunable`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Param {
    /// Documentation lines.
    pub docs: Docs,
    /// The parameter name.
    pub name: Ident,
    /// Its type.
    pub ty: TypeExpr,
    /// Its default value.
    pub default: Expr,
    /// The allowed range, `in lo..=hi` or `in lo..hi`.
    pub range: Option<RangeExpr>,
    /// The whole declaration.
    pub span: Span,
}

/// A range `lo..hi` (exclusive) or `lo..=hi` (inclusive).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RangeExpr {
    /// The lower bound.
    pub lo: Expr,
    /// The upper bound.
    pub hi: Expr,
    /// True for `..=`.
    pub inclusive: bool,
    /// The whole range.
    pub span: Span,
}

/// A `fn` item: a pure, non-recursive function whose body is one expression.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FnDecl {
    /// Documentation lines.
    pub docs: Docs,
    /// The function name.
    pub name: Ident,
    /// The parameters.
    pub params: Vec<TypedParam>,
    /// The declared result type.
    pub ret: TypeExpr,
    /// The body.
    pub body: Expr,
    /// The whole item.
    pub span: Span,
}

/// A parameter `name: Type` of a `fn` or `action`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TypedParam {
    /// The parameter name.
    pub name: Ident,
    /// Its type.
    pub ty: TypeExpr,
    /// The whole parameter.
    pub span: Span,
}

/// An `error CODE = "message"` declaration.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ErrorDecl {
    /// Documentation lines.
    pub docs: Docs,
    /// The code, conventionally `UPPER_SNAKE_CASE`.
    pub name: Ident,
    /// The human-readable message reported when the check fails.
    pub message: StringLit,
    /// The whole item.
    pub span: Span,
}

/// An `llm` item: an LLM effect with its prompt templates and its typed reply.
///
/// `{param}` in a template is replaced by the parameter's value as text, `{schema}` by the
/// reply shape's schema hint; the call is `let reply = emit llm.name(args)`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LlmDecl {
    /// Documentation lines.
    pub docs: Docs,
    /// The effect's name, used as `llm.<name>`.
    pub name: Ident,
    /// The parameters, rendered as text into the templates.
    pub params: Vec<TypedParam>,
    /// The reply type: a record type of scalar fields, or an enum of unit variants.
    pub reply: TypeExpr,
    /// The `where` bounds: numeric ranges, list lengths and enum subsets of reply fields.
    pub bounds: Vec<LlmBound>,
    /// The `ensure` checks a typed reply must pass, in order.
    pub ensures: Vec<LlmEnsure>,
    /// `retry N with "..."`: further attempts after an unusable reply.
    pub retry: Option<LlmRetry>,
    /// The `system "..."` template.
    pub system: StringLit,
    /// The `user "..."` template.
    pub user: StringLit,
    /// The whole item.
    pub span: Span,
}

/// One bound of an `llm` item's `where` clause: `field in lo..=hi` (a number's range),
/// `field len in lo..=hi` (a list's length) or `field in {A, B}` (an enum restricted to some of
/// its variants). The field may be a path into the items of a list of records: `steps.tool`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LlmBound {
    /// The reply field, then the fields of its items or nested records.
    pub path: Vec<Ident>,
    /// What the bound allows.
    pub kind: LlmBoundKind,
    /// The whole bound.
    pub span: Span,
}

/// `ensure expr else "message"`: a condition on the typed reply (named `reply`, with the item's
/// parameters in scope) that must hold, or the reply is `LlmFailure.Invalid`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LlmEnsure {
    /// The condition, a `Bool`.
    pub condition: Expr,
    /// What a retry tells the model when the condition fails.
    pub message: Option<StringLit>,
    /// The whole clause.
    pub span: Span,
}

/// `retry N with "...{error}..."`: up to `N` further attempts in the same conversation, each
/// after the model is shown the template with `{error}` replaced by what was wrong.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LlmRetry {
    /// `N`, a literal (checked to be at most 5).
    pub count: Expr,
    /// The feedback template.
    pub feedback: StringLit,
    /// The whole clause.
    pub span: Span,
}

/// What a `where` bound allows.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum LlmBoundKind {
    /// `in lo..=hi`: the field's numeric range.
    Range(RangeExpr),
    /// `len in lo..=hi`: the number of items of a list field.
    Len(RangeExpr),
    /// `in {A, B}`: the variants an enum field may take.
    Variants(Vec<Ident>),
}

/// A string literal with its unescaped value.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StringLit {
    /// The value after unescaping.
    pub value: String,
    /// The literal including its quotes.
    pub span: Span,
}

/// A `layer` item: a separately switchable group of members.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Layer {
    /// Documentation lines.
    pub docs: Docs,
    /// The layer name.
    pub name: Ident,
    /// The role it declares (`role memory`): a word a protocol gives meaning to, such as the
    /// four roles of `harness check --protocol jit4`; without a protocol it documents the layer.
    pub role: Option<Ident>,
    /// The layers it builds on (`needs a, b`).
    pub needs: Vec<Ident>,
    /// The gated game effects it provides (`uses game.simulate, game.read_series`): the names
    /// after `game.`.
    pub uses: Vec<Ident>,
    /// The members in source order.
    pub members: Vec<Member>,
    /// The whole item.
    pub span: Span,
}

/// A member of a layer.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Member {
    /// `state { name: Type = expr, ... }`.
    State(StateBlock),
    /// `tunable name: Type = expr in lo..=hi`.
    Tunable(Param),
    /// `tunable layer.name = expr`: the default of a needed layer's tunable while this layer
    /// is on.
    TunableDefault(TunableDefault),
    /// `computed name: Type = expr`.
    Computed(Computed),
    /// A layer-local `fn`.
    Fn(FnDecl),
    /// An `action`.
    Action(Action),
    /// A `model game.effect(params) { branches }`.
    Model(Model),
    /// An `on game.observation(params) { statements }` handler.
    On(Handler),
    /// A `decide { rules }` block.
    Decide(Decide),
    /// A `revise when cond { statements }` block.
    Revise(Revise),
    /// A `machine field { A -> B -> C; * -> D }` block: the allowed transitions of a state field.
    Machine(MachineDecl),
    /// Text that could not be parsed as a member; recovery skipped to the next member keyword.
    Invalid(Span),
}

impl Member {
    /// The span of the whole member.
    pub fn span(&self) -> Span {
        match self {
            Member::State(it) => it.span,
            Member::Tunable(it) => it.span,
            Member::TunableDefault(it) => it.span,
            Member::Computed(it) => it.span,
            Member::Fn(it) => it.span,
            Member::Action(it) => it.span,
            Member::Model(it) => it.span,
            Member::On(it) => it.span,
            Member::Decide(it) => it.span,
            Member::Revise(it) => it.span,
            Member::Machine(it) => it.span,
            Member::Invalid(span) => *span,
        }
    }
}

/// `tunable layer.name = expr`: while the layer holding it is on, the tunable `name` of the
/// needed layer `layer` starts from `expr` instead of its declared default. It configures a
/// lower layer without revising it, so no turn records a revision.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TunableDefault {
    /// Documentation lines.
    pub docs: Docs,
    /// `layer.name`, a field of a layer name.
    pub target: Expr,
    /// The default in effect while the layer is on.
    pub value: Expr,
    /// The whole member.
    pub span: Span,
}

/// A `state { ... }` block.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StateBlock {
    /// The fields in declaration order.
    pub fields: Vec<StateField>,
    /// The whole block.
    pub span: Span,
}

/// One state field `name: Type = initial`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StateField {
    /// Documentation lines.
    pub docs: Docs,
    /// The field name.
    pub name: Ident,
    /// Its type.
    pub ty: TypeExpr,
    /// Its initial value, evaluated when the episode starts.
    pub init: Expr,
    /// The whole field.
    pub span: Span,
}

/// A `computed name: Type = expr` value.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Computed {
    /// Documentation lines.
    pub docs: Docs,
    /// The name.
    pub name: Ident,
    /// The declared type.
    pub ty: TypeExpr,
    /// The defining expression.
    pub body: Expr,
    /// The whole member.
    pub span: Span,
}

/// An `action name(params) available when ... requires ... else fail CODE { body }`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Action {
    /// Documentation lines.
    pub docs: Docs,
    /// The action name.
    pub name: Ident,
    /// The parameters.
    pub params: Vec<TypedParam>,
    /// The precondition: when false the action is not available (never chosen).
    pub available: Option<Expr>,
    /// Validations checked before any patch applies, each with its declared failure code.
    pub requires: Vec<Requires>,
    /// The statements: patches and emitted effects.
    pub body: Block,
    /// The whole member.
    pub span: Span,
}

/// `requires cond else fail CODE`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Requires {
    /// The condition that must hold.
    pub cond: Expr,
    /// The declared error reported when it does not.
    pub code: Ident,
    /// The whole clause.
    pub span: Span,
}

/// A `model game.effect(params) { branches }`: what the agent believes an effect returns.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Model {
    /// The modelled effect, for example `game.fire`.
    pub effect: Path,
    /// Names bound to the effect's arguments.
    pub params: Vec<Ident>,
    /// The outcome branches; the last may be `otherwise`.
    pub branches: Vec<ModelBranch>,
    /// The whole member.
    pub span: Span,
}

/// One outcome of a model: an observation with a probability.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ModelBranch {
    /// The observation, for example `game.shot(cell, hit: true)`.
    pub observation: Expr,
    /// `with probability expr`, or `None` for `otherwise` (the remaining mass).
    pub probability: Option<Expr>,
    /// The whole branch.
    pub span: Span,
}

/// An `on game.observation(params) { body }` handler.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Handler {
    /// The observation, for example `game.shot`.
    pub observation: Path,
    /// Names bound to the observation's fields, by position.
    pub params: Vec<Ident>,
    /// The statements.
    pub body: Block,
    /// The whole member.
    pub span: Span,
}

/// A `decide { rules }` block.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Decide {
    /// The rules, tried in order.
    pub rules: Vec<Rule>,
    /// The whole block.
    pub span: Span,
}

/// A decision rule: `when guards => action(args)` or an unconditional `action(args)`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Rule {
    /// The guards, all of which must hold; empty for an unconditional rule.
    pub guards: Vec<Guard>,
    /// The action call chosen when the guards hold.
    pub action: Expr,
    /// The whole rule.
    pub span: Span,
}

/// One guard of a rule or of an `if let`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Guard {
    /// A boolean condition.
    Cond(Expr),
    /// `let Pattern = expr`: holds when the value matches; binds the pattern's names.
    Let(Pattern, Expr),
}

/// A `revise when cond { statements }` block.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Revise {
    /// The gate.
    pub cond: Expr,
    /// The revisions and patches applied when the gate holds.
    pub body: Block,
    /// The whole member.
    pub span: Span,
}

/// `machine field { chains }`: the transitions a state field of an enum type may take.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MachineDecl {
    /// The state field, of this layer.
    pub field: Ident,
    /// The chains, each declaring an edge between neighbours.
    pub chains: Vec<MachineChain>,
    /// The whole member.
    pub span: Span,
}

/// `A -> B -> C` (edges A→B and B→C) or `* -> D` (an edge from every state to D).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MachineChain {
    /// The `*` that starts a chain from any state, if written.
    pub any: Option<Span>,
    /// The states, in order (variant names of the field's enum).
    pub states: Vec<Ident>,
    /// The whole chain.
    pub span: Span,
}

/// A braced list of statements.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Block {
    /// The statements in order.
    pub stmts: Vec<Stmt>,
    /// The braces and everything between them.
    pub span: Span,
}

/// A statement inside an action, handler or revise block.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Stmt {
    /// `let pattern = expr`.
    Let(Pattern, Expr, Span),
    /// `patch place op expr`.
    Patch(Patch),
    /// `emit game.effect(args)`.
    Emit(Expr, Span),
    /// `let pattern = emit llm.effect(args)`: an LLM call whose result is bound.
    LetEmit(Pattern, Expr, Span),
    /// `revise layer.tunable op expr`.
    Revise(Patch),
    /// `if cond { ... } else { ... }` over statements.
    If(IfStmt),
    /// `halt reason`: ends the episode after the action's effects.
    Halt(HaltStmt),
    /// A statement that could not be parsed; recovery skipped to the next statement keyword.
    Invalid(Span),
}

impl Stmt {
    /// The span of the whole statement.
    pub fn span(&self) -> Span {
        match self {
            Stmt::Let(_, _, span)
            | Stmt::LetEmit(_, _, span)
            | Stmt::Emit(_, span)
            | Stmt::Invalid(span) => *span,
            Stmt::Patch(it) | Stmt::Revise(it) => it.span,
            Stmt::If(it) => it.span,
            Stmt::Halt(it) => it.span,
        }
    }
}

/// `halt reason`: the harness ends its episode, giving a reason.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HaltStmt {
    /// The reason, as written.
    pub reason: HaltReason,
    /// The whole statement.
    pub span: Span,
}

/// The reason of a `halt`: a bare name (`halt escalated`) or a string (`halt "no plan"`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum HaltReason {
    /// A name, recorded as its text.
    Name(Ident),
    /// A string literal, recorded as its value.
    Text(StringLit),
}

impl HaltReason {
    /// The reason recorded in the trace and the result.
    pub fn text(&self) -> &str {
        match self {
            HaltReason::Name(name) => &name.name,
            HaltReason::Text(lit) => &lit.value,
        }
    }
}

/// `patch target op value` or `revise target op value`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Patch {
    /// The place written: a name, a field of it or an element of it.
    pub target: Expr,
    /// `=`, `+=`, `-=` or `*=`.
    pub op: AssignOp,
    /// The new value or the operand.
    pub value: Expr,
    /// The whole statement.
    pub span: Span,
}

/// The operator of a patch or revision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum AssignOp {
    /// `=`
    Set,
    /// `+=`
    Add,
    /// `-=`
    Sub,
    /// `*=`
    Mul,
}

/// A statement-level `if`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IfStmt {
    /// The guards (conditions and `let` bindings), all of which must hold.
    pub guards: Vec<Guard>,
    /// The statements run when they hold.
    pub then: Block,
    /// The `else` branch: a block or another `if`.
    pub otherwise: Option<Block>,
    /// The whole statement.
    pub span: Span,
}

/// A type as written.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum TypeExpr {
    /// `Name` or `Name<T, U>`, including builtins such as `Int` and `List<T>`.
    Named {
        /// The type's name (possibly dotted, for example `std.belief.Posterior`).
        name: Path,
        /// The type arguments.
        args: Vec<TypeExpr>,
        /// The whole type.
        span: Span,
    },
    /// `{ field: Type, ... }`.
    Record {
        /// The fields in declaration order.
        fields: Vec<(Ident, TypeExpr)>,
        /// The whole type.
        span: Span,
    },
    /// A type that could not be parsed.
    Invalid(Span),
}

impl TypeExpr {
    /// The span of the whole type.
    pub fn span(&self) -> Span {
        match self {
            TypeExpr::Named { span, .. } | TypeExpr::Record { span, .. } => *span,
            TypeExpr::Invalid(span) => *span,
        }
    }
}

/// An expression node.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Expr {
    /// What kind of expression it is.
    pub kind: ExprKind,
    /// The whole expression.
    pub span: Span,
}

/// The kinds of expression.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum ExprKind {
    /// An integer literal (underscores allowed in the source).
    Int(i64),
    /// A float literal.
    Float(f64),
    /// `true` or `false`.
    Bool(bool),
    /// A string literal, unescaped.
    String(String),
    /// A name: a local, a member, an item, `game`, `sim` or a type used as a namespace.
    Name(Ident),
    /// `[a, b, c]`: a list, or a set where the expected type is a set.
    List(Vec<Expr>),
    /// `Type { field: expr, ... }`: a record value.
    Record {
        /// The record type's name.
        name: Path,
        /// The field values.
        fields: Vec<(Ident, Expr)>,
    },
    /// `base.field`.
    Field(Box<Expr>, Ident),
    /// `callee(args)`: a function, action, variant, effect or observation call.
    Call(Box<Expr>, Vec<Arg>),
    /// `receiver.method(args)`.
    MethodCall(Box<Expr>, Ident, Vec<Arg>),
    /// `base[index]`.
    Index(Box<Expr>, Box<Expr>),
    /// A prefix operator.
    Unary(UnaryOp, Box<Expr>),
    /// An infix operator.
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    /// `if guards { a } else { b }`; `else` is required in expression position.
    If {
        /// The guards (conditions and `let` bindings).
        guards: Vec<Guard>,
        /// The value when they hold.
        then: Box<Expr>,
        /// The value otherwise.
        otherwise: Box<Expr>,
    },
    /// `match scrutinee { pattern => expr, ... }`.
    Match(Box<Expr>, Vec<MatchArm>),
    /// `{ let a = e1; let b = e2; result }`.
    Block(Vec<(Pattern, Expr)>, Box<Expr>),
    /// `|a, b: T| body`: a closure passed to an aggregate; it cannot escape.
    Closure(Vec<ClosureParam>, Box<Expr>),
    /// An expression that could not be parsed.
    Error,
}

/// An argument of a call, positional (`x`) or named (`hit: true`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Arg {
    /// The name for a named argument.
    pub name: Option<Ident>,
    /// The value.
    pub value: Expr,
    /// The whole argument.
    pub span: Span,
}

/// A closure parameter with an optional type annotation.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClosureParam {
    /// The parameter name.
    pub name: Ident,
    /// The annotated type, if any; otherwise it is inferred.
    pub ty: Option<TypeExpr>,
}

/// One arm of a `match`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MatchArm {
    /// The pattern.
    pub pattern: Pattern,
    /// The value when the pattern matches.
    pub body: Expr,
    /// The whole arm.
    pub span: Span,
}

/// A pattern in `match`, `let` or a guard.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Pattern {
    /// What kind of pattern it is.
    pub kind: PatternKind,
    /// The whole pattern.
    pub span: Span,
}

/// The kinds of pattern.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum PatternKind {
    /// `_`.
    Wildcard,
    /// A lower-case name: binds the value.
    Bind(Ident),
    /// A literal: integer, float, boolean or string.
    Literal(Expr),
    /// `Enum.Variant`, `Enum.Variant(p, q)`, `Some(p)` or `None`.
    Variant(Path, Vec<Pattern>),
    /// A pattern that could not be parsed.
    Error,
}

/// Prefix operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum UnaryOp {
    /// `-x`
    Neg,
    /// `not x`
    Not,
}

/// Infix operators, from loosest to tightest binding: `or`; `and`; comparisons and `in`;
/// `+ -`; `* / %`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum BinaryOp {
    /// `or`
    Or,
    /// `and`
    And,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `in`: membership in a list, set or map's keys.
    In,
    /// `not in`
    NotIn,
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%`
    Rem,
}

impl BinaryOp {
    /// The operator as written in the source.
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Or => "or",
            BinaryOp::And => "and",
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "!=",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
            BinaryOp::In => "in",
            BinaryOp::NotIn => "not in",
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Rem => "%",
        }
    }
}
