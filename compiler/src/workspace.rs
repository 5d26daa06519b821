//! The checker's front door: a workspace of files, checked incrementally.
//!
//! ```
//! use harness_compiler::{Workspace, signatures::SignatureSet};
//!
//! let mut workspace = Workspace::new(SignatureSet::default());
//! workspace.set_file("a.harness", "const N: Int = 0.5");
//! let codes: Vec<&str> = workspace.diagnostics().iter().map(|d| d.code.as_str()).collect();
//! // The value is a `Float` where an `Int` is declared, and the constant is never used.
//! assert_eq!(codes, ["W0004", "E0201"]);
//! ```

use std::collections::BTreeMap;
use std::sync::Arc;

use harness_grammar::Span;

use crate::db::{self, Database, Inputs, SourceFile, guarded};
use crate::diagnostic::Diagnostic;
use crate::ir;
use crate::signatures::SignatureSet;
use crate::split;

/// A set of loaded files checked together, with the signatures they are checked against.
pub struct Workspace {
    db: Database,
    inputs: Inputs,
    files: BTreeMap<String, SourceFile>,
}

impl Workspace {
    /// An empty workspace.
    pub fn new(signatures: SignatureSet) -> Self {
        Self::with_database(Database::default(), signatures)
    }

    /// An empty workspace whose database records which queries execute, for tests of
    /// incrementality (see [`Database::start_log`]).
    pub fn with_query_log(signatures: SignatureSet) -> Self {
        Self::with_database(Database::with_log(), signatures)
    }

    fn with_database(db: Database, signatures: SignatureSet) -> Self {
        let inputs = Inputs::new(
            &db,
            Vec::new(),
            Arc::new(signatures),
            crate::cost::DEFAULT_LIMIT,
        );
        Self {
            db,
            inputs,
            files: BTreeMap::new(),
        }
    }

    /// Sets the limit on a turn phase's cost bound (see [`crate::cost`]); by default
    /// [`crate::cost::DEFAULT_LIMIT`].
    pub fn set_cost_limit(&mut self, limit: u64) {
        use salsa::Setter;
        if self.inputs.cost_limit(&self.db) != limit {
            self.inputs.set_cost_limit(&mut self.db).to(limit);
        }
    }

    /// The cost bound of a module's turn, per phase; the module's errors when it has any.
    pub fn cost(&self, module: &str) -> Result<crate::cost::CostReport, Vec<Diagnostic>> {
        let key = db::ModuleKey::new(&self.db, self.inputs, module.to_owned());
        guarded(module, || db::cost(&self.db, key).clone())
            .unwrap_or_else(|internal| Err(vec![*internal]))
    }

    /// Adds a file, or replaces the text of a loaded one.
    pub fn set_file(&mut self, path: &str, text: &str) {
        use salsa::Setter;
        match self.files.get(path) {
            Some(file) => {
                let old = file.text(&self.db);
                if **old != *text {
                    let split = split::resplit(old, file.split(&self.db), text);
                    file.set_text(&mut self.db).to(Arc::from(text));
                    file.set_split(&mut self.db).to(Arc::new(split));
                }
            }
            None => {
                let split = Arc::new(split::split(text));
                let file = SourceFile::new(&self.db, path.to_owned(), Arc::from(text), split);
                self.files.insert(path.to_owned(), file);
                let files: Vec<SourceFile> = self.files.values().copied().collect();
                self.inputs.set_files(&mut self.db).to(files);
            }
        }
    }

    /// Removes a file.
    pub fn remove_file(&mut self, path: &str) {
        use salsa::Setter;
        if self.files.remove(path).is_some() {
            let files: Vec<SourceFile> = self.files.values().copied().collect();
            self.inputs.set_files(&mut self.db).to(files);
        }
    }

    /// The loaded files' paths, sorted.
    pub fn paths(&self) -> Vec<String> {
        self.files.keys().cloned().collect()
    }

    /// The text of a loaded file.
    pub fn text(&self, path: &str) -> Option<Arc<str>> {
        self.files.get(path).map(|file| file.text(&self.db).clone())
    }

    /// The modules of the workspace: module name and the path of the file that declares it.
    pub fn modules(&self) -> Vec<(String, String)> {
        let env = db::environment(&self.db, self.inputs);
        env.file_modules
            .iter()
            .map(|(path, module)| (module.clone(), path.clone()))
            .collect()
    }

    /// The database, for tools and tests that observe which queries run.
    pub fn database(&self) -> &Database {
        &self.db
    }

    /// The database and the inputs, for the editor queries of [`crate::ide`].
    pub(crate) fn query_parts(&self) -> (&Database, Inputs) {
        (&self.db, self.inputs)
    }

    /// The salsa handle of a loaded file, for the editor queries of [`crate::ide`].
    pub(crate) fn source_file(&self, path: &str) -> Option<SourceFile> {
        self.files.get(path).copied()
    }

    /// The diagnostics of one file, sorted by position.
    pub fn file_diagnostics(&self, path: &str) -> Vec<Diagnostic> {
        let Some(file) = self.files.get(path).copied() else {
            return Vec::new();
        };
        guarded(path, || {
            db::file_diagnostics(&self.db, db::FileKey::new(&self.db, self.inputs, file)).clone()
        })
        .unwrap_or_else(|internal| vec![*internal])
    }

    /// Every diagnostic of the workspace, sorted by file and position; problems in the
    /// signatures themselves come first, as internal errors.
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        let mut out: Vec<Diagnostic> = self
            .inputs
            .signatures(&self.db)
            .all_problems()
            .into_iter()
            .map(|problem| {
                Diagnostic::internal(
                    Span::default(),
                    format!("a builtin signature does not parse: {problem}"),
                )
                .in_file("<signatures>")
            })
            .collect();
        for path in self.files.keys() {
            out.extend(self.file_diagnostics(path));
        }
        // The cost bound needs a checked program: modules with errors are skipped.
        match guarded("<cost>", || {
            db::cost_diagnostics(&self.db, self.inputs).clone()
        }) {
            Ok(cost) => out.extend(cost),
            Err(internal) => out.push(*internal),
        }
        out
    }

    /// True when some diagnostic of the workspace is an error.
    pub fn has_errors(&self) -> bool {
        self.diagnostics().iter().any(Diagnostic::is_error)
    }

    /// The checked program of a module, lowered to IR; the module's errors (and those of the
    /// modules it uses) when it has any.
    pub fn program(&self, module: &str) -> Result<Arc<ir::Program>, Vec<Diagnostic>> {
        let key = db::ModuleKey::new(&self.db, self.inputs, module.to_owned());
        guarded(module, || {
            db::program(&self.db, key)
                .as_ref()
                .map(|program| program.0.clone())
                .map_err(Clone::clone)
        })
        .unwrap_or_else(|internal| Err(vec![*internal]))
    }
}
