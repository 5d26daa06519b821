//! Signatures given to the checker as input: builtins, standard-library modules and game bindings.
//!
//! The compiler never depends on the crates that implement these (`stdlib`, `games/*`); they
//! describe themselves with this data model and the caller hands the result to the
//! [`crate::Workspace`]. One [`Builtin`] entry carries everything a tool needs about a builtin:
//! its registry name (which the interpreter uses to attach the native implementation), its
//! signature, a one-line documentation and an example.
//!
//! Entries are written as one line each, in the harness type syntax plus function types:
//!
//! ```
//! use harness_compiler::signatures::SignatureSet;
//!
//! let mut set = SignatureSet::default();
//! set.builtin(
//!     "fn max_by<T>(self: List<T>, key: fn(T) -> Float) -> Option<T>",
//!     "The element with the largest key; `None` for an empty list.",
//!     "[1, 3, 2].max_by(|x| x.to_float()) == Some(3)",
//! );
//! assert!(set.problems.is_empty());
//! assert_eq!(set.builtins[0].name, "List.max_by");
//! ```
//!
//! A first parameter named `self` makes the entry a method of its type (`List.max_by`); a dotted
//! name makes it a static function of a type (`fn Posterior.prior(...)`); otherwise it is a free
//! function (`abs`). A generic parameter may carry the bound `Num` (`Int` or `Float`). Record
//! types are written `{ weight: Float, state: Snapshot }`.

use std::sync::Arc;

use crate::types::{RecordTy, Ty};

/// The enum every game's bindings carry, one variant per effect named as the effect: effects
/// as values, so that a harness can compute the set of effects a layer may use.
pub const EFFECT_ENUM: &str = "Effect";

/// A parsed function signature.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FnSig {
    /// The generic parameters, for example `T` in `max_by<T>`.
    pub generics: Vec<Generic>,
    /// The parameters, `self` first for a method.
    pub params: Vec<ParamSig>,
    /// The result type; [`Ty::Unit`] when the signature has no `-> T`.
    pub ret: Ty,
}

/// A generic parameter of a signature.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Generic {
    /// Its name.
    pub name: Arc<str>,
    /// True when it is bounded by `Num`: only `Int` or `Float` may stand for it.
    pub numeric: bool,
}

/// One parameter of a signature.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ParamSig {
    /// The parameter name, also usable as a named argument.
    pub name: String,
    /// Its type.
    pub ty: Ty,
}

/// What kind of callable a builtin is.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum BuiltinKind {
    /// A free function, called as `name(args)`.
    Function,
    /// A method of the named type constructor (`List`, `Int`, `Grid`...), called as
    /// `receiver.name(args)`.
    Method(String),
    /// A static function of the named type, called as `Type.name(args)`.
    Static(String),
}

/// One builtin: a free function, a method or a static function of a type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Builtin {
    /// The registry name, unique: `abs`, `List.max_by`, `Posterior.prior`. The interpreter
    /// attaches native implementations by this name.
    pub name: String,
    /// The name as called in source: `abs`, `max_by`, `prior`.
    pub short_name: String,
    /// What kind of callable it is.
    pub kind: BuiltinKind,
    /// The signature.
    pub sig: FnSig,
    /// The signature as written in the registry, for documentation.
    pub text: String,
    /// One line of documentation.
    pub doc: String,
    /// An example of its use.
    pub example: String,
    /// The module that must be imported to see it (`std.stats`); `None` for the prelude, or for
    /// members of a game, which come with `use game`.
    pub module: Option<String>,
}

/// An opaque type provided by the standard library or a game.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TypeSig {
    /// Its name, `Cell` or `Grid`.
    pub name: String,
    /// How many type arguments it takes (`Grid<T>`: 1).
    pub arity: usize,
    /// One line of documentation.
    pub doc: String,
    /// The module that exports it; `None` for the prelude or a game.
    pub module: Option<String>,
}

/// An enum provided by the standard library or a game.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct EnumSig {
    /// Its name.
    pub name: String,
    /// The variants: name and payload types.
    pub variants: Vec<(String, Vec<Ty>)>,
    /// One line of documentation.
    pub doc: String,
    /// The module that exports it; `None` for the prelude or a game.
    pub module: Option<String>,
}

/// A query of a game's agent-visible view: a property (`game.probes_left`) or a function
/// (`game.unknown_cells()`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct QuerySig {
    /// The name after `game.`.
    pub name: String,
    /// The parameters and result; `None` for a property, whose type is [`QuerySig::ty`].
    pub sig: Option<FnSig>,
    /// The property's type, or the function's result type.
    pub ty: Ty,
    /// One line of documentation.
    pub doc: String,
    /// An example.
    pub example: String,
}

/// An effect (`probe(cell: Int)`) or an observation (`answer(cell: Int, dir: Dir)`) of a game.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MessageSig {
    /// The name after `game.`.
    pub name: String,
    /// The parameters (for an observation: its fields, in order).
    pub params: Vec<ParamSig>,
    /// One line of documentation.
    pub doc: String,
}

/// The bindings of one game, visible after `use game <name>`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct GameSig {
    /// The game's name.
    pub name: String,
    /// One line of documentation.
    pub doc: String,
    /// Its opaque types.
    pub types: Vec<TypeSig>,
    /// Its enums.
    pub enums: Vec<EnumSig>,
    /// Methods and static functions of its types.
    pub builtins: Vec<Builtin>,
    /// Queries of the agent-visible view.
    pub queries: Vec<QuerySig>,
    /// Effects the harness may emit.
    pub effects: Vec<MessageSig>,
    /// Observations the game sends back.
    pub observations: Vec<MessageSig>,
    /// Gated effects: only a layer that declares `uses game.<name>`, or a layer that needs
    /// one, may emit them (a level of a provisioning ladder, for example).
    pub gated: Vec<String>,
    /// Declared bounds of queries, for the cost bound of a turn ([`crate::cost`]): the most
    /// elements a collection query returns, or the largest value of an `Int` one. A key made by
    /// [`observation_field`] bounds a field of an observation instead.
    pub bounds: Vec<(String, u64)>,
    /// Signature strings that failed to parse (a bug in the bindings, reported as an internal
    /// error by the checker).
    pub problems: Vec<String>,
}

/// The key of [`GameSig::bounds`] that bounds a field of an observation: `on <observation>.<field>`,
/// which no query name can be.
pub fn observation_field(observation: &str, field: &str) -> String {
    format!("on {observation}.{field}")
}

/// The key of [`GameSig::bounds`] that bounds the observations of an episode
/// ([`GameSig::episode_observations`]); no query name has a space.
pub const EPISODE_OBSERVATIONS: &str = "episode observations";

/// The key of [`GameSig::bounds`] that bounds the distinct values of an opaque type
/// ([`GameSig::distinct`]).
pub fn distinct_values(name: &str) -> String {
    format!("type {name}")
}

/// Every signature known to a workspace: the builtins and library modules, and the games.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct SignatureSet {
    /// Builtins of the prelude and the standard-library modules.
    pub builtins: Vec<Builtin>,
    /// Opaque types of the standard library.
    pub types: Vec<TypeSig>,
    /// Enums of the standard library.
    pub enums: Vec<EnumSig>,
    /// The standard-library module paths (`std.stats`), including those with only functions.
    pub modules: Vec<String>,
    /// The games.
    pub games: Vec<GameSig>,
    /// Signature strings that failed to parse.
    pub problems: Vec<String>,
}

impl SignatureSet {
    /// Adds a prelude builtin from its one-line signature.
    pub fn builtin(&mut self, sig: &str, doc: &str, example: &str) -> &mut Self {
        match parse_builtin(sig, doc, example, None) {
            Ok(builtin) => self.builtins.push(builtin),
            Err(problem) => self.problems.push(problem),
        }
        self
    }

    /// Adds a builtin of a standard-library module (`std.stats`), visible once imported.
    pub fn module_builtin(
        &mut self,
        module: &str,
        sig: &str,
        doc: &str,
        example: &str,
    ) -> &mut Self {
        self.module(module);
        match parse_builtin(sig, doc, example, Some(module)) {
            Ok(builtin) => self.builtins.push(builtin),
            Err(problem) => self.problems.push(problem),
        }
        self
    }

    /// Declares a standard-library module path.
    pub fn module(&mut self, module: &str) -> &mut Self {
        if !self.modules.iter().any(|m| m == module) {
            self.modules.push(module.to_owned());
        }
        self
    }

    /// Adds an opaque type, `"Posterior"` or `"Grid<T>"`, of a module (or the prelude).
    pub fn opaque(&mut self, module: Option<&str>, decl: &str, doc: &str) -> &mut Self {
        if let Some(module) = module {
            self.module(module);
        }
        match parse_type_decl(decl) {
            Ok((name, arity)) => self.types.push(TypeSig {
                name,
                arity,
                doc: doc.to_owned(),
                module: module.map(str::to_owned),
            }),
            Err(problem) => self.problems.push(problem),
        }
        self
    }

    /// Adds an enum of a module, `"enum Backend { Exact, Mcmc, Smc(Int) }"`.
    pub fn enumeration(&mut self, module: Option<&str>, decl: &str, doc: &str) -> &mut Self {
        if let Some(module) = module {
            self.module(module);
        }
        match parse_enum(decl, doc, module) {
            Ok(sig) => self.enums.push(sig),
            Err(problem) => self.problems.push(problem),
        }
        self
    }

    /// Adds a game's bindings, with the enum [`EFFECT_ENUM`] of its effects unless the game
    /// declares an enum of that name itself.
    pub fn game(&mut self, mut game: GameSig) -> &mut Self {
        if !game.enums.iter().any(|e| e.name == EFFECT_ENUM) {
            let variants = game
                .effects
                .iter()
                .map(|effect| (effect.name.clone(), Vec::new()))
                .collect();
            game.enums.push(EnumSig {
                name: EFFECT_ENUM.to_owned(),
                variants,
                doc: "The game's effects as values, one variant per effect under its own name (`Effect.probe` names `game.probe`): what a capability layer exposes.".to_owned(),
                module: None,
            });
        }
        self.games.push(game);
        self
    }

    /// Merges another set into this one (for example the stdlib registry and a game's).
    pub fn extend(&mut self, other: SignatureSet) -> &mut Self {
        self.builtins.extend(other.builtins);
        self.types.extend(other.types);
        self.enums.extend(other.enums);
        for module in other.modules {
            self.module(&module);
        }
        self.games.extend(other.games);
        self.problems.extend(other.problems);
        self
    }

    /// Every problem found while building the set, including those of its games.
    pub fn all_problems(&self) -> Vec<String> {
        let mut all = self.problems.clone();
        for game in &self.games {
            all.extend(
                game.problems
                    .iter()
                    .map(|p| format!("game {}: {p}", game.name)),
            );
        }
        all
    }
}

impl GameSig {
    /// Starts the bindings of a game.
    pub fn new(name: &str, doc: &str) -> Self {
        Self {
            name: name.to_owned(),
            doc: doc.to_owned(),
            ..Self::default()
        }
    }

    /// Adds an opaque type, `"Cell"` or `"Grid<T>"`.
    pub fn opaque(&mut self, decl: &str, doc: &str) -> &mut Self {
        match parse_type_decl(decl) {
            Ok((name, arity)) => self.types.push(TypeSig {
                name,
                arity,
                doc: doc.to_owned(),
                module: None,
            }),
            Err(problem) => self.problems.push(problem),
        }
        self
    }

    /// Adds an enum, `"enum Axis { Row, Column }"`.
    pub fn enumeration(&mut self, decl: &str, doc: &str) -> &mut Self {
        match parse_enum(decl, doc, None) {
            Ok(sig) => self.enums.push(sig),
            Err(problem) => self.problems.push(problem),
        }
        self
    }

    /// Adds a method or static function of one of the game's types.
    pub fn method(&mut self, sig: &str, doc: &str, example: &str) -> &mut Self {
        match parse_builtin(sig, doc, example, None) {
            Ok(builtin) => self.builtins.push(builtin),
            Err(problem) => self.problems.push(problem),
        }
        self
    }

    /// Adds a query: a property `"probes_left: Int"` or a function
    /// `"fn is_unknown(cell: Cell) -> Bool"`.
    pub fn query(&mut self, sig: &str, doc: &str, example: &str) -> &mut Self {
        let parsed = if sig.trim_start().starts_with("fn ") {
            parse_fn(sig).map(|(name, sig)| QuerySig {
                name,
                ty: sig.ret.clone(),
                sig: Some(sig),
                doc: doc.to_owned(),
                example: example.to_owned(),
            })
        } else {
            parse_property(sig).map(|(name, ty)| QuerySig {
                name,
                sig: None,
                ty,
                doc: doc.to_owned(),
                example: example.to_owned(),
            })
        };
        match parsed {
            Ok(query) => self.queries.push(query),
            Err(problem) => self.problems.push(problem),
        }
        self
    }

    /// Declares a bound of the query `name`: the most elements its collection holds, or for an
    /// `Int` query its largest value (its least is taken to be 0). The checker's cost bound of a
    /// turn ([`crate::cost`]) uses it; a query without one counts as unbounded there.
    pub fn bound(&mut self, name: &str, max: u64) -> &mut Self {
        if !self.queries.iter().any(|q| q.name == name) {
            self.problems.push(format!(
                "`{name}` is bounded but is not a query of `{}`",
                self.name
            ));
        }
        self.bounds.retain(|(n, _)| n != name);
        self.bounds.push((name.to_owned(), max));
        self
    }

    /// Declares a bound of the field `field` of the observation `observation`: the most elements
    /// its collection holds and every collection nested in it holds (for an `Int` field, its
    /// largest value, its least taken to be 0). The checker's cost bound gives a handler's
    /// parameter this size, and the runtime ends the observe phase with R0011 when the game sends
    /// a longer one, so the bound is a checked contract rather than a promise.
    pub fn observation_bound(&mut self, observation: &str, field: &str, max: u64) -> &mut Self {
        let known = self
            .observations
            .iter()
            .find(|o| o.name == observation)
            .is_some_and(|o| o.params.iter().any(|p| p.name == field));
        if !known {
            self.problems.push(format!(
                "`{observation}.{field}` is bounded but is not a field of an observation of `{}`",
                self.name
            ));
        }
        let key = observation_field(observation, field);
        self.bounds.retain(|(n, _)| *n != key);
        self.bounds.push((key, max));
        self
    }

    /// Declares that an episode of this game sends at most `max` observations in all, which
    /// bounds a state that observation handlers grow, in the checker's cost bound.
    pub fn episode_observations(&mut self, max: u64) -> &mut Self {
        self.bounds.retain(|(n, _)| n != EPISODE_OBSERVATIONS);
        self.bounds.push((EPISODE_OBSERVATIONS.to_owned(), max));
        self
    }

    /// Declares that the opaque type `name` has at most `max` distinct values, which bounds a
    /// set of them or a map keyed by them in the checker's cost bound.
    pub fn distinct(&mut self, name: &str, max: u64) -> &mut Self {
        if !self.types.iter().any(|t| t.name == name) {
            self.problems.push(format!(
                "`{name}` has a count of values but is not a type of `{}`",
                self.name
            ));
        }
        let key = distinct_values(name);
        self.bounds.retain(|(n, _)| *n != key);
        self.bounds.push((key, max));
        self
    }

    /// Adds an effect, `"fn probe(cell: Int)"`.
    pub fn effect(&mut self, sig: &str, doc: &str) -> &mut Self {
        match parse_message(sig, doc) {
            Ok(message) => self.effects.push(message),
            Err(problem) => self.problems.push(problem),
        }
        self
    }

    /// Gates the effect `name`: only layers that `uses game.<name>` (or need one that does)
    /// may emit it.
    pub fn gate(&mut self, name: &str) -> &mut Self {
        if !self.gated.iter().any(|g| g == name) {
            self.gated.push(name.to_owned());
        }
        self
    }

    /// Adds an observation, `"fn answer(cell: Int, dir: Dir)"`.
    pub fn observation(&mut self, sig: &str, doc: &str) -> &mut Self {
        match parse_message(sig, doc) {
            Ok(message) => self.observations.push(message),
            Err(problem) => self.problems.push(problem),
        }
        self
    }
}

fn parse_builtin(
    sig: &str,
    doc: &str,
    example: &str,
    module: Option<&str>,
) -> Result<Builtin, String> {
    let (name, parsed) = parse_fn(sig)?;
    let (kind, short_name, registry_name) = if let Some((ty, short)) = name.split_once('.') {
        (
            BuiltinKind::Static(ty.to_owned()),
            short.to_owned(),
            name.clone(),
        )
    } else if let Some(first) = parsed.params.first().filter(|p| p.name == "self") {
        let owner = type_constructor(&first.ty)
            .ok_or_else(|| format!("`{sig}`: `self` must have a named type"))?;
        (
            BuiltinKind::Method(owner.clone()),
            name.clone(),
            format!("{owner}.{name}"),
        )
    } else {
        (BuiltinKind::Function, name.clone(), name.clone())
    };
    Ok(Builtin {
        name: registry_name,
        short_name,
        kind,
        sig: parsed,
        text: sig.trim().to_owned(),
        doc: doc.to_owned(),
        example: example.to_owned(),
        module: module.map(str::to_owned),
    })
}

fn parse_message(sig: &str, doc: &str) -> Result<MessageSig, String> {
    let (name, parsed) = parse_fn(sig)?;
    Ok(MessageSig {
        name,
        params: parsed.params,
        doc: doc.to_owned(),
    })
}

/// The name of a type's constructor, under which its methods are registered.
pub fn type_constructor(ty: &Ty) -> Option<String> {
    Some(match ty {
        Ty::Int => "Int".into(),
        Ty::Float => "Float".into(),
        Ty::Bool => "Bool".into(),
        Ty::String => "String".into(),
        Ty::Option(_) => "Option".into(),
        Ty::List(_) => "List".into(),
        Ty::Set(_) => "Set".into(),
        Ty::Map(..) => "Map".into(),
        Ty::Record(r) => r.name.clone()?,
        Ty::Enum(name) => name.to_string(),
        Ty::Opaque(name, _) => name.to_string(),
        Ty::Preview => "Preview".into(),
        Ty::Snapshot => "Snapshot".into(),
        _ => return None,
    })
}

/// A tiny tokenizer and recursive-descent parser for signature strings.
struct SigParser<'a> {
    text: &'a str,
    rest: &'a str,
    generics: Vec<Generic>,
}

impl<'a> SigParser<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            text,
            rest: text,
            generics: Vec::new(),
        }
    }

    fn problem(&self, what: &str) -> String {
        let at = self.text.len() - self.rest.len();
        format!("`{}`: {what} at byte {at}", self.text)
    }

    fn skip_ws(&mut self) {
        self.rest = self.rest.trim_start();
    }

    fn eat(&mut self, token: &str) -> bool {
        self.skip_ws();
        if let Some(rest) = self.rest.strip_prefix(token) {
            self.rest = rest;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, token: &str) -> Result<(), String> {
        if self.eat(token) {
            Ok(())
        } else {
            Err(self.problem(&format!("expected `{token}`")))
        }
    }

    fn ident(&mut self) -> Result<String, String> {
        self.skip_ws();
        let len = self
            .rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(self.rest.len());
        if len == 0 || self.rest.starts_with(|c: char| c.is_ascii_digit()) {
            return Err(self.problem("expected a name"));
        }
        let (name, rest) = self.rest.split_at(len);
        self.rest = rest;
        Ok(name.to_owned())
    }

    fn at_end(&mut self) -> bool {
        self.skip_ws();
        self.rest.is_empty()
    }

    fn ty(&mut self) -> Result<Ty, String> {
        if self.eat("fn") {
            self.expect("(")?;
            let mut params = Vec::new();
            while !self.eat(")") {
                params.push(self.ty()?);
                if !self.eat(",") {
                    self.expect(")")?;
                    break;
                }
            }
            self.expect("->")?;
            let ret = self.ty()?;
            return Ok(Ty::Fn(params, Box::new(ret)));
        }
        if self.eat("()") {
            return Ok(Ty::Unit);
        }
        if self.eat("{") {
            let mut fields = Vec::new();
            while !self.eat("}") {
                let name = self.ident()?;
                self.expect(":")?;
                fields.push((name, self.ty()?));
                if !self.eat(",") {
                    self.expect("}")?;
                    break;
                }
            }
            return Ok(Ty::Record(Arc::new(RecordTy { name: None, fields })));
        }
        let name = self.ident()?;
        let mut args = Vec::new();
        if self.eat("<") {
            loop {
                args.push(self.ty()?);
                if !self.eat(",") {
                    break;
                }
            }
            self.expect(">")?;
        }
        let arity = |n: usize, this: &Self| {
            if args.len() == n {
                Ok(())
            } else {
                Err(this.problem(&format!("`{name}` takes {n} type argument(s)")))
            }
        };
        let mut args_iter = args.clone().into_iter();
        let mut next = || Box::new(args_iter.next().unwrap_or(Ty::Error));
        Ok(match name.as_str() {
            "Int" | "Float" | "Bool" | "String" | "Preview" | "Snapshot" => {
                arity(0, self)?;
                match name.as_str() {
                    "Int" => Ty::Int,
                    "Float" => Ty::Float,
                    "Bool" => Ty::Bool,
                    "String" => Ty::String,
                    "Preview" => Ty::Preview,
                    _ => Ty::Snapshot,
                }
            }
            "Option" => {
                arity(1, self)?;
                Ty::Option(next())
            }
            "List" => {
                arity(1, self)?;
                Ty::List(next())
            }
            "Set" => {
                arity(1, self)?;
                Ty::Set(next())
            }
            "Map" => {
                arity(2, self)?;
                Ty::Map(next(), next())
            }
            _ if self.generics.iter().any(|g| *g.name == *name) => {
                arity(0, self)?;
                Ty::Generic(name.into())
            }
            // Enums are told apart from opaque types when the set is assembled; see
            // `SignatureSet` users in the checker, which look the name up in both tables.
            _ => Ty::Opaque(name.into(), args),
        })
    }
}

/// Parses `fn name<G>(p: T, ...) -> R` (the `-> R` is optional) into its name and signature.
pub fn parse_fn(text: &str) -> Result<(String, FnSig), String> {
    let mut p = SigParser::new(text);
    p.expect("fn")?;
    let mut name = p.ident()?;
    if p.eat(".") {
        name = format!("{name}.{}", p.ident()?);
    }
    if p.eat("<") {
        loop {
            let generic = p.ident()?;
            let numeric = if p.eat(":") {
                let bound = p.ident()?;
                if bound != "Num" {
                    return Err(p.problem("the only bound is `Num`"));
                }
                true
            } else {
                false
            };
            p.generics.push(Generic {
                name: generic.into(),
                numeric,
            });
            if !p.eat(",") {
                break;
            }
        }
        p.expect(">")?;
    }
    p.expect("(")?;
    let mut params = Vec::new();
    while !p.eat(")") {
        let param = p.ident()?;
        p.expect(":")?;
        params.push(ParamSig {
            name: param,
            ty: p.ty()?,
        });
        if !p.eat(",") {
            p.expect(")")?;
            break;
        }
    }
    let ret = if p.eat("->") { p.ty()? } else { Ty::Unit };
    if !p.at_end() {
        return Err(p.problem("unexpected text"));
    }
    Ok((
        name,
        FnSig {
            generics: p.generics,
            params,
            ret,
        },
    ))
}

fn parse_property(text: &str) -> Result<(String, Ty), String> {
    let mut p = SigParser::new(text);
    let name = p.ident()?;
    p.expect(":")?;
    let ty = p.ty()?;
    if !p.at_end() {
        return Err(p.problem("unexpected text"));
    }
    Ok((name, ty))
}

fn parse_type_decl(text: &str) -> Result<(String, usize), String> {
    let mut p = SigParser::new(text);
    let name = p.ident()?;
    let mut arity = 0;
    if p.eat("<") {
        loop {
            p.ident()?;
            arity += 1;
            if !p.eat(",") {
                break;
            }
        }
        p.expect(">")?;
    }
    if !p.at_end() {
        return Err(p.problem("unexpected text"));
    }
    Ok((name, arity))
}

fn parse_enum(text: &str, doc: &str, module: Option<&str>) -> Result<EnumSig, String> {
    let mut p = SigParser::new(text);
    p.expect("enum")?;
    let name = p.ident()?;
    p.expect("{")?;
    let mut variants = Vec::new();
    while !p.eat("}") {
        let variant = p.ident()?;
        let mut payload = Vec::new();
        if p.eat("(") {
            loop {
                payload.push(p.ty()?);
                if !p.eat(",") {
                    break;
                }
            }
            p.expect(")")?;
        }
        variants.push((variant, payload));
        if !p.eat(",") {
            p.expect("}")?;
            break;
        }
    }
    if !p.at_end() {
        return Err(p.problem("unexpected text"));
    }
    Ok(EnumSig {
        name,
        variants,
        doc: doc.to_owned(),
        module: module.map(str::to_owned),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_generic_method_with_closure_parameter() {
        let (name, sig) = parse_fn("fn max_by<T>(self: List<T>, key: fn(T) -> Float) -> Option<T>")
            .expect("valid signature");
        assert_eq!(name, "max_by");
        assert_eq!(sig.params.len(), 2);
        assert_eq!(sig.params[1].ty.to_string(), "fn(T) -> Float");
        assert_eq!(sig.ret.to_string(), "Option<T>");
    }

    #[test]
    fn parses_record_types() {
        let (_, sig) =
            parse_fn("fn branches(self: Preview) -> List<{ weight: Float, state: Snapshot }>")
                .expect("valid signature");
        assert_eq!(
            sig.ret.to_string(),
            "List<{ weight: Float, state: Snapshot }>"
        );
    }

    #[test]
    fn rejects_malformed_signature() {
        assert!(parse_fn("fn broken(x Int)").is_err());
        assert!(parse_fn("fn f(x: Map<Int>)").is_err());
    }

    #[test]
    fn static_functions_and_methods_get_qualified_names() {
        let mut game = GameSig::new("g", "");
        game.method("fn Posterior.prior(particles: Int) -> Posterior", "", "")
            .method("fn p_yes(self: Posterior, q: Question) -> Float", "", "")
            .query("probes_left: Int", "", "")
            .effect("fn fire(cell: Cell)", "");
        assert!(game.problems.is_empty(), "{:?}", game.problems);
        assert_eq!(game.builtins[0].name, "Posterior.prior");
        assert_eq!(game.builtins[1].name, "Posterior.p_yes");
        assert_eq!(game.queries[0].ty, Ty::Int);
    }
}
