//! What the analysis knows of a value ([`Shape`]): an interval for an `Int`, a length bound and
//! element shape for a collection; and the shapes an `llm` reply is declared to have.

use std::sync::Arc;

use super::UNBOUNDED;
use crate::ir::Literal;
use crate::types::Ty;

/// What the analysis knows of a value.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Shape {
    /// For an `Int`: the interval it lies in.
    pub(super) lo: i128,
    pub(super) hi: i128,
    /// For a collection (an `Option` counts as one of at most one element): the most elements.
    pub(super) len: u64,
    /// Why `len` is [`UNBOUNDED`].
    pub(super) why: Option<Arc<str>>,
    /// The elements' shape (a map's values).
    pub(super) elem: Option<Arc<Shape>>,
    /// A record's fields, when the record was built where the analysis saw it.
    pub(super) fields: Option<Arc<Vec<Shape>>>,
}

impl Default for Shape {
    fn default() -> Self {
        Shape::scalar()
    }
}

impl Shape {
    pub(super) fn scalar() -> Self {
        Shape {
            lo: i64::MIN as i128,
            hi: i64::MAX as i128,
            len: 0,
            why: None,
            elem: None,
            fields: None,
        }
    }

    pub(super) fn int(lo: i128, hi: i128) -> Self {
        Shape {
            lo: lo.max(i64::MIN as i128),
            hi: hi.min(i64::MAX as i128),
            ..Shape::scalar()
        }
    }

    pub(super) fn collection(len: u64, elem: Shape) -> Self {
        Shape {
            len,
            elem: Some(Arc::new(elem)),
            ..Shape::scalar()
        }
    }

    /// The shape every value of `ty` has; collections are unbounded, for `why`.
    pub(super) fn of_type(ty: &Ty, why: &Arc<str>) -> Self {
        match ty {
            Ty::Option(t) => Shape::collection(1, Shape::of_type(t, why)),
            Ty::List(t) | Ty::Set(t) | Ty::Map(_, t) => Shape {
                why: Some(why.clone()),
                ..Shape::collection(UNBOUNDED, Shape::of_type(t, why))
            },
            Ty::Preview => Shape {
                why: Some(why.clone()),
                ..Shape::collection(UNBOUNDED, Shape::scalar())
            },
            _ => Shape::scalar(),
        }
    }

    /// The shape of a value of `ty` whose collections, at every depth, hold at most `max`
    /// elements, as a game declares for an observation's field; an `Int` field lies in
    /// `0..=max` (the integers inside a collection are not bounded).
    pub(super) fn bounded(ty: &Ty, max: u64, why: &Arc<str>) -> Self {
        match ty {
            Ty::Int => Shape::int(0, i128::from(max)),
            _ => Shape::nested(ty, max, why),
        }
    }

    /// [`Shape::bounded`] below the top: collections only.
    pub(super) fn nested(ty: &Ty, max: u64, why: &Arc<str>) -> Self {
        match ty {
            Ty::Option(t) => Shape::collection(1, Shape::nested(t, max, why)),
            Ty::List(t) | Ty::Set(t) | Ty::Map(_, t) => {
                Shape::collection(max, Shape::nested(t, max, why))
            }
            _ => Shape::of_type(ty, why),
        }
    }

    /// [`Shape::of_type`], with the reason made only for a type that keeps it (one holding a
    /// collection): the analysis asks for the shape of a type at most nodes, and most are scalars.
    pub(super) fn of_type_for(ty: &Ty, why: impl FnOnce() -> Arc<str>) -> Self {
        match ty {
            Ty::Option(_) | Ty::List(_) | Ty::Set(_) | Ty::Map(..) | Ty::Preview => {
                Shape::of_type(ty, &why())
            }
            _ => Shape::scalar(),
        }
    }

    pub(super) fn elem(&self) -> Shape {
        self.elem.as_deref().cloned().unwrap_or_else(Shape::scalar)
    }

    /// The least shape covering both.
    pub(super) fn join(&self, other: &Shape) -> Shape {
        let (len, why) = if self.len >= other.len {
            (self.len, self.why.clone().or_else(|| other.why.clone()))
        } else {
            (other.len, other.why.clone())
        };
        let elem = match (&self.elem, &other.elem) {
            (Some(a), Some(b)) => Some(Arc::new(a.join(b))),
            (a, b) => a.clone().or_else(|| b.clone()),
        };
        let fields = match (&self.fields, &other.fields) {
            (Some(a), Some(b)) if a.len() == b.len() => Some(Arc::new(
                a.iter().zip(b.iter()).map(|(x, y)| x.join(y)).collect(),
            )),
            _ => None,
        };
        Shape {
            lo: self.lo.min(other.lo),
            hi: self.hi.max(other.hi),
            len,
            why,
            elem,
            fields,
        }
    }
}

/// The shape of an `llm` reply: every list holds at most its declared `len` bound and an `Int`
/// lies in its `where` range, as the host validates a reply before the harness sees it.
pub(super) fn reply_shape(shape: &crate::ir::LlmShape) -> Shape {
    match shape {
        crate::ir::LlmShape::Record(fields) => record_shape(fields),
        crate::ir::LlmShape::Enum(_) => Shape::scalar(),
    }
}

pub(super) fn record_shape(fields: &[crate::ir::LlmField]) -> Shape {
    Shape {
        fields: Some(Arc::new(
            fields
                .iter()
                .map(|f| field_shape(&f.kind, f.range.as_ref()))
                .collect(),
        )),
        ..Shape::scalar()
    }
}

pub(super) fn field_shape(
    kind: &crate::ir::LlmFieldKind,
    range: Option<&crate::ir::Range>,
) -> Shape {
    use crate::ir::LlmFieldKind as K;
    match kind {
        K::Int => match range {
            Some(crate::ir::Range {
                lo: Literal::Int(lo),
                hi: Literal::Int(hi),
                inclusive,
            }) => Shape::int(*lo as i128, *hi as i128 - i128::from(!inclusive)),
            _ => Shape::scalar(),
        },
        K::Optional(inner) => Shape::collection(1, field_shape(inner, range)),
        K::List { item, max_len, .. } => {
            Shape::collection(u64::from(*max_len), field_shape(item, range))
        }
        K::Record(fields) => record_shape(fields),
        K::Float | K::Bool | K::String | K::Enum(_) => Shape::scalar(),
    }
}
