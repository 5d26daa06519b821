//! What a name is: hover text, and the declarations of a file for the outline and go-to-definition.

use harness_grammar::{Span, ast};

use super::view::{ChunkView, FileView};
use super::{Declaration, DefKind, GameKind, Hover, OutlineNode, Symbol, symbol_at};
use crate::Workspace;
use crate::db;
use crate::split::ChunkKind;
use crate::types::Ty;

/// The hover text for `offset`: the symbol's signature and documentation, and the type of the
/// expression under the cursor.
pub fn hover(ws: &Workspace, path: &str, offset: u32) -> Option<Hover> {
    let file = FileView::new(ws, path)?;
    let chunk = file.chunk_at(offset)?;
    let symbol = symbol_at(ws, path, offset);
    let expr_ty = chunk.type_at(offset);
    let mut parts: Vec<String> = Vec::new();
    let mut span = None;
    if let Some((symbol, at)) = &symbol {
        span = Some(*at);
        let (signature, docs) = describe(ws, &chunk, symbol, expr_ty.as_ref().map(|(_, ty)| ty));
        parts.push(format!("```harness\n{signature}\n```"));
        if !docs.is_empty() {
            parts.push(docs);
        }
    } else if let Some((at, ty)) = &expr_ty {
        span = Some(*at);
        parts.push(format!("```harness\n{ty}\n```"));
    }
    Some(Hover {
        markdown: parts.join("\n\n"),
        span: span?,
    })
}

/// A symbol's signature line and documentation.
pub(super) fn describe(
    ws: &Workspace,
    chunk: &ChunkView<'_>,
    symbol: &Symbol,
    ty: Option<&Ty>,
) -> (String, String) {
    let sigs = chunk.file.sigs;
    let game = chunk.scope.and_then(|s| s.game.as_ref());
    match symbol {
        Symbol::Local { file, span } => {
            let name = ws
                .text(file)
                .and_then(|t| t.get(span.range()).map(str::to_owned))
                .unwrap_or_default();
            // A name that is no expression of the IR (an `llm` parameter) has the type the
            // checker recorded with the local.
            match ty.cloned().or_else(|| chunk.local_type(*span)) {
                Some(ty) => (format!("{name}: {ty}"), String::new()),
                None => (name, String::new()),
            }
        }
        Symbol::Builtin(name) => {
            let builtin = sigs
                .builtins
                .iter()
                .chain(game.into_iter().flat_map(|g| g.builtins.iter()))
                .find(|b| b.name == *name);
            match builtin {
                Some(b) => (b.text.clone(), with_example(&b.doc, &b.example)),
                None => (name.clone(), String::new()),
            }
        }
        Symbol::Game(kind, name) => {
            let Some(game) = game else {
                return (format!("game.{name}"), String::new());
            };
            match kind {
                GameKind::Query => match game.queries.iter().find(|q| q.name == *name) {
                    Some(q) => {
                        let sig = match &q.sig {
                            Some(sig) => format!(
                                "game.{}({}) -> {}",
                                q.name,
                                params_text(&sig.params),
                                sig.ret
                            ),
                            None => format!("game.{}: {}", q.name, q.ty),
                        };
                        (sig, with_example(&q.doc, &q.example))
                    }
                    None => (format!("game.{name}"), String::new()),
                },
                GameKind::Effect | GameKind::Observation => {
                    let list = if *kind == GameKind::Effect {
                        &game.effects
                    } else {
                        &game.observations
                    };
                    let what = if *kind == GameKind::Effect {
                        "effect"
                    } else {
                        "observation"
                    };
                    match list.iter().find(|m| m.name == *name) {
                        Some(m) => (
                            format!("{what} game.{}({})", m.name, params_text(&m.params)),
                            m.doc.clone(),
                        ),
                        None => (format!("{what} game.{name}"), String::new()),
                    }
                }
            }
        }
        Symbol::LibraryType(name) => {
            let doc = sigs
                .types
                .iter()
                .chain(game.into_iter().flat_map(|g| g.types.iter()))
                .find(|t| t.name == *name)
                .map(|t| t.doc.clone())
                .or_else(|| {
                    sigs.enums
                        .iter()
                        .chain(game.into_iter().flat_map(|g| g.enums.iter()))
                        .find(|e| e.name == *name)
                        .map(|e| {
                            let variants: Vec<&str> =
                                e.variants.iter().map(|(v, _)| v.as_str()).collect();
                            format!("{}\n\nvariants: {}", e.doc, variants.join(", "))
                        })
                })
                .unwrap_or_default();
            (format!("type {name}"), doc)
        }
        Symbol::Variant {
            module: None,
            enum_name,
            variant,
        } => {
            let payload = chunk
                .scope
                .and_then(|s| s.enum_named(enum_name))
                .and_then(|e| e.variants.iter().find(|(v, _)| v == variant))
                .map(|(_, payload)| {
                    payload
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                })
                .unwrap_or_default();
            let payload = if payload.is_empty() {
                String::new()
            } else {
                format!("({payload})")
            };
            (format!("{enum_name}.{variant}{payload}"), String::new())
        }
        _ => match declaration_of(ws, symbol) {
            Some((_, decl)) => {
                let detail = match (ty, &symbol) {
                    // A member read through a preview or a layer path: the declared type is in
                    // the detail already.
                    (_, Symbol::Def(..)) | (None, _) => decl.detail,
                    (Some(ty), _) => format!("{}: {ty}", decl.detail),
                };
                (detail, decl.docs)
            }
            None => (format!("{symbol:?}"), String::new()),
        },
    }
}

pub(super) fn with_example(doc: &str, example: &str) -> String {
    if example.is_empty() {
        doc.to_owned()
    } else {
        format!("{doc}\n\nExample: `{example}`")
    }
}

pub(super) fn params_text(params: &[crate::signatures::ParamSig]) -> String {
    params
        .iter()
        .map(|p| format!("{}: {}", p.name, p.ty))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Finds the declaration of a symbol in the workspace.
pub(super) fn declaration_of(ws: &Workspace, symbol: &Symbol) -> Option<(String, Declaration)> {
    if let Symbol::Local { file, span } = symbol {
        let text = ws.text(file)?;
        let name = text.get(span.range())?.to_owned();
        let decl = Declaration {
            symbol: symbol.clone(),
            name: name.clone(),
            name_span: *span,
            span: *span,
            detail: name,
            docs: String::new(),
            container: None,
        };
        return Some((file.clone(), decl));
    }
    let module = match symbol {
        Symbol::Def(key, _) => Some(&key.module),
        Symbol::Layer { module, .. } => Some(module),
        Symbol::Variant { module, .. } => module.as_ref(),
        Symbol::Field { record, .. } => Some(&record.module),
        _ => None,
    }?;
    let (db, inputs) = ws.query_parts();
    let env = db::environment(db, inputs);
    let path = env
        .file_modules
        .iter()
        .find(|(_, m)| *m == module)
        .map(|(p, _)| p.clone())?;
    let decl = declarations(ws, &path)
        .into_iter()
        .find(|d| d.symbol == *symbol)?;
    Some((path, decl))
}

/// Every declaration of a file, in source order: items, layers, members, state fields, enum
/// variants and record fields.
pub fn declarations(ws: &Workspace, path: &str) -> Vec<Declaration> {
    let Some(file) = FileView::new(ws, path) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for chunk in file.chunks() {
        chunk.declarations(&mut out);
    }
    out
}

/// The document outline: items, and layers with their members.
pub fn outline(ws: &Workspace, path: &str) -> Vec<OutlineNode> {
    let mut roots: Vec<OutlineNode> = Vec::new();
    for declaration in declarations(ws, path) {
        let node = OutlineNode {
            declaration,
            children: Vec::new(),
        };
        let parent = node.declaration.container.as_deref().and_then(|container| {
            roots.iter_mut().rev().find(|root| {
                root.declaration.name == container
                    && root.declaration.span.start <= node.declaration.span.start
            })
        });
        match parent {
            // State fields are nested one level below their layer in the source, but they are
            // members of the layer, so they sit beside the other members.
            Some(parent) => parent.children.push(node),
            None => roots.push(node),
        }
    }
    roots
}

impl ChunkView<'_> {
    /// Collects the declarations of this chunk.
    pub(super) fn declarations(&self, out: &mut Vec<Declaration>) {
        let text = self.file.text;
        let src = |span: Span| {
            text.get(self.file_span(span).range())
                .unwrap_or_default()
                .trim()
                .to_owned()
        };
        let mut push = |symbol: Symbol,
                        name: &ast::Ident,
                        span: Span,
                        detail: String,
                        docs: &ast::Docs,
                        container: Option<String>| {
            out.push(Declaration {
                symbol,
                name: name.name.clone(),
                name_span: self.file_span(name.span),
                span: self.file_span(span),
                detail,
                docs: docs.text.clone(),
                container,
            });
        };
        let no_docs = ast::Docs::default();
        let params = |params: &[ast::TypedParam]| {
            params
                .iter()
                .map(|p| src(p.span))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let callable =
            |keyword: &str, name: &ast::Ident, typed: &[ast::TypedParam], ret: &ast::TypeExpr| {
                format!(
                    "{keyword} {}({}) -> {}",
                    name.name,
                    params(typed),
                    src(ret.span())
                )
            };
        for item in self.items {
            let def = |name: &ast::Ident, kind| Symbol::Def(self.def_key(&name.name, false), kind);
            match item {
                ast::Item::TypeAlias(decl) => {
                    push(
                        def(&decl.name, DefKind::TypeAlias),
                        &decl.name,
                        decl.span,
                        format!("type {} = {}", decl.name.name, src(decl.ty.span())),
                        &decl.docs,
                        None,
                    );
                    if let ast::TypeExpr::Record { fields, .. } = &decl.ty {
                        for (field, ty) in fields {
                            let record = self.def_key(&decl.name.name, false);
                            let symbol = Symbol::Field {
                                record,
                                field: field.name.clone(),
                            };
                            push(
                                symbol,
                                field,
                                field.span.to(ty.span()),
                                format!("{}: {}", field.name, src(ty.span())),
                                &no_docs,
                                Some(decl.name.name.clone()),
                            );
                        }
                    }
                }
                ast::Item::Enum(decl) => {
                    push(
                        def(&decl.name, DefKind::Enum),
                        &decl.name,
                        decl.span,
                        format!("enum {}", decl.name.name),
                        &decl.docs,
                        None,
                    );
                    for variant in &decl.variants {
                        let symbol = Symbol::Variant {
                            module: Some(self.module()),
                            enum_name: decl.name.name.clone(),
                            variant: variant.name.name.clone(),
                        };
                        push(
                            symbol,
                            &variant.name,
                            variant.span,
                            format!("{}.{}", decl.name.name, src(variant.span)),
                            &no_docs,
                            Some(decl.name.name.clone()),
                        );
                    }
                }
                ast::Item::Const(decl) => {
                    push(
                        def(&decl.name, DefKind::Const),
                        &decl.name,
                        decl.span,
                        format!("const {}: {}", decl.name.name, src(decl.ty.span())),
                        &decl.docs,
                        None,
                    );
                }
                ast::Item::Config(block) => {
                    for param in &block.params {
                        push(
                            def(&param.name, DefKind::Config),
                            &param.name,
                            param.span,
                            format!("config {}", src(param.span)),
                            &param.docs,
                            None,
                        );
                    }
                }
                // An `llm` is called like a function: the same symbol and the same outline.
                ast::Item::Llm(ast::LlmDecl {
                    docs,
                    name,
                    params,
                    reply: ret,
                    span,
                    ..
                })
                | ast::Item::Fn(ast::FnDecl {
                    docs,
                    name,
                    params,
                    ret,
                    span,
                    ..
                }) => {
                    let keyword = if matches!(item, ast::Item::Llm(_)) {
                        "llm"
                    } else {
                        "fn"
                    };
                    let detail = callable(keyword, name, params, ret);
                    push(def(name, DefKind::Fn), name, *span, detail, docs, None);
                }
                ast::Item::Error(decl) => {
                    push(
                        def(&decl.name, DefKind::Error),
                        &decl.name,
                        decl.span,
                        format!("error {} = {}", decl.name.name, src(decl.message.span)),
                        &decl.docs,
                        None,
                    );
                }
                ast::Item::Layer(layer) => {
                    let needs: Vec<&str> = layer.needs.iter().map(|n| n.name.as_str()).collect();
                    let detail = if needs.is_empty() {
                        format!("layer {}", layer.name.name)
                    } else {
                        format!("layer {} needs {}", layer.name.name, needs.join(", "))
                    };
                    let symbol = Symbol::Layer {
                        module: self.module(),
                        name: layer.name.name.clone(),
                    };
                    // The header chunk ends at the layer's `{`; the outline spans the members too.
                    let span = Span {
                        start: layer.span.start,
                        end: layer.span.end.min(self.end_of_layer(layer.span.start)),
                    };
                    push(symbol, &layer.name, span, detail, &layer.docs, None);
                }
                ast::Item::Use(_) | ast::Item::Invalid(_) => {}
            }
        }
        let container = self.layer_name.clone();
        for member in self.members {
            let def = |name: &ast::Ident, kind| Symbol::Def(self.def_key(&name.name, true), kind);
            match member {
                ast::Member::State(block) => {
                    for field in &block.fields {
                        let detail = format!("state {}: {}", field.name.name, src(field.ty.span()));
                        push(
                            def(&field.name, DefKind::State),
                            &field.name,
                            field.span,
                            detail,
                            &field.docs,
                            container.clone(),
                        );
                    }
                }
                ast::Member::Tunable(param) => {
                    push(
                        def(&param.name, DefKind::Tunable),
                        &param.name,
                        param.span,
                        // From the name on: the declaration's span starts at the keyword.
                        format!(
                            "tunable {}",
                            src(Span {
                                start: param.name.span.start,
                                end: param.span.end,
                            })
                        ),
                        &param.docs,
                        container.clone(),
                    );
                }
                ast::Member::Computed(decl) => {
                    let detail = format!("computed {}: {}", decl.name.name, src(decl.ty.span()));
                    push(
                        def(&decl.name, DefKind::Computed),
                        &decl.name,
                        decl.span,
                        detail,
                        &decl.docs,
                        container.clone(),
                    );
                }
                ast::Member::Fn(decl) => {
                    let detail = callable("fn", &decl.name, &decl.params, &decl.ret);
                    push(
                        def(&decl.name, DefKind::Fn),
                        &decl.name,
                        decl.span,
                        detail,
                        &decl.docs,
                        container.clone(),
                    );
                }
                ast::Member::Action(decl) => {
                    let detail = format!("action {}({})", decl.name.name, params(&decl.params));
                    push(
                        def(&decl.name, DefKind::Action),
                        &decl.name,
                        decl.span,
                        detail,
                        &decl.docs,
                        container.clone(),
                    );
                }
                ast::Member::Model(_)
                | ast::Member::On(_)
                | ast::Member::Decide(_)
                | ast::Member::Revise(_)
                | ast::Member::TunableDefault(_)
                | ast::Member::Machine(_)
                | ast::Member::Invalid(_) => {}
            }
        }
    }

    /// The end of the layer whose header starts at `start` (chunk-relative), in chunk-relative
    /// terms: the end of its last member chunk, or of the header when it has none.
    pub(super) fn end_of_layer(&self, start: u32) -> u32 {
        let (db, file) = (self.file.db, self.file.file);
        let count = db::outline(db, file).chunks;
        let Some(ordinal) = (0..count).find(|&ordinal| {
            db::chunk(db, file, ordinal).is_some_and(|chunk| chunk.offset == self.offset)
        }) else {
            return u32::MAX;
        };
        let layers = self.file.env.chunk_layers.get(self.file.path);
        let mut end = None;
        for index in ordinal + 1..count {
            let Some(chunk) = db::chunk(db, file, index) else {
                break;
            };
            let is_member = chunk.kind == ChunkKind::Member;
            let same_layer = layers
                .and_then(|l| l.get(index as usize))
                .cloned()
                .flatten()
                == self.layer_name;
            if !is_member || !same_layer {
                break;
            }
            end = Some(chunk.offset + chunk.text.trim_end().len() as u32);
        }
        match end {
            // One past the member's end covers the closing brace when it follows right away.
            Some(end) => (end + 1).saturating_sub(self.offset).max(start),
            None => u32::MAX,
        }
    }
}
