//! Loading a harness: its sources from disk (or the bundled default), checking and lowering
//! them to a program, and the file table that traces carry.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use harness_compiler::Workspace;
use harness_compiler::diagnostic::Diagnostic;
use harness_compiler::ir::Program;
use harness_runtime::TraceFile;
use sha2::{Digest, Sha256};

use crate::games::{BUNDLED, Registry, bundled_sources};

/// A harness's source files, as path and text, sorted by path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sources {
    /// What the harness is called in result folders: its path, or [`BUNDLED`].
    pub name: String,
    /// The files.
    pub files: Vec<(String, String)>,
}

impl Sources {
    /// The sources named on the command line: the bundled harness for [`BUNDLED`] or no name,
    /// else the `.harness` files under the path.
    pub fn load(name: Option<&str>) -> Result<Sources, String> {
        match name {
            None | Some(BUNDLED) => Ok(Sources {
                name: BUNDLED.to_string(),
                files: bundled_sources(),
            }),
            Some(path) => Ok(Sources {
                name: path.to_string(),
                files: read_sources(Path::new(path))?,
            }),
        }
    }

    /// SHA-256 over the paths and texts, in order.
    pub fn hash(&self) -> String {
        let mut hasher = Sha256::new();
        for (path, text) in &self.files {
            hasher.update(path.as_bytes());
            hasher.update([0]);
            hasher.update(text.as_bytes());
            hasher.update([0]);
        }
        hex(&hasher.finalize())
    }

    /// The text of the file at `path`.
    pub fn text(&self, path: &str) -> Option<&str> {
        self.files
            .iter()
            .find(|(p, _)| p == path)
            .map(|(_, text)| text.as_str())
    }

    /// The file table of `program`: each of its files with its line starts, for traces.
    pub fn file_table(&self, program: &Program) -> Vec<TraceFile> {
        program
            .files
            .iter()
            .map(|path| TraceFile {
                path: path.clone(),
                line_starts: self.text(path).map(line_starts).unwrap_or_else(|| vec![0]),
            })
            .collect()
    }
}

/// Lowercase hexadecimal.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// The byte offset of each line's start.
fn line_starts(text: &str) -> Vec<u32> {
    std::iter::once(0)
        .chain(
            text.bytes()
                .enumerate()
                .filter(|(_, byte)| *byte == b'\n')
                .map(|(i, _)| i as u32 + 1),
        )
        .collect()
}

/// The reference harnesses of a bank directory: each `.harness` file directly in it is one
/// harness, and each subdirectory is one harness of all the `.harness` files under it (a
/// harness cut into one file per role, for example).
pub fn read_bank(dir: &Path) -> Result<Vec<Sources>, String> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir() || p.extension().is_some_and(|e| e == "harness"))
        .collect();
    entries.sort();
    entries
        .iter()
        .map(|path| {
            Ok(Sources {
                name: path
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                files: read_sources(path)?,
            })
        })
        .collect()
}

/// The `.harness` files under `path` (a file, or every `.harness` file under a directory),
/// sorted by path, with their texts.
pub fn read_sources(path: &Path) -> Result<Vec<(String, String)>, String> {
    let mut files = Vec::new();
    let mut problems = Vec::new();
    collect(path, &mut files, &mut problems);
    if let Some(problem) = problems.into_iter().next() {
        return Err(problem);
    }
    if files.is_empty() {
        return Err(format!("no .harness file under {}", path.display()));
    }
    files.sort();
    files.dedup();
    files
        .into_iter()
        .map(|file| {
            let bytes = std::fs::read(&file)
                .map_err(|error| format!("cannot read {}: {error}", file.display()))?;
            let text = String::from_utf8(bytes)
                .map_err(|_| format!("{} is not UTF-8 text", file.display()))?;
            Ok((file.display().to_string(), text))
        })
        .collect()
}

/// A file, or every `.harness` file under a directory, in sorted order; what cannot be read is
/// added to `problems`.
pub fn collect(path: &Path, files: &mut Vec<PathBuf>, problems: &mut Vec<String>) {
    collect_in(
        path,
        files,
        problems,
        &mut std::collections::BTreeSet::new(),
    );
}

/// [`collect`], visiting each directory once: a symbolic link back into a directory already
/// walked (`loop -> .`) would otherwise load the same files again and again until the system's
/// link limit stops it.
fn collect_in(
    path: &Path,
    files: &mut Vec<PathBuf>,
    problems: &mut Vec<String>,
    visited: &mut std::collections::BTreeSet<PathBuf>,
) {
    if path.is_dir() {
        let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        if !visited.insert(canonical) {
            return;
        }
        let entries = match std::fs::read_dir(path) {
            Ok(entries) => entries,
            Err(error) => {
                problems.push(format!("cannot read directory {}: {error}", path.display()));
                return;
            }
        };
        let mut children: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        children.sort();
        for child in children {
            if child.is_dir() || child.extension().is_some_and(|e| e == "harness") {
                collect_in(&child, files, problems, visited);
            }
        }
    } else if path.exists() {
        files.push(path.to_path_buf());
    } else {
        problems.push(format!("no such file or directory: {}", path.display()));
    }
}

/// Why a harness did not compile.
#[derive(Debug)]
pub enum CompileError {
    /// The checker found errors (every diagnostic of the files, warnings included, to render).
    Diagnostics(Vec<Diagnostic>),
    /// The module to run could not be chosen.
    Module(String),
}

impl std::fmt::Display for CompileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CompileError::Diagnostics(_) => {
                write!(f, "the harness has errors; fix them and run again")
            }
            CompileError::Module(message) => write!(f, "{message}"),
        }
    }
}

/// Checks the sources and lowers a module: the one named, or else the only module that no
/// other module uses.
pub fn compile(
    registry: &Registry,
    sources: &Sources,
    module: Option<&str>,
) -> Result<Arc<Program>, CompileError> {
    let mut workspace = Workspace::new(registry.signatures());
    for (path, text) in &sources.files {
        workspace.set_file(path, text);
    }
    let diagnostics = workspace.diagnostics();
    if diagnostics.iter().any(Diagnostic::is_error) {
        return Err(CompileError::Diagnostics(diagnostics));
    }
    let module = match module {
        Some(module) => module.to_string(),
        None => root_module(&workspace.modules(), &sources.files).map_err(CompileError::Module)?,
    };
    workspace
        .program(&module)
        .map_err(CompileError::Diagnostics)
}

/// The one module that no other module uses: the top of the stack.
fn root_module(
    modules: &[(String, String)],
    sources: &[(String, String)],
) -> Result<String, String> {
    let used = |module: &str| {
        sources.iter().any(|(_, text)| {
            text.lines().any(|line| {
                line.trim().strip_prefix("use ").is_some_and(|rest| {
                    let rest = rest.trim();
                    rest == module || rest.starts_with(&format!("{module}."))
                })
            })
        })
    };
    let roots: Vec<&String> = modules
        .iter()
        .map(|(module, _)| module)
        .filter(|module| !used(module))
        .collect();
    match roots.as_slice() {
        [root] => Ok((*root).clone()),
        [] => Err(
            "the harness has no module that is not used by another; name one with --module".into(),
        ),
        many => Err(format!(
            "the harness has several top modules ({}); choose one with --module",
            many.iter()
                .map(|m| format!("`{m}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_starts_follow_newlines() {
        assert_eq!(line_starts("ab\ncd\n"), vec![0, 3, 6]);
        let file = TraceFile {
            path: "x".into(),
            line_starts: line_starts("ab\ncd\n"),
        };
        assert_eq!(file.line_column(0), (1, 1));
        assert_eq!(file.line_column(4), (2, 2));
    }

    /// Issue 19's reproducer: `check .` through `loop -> .` loaded one file 41 times.
    #[cfg(unix)]
    #[test]
    fn a_self_referencing_symlink_loads_each_file_once() {
        let dir = std::env::temp_dir().join(format!("harness-loop-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(dir.join("a.harness"), "const _N: Int = 1\n")
            .unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::symlink(".", dir.join("loop")).unwrap_or_else(|e| panic!("{e}"));
        let (mut files, mut problems) = (Vec::new(), Vec::new());
        collect(&dir, &mut files, &mut problems);
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(files, vec![dir.join("a.harness")]);
        assert!(problems.is_empty(), "{problems:?}");
    }
}
