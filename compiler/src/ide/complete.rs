//! Completion: the names in scope at the cursor, or the members, fields, methods and variants
//! after a dot.

use harness_grammar::Span;

use super::describe::params_text;
use super::view::{ChunkView, FileView};
use super::{Completion, CompletionKind, KEYWORDS};
use crate::Workspace;
use crate::env::{MemberDef, TypeDef, ValueDef};
use crate::signatures::{BuiltinKind, type_constructor};
use crate::symbol::LocalDecl;
use crate::types::Ty;

/// The completion items at `offset`: after `x.`, the members, fields, methods or variants of
/// `x`; elsewhere, the locals declared before the cursor, the members of the cursor's layer and
/// of the layers it needs (never of a layer above), the items, builtins, types and keywords.
pub fn completions(ws: &Workspace, path: &str, offset: u32) -> Vec<Completion> {
    let Some(file) = FileView::new(ws, path) else {
        return Vec::new();
    };
    let text = file.text;
    let offset = (offset as usize).min(text.len());
    let bytes = text.as_bytes();
    let mut start = offset;
    while start > 0 && (bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_') {
        start -= 1;
    }
    let chunk = file.chunk_at(offset as u32);
    let mut items = match (start > 0 && bytes[start - 1] == b'.', &chunk) {
        (true, Some(chunk)) => chunk.dot_completions(start as u32 - 1),
        (true, None) => Vec::new(),
        (false, Some(chunk)) => chunk.scope_completions(offset as u32),
        (false, None) => keyword_completions(),
    };
    let prefix = &text[start..offset];
    items.retain(|item| item.label.starts_with(prefix));
    items.sort();
    items.dedup_by(|a, b| a.label == b.label);
    items
}

pub(super) fn keyword_completions() -> Vec<Completion> {
    KEYWORDS
        .iter()
        .map(|k| Completion {
            label: (*k).to_owned(),
            kind: CompletionKind::Keyword,
            detail: String::new(),
            docs: String::new(),
        })
        .collect()
}

impl<'f> ChunkView<'f> {
    /// Completion after `base.`, where `dot` is the file offset of the dot.
    pub(super) fn dot_completions(&self, dot: u32) -> Vec<Completion> {
        let text = self.file.text;
        let bytes = text.as_bytes();
        let mut start = dot as usize;
        while start > 0
            && (bytes[start - 1].is_ascii_alphanumeric()
                || bytes[start - 1] == b'_'
                || bytes[start - 1] == b'.')
        {
            start -= 1;
        }
        let chain: Vec<&str> = text[start..dot as usize].split('.').collect();
        let Some(scope) = self.scope else {
            return Vec::new();
        };
        let locals = self.locals_at(dot);
        let item = |label: &str, kind, detail: String, docs: &str| Completion {
            label: label.to_owned(),
            kind,
            detail,
            docs: docs.to_owned(),
        };
        // The type of a receiver that is not a plain name (a call, an index...) comes from the
        // expression that ends right at the dot, when the checker saw one.
        let typed = || -> Option<Ty> {
            let rel = dot.checked_sub(self.offset)?;
            let from_ir = self
                .types
                .iter()
                .filter(|(span, ty)| span.end == rel && !ty.has_error())
                .max_by_key(|(span, _)| span.len())
                .map(|(_, ty)| ty.clone());
            from_ir.or_else(|| {
                let (first, rest) = chain.split_first()?;
                let mut ty = self.name_type(first, &locals)?;
                for field in rest {
                    ty = match ty {
                        Ty::Record(r) => r.fields.iter().find(|(n, _)| n == field)?.1.clone(),
                        _ => return None,
                    };
                }
                Some(ty)
            })
        };
        let mut out = Vec::new();
        match chain.as_slice() {
            ["game"] => {
                if let Some(game) = &scope.game {
                    for q in &game.queries {
                        let (kind, detail) = match &q.sig {
                            Some(sig) => (
                                CompletionKind::Function,
                                format!("fn({}) -> {}", params_text(&sig.params), sig.ret),
                            ),
                            None => (CompletionKind::Property, q.ty.to_string()),
                        };
                        out.push(item(&q.name, kind, detail, &q.doc));
                    }
                    for m in &game.effects {
                        out.push(item(
                            &m.name,
                            CompletionKind::Event,
                            format!("effect ({})", params_text(&m.params)),
                            &m.doc,
                        ));
                    }
                    for m in &game.observations {
                        out.push(item(
                            &m.name,
                            CompletionKind::Event,
                            format!("observation ({})", params_text(&m.params)),
                            &m.doc,
                        ));
                    }
                }
                return out;
            }
            ["sim"] => {
                return vec![item(
                    "next",
                    CompletionKind::Function,
                    "sim.next(action(args)) -> Preview".into(),
                    "A one-step preview of an action.",
                )];
            }
            [name]
                if self.is_namespace(
                    name,
                    Span {
                        start: start as u32,
                        end: dot,
                    },
                    &locals,
                ) =>
            {
                if let Some(TypeDef::Enum(index)) = scope.types.get(*name) {
                    if let Some(info) = scope.enums.get(*index) {
                        for (variant, payload) in &info.variants {
                            let payload = payload
                                .iter()
                                .map(ToString::to_string)
                                .collect::<Vec<_>>()
                                .join(", ");
                            out.push(item(
                                variant,
                                CompletionKind::Variant,
                                if payload.is_empty() {
                                    info.name.clone()
                                } else {
                                    format!("{}({payload})", info.name)
                                },
                                "",
                            ));
                        }
                    }
                    return out;
                }
                if let Some(id) = scope.layer(name) {
                    // Only a layer the cursor's layer may read (itself or one it needs).
                    let visible = self.layer.is_none_or(|own| {
                        own == id
                            || scope
                                .layers
                                .get(own.index())
                                .is_some_and(|l| l.below.contains(&id))
                    });
                    if let (true, Some(layer)) = (visible, scope.layers.get(id.index())) {
                        out.extend(
                            layer
                                .members
                                .iter()
                                .map(|(n, e)| member_completion(n, &e.def)),
                        );
                    }
                    return out;
                }
                for b in self.builtins() {
                    if matches!(&b.kind, BuiltinKind::Static(owner) if owner == name) {
                        out.push(item(
                            &b.short_name,
                            CompletionKind::Function,
                            b.text.clone(),
                            &b.doc,
                        ));
                    }
                }
                return out;
            }
            _ => {}
        }
        let Some(ty) = typed() else { return out };
        match &ty {
            Ty::Record(record) => {
                for (field, ty) in &record.fields {
                    out.push(item(field, CompletionKind::Field, ty.to_string(), ""));
                }
            }
            Ty::Snapshot => out.extend(
                self.visible_members()
                    .into_iter()
                    .filter(|(_, e)| !matches!(e.def, MemberDef::Fn(_) | MemberDef::Action(..)))
                    .map(|(n, e)| member_completion(n, &e.def)),
            ),
            _ => {}
        }
        if let Some(owner) = type_constructor(&ty) {
            for b in self.builtins() {
                if matches!(&b.kind, BuiltinKind::Method(o) if *o == owner) {
                    out.push(item(
                        &b.short_name,
                        CompletionKind::Method,
                        b.text.clone(),
                        &b.doc,
                    ));
                }
            }
        }
        out
    }

    /// The members of the chunk's layer and of the layers it needs: what a member may read.
    pub(super) fn visible_members(&self) -> Vec<(&'f String, &'f crate::env::MemberEntry)> {
        let (Some(scope), Some(own)) = (self.scope, self.layer) else {
            return Vec::new();
        };
        let mut ids = vec![own];
        if let Some(layer) = scope.layers.get(own.index()) {
            ids.extend(layer.below.iter().copied());
        }
        ids.iter()
            .filter_map(|id| scope.layers.get(id.index()))
            .flat_map(|l| l.members.iter())
            .collect()
    }

    /// The locals in scope at `offset` (in the file): declared before it, in a scope that has
    /// not closed before it, in declaration order.
    pub(super) fn locals_at(&self, offset: u32) -> Vec<&'f LocalDecl> {
        self.names
            .into_iter()
            .flat_map(|names| names.locals.iter())
            .filter(|local| {
                self.file_span(local.span).end <= offset
                    && local.scope_end.saturating_add(self.offset) >= offset
            })
            .collect()
    }

    /// Completion of a bare name at `offset`.
    pub(super) fn scope_completions(&self, offset: u32) -> Vec<Completion> {
        let mut out = keyword_completions();
        let Some(scope) = self.scope else { return out };
        let item = |label: &str, kind, detail: String, docs: &str| Completion {
            label: label.to_owned(),
            kind,
            detail,
            docs: docs.to_owned(),
        };
        for local in self.locals_at(offset) {
            let detail = if local.ty.has_error() {
                String::new()
            } else {
                local.ty.to_string()
            };
            out.push(item(&local.name, CompletionKind::Local, detail, ""));
        }
        out.extend(
            self.visible_members()
                .into_iter()
                .map(|(n, e)| member_completion(n, &e.def)),
        );
        if let (Some(scope), Some(own)) = (self.scope, self.layer) {
            // Layer names for qualified reads and `revise layer.tunable`: this layer and below.
            let mut ids = vec![own];
            ids.extend(
                scope
                    .layers
                    .get(own.index())
                    .into_iter()
                    .flat_map(|l| l.below.iter().copied()),
            );
            for layer in ids.iter().filter_map(|id| scope.layers.get(id.index())) {
                out.push(item(
                    &layer.name,
                    CompletionKind::Layer,
                    format!("layer {}", layer.name),
                    "",
                ));
            }
        }
        for (name, (def, _, _)) in &scope.values {
            let (kind, detail) = match def {
                ValueDef::Const { ty, .. } => {
                    (CompletionKind::Constant, format!("const {name}: {ty}"))
                }
                ValueDef::Config { ty, .. } => {
                    (CompletionKind::Constant, format!("config {name}: {ty}"))
                }
                ValueDef::Fn(info) => (
                    CompletionKind::Function,
                    fn_detail(name, &info.params, &info.ret),
                ),
            };
            out.push(item(name, kind, detail, ""));
        }
        for b in self.builtins() {
            if b.kind == BuiltinKind::Function {
                out.push(item(
                    &b.short_name,
                    CompletionKind::Function,
                    b.text.clone(),
                    &b.doc,
                ));
            }
        }
        for (name, def) in &scope.types {
            let kind = if matches!(def, TypeDef::Enum(_)) {
                CompletionKind::Enum
            } else {
                CompletionKind::Type
            };
            out.push(item(name, kind, format!("type {name}"), ""));
        }
        for name in [
            "Int", "Float", "Bool", "String", "Option", "List", "Set", "Map", "Some", "None",
        ] {
            let kind = if matches!(name, "Some" | "None") {
                CompletionKind::Variant
            } else {
                CompletionKind::Type
            };
            out.push(item(name, kind, String::new(), ""));
        }
        for name in scope.errors.keys() {
            out.push(item(
                name,
                CompletionKind::Constant,
                format!("error {name}"),
                "",
            ));
        }
        out
    }
}
pub(super) fn fn_detail(name: &str, params: &[(String, Ty)], ret: &Ty) -> String {
    let params = params
        .iter()
        .map(|(n, t)| format!("{n}: {t}"))
        .collect::<Vec<_>>()
        .join(", ");
    format!("fn {name}({params}) -> {ret}")
}

pub(super) fn member_completion(name: &str, def: &MemberDef) -> Completion {
    let (kind, detail) = match def {
        MemberDef::State(_, ty) => (CompletionKind::Property, format!("state {name}: {ty}")),
        MemberDef::Tunable(_, ty, _) => (CompletionKind::Property, format!("tunable {name}: {ty}")),
        MemberDef::Computed(_, ty) => (CompletionKind::Property, format!("computed {name}: {ty}")),
        MemberDef::Fn(info) => (
            CompletionKind::Function,
            fn_detail(name, &info.params, &info.ret),
        ),
        MemberDef::Action(_, params) => {
            let params = params
                .iter()
                .map(|(n, t)| format!("{n}: {t}"))
                .collect::<Vec<_>>()
                .join(", ");
            (CompletionKind::Action, format!("action {name}({params})"))
        }
    };
    Completion {
        label: name.to_owned(),
        kind,
        detail,
        docs: String::new(),
    }
}
