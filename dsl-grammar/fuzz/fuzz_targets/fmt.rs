//! `fmt` never changes meaning and is idempotent: on any text it formats, formatting the output
//! again gives the same text, the output parses to the same tree (the formatter's own safety net
//! must never have to refuse), and the checker reports the same diagnostic codes for both.

#![no_main]

use harness_compiler::Workspace;
use harness_compiler::signatures::SignatureSet;
use harness_grammar::format::{FormatError, format};
use libfuzzer_sys::fuzz_target;

/// The codes the checker reports for a text, sorted.
fn codes(text: &str) -> Vec<&'static str> {
    let mut workspace = Workspace::new(SignatureSet::default());
    workspace.set_file("fuzz.harness", text);
    let mut codes: Vec<&'static str> =
        workspace.diagnostics().iter().map(|d| d.code.as_str()).collect();
    codes.sort_unstable();
    codes
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    match format(&text) {
        Ok(formatted) => {
            assert_eq!(format(&formatted).as_deref(), Ok(formatted.as_str()), "not idempotent");
            assert_eq!(codes(&text), codes(&formatted), "formatting changed the diagnostics");
        }
        Err(FormatError::Syntax(_)) => {}
        Err(error @ FormatError::Unstable(_)) => panic!("{error}"),
    }
});
