//! `harness check` and `harness explain`.

use std::path::PathBuf;
use std::process::ExitCode;

use harness_compiler::Workspace;
use harness_compiler::codes::Code;
use harness_compiler::protocol::Protocol;
use harness_runtime::ErrorCode as RuntimeCode;

use crate::Format;
use crate::render;

/// Parses the value of `--protocol`.
pub fn parse_protocol(name: &str) -> Result<Protocol, String> {
    Protocol::parse(name).ok_or_else(|| {
        let known: Vec<&str> = Protocol::ALL.iter().map(|p| p.name()).collect();
        format!("unknown protocol `{name}`; known: {}", known.join(", "))
    })
}

/// Loads the files, checks them (and, with a protocol, checks it too) and prints the
/// diagnostics. With `quiet`, only errors are printed (in either format), without the summary
/// line.
pub fn run(paths: &[PathBuf], format: Format, quiet: bool, protocol: Option<Protocol>) -> ExitCode {
    let mut files = Vec::new();
    let mut problems = Vec::new();
    for path in paths {
        harness::load::collect(path, &mut files, &mut problems);
    }
    files.sort();
    files.dedup();
    let mut workspace = Workspace::new(harness::games::Registry::standard().signatures());
    for file in &files {
        match std::fs::read(file) {
            // Invalid UTF-8 is replaced rather than refused, so the parser can report where it is.
            Ok(bytes) => workspace.set_file(
                &file.display().to_string(),
                &String::from_utf8_lossy(&bytes),
            ),
            Err(error) => problems.push(format!("cannot read {}: {error}", file.display())),
        }
    }
    for problem in &problems {
        eprintln!("error: {problem}");
    }
    let mut diagnostics = workspace.diagnostics();
    if let Some(protocol) = protocol {
        diagnostics.extend(workspace.protocol_diagnostics(protocol));
    }
    let shown: Vec<_> = if quiet {
        diagnostics
            .iter()
            .filter(|d| d.is_error())
            .cloned()
            .collect()
    } else {
        diagnostics.clone()
    };
    match format {
        Format::Human if quiet => render::diagnostics(&shown),
        Format::Human => render::human(&shown, files.len()),
        Format::Json => println!("{}", render::json(&shown)),
    }
    // The process ends here: freeing every memo table one by one would only delay the exit.
    std::mem::forget(workspace);
    if problems.is_empty() && !diagnostics.iter().any(|d| d.is_error()) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Prints a code's explanation page, or the list of codes.
pub fn explain(code: Option<&str>, list: bool) -> ExitCode {
    if list {
        for code in Code::ALL {
            let info = code.info();
            println!("{}  {}", info.code, info.title);
        }
        for code in RuntimeCode::ALL {
            println!("{}  {}", code.code(), code.explanation().0);
        }
        return ExitCode::SUCCESS;
    }
    let text = code.unwrap_or_default();
    if let Some(code) = RuntimeCode::from_code(&text.trim().to_ascii_uppercase()) {
        print!("{}", runtime_page(code));
        return ExitCode::SUCCESS;
    }
    match Code::parse(text) {
        Some(code) => {
            print!("{}", code.info().page());
            ExitCode::SUCCESS
        }
        None => {
            eprintln!(
                "error: `{text}` is not a diagnostic code; `harness explain --list` lists them"
            );
            ExitCode::FAILURE
        }
    }
}

/// The explanation page of a runtime error code: its title, when it happens and what to do.
fn runtime_page(code: RuntimeCode) -> String {
    let (title, text) = code.explanation();
    format!(
        "{}: {title} (a runtime error, reported by `harness run` and `harness ablate` and \
         recorded in traces)\n\n{text}\n",
        code.code()
    )
}
