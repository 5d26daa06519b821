//! What the names of a program refer to: the [`Symbol`] of every name, and the table of
//! resolutions ([`Names`]) that the checker records for each chunk as it resolves them.
//!
//! The checker is the only name resolver. Each name it resolves, declares or fails on after
//! finding its target (a read of a higher layer, a constant read where none may be) goes into the
//! chunk's table with the name's span, so the editor queries of [`crate::ide`] answer "what is
//! this", "where is it declared" and "where is it used" by looking the span up, and completion
//! knows which locals are in scope at a position.

use harness_grammar::Span;

use crate::env::{DefKey, MemberDef, MemberEntry};
use crate::types::Ty;

/// What kind of user definition a [`Symbol::Def`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DefKind {
    /// `const`.
    Const,
    /// A `config` entry.
    Config,
    /// A top-level or layer-local `fn`.
    Fn,
    /// An `error` code.
    Error,
    /// A `type` alias.
    TypeAlias,
    /// An `enum`.
    Enum,
    /// A state field.
    State,
    /// A `tunable`.
    Tunable,
    /// A `computed` value.
    Computed,
    /// An `action`.
    Action,
}

/// Which part of a game's bindings a [`Symbol::Game`] names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum GameKind {
    /// A query: a property or a query function.
    Query,
    /// An effect sent with `emit`.
    Effect,
    /// An observation handled with `on`.
    Observation,
}

/// What a name refers to.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Symbol {
    /// A user definition: an item (`layer` is `None`) or a layer member.
    Def(DefKey, DefKind),
    /// A layer.
    Layer {
        /// The module that declares it.
        module: String,
        /// Its name.
        name: String,
    },
    /// An enum variant; `module` is `None` for an enum of the library or the game (and for
    /// `Some`/`None`).
    Variant {
        /// The module that declares the enum.
        module: Option<String>,
        /// The enum's name.
        enum_name: String,
        /// The variant's name.
        variant: String,
    },
    /// A field of a record `type` alias.
    Field {
        /// The alias.
        record: DefKey,
        /// The field's name.
        field: String,
    },
    /// A local: a parameter, a `let` or pattern binding, a closure parameter.
    Local {
        /// The file that declares it.
        file: String,
        /// Where its name is declared, in the file.
        span: Span,
    },
    /// A builtin, by registry name (`abs`, `List.max_by`, `Posterior.prior`).
    Builtin(String),
    /// A binding of the game.
    Game(GameKind, String),
    /// A type that is not declared in a harness file: a primitive, a library or a game type.
    LibraryType(String),
}

impl Symbol {
    /// The symbol of a layer member.
    pub fn member(entry: &MemberEntry) -> Self {
        let kind = match entry.def {
            MemberDef::State(..) => DefKind::State,
            MemberDef::Tunable(..) => DefKind::Tunable,
            MemberDef::Computed(..) => DefKind::Computed,
            MemberDef::Fn(_) => DefKind::Fn,
            MemberDef::Action(..) => DefKind::Action,
        };
        Symbol::Def(entry.key.clone(), kind)
    }

    /// A variant of the builtin `Option` (`Some` or `None`).
    pub fn option_variant(variant: &str) -> Self {
        Symbol::Variant {
            module: None,
            enum_name: "Option".into(),
            variant: variant.into(),
        }
    }
}

/// The resolutions of one chunk, with spans relative to the chunk.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Names {
    /// Every name the checker resolved or declared, in the order it met them: the name's span
    /// and its symbol. A [`Symbol::Local`] here has an empty `file` and the chunk-relative span
    /// of the local's declaration; the editor queries place it in its file.
    pub refs: Vec<(Span, Symbol)>,
    /// Every local the chunk declares, in declaration order.
    pub locals: Vec<LocalDecl>,
}

/// A local variable as the editor sees it: where it is declared, its type and how far it is
/// visible.
#[derive(Clone, Debug, PartialEq)]
pub struct LocalDecl {
    /// Its name.
    pub name: String,
    /// Where its name is declared.
    pub span: Span,
    /// Its inferred or declared type.
    pub ty: Ty,
    /// Where its scope ends: the end of the block, arm, closure or definition that declares it.
    pub scope_end: u32,
}
