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
                let mut value = self.check(&decl.value, &ty);
                self.fix_expr(&mut value);
                let frame = self.take_frame();
                if let Some((ValueDef::Const { id, .. }, _, _)) =
                    self.scope.values.get(&decl.name.name)
                {
                    out.ir.consts.push((
                        *id,
                        ir::ConstDef {
                            name: decl.name.name.clone(),
                            ty,
                            value: ir::Body { frame, expr: value },
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
        for bound in &decl.bounds {
            self.llm_bound(bound, &reply, &mut fields);
        }
        let names: Vec<&str> = decl.params.iter().map(|p| p.name.name.as_str()).collect();
        for template in [&decl.system, &decl.user] {
            for (name, offset) in placeholders(&template.value) {
                if name != "schema" && !names.contains(&name.as_str()) {
                    let mut candidates = names.clone();
                    candidates.push("schema");
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
                result_enum: result.id,
                failure_enum: failure.id,
                span: rel(decl.span),
            },
        ))
    }

    /// The shape of a reply type, or an E0613 when it is not a record of scalars or an enum of
    /// unit variants.
    pub(super) fn llm_shape(&mut self, reply: &Ty, span: Span) -> Option<ir::LlmShape> {
        let unit_enum = |this: &Self, name: &str| -> Option<ir::LlmEnum> {
            let info = this.scope.enum_named(name)?;
            if info.variants.is_empty() || info.variants.iter().any(|(_, p)| !p.is_empty()) {
                return None;
            }
            Some(ir::LlmEnum {
                enum_id: info.id,
                variants: info.variants.iter().map(|(v, _)| v.clone()).collect(),
            })
        };
        let shape = match reply {
            Ty::Error => return None,
            Ty::Enum(name) => unit_enum(self, name).map(ir::LlmShape::Enum),
            Ty::Record(record) => {
                let mut fields = Vec::new();
                let mut ok = true;
                for (name, ty) in &record.fields {
                    let kind = match ty {
                        Ty::Int => Some(ir::LlmFieldKind::Int),
                        Ty::Float => Some(ir::LlmFieldKind::Float),
                        Ty::Bool => Some(ir::LlmFieldKind::Bool),
                        Ty::String => Some(ir::LlmFieldKind::String),
                        Ty::Enum(e) => unit_enum(self, e).map(ir::LlmFieldKind::Enum),
                        _ => None,
                    };
                    match kind {
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
                                    Some("reply fields are `Int`, `Float`, `Bool`, `String` or an enum of unit variants".into()),
                                );
                            }
                        }
                    }
                }
                if !ok {
                    return None;
                }
                if fields.is_empty() {
                    None
                } else {
                    Some(ir::LlmShape::Record(fields))
                }
            }
            _ => None,
        };
        if shape.is_none()
            && !reply.has_error()
            && !matches!(reply, Ty::Record(r) if !r.fields.is_empty())
        {
            self.error(
                Code::LlmReplyType,
                span,
                format!("an LLM cannot reply with `{reply}`"),
                Some("reply with a record of `Int`, `Float`, `Bool`, `String` and unit-enum fields, or with an enum of unit variants".into()),
            );
        }
        shape
    }

    /// Checks one `where` bound and records its range on the field.
    pub(super) fn llm_bound(
        &mut self,
        bound: &ast::LlmBound,
        reply: &Ty,
        fields: &mut [ir::LlmField],
    ) {
        let Ty::Record(record) = reply else {
            if !reply.has_error() {
                self.error(
                    Code::LlmBound,
                    bound.field.span,
                    format!(
                        "`where` bounds fields of a record reply, and `{reply}` is not a record"
                    ),
                    None,
                );
            }
            return;
        };
        let Some((_, ty)) = record.fields.iter().find(|(n, _)| *n == bound.field.name) else {
            self.error(
                Code::LlmBound,
                bound.field.span,
                format!("the reply `{reply}` has no field `{}`", bound.field.name),
                did_you_mean(
                    &bound.field.name,
                    record.fields.iter().map(|(n, _)| n.as_str()),
                ),
            );
            return;
        };
        if !ty.is_numeric() {
            self.error(
                Code::LlmBound,
                bound.field.span,
                format!(
                    "field `{}` has type `{ty}`; only `Int` and `Float` fields take a range",
                    bound.field.name
                ),
                None,
            );
            return;
        }
        let Some(range) = env::literal_range(&bound.range) else {
            self.error(
                Code::LlmBound,
                bound.range.span,
                "the bounds of a range must be literals".to_owned(),
                Some("write the bounds as numbers, for example `in 0..=10`".into()),
            );
            return;
        };
        let fits = |l: &ir::Literal| {
            matches!(
                (ty, l),
                (Ty::Int, ir::Literal::Int(_)) | (Ty::Float, ir::Literal::Float(_))
            )
        };
        if !fits(&range.lo) || !fits(&range.hi) {
            self.error(
                Code::LlmBound,
                bound.range.span,
                format!(
                    "the bounds of field `{}` must be `{ty}` literals",
                    bound.field.name
                ),
                Some(if *ty == Ty::Float {
                    "write `0.0..=1.0`, not `0..=1`".into()
                } else {
                    "write whole numbers".into()
                }),
            );
            return;
        }
        let as_f64 = |l: &ir::Literal| match l {
            ir::Literal::Int(v) => *v as f64,
            ir::Literal::Float(v) => *v,
            _ => 0.0,
        };
        let (lo, hi) = (as_f64(&range.lo), as_f64(&range.hi));
        if lo > hi || (lo == hi && !range.inclusive) {
            self.error(
                Code::LlmBound,
                bound.range.span,
                "this range is empty".to_owned(),
                None,
            );
            return;
        }
        if let Some(field) = fields.iter_mut().find(|f| f.name == bound.field.name) {
            field.range = Some(range);
        }
    }

    /// A `config` entry or a `tunable`.
    pub(super) fn param(&mut self, param: &ast::Param, layer: Option<LayerId>) -> ir::Param {
        let ty = self.resolve(&param.ty);
        let mut default = self.check(&param.default, &ty);
        self.fix_expr(&mut default);
        let frame = self.take_frame();
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
                            format!("the bounds of a range for a `{ty}` parameter must be `{ty}` literals"),
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
            default: ir::Body {
                frame,
                expr: default,
            },
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
            self.new_local(&param.name.name, ty.clone());
            params.push(ty);
        }
        let ret = self.resolve(&decl.ret);
        let mut body = self.check(&decl.body, &ret);
        self.fix_expr(&mut body);
        let frame = self.take_frame();
        ir::Function {
            name: decl.name.name.clone(),
            layer: self.layer,
            params,
            ret,
            body: ir::Body { frame, expr: body },
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
