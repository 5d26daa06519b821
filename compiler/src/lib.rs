//! The harness checker: salsa queries, name resolution, types, layer isolation, diagnostics and lowering.
//!
//! The entry point is [`Workspace`]: load files with [`Workspace::set_file`], read
//! [`Workspace::diagnostics`], and get a module's lowered [`ir::Program`] with
//! [`Workspace::program`]. Builtin and game signatures arrive as a [`signatures::SignatureSet`];
//! this crate depends on neither the runtime nor the standard library.
//!
//! The pipeline: [`split`] cuts a file into chunks (items and layer members), [`parse`] parses a
//! chunk, [`env`](mod@env) builds every module's scope from the chunks' signatures, [`check`]
//! checks and lowers one chunk, [`global`] runs the whole-program checks, [`lower`] assembles the
//! IR; [`visit`] is the one walk over the IR that every traversal uses. The [`db`] module wires
//! these as salsa queries so that an edit re-checks only what it affects. [`ide`] answers an
//! editor's questions (hover, definition, references, completion...) from the same queries.

pub mod check;
pub mod codes;
pub mod cost;
pub mod db;
pub mod diagnostic;
pub mod env;
pub mod global;
pub mod ide;
pub mod ir;
pub mod lower;
pub mod parse;
pub mod protocol;
pub mod signatures;
pub mod split;
pub mod symbol;
pub mod types;
pub mod visit;
mod workspace;

pub use diagnostic::{Diagnostic, Severity};
pub use workspace::Workspace;
