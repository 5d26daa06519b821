//! Splits a file's text into chunks, one per item or layer member, without parsing it.
//!
//! Incremental checking rests on this: each chunk is parsed and checked by its own query, keyed on
//! the chunk's text, so an edit inside one member leaves every other chunk's text (and therefore
//! every other chunk's query) untouched. The splitter only understands what it must to find
//! boundaries: strings, comments, brace depth, and the keywords that start an item (at depth 0)
//! or a layer member (at depth 1 of a layer). Everything else, including malformed text, is left
//! for the parser to judge.

/// What a chunk holds, which decides how it is parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ChunkKind {
    /// The `harness a.b` header.
    Header,
    /// A top-level item other than a layer, or unrecognised text at the top level.
    Item,
    /// A layer's header, from `layer` up to and including its `{`.
    LayerHeader,
    /// One member of the most recent layer, or unrecognised text inside it.
    Member,
}

/// One chunk: what it holds and where it lies in the file. The text stays in the file: a
/// re-check after an edit splits the whole file again, and copying out every chunk's text would
/// be most of that work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawChunk {
    /// How to parse it.
    pub kind: ChunkKind,
    /// Byte offset of its first byte in the file.
    pub offset: u32,
    /// Byte offset one past its last byte in the file.
    pub end: u32,
}

impl RawChunk {
    /// The chunk's text in the file it was split from.
    pub fn text(self, file: &str) -> &str {
        &file[self.offset as usize..self.end as usize]
    }
}

/// Which bytes continue a word (ASCII letters, digits and `_`), as a table: the splitter walks
/// every byte of every word of the file, and one load per byte is cheaper than the comparisons.
const WORD: [bool; 256] = {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 256 {
        table[byte] = (byte as u8).is_ascii_alphanumeric() || byte == b'_' as usize;
        byte += 1;
    }
    table
};

/// True for a word that starts an item at the top level. A `match`, not a search of a list: the
/// splitter asks for every word of the file, and a re-check after an edit splits it all again.
fn starts_item(word: &str) -> bool {
    matches!(
        word,
        "harness" | "use" | "type" | "enum" | "const" | "config" | "fn" | "error" | "layer" | "llm"
    )
}

/// True for a word that starts a member inside a layer.
fn starts_member(word: &str) -> bool {
    matches!(
        word,
        "state"
            | "tunable"
            | "computed"
            | "fn"
            | "action"
            | "model"
            | "on"
            | "decide"
            | "revise"
            | "machine"
    )
}

/// A file split into chunks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Split {
    /// The chunks in source order.
    pub chunks: Vec<RawChunk>,
    /// True when the text ends inside a layer: its closing `}` is missing. The members' own
    /// parses cannot see that, so the file's diagnostics report it.
    pub unclosed_layer: bool,
}

/// Splits `text` into chunks in source order. Chunks that hold only whitespace and comments are
/// dropped; every other byte belongs to exactly one chunk, except the `}` closing a layer.
pub fn split(text: &str) -> Split {
    let bytes = text.as_bytes();
    let mut boundaries: Vec<(usize, ChunkKind)> = Vec::new();
    // Closing braces of layers: a member chunk ends there rather than at the next boundary.
    let mut layer_ends: Vec<usize> = Vec::new();
    let mut depth = 0usize;
    let mut in_layer = false;
    let mut awaiting_layer_brace = false;
    let mut doc_start: Option<usize> = None;
    // True right after a `.` token: a keyword-like word there is a field or method name.
    let mut after_dot = false;
    // A byte-order mark that some editors write is trivia, as the lexer treats it; left here it
    // would start a chunk of its own before the header.
    let mut i = if text.starts_with('\u{feff}') {
        '\u{feff}'.len_utf8()
    } else {
        0
    };
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if bytes[i..].starts_with(b"//") {
            let end = bytes[i..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(bytes.len(), |n| i + n);
            if bytes[i..].starts_with(b"///") {
                doc_start.get_or_insert(i);
            } else {
                doc_start = None;
            }
            i = end;
        } else if c == b'"' {
            doc_start = None;
            after_dot = false;
            i += 1;
            while i < bytes.len() && bytes[i] != b'"' {
                i += if bytes[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
        } else if c.is_ascii_digit() {
            // A number is one token, as the lexer reads it (`1_`, `2.5e3`): the word after it
            // starts afresh, so `1_const` holds the keyword `const`.
            doc_start = None;
            after_dot = false;
            if boundaries.is_empty() {
                boundaries.push((i, ChunkKind::Item));
            }
            i = number_end(bytes, i);
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            i += bytes[i..]
                .iter()
                .position(|&b| !WORD[b as usize])
                .unwrap_or(bytes.len() - i);
            let word = &text[start..i];
            let chunk_start = doc_start.take().unwrap_or(start);
            if std::mem::take(&mut after_dot) {
                continue;
            }
            if depth == 0 && starts_item(word) {
                let kind = match word {
                    "harness" => ChunkKind::Header,
                    "layer" => ChunkKind::LayerHeader,
                    _ => ChunkKind::Item,
                };
                in_layer = false;
                awaiting_layer_brace = kind == ChunkKind::LayerHeader;
                boundaries.push((chunk_start, kind));
            } else if depth == 1 && in_layer && starts_member(word) {
                boundaries.push((chunk_start, ChunkKind::Member));
            } else if boundaries.is_empty() {
                // Unrecognised text before the first item: a chunk of its own, for the parser
                // to report.
                boundaries.push((chunk_start, ChunkKind::Item));
            }
        } else {
            doc_start = None;
            after_dot = c == b'.';
            match c {
                b'{' => {
                    if depth == 0 && awaiting_layer_brace {
                        awaiting_layer_brace = false;
                        in_layer = true;
                        // The header chunk ends after this brace; members start after it.
                        boundaries.push((i + 1, ChunkKind::Member));
                    }
                    depth += 1;
                }
                b'}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 && in_layer {
                        in_layer = false;
                        layer_ends.push(i);
                        // Whatever follows the layer until the next item is a chunk of its own.
                        boundaries.push((i + 1, ChunkKind::Item));
                    }
                }
                _ => {
                    if boundaries.is_empty() {
                        boundaries.push((i, ChunkKind::Item));
                    }
                }
            }
            i += 1;
        }
    }

    let mut chunks = Vec::new();
    // Both lists are in text order, so the first layer end at or after a chunk's start is found
    // by moving one cursor along, not by searching from the first layer each time.
    let mut next_end = 0;
    for (index, &(start, kind)) in boundaries.iter().enumerate() {
        let mut end = boundaries
            .get(index + 1)
            .map_or(text.len(), |&(next, _)| next);
        while layer_ends.get(next_end).is_some_and(|&close| close < start) {
            next_end += 1;
        }
        if kind == ChunkKind::Member
            && let Some(&close) = layer_ends.get(next_end)
            && close < end
        {
            end = close;
        }
        let start = start.min(end);
        let piece = &text[start..end];
        if is_trivia(piece) {
            continue;
        }
        chunks.push(RawChunk {
            kind,
            offset: start as u32,
            end: end as u32,
        });
    }
    Split {
        chunks,
        unclosed_layer: in_layer,
    }
}

/// The end of the number starting at `i`, by the lexer's rules: `[0-9][0-9_]*`, then an
/// optional fraction `.[0-9][0-9_]*` and an optional exponent `[eE][+-]?[0-9]+`.
fn number_end(bytes: &[u8], mut i: usize) -> usize {
    let digits = |bytes: &[u8], mut i: usize| {
        while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == b'_') {
            i += 1;
        }
        i
    };
    i = digits(bytes, i);
    if bytes.get(i) == Some(&b'.') && bytes.get(i + 1).is_some_and(u8::is_ascii_digit) {
        i = digits(bytes, i + 1);
    }
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        let sign = usize::from(matches!(bytes.get(i + 1), Some(b'+' | b'-')));
        if bytes.get(i + 1 + sign).is_some_and(u8::is_ascii_digit) {
            i += 1 + sign;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
        }
    }
    i
}

/// True when the text holds only whitespace and comments.
fn is_trivia(text: &str) -> bool {
    text.lines().all(|line| {
        let line = line.trim();
        line.is_empty() || line.starts_with("//")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_items_and_members() {
        let text = "harness a.b\nconst N: Int = 1\n/// Docs.\nlayer l needs k {\n  state { n: Int = 0 }\n  computed c: Int = if n > 0 { 1 } else { 2 }\n}\nfn f() -> Int = 1\n";
        let chunks = split(text).chunks;
        let kinds: Vec<_> = chunks.iter().map(|c| c.kind).collect();
        assert_eq!(
            kinds,
            [
                ChunkKind::Header,
                ChunkKind::Item,
                ChunkKind::LayerHeader,
                ChunkKind::Member,
                ChunkKind::Member,
                ChunkKind::Item
            ]
        );
        assert!(chunks[2].text(text).starts_with("/// Docs.\nlayer"));
        assert!(chunks[2].text(text).trim_end().ends_with('{'));
        assert!(chunks[4].text(text).trim_end().ends_with("{ 2 }"));
    }

    #[test]
    fn keeps_garbage_in_a_chunk() {
        let chunks = split("\u{1}\u{2} garbage const N: Int = 1").chunks;
        assert_eq!(chunks.len(), 2);
        assert_eq!(chunks[0].kind, ChunkKind::Item);
    }

    #[test]
    fn notices_a_layer_left_open() {
        assert!(split("layer l {\n  state { n: Int = 0 }\n").unclosed_layer);
        assert!(!split("layer l {\n  state { n: Int = 0 }\n}\n").unclosed_layer);
        assert!(!split("const S: String = \"layer l {\"\n").unclosed_layer);
    }

    #[test]
    fn a_byte_order_mark_starts_no_chunk() {
        let chunks = split("\u{feff}harness a\nconst N: Int = 1\n").chunks;
        let kinds: Vec<_> = chunks.iter().map(|c| c.kind).collect();
        assert_eq!(kinds, [ChunkKind::Header, ChunkKind::Item]);
        assert_eq!(chunks[0].offset, 3);
    }

    /// Found by the fmt fuzz target: `1_const` is the number `1_` and the keyword `const`, so
    /// the second item starts its own chunk, as the whole-file parser (and so `fmt`) sees it.
    #[test]
    fn a_keyword_right_after_a_number_starts_a_chunk() {
        for text in [
            "const A: Int = 1_const B: Int = 2",
            "const A: Float = 1e3const B: Int = 2",
        ] {
            let kinds: Vec<_> = split(text).chunks.iter().map(|c| c.kind).collect();
            assert_eq!(kinds, [ChunkKind::Item, ChunkKind::Item], "{text}");
        }
        let one: Vec<_> = split("const A: Int = 1 + x_const").chunks;
        assert_eq!(one.len(), 1);
    }
}
