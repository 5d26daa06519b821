//! The prelude: builtins every harness sees without a `use`.
//!
//! [`PRELUDE`] is the one list of these builtins: each entry carries its registry name, its
//! signature in the checker's signature syntax, one line of documentation, an example and its
//! native implementation. The checker reads the signatures, the interpreter the natives,
//! `harness explain` the documentation, from this same table.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::sync::Arc;

use harness_compiler::signatures::SignatureSet;
use harness_runtime::{ErrorCode, NativeCtx, NativeError, Natives, Value};

/// A native implementation.
pub type Native = fn(&mut dyn NativeCtx, &[Value]) -> Result<Value, NativeError>;

/// One builtin of the registry.
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    /// The registry name the interpreter looks up (`List.max_by`).
    pub name: &'static str,
    /// The signature, in the checker's one-line syntax.
    pub sig: &'static str,
    /// One line of documentation.
    pub doc: &'static str,
    /// An example of its use.
    pub example: &'static str,
    /// The implementation.
    pub native: Native,
}

/// The longest list `range` builds: iteration stays over finite, modest collections.
pub const MAX_RANGE: i64 = 1_000_000;

fn arg(args: &[Value], i: usize) -> Result<&Value, NativeError> {
    args.get(i)
        .ok_or_else(|| NativeError::Failed(ErrorCode::Internal, format!("missing argument {i}")))
}

/// The elements of a list (borrowed) or of a set or a map's keys (collected).
fn items(v: &Value) -> Result<Cow<'_, [Value]>, NativeError> {
    match v {
        Value::List(items) => Ok(Cow::Borrowed(items.as_slice())),
        other => other.elements().map(Cow::Owned).ok_or_else(|| {
            NativeError::Failed(
                ErrorCode::Internal,
                format!("expected a collection, found {}", other.kind_name()),
            )
        }),
    }
}

fn truth(v: Value) -> Result<bool, NativeError> {
    v.as_bool()
        .ok_or_else(|| NativeError::Failed(ErrorCode::Internal, "expected Bool".into()))
}

fn key(v: Value) -> Result<f64, NativeError> {
    v.as_f64()
        .ok_or_else(|| NativeError::Failed(ErrorCode::Internal, "expected a number".into()))
}

fn float(x: f64) -> Result<Value, NativeError> {
    Value::float(x).ok_or_else(|| {
        NativeError::Failed(
            ErrorCode::NotFinite,
            format!("the result {x} is not finite"),
        )
    })
}

fn range(_: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    let (lo, hi) = (
        arg(args, 0)?.as_int().unwrap_or(0),
        arg(args, 1)?.as_int().unwrap_or(0),
    );
    if hi.saturating_sub(lo) > MAX_RANGE {
        return Err(NativeError::msg(format!(
            "range({lo}, {hi}) would hold more than {MAX_RANGE} elements"
        )));
    }
    Ok(Value::list((lo..hi.max(lo)).map(Value::Int).collect()))
}

fn len(_: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    Ok(Value::Int(items(arg(args, 0)?)?.len() as i64))
}

fn map(ctx: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    let f = arg(args, 1)?;
    let out = items(arg(args, 0)?)?
        .into_iter()
        .map(|x| ctx.call(f, std::slice::from_ref(x)))
        .collect::<Result<_, _>>()?;
    Ok(Value::list(out))
}

fn filter(ctx: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    let f = arg(args, 1)?;
    let mut out = Vec::new();
    for x in items(arg(args, 0)?)?.iter() {
        if truth(ctx.call(f, std::slice::from_ref(x))?)? {
            out.push(x.clone());
        }
    }
    Ok(Value::list(out))
}

fn count(ctx: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    let f = arg(args, 1)?;
    let mut n = 0;
    for x in items(arg(args, 0)?)?.iter() {
        n += i64::from(truth(ctx.call(f, std::slice::from_ref(x))?)?);
    }
    Ok(Value::Int(n))
}

fn any(ctx: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    let f = arg(args, 1)?;
    for x in items(arg(args, 0)?)?.iter() {
        if truth(ctx.call(f, std::slice::from_ref(x))?)? {
            return Ok(Value::Bool(true));
        }
    }
    Ok(Value::Bool(false))
}

fn all(ctx: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    let f = arg(args, 1)?;
    for x in items(arg(args, 0)?)?.iter() {
        if !truth(ctx.call(f, std::slice::from_ref(x))?)? {
            return Ok(Value::Bool(false));
        }
    }
    Ok(Value::Bool(true))
}

/// The element with the best key; ties go to the earliest element, so the result never depends
/// on anything but the list's order.
fn best_by(
    ctx: &mut dyn NativeCtx,
    args: &[Value],
    better: fn(f64, f64) -> bool,
) -> Result<Value, NativeError> {
    let f = arg(args, 1)?;
    let mut best: Option<(f64, Value)> = None;
    for x in items(arg(args, 0)?)?.iter() {
        let k = key(ctx.call(f, std::slice::from_ref(x))?)?;
        if best.as_ref().is_none_or(|(b, _)| better(k, *b)) {
            best = Some((k, x.clone()));
        }
    }
    Ok(best.map_or_else(Value::none, |(_, x)| Value::some(x)))
}

fn max_by(ctx: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    best_by(ctx, args, |a, b| a > b)
}

fn min_by(ctx: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    best_by(ctx, args, |a, b| a < b)
}

fn sum(_: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    let xs = items(arg(args, 0)?)?;
    if xs.iter().all(|x| matches!(x, Value::Int(_))) {
        let mut total: i64 = 0;
        for x in xs.iter() {
            total = total.checked_add(x.as_int().unwrap_or(0)).ok_or_else(|| {
                NativeError::Failed(ErrorCode::Overflow, "the sum overflows Int".into())
            })?;
        }
        return Ok(Value::Int(total));
    }
    float(xs.iter().map(|x| x.as_f64().unwrap_or(0.0)).sum())
}

fn extreme(args: &[Value], max: bool) -> Result<Value, NativeError> {
    let xs = items(arg(args, 0)?)?;
    let best = if max {
        xs.iter().max()
    } else {
        xs.iter().min()
    };
    Ok(best.cloned().map_or_else(Value::none, Value::some))
}

fn list_max(_: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    extreme(args, true)
}

fn list_min(_: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    extreme(args, false)
}

fn get(_: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    let xs = items(arg(args, 0)?)?;
    let i = arg(args, 1)?.as_int().unwrap_or(-1);
    Ok(usize::try_from(i)
        .ok()
        .and_then(|i| xs.get(i).cloned())
        .map_or_else(Value::none, Value::some))
}

fn unwrap(_: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    match arg(args, 0)? {
        Value::Option(Some(v)) => Ok(v.as_ref().clone()),
        _ => Err(NativeError::Failed(
            ErrorCode::NoneUnwrapped,
            "the value is `None`; match on it or use `unwrap_or`".into(),
        )),
    }
}

fn unwrap_or(_: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    match arg(args, 0)? {
        Value::Option(Some(v)) => Ok(v.as_ref().clone()),
        _ => Ok(arg(args, 1)?.clone()),
    }
}

fn take(_: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    let xs = items(arg(args, 0)?)?;
    let n = usize::try_from(arg(args, 1)?.as_int().unwrap_or(0)).unwrap_or(0);
    Ok(Value::list(xs.iter().take(n).cloned().collect()))
}

fn set_insert(_: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    let mut set: BTreeSet<Value> = items(arg(args, 0)?)?.iter().cloned().collect();
    set.insert(arg(args, 1)?.clone());
    Ok(Value::Set(Arc::new(set)))
}

fn ln(_: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    let x = arg(args, 0)?.as_f64().unwrap_or(0.0);
    if x <= 0.0 {
        return Err(NativeError::Failed(
            ErrorCode::NotFinite,
            format!("ln({x:?}) has no finite value"),
        ));
    }
    float(x.ln())
}

fn to_float(_: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    float(arg(args, 0)?.as_f64().unwrap_or(0.0))
}

fn abs(_: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    match arg(args, 0)? {
        Value::Int(i) => i.checked_abs().map(Value::Int).ok_or_else(|| {
            NativeError::Failed(ErrorCode::Overflow, format!("abs({i}) overflows Int"))
        }),
        other => float(other.as_f64().unwrap_or(0.0).abs()),
    }
}

fn pick(args: &[Value], max: bool) -> Result<Value, NativeError> {
    let (a, b) = (arg(args, 0)?, arg(args, 1)?);
    Ok(if (a >= b) == max {
        a.clone()
    } else {
        b.clone()
    })
}

fn max(_: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    pick(args, true)
}

fn min(_: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    pick(args, false)
}

/// The prelude, in registry-name order.
pub const PRELUDE: &[Entry] = &[
    Entry {
        name: "Float.ln",
        sig: "fn ln(self: Float) -> Float",
        doc: "The natural logarithm; an error for zero or a negative number.",
        example: "1.0.ln() == 0.0",
        native: ln,
    },
    Entry {
        name: "Int.to_float",
        sig: "fn to_float(self: Int) -> Float",
        doc: "The integer as a float.",
        example: "3.to_float() == 3.0",
        native: to_float,
    },
    Entry {
        name: "List.all",
        sig: "fn all<T>(self: List<T>, pred: fn(T) -> Bool) -> Bool",
        doc: "True when every element satisfies `pred` (true for an empty list).",
        example: "[1, 2].all(|x| x > 0)",
        native: all,
    },
    Entry {
        name: "List.any",
        sig: "fn any<T>(self: List<T>, pred: fn(T) -> Bool) -> Bool",
        doc: "True when some element satisfies `pred`.",
        example: "[1, 2].any(|x| x > 1)",
        native: any,
    },
    Entry {
        name: "List.count",
        sig: "fn count<T>(self: List<T>, pred: fn(T) -> Bool) -> Int",
        doc: "How many elements satisfy `pred`.",
        example: "[1, 2, 3].count(|x| x > 1) == 2",
        native: count,
    },
    Entry {
        name: "List.filter",
        sig: "fn filter<T>(self: List<T>, keep: fn(T) -> Bool) -> List<T>",
        doc: "The elements that satisfy `keep`, in order.",
        example: "[1, 2, 3].filter(|x| x != 2) == [1, 3]",
        native: filter,
    },
    Entry {
        name: "List.get",
        sig: "fn get<T>(self: List<T>, index: Int) -> Option<T>",
        doc: "The element at `index`, or `None` when it is out of range.",
        example: "[5, 6].get(1) == Some(6)",
        native: get,
    },
    Entry {
        name: "List.len",
        sig: "fn len<T>(self: List<T>) -> Int",
        doc: "The number of elements.",
        example: "[1, 2].len() == 2",
        native: len,
    },
    Entry {
        name: "List.map",
        sig: "fn map<T, U>(self: List<T>, f: fn(T) -> U) -> List<U>",
        doc: "`f` applied to each element, in order.",
        example: "[1, 2].map(|x| x * 2) == [2, 4]",
        native: map,
    },
    Entry {
        name: "List.max",
        sig: "fn max<T: Num>(self: List<T>) -> Option<T>",
        doc: "The largest element, or `None` for an empty list.",
        example: "[1, 3, 2].max() == Some(3)",
        native: list_max,
    },
    Entry {
        name: "List.max_by",
        sig: "fn max_by<T>(self: List<T>, key: fn(T) -> Float) -> Option<T>",
        doc: "The element with the largest key (the first on ties); `None` for an empty list.",
        example: "[1, 3, 2].max_by(|x| x.to_float()) == Some(3)",
        native: max_by,
    },
    Entry {
        name: "List.min",
        sig: "fn min<T: Num>(self: List<T>) -> Option<T>",
        doc: "The smallest element, or `None` for an empty list.",
        example: "[2, 1].min() == Some(1)",
        native: list_min,
    },
    Entry {
        name: "List.min_by",
        sig: "fn min_by<T>(self: List<T>, key: fn(T) -> Float) -> Option<T>",
        doc: "The element with the smallest key (the first on ties); `None` for an empty list.",
        example: "[1, 3].min_by(|x| x.to_float()) == Some(1)",
        native: min_by,
    },
    Entry {
        name: "List.sum",
        sig: "fn sum<T: Num>(self: List<T>) -> T",
        doc: "The sum of the elements (checked for `Int`, finite for `Float`).",
        example: "[1, 2].sum() == 3",
        native: sum,
    },
    Entry {
        name: "List.take",
        sig: "fn take<T>(self: List<T>, n: Int) -> List<T>",
        doc: "The first `n` elements (all of them when there are fewer; none for a negative `n`).",
        example: "[1, 2, 3].take(2) == [1, 2]",
        native: take,
    },
    Entry {
        name: "Map.len",
        sig: "fn len<K, V>(self: Map<K, V>) -> Int",
        doc: "The number of entries.",
        example: "m.len()",
        native: len,
    },
    Entry {
        name: "Option.unwrap",
        sig: "fn unwrap<T>(self: Option<T>) -> T",
        doc: "The value inside `Some`; a runtime error (R0004) for `None`.",
        example: "Some(3).unwrap() == 3",
        native: unwrap,
    },
    Entry {
        name: "Option.unwrap_or",
        sig: "fn unwrap_or<T>(self: Option<T>, default: T) -> T",
        doc: "The value inside `Some`, or `default` for `None`.",
        example: "best.unwrap_or(0)",
        native: unwrap_or,
    },
    Entry {
        name: "Set.insert",
        sig: "fn insert<T>(self: Set<T>, x: T) -> Set<T>",
        doc: "The set with `x` added.",
        example: "[1].insert(2) == [1, 2]",
        native: set_insert,
    },
    Entry {
        name: "Set.len",
        sig: "fn len<T>(self: Set<T>) -> Int",
        doc: "The number of elements.",
        example: "[1, 2].len() == 2",
        native: len,
    },
    Entry {
        name: "abs",
        sig: "fn abs<T: Num>(x: T) -> T",
        doc: "The absolute value (checked for `Int`).",
        example: "abs(-2) == 2",
        native: abs,
    },
    Entry {
        name: "float",
        sig: "fn float(x: Int) -> Float",
        doc: "The integer as a float.",
        example: "float(3) == 3.0",
        native: to_float,
    },
    Entry {
        name: "max",
        sig: "fn max<T: Num>(a: T, b: T) -> T",
        doc: "The larger of two numbers.",
        example: "max(1, 2) == 2",
        native: max,
    },
    Entry {
        name: "min",
        sig: "fn min<T: Num>(a: T, b: T) -> T",
        doc: "The smaller of two numbers.",
        example: "min(1, 2) == 1",
        native: min,
    },
    Entry {
        name: "range",
        sig: "fn range(lo: Int, hi: Int) -> List<Int>",
        doc: "The integers `lo, lo + 1, ..., hi - 1` (at most a million of them).",
        example: "range(0, 3) == [0, 1, 2]",
        native: range,
    },
];

/// The prelude's signatures, for the checker.
pub fn signatures() -> SignatureSet {
    let mut set = SignatureSet::default();
    for entry in PRELUDE {
        set.builtin(entry.sig, entry.doc, entry.example);
    }
    set
}

/// Adds to `set` the prelude entries whose registry names it does not have yet.
///
/// A bridge while `registry.rs` (signatures only) and this table (signatures with natives) both
/// exist: the command line and the test corpus check against their union.
pub fn add_missing(set: &mut SignatureSet) {
    let mine = signatures();
    for builtin in mine.builtins {
        if !set.builtins.iter().any(|b| b.name == builtin.name) {
            set.builtins.push(builtin);
        }
    }
}

/// The prelude's native implementations, by registry name.
pub fn natives() -> Natives {
    let mut natives = Natives::new();
    for entry in PRELUDE {
        natives.register(entry.name, entry.native);
    }
    natives
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A context whose closures double their argument or test it for being positive.
    struct Ctx;

    impl NativeCtx for Ctx {
        fn call(&mut self, closure: &Value, args: &[Value]) -> Result<Value, NativeError> {
            let x = args[0].as_int().unwrap_or(0);
            Ok(if *closure == Value::Closure(0) {
                Value::Int(2 * x)
            } else {
                Value::Bool(x > 1)
            })
        }
    }

    fn ints(xs: &[i64]) -> Value {
        Value::list(xs.iter().copied().map(Value::Int).collect())
    }

    #[test]
    fn collection_builtins_follow_their_documentation() {
        let xs = ints(&[1, 3, 2]);
        assert_eq!(
            map(&mut Ctx, &[xs.clone(), Value::Closure(0)]),
            Ok(ints(&[2, 6, 4]))
        );
        assert_eq!(
            filter(&mut Ctx, &[xs.clone(), Value::Closure(1)]),
            Ok(ints(&[3, 2]))
        );
        assert_eq!(
            count(&mut Ctx, &[xs.clone(), Value::Closure(1)]),
            Ok(Value::Int(2))
        );
        assert_eq!(
            max_by(&mut Ctx, &[xs.clone(), Value::Closure(0)]),
            Ok(Value::some(Value::Int(3)))
        );
        assert_eq!(sum(&mut Ctx, &[xs]), Ok(Value::Int(6)));
        assert_eq!(
            range(&mut Ctx, &[Value::Int(0), Value::Int(3)]),
            Ok(ints(&[0, 1, 2]))
        );
        assert!(range(&mut Ctx, &[Value::Int(0), Value::Int(i64::MAX)]).is_err());
        assert!(sum(&mut Ctx, &[ints(&[i64::MAX, 1])]).is_err());
        assert_eq!(
            unwrap(&mut Ctx, &[Value::some(Value::Int(3))]),
            Ok(Value::Int(3))
        );
        assert!(matches!(
            unwrap(&mut Ctx, &[Value::none()]),
            Err(NativeError::Failed(ErrorCode::NoneUnwrapped, _))
        ));
    }

    #[test]
    fn registry_names_are_unique_and_sorted() {
        assert!(PRELUDE.windows(2).all(|w| w[0].name < w[1].name));
    }

    #[test]
    fn signatures_parse_and_name_the_same_registry_entries() {
        let set = signatures();
        assert!(set.problems.is_empty(), "{:?}", set.problems);
        let names: Vec<&str> = set.builtins.iter().map(|b| b.name.as_str()).collect();
        let expected: Vec<&str> = PRELUDE.iter().map(|e| e.name).collect();
        assert_eq!(names, expected);
    }
}
