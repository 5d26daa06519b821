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
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use harness_grammar::Span;

use crate::db::{self, Database, Inputs, SourceFile};
use crate::diagnostic::Diagnostic;
use crate::ir::{self, SrcSpan};
use crate::lower;
use crate::signatures::SignatureSet;

/// A set of loaded files checked together, with the signatures they are checked against.
pub struct Workspace {
    db: Database,
    inputs: Inputs,
    files: BTreeMap<String, SourceFile>,
    /// The limit on a turn phase's cost bound, past which [`Workspace::diagnostics`] reports
    /// E0901.
    cost_limit: u64,
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
        let inputs = Inputs::new(&db, Vec::new(), Arc::new(signatures));
        Self {
            db,
            inputs,
            files: BTreeMap::new(),
            cost_limit: crate::cost::DEFAULT_LIMIT,
        }
    }

    /// Sets the limit on a turn phase's cost bound (see [`crate::cost`]); by default
    /// [`crate::cost::DEFAULT_LIMIT`].
    pub fn set_cost_limit(&mut self, limit: u64) {
        self.cost_limit = limit;
    }

    /// The cost bound of a module's turn, per phase; the module's errors when it has any.
    pub fn cost(&self, module: &str) -> Result<crate::cost::CostReport, Vec<Diagnostic>> {
        let program = self.program(module)?;
        self.cost_of(module, &program)
    }

    /// The cost bound of a module's turn, from its lowered program.
    fn cost_of(
        &self,
        module: &str,
        program: &ir::Program,
    ) -> Result<crate::cost::CostReport, Vec<Diagnostic>> {
        let env = db::environment(&self.db, self.inputs);
        let bounds = env
            .scopes
            .get(module)
            .and_then(|scope| scope.game.as_ref())
            .map(|game| game.bounds.iter().cloned().collect())
            .unwrap_or_default();
        guard(module, || {
            crate::cost::analyse(program, &bounds, self.cost_limit)
        })
        .map_err(|internal| vec![*internal])
    }

    /// E0901 for every module whose turn has a phase bounded above the limit, at the
    /// expressions whose own bound passes it.
    fn cost_diagnostics(&self) -> Vec<Diagnostic> {
        let mut out: Vec<Diagnostic> = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        for (module, path) in self.modules() {
            // The program is lowered once for both the bound and the files it names.
            let Ok(program) = self.program(&module) else {
                continue;
            };
            let Ok(report) = self.cost_of(&module, &program) else {
                continue;
            };
            let limit = crate::cost::show(report.limit);
            for (span, steps) in &report.over {
                let file = program
                    .files
                    .get(span.file as usize)
                    .cloned()
                    .unwrap_or_else(|| path.clone());
                if !seen.insert((file.clone(), span.start, span.end, "")) {
                    continue;
                }
                out.push(
                    self.sourced(
                        &file,
                        Diagnostic::new(
                            crate::codes::Code::CostOverLimit,
                            Span::new(span.start as usize, span.end as usize),
                            format!(
                                "this expression's work is bounded by {} steps per turn, over the \
                             limit of {limit}",
                                crate::cost::show(*steps)
                            ),
                        )
                        .help(
                            "make the aggregate smaller or aggregate once instead of once per \
                         element; `harness check --cost` shows the bound of each phase",
                        ),
                    ),
                );
            }
            for phase in report.over_limit().filter(|p| p.over.is_empty()) {
                // Many parts, none over the limit alone: the module is the culprit.
                if seen.insert((path.clone(), 0, 0, phase.phase)) {
                    out.push(
                        self.sourced(
                            &path,
                            Diagnostic::new(
                                crate::codes::Code::CostOverLimit,
                                Span::new(0, 0),
                                format!(
                                    "the {} phase of a turn of `{module}` is bounded by {} steps, \
                                 over the limit of {limit}",
                                    phase.phase,
                                    crate::cost::show(phase.steps)
                                ),
                            )
                            .help("`harness check --cost` shows the bound of each phase"),
                        ),
                    );
                }
            }
        }
        out
    }

    /// A diagnostic placed in a loaded file, with its text attached for rendering.
    fn sourced(&self, path: &str, diagnostic: Diagnostic) -> Diagnostic {
        let diagnostic = diagnostic.in_file(path);
        match self.text(path) {
            Some(text) => {
                diagnostic.with_source(crate::diagnostic::SourceText::new(path.to_owned(), text))
            }
            None => diagnostic,
        }
    }

    /// Adds a file, or replaces the text of a loaded one.
    pub fn set_file(&mut self, path: &str, text: &str) {
        use salsa::Setter;
        match self.files.get(path) {
            Some(file) => {
                if **file.text(&self.db) != *text {
                    file.set_text(&mut self.db).to(Arc::from(text));
                }
            }
            None => {
                let file = SourceFile::new(&self.db, path.to_owned(), Arc::from(text));
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
        guard(path, || {
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
        out.extend(self.cost_diagnostics());
        out
    }

    /// True when some diagnostic of the workspace is an error.
    pub fn has_errors(&self) -> bool {
        self.diagnostics().iter().any(Diagnostic::is_error)
    }

    /// The checked program of a module, lowered to IR; the module's errors (and those of the
    /// modules it uses) when it has any.
    pub fn program(&self, module: &str) -> Result<Arc<ir::Program>, Vec<Diagnostic>> {
        let env = db::environment(&self.db, self.inputs).clone();
        let Some(scope) = env.scopes.get(module) else {
            let loaded = env
                .file_modules
                .values()
                .map(|m| format!("`{m}`"))
                .collect::<Vec<_>>()
                .join(", ");
            return Err(vec![
                Diagnostic::new(
                    crate::codes::Code::UnknownModule,
                    Span::default(),
                    format!("unknown module `{module}`"),
                )
                .help(format!("the loaded modules are: {loaded}")),
            ]);
        };
        let paths: Vec<String> = scope
            .program_modules
            .iter()
            .filter_map(|m| {
                env.file_modules
                    .iter()
                    .find(|(_, module)| *module == m)
                    .map(|(path, _)| path.clone())
            })
            .collect();
        let errors: Vec<Diagnostic> = paths
            .iter()
            .flat_map(|path| self.file_diagnostics(path))
            .filter(Diagnostic::is_error)
            .collect();
        if !errors.is_empty() {
            return Err(errors);
        }
        guard(module, || {
            let db = &self.db;
            let mut checks = Vec::new();
            for (file_index, path) in paths.iter().enumerate() {
                let Some(file) = self.files.get(path).copied() else {
                    continue;
                };
                let layers = env.chunk_layers.get(path).cloned().unwrap_or_default();
                for (ordinal, (chunk, offset)) in db::outline(db, file).chunks.iter().enumerate() {
                    let layer_name = if chunk.kind(db) == crate::split::ChunkKind::Member {
                        layers.get(ordinal).cloned().flatten()
                    } else {
                        None
                    };
                    let layer = layer_name.as_deref().and_then(|name| scope.layer(name));
                    let key = db::CheckKey::new(
                        db,
                        db::Context::new(db, self.inputs, module.to_owned(), layer_name),
                        *chunk,
                    );
                    checks.push((file_index as u32, *offset, layer, db::check_chunk(db, key)));
                }
            }
            let placed: Vec<lower::Placed<'_>> = checks
                .iter()
                .map(|(file, offset, layer, ir)| lower::Placed {
                    file: *file,
                    offset: *offset,
                    layer: *layer,
                    ir: &ir.ir,
                })
                .collect();
            let layer_spans: Vec<SrcSpan> = scope
                .layers
                .iter()
                .map(|info| {
                    let file = paths
                        .iter()
                        .position(|p| *p == info.at.file)
                        .unwrap_or_default();
                    let offset = self
                        .files
                        .get(&info.at.file)
                        .and_then(|f| {
                            db::outline(db, *f)
                                .chunks
                                .get(info.at.ordinal as usize)
                                .map(|(_, o)| *o)
                        })
                        .unwrap_or_default();
                    SrcSpan {
                        file: file as u32,
                        start: info.at.span.start + offset,
                        end: info.at.span.end + offset,
                    }
                })
                .collect();
            let game = scope.game.as_ref().map(|g| g.name.clone());
            match lower::assemble(scope, game, paths.clone(), &layer_spans, &placed) {
                Ok(program) => Ok(Arc::new(program)),
                Err(problem) => Err(vec![
                    Diagnostic::internal(Span::default(), problem).in_file(module),
                ]),
            }
        })
        .unwrap_or_else(|internal| Err(vec![*internal]))
    }
}

/// Runs a computation, turning a panic (a bug of ours) into an internal-error diagnostic.
fn guard<T>(what: &str, run: impl FnOnce() -> T) -> Result<T, Box<Diagnostic>> {
    match catch_unwind(AssertUnwindSafe(run)) {
        Ok(value) => Ok(value),
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_owned());
            Err(Box::new(
                Diagnostic::internal(Span::default(), message).in_file(what),
            ))
        }
    }
}
