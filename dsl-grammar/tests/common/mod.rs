//! Helpers shared by the integration tests: the reference (pest) parser, acceptance by both
//! parsers, and the `.harness` files of the repository.

#![allow(dead_code)] // Each test binary uses a different subset of these helpers.

use std::path::{Path, PathBuf};

use harness_grammar::SyntaxErrorKind;
use pest::Parser as _;

/// The reference grammar, compiled by pest.
#[derive(pest_derive::Parser)]
#[grammar = "harness.pest"]
pub struct Reference;

/// Whether the reference grammar accepts `text`. Runs on a thread with a large stack, because
/// pest recurses once per grammar rule and nesting level.
pub fn reference_accepts(text: &str) -> bool {
    let text = text.to_string();
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || Reference::parse(Rule::file, &text).is_ok())
        .expect("spawn the reference parser's thread")
        .join()
        .expect("the reference parser does not panic")
}

/// Whether the hand-written parser accepts `text`, or `None` when it gave up on nesting depth or
/// tree height,
/// which the reference grammar does not limit. Literals out of range are value errors that a
/// grammar cannot see, so they do not count against acceptance.
pub fn parser_accepts(text: &str) -> Option<bool> {
    let parse = harness_grammar::parse(text);
    if parse
        .errors
        .iter()
        .any(|e| matches!(e.kind, SyntaxErrorKind::TooDeep | SyntaxErrorKind::TooLong))
    {
        return None;
    }
    Some(
        parse
            .errors
            .iter()
            .all(|e| e.kind == SyntaxErrorKind::NumberOutOfRange),
    )
}

/// The repository root (the workspace directory above this crate).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every `.harness` file under the corpus, the test cases and the harness library, sorted.
pub fn harness_files() -> Vec<PathBuf> {
    let root = repo_root();
    let mut files = Vec::new();
    for dir in ["dsl-grammar/tests/corpus", "tests/cases", "harnesses"] {
        collect(&root.join(dir), &mut files);
    }
    files.sort();
    files
}

/// The files of this crate's corpus only.
pub fn corpus_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    collect(&repo_root().join("dsl-grammar/tests/corpus"), &mut files);
    files.sort();
    files
}

fn collect(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, files);
        } else if path.extension().is_some_and(|ext| ext == "harness") {
            files.push(path);
        }
    }
}

/// Every span in a serialised tree: objects with exactly the fields `start` and `end`.
pub fn spans_in(value: &serde_json::Value, out: &mut Vec<(u64, u64)>) {
    match value {
        serde_json::Value::Object(map) => {
            if map.len() == 2
                && let (Some(start), Some(end)) = (map.get("start"), map.get("end"))
                && let (Some(start), Some(end)) = (start.as_u64(), end.as_u64())
            {
                out.push((start, end));
                return;
            }
            for child in map.values() {
                spans_in(child, out);
            }
        }
        serde_json::Value::Array(items) => {
            for child in items {
                spans_in(child, out);
            }
        }
        _ => {}
    }
}

/// Checks the invariants of a parse of any text: tokens are lossless, and every span of a
/// token, node or error lies within the text, on char boundaries.
pub fn check_invariants(text: &str) -> Result<(), String> {
    let parse = harness_grammar::parse(text);
    let mut rebuilt = String::with_capacity(text.len());
    let mut end = 0;
    for token in &parse.tokens {
        if token.span.start as usize != end {
            return Err(format!(
                "token {token:?} does not start where the previous one ended"
            ));
        }
        let piece = text
            .get(token.span.range())
            .ok_or(format!("token {token:?} off boundary"))?;
        rebuilt.push_str(piece);
        end = token.span.end as usize;
    }
    if rebuilt != text {
        return Err("tokens do not reproduce the text".to_string());
    }
    let tree = serde_json::to_value(&parse.file).map_err(|e| e.to_string())?;
    let mut spans = Vec::new();
    spans_in(&tree, &mut spans);
    spans.extend(
        parse
            .errors
            .iter()
            .map(|e| (u64::from(e.span.start), u64::from(e.span.end))),
    );
    for (start, end) in spans {
        let (start, end) = (start as usize, end as usize);
        if start > end || text.get(start..end).is_none() {
            return Err(format!("span {start}..{end} is not a slice of the text"));
        }
    }
    Ok(())
}
