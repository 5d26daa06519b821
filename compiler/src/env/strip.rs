//! The signature part of a declaration: its body cut off, so that a body edit leaves the
//! environment equal.

use harness_grammar::{Span, ast};

/// The signature part of an item: its body replaced by an error node, so that a body edit leaves
/// it equal.
pub fn strip_item(item: &ast::Item) -> ast::Item {
    let mut item = item.clone();
    // Spans that cover a body change when the body does; the environment uses only the spans of
    // names and types.
    match &mut item {
        ast::Item::Const(it) => {
            blank(&mut it.value);
            it.span = Span::default();
        }
        ast::Item::Fn(it) => {
            blank(&mut it.body);
            it.span = Span::default();
        }
        ast::Item::Layer(it) => it.members.clear(),
        _ => {}
    }
    item
}

/// The signature part of a member: bodies replaced by error nodes; rules, handlers and models
/// dropped, since no other member can refer to them.
pub fn strip_member(member: &ast::Member) -> Option<ast::Member> {
    let mut member = member.clone();
    match &mut member {
        ast::Member::State(block) => {
            block.span = Span::default();
            for field in &mut block.fields {
                blank(&mut field.init);
                field.span = Span::default();
            }
        }
        ast::Member::Computed(it) => {
            blank(&mut it.body);
            it.span = Span::default();
        }
        ast::Member::Fn(it) => {
            blank(&mut it.body);
            it.span = Span::default();
        }
        ast::Member::Action(it) => {
            it.available = None;
            it.requires.clear();
            it.body.stmts.clear();
            it.body.span = Span::default();
            it.span = Span::default();
        }
        ast::Member::Tunable(_) => {}
        // Kept for its target, so that a layer setting one default twice is found with the
        // layer's other definitions.
        ast::Member::TunableDefault(it) => {
            blank(&mut it.value);
            it.span = Span::default();
        }
        // Kept whole: every member's literal transitions are proved against the machines.
        ast::Member::Machine(_) => {}
        _ => return None,
    }
    Some(member)
}

fn blank(expr: &mut ast::Expr) {
    *expr = ast::Expr {
        kind: ast::ExprKind::Error,
        span: Span::default(),
    };
}
