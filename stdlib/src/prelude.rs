//! The prelude: builtins every harness sees without a `use`.
//!
//! [`PRELUDE`] is the one list of these builtins: each entry carries its registry name, its
//! signature in the checker's signature syntax, one line of documentation, an example and its
//! native implementation. The checker reads the signatures, the interpreter the natives,
//! editors the documentation, and [`reference_page`] generates `docs/builtins.md`, from this
//! same table.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use harness_compiler::signatures::SignatureSet;
use harness_runtime::{ErrorCode, NativeCtx, NativeError, Natives, Value, key_of};

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
    /// The standard-library module that must be imported to see it (`std.stats`); `None` for
    /// the prelude proper.
    pub module: Option<&'static str>,
}

/// The longest list `range` builds: iteration stays over finite, modest collections.
pub const MAX_RANGE: i64 = harness_compiler::cost::RANGE_CAP as i64;

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
    let xs = items(arg(args, 0)?)?;
    let mut out = Vec::with_capacity(xs.len());
    ctx.call_each(f, &xs, &mut |_, v| {
        out.push(v);
        Ok(true)
    })?;
    Ok(Value::list(out))
}

fn filter(ctx: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    let f = arg(args, 1)?;
    let mut out = Vec::new();
    ctx.call_each(f, &items(arg(args, 0)?)?, &mut |x, v| {
        if truth(v)? {
            out.push(x.clone());
        }
        Ok(true)
    })?;
    Ok(Value::list(out))
}

fn count(ctx: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    let f = arg(args, 1)?;
    let mut n = 0;
    ctx.call_each(f, &items(arg(args, 0)?)?, &mut |_, v| {
        n += i64::from(truth(v)?);
        Ok(true)
    })?;
    Ok(Value::Int(n))
}

fn any(ctx: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    let f = arg(args, 1)?;
    let mut found = false;
    ctx.call_each(f, &items(arg(args, 0)?)?, &mut |_, v| {
        found = truth(v)?;
        Ok(!found)
    })?;
    Ok(Value::Bool(found))
}

fn all(ctx: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    let f = arg(args, 1)?;
    let mut holds = true;
    ctx.call_each(f, &items(arg(args, 0)?)?, &mut |_, v| {
        holds = truth(v)?;
        Ok(holds)
    })?;
    Ok(Value::Bool(holds))
}

/// The element with the best key; ties go to the earliest element, so the result never depends
/// on anything but the list's order.
fn best_by(
    ctx: &mut dyn NativeCtx,
    args: &[Value],
    better: impl Fn(f64, f64) -> bool,
) -> Result<Value, NativeError> {
    let f = arg(args, 1)?;
    let xs = items(arg(args, 0)?)?;
    let mut best: Option<(f64, usize)> = None;
    ctx.call_each_key(f, &xs, &mut |start, keys| {
        for (i, &k) in (start..).zip(keys) {
            if best.is_none_or(|(b, _)| better(k, b)) {
                best = Some((k, i));
            }
        }
    })?;
    Ok(best.map_or_else(Value::none, |(_, i)| Value::some(xs[i].clone())))
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
    // A set is copied as a tree, without comparing its elements again.
    let mut set: BTreeSet<Value> = match arg(args, 0)? {
        Value::Set(set) => set.as_ref().clone(),
        other => items(other)?.iter().cloned().collect(),
    };
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

fn num_err(message: String) -> NativeError {
    NativeError::Failed(ErrorCode::NotFinite, message)
}

fn to_int(x: f64, what: &str) -> Result<Value, NativeError> {
    // `i64::MAX as f64` rounds up to 2^63, which is itself out of range.
    if x.is_finite() && x >= i64::MIN as f64 && x < i64::MAX as f64 {
        Ok(Value::Int(x as i64))
    } else {
        Err(NativeError::Failed(
            ErrorCode::Overflow,
            format!("{what}({x:?}) does not fit an Int"),
        ))
    }
}

fn number(args: &[Value], i: usize) -> Result<f64, NativeError> {
    key_of(arg(args, i)?)
}

fn clamp(_: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    let (x, lo, hi) = (arg(args, 0)?, arg(args, 1)?, arg(args, 2)?);
    Ok(if x < lo {
        lo.clone()
    } else if x > hi {
        hi.clone()
    } else {
        x.clone()
    })
}

fn sqrt(_: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    let x = number(args, 0)?;
    if x < 0.0 {
        return Err(num_err(format!(
            "sqrt({x:?}) of a negative number has no value"
        )));
    }
    float(x.sqrt())
}

fn exp(_: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    float(number(args, 0)?.exp())
}

fn floor(_: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    to_int(number(args, 0)?.floor(), "floor")
}

fn ceil(_: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    to_int(number(args, 0)?.ceil(), "ceil")
}

fn round(_: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    to_int(number(args, 0)?.round(), "round")
}

fn string_concat(_: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    match (arg(args, 0)?, arg(args, 1)?) {
        (Value::Str(a), Value::Str(b)) => Ok(Value::str(&format!("{a}{b}"))),
        (a, b) => Err(NativeError::Failed(
            ErrorCode::Internal,
            format!("concat of {} and {}", a.kind_name(), b.kind_name()),
        )),
    }
}

/// Any value as text: a string as it is (no quotes), everything else as a trace prints it.
fn to_string(ctx: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    use std::fmt::Write as _;
    Ok(match arg(args, 0)? {
        Value::Str(text) => Value::Str(text.clone()),
        other => {
            let mut out = Capped::new(ctx.memory_left());
            // A failed write is the cap; the only other error a `String` writer has is none.
            if write!(out, "{other}").is_err() || out.over {
                return Err(out.exhausted());
            }
            out.value()?
        }
    })
}

/// A text buffer that refuses to grow past a byte limit, so that printing a value whose parts
/// are shared many times over (a list of a thousand references to one long list) ends with
/// [`ErrorCode::MemoryExhausted`] instead of exhausting the machine's memory.
struct Capped {
    bytes: Vec<u8>,
    limit: u64,
    over: bool,
}

impl Capped {
    fn new(limit: u64) -> Self {
        Self {
            bytes: Vec::new(),
            limit,
            over: false,
        }
    }

    fn push(&mut self, piece: &[u8]) -> bool {
        if (self.bytes.len() + piece.len()) as u64 > self.limit {
            self.over = true;
            return false;
        }
        self.bytes.extend_from_slice(piece);
        true
    }

    /// The text written, as a string value.
    fn value(self) -> Result<Value, NativeError> {
        String::from_utf8(self.bytes)
            .map(|text| Value::str(&text))
            .map_err(|e| NativeError::Failed(ErrorCode::Internal, format!("not UTF-8: {e}")))
    }

    fn exhausted(&self) -> NativeError {
        NativeError::Failed(
            ErrorCode::MemoryExhausted,
            format!(
                "the text would pass the {} bytes the turn's memory budget has left",
                self.limit
            ),
        )
    }
}

impl std::fmt::Write for Capped {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        if self.push(s.as_bytes()) {
            Ok(())
        } else {
            Err(std::fmt::Error)
        }
    }
}

impl std::io::Write for Capped {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.push(buf) {
            Ok(buf.len())
        } else {
            Err(std::io::Error::other("over the memory budget"))
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Any value as pretty-printed JSON, in the form traces use (records as objects, enum variants
/// as `"Enum.Variant"`): the way to hand structured state to an LLM prompt.
fn to_json(ctx: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    let mut out = Capped::new(ctx.memory_left());
    match serde_json::to_writer_pretty(&mut out, arg(args, 0)?) {
        Ok(()) => out.value(),
        Err(_) if out.over => Err(out.exhausted()),
        Err(e) => Err(NativeError::Failed(
            ErrorCode::Internal,
            format!("to_json: {e}"),
        )),
    }
}

fn string_len(_: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    match arg(args, 0)? {
        Value::Str(text) => Ok(Value::Int(text.chars().count() as i64)),
        other => Err(NativeError::Failed(
            ErrorCode::Internal,
            format!("len of {}", other.kind_name()),
        )),
    }
}

fn is_empty(_: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    Ok(Value::Bool(items(arg(args, 0)?)?.is_empty()))
}

fn contains(_: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    let x = arg(args, 1)?;
    Ok(Value::Bool(match arg(args, 0)? {
        Value::Set(set) => set.contains(x),
        Value::Map(map) => map.contains_key(x),
        other => items(other)?.contains(x),
    }))
}

fn index_of(_: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    let x = arg(args, 1)?;
    let xs = items(arg(args, 0)?)?;
    Ok(match xs.iter().position(|v| v == x) {
        Some(i) => Value::some(Value::Int(i as i64)),
        None => Value::none(),
    })
}

/// `xs.map(f).sum()`: the sum keeps the results' kind, so a sum of `Int`s stays an `Int`.
fn sum_by(ctx: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    let mapped = map(ctx, args)?;
    sum(ctx, &[mapped])
}

fn extreme_of(ctx: &mut dyn NativeCtx, args: &[Value], max: bool) -> Result<Value, NativeError> {
    let f = arg(args, 1)?;
    let mut best: Option<f64> = None;
    ctx.call_each_key(f, &items(arg(args, 0)?)?, &mut |_, keys| {
        for &k in keys {
            if best.is_none_or(|b| if max { k > b } else { k < b }) {
                best = Some(k);
            }
        }
    })?;
    float(best.unwrap_or(0.0))
}

fn max_of(ctx: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    extreme_of(ctx, args, true)
}

fn min_of(ctx: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    extreme_of(ctx, args, false)
}

fn first(_: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    Ok(items(arg(args, 0)?)?
        .first()
        .cloned()
        .map_or_else(Value::none, Value::some))
}

fn last(_: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    Ok(items(arg(args, 0)?)?
        .last()
        .cloned()
        .map_or_else(Value::none, Value::some))
}

fn set_filter(ctx: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    let kept = filter(ctx, args)?;
    Ok(Value::Set(Arc::new(
        items(&kept)?.iter().cloned().collect(),
    )))
}

fn push(_: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    let mut xs = items(arg(args, 0)?)?.into_owned();
    xs.push(arg(args, 1)?.clone());
    Ok(Value::list(xs))
}

fn to_set(_: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    Ok(Value::Set(Arc::new(
        items(arg(args, 0)?)?.iter().cloned().collect(),
    )))
}

fn to_list(_: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    Ok(Value::list(items(arg(args, 0)?)?.into_owned()))
}

fn set_remove(_: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    let mut set: BTreeSet<Value> = items(arg(args, 0)?)?.iter().cloned().collect();
    set.remove(arg(args, 1)?);
    Ok(Value::Set(Arc::new(set)))
}

fn set_union(_: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    let mut set: BTreeSet<Value> = items(arg(args, 0)?)?.iter().cloned().collect();
    set.extend(items(arg(args, 1)?)?.iter().cloned());
    Ok(Value::Set(Arc::new(set)))
}

fn map_of(v: &Value) -> Result<&BTreeMap<Value, Value>, NativeError> {
    match v {
        Value::Map(map) => Ok(map),
        other => Err(NativeError::Failed(
            ErrorCode::Internal,
            format!("expected a map, found {}", other.kind_name()),
        )),
    }
}

fn map_get(_: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    Ok(map_of(arg(args, 0)?)?
        .get(arg(args, 1)?)
        .cloned()
        .map_or_else(Value::none, Value::some))
}

fn map_insert(_: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    let mut map = map_of(arg(args, 0)?)?.clone();
    map.insert(arg(args, 1)?.clone(), arg(args, 2)?.clone());
    Ok(Value::Map(Arc::new(map)))
}

fn map_remove(_: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    let mut map = map_of(arg(args, 0)?)?.clone();
    map.remove(arg(args, 1)?);
    Ok(Value::Map(Arc::new(map)))
}

fn map_values(_: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    Ok(Value::list(
        map_of(arg(args, 0)?)?.values().cloned().collect(),
    ))
}

fn map_argmax(_: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    let mut best: Option<(f64, &Value)> = None;
    for (k, v) in map_of(arg(args, 0)?)? {
        let x = key_of(v)?;
        if best.is_none_or(|(b, _)| x > b) {
            best = Some((x, k));
        }
    }
    Ok(best.map_or_else(Value::none, |(_, k)| Value::some(k.clone())))
}

fn is_some(_: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    Ok(Value::Bool(matches!(arg(args, 0)?, Value::Option(Some(_)))))
}

fn is_none(_: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    Ok(Value::Bool(matches!(arg(args, 0)?, Value::Option(None))))
}

fn option_map(ctx: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    match arg(args, 0)? {
        Value::Option(Some(v)) => Ok(Value::some(
            ctx.call(arg(args, 1)?, std::slice::from_ref(v.as_ref()))?,
        )),
        _ => Ok(Value::none()),
    }
}

fn mean(_: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    let xs = items(arg(args, 0)?)?;
    if xs.is_empty() {
        return float(0.0);
    }
    let total: f64 = xs.iter().map(|x| x.as_f64().unwrap_or(0.0)).sum();
    float(total / xs.len() as f64)
}

fn ema(_: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    let (previous, x, alpha) = (number(args, 0)?, number(args, 1)?, number(args, 2)?);
    float(previous + alpha * (x - previous))
}

fn wilson_lower(_: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    let (k, n) = (number(args, 0)?, number(args, 1)?);
    if n <= 0.0 {
        return float(0.0);
    }
    let z: f64 = 1.959_963_984_540_054;
    let p = k / n;
    let centre = p + z * z / (2.0 * n);
    let margin = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).max(0.0).sqrt();
    float(((centre - margin) / (1.0 + z * z / n)).clamp(0.0, 1.0))
}

fn bits(p: f64) -> f64 {
    if p > 0.0 { -p * p.log2() } else { 0.0 }
}

fn entropy(_: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    float(
        items(arg(args, 0)?)?
            .iter()
            .map(|p| bits(p.as_f64().unwrap_or(0.0)))
            .sum(),
    )
}

fn binary_entropy(_: &mut dyn NativeCtx, args: &[Value]) -> Result<Value, NativeError> {
    let p = number(args, 0)?;
    float(bits(p) + bits(1.0 - p))
}

/// The prelude, in registry-name order.
pub const PRELUDE: &[Entry] = &[
    Entry {
        name: "Float.abs",
        sig: "fn abs(self: Float) -> Float",
        doc: "The absolute value.",
        example: "(-0.5).abs() == 0.5",
        native: abs,
        module: None,
    },
    Entry {
        name: "Float.ceil",
        sig: "fn ceil(self: Float) -> Int",
        doc: "The smallest integer not below the value.",
        example: "2.2.ceil() == 3",
        native: ceil,
        module: None,
    },
    Entry {
        name: "Float.exp",
        sig: "fn exp(self: Float) -> Float",
        doc: "`e` raised to the value.",
        example: "0.0.exp() == 1.0",
        native: exp,
        module: None,
    },
    Entry {
        name: "Float.floor",
        sig: "fn floor(self: Float) -> Int",
        doc: "The largest integer not above the value.",
        example: "2.7.floor() == 2",
        native: floor,
        module: None,
    },
    Entry {
        name: "Float.ln",
        sig: "fn ln(self: Float) -> Float",
        doc: "The natural logarithm; an error for zero or a negative number.",
        example: "1.0.ln() == 0.0",
        native: ln,
        module: None,
    },
    Entry {
        name: "Float.round",
        sig: "fn round(self: Float) -> Int",
        doc: "The nearest integer, halves away from zero.",
        example: "2.5.round() == 3",
        native: round,
        module: None,
    },
    Entry {
        name: "Float.sqrt",
        sig: "fn sqrt(self: Float) -> Float",
        doc: "The square root.",
        example: "9.0.sqrt() == 3.0",
        native: sqrt,
        module: None,
    },
    Entry {
        name: "Int.abs",
        sig: "fn abs(self: Int) -> Int",
        doc: "The absolute value.",
        example: "(-3).abs() == 3",
        native: abs,
        module: None,
    },
    Entry {
        name: "Int.to_float",
        sig: "fn to_float(self: Int) -> Float",
        doc: "The integer as a float.",
        example: "3.to_float() == 3.0",
        native: to_float,
        module: None,
    },
    Entry {
        name: "List.all",
        sig: "fn all<T>(self: List<T>, pred: fn(T) -> Bool) -> Bool",
        doc: "True when every element satisfies `pred` (true for an empty list).",
        example: "[1, 2].all(|x| x > 0)",
        native: all,
        module: None,
    },
    Entry {
        name: "List.any",
        sig: "fn any<T>(self: List<T>, pred: fn(T) -> Bool) -> Bool",
        doc: "True when some element satisfies `pred`.",
        example: "[1, 2].any(|x| x > 1)",
        native: any,
        module: None,
    },
    Entry {
        name: "List.argmax",
        sig: "fn argmax<T>(self: List<T>, key: fn(T) -> Float) -> Option<T>",
        doc: "The same as `max_by`: the element maximising `key`.",
        example: "[1, 3, 2].argmax(|x| x.to_float()) == Some(3)",
        native: max_by,
        module: None,
    },
    Entry {
        name: "List.contains",
        sig: "fn contains<T>(self: List<T>, x: T) -> Bool",
        doc: "True when `x` is an element; the same as `x in xs`.",
        example: "[1, 2].contains(2)",
        native: contains,
        module: None,
    },
    Entry {
        name: "List.count",
        sig: "fn count<T>(self: List<T>, pred: fn(T) -> Bool) -> Int",
        doc: "How many elements satisfy `pred`.",
        example: "[1, 2, 3].count(|x| x > 1) == 2",
        native: count,
        module: None,
    },
    Entry {
        name: "List.filter",
        sig: "fn filter<T>(self: List<T>, keep: fn(T) -> Bool) -> List<T>",
        doc: "The elements that satisfy `keep`, in order.",
        example: "[1, 2, 3].filter(|x| x != 2) == [1, 3]",
        native: filter,
        module: None,
    },
    Entry {
        name: "List.first",
        sig: "fn first<T>(self: List<T>) -> Option<T>",
        doc: "The first element, if any.",
        example: "[4, 5].first() == Some(4)",
        native: first,
        module: None,
    },
    Entry {
        name: "List.get",
        sig: "fn get<T>(self: List<T>, index: Int) -> Option<T>",
        doc: "The element at `index`, or `None` when it is out of range.",
        example: "[5, 6].get(1) == Some(6)",
        native: get,
        module: None,
    },
    Entry {
        name: "List.index_of",
        sig: "fn index_of<T>(self: List<T>, x: T) -> Option<Int>",
        doc: "The index of the first element equal to `x`, or `None` when no element is; a \
              lookup in a list of names without a closure call per element.",
        example: "[4, 5, 4].index_of(4) == Some(0) and [4].index_of(6) == None",
        native: index_of,
        module: None,
    },
    Entry {
        name: "List.is_empty",
        sig: "fn is_empty<T>(self: List<T>) -> Bool",
        doc: "True when there are no elements.",
        example: "[1].take(0).is_empty()",
        native: is_empty,
        module: None,
    },
    Entry {
        name: "List.last",
        sig: "fn last<T>(self: List<T>) -> Option<T>",
        doc: "The last element, if any.",
        example: "[4, 5].last() == Some(5)",
        native: last,
        module: None,
    },
    Entry {
        name: "List.len",
        sig: "fn len<T>(self: List<T>) -> Int",
        doc: "The number of elements.",
        example: "[1, 2].len() == 2",
        native: len,
        module: None,
    },
    Entry {
        name: "List.map",
        sig: "fn map<T, U>(self: List<T>, f: fn(T) -> U) -> List<U>",
        doc: "`f` applied to each element, in order.",
        example: "[1, 2].map(|x| x * 2) == [2, 4]",
        native: map,
        module: None,
    },
    Entry {
        name: "List.max",
        sig: "fn max<T: Num>(self: List<T>) -> Option<T>",
        doc: "The largest element, or `None` for an empty list.",
        example: "[1, 3, 2].max() == Some(3)",
        native: list_max,
        module: None,
    },
    Entry {
        name: "List.max_by",
        sig: "fn max_by<T>(self: List<T>, key: fn(T) -> Float) -> Option<T>",
        doc: "The element with the largest key (the first on ties); `None` for an empty list.",
        example: "[1, 3, 2].max_by(|x| x.to_float()) == Some(3)",
        native: max_by,
        module: None,
    },
    Entry {
        name: "List.max_of",
        sig: "fn max_of<T>(self: List<T>, key: fn(T) -> Float) -> Float",
        doc: "The largest key; `0.0` when empty.",
        example: "[1, 3, 2].max_of(|x| x.to_float()) == 3.0",
        native: max_of,
        module: None,
    },
    Entry {
        name: "List.min",
        sig: "fn min<T: Num>(self: List<T>) -> Option<T>",
        doc: "The smallest element, or `None` for an empty list.",
        example: "[2, 1].min() == Some(1)",
        native: list_min,
        module: None,
    },
    Entry {
        name: "List.min_by",
        sig: "fn min_by<T>(self: List<T>, key: fn(T) -> Float) -> Option<T>",
        doc: "The element with the smallest key (the first on ties); `None` for an empty list.",
        example: "[1, 3].min_by(|x| x.to_float()) == Some(1)",
        native: min_by,
        module: None,
    },
    Entry {
        name: "List.min_of",
        sig: "fn min_of<T>(self: List<T>, key: fn(T) -> Float) -> Float",
        doc: "The smallest key; `0.0` when empty.",
        example: "[2, 1, 3].min_of(|x| x.to_float()) == 1.0",
        native: min_of,
        module: None,
    },
    Entry {
        name: "List.push",
        sig: "fn push<T>(self: List<T>, x: T) -> List<T>",
        doc: "The list with `x` appended.",
        example: "[1].push(2) == [1, 2]",
        native: push,
        module: None,
    },
    Entry {
        name: "List.sum",
        sig: "fn sum<T: Num>(self: List<T>) -> T",
        doc: "The sum of the elements (checked for `Int`, finite for `Float`).",
        example: "[1, 2].sum() == 3",
        native: sum,
        module: None,
    },
    Entry {
        name: "List.sum_by",
        sig: "fn sum_by<T, N: Num>(self: List<T>, f: fn(T) -> N) -> N",
        doc: "The sum of `f` over the elements.",
        example: "[1, 2, 3].sum_by(|x| x * x) == 14",
        native: sum_by,
        module: None,
    },
    Entry {
        name: "List.take",
        sig: "fn take<T>(self: List<T>, n: Int) -> List<T>",
        doc: "The first `n` elements (all of them when there are fewer; none for a negative `n`).",
        example: "[1, 2, 3].take(2) == [1, 2]",
        native: take,
        module: None,
    },
    Entry {
        name: "List.to_set",
        sig: "fn to_set<T>(self: List<T>) -> Set<T>",
        doc: "The elements as a set.",
        example: "[2, 1, 2].to_set().len() == 2",
        native: to_set,
        module: None,
    },
    Entry {
        name: "Map.argmax",
        sig: "fn argmax<K>(self: Map<K, Float>) -> Option<K>",
        doc: "The key with the largest value (the smallest key on ties).",
        example: "NO_SCORES.insert(1, 0.5).insert(2, 0.9).argmax() == Some(2)",
        native: map_argmax,
        module: None,
    },
    Entry {
        name: "Map.contains",
        sig: "fn contains<K, V>(self: Map<K, V>, key: K) -> Bool",
        doc: "True when `key` has a value; the same as `key in map`.",
        example: "NO_COUNTS.insert(1, 10).contains(1)",
        native: contains,
        module: None,
    },
    Entry {
        name: "Map.get",
        sig: "fn get<K, V>(self: Map<K, V>, key: K) -> Option<V>",
        doc: "The value for `key`, if present.",
        example: "NO_COUNTS.insert(1, 10).get(1) == Some(10)",
        native: map_get,
        module: None,
    },
    Entry {
        name: "Map.insert",
        sig: "fn insert<K, V>(self: Map<K, V>, key: K, value: V) -> Map<K, V>",
        doc: "The map with `key` set to `value`.",
        example: "NO_COUNTS.insert(1, 10).insert(1, 20).get(1) == Some(20)",
        native: map_insert,
        module: None,
    },
    Entry {
        name: "Map.keys",
        sig: "fn keys<K, V>(self: Map<K, V>) -> List<K>",
        doc: "The keys in ascending order.",
        example: "NO_COUNTS.insert(2, 5).insert(1, 7).keys() == [1, 2]",
        native: to_list,
        module: None,
    },
    Entry {
        name: "Map.len",
        sig: "fn len<K, V>(self: Map<K, V>) -> Int",
        doc: "The number of entries.",
        example: "NO_COUNTS.insert(1, 10).insert(2, 20).len() == 2",
        native: len,
        module: None,
    },
    Entry {
        name: "Map.remove",
        sig: "fn remove<K, V>(self: Map<K, V>, key: K) -> Map<K, V>",
        doc: "The map without `key`.",
        example: "NO_COUNTS.insert(1, 10).remove(1).len() == 0",
        native: map_remove,
        module: None,
    },
    Entry {
        name: "Map.values",
        sig: "fn values<K, V>(self: Map<K, V>) -> List<V>",
        doc: "The values, in ascending order of their keys.",
        example: "NO_COUNTS.insert(2, 5).insert(1, 7).values() == [7, 5]",
        native: map_values,
        module: None,
    },
    Entry {
        name: "Option.is_none",
        sig: "fn is_none<T>(self: Option<T>) -> Bool",
        doc: "True for `None`.",
        example: "None.is_none()",
        native: is_none,
        module: None,
    },
    Entry {
        name: "Option.is_some",
        sig: "fn is_some<T>(self: Option<T>) -> Bool",
        doc: "True for `Some`.",
        example: "Some(1).is_some()",
        native: is_some,
        module: None,
    },
    Entry {
        name: "Option.map",
        sig: "fn map<T, U>(self: Option<T>, f: fn(T) -> U) -> Option<U>",
        doc: "`f` applied to the value, if any.",
        example: "Some(2).map(|x| x * 10) == Some(20)",
        native: option_map,
        module: None,
    },
    Entry {
        name: "Option.unwrap",
        sig: "fn unwrap<T>(self: Option<T>) -> T",
        doc: "The value inside `Some`; a runtime error (R0004) for `None`.",
        example: "Some(3).unwrap() == 3",
        native: unwrap,
        module: None,
    },
    Entry {
        name: "Option.unwrap_or",
        sig: "fn unwrap_or<T>(self: Option<T>, default: T) -> T",
        doc: "The value inside `Some`, or `default` for `None`.",
        example: "[1].take(0).first().unwrap_or(7) == 7",
        native: unwrap_or,
        module: None,
    },
    Entry {
        name: "Set.all",
        sig: "fn all<T>(self: Set<T>, pred: fn(T) -> Bool) -> Bool",
        doc: "True when every element satisfies `pred`; true when empty.",
        example: "[1, 2].to_set().all(|x| x > 0)",
        native: all,
        module: None,
    },
    Entry {
        name: "Set.any",
        sig: "fn any<T>(self: Set<T>, pred: fn(T) -> Bool) -> Bool",
        doc: "True when some element satisfies `pred`.",
        example: "[1, 2].to_set().any(|x| x > 1)",
        native: any,
        module: None,
    },
    Entry {
        name: "Set.argmax",
        sig: "fn argmax<T>(self: Set<T>, key: fn(T) -> Float) -> Option<T>",
        doc: "The same as `max_by`: the element maximising `key`.",
        example: "[1, 3].to_set().argmax(|x| x.to_float()) == Some(3)",
        native: max_by,
        module: None,
    },
    Entry {
        name: "Set.contains",
        sig: "fn contains<T>(self: Set<T>, x: T) -> Bool",
        doc: "True when `x` is an element; the same as `x in xs`.",
        example: "[1, 2].to_set().contains(2)",
        native: contains,
        module: None,
    },
    Entry {
        name: "Set.count",
        sig: "fn count<T>(self: Set<T>, pred: fn(T) -> Bool) -> Int",
        doc: "How many elements satisfy `pred`.",
        example: "[1, 2, 3].to_set().count(|x| x > 1) == 2",
        native: count,
        module: None,
    },
    Entry {
        name: "Set.filter",
        sig: "fn filter<T>(self: Set<T>, keep: fn(T) -> Bool) -> Set<T>",
        doc: "The elements for which `keep` holds, in order.",
        example: "[1, 2, 3].to_set().filter(|x| x > 1) == [2, 3].to_set()",
        native: set_filter,
        module: None,
    },
    Entry {
        name: "Set.first",
        sig: "fn first<T>(self: Set<T>) -> Option<T>",
        doc: "The first element, if any.",
        example: "[5, 4].to_set().first() == Some(4)",
        native: first,
        module: None,
    },
    Entry {
        name: "Set.insert",
        sig: "fn insert<T>(self: Set<T>, x: T) -> Set<T>",
        doc: "The set with `x` added.",
        example: "[1].to_set().insert(2) == [1, 2].to_set()",
        native: set_insert,
        module: None,
    },
    Entry {
        name: "Set.is_empty",
        sig: "fn is_empty<T>(self: Set<T>) -> Bool",
        doc: "True when there are no elements.",
        example: "[1].to_set().remove(1).is_empty()",
        native: is_empty,
        module: None,
    },
    Entry {
        name: "Set.len",
        sig: "fn len<T>(self: Set<T>) -> Int",
        doc: "The number of elements.",
        example: "[1, 2, 2].to_set().len() == 2",
        native: len,
        module: None,
    },
    Entry {
        name: "Set.map",
        sig: "fn map<T, U>(self: Set<T>, f: fn(T) -> U) -> List<U>",
        doc: "`f` applied to each element, in order.",
        example: "[1, 2].to_set().map(|x| x * 10) == [10, 20]",
        native: map,
        module: None,
    },
    Entry {
        name: "Set.max_by",
        sig: "fn max_by<T>(self: Set<T>, key: fn(T) -> Float) -> Option<T>",
        doc: "The element with the largest key (the first on ties); `None` when empty.",
        example: "[1, 3].to_set().max_by(|x| x.to_float()) == Some(3)",
        native: max_by,
        module: None,
    },
    Entry {
        name: "Set.max_of",
        sig: "fn max_of<T>(self: Set<T>, key: fn(T) -> Float) -> Float",
        doc: "The largest key; `0.0` when empty.",
        example: "[1, 3].to_set().max_of(|x| x.to_float()) == 3.0",
        native: max_of,
        module: None,
    },
    Entry {
        name: "Set.min_by",
        sig: "fn min_by<T>(self: Set<T>, key: fn(T) -> Float) -> Option<T>",
        doc: "The element with the smallest key (the first on ties); `None` when empty.",
        example: "[1, 3].to_set().min_by(|x| x.to_float()) == Some(1)",
        native: min_by,
        module: None,
    },
    Entry {
        name: "Set.min_of",
        sig: "fn min_of<T>(self: Set<T>, key: fn(T) -> Float) -> Float",
        doc: "The smallest key; `0.0` when empty.",
        example: "[1, 3].to_set().min_of(|x| x.to_float()) == 1.0",
        native: min_of,
        module: None,
    },
    Entry {
        name: "Set.remove",
        sig: "fn remove<T>(self: Set<T>, x: T) -> Set<T>",
        doc: "The set without `x`.",
        example: "[1, 2].to_set().remove(1) == [2].to_set()",
        native: set_remove,
        module: None,
    },
    Entry {
        name: "Set.sum",
        sig: "fn sum<N: Num>(self: Set<N>) -> N",
        doc: "The sum of the elements; zero when empty.",
        example: "[1, 2, 3].to_set().sum() == 6",
        native: sum,
        module: None,
    },
    Entry {
        name: "Set.sum_by",
        sig: "fn sum_by<T, N: Num>(self: Set<T>, f: fn(T) -> N) -> N",
        doc: "The sum of `f` over the elements.",
        example: "[1, 2].to_set().sum_by(|x| x * 10) == 30",
        native: sum_by,
        module: None,
    },
    Entry {
        name: "Set.to_list",
        sig: "fn to_list<T>(self: Set<T>) -> List<T>",
        doc: "The elements in ascending order.",
        example: "[2, 1].to_set().to_list() == [1, 2]",
        native: to_list,
        module: None,
    },
    Entry {
        name: "Set.union",
        sig: "fn union<T>(self: Set<T>, other: Set<T>) -> Set<T>",
        doc: "The elements of either set.",
        example: "[1].to_set().union([2].to_set()) == [1, 2].to_set()",
        native: set_union,
        module: None,
    },
    Entry {
        name: "String.concat",
        sig: "fn concat(self: String, other: String) -> String",
        doc: "The two strings one after the other.",
        example: "\"ab\".concat(\"cd\") == \"abcd\"",
        native: string_concat,
        module: None,
    },
    Entry {
        name: "String.len",
        sig: "fn len(self: String) -> Int",
        doc: "The number of characters.",
        example: "\"abc\".len() == 3",
        native: string_len,
        module: None,
    },
    Entry {
        name: "abs",
        sig: "fn abs<T: Num>(x: T) -> T",
        doc: "The absolute value (checked for `Int`).",
        example: "abs(-2) == 2",
        native: abs,
        module: None,
    },
    Entry {
        name: "binary_entropy",
        sig: "fn binary_entropy(p: Float) -> Float",
        doc: "Entropy in bits of a yes/no outcome with probability `p`.",
        example: "binary_entropy(0.5) == 1.0",
        native: binary_entropy,
        module: Some("std.info"),
    },
    Entry {
        name: "ceil",
        sig: "fn ceil(x: Float) -> Int",
        doc: "The smallest integer not below `x`.",
        example: "ceil(2.2) == 3",
        native: ceil,
        module: None,
    },
    Entry {
        name: "clamp",
        sig: "fn clamp<N: Num>(x: N, lo: N, hi: N) -> N",
        doc: "`x` limited to `lo..=hi`.",
        example: "clamp(1.5, 0.0, 1.0) == 1.0",
        native: clamp,
        module: None,
    },
    Entry {
        name: "ema",
        sig: "fn ema(previous: Float, x: Float, alpha: Float) -> Float",
        doc: "One step of an exponential moving average: `previous + alpha * (x - previous)`.",
        example: "ema(0.5, 1.0, 0.1) == 0.55",
        native: ema,
        module: Some("std.stats"),
    },
    Entry {
        name: "entropy",
        sig: "fn entropy(ps: List<Float>) -> Float",
        doc: "Shannon entropy in bits of a distribution.",
        example: "entropy([0.5, 0.5]) == 1.0",
        native: entropy,
        module: Some("std.info"),
    },
    Entry {
        name: "exp",
        sig: "fn exp(x: Float) -> Float",
        doc: "`e` raised to `x`.",
        example: "exp(0.0) == 1.0",
        native: exp,
        module: None,
    },
    Entry {
        name: "float",
        sig: "fn float(x: Int) -> Float",
        doc: "The integer as a float.",
        example: "float(3) == 3.0",
        native: to_float,
        module: None,
    },
    Entry {
        name: "floor",
        sig: "fn floor(x: Float) -> Int",
        doc: "The largest integer not above `x`.",
        example: "floor(2.7) == 2",
        native: floor,
        module: None,
    },
    Entry {
        name: "ln",
        sig: "fn ln(x: Float) -> Float",
        doc: "The natural logarithm; `x <= 0` is a runtime error.",
        example: "ln(1.0) == 0.0",
        native: ln,
        module: None,
    },
    Entry {
        name: "max",
        sig: "fn max<T: Num>(a: T, b: T) -> T",
        doc: "The larger of two numbers.",
        example: "max(1, 2) == 2",
        native: max,
        module: None,
    },
    Entry {
        name: "mean",
        sig: "fn mean(xs: List<Float>) -> Float",
        doc: "The arithmetic mean; `0.0` when empty.",
        example: "mean([1.0, 3.0]) == 2.0",
        native: mean,
        module: Some("std.stats"),
    },
    Entry {
        name: "min",
        sig: "fn min<T: Num>(a: T, b: T) -> T",
        doc: "The smaller of two numbers.",
        example: "min(1, 2) == 1",
        native: min,
        module: None,
    },
    Entry {
        name: "range",
        sig: "fn range(lo: Int, hi: Int) -> List<Int>",
        doc: "The integers `lo, lo + 1, ..., hi - 1` (at most a million of them).",
        example: "range(0, 3) == [0, 1, 2]",
        native: range,
        module: None,
    },
    Entry {
        name: "round",
        sig: "fn round(x: Float) -> Int",
        doc: "The nearest integer, halves away from zero.",
        example: "round(2.5) == 3",
        native: round,
        module: None,
    },
    Entry {
        name: "sqrt",
        sig: "fn sqrt(x: Float) -> Float",
        doc: "The square root; a negative `x` is a runtime error.",
        example: "sqrt(9.0) == 3.0",
        native: sqrt,
        module: None,
    },
    Entry {
        name: "to_json",
        sig: "fn to_json<T>(value: T) -> String",
        doc: "The value as pretty-printed JSON (records become objects): structured text for an LLM prompt.",
        example: "to_json([1, 2]) == \"[\\n  1,\\n  2\\n]\"",
        native: to_json,
        module: None,
    },
    Entry {
        name: "to_string",
        sig: "fn to_string<T>(value: T) -> String",
        doc: "The value as text: a string as it is, anything else as traces print it.",
        example: "to_string(3) == \"3\"",
        native: to_string,
        module: None,
    },
    Entry {
        name: "wilson_lower",
        sig: "fn wilson_lower(successes: Int, trials: Int) -> Float",
        doc: "The lower end of the 95% Wilson score interval of a proportion.",
        example: "round(wilson_lower(8, 10) * 100.0) == 49",
        native: wilson_lower,
        module: Some("std.stats"),
    },
];

/// The declarations the examples of [`PRELUDE`] may read besides literals: an empty list
/// literal has no type of its own, so the examples of `Map` methods start from these typed empty
/// maps. The reference page shows them, and the test that runs every example declares them.
pub const EXAMPLE_DECLARATIONS: &str =
    "const NO_COUNTS: Map<Int, Int> = []\nconst NO_SCORES: Map<Int, Float> = []";

/// The reference page of every builtin and method of [`PRELUDE`], in Markdown: functions first,
/// then methods by receiver type, each with its signature, documentation and example. The
/// committed copy is `docs/builtins.md`; a test fails when it is stale.
pub fn reference_page() -> String {
    let mut out = String::from(
        "# Builtins and methods\n\n\
         <!-- Generated from the registry in stdlib/src/prelude.rs; do not edit. Regenerate with\n     \
         `UPDATE_REFERENCE=1 cargo test -p harness-tests builtin_reference`. -->\n\n\
         Every harness sees these without a `use`, except the ones marked with the standard-library\n\
         module to import them from (`use std.stats.{ema}`). Methods are called on a value of their\n\
         receiver type: `xs.max_by(|x| x.score)`.\n\n\
         Every example is an expression that is `true`; a test runs each one. The examples of `Map`\n\
         methods start from these empty maps:\n\n```harness\n",
    );
    out.push_str(EXAMPLE_DECLARATIONS);
    out.push_str("\n```\n");
    let receiver = |entry: &Entry| entry.name.split_once('.').map(|(ty, _)| ty);
    let mut sections: Vec<(Option<&str>, Vec<&Entry>)> = Vec::new();
    for entry in PRELUDE {
        match sections.iter_mut().find(|(r, _)| *r == receiver(entry)) {
            Some((_, entries)) => entries.push(entry),
            None => sections.push((receiver(entry), vec![entry])),
        }
    }
    sections.sort_by_key(|(r, _)| *r);
    for (receiver, entries) in sections {
        match receiver {
            None => out.push_str("\n## Functions\n"),
            Some(ty) => out.push_str(&format!("\n## Methods of `{ty}`\n")),
        }
        for entry in entries {
            let short = entry.name.rsplit('.').next().unwrap_or(entry.name);
            out.push_str(&format!(
                "\n### `{short}`\n\n```harness\n{}\n```\n\n{}\n\nExample: `{}`\n",
                entry.sig, entry.doc, entry.example
            ));
            if let Some(module) = entry.module {
                out.push_str(&format!("\nImport it with `use {module}.{{{short}}}`.\n"));
            }
        }
    }
    out
}

/// The prelude's signatures, for the checker.
pub fn signatures() -> SignatureSet {
    let mut set = SignatureSet::default();
    for entry in PRELUDE {
        match entry.module {
            Some(module) => set.module_builtin(module, entry.sig, entry.doc, entry.example),
            None => set.builtin(entry.sig, entry.doc, entry.example),
        };
    }
    set
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

    fn float_of(v: Result<Value, NativeError>) -> f64 {
        v.ok().and_then(|v| v.as_f64()).unwrap_or(f64::NAN)
    }

    #[test]
    fn numeric_and_statistics_builtins_follow_their_documentation() {
        let f = |x: f64| Value::float(x).unwrap_or(Value::Unit);
        assert_eq!(round(&mut Ctx, &[f(2.5)]), Ok(Value::Int(3)));
        assert_eq!(round(&mut Ctx, &[f(-2.5)]), Ok(Value::Int(-3)));
        assert!(round(&mut Ctx, &[f(1e300)]).is_err());
        assert!(sqrt(&mut Ctx, &[f(-1.0)]).is_err());
        assert_eq!(clamp(&mut Ctx, &[f(1.5), f(0.0), f(1.0)]), Ok(f(1.0)));
        assert_eq!(
            float_of(entropy(&mut Ctx, &[Value::list(vec![f(0.5), f(0.5)])])),
            1.0
        );
        assert_eq!(float_of(binary_entropy(&mut Ctx, &[f(0.5)])), 1.0);
        assert_eq!(float_of(ema(&mut Ctx, &[f(0.5), f(1.0), f(0.1)])), 0.55);
        let w = float_of(wilson_lower(&mut Ctx, &[Value::Int(8), Value::Int(10)]));
        assert!((w - 0.4902).abs() < 1e-3, "{w}");
        let map: BTreeMap<Value, Value> = [
            (Value::Int(2), f(0.7)),
            (Value::Int(1), f(0.7)),
            (Value::Int(3), f(0.1)),
        ]
        .into();
        assert_eq!(
            map_argmax(&mut Ctx, &[Value::Map(Arc::new(map))]),
            Ok(Value::some(Value::Int(1)))
        );
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
