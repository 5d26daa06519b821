//! Builds the environment from every file's chunk signatures: modules, imports, items, layers
//! and their order, with the structural diagnostics (duplicates, unknown names, cycles).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use harness_grammar::{Span, ast};

use super::*;
use crate::codes::Code;
use crate::diagnostic::{Diagnostic, did_you_mean};
use crate::signatures::SignatureSet;
use crate::types::Ty;

struct ModuleDraft<'a> {
    name: String,
    file: &'a str,
    game: Option<(ast::Ident, u32)>,
    uses: Vec<(&'a ast::Path, Option<&'a Vec<ast::Ident>>, u32)>,
    items: Vec<(&'a ast::Item, u32)>,
    layers: Vec<LayerDraft<'a>>,
}

struct LayerDraft<'a> {
    decl: &'a ast::Layer,
    ordinal: u32,
    members: Vec<(&'a ast::Member, u32)>,
}

/// Builds the environment from every file's chunk signatures and the signature set.
pub fn build(files: &[FileSig<'_>], sigs: &SignatureSet) -> Env {
    let mut diagnostics = Vec::new();
    let mut file_modules = BTreeMap::new();
    let mut chunk_layers = BTreeMap::new();
    let mut drafts: BTreeMap<String, ModuleDraft<'_>> = BTreeMap::new();

    for file in files {
        let mut module = file
            .chunks
            .iter()
            .find_map(|chunk| chunk.header.clone())
            .unwrap_or_else(|| file.path.clone());
        if drafts.contains_key(&module) {
            if let Some(ordinal) = file.chunks.iter().position(|c| c.header.is_some()) {
                diagnostics.push(Located {
                    file: file.path.clone(),
                    ordinal: ordinal as u32,
                    diagnostic: Diagnostic::new(
                        Code::Duplicate,
                        file.chunks[ordinal].header_span,
                        format!("module `{module}` is declared by two files"),
                    )
                    .primary("declared again here")
                    .help(format!(
                        "the other file is {}; rename one of the modules",
                        drafts[&module].file
                    )),
                });
            }
            // The file is still checked, as a module of its own named by its path (as a file
            // without a header is), so that its own diagnostics and the editor's answers in it
            // do not disappear behind this one.
            module = file.path.clone();
            if drafts.contains_key(&module) {
                continue;
            }
        }
        file_modules.insert(file.path.clone(), module.clone());
        let mut draft = ModuleDraft {
            name: module.clone(),
            file: &file.path,
            game: None,
            uses: Vec::new(),
            items: Vec::new(),
            layers: Vec::new(),
        };
        let mut layers_of_chunks = Vec::new();
        for (ordinal, chunk) in file.chunks.iter().enumerate() {
            let ordinal = ordinal as u32;
            if chunk.is_member {
                if let Some(layer) = draft.layers.last_mut() {
                    layer
                        .members
                        .extend(chunk.members.iter().map(|m| (m, ordinal)));
                    layers_of_chunks.push(Some(layer.decl.name.name.clone()));
                } else {
                    layers_of_chunks.push(None);
                }
                continue;
            }
            let mut chunk_layer = None;
            for item in &chunk.items {
                match item {
                    ast::Item::Use(ast::Use {
                        kind: ast::UseKind::Game(name),
                        ..
                    }) => {
                        draft.game = Some((name.clone(), ordinal));
                    }
                    ast::Item::Use(ast::Use {
                        kind: ast::UseKind::Module { path, names },
                        ..
                    }) => {
                        draft.uses.push((path, names.as_ref(), ordinal));
                    }
                    ast::Item::Layer(layer) => {
                        chunk_layer = Some(layer.name.name.clone());
                        draft.layers.push(LayerDraft {
                            decl: layer,
                            ordinal,
                            members: Vec::new(),
                        });
                    }
                    _ => draft.items.push((item, ordinal)),
                }
            }
            layers_of_chunks.push(chunk_layer);
        }
        chunk_layers.insert(file.path.clone(), layers_of_chunks);
        drafts.insert(module, draft);
    }

    // Module imports: which user modules each module uses, and which are unknown.
    let module_names: Vec<String> = drafts.keys().cloned().collect();
    let mut user_imports: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for draft in drafts.values() {
        let mut imports = Vec::new();
        for (path, _, ordinal) in &draft.uses {
            let text = path_text(path);
            if drafts.contains_key(&text) {
                imports.push(text);
            } else if !sigs.modules.contains(&text) {
                let loaded = if module_names.is_empty() {
                    "no harness modules".to_owned()
                } else {
                    drafts
                        .values()
                        .map(|d| {
                            if d.name == d.file {
                                format!("`{}` (no `harness` header)", d.file)
                            } else {
                                format!("`{}` ({})", d.name, d.file)
                            }
                        })
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                let mut candidates: Vec<&str> = module_names.iter().map(String::as_str).collect();
                candidates.extend(sigs.modules.iter().map(String::as_str));
                diagnostics.push(Located {
                    file: draft.file.to_owned(),
                    ordinal: *ordinal,
                    diagnostic: Diagnostic::new(
                        Code::UnknownModule,
                        path.span,
                        format!("unknown module `{text}`"),
                    )
                    .help(match did_you_mean(&text, candidates) {
                        Some(suggestion) => format!(
                            "{suggestion} The loaded modules are {loaded}; library modules start with `std.`"
                        ),
                        None => format!(
                            "the loaded modules are {loaded}; library modules start with `std.`"
                        ),
                    }),
                });
            }
        }
        user_imports.insert(draft.name.clone(), imports);
    }

    let mut declared = Vec::new();
    let mut scopes = BTreeMap::new();
    for draft in drafts.values() {
        // The program of a module: itself and every module it uses, transitively, in a
        // deterministic order (dependencies first).
        let mut program_modules = Vec::new();
        collect_modules(
            &draft.name,
            &user_imports,
            &mut program_modules,
            &mut BTreeSet::new(),
        );
        let is_own = |module: &str| module == draft.name;
        let mut scope = Scope {
            module: draft.name.clone(),
            game: None,
            values: BTreeMap::new(),
            types: BTreeMap::new(),
            type_keys: BTreeMap::new(),
            enums: Vec::new(),
            errors: BTreeMap::new(),
            llms: BTreeMap::new(),
            layers: Vec::new(),
            layer_index: LayerIndex::default(),
            std_imports: BTreeMap::new(),
            program_modules: program_modules.clone(),
        };
        let mut report = |file: &str, ordinal: u32, diagnostic: Diagnostic, own: bool| {
            if own {
                diagnostics.push(Located {
                    file: file.to_owned(),
                    ordinal,
                    diagnostic,
                });
            }
        };

        // The game.
        if let Some((name, ordinal)) = &draft.game {
            match sigs.games.iter().find(|g| g.name == name.name) {
                Some(game) => scope.game = Some(game.clone()),
                None => report(
                    draft.file,
                    *ordinal,
                    Diagnostic::new(
                        Code::UnknownGame,
                        name.span,
                        format!("unknown game `{}`", name.name),
                    )
                    .help(
                        did_you_mean(&name.name, sigs.games.iter().map(|g| g.name.as_str()))
                            .unwrap_or_else(|| {
                                format!(
                                    "the known games are: {}",
                                    sigs.games
                                        .iter()
                                        .map(|g| g.name.as_str())
                                        .collect::<Vec<_>>()
                                        .join(", ")
                                )
                            }),
                    ),
                    true,
                ),
            }
        }
        // Standard-library imports.
        for (path, names, _) in &draft.uses {
            let text = path_text(path);
            if sigs.modules.contains(&text) {
                let entry = scope
                    .std_imports
                    .entry(text)
                    .or_insert_with(|| Some(BTreeSet::new()));
                match (entry.as_mut(), names) {
                    (Some(set), Some(names)) => set.extend(names.iter().map(|n| n.name.clone())),
                    _ => *entry = None,
                }
            }
        }
        let std_visible = |module: &Option<String>, name: &str| match module {
            None => true,
            Some(module) => match scope.std_imports.get(module) {
                Some(None) => true,
                Some(Some(names)) => names.contains(name),
                None => false,
            },
        };
        let mut enums = Vec::new();
        let mut types = BTreeMap::new();
        for ty in &sigs.types {
            if std_visible(&ty.module, &ty.name) {
                types.insert(ty.name.clone(), TypeDef::Opaque(ty.arity));
            }
        }
        for sig in &sigs.enums {
            if std_visible(&sig.module, &sig.name) {
                types.insert(sig.name.clone(), TypeDef::Enum(enums.len()));
                enums.push(EnumInfo {
                    id: ir::EnumId(enums.len() as u32),
                    name: sig.name.clone(),
                    variants: sig.variants.clone(),
                });
            }
        }
        if let Some(game) = &scope.game {
            for ty in &game.types {
                types.insert(ty.name.clone(), TypeDef::Opaque(ty.arity));
            }
            for sig in &game.enums {
                types.insert(sig.name.clone(), TypeDef::Enum(enums.len()));
                enums.push(EnumInfo {
                    id: ir::EnumId(enums.len() as u32),
                    name: sig.name.clone(),
                    variants: sig.variants.clone(),
                });
            }
        }
        // User enums and aliases of every module of the program; the names of this module win.
        let mut aliases: Vec<(&ast::TypeAlias, bool)> = Vec::new();
        let mut own_aliases: Vec<(&ast::TypeAlias, &str, u32)> = Vec::new();
        for module in &program_modules {
            let Some(other) = drafts.get(module) else {
                continue;
            };
            let own = is_own(module);
            for (item, ordinal) in &other.items {
                let declared = match item {
                    ast::Item::Enum(decl) => Some(&decl.name),
                    ast::Item::TypeAlias(alias) => Some(&alias.name),
                    _ => None,
                };
                if let Some(name) = declared {
                    let key = DefKey::new(module.clone(), None, name.name.clone());
                    scope.type_keys.insert(name.name.clone(), key);
                }
                match item {
                    ast::Item::Enum(decl) => {
                        let name = if own {
                            decl.name.name.clone()
                        } else {
                            format!("{module}.{}", decl.name.name)
                        };
                        types.insert(decl.name.name.clone(), TypeDef::Enum(enums.len()));
                        enums.push(EnumInfo {
                            id: ir::EnumId(enums.len() as u32),
                            name,
                            variants: Vec::new(),
                        });
                    }
                    ast::Item::TypeAlias(alias) => {
                        aliases.push((alias, own));
                        if own {
                            own_aliases.push((alias, other.file, *ordinal));
                        }
                    }
                    _ => {}
                }
            }
        }
        scope.types = types;
        scope.enums = enums;
        // Aliases may refer to each other: resolve them in rounds until nothing changes.
        for _ in 0..=aliases.len() {
            let mut changed = false;
            for (alias, _) in &aliases {
                let mut sink = Vec::new();
                let mut ty = scope.resolve_type(&alias.ty, &mut sink);
                if let Ty::Record(record) = &ty {
                    let mut record = (**record).clone();
                    record.name = Some(alias.name.name.clone());
                    ty = Ty::Record(Arc::new(record));
                }
                let new = TypeDef::Alias(ty);
                if scope.types.get(&alias.name.name) != Some(&new) {
                    scope.types.insert(alias.name.name.clone(), new);
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        // An alias that leads back to itself has no type: resolving it above gave an error type
        // silently, which would let any use of it through.
        for (index, next) in cyclic_aliases(&own_aliases) {
            let (alias, file, ordinal) = own_aliases[index];
            let (target, reference) = next;
            let message = if target == alias.name.name {
                format!("the type alias `{}` refers to itself", alias.name.name)
            } else {
                format!(
                    "the type alias `{}` is cyclic: it refers to `{target}`, which leads back to `{}`",
                    alias.name.name, alias.name.name
                )
            };
            report(
                file,
                ordinal,
                Diagnostic::new(Code::CyclicAlias, alias.name.span, message)
                    .label(reference, "this reference leads back")
                    .help("an alias names an existing type; define the type with a record or an `enum` instead"),
                true,
            );
        }
        // Enum payloads, now that every type name is known.
        for module in &program_modules {
            let Some(other) = drafts.get(module) else {
                continue;
            };
            for (item, _) in &other.items {
                if let ast::Item::Enum(decl) = item {
                    let Some(TypeDef::Enum(index)) = scope.types.get(&decl.name.name).cloned()
                    else {
                        continue;
                    };
                    let mut sink = Vec::new();
                    let variants = decl
                        .variants
                        .iter()
                        .map(|v| {
                            (
                                v.name.name.clone(),
                                v.payload
                                    .iter()
                                    .map(|t| scope.resolve_type(t, &mut sink))
                                    .collect(),
                            )
                        })
                        .collect();
                    scope.enums[index].variants = variants;
                }
            }
        }
        let normalized: Vec<Vec<(String, Vec<Ty>)>> = scope
            .enums
            .iter()
            .map(|e| {
                e.variants
                    .iter()
                    .map(|(n, p)| (n.clone(), p.iter().map(|t| scope.normalize(t)).collect()))
                    .collect()
            })
            .collect();
        for (info, variants) in scope.enums.iter_mut().zip(normalized) {
            info.variants = variants;
        }
        add_llm_effects(&mut scope, &program_modules, &drafts);

        // Values, errors and duplicates among the items of each module.
        let (mut consts, mut configs, mut fns, mut errors) = (0u32, 0u32, 0u32, 0u32);
        for module in &program_modules {
            let Some(other) = drafts.get(module) else {
                continue;
            };
            let own = is_own(module);
            let mut seen: BTreeMap<String, Span> = BTreeMap::new();
            for (item, ordinal) in &other.items {
                let at = |span: Span| Location {
                    file: other.file.to_owned(),
                    ordinal: *ordinal,
                    span,
                };
                let key = |name: &str| DefKey::new(module.clone(), None, name);
                let mut names: Vec<&ast::Ident> = Vec::new();
                let mut sink = Vec::new();
                match item {
                    ast::Item::Const(decl) => {
                        names.push(&decl.name);
                        let ty = scope.resolve_type(&decl.ty, &mut sink);
                        let id = ir::ConstId(consts);
                        consts += 1;
                        let def_key = key(&decl.name.name);
                        if own {
                            declared.push((def_key.clone(), Code::UnusedConst, at(decl.name.span)));
                        }
                        scope.values.insert(
                            decl.name.name.clone(),
                            (ValueDef::Const { id, ty }, def_key, at(decl.name.span)),
                        );
                    }
                    ast::Item::Config(block) => {
                        for param in &block.params {
                            names.push(&param.name);
                            let ty = scope.resolve_type(&param.ty, &mut sink);
                            let id = ir::ConfigId(configs);
                            configs += 1;
                            scope.values.insert(
                                param.name.name.clone(),
                                (
                                    ValueDef::Config { id, ty },
                                    key(&param.name.name),
                                    at(param.name.span),
                                ),
                            );
                        }
                    }
                    ast::Item::Fn(decl) => {
                        names.push(&decl.name);
                        let info = FnInfo {
                            id: ir::FnId(fns),
                            params: decl
                                .params
                                .iter()
                                .map(|p| {
                                    (p.name.name.clone(), scope.resolve_type(&p.ty, &mut sink))
                                })
                                .collect(),
                            ret: scope.resolve_type(&decl.ret, &mut sink),
                        };
                        fns += 1;
                        let def_key = key(&decl.name.name);
                        if own {
                            declared.push((def_key.clone(), Code::UnusedFn, at(decl.name.span)));
                        }
                        scope.values.insert(
                            decl.name.name.clone(),
                            (ValueDef::Fn(info), def_key, at(decl.name.span)),
                        );
                    }
                    ast::Item::Error(decl) => {
                        names.push(&decl.name);
                        let def_key = key(&decl.name.name);
                        if own {
                            declared.push((def_key.clone(), Code::UnusedError, at(decl.name.span)));
                        }
                        scope
                            .errors
                            .insert(decl.name.name.clone(), (ir::ErrorId(errors), def_key));
                        errors += 1;
                    }
                    ast::Item::TypeAlias(decl) => names.push(&decl.name),
                    ast::Item::Enum(decl) => {
                        names.push(&decl.name);
                        let mut variants: BTreeMap<&str, Span> = BTreeMap::new();
                        for variant in &decl.variants {
                            if let Some(first) =
                                variants.insert(&variant.name.name, variant.name.span)
                            {
                                report(
                                    other.file,
                                    *ordinal,
                                    duplicate(&variant.name, first, "variant"),
                                    own,
                                );
                            }
                        }
                    }
                    _ => {}
                }
                for name in names {
                    if let Some(first) = seen.insert(name.name.clone(), name.span) {
                        let _ = first;
                        report(
                            other.file,
                            *ordinal,
                            Diagnostic::new(
                                Code::Duplicate,
                                name.span,
                                format!("`{}` is defined more than once in this module", name.name),
                            )
                            .primary("defined again here")
                            .help("rename or remove one of the definitions"),
                            own,
                        );
                    }
                }
            }
        }

        // Layers of the program, in dependency order.
        let mut all_layers: Vec<(&str, &LayerDraft<'_>)> = Vec::new();
        for module in &program_modules {
            if let Some(other) = drafts.get(module) {
                for layer in &other.layers {
                    all_layers.push((other.file, layer));
                }
            }
        }
        let index_of: BTreeMap<&str, usize> = all_layers
            .iter()
            .enumerate()
            .rev()
            .map(|(i, (_, l))| (l.decl.name.name.as_str(), i))
            .collect();
        let mut needs_of: Vec<Vec<usize>> = Vec::new();
        for (i, (file, layer)) in all_layers.iter().enumerate() {
            let own = is_own(&module_of(&drafts, file));
            if index_of.get(layer.decl.name.name.as_str()) != Some(&i) {
                report(
                    file,
                    layer.ordinal,
                    Diagnostic::new(
                        Code::Duplicate,
                        layer.decl.name.span,
                        format!("layer `{}` is defined more than once", layer.decl.name.name),
                    ),
                    own,
                );
            }
            let mut needs = Vec::new();
            for need in &layer.decl.needs {
                match index_of.get(need.name.as_str()) {
                    Some(&j) => needs.push(j),
                    None => report(
                        file,
                        layer.ordinal,
                        Diagnostic::new(
                            Code::UnknownLayer,
                            need.span,
                            format!("unknown layer `{}`", need.name),
                        )
                        .maybe_help(did_you_mean(
                            &need.name,
                            all_layers.iter().map(|(_, l)| l.decl.name.name.as_str()),
                        )),
                        own,
                    ),
                }
            }
            needs_of.push(needs);
        }
        // Topological order; layers on a cycle are reported and placed last, in source order.
        let mut order = Vec::new();
        let mut state = vec![0u8; all_layers.len()];
        for start in 0..all_layers.len() {
            visit_layer(start, &needs_of, &mut state, &mut order);
        }
        for (i, (file, layer)) in all_layers.iter().enumerate() {
            if on_cycle(i, &needs_of) {
                let own = is_own(&module_of(&drafts, file));
                report(
                    file,
                    layer.ordinal,
                    Diagnostic::new(
                        Code::LayerCycle,
                        layer.decl.name.span,
                        format!(
                            "layer `{}` needs itself through `needs`",
                            layer.decl.name.name
                        ),
                    )
                    .help("the layers must form a stack: remove one of the `needs`"),
                    own,
                );
            }
        }
        let position: BTreeMap<usize, usize> =
            order.iter().enumerate().map(|(pos, &i)| (i, pos)).collect();
        let (mut states, mut tunables, mut computed, mut actions) = (0u32, 0u32, 0u32, 0u32);
        let mut layer_fns = fns;
        for &i in &order {
            let (file, layer) = all_layers[i];
            let module = module_of(&drafts, file);
            let own = is_own(&module);
            let needs: Vec<LayerId> = needs_of[i]
                .iter()
                .filter_map(|j| position.get(j))
                .map(|&p| LayerId(p as u32))
                .collect();
            let mut below = BTreeSet::new();
            let mut stack = needs_of[i].clone();
            while let Some(j) = stack.pop() {
                if let Some(&p) = position.get(&j)
                    && below.insert(LayerId(p as u32))
                {
                    stack.extend(needs_of[j].iter().copied());
                }
            }
            let layer_name = layer.decl.name.name.clone();
            let mut uses = BTreeSet::new();
            let effects: Vec<&str> = scope
                .game
                .iter()
                .flat_map(|g| g.effects.iter().map(|e| e.name.as_str()))
                .collect();
            for used in &layer.decl.uses {
                if effects.contains(&used.name.as_str()) {
                    uses.insert(used.name.clone());
                } else {
                    report(
                        file,
                        layer.ordinal,
                        Diagnostic::new(
                            Code::UnknownEffect,
                            used.span,
                            format!("`uses game.{}`: the game has no such effect", used.name),
                        )
                        .maybe_help(did_you_mean(&used.name, effects.iter().copied())),
                        own,
                    );
                }
            }
            let mut members = BTreeMap::new();
            let mut defaults_set = BTreeSet::new();
            let mut sink = Vec::new();
            for (member, ordinal) in &layer.members {
                let at = |span: Span| Location {
                    file: file.to_owned(),
                    ordinal: *ordinal,
                    span,
                };
                let key = |name: &str| DefKey::new(module.clone(), Some(layer_name.clone()), name);
                let mut entries: Vec<(&ast::Ident, MemberDef, Option<Code>)> = Vec::new();
                match member {
                    ast::Member::State(block) => {
                        for field in &block.fields {
                            let ty = scope.resolve_type(&field.ty, &mut sink);
                            entries.push((
                                &field.name,
                                MemberDef::State(ir::StateId(states), ty),
                                Some(Code::UnusedState),
                            ));
                            states += 1;
                        }
                    }
                    ast::Member::Tunable(param) => {
                        let ty = scope.resolve_type(&param.ty, &mut sink);
                        let range = param.range.as_ref().and_then(literal_range);
                        entries.push((
                            &param.name,
                            MemberDef::Tunable(ir::TunableId(tunables), ty, range),
                            None,
                        ));
                        tunables += 1;
                    }
                    ast::Member::Computed(decl) => {
                        let ty = scope.resolve_type(&decl.ty, &mut sink);
                        entries.push((
                            &decl.name,
                            MemberDef::Computed(ir::ComputedId(computed), ty),
                            Some(Code::UnusedComputed),
                        ));
                        computed += 1;
                    }
                    ast::Member::Fn(decl) => {
                        let info = FnInfo {
                            id: ir::FnId(layer_fns),
                            params: decl
                                .params
                                .iter()
                                .map(|p| {
                                    (p.name.name.clone(), scope.resolve_type(&p.ty, &mut sink))
                                })
                                .collect(),
                            ret: scope.resolve_type(&decl.ret, &mut sink),
                        };
                        layer_fns += 1;
                        entries.push((&decl.name, MemberDef::Fn(info), Some(Code::UnusedFn)));
                    }
                    ast::Member::Action(decl) => {
                        let params = decl
                            .params
                            .iter()
                            .map(|p| (p.name.name.clone(), scope.resolve_type(&p.ty, &mut sink)))
                            .collect();
                        entries.push((
                            &decl.name,
                            MemberDef::Action(ir::ActionId(actions), params),
                            None,
                        ));
                        actions += 1;
                    }
                    ast::Member::TunableDefault(it) => {
                        if let ast::ExprKind::Field(base, name) = &it.target.kind
                            && let ast::ExprKind::Name(of) = &base.kind
                            && !defaults_set.insert((of.name.clone(), name.name.clone()))
                        {
                            report(
                                file,
                                *ordinal,
                                Diagnostic::new(
                                    Code::Duplicate,
                                    it.target.span,
                                    format!(
                                        "layer `{layer_name}` sets the default of `{}.{}` twice",
                                        of.name, name.name
                                    ),
                                )
                                .primary("set again here")
                                .help("remove one of them"),
                                own,
                            );
                        }
                    }
                    _ => {}
                }
                for (name, def, unused) in entries {
                    if let Some(previous) = members.get(&name.name) {
                        let previous: &MemberEntry = previous;
                        let _ = previous;
                        report(
                            file,
                            *ordinal,
                            Diagnostic::new(
                                Code::Duplicate,
                                name.span,
                                format!(
                                    "`{}` is defined more than once in layer `{layer_name}`",
                                    name.name
                                ),
                            )
                            .primary("defined again here")
                            .help("rename or remove one of the definitions"),
                            own,
                        );
                        continue;
                    }
                    let member_key = key(&name.name);
                    if let (Some(code), true) = (unused, own) {
                        declared.push((member_key.clone(), code, at(name.span)));
                    }
                    members.insert(
                        name.name.clone(),
                        MemberEntry {
                            def,
                            key: member_key,
                            at: at(name.span),
                        },
                    );
                }
            }
            scope.layers.push(LayerInfo {
                name: layer_name,
                module,
                needs,
                below,
                members,
                uses,
                machines: layer
                    .members
                    .iter()
                    .filter_map(|(member, _)| match member {
                        ast::Member::Machine(decl) => {
                            Some((decl.field.name.clone(), machine_edges(decl)))
                        }
                        _ => None,
                    })
                    .collect(),
                at: Location {
                    file: file.to_owned(),
                    ordinal: layer.ordinal,
                    span: layer.decl.name.span,
                },
            });
        }
        scope.layer_index = LayerIndex::of(&scope.layers);
        scopes.insert(draft.name.clone(), Arc::new(scope));
    }
    declared.sort_by(|a, b| a.2.cmp(&b.2));
    Env {
        scopes,
        file_modules,
        chunk_layers,
        diagnostics,
        declared,
    }
}

/// Registers the program's `llm` items, numbered in module order, with the enums their calls
/// need: the prelude's `LlmFailure` and one `LlmResult<Reply>` per reply type. The enums come
/// after every other enum, so a program without LLM effects numbers its enums as before.
fn add_llm_effects(
    scope: &mut Scope,
    program_modules: &[String],
    drafts: &BTreeMap<String, ModuleDraft<'_>>,
) {
    let mut next = 0u32;
    let mut failure: Option<String> = None;
    for module in program_modules {
        let Some(draft) = drafts.get(module) else {
            continue;
        };
        let own = module == &scope.module;
        for (item, _) in &draft.items {
            let ast::Item::Llm(decl) = item else {
                continue;
            };
            let failure_name = failure
                .get_or_insert_with(|| {
                    let name = ir::LLM_FAILURE_ENUM.to_owned();
                    let index = scope.enums.len();
                    scope.enums.push(EnumInfo {
                        id: ir::EnumId(index as u32),
                        name: name.clone(),
                        variants: ir::LLM_FAILURE_VARIANTS
                            .iter()
                            .map(|v| ((*v).to_owned(), Vec::new()))
                            .collect(),
                    });
                    // A user enum of the same name keeps its name; the prelude's stays
                    // reachable through the result enums.
                    scope
                        .types
                        .entry(name.clone())
                        .or_insert(TypeDef::Enum(index));
                    name
                })
                .clone();
            let mut sink = Vec::new();
            let params = decl
                .params
                .iter()
                .map(|p| (p.name.name.clone(), scope.resolve_type(&p.ty, &mut sink)))
                .collect();
            let reply = scope.resolve_type(&decl.reply, &mut sink);
            let result_name = ir::llm_result_name(&reply);
            if scope.enum_named(&result_name).is_none() {
                let index = scope.enums.len();
                scope.enums.push(EnumInfo {
                    id: ir::EnumId(index as u32),
                    name: result_name.clone(),
                    variants: vec![
                        ("Ok".to_owned(), vec![reply.clone()]),
                        (
                            "Failed".to_owned(),
                            vec![Ty::Enum(failure_name.as_str().into())],
                        ),
                    ],
                });
            }
            let info = LlmInfo {
                id: ir::LlmId(next),
                key: DefKey::new(module.clone(), None, decl.name.name.clone()),
                params,
                reply,
                result: Ty::Enum(result_name.as_str().into()),
            };
            next += 1;
            if own || !scope.llms.contains_key(&decl.name.name) {
                scope.llms.insert(decl.name.name.clone(), info);
            }
        }
    }
}

fn duplicate(name: &ast::Ident, _first: Span, what: &str) -> Diagnostic {
    Diagnostic::new(
        Code::Duplicate,
        name.span,
        format!("{what} `{}` is defined more than once", name.name),
    )
    .primary("defined again here")
    .help("rename or remove one of the definitions")
}

fn module_of(drafts: &BTreeMap<String, ModuleDraft<'_>>, file: &str) -> String {
    drafts
        .values()
        .find(|d| d.file == file)
        .map(|d| d.name.clone())
        .unwrap_or_default()
}

fn collect_modules(
    module: &str,
    imports: &BTreeMap<String, Vec<String>>,
    out: &mut Vec<String>,
    seen: &mut BTreeSet<String>,
) {
    if !seen.insert(module.to_owned()) {
        return;
    }
    for used in imports.get(module).into_iter().flatten() {
        collect_modules(used, imports, out, seen);
    }
    out.push(module.to_owned());
}

fn visit_layer(i: usize, needs: &[Vec<usize>], state: &mut [u8], order: &mut Vec<usize>) {
    if state[i] != 0 {
        return;
    }
    state[i] = 1;
    for &j in &needs[i] {
        visit_layer(j, needs, state, order);
    }
    state[i] = 2;
    order.push(i);
}

fn on_cycle(start: usize, needs: &[Vec<usize>]) -> bool {
    let mut stack = needs[start].clone();
    let mut seen = BTreeSet::new();
    while let Some(j) = stack.pop() {
        if j == start {
            return true;
        }
        if seen.insert(j) {
            stack.extend(needs[j].iter().copied());
        }
    }
    false
}

/// The aliases of `aliases` that lie on a cycle of aliases, each with the alias it refers to
/// on that cycle and the span of that reference. Tarjan's algorithm, iterative, so a long chain
/// of aliases costs no stack.
fn cyclic_aliases(aliases: &[(&ast::TypeAlias, &str, u32)]) -> Vec<(usize, (String, Span))> {
    let index_of: HashMap<&str, usize> = aliases
        .iter()
        .enumerate()
        .map(|(i, (alias, _, _))| (alias.name.name.as_str(), i))
        .collect();
    // The aliases each alias's type mentions, with the reference's span.
    let edges: Vec<Vec<(usize, Span)>> = aliases
        .iter()
        .map(|(alias, _, _)| {
            let mut out = Vec::new();
            let mut stack = vec![&alias.ty];
            while let Some(ty) = stack.pop() {
                match ty {
                    ast::TypeExpr::Named { name, args, .. } => {
                        if let Some(&j) = index_of.get(path_text(name).as_str()) {
                            out.push((j, name.span));
                        }
                        stack.extend(args.iter());
                    }
                    ast::TypeExpr::Record { fields, .. } => {
                        stack.extend(fields.iter().map(|(_, t)| t));
                    }
                    ast::TypeExpr::Invalid(_) => {}
                }
            }
            out
        })
        .collect();
    let n = aliases.len();
    let unvisited = usize::MAX;
    let mut order = vec![unvisited; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut component = vec![0; n];
    let mut components = 0;
    let mut counter = 0;
    for root in 0..n {
        if order[root] != unvisited {
            continue;
        }
        // Each frame is a node and the index of the next edge to follow from it.
        let mut frames = vec![(root, 0usize)];
        order[root] = counter;
        low[root] = counter;
        counter += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some((node, next)) = frames.last().copied() {
            if let Some(&(to, _)) = edges[node].get(next) {
                if let Some(frame) = frames.last_mut() {
                    frame.1 += 1;
                }
                if order[to] == unvisited {
                    order[to] = counter;
                    low[to] = counter;
                    counter += 1;
                    stack.push(to);
                    on_stack[to] = true;
                    frames.push((to, 0));
                } else if on_stack[to] {
                    low[node] = low[node].min(order[to]);
                }
                continue;
            }
            frames.pop();
            if let Some(&(parent, _)) = frames.last() {
                low[parent] = low[parent].min(low[node]);
            }
            if low[node] == order[node] {
                while let Some(member) = stack.pop() {
                    on_stack[member] = false;
                    component[member] = components;
                    if member == node {
                        break;
                    }
                }
                components += 1;
            }
        }
    }
    let mut sizes = vec![0usize; components];
    for c in &component {
        sizes[*c] += 1;
    }
    (0..n)
        .filter_map(|i| {
            let cyclic =
                |to: usize| component[to] == component[i] && (sizes[component[i]] > 1 || to == i);
            let (to, span) = edges[i].iter().find(|(to, _)| cyclic(*to))?;
            Some((i, (aliases[*to].0.name.name.clone(), *span)))
        })
        .collect()
}
