//! Records what each name resolves to, into the chunk's table of [`Names`](crate::symbol::Names):
//! the declarations of the chunk, and every occurrence the other jobs resolve.

use harness_grammar::{Span, ast};

use super::Checker;
use crate::env::{self, DefKey, MemberEntry, TypeDef, ValueDef};
use crate::ir::{LayerId, LocalId};
use crate::signatures::Builtin;
use crate::symbol::{DefKind, GameKind, LocalDecl, Symbol};
use crate::types::{RecordTy, Ty};

/// The builtin type names, which no harness file declares.
const BUILTIN_TYPES: &[&str] = &[
    "Int",
    "Float",
    "Bool",
    "String",
    "Option",
    "List",
    "Set",
    "Map",
    "Preview",
    "Snapshot",
    "LlmResult",
];

impl Checker<'_> {
    /// Records that the name written at `span` means `symbol`.
    pub(super) fn note(&mut self, span: Span, symbol: Symbol) {
        if !span.is_empty() {
            self.names.refs.push((span, symbol));
        }
    }

    pub(super) fn note_member(&mut self, name: &ast::Ident, entry: &MemberEntry) {
        self.note(name.span, Symbol::member(entry));
    }

    pub(super) fn note_value(&mut self, name: &ast::Ident, def: &ValueDef, key: &DefKey) {
        let kind = match def {
            ValueDef::Const { .. } => DefKind::Const,
            ValueDef::Config { .. } => DefKind::Config,
            ValueDef::Fn(_) => DefKind::Fn,
        };
        self.note(name.span, Symbol::Def(key.clone(), kind));
    }

    pub(super) fn note_builtin(&mut self, name: &ast::Ident, builtin: &Builtin) {
        self.note(name.span, Symbol::Builtin(builtin.name.clone()));
    }

    pub(super) fn note_local(&mut self, name: &ast::Ident, id: LocalId) {
        if let Some(decl) = self
            .decl_of
            .get(id.index())
            .and_then(|&index| self.names.locals.get(index))
        {
            let symbol = Symbol::Local {
                file: String::new(),
                span: decl.span,
            };
            self.note(name.span, symbol);
        }
    }

    pub(super) fn note_layer(&mut self, name: &ast::Ident, id: LayerId) {
        if let Some(layer) = self.scope.layers.get(id.index()) {
            let symbol = Symbol::Layer {
                module: layer.module.clone(),
                name: layer.name.clone(),
            };
            self.note(name.span, symbol);
        }
    }

    pub(super) fn note_game(&mut self, name: &ast::Ident, kind: GameKind) {
        self.note(name.span, Symbol::Game(kind, name.name.clone()));
    }

    pub(super) fn note_error_code(&mut self, code: &ast::Ident) {
        if let Some((_, key)) = self.scope.errors.get(&code.name) {
            let symbol = Symbol::Def(key.clone(), DefKind::Error);
            self.note(code.span, symbol);
        }
    }

    /// The symbol of a type name visible here, such as `Cell`, `Posterior` or `Int`.
    pub(super) fn type_symbol(&self, name: &str) -> Option<Symbol> {
        match (self.scope.type_keys.get(name), self.scope.types.get(name)) {
            (Some(key), Some(def)) => {
                let kind = if matches!(def, TypeDef::Enum(_)) {
                    DefKind::Enum
                } else {
                    DefKind::TypeAlias
                };
                Some(Symbol::Def(key.clone(), kind))
            }
            (_, Some(_)) => Some(Symbol::LibraryType(name.to_owned())),
            (_, None) => BUILTIN_TYPES
                .contains(&name)
                .then(|| Symbol::LibraryType(name.to_owned())),
        }
    }

    /// Records a type name written as `ident` (the last segment of its path).
    pub(super) fn note_type_name(&mut self, ident: &ast::Ident, text: &str) {
        if let Some(symbol) = self.type_symbol(text) {
            self.note(ident.span, symbol);
        }
    }

    /// Records the type names of a written type.
    pub(super) fn note_type(&mut self, ty: &ast::TypeExpr) {
        match ty {
            ast::TypeExpr::Named { name, args, .. } => {
                if let Some(last) = name.segments.last() {
                    self.note_type_name(last, &env::path_text(name));
                }
                args.iter().for_each(|a| self.note_type(a));
            }
            ast::TypeExpr::Record { fields, .. } => {
                fields.iter().for_each(|(_, t)| self.note_type(t));
            }
            ast::TypeExpr::Invalid(_) => {}
        }
    }

    /// Records a variant, written as `name`, of the enum [`Scope::enums`]`[index]`.
    ///
    /// [`Scope::enums`]: crate::env::Scope::enums
    pub(super) fn note_variant(&mut self, index: usize, name: &ast::Ident) {
        let Some(info) = self.scope.enums.get(index) else {
            return;
        };
        // The enums of other modules are named `module.Enum`; those of LLM replies
        // `LlmResult<Reply>`, which no module declares.
        let (module, enum_name) = if info.name.starts_with("LlmResult<") {
            (None, "LlmResult")
        } else if let Some((module, name)) = info.name.rsplit_once('.') {
            (Some(module.to_owned()), name)
        } else {
            let module = self
                .scope
                .type_keys
                .get(&info.name)
                .map(|k| k.module.clone());
            (module, info.name.as_str())
        };
        let symbol = Symbol::Variant {
            module,
            enum_name: enum_name.to_owned(),
            variant: name.name.clone(),
        };
        self.note(name.span, symbol);
    }

    /// Records a field of a record type declared by a `type` alias.
    pub(super) fn note_field(&mut self, field: &ast::Ident, record: &RecordTy) {
        if let Some(key) = record
            .name
            .as_ref()
            .and_then(|alias| self.scope.type_keys.get(alias))
        {
            let symbol = Symbol::Field {
                record: key.clone(),
                field: field.name.clone(),
            };
            self.note(field.span, symbol);
        }
    }

    /// Records a local's declaration; `id` is its place in the frame.
    pub(super) fn declare_local(&mut self, name: &ast::Ident, id: LocalId, ty: &Ty) {
        let index = self.names.locals.len();
        self.names.locals.push(LocalDecl {
            name: name.name.clone(),
            span: name.span,
            ty: ty.clone(),
            scope_end: u32::MAX,
        });
        if self.decl_of.len() <= id.index() {
            self.decl_of.resize(id.index() + 1, usize::MAX);
        }
        self.decl_of[id.index()] = index;
        let symbol = Symbol::Local {
            file: String::new(),
            span: name.span,
        };
        self.note(name.span, symbol);
    }

    /// Leaves a scope that ends at `end`: the locals declared since `depth` go out of scope.
    pub(super) fn end_scope(&mut self, depth: usize, end: u32) {
        for (_, id) in self.locals.drain(depth.min(self.locals.len())..) {
            if let Some(decl) = self
                .decl_of
                .get(id.index())
                .and_then(|&index| self.names.locals.get_mut(index))
            {
                decl.scope_end = decl.scope_end.min(end);
            }
        }
    }

    /// Records the names an item declares.
    pub(super) fn declare_item(&mut self, item: &ast::Item) {
        let def = |ck: &mut Self, name: &ast::Ident, kind| {
            let key = ck.item_key(&name.name);
            ck.note(name.span, Symbol::Def(key, kind));
        };
        match item {
            ast::Item::TypeAlias(decl) => {
                def(self, &decl.name, DefKind::TypeAlias);
                if let ast::TypeExpr::Record { fields, .. } = &decl.ty {
                    let record = self.item_key(&decl.name.name);
                    for (field, _) in fields {
                        let symbol = Symbol::Field {
                            record: record.clone(),
                            field: field.name.clone(),
                        };
                        self.note(field.span, symbol);
                    }
                }
            }
            ast::Item::Enum(decl) => {
                def(self, &decl.name, DefKind::Enum);
                for variant in &decl.variants {
                    let symbol = Symbol::Variant {
                        module: Some(self.scope.module.clone()),
                        enum_name: decl.name.name.clone(),
                        variant: variant.name.name.clone(),
                    };
                    self.note(variant.name.span, symbol);
                }
            }
            ast::Item::Const(decl) => def(self, &decl.name, DefKind::Const),
            ast::Item::Config(block) => {
                for param in &block.params {
                    def(self, &param.name, DefKind::Config);
                }
            }
            ast::Item::Fn(decl) => def(self, &decl.name, DefKind::Fn),
            ast::Item::Error(decl) => def(self, &decl.name, DefKind::Error),
            ast::Item::Llm(decl) => def(self, &decl.name, DefKind::Fn),
            ast::Item::Layer(layer) => {
                let symbol = Symbol::Layer {
                    module: self.scope.module.clone(),
                    name: layer.name.name.clone(),
                };
                self.note(layer.name.span, symbol);
                for need in &layer.needs {
                    if let Some(id) = self.scope.layer(&need.name) {
                        self.note_layer(need, id);
                    }
                }
            }
            ast::Item::Use(_) | ast::Item::Invalid(_) => {}
        }
    }

    /// Records the names a layer member declares.
    pub(super) fn declare_member(&mut self, member: &ast::Member) {
        let def = |ck: &mut Self, name: &ast::Ident, kind| {
            let key = ck.layer_key(&name.name);
            ck.note(name.span, Symbol::Def(key, kind));
        };
        match member {
            ast::Member::State(block) => {
                for field in &block.fields {
                    def(self, &field.name, DefKind::State);
                }
            }
            ast::Member::Tunable(param) => def(self, &param.name, DefKind::Tunable),
            ast::Member::Computed(decl) => def(self, &decl.name, DefKind::Computed),
            ast::Member::Fn(decl) => def(self, &decl.name, DefKind::Fn),
            ast::Member::Action(decl) => def(self, &decl.name, DefKind::Action),
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

#[cfg(test)]
mod tests {
    use crate::Workspace;
    use crate::db;
    use crate::signatures::SignatureSet;
    use crate::symbol::{LocalDecl, Symbol};
    use harness_grammar::Span;

    const TEXT: &str = "\
harness t.names
type Pair = { a: Int, b: Int }
enum Dir { Up, Down }
error BAD = \"bad\"
layer l {
  state { p: Pair = Pair { a: 1, b: 2 }, d: Dir = Dir.Up }
  computed s: Int = match d { Dir.Up => p.a, Dir.Down => { let k = p.b; k } }
  action go(by: Int) requires by > 0 else fail BAD {
    if by > 1 { let twice = by * 2
      patch p.a = twice }
  }
  decide { when s > 0 => go(s) }
}
";

    /// Every recorded name of the file with its text, and every local, in file coordinates.
    fn names() -> (Vec<(String, Symbol)>, Vec<LocalDecl>) {
        let mut ws = Workspace::new(SignatureSet::default());
        ws.set_file("t.harness", TEXT);
        assert!(ws.diagnostics().is_empty(), "{:?}", ws.diagnostics());
        let (db, inputs) = ws.query_parts();
        let file = ws.source_file("t.harness").expect("loaded");
        let key = db::FileKey::new(db, inputs, file);
        let mut refs = Vec::new();
        let mut locals = Vec::new();
        for ordinal in 0..db::outline(db, file).chunks {
            let Some(chunk) = db::chunk(db, file, ordinal) else {
                continue;
            };
            let Some(check) = db::chunk_check(db, key, &chunk) else {
                continue;
            };
            let names = &check.names;
            let offset = chunk.offset;
            let shift = |s: Span| Span {
                start: s.start + offset,
                end: s.end + offset,
            };
            for (span, symbol) in &names.refs {
                let symbol = match symbol {
                    Symbol::Local { span, .. } => Symbol::Local {
                        file: String::new(),
                        span: shift(*span),
                    },
                    other => other.clone(),
                };
                refs.push((TEXT[shift(*span).range()].to_owned(), symbol));
            }
            locals.extend(names.locals.iter().map(|l| LocalDecl {
                span: shift(l.span),
                scope_end: l.scope_end + offset,
                ..l.clone()
            }));
        }
        (refs, locals)
    }

    fn kinds_of(refs: &[(String, Symbol)], text: &str) -> Vec<String> {
        refs.iter()
            .filter(|(t, _)| t == text)
            .map(|(_, s)| match s {
                Symbol::Def(key, kind) => format!("{kind:?} {}", key.name),
                Symbol::Variant {
                    enum_name, variant, ..
                } => format!("{enum_name}.{variant}"),
                Symbol::Field { record, field } => format!("{}.{field}", record.name),
                Symbol::Local { span, .. } => format!("local@{}", span.start),
                Symbol::Layer { name, .. } => format!("layer {name}"),
                other => format!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn every_kind_of_name_is_recorded_with_its_target() {
        let (refs, _) = names();
        let at = |text: &str| TEXT.find(text).expect("in the text") as u32;
        // The alias, declared once and named in a state type and a record literal.
        assert_eq!(kinds_of(&refs, "Pair"), ["TypeAlias Pair"; 3]);
        assert_eq!(kinds_of(&refs, "Dir").len(), 5);
        assert_eq!(kinds_of(&refs, "Up"), ["Dir.Up"; 3]);
        assert_eq!(kinds_of(&refs, "a"), ["Pair.a"; 4]);
        assert_eq!(kinds_of(&refs, "BAD"), ["Error BAD"; 2]);
        assert_eq!(kinds_of(&refs, "p"), ["State p"; 4]);
        assert_eq!(kinds_of(&refs, "go"), ["Action go"; 2]);
        assert_eq!(kinds_of(&refs, "l"), ["layer l"]);
        let by = at("by: Int");
        assert_eq!(kinds_of(&refs, "by"), vec![format!("local@{by}"); 4]);
        let k = at("k = p.b");
        assert_eq!(kinds_of(&refs, "k"), vec![format!("local@{k}"); 2]);
    }

    #[test]
    fn locals_know_their_type_and_where_their_scope_ends() {
        let (_, locals) = names();
        let local = |name: &str| {
            locals
                .iter()
                .find(|l| l.name == name)
                .unwrap_or_else(|| panic!("no local {name}"))
        };
        // `k` lives to the end of its block expression, `twice` to the end of the `if` block,
        // `by` to the end of the action.
        let k = local("k");
        assert_eq!(k.ty.to_string(), "Int");
        assert!(TEXT[..k.scope_end as usize].ends_with("let k = p.b; k }"));
        let twice = local("twice");
        assert!(TEXT[..twice.scope_end as usize].ends_with("patch p.a = twice }"));
        let by = local("by");
        assert!(TEXT[..by.scope_end as usize].ends_with("patch p.a = twice }\n  }"));
        assert_eq!(by.ty.to_string(), "Int");
    }
}
