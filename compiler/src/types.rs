//! The types of the harness language, shared by signatures, the checker and the IR.
//!
//! One enum serves three purposes: the types written in builtin and game signatures (which may
//! mention generic parameters), the types the checker infers (which may contain inference
//! variables while a body is being checked) and the fully resolved types recorded in the IR
//! (which contain neither).

use std::fmt;
use std::sync::Arc;

/// A type of the harness language.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Ty {
    /// 64-bit signed integer; arithmetic is checked.
    Int,
    /// 64-bit IEEE float; operations that would produce NaN are runtime errors.
    Float,
    /// `true` or `false`.
    Bool,
    /// UTF-8 text.
    String,
    /// The type of statements and of effects, which produce no value.
    Unit,
    /// `Option<T>`: `Some(value)` or `None`.
    Option(Box<Ty>),
    /// `List<T>`: an ordered, finite sequence.
    List(Box<Ty>),
    /// `Set<T>`: a finite set, iterated in ascending order of its elements.
    Set(Box<Ty>),
    /// `Map<K, V>`: a finite map, iterated in ascending order of its keys.
    Map(Box<Ty>, Box<Ty>),
    /// A record: a named `type` alias or an anonymous `{ field: Type }`.
    Record(Arc<RecordTy>),
    /// A user-declared or library enum, by qualified name.
    Enum(Arc<str>),
    /// An opaque type of the game or the standard library (`Cell`, `Grid`...).
    Opaque(Arc<str>, Vec<Ty>),
    /// A function or closure type `fn(A, B) -> R`; only as a parameter of a builtin.
    Fn(Vec<Ty>, Box<Ty>),
    /// The result of `sim.next(action)`: weighted successor snapshots.
    Preview,
    /// One successor snapshot inside a preview, read with `s.member`.
    Snapshot,
    /// A generic parameter of a signature, such as `T` in `max_by<T>`.
    Generic(Arc<str>),
    /// An inference variable; never leaves the checker.
    Var(u32),
    /// The type of an expression that already has an error; unifies with everything, so one
    /// mistake produces one diagnostic.
    Error,
}

/// The fields of a record type, in declaration order.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RecordTy {
    /// The alias name when the record was declared with `type Name = { ... }`.
    pub name: Option<String>,
    /// The fields: name and type, in declaration order. Field indices in the IR refer to this
    /// order.
    pub fields: Vec<(String, Ty)>,
}

impl Ty {
    /// True for `Int` and `Float`.
    pub fn is_numeric(&self) -> bool {
        matches!(self, Ty::Int | Ty::Float)
    }

    /// True when the type is or contains [`Ty::Error`], so a diagnostic about it would only repeat
    /// an earlier one.
    pub fn has_error(&self) -> bool {
        match self {
            Ty::Error => true,
            Ty::Option(t) | Ty::List(t) | Ty::Set(t) => t.has_error(),
            Ty::Map(k, v) => k.has_error() || v.has_error(),
            Ty::Record(r) => r.fields.iter().any(|(_, t)| t.has_error()),
            Ty::Opaque(_, args) => args.iter().any(Ty::has_error),
            Ty::Fn(params, ret) => params.iter().any(Ty::has_error) || ret.has_error(),
            _ => false,
        }
    }
}

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn list(f: &mut fmt::Formatter<'_>, items: &[Ty]) -> fmt::Result {
            for (i, t) in items.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{t}")?;
            }
            Ok(())
        }
        match self {
            Ty::Int => f.write_str("Int"),
            Ty::Float => f.write_str("Float"),
            Ty::Bool => f.write_str("Bool"),
            Ty::String => f.write_str("String"),
            Ty::Unit => f.write_str("()"),
            Ty::Option(t) => write!(f, "Option<{t}>"),
            Ty::List(t) => write!(f, "List<{t}>"),
            Ty::Set(t) => write!(f, "Set<{t}>"),
            Ty::Map(k, v) => write!(f, "Map<{k}, {v}>"),
            Ty::Record(r) => match &r.name {
                Some(name) => f.write_str(name),
                None => {
                    f.write_str("{ ")?;
                    for (i, (name, t)) in r.fields.iter().enumerate() {
                        if i > 0 {
                            f.write_str(", ")?;
                        }
                        write!(f, "{name}: {t}")?;
                    }
                    f.write_str(" }")
                }
            },
            Ty::Enum(name) => f.write_str(name),
            Ty::Opaque(name, args) => {
                f.write_str(name)?;
                if !args.is_empty() {
                    f.write_str("<")?;
                    list(f, args)?;
                    f.write_str(">")?;
                }
                Ok(())
            }
            Ty::Fn(params, ret) => {
                f.write_str("fn(")?;
                list(f, params)?;
                write!(f, ") -> {ret}")
            }
            Ty::Preview => f.write_str("Preview"),
            Ty::Snapshot => f.write_str("Snapshot"),
            Ty::Generic(name) => f.write_str(name),
            Ty::Var(_) => f.write_str("_"),
            Ty::Error => f.write_str("{unknown}"),
        }
    }
}
