//! What a module's scope answers: members as the checker finds them, layers by name, and written
//! types resolved and normalised.

use harness_grammar::ast;

use super::*;
use crate::diagnostic::did_you_mean;
use crate::types::RecordTy;

impl Scope {
    /// Finds a layer member by name, in the order name resolution uses: the layer `from` first,
    /// then the layers it needs (nearest first), then any other layer, so that a read of a
    /// higher layer still resolves and gets its own diagnostic.
    pub fn find_member(
        &self,
        from: Option<LayerId>,
        name: &str,
    ) -> Option<(LayerId, &MemberEntry)> {
        let lookup = |id: LayerId| {
            self.layers
                .get(id.index())
                .and_then(|l| l.members.get(name))
                .map(|e| (id, e))
        };
        if let Some(own) = from
            && let Some(found) = lookup(own)
        {
            return Some(found);
        }
        // Only the layers that declare the name can answer, in id order.
        let declaring = self.layer_index.members.get(name)?;
        if let Some(own) = from
            && let Some(layer) = self.layers.get(own.index())
            && let Some(&nearest) = declaring.iter().rev().find(|id| layer.below.contains(id))
        {
            return lookup(nearest);
        }
        declaring.first().copied().and_then(lookup)
    }

    /// The layer of the given name.
    pub fn layer(&self, name: &str) -> Option<LayerId> {
        self.layer_index.by_name.get(name).copied()
    }

    /// Resolves a written type, reporting unknown names into `diags`.
    pub fn resolve_type(&self, ty: &ast::TypeExpr, diags: &mut Vec<Diagnostic>) -> Ty {
        match ty {
            ast::TypeExpr::Invalid(_) => Ty::Error,
            ast::TypeExpr::Record { fields, .. } => {
                let fields = fields
                    .iter()
                    .map(|(name, ty)| (name.name.clone(), self.resolve_type(ty, diags)))
                    .collect();
                Ty::Record(Arc::new(RecordTy { name: None, fields }))
            }
            ast::TypeExpr::Named { name, args, span } => {
                let text = name
                    .segments
                    .iter()
                    .map(|s| s.name.as_str())
                    .collect::<Vec<_>>()
                    .join(".");
                let resolved: Vec<Ty> = args
                    .iter()
                    .map(|arg| self.resolve_type(arg, diags))
                    .collect();
                let want = |n: usize, diags: &mut Vec<Diagnostic>| {
                    if resolved.len() != n {
                        diags.push(Diagnostic::new(
                            Code::TypeArguments,
                            *span,
                            format!(
                                "`{text}` takes {n} type argument(s), found {}",
                                resolved.len()
                            ),
                        ));
                        false
                    } else {
                        true
                    }
                };
                let arg = |i: usize| Box::new(resolved.get(i).cloned().unwrap_or(Ty::Error));
                match text.as_str() {
                    "Int" | "Float" | "Bool" | "String" | "Preview" | "Snapshot" => {
                        want(0, diags);
                        match text.as_str() {
                            "Int" => Ty::Int,
                            "Float" => Ty::Float,
                            "Bool" => Ty::Bool,
                            "String" => Ty::String,
                            "Preview" => Ty::Preview,
                            _ => Ty::Snapshot,
                        }
                    }
                    "Option" | "List" | "Set" => {
                        if !want(1, diags) {
                            return Ty::Error;
                        }
                        match text.as_str() {
                            "Option" => Ty::Option(arg(0)),
                            "List" => Ty::List(arg(0)),
                            _ => Ty::Set(arg(0)),
                        }
                    }
                    "Map" => {
                        if !want(2, diags) {
                            return Ty::Error;
                        }
                        Ty::Map(arg(0), arg(1))
                    }
                    "LlmResult" if !self.types.contains_key("LlmResult") => {
                        if !want(1, diags) {
                            return Ty::Error;
                        }
                        let name = ir::llm_result_name(&arg(0));
                        match self.enum_named(&name) {
                            Some(info) => Ty::Enum(info.name.as_str().into()),
                            None => {
                                diags.push(
                                    Diagnostic::new(
                                        Code::UnknownType,
                                        *span,
                                        format!("no `llm` item replies with `{}`", arg(0)),
                                    )
                                    .help("`LlmResult<T>` is the value of an LLM call replying with `T`"),
                                );
                                Ty::Error
                            }
                        }
                    }
                    _ => match self.types.get(&text) {
                        Some(TypeDef::Alias(ty)) => {
                            want(0, diags);
                            ty.clone()
                        }
                        Some(TypeDef::Enum(index)) => {
                            want(0, diags);
                            Ty::Enum(self.enums[*index].name.as_str().into())
                        }
                        Some(TypeDef::Opaque(arity)) => {
                            if !want(*arity, diags) {
                                return Ty::Error;
                            }
                            Ty::Opaque(text.as_str().into(), resolved)
                        }
                        None => {
                            let mut names: Vec<&str> =
                                self.types.keys().map(String::as_str).collect();
                            names.extend([
                                "Int", "Float", "Bool", "String", "Option", "List", "Set", "Map",
                            ]);
                            diags.push(
                                Diagnostic::new(
                                    Code::UnknownType,
                                    name.span,
                                    format!("unknown type `{text}`"),
                                )
                                .maybe_help(did_you_mean(&text, names)),
                            );
                            Ty::Error
                        }
                    },
                }
            }
        }
    }

    /// Turns the opaque names of signature types that are really enums into [`Ty::Enum`].
    pub fn normalize(&self, ty: &Ty) -> Ty {
        match ty {
            Ty::Opaque(name, args) if args.is_empty() => match self.types.get(&**name) {
                Some(TypeDef::Enum(index)) => Ty::Enum(self.enums[*index].name.as_str().into()),
                _ => ty.clone(),
            },
            Ty::Opaque(name, args) => Ty::Opaque(
                name.clone(),
                args.iter().map(|a| self.normalize(a)).collect(),
            ),
            Ty::Option(t) => Ty::Option(Box::new(self.normalize(t))),
            Ty::List(t) => Ty::List(Box::new(self.normalize(t))),
            Ty::Set(t) => Ty::Set(Box::new(self.normalize(t))),
            Ty::Map(k, v) => Ty::Map(Box::new(self.normalize(k)), Box::new(self.normalize(v))),
            Ty::Fn(params, ret) => Ty::Fn(
                params.iter().map(|p| self.normalize(p)).collect(),
                Box::new(self.normalize(ret)),
            ),
            _ => ty.clone(),
        }
    }

    /// The enum of the given qualified name.
    pub fn enum_named(&self, name: &str) -> Option<&EnumInfo> {
        self.enums.iter().find(|e| e.name == name)
    }
}
