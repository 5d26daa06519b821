//! A seeded generator of single-fault mutants of a harness, the test corpus of the repairer.
//!
//! Each mutant is its parent with one fault of one kind, at a site drawn from the seeded
//! stream `mutate` of [`harness_runtime::RngStreams`], so a seed fixes the whole corpus. The
//! kinds are the slips a generator or a person makes: a misspelt name, method or variant, a
//! default outside its range, a dropped `needs`, role or gate, a misspelt role, and a dropped
//! fallback rule (which only the smoke episode catches).

use harness_grammar::ast::{Item, Member};
use harness_grammar::lexer::{TokenKind, lex};
use harness_runtime::{RngStreams, Stream};

use crate::load::Sources;

/// The kinds of fault.
pub const KINDS: [&str; 9] = [
    "typo-name",
    "typo-method",
    "typo-variant",
    "range",
    "drop-needs",
    "drop-role",
    "typo-role",
    "drop-gate",
    "drop-fallback",
];

/// One mutant: its parent's name, the fault and the mutated sources.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mutant {
    /// The parent harness, by [`Sources::name`].
    pub parent: String,
    /// The kind of fault, one of [`KINDS`].
    pub kind: &'static str,
    /// What was changed, in words.
    pub what: String,
    /// The mutated harness.
    pub sources: Sources,
}

/// A one-site change: the byte range replaced and the replacement.
type Change = (usize, usize, String, String);

/// Up to `count` distinct single-fault mutants of the parents, drawn with `seed`: the parents
/// in turn, a kind and a site for each. Kinds without a site in a parent are skipped, so the
/// count is an upper bound; the attempts are bounded too.
pub fn mutants(parents: &[Sources], seed: u64, count: usize) -> Vec<Mutant> {
    let mut stream = RngStreams::new(seed).stream("mutate");
    let mut out: Vec<Mutant> = Vec::new();
    if parents.is_empty() {
        return out;
    }
    for attempt in 0..count * 8 {
        if out.len() == count {
            break;
        }
        let parent = &parents[attempt % parents.len()];
        let kind = KINDS[stream.below(KINDS.len() as u64) as usize];
        let Some(mutant) = one(parent, kind, &mut stream) else {
            continue;
        };
        if !out.iter().any(|m| m.sources == mutant.sources) {
            out.push(mutant);
        }
    }
    out
}

/// One mutant of `parent` of `kind`, at a site drawn from `stream`; `None` when the parent has
/// no site for the kind.
pub fn one(parent: &Sources, kind: &'static str, stream: &mut Stream) -> Option<Mutant> {
    let file = stream.below(parent.files.len() as u64) as usize;
    let (path, text) = &parent.files[file];
    let sites = sites(text, kind, stream);
    if sites.is_empty() {
        return None;
    }
    let (start, end, replacement, what) = sites[stream.below(sites.len() as u64) as usize].clone();
    let mut files = parent.files.clone();
    files[file].1.replace_range(start..end, &replacement);
    Some(Mutant {
        parent: parent.name.clone(),
        kind,
        what: format!("{path}: {what}"),
        sources: Sources {
            name: format!("{}~{kind}", parent.name),
            files,
        },
    })
}

/// A misspelling of `word` one edit away (a letter inserted, removed or replaced, never the
/// first), so that a "did you mean" can find the word again.
fn misspell(word: &str, stream: &mut Stream) -> String {
    let mut chars: Vec<char> = word.chars().collect();
    if chars.len() < 2 {
        chars.push('x');
        return chars.into_iter().collect();
    }
    let at = 1 + stream.below(chars.len() as u64 - 1) as usize;
    let letter = char::from(b'a' + stream.below(26) as u8);
    match stream.below(3) {
        0 => chars.insert(at, letter),
        1 if chars.len() > 3 => {
            chars.remove(at);
        }
        _ => {
            chars[at] = if chars[at] == letter { '_' } else { letter };
        }
    }
    chars.into_iter().collect()
}

fn sites(text: &str, kind: &str, stream: &mut Stream) -> Vec<Change> {
    let tokens = lex(text);
    let word = |i: usize| &text[tokens[i].span.start as usize..tokens[i].span.end as usize];
    let ident = |i: usize| tokens.get(i).is_some_and(|t| t.kind == TokenKind::Ident);
    let kind_at = |i: usize| tokens.get(i).map(|t| t.kind);
    let mut typo = |i: usize, what: &str| -> Change {
        let w = word(i);
        (
            tokens[i].span.start as usize,
            tokens[i].span.end as usize,
            misspell(w, stream),
            format!("{what} `{w}` misspelt"),
        )
    };
    let items = harness_grammar::parse(text).file.items;
    let layers: Vec<_> = items
        .iter()
        .filter_map(|item| match item {
            Item::Layer(layer) => Some(layer),
            _ => None,
        })
        .collect();
    let mut out = Vec::new();
    match kind {
        "typo-name" => {
            // A name read in an expression: an identifier after an operator, `(`, `,`, `=` or
            // `[`, and not followed by `(` (a call) or `:` (a declaration).
            for i in 1..tokens.len() {
                let before = kind_at(i - 1);
                if ident(i)
                    && word(i).len() >= 4
                    && matches!(
                        before,
                        Some(
                            TokenKind::Plus
                                | TokenKind::Minus
                                | TokenKind::Star
                                | TokenKind::Slash
                                | TokenKind::LParen
                                | TokenKind::LBracket
                                | TokenKind::Comma
                                | TokenKind::Eq
                                | TokenKind::Lt
                                | TokenKind::Gt
                        )
                    )
                    && !matches!(kind_at(i + 1), Some(TokenKind::LParen | TokenKind::Colon))
                    && !word(i).starts_with(char::is_uppercase)
                {
                    out.push(typo(i, "name"));
                }
            }
        }
        "typo-method" => {
            for i in 1..tokens.len() {
                if ident(i)
                    && kind_at(i - 1) == Some(TokenKind::Dot)
                    && kind_at(i + 1) == Some(TokenKind::LParen)
                    && i >= 2
                    && kind_at(i - 2) != Some(TokenKind::KwGame)
                    && word(i).len() >= 3
                {
                    out.push(typo(i, "method"));
                }
            }
        }
        "typo-variant" => {
            for i in 2..tokens.len() {
                if ident(i)
                    && kind_at(i - 1) == Some(TokenKind::Dot)
                    && ident(i - 2)
                    && word(i - 2).starts_with(char::is_uppercase)
                    && word(i).len() >= 3
                {
                    out.push(typo(i, "variant"));
                }
            }
        }
        "range" => {
            for layer in &layers {
                for member in &layer.members {
                    if let Member::Tunable(param) = member
                        && let Some(range) = &param.range
                    {
                        let hi = &text[range.hi.span.start as usize..range.hi.span.end as usize];
                        let beyond = match hi.replace('_', "").parse::<i64>() {
                            Ok(v) => (v + 3).to_string(),
                            Err(_) => match hi.parse::<f64>() {
                                Ok(v) => format!("{:?}", v + 1.0),
                                Err(_) => continue,
                            },
                        };
                        out.push((
                            param.default.span.start as usize,
                            param.default.span.end as usize,
                            beyond,
                            format!("the default of `{}` moved past its range", param.name.name),
                        ));
                    }
                }
            }
        }
        "drop-needs" => {
            for layer in &layers {
                if let Some(last) = layer.needs.last() {
                    // From the end of what precedes `needs` to the end of the last need.
                    let before = layer.role.as_ref().unwrap_or(&layer.name).span.end as usize;
                    out.push((
                        before,
                        last.span.end as usize,
                        String::new(),
                        format!("the needs of `{}` dropped", layer.name.name),
                    ));
                }
            }
        }
        "drop-role" => {
            for layer in &layers {
                if let Some(role) = &layer.role {
                    out.push((
                        layer.name.span.end as usize,
                        role.span.end as usize,
                        String::new(),
                        format!("the role of `{}` dropped", layer.name.name),
                    ));
                }
            }
        }
        "typo-role" => {
            for layer in &layers {
                if let Some(role) = &layer.role {
                    out.push((
                        role.span.start as usize,
                        role.span.end as usize,
                        misspell(&role.name, stream),
                        format!("the role of `{}` misspelt", layer.name.name),
                    ));
                }
            }
        }
        "drop-gate" => {
            for layer in &layers {
                for member in &layer.members {
                    if let Member::Action(action) = member
                        && let Some(cond) = &action.available
                    {
                        let written = &text[cond.span.start as usize..cond.span.end as usize];
                        if !written.contains(" in exposed") {
                            continue;
                        }
                        // The whole clause when the gate is all of it, else the gate's conjunct.
                        let (start, end) = match written.find(" and ") {
                            Some(at) if written[..at].contains(" in exposed") => (
                                cond.span.start as usize,
                                cond.span.start as usize + at + " and ".len(),
                            ),
                            _ => {
                                let clause = text[..cond.span.start as usize]
                                    .rfind(" available when")
                                    .unwrap_or(cond.span.start as usize);
                                (clause, cond.span.end as usize)
                            }
                        };
                        out.push((
                            start,
                            end,
                            String::new(),
                            format!("the gate of `{}` dropped", action.name.name),
                        ));
                    }
                }
            }
        }
        "drop-fallback" => {
            for layer in &layers {
                for member in &layer.members {
                    if let Member::Decide(decide) = member
                        && decide.rules.len() > 1
                        && let Some(last) = decide.rules.last()
                    {
                        let start = text[..last.span.start as usize]
                            .rfind('\n')
                            .unwrap_or(last.span.start as usize);
                        out.push((
                            start,
                            last.span.end as usize,
                            String::new(),
                            format!("the last decide rule of `{}` dropped", layer.name.name),
                        ));
                    }
                }
            }
        }
        _ => {}
    }
    out
}
