//! Error recovery: every independent mistake is reported once, and nothing else.

use harness_grammar::ast::{Item, Member, Stmt};
use harness_grammar::{SyntaxErrorKind, parse, parse_item, parse_member};

/// The start offsets of the errors, as `(line, kind)` pairs, for readable assertions.
fn error_lines(text: &str) -> Vec<(usize, SyntaxErrorKind)> {
    parse(text)
        .errors
        .iter()
        .map(|e| {
            (
                text[..e.span.start as usize].matches('\n').count() + 1,
                e.kind,
            )
        })
        .collect()
}

#[test]
fn several_independent_mistakes_are_each_reported_once() {
    let text = "\
const A: Int = 1 +
type T = { a: Int b: Int }
layer l {
  state { a: Int = }
  action go() {
    patch = 1
    emit game.fire(cell)
  }
  decide { when a b => c() }
  computed ok: Int = 1
}
const B: Int = 1 < 2 < 3
fn f() -> Int = if x { 1 }
error E = \"bad \\q\"
const C: Int = 1 @ 2
";
    use SyntaxErrorKind::*;
    assert_eq!(
        error_lines(text),
        vec![
            (2, UnexpectedToken),
            (2, UnexpectedToken),
            (4, UnexpectedToken),
            (6, UnexpectedToken),
            (9, UnexpectedToken),
            (12, NonAssociative),
            (13, MissingElse),
            (14, InvalidEscape),
            (15, InvalidCharacter),
        ]
    );
    // The first error is at `type`, which ends the incomplete expression of line 1.
    let parse = parse(text);
    assert_eq!(
        parse.errors[0].message,
        "expected an expression, found `type`"
    );
}

#[test]
fn the_rest_of_a_layer_survives_a_broken_member() {
    let text =
        "layer l {\n  computed a: Int = )\n  computed b: Int = 2\n  state { x: Int = 0 }\n}\n";
    let parse = parse(text);
    assert_eq!(parse.errors.len(), 1, "{:?}", parse.errors);
    let Item::Layer(layer) = &parse.file.items[0] else {
        panic!("expected a layer")
    };
    assert!(matches!(layer.members[1], Member::Computed(ref c) if c.name.name == "b"));
    assert!(matches!(layer.members[2], Member::State(_)));
}

#[test]
fn a_broken_statement_becomes_an_invalid_statement() {
    let text = "layer l { action a() { patch x = 1 patch = 2 emit game.go() } }";
    let parse = parse(text);
    assert_eq!(parse.errors.len(), 1, "{:?}", parse.errors);
    let Item::Layer(layer) = &parse.file.items[0] else {
        panic!("expected a layer")
    };
    let Member::Action(action) = &layer.members[0] else {
        panic!("expected an action")
    };
    let kinds: Vec<_> = action
        .body
        .stmts
        .iter()
        .map(std::mem::discriminant)
        .collect();
    assert_eq!(kinds.len(), 3);
    assert!(matches!(action.body.stmts[1], Stmt::Invalid(_)));
    assert!(matches!(action.body.stmts[2], Stmt::Emit(..)));
}

#[test]
fn an_unclosed_layer_ends_at_the_next_item() {
    let text = "layer l {\n  computed x: Int = 1\nlayer m {}\nconst A: Int = 1\n";
    let parse = parse(text);
    assert_eq!(parse.errors.len(), 1, "{:?}", parse.errors);
    assert_eq!(
        parse.errors[0].message,
        "expected `}` to close the layer, found `layer`"
    );
    assert!(matches!(parse.file.items[1], Item::Layer(ref l) if l.name.name == "m"));
    assert!(matches!(parse.file.items[2], Item::Const(_)));
}

#[test]
fn an_unterminated_string_is_one_error() {
    let errors = parse("error E = \"abc\nlayer l {}\n").errors;
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].kind, SyntaxErrorKind::UnterminatedString);
}

#[test]
fn a_run_of_invalid_characters_is_one_error() {
    let errors = parse("const A: Int = 1 @#$ 2").errors;
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].kind, SyntaxErrorKind::InvalidCharacter);
    assert_eq!(errors[0].span.len(), 3);
}

#[test]
fn messages_say_what_was_expected_and_found() {
    let errors = parse("layer a { decide { when x > 1 { ask(q) } } }").errors;
    assert_eq!(errors.len(), 1);
    assert_eq!(
        errors[0].message,
        "expected `=>` after the rule's guards, found `{`"
    );
    assert_eq!(errors[0].expected.as_deref(), Some("`=>`"));
}

#[test]
fn a_single_member_parses_with_spans_relative_to_its_text() {
    let (member, errors) = parse_member("  computed best: Int = 1 + 2");
    assert_eq!(errors, vec![]);
    assert_eq!(member.span().start, 2);
    assert_eq!(member.span().end, 28);

    let (member, errors) = parse_member("computed a: Int = 1 computed b: Int = 2");
    assert!(matches!(member, Member::Computed(_)));
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].message.contains("after the member"),
        "{}",
        errors[0].message
    );

    let (member, errors) = parse_member("const A: Int = 1");
    assert!(matches!(member, Member::Invalid(_)));
    assert_eq!(errors.len(), 1, "{errors:?}");
}

#[test]
fn a_single_item_parses_with_spans_relative_to_its_text() {
    let (item, errors) = parse_item("/// Docs.\nconst A: Int = 1\n");
    assert_eq!(errors, vec![]);
    let Item::Const(decl) = item else {
        panic!("expected a const")
    };
    assert_eq!(decl.docs.text, "Docs.");
    assert_eq!(decl.span.start, 10);

    let (item, errors) = parse_item("");
    assert!(matches!(item, Item::Invalid(_)));
    assert_eq!(errors.len(), 1);
}

#[test]
fn every_invalid_corpus_file_reports_its_expected_kind() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut checked = 0;
    for entry in std::fs::read_dir(dir).expect("corpus directory") {
        let path = entry.expect("corpus entry").path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_string();
        let text = std::fs::read_to_string(&path).expect("read corpus file");
        let errors = parse(&text).errors;
        if name.starts_with("valid_") {
            assert_eq!(errors, vec![], "{name}");
        } else if name.starts_with("invalid_") {
            let expected = text
                .lines()
                .next()
                .and_then(|line| line.strip_prefix("// expect: "))
                .unwrap_or_else(|| panic!("{name} has no `// expect: Kind` first line"));
            assert!(
                errors.iter().any(|e| format!("{:?}", e.kind) == expected),
                "{name}: expected a {expected} error, got {errors:?}"
            );
        } else {
            panic!("{name}: corpus files are named valid_* or invalid_*");
        }
        checked += 1;
    }
    assert!(checked >= 40);
}
