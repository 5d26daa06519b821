//! Patterns, `match` and exhaustiveness.

use std::collections::{HashMap, HashSet};

use harness_grammar::{Span, ast};

use super::{Checker, Lowered, lowered, rel};
use crate::codes::Code;
use crate::diagnostic::{Diagnostic, did_you_mean};
use crate::env::{self, TypeDef};
use crate::ir;
use crate::symbol::Symbol;
use crate::types::Ty;

impl Checker<'_> {
    pub(super) fn pattern(
        &mut self,
        pattern: &ast::Pattern,
        ty: &Ty,
        irrefutable: bool,
    ) -> ir::Pattern {
        let span = rel(pattern.span);
        let kind = match &pattern.kind {
            ast::PatternKind::Wildcard | ast::PatternKind::Error => ir::PatternKind::Wildcard,
            ast::PatternKind::Bind(name) if name.name == "None" => {
                self.note(name.span, Symbol::option_variant("None"));
                self.option_pattern(None, ty, pattern.span)
            }
            ast::PatternKind::Bind(name) => ir::PatternKind::Bind(self.new_local(name, ty.clone())),
            ast::PatternKind::Literal(expr) => {
                let value = self.check(expr, ty);
                match value.kind {
                    ir::ExprKind::Lit(literal) => ir::PatternKind::Lit(literal),
                    ir::ExprKind::Unary(ast::UnaryOp::Neg, _) => match env::literal(expr) {
                        Some(literal) => ir::PatternKind::Lit(literal),
                        None => ir::PatternKind::Wildcard,
                    },
                    _ => ir::PatternKind::Wildcard,
                }
            }
            ast::PatternKind::Variant(path, subpatterns) => {
                let segments: Vec<&str> = path.segments.iter().map(|s| s.name.as_str()).collect();
                if let [option @ ("Some" | "None")] = segments.as_slice() {
                    self.note(path.span, Symbol::option_variant(option));
                }
                match segments.as_slice() {
                    ["Some"] => {
                        let inner = subpatterns.first();
                        if subpatterns.len() != 1 {
                            self.error(
                                Code::Arity,
                                pattern.span,
                                "`Some` takes one pattern".to_owned(),
                                None,
                            );
                        }
                        self.option_pattern(inner, ty, pattern.span)
                    }
                    ["None"] => self.option_pattern(None, ty, pattern.span),
                    _ => self.variant_pattern(path, subpatterns, ty, pattern.span),
                }
            }
        };
        let lowered = ir::Pattern { kind, span };
        if irrefutable && !is_irrefutable(&lowered) {
            self.error(
                Code::RefutablePattern,
                pattern.span,
                "this pattern does not match every value, so it cannot be used in `let`".to_owned(),
                Some(
                    "use `match`, or a guard: `if let Pattern = value { ... } else { ... }`".into(),
                ),
            );
        }
        lowered
    }

    pub(super) fn option_pattern(
        &mut self,
        inner: Option<&ast::Pattern>,
        ty: &Ty,
        span: Span,
    ) -> ir::PatternKind {
        let elem = self.fresh(false);
        self.expect_ty(span, &Ty::Option(Box::new(elem.clone())), ty);
        match inner {
            Some(inner) => ir::PatternKind::Some(Box::new(self.pattern(inner, &elem, false))),
            None => ir::PatternKind::None,
        }
    }

    pub(super) fn variant_pattern(
        &mut self,
        path: &ast::Path,
        subpatterns: &[ast::Pattern],
        ty: &Ty,
        span: Span,
    ) -> ir::PatternKind {
        let (enum_name, variant) = match path.segments.as_slice() {
            [e, v] => (Some(e), v),
            [v] => (None, v),
            _ => {
                self.error(
                    Code::UnknownVariant,
                    path.span,
                    format!("`{}` is not a variant", env::path_text(path)),
                    None,
                );
                return ir::PatternKind::Wildcard;
            }
        };
        let index = match enum_name {
            // `LlmResult.Ok(r)`: the generic result enum is the scrutinee's `LlmResult<Reply>`.
            Some(e)
                if e.name == "LlmResult"
                    && !self.scope.types.contains_key("LlmResult")
                    && matches!(self.shallow(ty), Ty::Enum(name) if name.starts_with("LlmResult<")) =>
            {
                let Ty::Enum(name) = self.shallow(ty) else {
                    return ir::PatternKind::Wildcard;
                };
                match self.scope.enums.iter().position(|e| *e.name == *name) {
                    Some(index) => index,
                    None => return ir::PatternKind::Wildcard,
                }
            }
            Some(e) => match self.scope.types.get(&e.name) {
                Some(TypeDef::Enum(index)) => {
                    self.note_type_name(e, &e.name);
                    *index
                }
                _ => {
                    let help = did_you_mean(&e.name, self.scope.types.keys().map(String::as_str));
                    self.error(
                        Code::UnknownType,
                        e.span,
                        format!("unknown enum `{}`", e.name),
                        help,
                    );
                    return ir::PatternKind::Wildcard;
                }
            },
            None => match self.shallow(ty) {
                Ty::Enum(name) => match self.scope.enums.iter().position(|e| *e.name == *name) {
                    Some(index) => index,
                    None => return ir::PatternKind::Wildcard,
                },
                _ => {
                    self.error(
                        Code::UnknownVariant,
                        path.span,
                        format!("unknown variant `{}`", variant.name),
                        Some("qualify it with its enum: `Enum.Variant`".into()),
                    );
                    return ir::PatternKind::Wildcard;
                }
            },
        };
        let info = self.scope.enums[index].clone();
        self.expect_ty(span, &Ty::Enum(info.name.as_str().into()), ty);
        let Some(position) = info.variants.iter().position(|(v, _)| *v == variant.name) else {
            let help = did_you_mean(&variant.name, info.variants.iter().map(|(v, _)| v.as_str()));
            self.error(
                Code::UnknownVariant,
                variant.span,
                format!("enum `{}` has no variant `{}`", info.name, variant.name),
                help,
            );
            return ir::PatternKind::Wildcard;
        };
        self.note_variant(index, variant);
        let payload_types = &info.variants[position].1;
        if payload_types.len() != subpatterns.len() {
            self.error(
                Code::Arity,
                span,
                format!(
                    "variant `{}.{}` has {} value(s), but the pattern has {}",
                    info.name,
                    variant.name,
                    payload_types.len(),
                    subpatterns.len()
                ),
                None,
            );
        }
        let payload = subpatterns
            .iter()
            .enumerate()
            .map(|(i, p)| {
                self.pattern(
                    p,
                    &payload_types.get(i).cloned().unwrap_or(Ty::Error),
                    false,
                )
            })
            .collect();
        ir::PatternKind::Variant {
            enum_id: info.id,
            index: position as u32,
            payload,
        }
    }

    pub(super) fn match_expr(
        &mut self,
        scrutinee: &ast::Expr,
        arms: &[ast::MatchArm],
        span: Span,
        hint: Option<&Ty>,
    ) -> Lowered {
        let scrutinee = self.infer(scrutinee, None);
        let scrutinee_ty = scrutinee.ty.clone();
        let mut result_ty = hint.cloned().unwrap_or_else(|| self.fresh(false));
        let mut lowered_arms = Vec::new();
        let mut seen = Seen::default();
        for (i, arm) in arms.iter().enumerate() {
            let depth = self.locals.len();
            let pattern = self.pattern(&arm.pattern, &scrutinee_ty, false);
            let body = if i == 0 && hint.is_none() {
                let body = self.infer(&arm.body, None);
                result_ty = body.ty.clone();
                body
            } else {
                self.check(&arm.body, &result_ty)
            };
            self.end_scope(depth, arm.span.end);
            if seen.covers(&pattern) {
                self.push(
                    Diagnostic::new(Code::UnreachableArm, arm.pattern.span, "this arm is never reached".to_owned())
                        .help("earlier arms already match every value it would match; remove it or move it up"),
                );
            }
            seen.insert(&pattern);
            lowered_arms.push(ir::MatchArm { pattern, body });
        }
        let ty = self.zonk(&scrutinee_ty);
        if !ty.has_error() {
            let patterns: Vec<&ir::Pattern> = lowered_arms.iter().map(|a| &a.pattern).collect();
            let missing = self.missing(&patterns, &ty);
            if !missing.is_empty() {
                self.error(
                    Code::NonExhaustive,
                    span,
                    format!("this `match` does not handle: {}", missing.join(", ")),
                    Some(format!(
                        "add arms for {}, or a final `_ => ...` arm",
                        missing.join(", ")
                    )),
                );
            }
        }
        lowered(
            ir::ExprKind::Match(Box::new(scrutinee), lowered_arms),
            result_ty,
            span,
        )
    }

    /// The cases of `ty` that none of `patterns` match, written as patterns.
    pub(super) fn missing(&self, patterns: &[&ir::Pattern], ty: &Ty) -> Vec<String> {
        if patterns.iter().any(|p| is_irrefutable(p)) {
            return Vec::new();
        }
        match self.shallow(ty) {
            Ty::Bool => [true, false]
                .into_iter()
                .filter(|b| {
                    !patterns
                        .iter()
                        .any(|p| p.kind == ir::PatternKind::Lit(ir::Literal::Bool(*b)))
                })
                .map(|b| b.to_string())
                .collect(),
            Ty::Option(inner) => {
                let mut missing = Vec::new();
                if !patterns.iter().any(|p| p.kind == ir::PatternKind::None) {
                    missing.push("None".to_owned());
                }
                let somes: Vec<&ir::Pattern> = patterns
                    .iter()
                    .filter_map(|p| match &p.kind {
                        ir::PatternKind::Some(inner) => Some(&**inner),
                        _ => None,
                    })
                    .collect();
                if somes.is_empty() {
                    missing.push("Some(_)".to_owned());
                } else {
                    missing.extend(
                        self.missing(&somes, &inner)
                            .into_iter()
                            .map(|m| format!("Some({m})")),
                    );
                }
                missing
            }
            Ty::Enum(name) => {
                let Some(info) = self.scope.enum_named(&name) else {
                    return Vec::new();
                };
                let mut missing = Vec::new();
                for (index, (variant, payload)) in info.variants.iter().enumerate() {
                    let rows: Vec<&Vec<ir::Pattern>> = patterns
                        .iter()
                        .filter_map(|p| match &p.kind {
                            ir::PatternKind::Variant {
                                index: i, payload, ..
                            } if *i as usize == index => Some(payload),
                            _ => None,
                        })
                        .collect();
                    let shown = if payload.is_empty() {
                        format!("{name}.{variant}")
                    } else {
                        format!("{name}.{variant}(..)")
                    };
                    if rows.is_empty() {
                        missing.push(shown);
                    } else if payload.len() == 1 {
                        let column: Vec<&ir::Pattern> =
                            rows.iter().filter_map(|r| r.first()).collect();
                        missing.extend(
                            self.missing(&column, &payload[0])
                                .into_iter()
                                .map(|m| format!("{name}.{variant}({m})")),
                        );
                    } else if payload.len() > 1
                        && !rows.iter().any(|r| r.iter().all(is_irrefutable))
                    {
                        missing.push(shown);
                    }
                }
                missing
            }
            _ => vec!["_".to_owned()],
        }
    }
}

fn is_irrefutable(pattern: &ir::Pattern) -> bool {
    matches!(
        pattern.kind,
        ir::PatternKind::Wildcard | ir::PatternKind::Bind(_)
    )
}

/// The patterns of the arms before the current one, indexed so that asking whether they cover
/// the next arm costs about one lookup instead of one comparison per earlier arm (a `match` of
/// 100,000 literal arms would otherwise take quadratic time). It answers exactly as asking
/// [`covers`] of every earlier pattern would.
#[derive(Default)]
struct Seen {
    /// A wildcard or binding was seen: it covers everything after it.
    any: bool,
    literals: HashSet<LiteralKey>,
    none: bool,
    /// The patterns inside the `Some(...)` arms.
    some: Option<Box<Seen>>,
    /// The payload patterns of each enum variant's arms.
    variants: HashMap<(ir::EnumId, u32), Vec<Vec<ir::Pattern>>>,
}

/// A literal as a hashable key, equal exactly when the literals compare equal: floats by their
/// bits with both zeros as one, and no key for NaN, which equals nothing.
#[derive(Clone, PartialEq, Eq, Hash)]
enum LiteralKey {
    Int(i64),
    Float(u64),
    Bool(bool),
    String(String),
}

impl LiteralKey {
    fn of(literal: &ir::Literal) -> Option<Self> {
        Some(match literal {
            ir::Literal::Int(n) => Self::Int(*n),
            ir::Literal::Float(x) if x.is_nan() => return None,
            ir::Literal::Float(x) => Self::Float(if *x == 0.0 { 0 } else { x.to_bits() }),
            ir::Literal::Bool(b) => Self::Bool(*b),
            ir::Literal::String(s) => Self::String(s.clone()),
        })
    }
}

impl Seen {
    /// True when some earlier pattern matches every value `later` matches.
    fn covers(&self, later: &ir::Pattern) -> bool {
        if self.any {
            return true;
        }
        match &later.kind {
            ir::PatternKind::Wildcard | ir::PatternKind::Bind(_) => false,
            ir::PatternKind::Lit(literal) => {
                LiteralKey::of(literal).is_some_and(|key| self.literals.contains(&key))
            }
            ir::PatternKind::None => self.none,
            ir::PatternKind::Some(inner) => self.some.as_ref().is_some_and(|s| s.covers(inner)),
            ir::PatternKind::Variant {
                enum_id,
                index,
                payload,
            } => self
                .variants
                .get(&(*enum_id, *index))
                .is_some_and(|earlier| {
                    earlier.iter().any(|p| {
                        p.len() == payload.len() && p.iter().zip(payload).all(|(a, b)| covers(a, b))
                    })
                }),
        }
    }

    fn insert(&mut self, pattern: &ir::Pattern) {
        match &pattern.kind {
            ir::PatternKind::Wildcard | ir::PatternKind::Bind(_) => self.any = true,
            ir::PatternKind::Lit(literal) => {
                if let Some(key) = LiteralKey::of(literal) {
                    self.literals.insert(key);
                }
            }
            ir::PatternKind::None => self.none = true,
            ir::PatternKind::Some(inner) => self.some.get_or_insert_default().insert(inner),
            ir::PatternKind::Variant {
                enum_id,
                index,
                payload,
            } => self
                .variants
                .entry((*enum_id, *index))
                .or_default()
                .push(payload.clone()),
        }
    }
}

/// True when `earlier` matches every value `later` matches (a conservative approximation).
fn covers(earlier: &ir::Pattern, later: &ir::Pattern) -> bool {
    match (&earlier.kind, &later.kind) {
        (ir::PatternKind::Wildcard | ir::PatternKind::Bind(_), _) => true,
        (ir::PatternKind::Lit(a), ir::PatternKind::Lit(b)) => a == b,
        (ir::PatternKind::None, ir::PatternKind::None) => true,
        (ir::PatternKind::Some(a), ir::PatternKind::Some(b)) => covers(a, b),
        (
            ir::PatternKind::Variant {
                enum_id: e1,
                index: i1,
                payload: p1,
            },
            ir::PatternKind::Variant {
                enum_id: e2,
                index: i2,
                payload: p2,
            },
        ) => {
            e1 == e2
                && i1 == i2
                && p1.len() == p2.len()
                && p1.iter().zip(p2).all(|(a, b)| covers(a, b))
        }
        _ => false,
    }
}
