//! The API key: a secret that never prints, and the scrubbing that keeps it out of every artifact.
//!
//! A server that echoes the key may do so raw, JSON-escaped (`\u002d`, `\/`), URL-encoded
//! (`%2D`), or inside base64 (a Basic `Authorization` header quoted back in an error). Scrubbing
//! looks for the key in all of these encodings, and in combinations of them (an escaped string
//! inside another JSON string), so nothing that leaves the transport carries it.

use std::fmt;

use serde::{Serialize, Serializer};

/// The text that stands in for a secret wherever one would be printed.
pub const REDACTED: &str = "<redacted>";

/// Keys shorter than this are scrubbed in their raw form only: the base64 fragment of a very
/// short key is a few common characters, and replacing those would mangle unrelated text.
const MIN_ENCODED_SCRUB_CHARS: usize = 6;

/// An API key. Its `Debug`, `Display` and `Serialize` all print `<redacted>`.
///
/// The only way to read the secret is [`ApiKey::expose_secret`], which the HTTP transport calls
/// to build the `Authorization` header, so a key cannot reach a trace or a message by accident.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a secret.
    pub fn new(secret: impl Into<String>) -> Self {
        ApiKey(secret.into())
    }

    /// The secret itself, for the `Authorization` header.
    pub fn expose_secret(&self) -> &str {
        &self.0
    }

    /// Replaces every occurrence of the secret in `text`, in any of the encodings a server or a
    /// client library may give it, with [`REDACTED`].
    ///
    /// Servers sometimes echo the key in an error body, and URLs or IO errors may quote what
    /// they were given, so every string that leaves the transport passes through here.
    pub fn scrub(&self, text: &str) -> String {
        if self.0.is_empty() {
            return text.to_owned();
        }
        let mut out = text.replace(&self.0, REDACTED);
        if self.0.chars().count() < MIN_ENCODED_SCRUB_CHARS {
            return out;
        }
        for needle in std::iter::once(self.0.clone()).chain(base64_fragments(self.0.as_bytes())) {
            out = replace_encoded(&out, &needle);
        }
        out
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ApiKey({REDACTED})")
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

impl Serialize for ApiKey {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(REDACTED)
    }
}

const STANDARD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URL_SAFE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// The parts of the base64 encodings of `secret` that any base64 text containing it shares.
///
/// Base64 packs three bytes into four characters, so the characters that encode the secret
/// depend on where in the encoded text it starts. For each of the three alignments, and for the
/// standard and URL-safe alphabets, the characters made only of the secret's bits are the same
/// wherever the secret sits; those fragments are what scrubbing looks for. At most the bits of
/// one character at each end (part of the first and last byte) stay.
fn base64_fragments(secret: &[u8]) -> Vec<String> {
    let mut fragments = Vec::new();
    for alphabet in [STANDARD, URL_SAFE] {
        for offset in 0..3usize {
            let mut bytes = vec![0u8; offset];
            bytes.extend_from_slice(secret);
            let encoded = encode_base64(&bytes, alphabet);
            let first = (8 * offset).div_ceil(6);
            let last = 8 * (offset + secret.len()) / 6;
            if last > first && last - first >= MIN_ENCODED_SCRUB_CHARS {
                let fragment = encoded[first..last].to_owned();
                if !fragments.contains(&fragment) {
                    fragments.push(fragment);
                }
            }
        }
    }
    fragments
}

/// Base64 without padding.
fn encode_base64(bytes: &[u8], alphabet: &[u8; 64]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let chars = chunk.len() + 1;
        for i in 0..chars {
            let index = (n >> (18 - 6 * i)) & 0x3f;
            out.push(char::from(alphabet[index as usize]));
        }
    }
    out
}

/// Replaces every occurrence of `needle` in `text` in which each character is written raw,
/// JSON-escaped, URL-encoded, or escaped twice, with [`REDACTED`].
fn replace_encoded(text: &str, needle: &str) -> String {
    // The spellings of each character, computed once per needle rather than once per position.
    let table: Vec<Vec<Vec<u8>>> = needle.chars().map(encodings).collect();
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut pos = 0;
    while pos < bytes.len() {
        match match_encoded(bytes, pos, &table) {
            Some(end) => {
                out.push_str(&text[copied..pos]);
                out.push_str(REDACTED);
                copied = end;
                pos = end;
            }
            None => pos += 1,
        }
    }
    out.push_str(&text[copied..]);
    out
}

/// Where a match of the needle whose characters' spellings are `table` starting at byte `start`
/// ends, if there is one.
///
/// Each character may take any of its spellings, independently; a depth-first search over them
/// uses an explicit stack, so a long key cannot exhaust the call stack.
fn match_encoded(text: &[u8], start: usize, table: &[Vec<Vec<u8>>]) -> Option<usize> {
    if !table.first()?.iter().any(|e| text[start..].starts_with(e)) {
        return None;
    }
    // (index of the next needle character, position in the text)
    let mut stack = vec![(0usize, start)];
    while let Some((index, pos)) = stack.pop() {
        if index == table.len() {
            return Some(pos);
        }
        for encoding in &table[index] {
            if text[pos..].starts_with(encoding) {
                stack.push((index + 1, pos + encoding.len()));
            }
        }
    }
    None
}

/// The spellings of one character: raw, JSON escapes (`\u002d` in either case, `\/`, `\"`...),
/// each JSON escape escaped once more (text quoted inside another JSON string),
/// percent-encoding once or twice (`%2D`, `%2d`, `%252D`), and a `+` for a space.
fn encodings(c: char) -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = Vec::new();
    let mut push = |bytes: Vec<u8>| {
        if !out.contains(&bytes) {
            out.push(bytes);
        }
    };
    let raw = c.to_string();
    let mut once = vec![
        raw.clone(),
        json_escape(&raw, false),
        json_escape(&raw, true),
    ];
    let code = u32::from(c);
    if code <= 0xffff {
        once.push(format!("\\u{code:04x}"));
        once.push(format!("\\u{code:04X}"));
    }
    for form in &once {
        push(form.clone().into_bytes());
        push(json_escape(form, false).into_bytes());
        push(json_escape(form, true).into_bytes());
    }
    let mut utf8 = [0u8; 4];
    let encoded = c.encode_utf8(&mut utf8).as_bytes();
    for percent in ["%", "%25"] {
        for upper in [false, true] {
            let text: String = encoded
                .iter()
                .map(|b| {
                    if upper {
                        format!("{percent}{b:02X}")
                    } else {
                        format!("{percent}{b:02x}")
                    }
                })
                .collect();
            push(text.into_bytes());
        }
    }
    if c == ' ' {
        push(b"+".to_vec());
    }
    out
}

/// `text` as the inside of a JSON string literal, with `/` escaped too when `slash` is set
/// (as some encoders do).
fn json_escape(text: &str, slash: bool) -> String {
    let quoted = serde_json::to_string(text).unwrap_or_default();
    let inner = quoted
        .strip_prefix('"')
        .and_then(|q| q.strip_suffix('"'))
        .unwrap_or_default();
    if slash {
        inner.replace('/', "\\/")
    } else {
        inner.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_standard_encoding() {
        assert_eq!(encode_base64(b"user:sk-1", STANDARD), "dXNlcjpzay0x");
        assert_eq!(encode_base64(b"ab", STANDARD), "YWI");
        assert_eq!(encode_base64(&[0xfb, 0xff], URL_SAFE), "-_8");
    }
}
