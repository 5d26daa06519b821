//! The measures of the cost analysis: the work of an expression, and the size of a value as a
//! structural comparison walks it.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::{Shape, UNBOUNDED, add, mul};
use crate::types::Ty;

/// The size of a value as a structural comparison sees it: one element per member of every
/// collection at every depth (a record's fields summed, a map's keys and values), as the `len` of
/// a shape, with why when it is unbounded. Opaque and enum values count as one, as elsewhere in
/// the analysis.
pub(super) fn deep(shape: &Shape, ty: &Ty) -> Shape {
    let sized = |len: u64, why: Option<Arc<str>>| Shape {
        len,
        why,
        ..Shape::scalar()
    };
    let unseen = || -> Arc<str> {
        Arc::from("a record field compared where the record's making is not seen")
    };
    match ty {
        Ty::Option(t) | Ty::List(t) | Ty::Set(t) => {
            let inner = deep(&shape.elem(), t);
            sized(
                mul(shape.len, add(1, inner.len)),
                shape.why.clone().or(inner.why),
            )
        }
        Ty::Map(k, v) => {
            let key = deep(&Shape::of_type_for(k, unseen), k);
            let value = deep(&shape.elem(), v);
            sized(
                mul(shape.len, add(1, add(key.len, value.len))),
                shape.why.clone().or(key.why).or(value.why),
            )
        }
        Ty::Record(record) => {
            let mut total = sized(0, None);
            for (index, (_, field_ty)) in record.fields.iter().enumerate() {
                let field = shape
                    .fields
                    .as_ref()
                    .and_then(|f| f.get(index).cloned())
                    .unwrap_or_else(|| Shape::of_type_for(field_ty, unseen));
                let d = deep(&field, field_ty);
                total.len = add(total.len, d.len);
                total.why = total.why.or(d.why);
            }
            total
        }
        _ => sized(shape.len, shape.why.clone()),
    }
}

/// A bound with the sources of unboundedness met on the way.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Work {
    pub(super) steps: u64,
    pub(super) previews: u64,
    pub(super) unbounded: BTreeSet<Arc<str>>,
}

impl Work {
    pub(super) fn plus(&mut self, other: &Work) {
        self.steps = add(self.steps, other.steps);
        self.previews = add(self.previews, other.previews);
        self.unbounded.extend(other.unbounded.iter().cloned());
    }

    pub(super) fn times(&self, n: u64) -> Work {
        Work {
            steps: mul(self.steps, n),
            previews: mul(self.previews, n),
            unbounded: self.unbounded.clone(),
        }
    }

    /// The larger of two alternatives (either may run), keeping both's reasons.
    pub(super) fn max(&mut self, other: &Work) {
        self.steps = self.steps.max(other.steps);
        self.previews = self.previews.max(other.previews);
        self.unbounded.extend(other.unbounded.iter().cloned());
    }

    /// Adds `n` units of work over the elements of `shape`, noting why when it is unbounded.
    pub(super) fn walk(&mut self, shape: &Shape) {
        self.steps = add(self.steps, shape.len);
        if shape.len == UNBOUNDED
            && let Some(why) = &shape.why
        {
            self.unbounded.insert(why.clone());
        }
    }
}
