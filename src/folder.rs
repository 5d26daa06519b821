//! Result folders: one directory per experiment run, written atomically and resumable.
//!
//! Layout of `results/runs/<run-id>/`:
//!
//! ```text
//! manifest.json                          what was run: the plan, the harness hash, every setting
//! games/<arm>/<instance>-s<seed>.json    one finished episode (the source of truth for resuming)
//! traces/<arm>/<instance>-s<seed>.jsonl  its event trace
//! llm/<arm>/<instance>-s<seed>.jsonl     its LLM calls with latency, when it made any
//! games.jsonl, games.csv                 one line per finished episode, rebuilt from games/
//! summary.json                           the report, written when the run completes
//! ```
//!
//! A replicate other than 0 adds `-r<k>` to the file names. Every file is written to a
//! temporary name and renamed into place, so a run killed at any moment leaves either the old
//! or the new content, never a torn file; a failed write removes its temporary file. An episode
//! counts as finished exactly when its file under `games/` exists and names its own slot.

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use harness_runtime::{Costs, MetricSpec};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::plan::{Plan, Unit};

/// The format tag written into every manifest; a folder with another tag is not ours.
pub const FORMAT: &str = "harness-run/2";

/// The buffer between a file of the folder and the code that writes it: large enough that a
/// trace of a few hundred kilobytes goes out in a handful of system calls, small enough to
/// stay out of the allocator's huge pages.
const WRITE_BUFFER: usize = 64 << 10;

/// What a run is: everything needed to redo it, resume it, or report on it without the game.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Always [`FORMAT`].
    pub format: String,
    /// The run's id, also its folder name.
    pub run_id: String,
    /// When the run was started, as `YYYY-MM-DDTHH:MM:SSZ`.
    pub created: String,
    /// The `harness` version that wrote the run.
    pub program_version: String,
    /// The git commit `harness` was built from, when it was built from a git checkout.
    pub git_commit: Option<String>,
    /// The harness that was run (a file, a directory, or the bundled one).
    pub harness: String,
    /// SHA-256 of the harness sources, in path order.
    pub harness_hash: String,
    /// The module that ran.
    pub module: String,
    /// The game played.
    pub game: String,
    /// The game's options, every one with its value.
    pub game_options: Vec<(String, String)>,
    /// The game's metrics as it declared them when the run started.
    pub metrics: Vec<MetricSpec>,
    /// What was run.
    pub plan: Plan,
    /// The settings given for every arm (`--set`, `--particles`...), as name and value.
    pub settings: Vec<(String, String)>,
    /// Structured settings given with `--set-json`, as name and data.
    pub set_json: Vec<(String, serde_json::Value)>,
    /// Per arm, every config parameter and tunable default in effect.
    pub effective: Vec<ArmSettings>,
    /// The LLM configuration (provider, model, decoding settings; never a key), or `None`
    /// when no LLM was configured. Resuming requires the same.
    pub llm: Option<serde_json::Value>,
    /// Free-form tags given with `--tag`.
    pub tags: Vec<String>,
}

impl Manifest {
    /// The first part of what was run in which `other` differs from this manifest, if any:
    /// everything but when it was started and its tags, which differ between the shards of
    /// one run.
    pub fn differs_from(&self, other: &Manifest) -> Option<&'static str> {
        let parts: [(&'static str, bool); 14] = [
            ("the format", self.format == other.format),
            ("the run id", self.run_id == other.run_id),
            (
                "the program version",
                self.program_version == other.program_version,
            ),
            ("the git commit", self.git_commit == other.git_commit),
            ("the harness", self.harness == other.harness),
            (
                "the harness's sources",
                self.harness_hash == other.harness_hash,
            ),
            ("the module", self.module == other.module),
            ("the game", self.game == other.game),
            ("the game options", self.game_options == other.game_options),
            ("the metrics", self.metrics == other.metrics),
            ("the plan", self.plan == other.plan),
            (
                "the settings",
                self.settings == other.settings && self.set_json == other.set_json,
            ),
            ("the effective settings", self.effective == other.effective),
            ("the LLM configuration", self.llm == other.llm),
        ];
        parts
            .into_iter()
            .find(|(_, same)| !same)
            .map(|(what, _)| what)
    }
}

/// Every setting in effect for one arm.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ArmSettings {
    /// The arm.
    pub arm: String,
    /// Config parameters then tunables, as name and value (in the language's notation).
    pub values: Vec<(String, String)>,
}

/// One finished episode, as stored under `games/`, in `games.jsonl` and (flattened) in
/// `games.csv`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GameRecord {
    /// The arm's name.
    pub arm: String,
    /// The game instance.
    pub instance: String,
    /// The seed.
    pub seed: u64,
    /// The replicate.
    pub replicate: u32,
    /// How the episode ended: `game_over`, `turn_limit`, `halted` or `error`.
    pub end: String,
    /// The reason the harness gave when it ended the episode with `halt`.
    pub halt: Option<String>,
    /// The runtime error that ended it, as `CODE: message`, if any.
    pub error: Option<String>,
    /// The game's metrics at the end, as JSON values.
    pub metrics: BTreeMap<String, serde_json::Value>,
    /// What the episode cost the runtime.
    pub costs: Costs,
}

impl GameRecord {
    /// Whether this record is the episode of `unit` under arm `arm`.
    pub fn is_for(&self, arm: &str, unit: &Unit) -> bool {
        self.arm == arm
            && self.instance == unit.instance
            && self.seed == unit.seed
            && self.replicate == unit.replicate
    }
}

/// Finished episodes with their units, in plan order.
pub type Finished = Vec<(Unit, GameRecord)>;

/// Why a folder could not be used as a run folder.
#[derive(Debug)]
pub enum FolderError {
    /// Reading or writing failed.
    Io(PathBuf, io::Error),
    /// The folder has no manifest: it is not a run folder.
    NotARun(PathBuf),
    /// A file exists but is not what this program writes.
    Corrupt(PathBuf, String),
    /// The manifest was written by a different format version or program.
    Foreign(PathBuf, String),
    /// The folder exists already and resuming was not asked for.
    Exists(PathBuf),
    /// A shard joined a folder that holds another run: what differs.
    OtherRun(PathBuf, String),
}

impl std::fmt::Display for FolderError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FolderError::Io(path, error) => {
                write!(f, "cannot access `{}`: {error}", path.display())
            }
            FolderError::NotARun(path) => write!(
                f,
                "`{}` is not a run folder: it has no manifest.json (run folders are created by \
                 `harness ablate` under results/runs/)",
                path.display()
            ),
            FolderError::Corrupt(path, why) => write!(
                f,
                "`{}` is corrupt: {why}; delete that file and resume the run with \
                 `harness ablate --resume` to redo what it held",
                path.display()
            ),
            FolderError::Foreign(path, why) => write!(
                f,
                "`{}` was not written by this version of harness: {why}",
                path.display()
            ),
            FolderError::Exists(path) => write!(
                f,
                "`{}` exists already; pass --resume to finish it or choose another run id",
                path.display()
            ),
            FolderError::OtherRun(path, what) => write!(
                f,
                "`{}` holds another run ({what} differs); every shard of a run must be started \
                 with the same harness, plan and settings, or choose another --run-id",
                path.display()
            ),
        }
    }
}

impl std::error::Error for FolderError {}

/// An open run folder.
#[derive(Debug)]
pub struct RunFolder {
    root: PathBuf,
    manifest: Manifest,
}

impl RunFolder {
    /// Creates a new run folder under `parent` named after the manifest's run id.
    pub fn create(parent: &Path, manifest: Manifest) -> Result<RunFolder, FolderError> {
        let root = parent.join(&manifest.run_id);
        if root.exists() {
            return Err(FolderError::Exists(root));
        }
        fs::create_dir_all(&root).map_err(|error| FolderError::Io(root.clone(), error))?;
        let folder = RunFolder { root, manifest };
        folder.write_json("manifest.json", &folder.manifest)?;
        Ok(folder)
    }

    /// Creates the run folder, or joins it when another shard of the same run created it
    /// first. The manifest is written into a staging folder that is renamed into place, so a
    /// shard never sees a run folder without its manifest, and of two shards starting at once
    /// exactly one creates it. A folder that holds another run is refused.
    pub fn create_or_join(parent: &Path, manifest: Manifest) -> Result<RunFolder, FolderError> {
        let root = parent.join(&manifest.run_id);
        if !root.exists() {
            let staging = parent.join(format!(
                ".{}.{}.staging",
                manifest.run_id,
                std::process::id()
            ));
            let staged = RunFolder {
                root: staging.clone(),
                manifest: manifest.clone(),
            };
            let created = fs::create_dir_all(&staging)
                .map_err(|error| FolderError::Io(staging.clone(), error))
                .and_then(|()| staged.write_json("manifest.json", &manifest))
                .and_then(|()| {
                    fs::rename(&staging, &root)
                        .map_err(|error| FolderError::Io(root.clone(), error))
                });
            match created {
                Ok(()) => return Ok(RunFolder { root, manifest }),
                // Another shard renamed its folder into place first: join it.
                Err(_) if root.join("manifest.json").exists() => {
                    let _ = fs::remove_dir_all(&staging);
                }
                Err(error) => {
                    let _ = fs::remove_dir_all(&staging);
                    return Err(error);
                }
            }
        }
        let existing = RunFolder::open(&root)?;
        if let Some(what) = existing.manifest.differs_from(&manifest) {
            return Err(FolderError::OtherRun(root, what.to_string()));
        }
        Ok(existing)
    }

    /// Opens an existing run folder, checking that it is one of ours and readable.
    pub fn open(root: &Path) -> Result<RunFolder, FolderError> {
        if !root.is_dir() {
            return Err(FolderError::Io(
                root.to_path_buf(),
                io::Error::new(io::ErrorKind::NotFound, "no such directory"),
            ));
        }
        let path = root.join("manifest.json");
        if !path.exists() {
            return Err(FolderError::NotARun(root.to_path_buf()));
        }
        let text =
            fs::read_to_string(&path).map_err(|error| FolderError::Io(path.clone(), error))?;
        let value: serde_json::Value = serde_json::from_str(&text)
            .map_err(|error| FolderError::Corrupt(path.clone(), format!("not JSON ({error})")))?;
        match value.get("format").and_then(|format| format.as_str()) {
            Some(FORMAT) => {}
            Some(other) => {
                return Err(FolderError::Foreign(
                    path,
                    format!(
                        "its format is `{other}`, this program reads `{FORMAT}`; rerun the \
                         experiment with this version"
                    ),
                ));
            }
            None => {
                return Err(FolderError::Foreign(
                    path,
                    "its manifest has no format tag".into(),
                ));
            }
        }
        let manifest: Manifest = serde_json::from_value(value).map_err(|error| {
            FolderError::Corrupt(path.clone(), format!("bad manifest ({error})"))
        })?;
        Ok(RunFolder {
            root: root.to_path_buf(),
            manifest,
        })
    }

    /// The manifest.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// The folder's path.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The file stem of a unit's files: `<instance>-s<seed>`, plus `-r<k>` for replicate k > 0.
    fn stem(unit: &Unit) -> String {
        let mut stem = format!("{}-s{}", slug(&unit.instance), unit.seed);
        if unit.replicate > 0 {
            stem.push_str(&format!("-r{}", unit.replicate));
        }
        stem
    }

    /// The relative path of a unit's file in `kind` (`games`, `traces`, `llm`) with `ext`.
    fn unit_path(&self, kind: &str, unit: &Unit, ext: &str) -> PathBuf {
        let arm = self
            .manifest
            .plan
            .arms
            .get(unit.arm)
            .map(|arm| slug(&arm.name))
            .unwrap_or_default();
        Path::new(kind)
            .join(arm)
            .join(format!("{}.{ext}", Self::stem(unit)))
    }

    /// Records a finished episode and its trace, which `trace` writes (as JSON lines) through
    /// a buffered writer. The trace is written first, so an episode that counts as finished
    /// always has its trace.
    pub fn record_game(
        &self,
        unit: &Unit,
        record: &GameRecord,
        trace: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>,
    ) -> Result<(), FolderError> {
        self.write_with(&self.unit_path("traces", unit, "jsonl"), trace)?;
        self.write_json(self.unit_path("games", unit, "json"), record)
    }

    /// Writes an episode's LLM accounting (one JSON object per call, latency included).
    pub fn record_llm_calls<T: Serialize>(
        &self,
        unit: &Unit,
        calls: &[T],
    ) -> Result<(), FolderError> {
        let path = self.unit_path("llm", unit, "jsonl");
        let mut text = String::new();
        for call in calls {
            let line = serde_json::to_string(call)
                .map_err(|error| FolderError::Corrupt(self.root.join(&path), error.to_string()))?;
            text.push_str(&line);
            text.push('\n');
        }
        self.write_bytes(&path, text.as_bytes())
    }

    /// Reads a finished episode's record, or `None` if it has not finished. A record that names
    /// another slot (a file copied or moved by hand) is corrupt: it is not this unit's result.
    pub fn finished_game(&self, unit: &Unit) -> Result<Option<GameRecord>, FolderError> {
        let path = self.root.join(self.unit_path("games", unit, "json"));
        if !path.exists() {
            return Ok(None);
        }
        let text =
            fs::read_to_string(&path).map_err(|error| FolderError::Io(path.clone(), error))?;
        let record: GameRecord = serde_json::from_str(&text).map_err(|error| {
            FolderError::Corrupt(path.clone(), format!("bad game record ({error})"))
        })?;
        let arm = self
            .manifest
            .plan
            .arms
            .get(unit.arm)
            .map_or("", |arm| arm.name.as_str());
        if !record.is_for(arm, unit) {
            return Err(FolderError::Corrupt(
                path,
                format!(
                    "it holds the episode of {} {} seed {} replicate {}, not of this slot",
                    record.arm, record.instance, record.seed, record.replicate
                ),
            ));
        }
        Ok(Some(record))
    }

    /// Every finished episode of the plan, in plan order, with the units still missing.
    pub fn records(&self) -> Result<(Finished, Vec<Unit>), FolderError> {
        let mut done = Vec::new();
        let mut missing = Vec::new();
        for unit in self.manifest.plan.units() {
            match self.finished_game(&unit)? {
                Some(record) => done.push((unit, record)),
                None => missing.push(unit),
            }
        }
        Ok((done, missing))
    }

    /// Reads a finished episode's trace.
    pub fn trace(&self, unit: &Unit) -> Result<String, FolderError> {
        let path = self.root.join(self.unit_path("traces", unit, "jsonl"));
        fs::read_to_string(&path).map_err(|error| FolderError::Io(path, error))
    }

    /// Reads a finished episode's LLM accounting (empty when it made no call).
    pub fn llm_calls<T: DeserializeOwned>(&self, unit: &Unit) -> Result<Vec<T>, FolderError> {
        let path = self.root.join(self.unit_path("llm", unit, "jsonl"));
        if !path.exists() {
            return Ok(Vec::new());
        }
        let text =
            fs::read_to_string(&path).map_err(|error| FolderError::Io(path.clone(), error))?;
        text.lines()
            .filter(|line| !line.trim().is_empty())
            .map(|line| {
                serde_json::from_str(line).map_err(|error| {
                    FolderError::Corrupt(path.clone(), format!("bad LLM call ({error})"))
                })
            })
            .collect()
    }

    /// Rewrites `games.jsonl` and `games.csv` from the given records, in the order given.
    pub fn write_games_index(&self, records: &[GameRecord]) -> Result<(), FolderError> {
        let mut text = String::new();
        for record in records {
            let line = serde_json::to_string(record).map_err(|error| {
                FolderError::Corrupt(self.root.join("games.jsonl"), error.to_string())
            })?;
            text.push_str(&line);
            text.push('\n');
        }
        self.write_bytes(Path::new("games.jsonl"), text.as_bytes())?;
        let csv = games_csv(&self.manifest.metrics, records);
        self.write_bytes(Path::new("games.csv"), csv.as_bytes())
    }

    /// Writes the run's summary.
    pub fn write_summary<T: Serialize>(&self, summary: &T) -> Result<(), FolderError> {
        self.write_json(Path::new("summary.json"), summary)
    }

    fn write_json<T: Serialize>(
        &self,
        relative: impl AsRef<Path>,
        value: &T,
    ) -> Result<(), FolderError> {
        let relative = relative.as_ref();
        let mut text = serde_json::to_string_pretty(value)
            .map_err(|error| FolderError::Corrupt(self.root.join(relative), error.to_string()))?;
        text.push('\n');
        self.write_bytes(relative, text.as_bytes())
    }

    /// Writes `bytes` to `relative` atomically: a temporary sibling, then a rename over the
    /// target. A killed run therefore never leaves a torn file, and a failed write removes its
    /// temporary file. The data is not fsynced: that would guard against a power cut, not an
    /// interruption, and would cost more than the games themselves on a fast suite.
    fn write_bytes(&self, relative: &Path, bytes: &[u8]) -> Result<(), FolderError> {
        self.write_with(relative, &mut |file| file.write_all(bytes))
    }

    /// [`RunFolder::write_bytes`] for contents that `write` produces piece by piece, through a
    /// buffer: a trace is written as it is serialised, never held whole in memory.
    fn write_with(
        &self,
        relative: &Path,
        write: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>,
    ) -> Result<(), FolderError> {
        let path = self.root.join(relative);
        let io_error = |error| FolderError::Io(path.clone(), error);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(io_error)?;
        }
        // The process id keeps the temporary names of concurrent shards apart when both
        // write the run's index files.
        let mut temporary = path.clone().into_os_string();
        temporary.push(format!(".{}.tmp", std::process::id()));
        let temporary = PathBuf::from(temporary);
        let written = fs::File::create(&temporary)
            .and_then(|file| {
                let mut file = io::BufWriter::with_capacity(WRITE_BUFFER, file);
                write(&mut file)?;
                file.flush()
            })
            .and_then(|()| fs::rename(&temporary, &path));
        if let Err(error) = written {
            let _ = fs::remove_file(&temporary);
            return Err(io_error(error));
        }
        Ok(())
    }
}

/// A CSV field: quoted when it holds a comma, a quote or a line break.
pub fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// One JSON metric value as a CSV field: numbers as they are, booleans as 1 and 0.
fn csv_value(value: Option<&serde_json::Value>) -> String {
    match value {
        None | Some(serde_json::Value::Null) => String::new(),
        Some(serde_json::Value::Bool(b)) => u8::from(*b).to_string(),
        Some(serde_json::Value::String(text)) => csv_field(text),
        Some(other) => csv_field(&other.to_string()),
    }
}

/// The records as one flat CSV table: the unit, the end, every declared metric (then any other
/// the games reported) and every cost counter.
pub fn games_csv(metrics: &[MetricSpec], records: &[GameRecord]) -> String {
    let mut names: Vec<String> = metrics.iter().map(|m| m.name.clone()).collect();
    for record in records {
        for name in record.metrics.keys() {
            if !names.contains(name) {
                names.push(name.clone());
            }
        }
    }
    let mut out = String::from("arm,instance,seed,replicate,end,halt,error");
    for name in &names {
        out.push(',');
        out.push_str(&csv_field(name));
    }
    for name in Costs::NAMES {
        out.push(',');
        out.push_str(name);
    }
    out.push('\n');
    for record in records {
        let fields = [
            csv_field(&record.arm),
            csv_field(&record.instance),
            record.seed.to_string(),
            record.replicate.to_string(),
            record.end.clone(),
            csv_field(record.halt.as_deref().unwrap_or("")),
            csv_field(record.error.as_deref().unwrap_or("")),
        ];
        out.push_str(&fields.join(","));
        for name in &names {
            out.push(',');
            out.push_str(&csv_value(record.metrics.get(name)));
        }
        for (_, value) in record.costs.pairs() {
            out.push(',');
            out.push_str(&value.to_string());
        }
        out.push('\n');
    }
    out
}

/// A file-name-safe form of a name: lower-case `[a-z0-9-]`, at most 80 characters.
pub fn slug(name: &str) -> String {
    let mut out = String::new();
    for ch in name.chars() {
        let ch = ch.to_ascii_lowercase();
        if ch.is_ascii_alphanumeric() {
            out.push(ch);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let trimmed = out.trim_matches('-');
    trimmed.chars().take(80).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Arm, ArmRole};

    fn manifest(run_id: &str) -> Manifest {
        Manifest {
            format: FORMAT.into(),
            run_id: run_id.into(),
            created: "2026-12-01T00:00:00Z".into(),
            program_version: "0.1.0".into(),
            git_commit: None,
            harness: "harnesses/x".into(),
            harness_hash: "abc".into(),
            module: "x".into(),
            game: "g".into(),
            game_options: Vec::new(),
            metrics: Vec::new(),
            plan: Plan {
                arms: vec![Arm {
                    name: "L1".into(),
                    layers: vec!["a".into()],
                    set: Vec::new(),
                    role: ArmRole::Cumulative,
                    point: String::new(),
                }],
                instances: vec!["i1".into(), "i2".into()],
                seeds: vec![0],
                replicates: 1,
                contrasts: Vec::new(),
            },
            settings: Vec::new(),
            set_json: Vec::new(),
            effective: Vec::new(),
            llm: None,
            tags: Vec::new(),
        }
    }

    fn record(instance: &str) -> GameRecord {
        GameRecord {
            arm: "L1".into(),
            instance: instance.into(),
            seed: 0,
            replicate: 0,
            end: "game_over".into(),
            halt: None,
            error: None,
            metrics: BTreeMap::from([("won".to_string(), serde_json::json!(true))]),
            costs: Costs::default(),
        }
    }

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("harness-folder-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// Every temporary file under `dir`, however deep.
    fn temporaries(dir: &Path) -> Vec<PathBuf> {
        let mut found = Vec::new();
        let mut pending = vec![dir.to_path_buf()];
        while let Some(dir) = pending.pop() {
            for entry in fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    pending.push(path);
                } else if path.to_string_lossy().ends_with(".tmp") {
                    found.push(path);
                }
            }
        }
        found
    }

    #[test]
    fn shards_join_the_folder_of_their_run_and_refuse_another() {
        let parent = scratch("shards");
        let first = RunFolder::create_or_join(&parent, manifest("run-4")).unwrap();
        let mut later = manifest("run-4");
        later.created = "2026-12-01T00:05:00Z".into();
        later.tags = vec!["shard 2".into()];
        let joined = RunFolder::create_or_join(&parent, later).unwrap();
        assert_eq!(
            joined.manifest(),
            first.manifest(),
            "the first manifest stays"
        );
        let mut other = manifest("run-4");
        other.plan.seeds = vec![0, 1];
        let error = RunFolder::create_or_join(&parent, other).unwrap_err();
        assert!(error.to_string().contains("the plan differs"), "{error}");
        let names: Vec<_> = fs::read_dir(&parent)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, vec!["run-4"], "no staging folder is left");
        fs::remove_dir_all(parent).unwrap();
    }

    #[test]
    fn a_recorded_game_survives_reopening_and_is_checked_against_its_slot() {
        let parent = scratch("reopen");
        let folder = RunFolder::create(&parent, manifest("run-1")).unwrap();
        let units = folder.manifest().plan.units();
        assert_eq!(folder.finished_game(&units[0]).unwrap(), None);
        folder
            .record_game(&units[0], &record("i1"), &mut |file| {
                file.write_all(b"{\"turn\":1}\n")
            })
            .unwrap();
        let reopened = RunFolder::open(&parent.join("run-1")).unwrap();
        assert_eq!(reopened.manifest(), &manifest("run-1"));
        assert_eq!(
            reopened.finished_game(&units[0]).unwrap(),
            Some(record("i1"))
        );
        assert_eq!(reopened.trace(&units[0]).unwrap(), "{\"turn\":1}\n");
        let (done, missing) = reopened.records().unwrap();
        assert_eq!((done.len(), missing.len()), (1, 1));
        // A record copied into another slot is not that slot's result.
        fs::copy(
            parent.join("run-1/games/l1/i1-s0.json"),
            parent.join("run-1/games/l1/i2-s0.json"),
        )
        .unwrap();
        let error = reopened.finished_game(&units[1]).unwrap_err();
        assert!(error.to_string().contains("not of this slot"), "{error}");
        assert!(matches!(
            RunFolder::create(&parent, manifest("run-1")),
            Err(FolderError::Exists(_))
        ));
        assert_eq!(
            temporaries(&parent.join("run-1")),
            Vec::<PathBuf>::new(),
            "no temporary file is left behind"
        );
        fs::remove_dir_all(parent).unwrap();
    }

    #[test]
    fn foreign_and_corrupt_folders_are_refused_with_a_reason() {
        let parent = scratch("foreign");
        let empty = parent.join("empty");
        fs::create_dir_all(&empty).unwrap();
        let error = RunFolder::open(&empty).unwrap_err();
        assert!(error.to_string().contains("not a run folder"), "{error}");

        let garbled = parent.join("garbled");
        fs::create_dir_all(&garbled).unwrap();
        fs::write(garbled.join("manifest.json"), "{not json").unwrap();
        assert!(matches!(
            RunFolder::open(&garbled),
            Err(FolderError::Corrupt(..))
        ));

        let other = parent.join("other");
        fs::create_dir_all(&other).unwrap();
        fs::write(other.join("manifest.json"), r#"{"format":"harness-run/1"}"#).unwrap();
        let error = RunFolder::open(&other).unwrap_err();
        assert!(matches!(error, FolderError::Foreign(..)), "{error}");

        let folder = RunFolder::create(&parent, manifest("run-2")).unwrap();
        let unit = &folder.manifest().plan.units()[0];
        fs::create_dir_all(parent.join("run-2/games/l1")).unwrap();
        fs::write(parent.join("run-2/games/l1/i1-s0.json"), "{").unwrap();
        assert!(matches!(
            folder.finished_game(unit),
            Err(FolderError::Corrupt(..))
        ));
        fs::remove_dir_all(parent).unwrap();
    }

    #[test]
    fn a_failed_write_leaves_no_temporary_file() {
        let parent = scratch("failed-write");
        let folder = RunFolder::create(&parent, manifest("run-3")).unwrap();
        let unit = folder.manifest().plan.units()[0].clone();
        // A directory where the record's file should go makes the rename fail.
        fs::create_dir_all(parent.join("run-3/games/l1/i1-s0.json/blocker")).unwrap();
        assert!(
            folder
                .record_game(&unit, &record("i1"), &mut |_| Ok(()))
                .is_err()
        );
        assert_eq!(temporaries(&parent.join("run-3")), Vec::<PathBuf>::new());
        fs::remove_dir_all(parent).unwrap();
    }

    #[test]
    fn csv_rows_flatten_metrics_and_costs() {
        let csv = games_csv(&[], &[record("a,b")]);
        let mut lines = csv.lines();
        assert_eq!(
            lines.next().unwrap(),
            "arm,instance,seed,replicate,end,halt,error,won,turns,steps,previews,revisions,llm_calls,llm_turns,prompt_tokens,completion_tokens,overrides"
        );
        assert_eq!(
            lines.next().unwrap(),
            "L1,\"a,b\",0,0,game_over,,,1,0,0,0,0,0,0,0,0,0"
        );
    }

    #[test]
    fn slugs_are_file_name_safe() {
        assert_eq!(slug("L1-L2"), "l1-l2");
        assert_eq!(slug("without reflection"), "without-reflection");
        assert_eq!(slug("../etc/passwd"), "etc-passwd");
    }
}
