//! Runtime values.
//!
//! Every value is cheap to clone: scalars are copied and every collection sits behind an [`Arc`],
//! so cloning a list, a record or a whole snapshot copies pointers, not elements. Collections
//! that have an order in their output (`Set`, `Map`) are B-trees, so iteration order is the
//! value order and never depends on hashing. Floats are always finite ([`Float`]), which gives
//! every value a total order and lets any value be a set element or a map key.

use std::any::Any;
use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::Arc;

use harness_compiler::types::RecordTy;
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};

use crate::snapshot::{Preview, Snapshot};

/// A finite 64-bit float. NaN and the infinities cannot be represented, so an arithmetic result
/// that is not finite becomes a runtime error instead of a silent NaN.
#[derive(Clone, Copy, Debug)]
pub struct Float(f64);

impl Float {
    /// Wraps `x` when it is finite; `-0.0` is stored as `0.0` so that equal values compare equal.
    pub fn new(x: f64) -> Option<Float> {
        if x.is_finite() {
            Some(Float(if x == 0.0 { 0.0 } else { x }))
        } else {
            None
        }
    }

    /// The wrapped number.
    pub fn get(self) -> f64 {
        self.0
    }
}

impl PartialEq for Float {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Float {}

impl PartialOrd for Float {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Float {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// A value of a type that the runtime does not look inside: a game's `Cell`, the standard
/// library's belief `Posterior`, and so on.
///
/// Opaque values are immutable; a method that "changes" one returns a new value. Their identity
/// for equality, ordering and traces is their JSON form, so two opaque values are equal exactly
/// when they print the same, and ordering never depends on addresses.
pub trait Opaque: Send + Sync + fmt::Debug + 'static {
    /// The type's name as the checker knows it, for example `Posterior`.
    fn type_name(&self) -> &str;

    /// The value as JSON, used in traces and for equality and ordering. Must be deterministic.
    fn to_json(&self) -> serde_json::Value;

    /// Access to the concrete type, so that native functions can downcast their arguments.
    fn as_any(&self) -> &dyn Any;

    /// The text of [`Opaque::to_json`], which equality and ordering compare. A type whose
    /// values sit in sets or are compared often keeps its text and returns it borrowed, so a
    /// comparison does not build and print two JSON values; the text must be exactly
    /// `self.to_json().to_string()`.
    fn json_text(&self) -> std::borrow::Cow<'_, str> {
        std::borrow::Cow::Owned(self.to_json().to_string())
    }
}

/// A record value: its type and its field values in the type's declaration order.
#[derive(Clone, Debug)]
pub struct RecordValue {
    /// The record type, which names the fields.
    pub ty: Arc<RecordTy>,
    /// The field values, in declaration order of `ty`.
    pub values: Vec<Value>,
}

impl RecordValue {
    /// The value of the field called `name`.
    pub fn get(&self, name: &str) -> Option<&Value> {
        let index = self.ty.fields.iter().position(|(n, _)| n == name)?;
        self.values.get(index)
    }

    /// The type's name, or `record` for an anonymous record type.
    pub fn type_name(&self) -> &str {
        self.ty.name.as_deref().unwrap_or("record")
    }
}

// Records compare by their values first; the type only separates records of different types,
// which the checker never lets meet, so the common case never walks the type.
impl PartialEq for RecordValue {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for RecordValue {}

impl PartialOrd for RecordValue {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for RecordValue {
    fn cmp(&self, other: &Self) -> Ordering {
        self.values.cmp(&other.values).then_with(|| {
            if Arc::ptr_eq(&self.ty, &other.ty) {
                Ordering::Equal
            } else {
                self.ty.cmp(&other.ty)
            }
        })
    }
}

/// An enum variant with its payload.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct VariantValue {
    /// The enum's name.
    pub enum_name: Arc<str>,
    /// The variant's position in the declaration; variants order by it.
    pub index: u32,
    /// The variant's name.
    pub name: Arc<str>,
    /// The payload values; empty for a unit variant.
    pub payload: Vec<Value>,
}

/// A runtime value.
///
/// The tag is a whole word (`repr(u64)`), so every payload sits in the second word and a value
/// moves as two words. With a byte tag, a `Bool` or a `Closure` payload shares the first word
/// with it, and the compiler copied bytes 1 to 7 of every value as two overlapping 4-byte
/// moves that the processor cannot forward from the stores just made.
#[derive(Clone, Debug, Default)]
#[repr(u64)]
pub enum Value {
    /// The value of a statement or an action call that returns nothing.
    #[default]
    Unit,
    /// A 64-bit integer; arithmetic on it is checked.
    Int(i64),
    /// A finite float.
    Float(Float),
    /// A boolean.
    Bool(bool),
    /// A string. It sits behind a thin pointer (an `Arc<String>`, not an `Arc<str>`), as an
    /// opaque value does, so that a value is 16 bytes: a `Result<Value, RuntimeError>` is then
    /// returned in two registers rather than through memory the caller reads back in pieces.
    Str(Arc<String>),
    /// `None` or `Some(value)`.
    Option(Option<Arc<Value>>),
    /// A list, in order.
    List(Arc<Vec<Value>>),
    /// A set, in value order.
    Set(Arc<BTreeSet<Value>>),
    /// A map, in key order.
    Map(Arc<BTreeMap<Value, Value>>),
    /// A record.
    Record(Arc<RecordValue>),
    /// An enum variant.
    Variant(Arc<VariantValue>),
    /// A value of a game or standard-library type.
    Opaque(Arc<Box<dyn Opaque>>),
    /// One successor snapshot of a preview, read with `s.member`.
    Snapshot(Arc<Snapshot>),
    /// The result of `sim.next`: weighted successor snapshots.
    Preview(Arc<Preview>),
    /// A closure argument handed to a native function: an index into the closures of the
    /// current evaluation. Closures never escape the call they are passed to, so the index is
    /// valid for exactly as long as the value exists.
    Closure(u32),
}

// Every payload is at most one word, which is what keeps a value, and a result holding one, in
// two registers; a variant that grows past a word fails here rather than slowing every call.
const _: () = assert!(std::mem::size_of::<Value>() == 16);
const _: () = assert!(std::mem::size_of::<Result<Value, crate::RuntimeError>>() == 16);

impl Value {
    /// Whether the value keeps a bound a game declares for an observation's field: every
    /// collection in it, at every depth, holds at most `max` elements (map keys are not
    /// bounded), and an `Int` field lies in `0..=max` (integers inside collections are not
    /// bounded).
    pub fn within(&self, max: u64) -> bool {
        match self {
            Value::Int(n) => u64::try_from(*n).is_ok_and(|n| n <= max),
            _ => self.nested_within(max),
        }
    }

    fn nested_within(&self, max: u64) -> bool {
        let fits = |len: usize| len as u64 <= max;
        match self {
            Value::Option(inner) => inner.as_deref().is_none_or(|v| v.nested_within(max)),
            Value::List(items) => fits(items.len()) && items.iter().all(|v| v.nested_within(max)),
            Value::Set(items) => fits(items.len()) && items.iter().all(|v| v.nested_within(max)),
            Value::Map(entries) => {
                fits(entries.len()) && entries.values().all(|v| v.nested_within(max))
            }
            _ => true,
        }
    }

    /// Builds a float value, or `None` when `x` is not finite.
    pub fn float(x: f64) -> Option<Value> {
        Float::new(x).map(Value::Float)
    }

    /// Builds a string value.
    pub fn str(s: &str) -> Value {
        Value::Str(Arc::new(s.to_owned()))
    }

    /// Wraps a value of a game or standard-library type.
    pub fn opaque(value: impl Opaque) -> Value {
        Value::Opaque(Arc::new(Box::new(value)))
    }

    /// Builds a list value.
    pub fn list(items: Vec<Value>) -> Value {
        Value::List(Arc::new(items))
    }

    /// Builds `Some(v)`.
    pub fn some(v: Value) -> Value {
        Value::Option(Some(Arc::new(v)))
    }

    /// The value `None`.
    pub fn none() -> Value {
        Value::Option(None)
    }

    /// The integer, if this is an `Int`.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }

    /// The number as a float, if this is an `Int` or a `Float`.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Int(i) => Some(*i as f64),
            Value::Float(f) => Some(f.get()),
            _ => None,
        }
    }

    /// The boolean, if this is a `Bool`.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The opaque value downcast to `T`, if this is an opaque value of that Rust type.
    pub fn as_opaque<T: Opaque>(&self) -> Option<&T> {
        match self {
            Value::Opaque(o) => o.as_any().downcast_ref::<T>(),
            _ => None,
        }
    }

    /// The elements of a list or a set, in order.
    pub fn elements(&self) -> Option<Vec<Value>> {
        match self {
            Value::List(items) => Some(items.as_ref().clone()),
            Value::Set(items) => Some(items.iter().cloned().collect()),
            Value::Map(map) => Some(map.keys().cloned().collect()),
            _ => None,
        }
    }

    /// A short name of the value's kind, for error messages.
    pub fn kind_name(&self) -> &str {
        match self {
            Value::Unit => "()",
            Value::Int(_) => "Int",
            Value::Float(_) => "Float",
            Value::Bool(_) => "Bool",
            Value::Str(_) => "String",
            Value::Option(_) => "Option",
            Value::List(_) => "List",
            Value::Set(_) => "Set",
            Value::Map(_) => "Map",
            Value::Record(r) => r.type_name(),
            Value::Variant(v) => &v.enum_name,
            Value::Opaque(o) => o.type_name(),
            Value::Closure(_) => "closure",
            Value::Snapshot(_) => "Snapshot",
            Value::Preview(_) => "Preview",
        }
    }

    /// Rank of each kind, so that values of different kinds (which the checker never lets
    /// meet) still have a total order.
    fn rank(&self) -> u8 {
        match self {
            Value::Unit => 0,
            Value::Int(_) => 1,
            Value::Float(_) => 2,
            Value::Bool(_) => 3,
            Value::Str(_) => 4,
            Value::Option(_) => 5,
            Value::List(_) => 6,
            Value::Set(_) => 7,
            Value::Map(_) => 8,
            Value::Record(_) => 9,
            Value::Variant(_) => 10,
            Value::Opaque(_) => 11,
            Value::Closure(_) => 12,
            Value::Snapshot(_) => 13,
            Value::Preview(_) => 14,
        }
    }
}

impl PartialEq for Value {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            // The commonest tests (a name looked up in a list, a string against a literal) are
            // mostly of unequal strings, which `str`'s equality tells apart by their lengths
            // before it compares bytes; an order must compare the bytes first. Both agree on
            // which strings are equal.
            (Value::Str(a), Value::Str(b)) => a == b,
            (Value::Int(a), Value::Int(b)) => a == b,
            _ => self.cmp(other) == Ordering::Equal,
        }
    }
}

impl Eq for Value {}

impl PartialOrd for Value {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Value {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (Value::Unit, Value::Unit) => Ordering::Equal,
            (Value::Int(a), Value::Int(b)) => a.cmp(b),
            (Value::Float(a), Value::Float(b)) => a.cmp(b),
            (Value::Bool(a), Value::Bool(b)) => a.cmp(b),
            (Value::Str(a), Value::Str(b)) => a.cmp(b),
            (Value::Option(a), Value::Option(b)) => a.cmp(b),
            (Value::List(a), Value::List(b)) => a.cmp(b),
            (Value::Set(a), Value::Set(b)) => a.cmp(b),
            (Value::Map(a), Value::Map(b)) => a.cmp(b),
            (Value::Record(a), Value::Record(b)) => a.cmp(b),
            // Unit variants are shared, so the pointer test settles most comparisons.
            (Value::Variant(a), Value::Variant(b)) if Arc::ptr_eq(a, b) => Ordering::Equal,
            (Value::Variant(a), Value::Variant(b)) => a.cmp(b),
            // The JSON form is deterministic, so a value is equal to itself without printing it.
            (Value::Opaque(a), Value::Opaque(b)) if Arc::ptr_eq(a, b) => Ordering::Equal,
            (Value::Opaque(a), Value::Opaque(b)) => a
                .type_name()
                .cmp(b.type_name())
                .then_with(|| a.json_text().cmp(&b.json_text())),
            (Value::Closure(a), Value::Closure(b)) => a.cmp(b),
            // Snapshots and previews are never stored in sets or compared by a program; order
            // them by weight structure only so that the order stays total and deterministic.
            (Value::Preview(a), Value::Preview(b)) => a.branches.len().cmp(&b.branches.len()),
            (Value::Snapshot(_), Value::Snapshot(_)) => Ordering::Equal,
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

/// Values serialise to plain JSON: numbers, strings, arrays (lists and sets), arrays of
/// `[key, value]` pairs (maps, whose keys need not be strings), objects in declaration order
/// (records), `"Enum.Variant"` or `{"Enum.Variant": [payload]}` (variants), `null` or the value
/// (options) and the opaque value's own JSON.
impl Serialize for Value {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Value::Unit => s.serialize_unit(),
            Value::Int(i) => s.serialize_i64(*i),
            Value::Float(f) => s.serialize_f64(f.get()),
            Value::Bool(b) => s.serialize_bool(*b),
            Value::Str(t) => s.serialize_str(t),
            Value::Option(None) => s.serialize_none(),
            Value::Option(Some(v)) => v.serialize(s),
            Value::List(items) => s.collect_seq(items.iter()),
            Value::Set(items) => s.collect_seq(items.iter()),
            Value::Map(map) => {
                let mut seq = s.serialize_seq(Some(map.len()))?;
                for pair in map.iter() {
                    seq.serialize_element(&pair)?;
                }
                seq.end()
            }
            Value::Record(r) => {
                let mut m = s.serialize_map(Some(r.values.len()))?;
                for ((name, _), value) in r.ty.fields.iter().zip(&r.values) {
                    m.serialize_entry(name, value)?;
                }
                m.end()
            }
            Value::Variant(v) => {
                let name = format!("{}.{}", v.enum_name, v.name);
                if v.payload.is_empty() {
                    s.serialize_str(&name)
                } else {
                    let mut m = s.serialize_map(Some(1))?;
                    m.serialize_entry(&name, &v.payload)?;
                    m.end()
                }
            }
            Value::Opaque(o) => o.to_json().serialize(s),
            Value::Closure(_) => s.serialize_str("<closure>"),
            Value::Snapshot(_) => s.serialize_str("<snapshot>"),
            Value::Preview(p) => {
                let mut m = s.serialize_map(Some(2))?;
                m.serialize_entry("action", &*p.action)?;
                m.serialize_entry(
                    "weights",
                    &p.branches.iter().map(|b| b.0).collect::<Vec<_>>(),
                )?;
                m.end()
            }
        }
    }
}

/// Values display in the harness language's own notation, for readable run reports.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn seq(
            f: &mut fmt::Formatter<'_>,
            items: impl Iterator<Item = impl fmt::Display>,
        ) -> fmt::Result {
            for (i, item) in items.enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{item}")?;
            }
            Ok(())
        }
        match self {
            Value::Unit => f.write_str("()"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => write!(f, "{:?}", x.get()),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Str(t) => write!(f, "{t:?}"),
            Value::Option(None) => f.write_str("None"),
            Value::Option(Some(v)) => write!(f, "Some({v})"),
            Value::List(items) => {
                f.write_str("[")?;
                seq(f, items.iter())?;
                f.write_str("]")
            }
            Value::Set(items) => {
                f.write_str("{")?;
                seq(f, items.iter())?;
                f.write_str("}")
            }
            Value::Map(map) => {
                f.write_str("{")?;
                seq(f, map.iter().map(|(k, v)| format!("{k}: {v}")))?;
                f.write_str("}")
            }
            Value::Record(r) => {
                write!(f, "{} {{ ", r.type_name())?;
                seq(
                    f,
                    r.ty.fields
                        .iter()
                        .zip(&r.values)
                        .map(|((k, _), v)| format!("{k}: {v}")),
                )?;
                f.write_str(" }")
            }
            Value::Variant(v) => {
                write!(f, "{}.{}", v.enum_name, v.name)?;
                if !v.payload.is_empty() {
                    f.write_str("(")?;
                    seq(f, v.payload.iter())?;
                    f.write_str(")")?;
                }
                Ok(())
            }
            Value::Opaque(o) => write!(f, "{}", o.to_json()),
            Value::Closure(_) => f.write_str("<closure>"),
            Value::Snapshot(_) => f.write_str("<snapshot>"),
            Value::Preview(p) => write!(
                f,
                "<preview of {} with {} branches>",
                p.action,
                p.branches.len()
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness_compiler::types::Ty;

    #[test]
    fn equality_agrees_with_the_order() {
        let values = [
            Value::str("peak.load.B02"),
            Value::str("peak.load.B03"),
            Value::str("peak.load"),
            Value::str(""),
            Value::Int(3),
            Value::Int(-3),
            Value::float(3.0).expect("finite"),
            Value::Bool(true),
            Value::list(vec![Value::str("a")]),
            Value::none(),
        ];
        for a in &values {
            for b in &values {
                let same = a.cmp(b) == Ordering::Equal;
                assert_eq!(a == b, same, "{a} against {b}");
            }
        }
        // Two strings built apart, equal by their bytes.
        assert!(Value::str("peak.load.B02") == Value::str(&format!("peak.load.B{:02}", 2)));
    }

    #[test]
    fn floats_reject_nan_and_infinity_and_unify_zeroes() {
        assert!(Float::new(f64::NAN).is_none());
        assert!(Float::new(f64::INFINITY).is_none());
        assert_eq!(Float::new(-0.0), Float::new(0.0));
    }

    #[test]
    fn values_order_totally_and_serialise_deterministically() {
        let mut set = BTreeSet::new();
        set.insert(Value::Int(3));
        set.insert(Value::Int(1));
        let map: BTreeMap<Value, Value> = [
            (Value::str("b"), Value::Int(2)),
            (Value::str("a"), Value::Int(1)),
        ]
        .into();
        let ty = RecordTy {
            name: Some("R".into()),
            fields: vec![("z".into(), Ty::Int), ("a".into(), Ty::Int)],
        };
        let record = Value::Record(Arc::new(RecordValue {
            ty: Arc::new(ty),
            values: vec![Value::Set(Arc::new(set)), Value::Map(Arc::new(map))],
        }));
        let text = serde_json::to_string(&record).unwrap_or_default();
        assert_eq!(text, r#"{"z":[1,3],"a":[["a",1],["b",2]]}"#);
        assert_eq!(
            record.to_string(),
            r#"R { z: {1, 3}, a: {"a": 1, "b": 2} }"#
        );
    }
}
