//! The signature part of a declaration: its body cut off, so that a body edit leaves the
//! environment equal.

use harness_grammar::{Span, ast};

/// The signature part of an item: its body replaced by an error node, so that a body edit leaves
/// it equal.
///
/// Built field by field rather than cloned and then blanked, so that a body is never copied only
/// to be dropped; the struct literals are exhaustive, so a new field is a compile error here.
pub fn strip_item(item: &ast::Item) -> ast::Item {
    // Spans that cover a body change when the body does; the environment uses only the spans of
    // names and types.
    match item {
        ast::Item::Const(it) => ast::Item::Const(ast::ConstDecl {
            docs: it.docs.clone(),
            name: it.name.clone(),
            ty: it.ty.clone(),
            value: blank(),
            span: Span::default(),
        }),
        ast::Item::Fn(it) => ast::Item::Fn(strip_fn(it)),
        ast::Item::Layer(it) => ast::Item::Layer(ast::Layer {
            docs: it.docs.clone(),
            name: it.name.clone(),
            role: it.role.clone(),
            needs: it.needs.clone(),
            uses: it.uses.clone(),
            members: Vec::new(),
            span: it.span,
        }),
        _ => item.clone(),
    }
}

/// The signature part of a member: bodies replaced by error nodes; rules, handlers and models
/// dropped, since no other member can refer to them.
pub fn strip_member(member: &ast::Member) -> Option<ast::Member> {
    Some(match member {
        ast::Member::State(block) => ast::Member::State(ast::StateBlock {
            fields: block
                .fields
                .iter()
                .map(|field| ast::StateField {
                    docs: field.docs.clone(),
                    name: field.name.clone(),
                    ty: field.ty.clone(),
                    init: blank(),
                    span: Span::default(),
                })
                .collect(),
            span: Span::default(),
        }),
        ast::Member::Computed(it) => ast::Member::Computed(ast::Computed {
            docs: it.docs.clone(),
            name: it.name.clone(),
            ty: it.ty.clone(),
            body: blank(),
            span: Span::default(),
        }),
        ast::Member::Fn(it) => ast::Member::Fn(strip_fn(it)),
        ast::Member::Action(it) => ast::Member::Action(ast::Action {
            docs: it.docs.clone(),
            name: it.name.clone(),
            params: it.params.clone(),
            available: None,
            requires: Vec::new(),
            body: ast::Block {
                stmts: Vec::new(),
                span: Span::default(),
            },
            span: Span::default(),
        }),
        ast::Member::Tunable(_) => member.clone(),
        // Kept for its target, so that a layer setting one default twice is found with the
        // layer's other definitions.
        ast::Member::TunableDefault(it) => ast::Member::TunableDefault(ast::TunableDefault {
            docs: it.docs.clone(),
            target: it.target.clone(),
            value: blank(),
            span: Span::default(),
        }),
        // Kept whole: every member's literal transitions are proved against the machines.
        ast::Member::Machine(_) => member.clone(),
        _ => return None,
    })
}

fn strip_fn(it: &ast::FnDecl) -> ast::FnDecl {
    ast::FnDecl {
        docs: it.docs.clone(),
        name: it.name.clone(),
        params: it.params.clone(),
        ret: it.ret.clone(),
        body: blank(),
        span: Span::default(),
    }
}

fn blank() -> ast::Expr {
    ast::Expr {
        kind: ast::ExprKind::Error,
        span: Span::default(),
    }
}
