//! `harness fmt [--check] PATH...`: rewrites `.harness` files in the canonical layout, or checks
//! that they already are (printing what would change as a diff); `harness fmt -` formats
//! standard input to standard output, for editors that pipe a buffer through a formatter.
//!
//! The formatting itself is [`harness_grammar::format::format`]; this module finds the files,
//! reads and writes them, and reports. A file is replaced atomically (written to a temporary
//! file next to it, then renamed over it), so an interrupted run never leaves half a file.
//! Files with syntax errors are left untouched and their errors reported as
//! `file:line:col: message`.

use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use harness_grammar::diff::unified;
use harness_grammar::format::{FormatError, format, line_col};

/// Formats the `.harness` files named by `paths`: files as given, directories searched
/// recursively for `*.harness` (symbolic links to directories are not followed). No path means
/// the current directory.
///
/// With `check`, nothing is written: for each file that would change, a unified diff from the
/// file to its formatted text is printed on standard output. The one path `-` is standard input,
/// formatted to standard output (with `check`, its diff). Problems (unreadable or non-UTF-8 files, syntax errors, failed writes) are
/// reported on standard error and the run continues with the next file.
///
/// Exits with success when every file is formatted (or, with `check`, already was), and with
/// failure (1) otherwise.
pub fn run(paths: &[PathBuf], check: bool) -> ExitCode {
    if let [path] = paths
        && path.as_os_str() == "-"
    {
        return format_stdin(check);
    }
    let default = [PathBuf::from(".")];
    let roots = if paths.is_empty() {
        &default[..]
    } else {
        paths
    };
    let mut ok = true;
    let mut files = Vec::new();
    for root in roots {
        match fs::metadata(root) {
            Ok(meta) if meta.is_dir() => ok &= collect(root, &mut files),
            Ok(_) => files.push(root.clone()),
            Err(error) => {
                eprintln!("{}: cannot read: {error}", root.display());
                ok = false;
            }
        }
    }
    let mut unformatted = false;
    for file in &files {
        match format_file(file, check) {
            Outcome::Unchanged => {}
            Outcome::Changed => unformatted |= check,
            Outcome::Failed => ok = false,
        }
    }
    if ok && !unformatted {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Formats standard input to standard output; with `check`, prints the diff instead and fails
/// when there is one.
fn format_stdin(check: bool) -> ExitCode {
    let mut text = String::new();
    if let Err(error) = io::stdin().read_to_string(&mut text) {
        eprintln!("<stdin>: cannot read: {error}");
        return ExitCode::FAILURE;
    }
    let Some(formatted) = format_text("<stdin>", &text) else {
        return ExitCode::FAILURE;
    };
    if !check {
        print!("{formatted}");
        return ExitCode::SUCCESS;
    }
    if formatted == text {
        return ExitCode::SUCCESS;
    }
    print!(
        "{}",
        unified("<stdin>", "<stdin> (formatted)", &text, &formatted, 3)
    );
    ExitCode::FAILURE
}

/// The formatted text, or `None` after reporting why `name` cannot be formatted.
fn format_text(name: &str, text: &str) -> Option<String> {
    match format(text) {
        Ok(formatted) => Some(formatted),
        Err(FormatError::Syntax(errors)) => {
            for error in errors {
                let (line, col) = line_col(text, error.span.start);
                eprintln!("{name}:{line}:{col}: {}", error.message);
            }
            None
        }
        Err(error @ FormatError::Unstable(_)) => {
            eprintln!("{name}: {error}; left unchanged");
            None
        }
    }
}

/// What happened to one file.
enum Outcome {
    /// Already formatted.
    Unchanged,
    /// Reformatted, or (with `--check`) would have been.
    Changed,
    /// Not formatted; the problem has been reported.
    Failed,
}

/// Adds the `*.harness` files under `dir` to `files`, in a stable order. Reports unreadable
/// directories and returns false if there were any.
fn collect(dir: &Path, files: &mut Vec<PathBuf>) -> bool {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) => {
            eprintln!("{}: cannot read directory: {error}", dir.display());
            return false;
        }
    };
    let mut paths: Vec<(PathBuf, fs::FileType)> = Vec::new();
    let mut ok = true;
    for entry in entries {
        match entry.and_then(|e| Ok((e.path(), e.file_type()?))) {
            Ok(found) => paths.push(found),
            Err(error) => {
                eprintln!("{}: cannot read directory: {error}", dir.display());
                ok = false;
            }
        }
    }
    paths.sort_by(|a, b| a.0.cmp(&b.0));
    for (path, kind) in paths {
        if kind.is_dir() {
            ok &= collect(&path, files);
        } else if path.extension().is_some_and(|ext| ext == "harness") {
            files.push(path);
        }
    }
    ok
}

/// Formats one file, writing it back unless `check`.
fn format_file(path: &Path, check: bool) -> Outcome {
    let bytes = match fs::read(path) {
        Ok(bytes) => bytes,
        Err(error) => {
            eprintln!("{}: cannot read: {error}", path.display());
            return Outcome::Failed;
        }
    };
    let Ok(text) = String::from_utf8(bytes) else {
        eprintln!("{}: not UTF-8 text; left unchanged", path.display());
        return Outcome::Failed;
    };
    let name = path.display().to_string();
    let Some(formatted) = format_text(&name, &text) else {
        return Outcome::Failed;
    };
    if formatted == text {
        return Outcome::Unchanged;
    }
    if check {
        print!(
            "{}",
            unified(&name, &format!("{name} (formatted)"), &text, &formatted, 3)
        );
        return Outcome::Changed;
    }
    match write_atomically(path, formatted.as_bytes()) {
        Ok(()) => Outcome::Changed,
        Err(error) => {
            eprintln!("{}: cannot write: {error}", path.display());
            Outcome::Failed
        }
    }
}

/// Replaces the contents of `path` by writing a temporary file in the same directory (so the
/// rename stays on one file system) with the original's permissions, then renaming it over
/// the original.
fn write_atomically(path: &Path, contents: &[u8]) -> io::Result<()> {
    let dir = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a file name"))?;
    let mut temp_name = std::ffi::OsString::from(".");
    temp_name.push(name);
    temp_name.push(format!(".fmt-{}.tmp", std::process::id()));
    let temp = dir.join(temp_name);
    let result = (|| {
        let mut file = fs::File::create(&temp)?;
        file.write_all(contents)?;
        file.sync_all()?;
        fs::set_permissions(&temp, fs::metadata(path)?.permissions())?;
        fs::rename(&temp, path)
    })();
    if result.is_err() {
        // The temporary file is ours; leaving it behind would litter the user's directory.
        let _ = fs::remove_file(&temp);
    }
    result
}
