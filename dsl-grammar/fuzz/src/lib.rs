//! The fuzz targets' bodies, shared by the libFuzzer targets (`fuzz_targets/`, built with
//! cargo-fuzz on a nightly toolchain) and the stable driver (`src/bin/drive.rs`), so that both
//! fuzz exactly the same properties. Each function panics when its property fails.

use harness_compiler::Workspace;
use harness_compiler::codes::Code;
use harness_compiler::signatures::SignatureSet;
use harness_grammar::SyntaxErrorKind;
use harness_grammar::format::{FormatError, format};
use pest::Parser as _;

#[derive(pest_derive::Parser)]
#[grammar = "../harness.pest"]
struct Reference;

/// The target names, in the order the driver lists them.
pub const TARGETS: [&str; 4] = ["parse", "agree", "check", "fmt"];

/// Runs the target `name` on `data`; false when there is no such target.
pub fn run(name: &str, data: &[u8]) -> bool {
    match name {
        "parse" => parse(data),
        "agree" => agree(data),
        "check" => check(data),
        "fmt" => fmt(data),
        _ => return false,
    }
    true
}

/// The parser never panics, and its tokens reproduce the input, on any UTF-8 text.
pub fn parse(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let parse = harness_grammar::parse(&text);
    let rebuilt: String = parse.tokens.iter().map(|t| &text[t.span.range()]).collect();
    assert_eq!(rebuilt, text);
    for error in &parse.errors {
        assert!(
            text.get(error.span.range()).is_some(),
            "error span off the text: {error:?}"
        );
    }
    let _ = harness_grammar::parse_item(&text);
    let _ = harness_grammar::parse_member(&text);
}

/// The hand-written parser and the reference grammar accept the same UTF-8 texts. Texts on
/// which the parser gives up because of nesting depth are skipped (the reference grammar has no
/// limit), and literals out of range do not count as rejections (a grammar cannot see them):
/// the same rules as `tests/agreement.rs`.
pub fn agree(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let parse = harness_grammar::parse(text);
    if parse
        .errors
        .iter()
        .any(|e| matches!(e.kind, SyntaxErrorKind::TooDeep | SyntaxErrorKind::TooLong))
    {
        return;
    }
    let parser = parse
        .errors
        .iter()
        .all(|e| e.kind == SyntaxErrorKind::NumberOutOfRange);
    let reference = Reference::parse(Rule::file, text).is_ok();
    assert_eq!(parser, reference, "parser errors: {:?}", parse.errors);
}

/// The signatures the checker targets check against: the prelude and the runtime's.
fn signatures() -> SignatureSet {
    let mut set = harness_stdlib::prelude::signatures();
    set.extend(harness_runtime::signatures());
    set
}

/// The checker never panics, never overflows its stack and never reports an internal error, on
/// any text, alone or edited (the incremental path re-checks after a change). Where the text
/// checks, its cost bound is computed too (it is part of the diagnostics).
pub fn check(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut workspace = Workspace::new(signatures());
    workspace.set_file("fuzz.harness", &text);
    let first = workspace.diagnostics();
    assert!(!first.iter().any(|d| d.code == Code::Internal), "{first:?}");
    // The same text with its second half removed, as an editor's edit would leave it.
    let mut cut = text.len() / 2;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    workspace.set_file("fuzz.harness", &text[..cut]);
    let second = workspace.diagnostics();
    assert!(
        !second.iter().any(|d| d.code == Code::Internal),
        "{second:?}"
    );
}

/// What the checker makes of a text: its diagnostic codes, sorted, and every module's lowered
/// IR with the spans left out (formatting moves them).
fn meaning(text: &str) -> (Vec<&'static str>, Vec<String>) {
    let mut workspace = Workspace::new(signatures());
    workspace.set_file("fuzz.harness", text);
    let mut codes: Vec<&'static str> = workspace
        .diagnostics()
        .iter()
        .map(|d| d.code.as_str())
        .collect();
    codes.sort_unstable();
    let mut modules = workspace.modules();
    modules.sort();
    let programs = modules
        .iter()
        .map(|(module, _)| match workspace.program(module) {
            Ok(program) => without_spans(&format!("{program:?}")),
            Err(_) => "does not check".to_owned(),
        })
        .collect();
    (codes, programs)
}

/// A `Debug` rendering of IR with every `SrcSpan { .. }` replaced by `_`.
fn without_spans(debug: &str) -> String {
    let mut out = String::with_capacity(debug.len());
    let mut rest = debug;
    while let Some(at) = rest.find("SrcSpan {") {
        out.push_str(&rest[..at]);
        out.push('_');
        rest = &rest[at..];
        rest = rest.find('}').map_or("", |end| &rest[end + 1..]);
    }
    out.push_str(rest);
    out
}

/// `fmt` never changes meaning and is idempotent: on any text it formats, formatting the output
/// again gives the same text, the formatter's own safety net never has to refuse, and the
/// checker reports the same diagnostic codes and lowers the same IR for both.
pub fn fmt(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    match format(&text) {
        Ok(formatted) => {
            assert_eq!(
                format(&formatted).as_deref(),
                Ok(formatted.as_str()),
                "not idempotent"
            );
            let (before, after) = (meaning(&text), meaning(&formatted));
            assert_eq!(before.0, after.0, "formatting changed the diagnostics");
            assert!(before.1 == after.1, "formatting changed the lowered IR");
        }
        Err(FormatError::Syntax(_)) => {}
        Err(error @ FormatError::Unstable(_)) => panic!("{error}"),
    }
}
