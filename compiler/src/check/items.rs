//! Items: type aliases, enums, constants, config, errors, functions and `llm` declarations.

use std::collections::BTreeSet;

use harness_grammar::{Span, ast};

use super::{Checker, ChunkCheck, Ctx, NodeKind, rel};
use crate::codes::Code;
use crate::diagnostic::{Diagnostic, did_you_mean};
use crate::env::{self, ValueDef};
use crate::ir::{self, LayerId};
use crate::types::Ty;

impl Checker<'_> {
    pub(super) fn item(&mut self, item: &ast::Item, out: &mut ChunkCheck) {
        match item {
            ast::Item::TypeAlias(alias) => {
                self.resolve(&alias.ty);
            }
            ast::Item::Enum(decl) => {
                for variant in &decl.variants {
                    for ty in &variant.payload {
                        self.resolve(ty);
                    }
                }
            }
            ast::Item::Const(decl) => {
                self.begin(
                    Ctx::Const,
                    NodeKind::Const,
                    Some(self.item_key(&decl.name.name)),
                    decl.name.span,
                );
                let ty = self.resolve(&decl.ty);
                let value = self.body(&decl.value, &ty);
                if let Some((ValueDef::Const { id, .. }, _, _)) =
                    self.scope.values.get(&decl.name.name)
                {
                    out.ir.consts.push((
                        *id,
                        ir::ConstDef {
                            name: decl.name.name.clone(),
                            ty,
                            value,
                            span: rel(decl.span),
                        },
                    ));
                }
            }
            ast::Item::Config(block) => {
                for param in &block.params {
                    self.begin(Ctx::Config, NodeKind::Other, None, param.name.span);
                    let lowered = self.param(param, None);
                    if let Some((ValueDef::Config { id, .. }, _, _)) =
                        self.scope.values.get(&param.name.name)
                    {
                        out.ir.config.push((*id, lowered));
                    }
                }
            }
            ast::Item::Fn(decl) => {
                self.begin(
                    Ctx::TopFn,
                    NodeKind::Fn,
                    Some(self.item_key(&decl.name.name)),
                    decl.name.span,
                );
                let lowered = self.function(decl);
                if let Some((ValueDef::Fn(info), _, _)) = self.scope.values.get(&decl.name.name) {
                    out.ir.fns.push((info.id, lowered));
                }
            }
            ast::Item::Error(decl) => {
                if let Some((id, _)) = self.scope.errors.get(&decl.name.name) {
                    out.ir.errors.push((
                        *id,
                        ir::ErrorDef {
                            code: decl.name.name.clone(),
                            message: decl.message.value.clone(),
                            span: rel(decl.span),
                        },
                    ));
                }
            }
            ast::Item::Llm(decl) => {
                if let Some(lowered) = self.llm_item(decl) {
                    out.ir.llms.push(lowered);
                }
            }
            ast::Item::Use(_) | ast::Item::Layer(_) | ast::Item::Invalid(_) => {}
        }
    }

    /// Checks an `llm` item: its reply type, its `where` bounds and its templates' placeholders;
    /// lowers it when the environment knows it.
    pub(super) fn llm_item(&mut self, decl: &ast::LlmDecl) -> Option<(ir::LlmId, ir::LlmDef)> {
        for param in &decl.params {
            self.resolve(&param.ty);
        }
        let reply = self.resolve(&decl.reply);
        let shape = self.llm_shape(&reply, decl.reply.span());
        let mut fields = match &shape {
            Some(ir::LlmShape::Record(fields)) => fields.clone(),
            _ => Vec::new(),
        };
        let mut bounded = Vec::new();
        for bound in &decl.bounds {
            bounded.extend(self.llm_bound(bound, &reply, &mut fields));
        }
        if shape.is_some() {
            self.llm_lengths("", &fields, &bounded, decl.reply.span());
        }
        let names: Vec<&str> = decl.params.iter().map(|p| p.name.name.as_str()).collect();
        let templates = [(&decl.system, false), (&decl.user, false)]
            .into_iter()
            .chain(decl.retry.as_ref().map(|r| (&r.feedback, true)));
        for (template, feedback) in templates {
            for (name, offset) in placeholders(&template.value) {
                let known = name == "schema" || (feedback && name == "error");
                if !known && !names.contains(&name.as_str()) {
                    let mut candidates = names.clone();
                    candidates.push("schema");
                    if feedback {
                        candidates.push("error");
                    }
                    // The offset is into the unescaped text; the literal's span is close enough
                    // to point at, and exact when the template has no escapes before it.
                    let start = template.span.start + 1 + offset as u32;
                    let span = Span {
                        start: start.min(template.span.end),
                        end: (start + name.len() as u32 + 2).min(template.span.end),
                    };
                    self.error(
                        Code::LlmPlaceholder,
                        span,
                        format!(
                            "`{{{name}}}` is neither a parameter of `{}` nor `{{schema}}`",
                            decl.name.name
                        ),
                        did_you_mean(&name, candidates)
                            .or_else(|| Some("write `{{` and `}}` for literal braces".into())),
                    );
                }
            }
        }
        let ensures = self.llm_ensures(decl, &reply);
        let retry = decl.retry.as_ref().and_then(|retry| self.llm_retry(retry));
        let info = self.scope.llms.get(&decl.name.name)?.clone();
        let result = self.scope.enum_named(&ir::llm_result_name(&info.reply))?;
        let failure = self.scope.enum_named(ir::LLM_FAILURE_ENUM)?;
        let shape = match shape? {
            ir::LlmShape::Record(_) => ir::LlmShape::Record(fields),
            other => other,
        };
        Some((
            info.id,
            ir::LlmDef {
                name: decl.name.name.clone(),
                params: info.params.clone(),
                system: decl.system.value.clone(),
                user: decl.user.value.clone(),
                reply,
                shape,
                ensures,
                retry,
                result_enum: result.id,
                failure_enum: failure.id,
                span: rel(decl.span),
            },
        ))
    }

    /// The shape of a reply type, or an E0613 when it is not a record of reply fields or an enum
    /// of unit variants.
    pub(super) fn llm_shape(&mut self, reply: &Ty, span: Span) -> Option<ir::LlmShape> {
        let shape = match reply {
            Ty::Error => return None,
            Ty::Enum(name) => self.unit_enum(name).map(ir::LlmShape::Enum),
            Ty::Record(record) if !record.fields.is_empty() => {
                let mut fields = Vec::new();
                let mut ok = true;
                for (name, ty) in &record.fields {
                    match self.llm_kind(ty, 0) {
                        Some(kind) => fields.push(ir::LlmField {
                            name: name.clone(),
                            kind,
                            range: None,
                        }),
                        None => {
                            ok = false;
                            if !ty.has_error() {
                                self.error(
                                    Code::LlmReplyType,
                                    span,
                                    format!("field `{name}` of the reply has type `{ty}`, which an LLM reply cannot carry"),
                                    Some(REPLY_FIELD_TYPES.into()),
                                );
                            }
                        }
                    }
                }
                if !ok {
                    return None;
                }
                return Some(ir::LlmShape::Record(fields));
            }
            _ => None,
        };
        if shape.is_none() && !reply.has_error() {
            self.error(
                Code::LlmReplyType,
                span,
                format!("an LLM cannot reply with `{reply}`"),
                Some(format!(
                    "reply with a record or with an enum of unit variants; {REPLY_FIELD_TYPES}"
                )),
            );
        }
        shape
    }

    /// An enum of unit variants, with every variant allowed.
    fn unit_enum(&self, name: &str) -> Option<ir::LlmEnum> {
        let info = self.scope.enum_named(name)?;
        if info.variants.is_empty() || info.variants.iter().any(|(_, p)| !p.is_empty()) {
            return None;
        }
        let variants: Vec<String> = info.variants.iter().map(|(v, _)| v.clone()).collect();
        Some(ir::LlmEnum {
            enum_id: info.id,
            allowed: variants.clone(),
            variants,
        })
    }

    /// The kind of a reply field of type `ty`, or `None` when a reply cannot carry it. Lists
    /// start without a length; the item's `len` bound gives it.
    fn llm_kind(&self, ty: &Ty, depth: usize) -> Option<ir::LlmFieldKind> {
        // Records nest inside lists (a plan of steps); a bound on nesting keeps a pathological
        // alias chain from recursing without end.
        const MAX_DEPTH: usize = 4;
        if depth > MAX_DEPTH {
            return None;
        }
        Some(match ty {
            Ty::Int => ir::LlmFieldKind::Int,
            Ty::Float => ir::LlmFieldKind::Float,
            Ty::Bool => ir::LlmFieldKind::Bool,
            Ty::String => ir::LlmFieldKind::String,
            Ty::Enum(e) => ir::LlmFieldKind::Enum(self.unit_enum(e)?),
            Ty::Option(inner) if !matches!(**inner, Ty::Option(_)) => {
                ir::LlmFieldKind::Optional(Box::new(self.llm_kind(inner, depth + 1)?))
            }
            Ty::List(inner) if !matches!(**inner, Ty::Option(_) | Ty::List(_)) => {
                ir::LlmFieldKind::List {
                    item: Box::new(self.llm_kind(inner, depth + 1)?),
                    min_len: 0,
                    max_len: u32::MAX,
                }
            }
            Ty::Record(record) if !record.fields.is_empty() => ir::LlmFieldKind::Record(
                record
                    .fields
                    .iter()
                    .map(|(name, ty)| {
                        Some(ir::LlmField {
                            name: name.clone(),
                            kind: self.llm_kind(ty, depth + 1)?,
                            range: None,
                        })
                    })
                    .collect::<Option<Vec<_>>>()?,
            ),
            _ => return None,
        })
    }

    /// Checks one `where` bound and records it on the field it names. Returns the path of a
    /// list whose length it bounds.
    pub(super) fn llm_bound(
        &mut self,
        bound: &ast::LlmBound,
        reply: &Ty,
        fields: &mut [ir::LlmField],
    ) -> Option<String> {
        let head = bound.path.first()?;
        if !matches!(reply, Ty::Record(_)) {
            if !reply.has_error() {
                self.error(
                    Code::LlmBound,
                    head.span,
                    format!(
                        "`where` bounds fields of a record reply, and `{reply}` is not a record"
                    ),
                    None,
                );
            }
            return None;
        }
        // Walk the path: each step past the first goes into the record items of a list (or
        // the record of an optional field).
        let mut current: &mut [ir::LlmField] = fields;
        let mut field_index = None;
        for (step, name) in bound.path.iter().enumerate() {
            let Some(index) = current.iter().position(|f| f.name == name.name) else {
                let known: Vec<String> = current.iter().map(|f| f.name.clone()).collect();
                self.error(
                    Code::LlmBound,
                    name.span,
                    if step == 0 {
                        format!("the reply `{reply}` has no field `{}`", name.name)
                    } else {
                        format!("the items have no field `{}`", name.name)
                    },
                    did_you_mean(&name.name, known.iter().map(String::as_str)),
                );
                return None;
            };
            if step + 1 == bound.path.len() {
                field_index = Some(index);
                break;
            }
            match innermost_mut(&mut current[index].kind) {
                ir::LlmFieldKind::Record(inner) => current = inner,
                _ => {
                    self.error(
                        Code::LlmBound,
                        bound.path[step + 1].span,
                        format!(
                            "`{}` holds no records, so it has no field `{}`",
                            name.name,
                            bound.path[step + 1].name
                        ),
                        None,
                    );
                    return None;
                }
            }
        }
        let field = &mut current[field_index?];
        let path: Vec<&str> = bound.path.iter().map(|p| p.name.as_str()).collect();
        let path = path.join(".");
        match &bound.kind {
            ast::LlmBoundKind::Range(range) => {
                let ty = match innermost_mut(&mut field.kind) {
                    ir::LlmFieldKind::Int => Ty::Int,
                    ir::LlmFieldKind::Float => Ty::Float,
                    _ => {
                        self.error(
                            Code::LlmBound,
                            head.span,
                            format!("field `{path}` is not a number; only `Int` and `Float` fields take a range"),
                            Some("bound a list's length with `len in lo..=hi`, an enum with `in {A, B}`".into()),
                        );
                        return None;
                    }
                };
                let range = self.llm_range(range, &ty, &path)?;
                field.range = Some(range);
                None
            }
            ast::LlmBoundKind::Len(range) => {
                let kind = match &mut field.kind {
                    ir::LlmFieldKind::Optional(inner) => inner.as_mut(),
                    other => other,
                };
                let ir::LlmFieldKind::List {
                    min_len, max_len, ..
                } = kind
                else {
                    self.error(
                        Code::LlmBound,
                        head.span,
                        format!("field `{path}` is not a list; only `List` fields take `len`"),
                        None,
                    );
                    return None;
                };
                let range = self.llm_range(range, &Ty::Int, &path)?;
                let (ir::Literal::Int(lo), ir::Literal::Int(hi)) = (&range.lo, &range.hi) else {
                    return None;
                };
                let hi = if range.inclusive { *hi } else { hi - 1 };
                let (Ok(lo), Ok(hi)) = (u32::try_from(*lo), u32::try_from(hi)) else {
                    self.error(
                        Code::LlmBound,
                        bound.span,
                        format!("the length of `{path}` must lie in 0..={}", u32::MAX),
                        None,
                    );
                    return None;
                };
                *min_len = lo;
                *max_len = hi;
                Some(path)
            }
            ast::LlmBoundKind::Variants(names) => {
                let ir::LlmFieldKind::Enum(e) = innermost_mut(&mut field.kind) else {
                    self.error(
                        Code::LlmBound,
                        head.span,
                        format!(
                            "field `{path}` is not an enum; only enum fields take a set of variants"
                        ),
                        None,
                    );
                    return None;
                };
                if names.is_empty() {
                    self.error(
                        Code::LlmBound,
                        bound.span,
                        format!("the set of variants of `{path}` is empty"),
                        Some("allow at least one variant".into()),
                    );
                    return None;
                }
                for name in names {
                    if !e.variants.contains(&name.name) {
                        self.error(
                            Code::LlmBound,
                            name.span,
                            format!("`{}` is not a variant of the field `{path}`", name.name),
                            did_you_mean(&name.name, e.variants.iter().map(String::as_str)),
                        );
                        return None;
                    }
                }
                e.allowed = e
                    .variants
                    .iter()
                    .filter(|v| names.iter().any(|n| &n.name == *v))
                    .cloned()
                    .collect();
                None
            }
        }
    }

    /// A literal, non-empty range of `ty` for the field `path`.
    fn llm_range(&mut self, range: &ast::RangeExpr, ty: &Ty, path: &str) -> Option<ir::Range> {
        let Some(lowered) = env::literal_range(range) else {
            self.error(
                Code::LlmBound,
                range.span,
                "the bounds of a range must be literals".to_owned(),
                Some("write the bounds as numbers, for example `in 0..=10`".into()),
            );
            return None;
        };
        let fits = |l: &ir::Literal| {
            matches!(
                (ty, l),
                (Ty::Int, ir::Literal::Int(_)) | (Ty::Float, ir::Literal::Float(_))
            )
        };
        if !fits(&lowered.lo) || !fits(&lowered.hi) {
            self.error(
                Code::LlmBound,
                range.span,
                format!("the bounds of `{path}` must be `{ty}` literals"),
                Some(if *ty == Ty::Float {
                    "write `0.0..=1.0`, not `0..=1`".into()
                } else {
                    "write whole numbers".into()
                }),
            );
            return None;
        }
        let as_f64 = |l: &ir::Literal| match l {
            ir::Literal::Int(v) => *v as f64,
            ir::Literal::Float(v) => *v,
            _ => 0.0,
        };
        let (lo, hi) = (as_f64(&lowered.lo), as_f64(&lowered.hi));
        if lo > hi || (lo == hi && !lowered.inclusive) {
            self.error(
                Code::LlmBound,
                range.span,
                "this range is empty".to_owned(),
                None,
            );
            return None;
        }
        Some(lowered)
    }

    /// The `ensure` conditions, each checked as a `Bool` with the typed reply as `reply` and the
    /// item's parameters in scope, like the body of a top-level `fn`.
    fn llm_ensures(&mut self, decl: &ast::LlmDecl, reply: &Ty) -> Vec<ir::LlmEnsure> {
        let mut out = Vec::new();
        for (i, ensure) in decl.ensures.iter().enumerate() {
            self.begin(Ctx::TopFn, NodeKind::Other, None, ensure.span);
            // `reply` is declared where the reply type is written, for go-to-definition.
            let reply_name = ast::Ident {
                name: "reply".to_owned(),
                span: decl.reply.span(),
            };
            self.new_local(&reply_name, reply.clone());
            for param in &decl.params {
                let ty = self.resolve(&param.ty);
                self.new_local(&param.name, ty);
            }
            let condition = self.body(&ensure.condition, &Ty::Bool);
            let message = match &ensure.message {
                Some(message) => message.value.clone(),
                None => format!(
                    "the reply fails check {} of `{}` (an `ensure`)",
                    i + 1,
                    decl.name.name
                ),
            };
            out.push(ir::LlmEnsure {
                condition,
                message,
                span: rel(ensure.span),
            });
        }
        out
    }

    /// `retry N with "..."`: `N` a literal from 1 to [`ir::MAX_LLM_RETRIES`].
    fn llm_retry(&mut self, retry: &ast::LlmRetry) -> Option<ir::LlmRetry> {
        let count = match &retry.count.kind {
            ast::ExprKind::Int(n) => Some(*n),
            _ => None,
        };
        match count {
            Some(n) if (1..=i64::from(ir::MAX_LLM_RETRIES)).contains(&n) => Some(ir::LlmRetry {
                count: n as u32,
                feedback: retry.feedback.value.clone(),
            }),
            _ => {
                self.error(
                    Code::LlmRetry,
                    retry.count.span,
                    format!(
                        "the number of retries must be a literal from 1 to {}",
                        ir::MAX_LLM_RETRIES
                    ),
                    Some("each retry is another call; write `retry 2 with \"...\"`".into()),
                );
                None
            }
        }
    }

    /// An E0615 for every list field (at any depth) that no `len` bound named.
    fn llm_lengths(
        &mut self,
        prefix: &str,
        fields: &[ir::LlmField],
        bounded: &[String],
        span: Span,
    ) {
        for field in fields {
            let path = format!("{prefix}{}", field.name);
            let mut kind = &field.kind;
            if let ir::LlmFieldKind::Optional(inner) = kind {
                kind = inner;
            }
            if let ir::LlmFieldKind::List { item, .. } = kind {
                if !bounded.contains(&path) {
                    self.error(
                        Code::LlmListLength,
                        span,
                        format!("the list field `{path}` of the reply has no length bound"),
                        Some(format!("add `where {path} len in 1..=8` (or the range you need): a list the model writes must be bounded")),
                    );
                }
                kind = item;
            }
            if let ir::LlmFieldKind::Record(inner) = kind {
                self.llm_lengths(&format!("{path}."), inner, bounded, span);
            }
        }
    }

    /// A `config` entry or a `tunable`.
    pub(super) fn param(&mut self, param: &ast::Param, layer: Option<LayerId>) -> ir::Param {
        let ty = self.resolve(&param.ty);
        let default = self.body(&param.default, &ty);
        let mut range = None;
        if let Some(written) = &param.range {
            match env::literal_range(written) {
                None => self.error(
                    Code::InvalidRange,
                    written.span,
                    "the bounds of a range must be literals".to_owned(),
                    Some("write the bounds as numbers, for example `in 0..=10`".into()),
                ),
                Some(r) => {
                    let bound_ok = |l: &ir::Literal| {
                        matches!(
                            (l, &ty),
                            (ir::Literal::Int(_), Ty::Int)
                                | (ir::Literal::Float(_), Ty::Float)
                                // A collection's range bounds its number of elements.
                                | (
                                    ir::Literal::Int(_),
                                    Ty::List(_) | Ty::Set(_) | Ty::Map(..)
                                )
                                | (_, Ty::Error)
                        )
                    };
                    let ordered = env::in_range(
                        &r.lo,
                        &ir::Range {
                            lo: r.lo.clone(),
                            hi: r.hi.clone(),
                            inclusive: true,
                        },
                    );
                    if !bound_ok(&r.lo) || !bound_ok(&r.hi) {
                        self.error(
                            Code::InvalidRange,
                            written.span,
                            if matches!(ty, Ty::List(_) | Ty::Set(_) | Ty::Map(..)) {
                                format!("the range of a `{ty}` parameter bounds its length: its bounds must be `Int` literals")
                            } else {
                                format!("the bounds of a range for a `{ty}` parameter must be `{ty}` literals")
                            },
                            None,
                        );
                    } else if ordered == Some(false) || (!r.inclusive && r.lo == r.hi) {
                        self.error(
                            Code::InvalidRange,
                            written.span,
                            "this range is empty: its lower bound is not below its upper bound"
                                .to_owned(),
                            Some("write `lo..=hi` with `lo <= hi`".into()),
                        );
                    } else {
                        if let Some(value) = env::literal(&param.default)
                            && env::in_range(&value, &r) == Some(false)
                        {
                            self.push(
                                Diagnostic::new(
                                    Code::DefaultOutOfRange,
                                    param.default.span,
                                    format!(
                                        "the default of `{}` lies outside its range",
                                        param.name.name
                                    ),
                                )
                                .label(written.span, "the declared range"),
                            );
                        }
                        range = Some(r);
                    }
                }
            }
        }
        ir::Param {
            name: param.name.name.clone(),
            layer,
            ty,
            default,
            range,
            span: rel(param.span),
        }
    }

    pub(super) fn function(&mut self, decl: &ast::FnDecl) -> ir::Function {
        let mut params = Vec::new();
        let mut seen = BTreeSet::new();
        for param in &decl.params {
            if !seen.insert(param.name.name.as_str()) {
                self.error(
                    Code::Duplicate,
                    param.name.span,
                    format!("parameter `{}` is declared twice", param.name.name),
                    None,
                );
            }
            let ty = self.resolve(&param.ty);
            self.new_local(&param.name, ty.clone());
            params.push(ty);
        }
        let ret = self.resolve(&decl.ret);
        let body = self.body(&decl.body, &ret);
        ir::Function {
            name: decl.name.name.clone(),
            layer: self.layer,
            params,
            ret,
            body,
            span: rel(decl.span),
        }
    }
}

/// The `{name}` placeholders of a template with their byte offsets; `{{` and `}}` are literal
/// braces.
pub fn placeholders(template: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    let bytes = template.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'{' if bytes.get(i + 1) == Some(&b'{') => i += 2,
            b'}' if bytes.get(i + 1) == Some(&b'}') => i += 2,
            b'{' => match template[i + 1..].find('}') {
                Some(len) => {
                    out.push((template[i + 1..i + 1 + len].to_owned(), i));
                    i += len + 2;
                }
                None => i += 1,
            },
            _ => i += 1,
        }
    }
    out
}

/// What a reply field may be, for help texts.
const REPLY_FIELD_TYPES: &str = "reply fields are `Int`, `Float`, `Bool`, `String`, enums of unit \
     variants, `Option` of one of these, and `List`s of these or of records of them";

/// The kind inside an optional field or a list: what a range or a set of variants bounds.
fn innermost_mut(kind: &mut ir::LlmFieldKind) -> &mut ir::LlmFieldKind {
    match kind {
        ir::LlmFieldKind::Optional(inner) => innermost_mut(inner),
        ir::LlmFieldKind::List { item, .. } => innermost_mut(item),
        other => other,
    }
}
