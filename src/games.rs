//! The games and signatures the command line knows, and loading a harness program from disk.

use std::path::Path;
use std::sync::Arc;

use harness_battleship::Protocol;
use harness_compiler::Workspace;
use harness_compiler::ir::Program;
use harness_compiler::signatures::SignatureSet;
use harness_mci::game::Mci;
use harness_mci::suite::Domain;
use harness_runtime::GameKind;

use crate::render;

/// The names accepted by `--game`.
pub const GAMES: &[&str] = &["battleship", harness_search::NAME, "cooling", "grid"];

/// The game called `name`; `protocol` matters only to Battleship.
pub fn game_kind(name: &str, protocol: Protocol) -> Result<Box<dyn GameKind>, String> {
    match name {
        "battleship" => Ok(Box::new(harness_battleship::play::Battleship::new(
            protocol,
        ))),
        harness_search::NAME => Ok(Box::new(harness_search::LineSearch)),
        "cooling" => Ok(Box::new(Mci(Domain::Cooling))),
        "grid" => Ok(Box::new(Mci(Domain::Grid))),
        other => Err(format!(
            "unknown game `{other}`; the games are {}",
            GAMES.join(", ")
        )),
    }
}

/// Every signature a harness can use: the prelude, the runtime's preview methods and the games'
/// bindings.
pub fn signatures() -> SignatureSet {
    let mut set = harness_stdlib::prelude::signatures();
    set.extend(harness_runtime::signatures());
    set.game(harness_battleship::bindings::game());
    set.game(harness_search::LineSearch.bindings());
    set.game(Mci(Domain::Cooling).bindings());
    set.game(Mci(Domain::Grid).bindings());
    set
}

/// The name under which the bundled Battleship harness is recorded in result folders.
pub const EMBEDDED_BATTLESHIP: &str = "<bundled>/harnesses/battleship";

/// The bundled Battleship harness, compiled into the binary so that `harness ablate` runs from
/// any directory.
const BATTLESHIP: [(&str, &str); 4] = [
    (
        "harnesses/battleship/belief.harness",
        include_str!("../harnesses/battleship/belief.harness"),
    ),
    (
        "harnesses/battleship/planning.harness",
        include_str!("../harnesses/battleship/planning.harness"),
    ),
    (
        "harnesses/battleship/reflection.harness",
        include_str!("../harnesses/battleship/reflection.harness"),
    ),
    (
        "harnesses/battleship/revision.harness",
        include_str!("../harnesses/battleship/revision.harness"),
    ),
];

/// The sources of a harness named on the command line: the bundled Battleship harness for
/// [`EMBEDDED_BATTLESHIP`], else the files under the path.
pub fn sources_of(name: &str) -> Result<Vec<(String, String)>, String> {
    if name == EMBEDDED_BATTLESHIP {
        return Ok(BATTLESHIP
            .iter()
            .map(|(path, text)| (path.to_string(), text.to_string()))
            .collect());
    }
    sources(Path::new(name))
}

/// The harness sources under `path` (a file, or every `.harness` file under a directory),
/// sorted by path, with their texts.
pub fn sources(path: &Path) -> Result<Vec<(String, String)>, String> {
    let mut files = Vec::new();
    crate::check::collect_files(path, &mut files)?;
    files.sort();
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

/// Checks the sources and lowers a module: the one named, or else the only module that no
/// other module uses. Diagnostics are printed; the error says what to do.
pub fn compile(sources: &[(String, String)], module: Option<&str>) -> Result<Arc<Program>, String> {
    let mut workspace = Workspace::new(signatures());
    for (path, text) in sources {
        workspace.set_file(path, text);
    }
    let diagnostics = workspace.diagnostics();
    if diagnostics.iter().any(|diagnostic| diagnostic.is_error()) {
        render::human(&diagnostics, sources.len());
        return Err("the harness has errors; fix them and run again".into());
    }
    let module = match module {
        Some(module) => module.to_string(),
        None => root_module(&workspace.modules(), sources)?,
    };
    workspace.program(&module).map_err(|diagnostics| {
        render::human(&diagnostics, sources.len());
        format!("cannot build module `{module}`")
    })
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
