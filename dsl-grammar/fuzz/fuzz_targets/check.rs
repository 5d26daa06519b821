//! The checker never panics, never overflows its stack and never reports an internal error, on
//! any text, alone or edited (the incremental path re-checks after a change).

#![no_main]

use harness_compiler::Workspace;
use harness_compiler::codes::Code;
use harness_compiler::signatures::SignatureSet;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut workspace = Workspace::new(SignatureSet::default());
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
    assert!(!second.iter().any(|d| d.code == Code::Internal), "{second:?}");
});
