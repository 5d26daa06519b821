//! Signature help for the call around the cursor, and formatting of a range of lines.

use harness_grammar::Span;

use super::describe::describe;
use super::symbol_at;
use super::view::FileView;
use crate::Workspace;

/// The signature of the call around the cursor, for signature help.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignatureHelp {
    /// The signature line, as hover shows it.
    pub label: String,
    /// The byte ranges of the parameters in `label`, without a method's `self`.
    pub params: Vec<(u32, u32)>,
    /// The index in `params` of the argument the cursor is in.
    pub active: u32,
    /// The callee's documentation.
    pub docs: String,
}

/// The signature of the innermost call whose parentheses hold `offset`: a function, builtin,
/// method, action, or game query, effect or observation.
pub fn signature_help(ws: &Workspace, path: &str, offset: u32) -> Option<SignatureHelp> {
    let file = FileView::new(ws, path)?;
    let chunk = file.chunk_at(offset)?;
    let text = file.text;
    let (open, commas) = open_call(text.get(chunk.offset as usize..offset as usize)?)?;
    let open = chunk.offset as usize + open;
    let bytes = text.as_bytes();
    let mut start = open;
    while start > 0 && (bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_') {
        start -= 1;
    }
    if start == open {
        return None;
    }
    let (symbol, _) = symbol_at(ws, path, start as u32)?;
    let (label, docs) = describe(ws, &chunk, &symbol, None);
    let mut params = param_ranges(&label);
    let is_method = start > 0 && bytes[start - 1] == b'.';
    if is_method
        && params
            .first()
            .is_some_and(|&(s, _)| label[s as usize..].starts_with("self"))
    {
        params.remove(0);
    }
    Some(SignatureHelp {
        label,
        params,
        active: commas,
        docs,
    })
}

/// In the text of a chunk up to the cursor, the offset of the innermost `(` still open and the
/// number of commas at its level after it. Strings and comments are skipped.
pub(super) fn open_call(text: &str) -> Option<(usize, u32)> {
    // Each open bracket with its commas so far.
    let mut open: Vec<(u8, usize, u32)> = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            c @ (b'(' | b'[' | b'{') => open.push((c, i, 0)),
            b')' | b']' | b'}' => {
                open.pop();
            }
            b',' => {
                if let Some(top) = open.last_mut() {
                    top.2 += 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    open.iter()
        .rev()
        .find(|(c, _, _)| *c == b'(')
        .map(|&(_, at, commas)| (at, commas))
}

/// The byte ranges of the parameters of a signature line: the comma-separated parts of its
/// first parenthesised list, each trimmed.
pub(super) fn param_ranges(label: &str) -> Vec<(u32, u32)> {
    let Some(open) = label.find('(') else {
        return Vec::new();
    };
    let bytes = label.as_bytes();
    let mut out = Vec::new();
    let mut depth = 0;
    let mut start = open + 1;
    let push = |from: usize, to: usize, out: &mut Vec<(u32, u32)>| {
        let part = &label[from..to];
        let trimmed = part.trim();
        if !trimmed.is_empty() {
            let lead = part.len() - part.trim_start().len();
            out.push(((from + lead) as u32, (from + lead + trimmed.len()) as u32));
        }
    };
    for i in open + 1..bytes.len() {
        match bytes[i] {
            b'(' | b'[' | b'{' | b'<' => depth += 1,
            // The `>` of `->` closes nothing.
            b'>' if i > 0 && bytes[i - 1] == b'-' => {}
            b')' | b']' | b'}' | b'>' if depth > 0 => depth -= 1,
            b')' => {
                push(start, i, &mut out);
                return out;
            }
            b',' if depth == 0 => {
                push(start, i, &mut out);
                start = i + 1;
            }
            _ => {}
        }
    }
    out
}

/// The edits that format the lines of `range` (byte offsets in `text`): the hunks of the whole
/// file's formatting that touch those lines, each as a replacement of whole lines. The text
/// outside them is left as it is; an error when the file does not parse.
pub fn format_range(text: &str, range: Span) -> Result<Vec<(Span, String)>, String> {
    let formatted = harness_grammar::format::format(text).map_err(|e| e.to_string())?;
    let starts = line_starts(text);
    let new_starts = line_starts(&formatted);
    let line_of = |offset: u32| starts.partition_point(|&s| s <= offset).saturating_sub(1);
    let (first, last) = (line_of(range.start), line_of(range.end.max(range.start)));
    let at =
        |starts: &[u32], len: usize, line: usize| starts.get(line).copied().unwrap_or(len as u32);
    let (old_lines, new_lines): (Vec<&str>, Vec<&str>) = (
        text.split_inclusive('\n').collect(),
        formatted.split_inclusive('\n').collect(),
    );
    Ok(harness_grammar::diff::line_hunks(text, &formatted)
        .into_iter()
        // A hunk that rewrites as many lines as it replaces is taken line by line, so that
        // adjacent lines outside the range stay as they are.
        .flat_map(|h| {
            if h.old.len() == h.new.len() {
                h.old
                    .clone()
                    .zip(h.new.clone())
                    .filter(|&(i, j)| old_lines[i] != new_lines[j])
                    .map(|(i, j)| harness_grammar::diff::Hunk {
                        old: i..i + 1,
                        new: j..j + 1,
                    })
                    .collect()
            } else {
                vec![h]
            }
        })
        // A hunk touches the range when its old lines overlap it, or, for an insertion, when it
        // falls inside it.
        .filter(|h| {
            h.old.start <= last && (h.old.end > first || (h.old.is_empty() && h.old.start >= first))
        })
        .map(|h| {
            let span = Span {
                start: at(&starts, text.len(), h.old.start),
                end: at(&starts, text.len(), h.old.end),
            };
            let new = &formatted[at(&new_starts, formatted.len(), h.new.start) as usize
                ..at(&new_starts, formatted.len(), h.new.end) as usize];
            (span, new.to_owned())
        })
        .collect())
}

/// The offset of the start of every line of a text.
pub(super) fn line_starts(text: &str) -> Vec<u32> {
    std::iter::once(0)
        .chain(
            text.match_indices('\n')
                .map(|(i, _)| i as u32 + 1)
                .filter(|&s| (s as usize) < text.len()),
        )
        .collect()
}
