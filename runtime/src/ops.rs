//! Checked operators: arithmetic, comparison, membership and compound patches.
//!
//! Every operation that has no value (integer overflow, division by zero, a non-finite float)
//! returns a [`RuntimeError`] at the span of the expression, never panics and never produces NaN.

use std::sync::Arc;

use harness_compiler::ir::{AssignOp, BinaryOp, Literal, Range, SrcSpan, UnaryOp};

use crate::error::{ErrorCode, RtResult, RuntimeError};
use crate::value::Value;

fn internal(span: SrcSpan, what: &str, a: &Value, b: &Value) -> RuntimeError {
    RuntimeError::new(
        ErrorCode::Internal,
        span,
        format!(
            "internal error: `{what}` applied to {} and {}, which the checker should have rejected",
            a.kind_name(),
            b.kind_name()
        ),
    )
}

/// A float result, or [`ErrorCode::NotFinite`] when it is NaN or infinite.
pub fn finite(x: f64, span: SrcSpan, what: &str) -> RtResult<Value> {
    Value::float(x).ok_or_else(|| {
        RuntimeError::new(
            ErrorCode::NotFinite,
            span,
            format!("`{what}` has no finite value here (the result would be {x})"),
        )
    })
}

/// The value of a literal.
pub fn literal(lit: &Literal, span: SrcSpan) -> RtResult<Value> {
    Ok(match lit {
        Literal::Int(i) => Value::Int(*i),
        Literal::Float(f) => finite(*f, span, "literal")?,
        Literal::Bool(b) => Value::Bool(*b),
        Literal::String(s) => Value::str(s),
    })
}

/// Applies a prefix operator.
pub fn unary(op: UnaryOp, v: Value, span: SrcSpan) -> RtResult<Value> {
    match (op, &v) {
        (UnaryOp::Neg, Value::Int(i)) => i.checked_neg().map(Value::Int).ok_or_else(|| {
            RuntimeError::new(
                ErrorCode::Overflow,
                span,
                format!("negating {i} overflows Int"),
            )
        }),
        (UnaryOp::Neg, Value::Float(f)) => finite(-f.get(), span, "-"),
        (UnaryOp::Not, Value::Bool(b)) => Ok(Value::Bool(!b)),
        _ => Err(internal(
            span,
            if op == UnaryOp::Neg { "-" } else { "not" },
            &v,
            &Value::Unit,
        )),
    }
}

/// Applies an infix operator other than the short-circuiting `and` and `or`.
pub fn binary(op: BinaryOp, a: Value, b: Value, span: SrcSpan) -> RtResult<Value> {
    use BinaryOp::*;
    match op {
        Eq => Ok(Value::Bool(a == b)),
        Ne => Ok(Value::Bool(a != b)),
        Lt => Ok(Value::Bool(a < b)),
        Le => Ok(Value::Bool(a <= b)),
        Gt => Ok(Value::Bool(a > b)),
        Ge => Ok(Value::Bool(a >= b)),
        In | NotIn => {
            let found = match (&b, &a) {
                (Value::List(items), _) => items.contains(&a),
                (Value::Set(items), _) => items.contains(&a),
                (Value::Map(map), _) => map.contains_key(&a),
                (Value::Str(hay), Value::Str(needle)) => hay.contains(&**needle),
                _ => return Err(internal(span, op.symbol(), &a, &b)),
            };
            Ok(Value::Bool(found == (op == In)))
        }
        Add | Sub | Mul | Div | Rem => arith(op, a, b, span),
        And | Or => match (&a, &b) {
            (Value::Bool(x), Value::Bool(y)) => {
                Ok(Value::Bool(if op == And { *x && *y } else { *x || *y }))
            }
            _ => Err(internal(span, op.symbol(), &a, &b)),
        },
    }
}

fn arith(op: BinaryOp, a: Value, b: Value, span: SrcSpan) -> RtResult<Value> {
    use BinaryOp::*;
    let sym = op.symbol();
    match (&a, &b) {
        (Value::Int(x), Value::Int(y)) => {
            let (x, y) = (*x, *y);
            if matches!(op, Div | Rem) && y == 0 {
                return Err(RuntimeError::new(
                    ErrorCode::DivisionByZero,
                    span,
                    format!("`{x} {sym} 0`: division by zero; guard the divisor with an `if`"),
                ));
            }
            let r = match op {
                Add => x.checked_add(y),
                Sub => x.checked_sub(y),
                Mul => x.checked_mul(y),
                Div => x.checked_div(y),
                _ => x.checked_rem(y),
            };
            r.map(Value::Int).ok_or_else(|| {
                RuntimeError::new(
                    ErrorCode::Overflow,
                    span,
                    format!("`{x} {sym} {y}` overflows Int"),
                )
            })
        }
        (Value::Float(x), Value::Float(y)) => {
            let (x, y) = (x.get(), y.get());
            if matches!(op, Div | Rem) && y == 0.0 {
                return Err(RuntimeError::new(
                    ErrorCode::DivisionByZero,
                    span,
                    format!("`{x:?} {sym} 0.0`: division by zero; guard the divisor with an `if`"),
                ));
            }
            let r = match op {
                Add => x + y,
                Sub => x - y,
                Mul => x * y,
                Div => x / y,
                _ => x % y,
            };
            finite(r, span, sym)
        }
        (Value::Str(x), Value::Str(y)) if op == Add => Ok(Value::str(&format!("{x}{y}"))),
        (Value::List(x), Value::List(y)) if op == Add => {
            let mut items = x.as_ref().clone();
            items.extend(y.iter().cloned());
            Ok(Value::list(items))
        }
        (Value::Set(x), Value::Set(y)) if matches!(op, Add | Sub) => {
            let mut items = x.as_ref().clone();
            if op == Add {
                items.extend(y.iter().cloned());
            } else {
                items.retain(|v| !y.contains(v));
            }
            Ok(Value::Set(Arc::new(items)))
        }
        _ => Err(internal(span, sym, &a, &b)),
    }
}

/// Combines a place's current value with a patch operand.
pub fn assign(op: AssignOp, old: Value, v: Value, span: SrcSpan) -> RtResult<Value> {
    match op {
        AssignOp::Set => Ok(v),
        AssignOp::Add => match (&old, v) {
            (Value::List(_), v @ Value::List(_)) | (Value::Set(_), v @ Value::Set(_)) => {
                binary(BinaryOp::Add, old, v, span)
            }
            (Value::List(items), v) => {
                let mut items = items.as_ref().clone();
                items.push(v);
                Ok(Value::list(items))
            }
            (Value::Set(items), v) => {
                let mut items = items.as_ref().clone();
                items.insert(v);
                Ok(Value::Set(Arc::new(items)))
            }
            (_, v) => binary(BinaryOp::Add, old, v, span),
        },
        AssignOp::Sub => binary(BinaryOp::Sub, old, v, span),
        AssignOp::Mul => binary(BinaryOp::Mul, old, v, span),
    }
}

/// True when `v` lies in `range`.
pub fn in_range(v: &Value, range: &Range) -> bool {
    let bound = |l: &Literal| match l {
        Literal::Int(i) => Some(*i as f64),
        Literal::Float(f) => Some(*f),
        _ => None,
    };
    // A collection's range bounds its number of elements.
    let measure = match v {
        Value::List(items) => Some(items.len() as f64),
        Value::Set(items) => Some(items.len() as f64),
        Value::Map(entries) => Some(entries.len() as f64),
        _ => v.as_f64(),
    };
    match (measure, bound(&range.lo), bound(&range.hi)) {
        (Some(x), Some(lo), Some(hi)) => lo <= x && if range.inclusive { x <= hi } else { x < hi },
        // Ranges are only declared on numbers; anything else has no range to leave.
        _ => true,
    }
}

/// The range as written, for messages.
pub fn range_text(range: &Range) -> String {
    let lit = |l: &Literal| match l {
        Literal::Int(i) => i.to_string(),
        Literal::Float(f) => format!("{f:?}"),
        Literal::Bool(b) => b.to_string(),
        Literal::String(s) => format!("{s:?}"),
    };
    format!(
        "{}..{}{}",
        lit(&range.lo),
        if range.inclusive { "=" } else { "" },
        lit(&range.hi)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: SrcSpan = SrcSpan {
        file: 0,
        start: 1,
        end: 2,
    };

    #[test]
    fn arithmetic_without_a_value_is_a_located_error() {
        let e = binary(BinaryOp::Div, Value::Int(1), Value::Int(0), S).unwrap_err();
        assert_eq!((e.code, e.span), ("R0002", S));
        let e = binary(BinaryOp::Add, Value::Int(i64::MAX), Value::Int(1), S).unwrap_err();
        assert_eq!(e.code, "R0001");
        let e = binary(BinaryOp::Div, Value::Int(i64::MIN), Value::Int(-1), S).unwrap_err();
        assert_eq!(e.code, "R0001");
        let big = Value::float(1e308).unwrap_or(Value::Unit);
        let e = binary(BinaryOp::Mul, big.clone(), big, S).unwrap_err();
        assert_eq!(e.code, "R0005");
        let zero = Value::float(0.0).unwrap_or(Value::Unit);
        let e = binary(BinaryOp::Div, zero.clone(), zero, S).unwrap_err();
        assert_eq!(e.code, "R0002");
    }

    #[test]
    fn compound_patches_append_and_union() {
        let list = Value::list(vec![Value::Int(1)]);
        let out = assign(AssignOp::Add, list, Value::Int(2), S).unwrap_or(Value::Unit);
        assert_eq!(out, Value::list(vec![Value::Int(1), Value::Int(2)]));
    }
}
