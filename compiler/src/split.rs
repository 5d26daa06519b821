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
    /// What the scan found, kept so that [`resplit`] can scan only the lines an edit touched.
    scan: Scan,
}

/// The splitter's state between two tokens, less the doc comment that may be pending. At the
/// start of a line where no doc comment is pending, this state and the text from there on decide
/// everything the scan finds from there on: nothing before that point is read again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct State {
    /// The brace depth.
    depth: u32,
    /// True inside a layer's braces.
    in_layer: bool,
    /// True after `layer` at the top level, until its `{`.
    awaiting_layer_brace: bool,
    /// True right after a `.` token: a keyword-like word there is a field or method name.
    after_dot: bool,
}

/// What a scan of a text found, in text order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Scan {
    /// Where each chunk starts and what it holds; a chunk runs to the next boundary.
    boundaries: Vec<(u32, ChunkKind)>,
    /// Closing braces of layers: a member chunk ends there rather than at the next boundary.
    layer_ends: Vec<u32>,
    /// The starts of the lines where a scan can resume, each with the state there: those past
    /// the first boundary where no doc comment is pending.
    lines: Vec<(u32, State)>,
}

/// Splits `text` into chunks in source order. Chunks that hold only whitespace and comments are
/// dropped; every other byte belongs to exactly one chunk, except the `}` closing a layer.
pub fn split(text: &str) -> Split {
    let start = State {
        depth: 0,
        in_layer: false,
        awaiting_layer_brace: false,
        after_dot: false,
    };
    // A byte-order mark that some editors write is trivia, as the lexer treats it; left here it
    // would start a chunk of its own before the header.
    let from = if text.starts_with('\u{feff}') {
        '\u{feff}'.len_utf8()
    } else {
        0
    };
    let mut scan = Scan::default();
    let end = run(text, from, start, &mut scan, |_, _| false);
    finish(text, scan, end.in_layer)
}

/// Splits `text`, an edit of `old_text` whose split is `old`, into exactly the chunks of
/// [`split`]. Only the lines around the edit are scanned: the scan resumes at the last line start
/// before the first changed byte, and stops at the first line start past the last changed byte
/// where its state is the one the old scan had at the same place; the old scan's findings from
/// there on are moved by the change in length. Two comparisons of the texts (`memcmp`) find the
/// changed bytes; an editor's change ranges are not needed.
pub fn resplit(old_text: &str, old: &Split, text: &str) -> Split {
    let (before, after) = (old_text.as_bytes(), text.as_bytes());
    let prefix = common_prefix(before, after);
    // The common suffix may not overlap the common prefix in either text.
    let room = before.len().min(after.len()) - prefix;
    let suffix = common_suffix(&before[before.len() - room..], &after[after.len() - room..]);
    let lines = &old.scan.lines;
    let resume = lines.partition_point(|&(at, _)| at as usize <= prefix);
    let Some(&(from, state)) = resume.checked_sub(1).and_then(|last| lines.get(last)) else {
        return split(text);
    };
    // Whatever the old scan found before `from` it found reading only bytes before `from`,
    // which the edit left alone.
    let mut scan = Scan {
        boundaries: kept_before(&old.scan.boundaries, from, |b| b.0),
        layer_ends: kept_before(&old.scan.layer_ends, from, |&at| at),
        lines: lines[..resume].to_vec(),
    };
    let moved = |at: u32| (at as usize + after.len() - before.len()) as u32;
    let unchanged = after.len() - suffix;
    let mut synced = None;
    let end = run(text, from as usize, state, &mut scan, |at, state| {
        // In the old text, this line starts at `at` less the change in length.
        let Some(old_at) = (at >= unchanged).then(|| at + before.len() - after.len()) else {
            return false;
        };
        let found = lines
            .binary_search_by_key(&(old_at as u32), |&(at, _)| at)
            .is_ok_and(|index| lines[index].1 == state);
        if found {
            synced = Some(old_at as u32);
        }
        found
    });
    let unclosed = match synced {
        Some(old_at) => {
            let old_scan = &old.scan;
            let boundaries = old_scan.boundaries.partition_point(|b| b.0 < old_at);
            scan.boundaries.extend(
                old_scan.boundaries[boundaries..]
                    .iter()
                    .map(|&(at, kind)| (moved(at), kind)),
            );
            let ends = old_scan.layer_ends.partition_point(|&at| at < old_at);
            scan.layer_ends
                .extend(old_scan.layer_ends[ends..].iter().map(|&at| moved(at)));
            // The line at `old_at` itself was just recorded by the new scan.
            let rest = lines.partition_point(|&(at, _)| at <= old_at);
            scan.lines
                .extend(lines[rest..].iter().map(|&(at, state)| (moved(at), state)));
            old.unclosed_layer
        }
        None => end.in_layer,
    };
    finish(text, scan, unclosed)
}

/// How many bytes two texts share at their start. Blocks are compared as slices (`memcmp`)
/// and only the block that differs byte by byte: most of a large file is the same after an edit.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    const BLOCK: usize = 256;
    let len = a.len().min(b.len());
    let mut at = 0;
    while at + BLOCK <= len && a[at..at + BLOCK] == b[at..at + BLOCK] {
        at += BLOCK;
    }
    at + a[at..len]
        .iter()
        .zip(&b[at..len])
        .take_while(|(x, y)| x == y)
        .count()
}

/// How many bytes two texts share at their end, compared as [`common_prefix`] does.
fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    const BLOCK: usize = 256;
    let len = a.len().min(b.len());
    let (a, b) = (&a[a.len() - len..], &b[b.len() - len..]);
    let mut kept = 0;
    while kept + BLOCK <= len
        && a[len - kept - BLOCK..len - kept] == b[len - kept - BLOCK..len - kept]
    {
        kept += BLOCK;
    }
    kept + a[..len - kept]
        .iter()
        .rev()
        .zip(b[..len - kept].iter().rev())
        .take_while(|(x, y)| x == y)
        .count()
}

/// The elements of a list in text order that lie before `at`.
fn kept_before<T: Clone>(list: &[T], at: u32, position: impl Fn(&T) -> u32) -> Vec<T> {
    list[..list.partition_point(|item| position(item) < at)].to_vec()
}

/// Scans `text` from byte `i`, a line start where the scan was in `state` with no doc comment
/// pending (or the start of the text), appending what it finds to `scan`. At every line start
/// where a scan can resume it asks `stop`, and returns there if `stop` says so; otherwise at the
/// end of the text. Returns the state where it stopped.
fn run(
    text: &str,
    mut i: usize,
    state: State,
    scan: &mut Scan,
    mut stop: impl FnMut(usize, State) -> bool,
) -> State {
    let bytes = text.as_bytes();
    let boundaries = &mut scan.boundaries;
    let layer_ends = &mut scan.layer_ends;
    let State {
        mut depth,
        mut in_layer,
        mut awaiting_layer_brace,
        mut after_dot,
    } = state;
    let mut doc_start: Option<usize> = None;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_whitespace() {
            i += 1;
            if c == b'\n' && doc_start.is_none() && !boundaries.is_empty() {
                let state = State {
                    depth,
                    in_layer,
                    awaiting_layer_brace,
                    after_dot,
                };
                scan.lines.push((i as u32, state));
                if stop(i, state) {
                    return state;
                }
            }
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
                boundaries.push((i as u32, ChunkKind::Item));
            }
            i = number_end(bytes, i);
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            i += bytes[i..]
                .iter()
                .position(|&b| !WORD[b as usize])
                .unwrap_or(bytes.len() - i);
            let word = &text[start..i];
            let chunk_start = doc_start.take().unwrap_or(start) as u32;
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
                        boundaries.push((i as u32 + 1, ChunkKind::Member));
                    }
                    depth += 1;
                }
                b'}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 && in_layer {
                        in_layer = false;
                        layer_ends.push(i as u32);
                        // Whatever follows the layer until the next item is a chunk of its own.
                        boundaries.push((i as u32 + 1, ChunkKind::Item));
                    }
                }
                _ => {
                    if boundaries.is_empty() {
                        boundaries.push((i as u32, ChunkKind::Item));
                    }
                }
            }
            i += 1;
        }
    }
    State {
        depth,
        in_layer,
        awaiting_layer_brace,
        after_dot,
    }
}

/// The chunks of a scan of `text`.
fn finish(text: &str, scan: Scan, unclosed_layer: bool) -> Split {
    let Scan {
        boundaries,
        layer_ends,
        ..
    } = &scan;
    let mut chunks = Vec::new();
    // Both lists are in text order, so the first layer end at or after a chunk's start is found
    // by moving one cursor along, not by searching from the first layer each time.
    let mut next_end = 0;
    for (index, &(start, kind)) in boundaries.iter().enumerate() {
        let mut end = boundaries
            .get(index + 1)
            .map_or(text.len() as u32, |&(next, _)| next);
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
        let piece = &text[start as usize..end as usize];
        if is_trivia(piece) {
            continue;
        }
        chunks.push(RawChunk {
            kind,
            offset: start,
            end,
        });
    }
    Split {
        chunks,
        unclosed_layer,
        scan,
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
    // Byte by byte while the text is ASCII, which settles most chunks on their first word; the
    // line-by-line reading below, for other text, trims Unicode whitespace as well.
    let bytes = text.as_bytes();
    let mut i = 0;
    while let Some(&c) = bytes.get(i) {
        match c {
            // The ASCII characters that `char::is_whitespace` accepts.
            b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c => i += 1,
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                i += bytes[i..]
                    .iter()
                    .position(|&b| b == b'\n')
                    .unwrap_or(bytes.len() - i);
            }
            c if c.is_ascii() => return false,
            _ => break,
        }
    }
    text[i..].lines().all(|line| {
        let line = line.trim();
        line.is_empty() || line.starts_with("//")
    })
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// A corpus file with layers, doc comments, a string and comments: the teaching example.
    const CORPUS: &str = include_str!("../../harnesses/examples/search.harness");

    /// Pieces of text an edit inserts: the ones that move the splitter's state (braces, quotes,
    /// comment starts, dots, keywords, line breaks) and some that do not.
    const PIECES: &[&str] = &[
        "{",
        "}",
        "\"",
        "\\",
        // A string that holds what would otherwise open a block and a comment.
        "\"{ // }\"",
        "//",
        "///",
        "\n",
        ".",
        "layer ",
        "computed ",
        "state ",
        "fn ",
        "harness ",
        "1e",
        "1_",
        " ",
        "x",
        "\n}\n",
        "layer l {\n",
        "\u{feff}",
    ];

    /// An edit of `text`: the bytes from `at` (kept on a character boundary) to `at + cut`
    /// replaced with `insert`.
    fn edit(text: &str, at: usize, cut: usize, insert: &str) -> String {
        let mut start = at % (text.len() + 1);
        while !text.is_char_boundary(start) {
            start -= 1;
        }
        let mut end = (start + cut).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        format!("{}{insert}{}", &text[..start], &text[end..])
    }

    /// The line-by-line reading that [`is_trivia`] shortens for ASCII text.
    fn trivia_by_lines(text: &str) -> bool {
        text.lines().all(|line| {
            let line = line.trim();
            line.is_empty() || line.starts_with("//")
        })
    }

    proptest! {
        #[test]
        fn trivia_reads_as_by_lines(
            pieces in prop::collection::vec(
                prop::sample::select(vec![
                    " ", "\t", "\n", "\r", "\u{b}", "\u{c}", "\u{a0}", "\u{2003}", "/", "//",
                    "x", "é", "\u{85}",
                ]),
                0..12,
            ),
        ) {
            let text: String = pieces.concat();
            prop_assert_eq!(is_trivia(&text), trivia_by_lines(&text));
        }

        /// A re-split after any run of edits finds exactly what a split of the edited text
        /// finds: the chunks, the open layer and the scan it would resume from next time.
        #[test]
        fn resplit_is_split(
            edits in prop::collection::vec(
                (any::<usize>(), 0usize..40, prop::collection::vec(0..PIECES.len(), 0..4)),
                1..6,
            ),
        ) {
            let mut text = CORPUS.to_owned();
            let mut current = split(&text);
            for (at, cut, pieces) in edits {
                let insert: String = pieces.iter().map(|&p| PIECES[p]).collect();
                let edited = edit(&text, at, cut, &insert);
                let again = resplit(&text, &current, &edited);
                prop_assert_eq!(&again, &split(&edited));
                text = edited;
                current = again;
            }
        }
    }

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
    fn trivia_is_whitespace_and_comments_unicode_whitespace_included() {
        assert!(is_trivia(" \t\r\n\u{b}\u{c}// a\n  /// b\n"));
        assert!(is_trivia("  \u{a0}// a\n\u{2003}\n"));
        assert!(!is_trivia("  // a\n x"));
        assert!(!is_trivia("\u{a0}x"));
        assert!(!is_trivia("/ /"));
        assert!(is_trivia(""));
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
