//! The run index: the result folders under a directory, what each ran and how far it got,
//! filtered by tag, game or setting (`harness runs`).

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::folder::RunFolder;

/// One result folder, as `harness runs` lists it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunEntry {
    /// The run id.
    pub id: String,
    /// The folder.
    pub path: PathBuf,
    /// When the run started.
    pub created: String,
    /// The harness that ran.
    pub harness: String,
    /// The game.
    pub game: String,
    /// The plan's arms, in order.
    pub arms: Vec<String>,
    /// Episodes finished.
    pub done: usize,
    /// Episodes planned.
    pub planned: usize,
    /// Tags given with `--tag`.
    pub tags: Vec<String>,
    /// The settings given for every arm, as `name=value`.
    pub settings: Vec<String>,
}

/// A folder under the directory that looks like a run (it has a manifest) but cannot be read.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Unreadable {
    /// The folder.
    pub path: PathBuf,
    /// Why, with what to do.
    pub reason: String,
}

/// What to keep: every given tag, the game, and every `name=value` setting must match.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    /// Tags the run must carry (all of them).
    pub tags: Vec<String>,
    /// The game the run must have played.
    pub game: Option<String>,
    /// Settings the run must have had, given or in effect in any arm.
    pub settings: Vec<(String, String)>,
}

impl Filter {
    fn keeps(&self, folder: &RunFolder) -> bool {
        let manifest = folder.manifest();
        let has_setting = |(name, value): &(String, String)| {
            manifest
                .settings
                .iter()
                .chain(manifest.effective.iter().flat_map(|arm| &arm.values))
                .any(|(n, v)| n == name && v == value)
        };
        self.tags.iter().all(|tag| manifest.tags.contains(tag))
            && self.game.as_ref().is_none_or(|game| &manifest.game == game)
            && self.settings.iter().all(has_setting)
    }
}

/// The runs directly under `dir` that `filter` keeps, oldest first (then by id), and the
/// folders with a manifest that could not be read. Folders without a manifest are not runs and
/// are passed over; a `dir` that cannot be read is an error.
pub fn list(dir: &Path, filter: &Filter) -> Result<(Vec<RunEntry>, Vec<Unreadable>), String> {
    let entries = std::fs::read_dir(dir).map_err(|error| {
        format!(
            "cannot read {}: {error} (run folders are made by `harness ablate` under \
             results/runs/)",
            dir.display()
        )
    })?;
    let mut runs = Vec::new();
    let mut unreadable = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if !path.join("manifest.json").is_file() {
            continue;
        }
        let folder = match RunFolder::open(&path) {
            Ok(folder) => folder,
            Err(error) => {
                unreadable.push(Unreadable {
                    path,
                    reason: error.to_string(),
                });
                continue;
            }
        };
        if !filter.keeps(&folder) {
            continue;
        }
        let (done, missing) = match folder.records() {
            Ok((done, missing)) => (done.len(), missing.len()),
            Err(error) => {
                unreadable.push(Unreadable {
                    path,
                    reason: error.to_string(),
                });
                continue;
            }
        };
        let manifest = folder.manifest();
        runs.push(RunEntry {
            id: manifest.run_id.clone(),
            path,
            created: manifest.created.clone(),
            harness: manifest.harness.clone(),
            game: manifest.game.clone(),
            arms: manifest.plan.arms.iter().map(|a| a.name.clone()).collect(),
            done,
            planned: done + missing,
            tags: manifest.tags.clone(),
            settings: manifest
                .settings
                .iter()
                .map(|(name, value)| format!("{name}={value}"))
                .collect(),
        });
    }
    runs.sort_by(|a, b| (&a.created, &a.id).cmp(&(&b.created, &b.id)));
    unreadable.sort_by(|a, b| a.path.cmp(&b.path));
    Ok((runs, unreadable))
}

/// The runs as an aligned table.
pub fn table(runs: &[RunEntry]) -> String {
    let header = [
        "run", "created", "game", "harness", "arms", "episodes", "tags",
    ];
    let rows: Vec<[String; 7]> = runs
        .iter()
        .map(|run| {
            [
                run.id.clone(),
                run.created.clone(),
                run.game.clone(),
                run.harness.clone(),
                run.arms.join(","),
                format!("{}/{}", run.done, run.planned),
                run.tags.join(","),
            ]
        })
        .collect();
    let mut widths = header.map(str::len);
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |cells: &[String]| {
        let padded: Vec<String> = cells
            .iter()
            .zip(widths)
            .map(|(cell, width)| format!("{cell:width$}"))
            .collect();
        format!("{}\n", padded.join("  ").trim_end())
    };
    let mut out = line(&header.map(str::to_string));
    for row in &rows {
        out.push_str(&line(row));
    }
    out
}

/// The runs as CSV with a header row.
pub fn csv(runs: &[RunEntry]) -> String {
    use crate::folder::csv_field;
    let mut out = String::from("run,path,created,game,harness,arms,done,planned,tags,settings\n");
    for run in runs {
        let fields = [
            csv_field(&run.id),
            csv_field(&run.path.display().to_string()),
            csv_field(&run.created),
            csv_field(&run.game),
            csv_field(&run.harness),
            csv_field(&run.arms.join(";")),
            run.done.to_string(),
            run.planned.to_string(),
            csv_field(&run.tags.join(";")),
            csv_field(&run.settings.join(";")),
        ];
        out.push_str(&fields.join(","));
        out.push('\n');
    }
    out
}
