//! `harness fmt [--check] PATH...`: rewrites `.harness` files in the canonical layout, or checks
//! that they already are (printing what would change as a diff); `harness fmt -` formats
//! standard input to standard output, for editors that pipe a buffer through a formatter.
//!
//! The formatting itself is [`harness_grammar::format::format`]; this module finds the files,
//! reads and writes them, and reports. A file is replaced atomically (written to a temporary
//! file next to it, then renamed over it), so an interrupted run never leaves half a file.
//! Files with syntax errors are left untouched and their errors reported as
//! `file:line:col: message`, or, with `--format json`, everything is reported as one JSON object
//! on standard output: an entry per file with its status, its diff (with `--check`) and its
//! syntax errors as diagnostic objects of the same schema as `harness check --format json`.

use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use harness_compiler::diagnostic::SourceText;
use harness_grammar::diff::unified;
use harness_grammar::format::{FormatError, format, line_col};
use serde_json::{Value, json};

use crate::render;

/// Where the run's messages go: printed as they come, for a person, or gathered into one JSON
/// object printed at the end.
struct Report {
    json: bool,
    /// The JSON entries, one per file or problem, in the order they happened.
    entries: Vec<Value>,
}

impl Report {
    /// A problem that is not a syntax error: an unreadable path, a failed write.
    fn problem(&mut self, name: &str, message: &str) {
        if self.json {
            self.entries
                .push(json!({"file": name, "status": "failed", "error": message}));
        } else {
            eprintln!("{name}: {message}");
        }
    }

    /// The syntax errors that keep a file from being formatted.
    fn syntax(&mut self, name: &str, text: &str, errors: &[harness_grammar::SyntaxError]) {
        if !self.json {
            for error in errors {
                let (line, col) = line_col(text, error.span.start);
                eprintln!("{name}:{line}:{col}: {}", error.message);
            }
            return;
        }
        let source = SourceText::new(name, text.into());
        let diagnostics: Vec<Value> = errors
            .iter()
            .map(|error| {
                let diagnostic = harness_compiler::parse::syntax_error(error, text)
                    .in_file(name)
                    .with_source(source.clone());
                render::to_json(&diagnostic)
            })
            .collect();
        self.entries.push(json!({
            "file": name,
            "status": "failed",
            "error": "syntax errors; left unchanged",
            "diagnostics": diagnostics,
        }));
    }

    /// A file that was formatted: `status` is `unchanged`, `formatted` or (with `--check`)
    /// `would change`, with the diff, or for standard input the formatted text.
    fn done(&mut self, name: &str, status: &str, diff: Option<&str>, formatted: Option<&str>) {
        if self.json {
            let mut entry = json!({"file": name, "status": status});
            if let Some(diff) = diff {
                entry["diff"] = json!(diff);
            }
            if let Some(formatted) = formatted {
                entry["formatted"] = json!(formatted);
            }
            self.entries.push(entry);
        } else if let Some(text) = diff.or(formatted) {
            print!("{text}");
        }
    }

    /// Prints the JSON object, in JSON mode.
    fn finish(self) {
        if self.json {
            let value = json!({ "files": self.entries });
            println!(
                "{}",
                serde_json::to_string_pretty(&value).unwrap_or_else(|_| "{}".to_owned())
            );
        }
    }
}

/// Formats the `.harness` files named by `paths`: files as given, directories searched
/// recursively for `*.harness` (symbolic links to directories are not followed). No path means
/// the current directory.
///
/// With `check`, nothing is written: for each file that would change, a unified diff from the
/// file to its formatted text is printed on standard output. The one path `-` is standard input,
/// formatted to standard output (with `check`, its diff). Problems (unreadable or non-UTF-8 files, syntax errors, failed writes) are
/// reported on standard error and the run continues with the next file.
///
/// With `json`, the same is reported as one JSON object on standard output instead (see the
/// module's documentation).
///
/// Exits with success when every file is formatted (or, with `check`, already was), and with
/// failure (1) otherwise.
pub fn run(paths: &[PathBuf], check: bool, json: bool) -> ExitCode {
    let mut report = Report {
        json,
        entries: Vec::new(),
    };
    let code = if let [path] = paths
        && path.as_os_str() == "-"
    {
        format_stdin(check, &mut report)
    } else {
        format_paths(paths, check, &mut report)
    };
    report.finish();
    code
}

/// Formats the files under `paths`, as [`run`] describes.
fn format_paths(paths: &[PathBuf], check: bool, report: &mut Report) -> ExitCode {
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
            Ok(meta) if meta.is_dir() => ok &= collect(root, &mut files, report),
            Ok(_) => files.push(root.clone()),
            Err(error) => {
                report.problem(
                    &root.display().to_string(),
                    &format!("cannot read: {error}"),
                );
                ok = false;
            }
        }
    }
    let mut unformatted = false;
    for file in &files {
        match format_file(file, check, report) {
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
fn format_stdin(check: bool, report: &mut Report) -> ExitCode {
    let mut text = String::new();
    if let Err(error) = io::stdin().read_to_string(&mut text) {
        report.problem("<stdin>", &format!("cannot read: {error}"));
        return ExitCode::FAILURE;
    }
    let Some(formatted) = format_text("<stdin>", &text, report) else {
        return ExitCode::FAILURE;
    };
    let status = if formatted == text {
        "unchanged"
    } else if check {
        "would change"
    } else {
        "formatted"
    };
    if !check {
        report.done("<stdin>", status, None, Some(&formatted));
        return ExitCode::SUCCESS;
    }
    if formatted == text {
        report.done("<stdin>", status, None, None);
        return ExitCode::SUCCESS;
    }
    let diff = unified("<stdin>", "<stdin> (formatted)", &text, &formatted, 3);
    report.done("<stdin>", status, Some(&diff), None);
    ExitCode::FAILURE
}

/// The formatted text, or `None` after reporting why `name` cannot be formatted.
fn format_text(name: &str, text: &str, report: &mut Report) -> Option<String> {
    match format(text) {
        Ok(formatted) => Some(formatted),
        Err(FormatError::Syntax(errors)) => {
            report.syntax(name, text, &errors);
            None
        }
        Err(error @ FormatError::Unstable(_)) => {
            report.problem(name, &format!("{error}; left unchanged"));
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
fn collect(dir: &Path, files: &mut Vec<PathBuf>, report: &mut Report) -> bool {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) => {
            report.problem(
                &dir.display().to_string(),
                &format!("cannot read directory: {error}"),
            );
            return false;
        }
    };
    let mut paths: Vec<(PathBuf, fs::FileType)> = Vec::new();
    let mut ok = true;
    for entry in entries {
        match entry.and_then(|e| Ok((e.path(), e.file_type()?))) {
            Ok(found) => paths.push(found),
            Err(error) => {
                report.problem(
                    &dir.display().to_string(),
                    &format!("cannot read directory: {error}"),
                );
                ok = false;
            }
        }
    }
    paths.sort_by(|a, b| a.0.cmp(&b.0));
    for (path, kind) in paths {
        if kind.is_dir() {
            ok &= collect(&path, files, report);
        } else if path.extension().is_some_and(|ext| ext == "harness") {
            files.push(path);
        }
    }
    ok
}

/// Formats one file, writing it back unless `check`.
fn format_file(path: &Path, check: bool, report: &mut Report) -> Outcome {
    let name = path.display().to_string();
    let bytes = match fs::read(path) {
        Ok(bytes) => bytes,
        Err(error) => {
            report.problem(&name, &format!("cannot read: {error}"));
            return Outcome::Failed;
        }
    };
    let Ok(text) = String::from_utf8(bytes) else {
        report.problem(&name, "not UTF-8 text; left unchanged");
        return Outcome::Failed;
    };
    let Some(formatted) = format_text(&name, &text, report) else {
        return Outcome::Failed;
    };
    if formatted == text {
        report.done(&name, "unchanged", None, None);
        return Outcome::Unchanged;
    }
    if check {
        let diff = unified(&name, &format!("{name} (formatted)"), &text, &formatted, 3);
        report.done(&name, "would change", Some(&diff), None);
        return Outcome::Changed;
    }
    match write_atomically(path, formatted.as_bytes()) {
        Ok(()) => {
            report.done(&name, "formatted", None, None);
            Outcome::Changed
        }
        Err(error) => {
            report.problem(&name, &format!("cannot write: {error}"));
            Outcome::Failed
        }
    }
}

/// Replaces the contents of `path` by writing a temporary file in the same directory (so the
/// rename stays on one file system) with the original's permissions and owner, then renaming
/// it over the original. A symbolic link is written through (its target is replaced, the link
/// stays); a file with several hard links is rewritten in place, since a rename would split it
/// from its other names; a read-only file is refused rather than replaced.
fn write_atomically(path: &Path, contents: &[u8]) -> io::Result<()> {
    let target = fs::canonicalize(path)?;
    let meta = fs::metadata(&target)?;
    if meta.permissions().readonly() {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            "the file is read-only; left unchanged (make it writable to format it)",
        ));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if meta.nlink() > 1 {
            let mut file = fs::OpenOptions::new()
                .write(true)
                .truncate(true)
                .open(&target)?;
            file.write_all(contents)?;
            return file.sync_all();
        }
    }
    let dir = match target.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let name = target
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
        fs::set_permissions(&temp, meta.permissions())?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            // Only the owner's own user (or root) can give the file back to its owner; anyone
            // else keeps the new file as theirs, as any editor that saves by renaming does.
            let _ = std::os::unix::fs::chown(&temp, Some(meta.uid()), Some(meta.gid()));
        }
        fs::rename(&temp, &target)
    })();
    if result.is_err() {
        // The temporary file is ours; leaving it behind would litter the user's directory.
        let _ = fs::remove_file(&temp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh directory for one test.
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("harness-fmt-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        dir
    }

    /// A report that gathers instead of printing.
    fn quiet() -> Report {
        Report {
            json: true,
            entries: Vec::new(),
        }
    }

    const UGLY: &str = "harness t\nconst   A: Int = 1\n";
    const PRETTY: &str = "harness t\nconst A: Int = 1\n";

    #[cfg(unix)]
    #[test]
    fn a_symbolic_link_is_written_through() {
        let dir = scratch("link");
        fs::write(dir.join("real.harness"), UGLY).unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::symlink("real.harness", dir.join("link.harness"))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(matches!(
            format_file(&dir.join("link.harness"), false, &mut quiet()),
            Outcome::Changed
        ));
        let link = fs::symlink_metadata(dir.join("link.harness")).unwrap_or_else(|e| panic!("{e}"));
        assert!(link.file_type().is_symlink());
        assert_eq!(
            fs::read_to_string(dir.join("real.harness")).ok().as_deref(),
            Some(PRETTY)
        );
        let _ = fs::remove_dir_all(&dir);
    }

    #[cfg(unix)]
    #[test]
    fn hard_links_stay_linked() {
        let dir = scratch("hard");
        fs::write(dir.join("a.harness"), UGLY).unwrap_or_else(|e| panic!("{e}"));
        fs::hard_link(dir.join("a.harness"), dir.join("b.harness"))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(matches!(
            format_file(&dir.join("a.harness"), false, &mut quiet()),
            Outcome::Changed
        ));
        assert_eq!(
            fs::read_to_string(dir.join("b.harness")).ok().as_deref(),
            Some(PRETTY)
        );
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn json_reports_each_file_with_its_status_diff_and_syntax_errors() {
        let dir = scratch("json");
        fs::write(dir.join("ugly.harness"), UGLY).unwrap_or_else(|e| panic!("{e}"));
        fs::write(dir.join("pretty.harness"), PRETTY).unwrap_or_else(|e| panic!("{e}"));
        fs::write(
            dir.join("broken.harness"),
            "harness t\nconst A: Int = = 1\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let mut report = quiet();
        let mut files = Vec::new();
        assert!(collect(&dir, &mut files, &mut report));
        for file in &files {
            format_file(file, true, &mut report);
        }
        let by_name = |name: &str| {
            report
                .entries
                .iter()
                .find(|e| e["file"].as_str().is_some_and(|f| f.ends_with(name)))
                .unwrap_or_else(|| panic!("no entry for {name}: {:?}", report.entries))
        };
        assert_eq!(by_name("pretty.harness")["status"], "unchanged");
        let ugly = by_name("ugly.harness");
        assert_eq!(ugly["status"], "would change");
        assert!(
            ugly["diff"]
                .as_str()
                .is_some_and(|d| d.contains("+const A: Int = 1")),
            "{ugly}"
        );
        let broken = by_name("broken.harness");
        assert_eq!(broken["status"], "failed");
        let diagnostic = &broken["diagnostics"][0];
        assert_eq!(diagnostic["code"], "E0001", "{broken}");
        assert_eq!(
            (&diagnostic["line"], &diagnostic["column"]),
            (&json!(2), &json!(16))
        );
        // With `--check`, nothing was written.
        assert_eq!(
            fs::read_to_string(dir.join("ugly.harness")).ok().as_deref(),
            Some(UGLY)
        );
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_read_only_file_is_refused_and_kept() {
        let dir = scratch("readonly");
        let path = dir.join("ro.harness");
        fs::write(&path, UGLY).unwrap_or_else(|e| panic!("{e}"));
        let mut permissions = fs::metadata(&path)
            .unwrap_or_else(|e| panic!("{e}"))
            .permissions();
        permissions.set_readonly(true);
        fs::set_permissions(&path, permissions).unwrap_or_else(|e| panic!("{e}"));
        assert!(matches!(
            format_file(&path, false, &mut quiet()),
            Outcome::Failed
        ));
        assert_eq!(fs::read_to_string(&path).ok().as_deref(), Some(UGLY));
        let _ = fs::remove_dir_all(&dir);
    }
}
