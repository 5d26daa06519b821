//! A file and its chunks as the editor queries see them: the parsed chunk, its scope and layer,
//! the types of its expressions and the checker's record of its names.

use harness_grammar::{Span, ast};

use crate::Workspace;
use crate::check::ChunkIr;
use crate::db::{self, Database, Inputs, SourceFile};
use crate::env::{DefKey, Env, MemberDef, Scope, ValueDef};
use crate::ir::{self, LayerId};
use crate::signatures::{Builtin, BuiltinKind, SignatureSet};
use crate::split::ChunkKind;
use crate::symbol::{DefKind, LocalDecl, Names, Symbol};
use crate::types::Ty;
use crate::visit::{Visit, walk};

/// A file as the editor queries see it.
pub(super) struct FileView<'w> {
    pub(super) db: &'w Database,
    pub(super) inputs: Inputs,
    pub(super) file: SourceFile,
    pub(super) path: &'w str,
    pub(super) text: &'w str,
    pub(super) env: &'w Env,
    pub(super) sigs: &'w SignatureSet,
    pub(super) module: Option<&'w String>,
}

impl<'w> FileView<'w> {
    pub(super) fn new(ws: &'w Workspace, path: &'w str) -> Option<Self> {
        let (db, inputs) = ws.query_parts();
        let file = ws.source_file(path)?;
        let env: &Env = db::environment(db, inputs);
        Some(Self {
            db,
            inputs,
            file,
            path,
            text: file.text(db),
            env,
            sigs: inputs.signatures(db),
            module: env.file_modules.get(path),
        })
    }

    /// The chunks of the file, in order.
    pub(super) fn chunks(&self) -> Vec<ChunkView<'_>> {
        (0..db::outline(self.db, self.file).chunks as usize)
            .filter_map(|ordinal| self.chunk(ordinal))
            .collect()
    }

    /// The chunk that holds `offset`, or the one that ends right before it (the cursor after
    /// the last character of a member still belongs to it).
    pub(super) fn chunk_at(&self, offset: u32) -> Option<ChunkView<'_>> {
        let outline = db::outline(self.db, self.file);
        // A group's offset is its first chunk's, so the chunk is in the last group that starts
        // at or before `offset`.
        let group = outline
            .groups
            .partition_point(|placed| placed.offset <= offset)
            .checked_sub(1)?;
        let placed = outline.groups[group];
        let index = placed
            .group
            .chunks(self.db)
            .iter()
            .rposition(|chunk| placed.offset + chunk.start <= offset)?;
        self.chunk(placed.first as usize + index)
    }

    pub(super) fn chunk(&self, ordinal: usize) -> Option<ChunkView<'_>> {
        let chunk = db::chunk(self.db, self.file, ordinal as u32)?;
        let parsed = chunk.parsed;
        let layer_name = if chunk.kind == ChunkKind::Member || chunk.kind == ChunkKind::LayerHeader
        {
            self.env
                .chunk_layers
                .get(self.path)
                .and_then(|layers| layers.get(ordinal).cloned().flatten())
        } else {
            None
        };
        let scope = self
            .module
            .and_then(|m| self.env.scopes.get(m))
            .map(|s| &**s);
        let layer = match (scope, &layer_name) {
            (Some(scope), Some(name)) => scope.layer(name),
            _ => None,
        };
        let file_key = db::FileKey::new(self.db, self.inputs, self.file);
        let check = db::chunk_check(self.db, file_key, &chunk);
        let offset = chunk.offset;
        let mut types = Vec::new();
        if let Some(check) = check {
            collect_chunk_types(&check.ir, &mut types);
        }
        Some(ChunkView {
            file: self,
            offset,
            items: &parsed.items,
            members: &parsed.members,
            scope,
            layer,
            layer_name,
            types,
            names: check.map(|c| &c.names),
        })
    }
}

/// One chunk with what the checker recorded about it.
pub(super) struct ChunkView<'f> {
    pub(super) file: &'f FileView<'f>,
    pub(super) offset: u32,
    pub(super) items: &'f [ast::Item],
    pub(super) members: &'f [ast::Member],
    pub(super) scope: Option<&'f Scope>,
    pub(super) layer: Option<LayerId>,
    pub(super) layer_name: Option<String>,
    /// The types of the chunk's expressions, with chunk-relative spans.
    pub(super) types: Vec<(Span, Ty)>,
    /// What the checker resolved the chunk's names to, with chunk-relative spans.
    pub(super) names: Option<&'f Names>,
}

impl<'f> ChunkView<'f> {
    pub(super) fn file_span(&self, span: Span) -> Span {
        Span {
            start: span.start + self.offset,
            end: span.end + self.offset,
        }
    }

    pub(super) fn module(&self) -> String {
        self.file.module.cloned().unwrap_or_default()
    }

    pub(super) fn def_key(&self, name: &str, member: bool) -> DefKey {
        let layer = if member {
            self.layer_name.clone()
        } else {
            None
        };
        DefKey::new(self.module(), layer, name)
    }

    /// Every name the checker resolved in this chunk, in the order it met them: the name's span
    /// in the file and its symbol, a local's placed in this file.
    pub(super) fn refs(&self) -> impl Iterator<Item = (Span, Symbol)> + '_ {
        self.names
            .into_iter()
            .flat_map(|names| names.refs.iter())
            .map(|(span, symbol)| {
                let symbol = match symbol {
                    Symbol::Local { span, .. } => Symbol::Local {
                        file: self.file.path.to_owned(),
                        span: self.file_span(*span),
                    },
                    other => other.clone(),
                };
                (self.file_span(*span), symbol)
            })
    }

    /// The type the checker recorded for the local declared at `span` (in the file), unless it
    /// has an error in it.
    pub(super) fn local_type(&self, span: Span) -> Option<Ty> {
        self.names
            .into_iter()
            .flat_map(|names| names.locals.iter())
            .find(|local| self.file_span(local.span) == span && !local.ty.has_error())
            .map(|local| local.ty.clone())
    }

    /// The symbol the checker recorded for the name written exactly at `span` (in the file).
    pub(super) fn recorded(&self, span: Span) -> Option<Symbol> {
        self.refs()
            .find(|(at, _)| *at == span)
            .map(|(_, symbol)| symbol)
    }

    /// The type of the smallest expression that holds `offset` (in the file), with its span in
    /// the file.
    pub(super) fn type_at(&self, offset: u32) -> Option<(Span, Ty)> {
        let rel = offset.checked_sub(self.offset)?;
        self.types
            .iter()
            .filter(|(span, ty)| span.start <= rel && rel <= span.end && !matches!(ty, Ty::Error))
            .min_by_key(|(span, _)| span.len())
            .map(|(span, ty)| (self.file_span(*span), ty.clone()))
    }

    /// The declared type of a name visible in this chunk.
    pub(super) fn name_type(&self, name: &str, locals: &[&LocalDecl]) -> Option<Ty> {
        let scope = self.scope?;
        if let Some(local) = locals.iter().rev().find(|l| l.name == name) {
            return (!local.ty.has_error()).then(|| local.ty.clone());
        }
        if let Some((_, entry)) = self.find_member(name) {
            return match &entry.def {
                MemberDef::State(_, ty)
                | MemberDef::Tunable(_, ty, _)
                | MemberDef::Computed(_, ty) => Some(ty.clone()),
                _ => None,
            };
        }
        match scope.values.get(name) {
            Some((ValueDef::Const { ty, .. } | ValueDef::Config { ty, .. }, _, _)) => {
                Some(ty.clone())
            }
            _ => None,
        }
    }

    /// A layer member by name, as the checker finds it: the chunk's layer, the layers it needs
    /// (nearest first), then any layer.
    pub(super) fn find_member(&self, name: &str) -> Option<(LayerId, &'f crate::env::MemberEntry)> {
        self.scope?.find_member(self.layer, name)
    }

    /// The builtins visible in this chunk's module: the prelude, imported library modules and
    /// the game's methods.
    pub(super) fn builtins(&self) -> Vec<&'f Builtin> {
        let Some(scope) = self.scope else {
            return Vec::new();
        };
        let visible = |b: &Builtin| match &b.module {
            None => true,
            Some(module) => match scope.std_imports.get(module) {
                Some(None) => true,
                Some(Some(names)) => {
                    names.contains(&b.short_name)
                        || matches!(&b.kind, BuiltinKind::Method(owner) | BuiltinKind::Static(owner) if names.contains(owner))
                }
                None => false,
            },
        };
        let game = scope.game.iter().flat_map(|g| g.builtins.iter());
        self.file
            .sigs
            .builtins
            .iter()
            .filter(|b| visible(b))
            .chain(game)
            .collect()
    }

    /// True when the bare name `name`, written at `span` (in the file) before a dot, is not a
    /// value, so `name.x` reads a namespace (an enum, a type or a layer). The checker's record
    /// says so when it resolved the name; a name it did not see is a namespace unless a value of
    /// that name is in scope.
    pub(super) fn is_namespace(&self, name: &str, span: Span, locals: &[&LocalDecl]) -> bool {
        match self.recorded(span) {
            Some(
                Symbol::Layer { .. }
                | Symbol::LibraryType(_)
                | Symbol::Def(_, DefKind::Enum | DefKind::TypeAlias),
            ) => true,
            Some(_) => false,
            None => self.scope.is_some_and(|scope| {
                !(locals.iter().any(|l| l.name == name)
                    || self.find_member(name).is_some()
                    || scope.values.contains_key(name))
            }),
        }
    }
}

/// Collects the type of every expression of a chunk's IR and of every local a pattern binds,
/// with chunk-relative spans.
pub(super) fn collect_chunk_types(ir: &ChunkIr, out: &mut Vec<(Span, Ty)>) {
    struct Types<'o> {
        out: &'o mut Vec<(Span, Ty)>,
        /// The types of the locals of the definition being walked.
        locals: Vec<Ty>,
    }
    pub(super) fn span(span: ir::SrcSpan) -> Span {
        Span {
            start: span.start,
            end: span.end,
        }
    }
    impl Visit for Types<'_> {
        fn expr(&mut self, expr: &ir::Expr) {
            self.out.push((span(expr.span), expr.ty.clone()));
            walk::expr(self, expr);
        }
        fn pattern(&mut self, pattern: &ir::Pattern) {
            if let ir::PatternKind::Bind(id) = pattern.kind
                && let Some(ty) = self.locals.get(id.index())
            {
                self.out.push((span(pattern.span), ty.clone()));
            }
            walk::pattern(self, pattern);
        }
        fn frame(&mut self, frame: &ir::Frame) {
            self.locals = frame.locals.iter().map(|l| l.ty.clone()).collect();
        }
    }
    walk::chunk(
        &mut Types {
            out,
            locals: Vec::new(),
        },
        ir,
    );
}
