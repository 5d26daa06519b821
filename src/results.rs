//! Result folders: one directory per experiment run, written atomically and resumable.
//!
//! Layout of `results/runs/<run-id>/`:
//!
//! ```text
//! manifest.json                      what was run: harness hash, layers, configuration, seeds
//! games/<stack>/<instance>-s<k>.json one finished game (the source of truth for resuming)
//! traces/<stack>/<instance>-s<k>.jsonl  its event trace
//! games.jsonl                        one line per finished game, rebuilt from games/
//! summary.json                       the report, written when the run completes
//! ```
//!
//! Every file is written to a temporary name and renamed into place, so a run killed at any
//! moment leaves either the old or the new content, never a torn file. A game counts as finished
//! exactly when its file under `games/` exists; resuming skips those and runs the rest.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// The format tag written into every manifest; a folder with another tag is not ours.
pub const FORMAT: &str = "harness-run/1";

/// What a run is: everything needed to redo it or to resume it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Always [`FORMAT`].
    pub format: String,
    /// The run's id, also its folder name.
    pub run_id: String,
    /// The `harness` version that wrote the run.
    pub program_version: String,
    /// The harness that was run (a file or a directory).
    pub harness: String,
    /// SHA-256 of the harness sources, in path order.
    pub harness_hash: String,
    /// The game played.
    pub game: String,
    /// The stacks (named layer sets) that were run.
    pub stacks: Vec<StackSpec>,
    /// The game instances, in order.
    pub instances: Vec<String>,
    /// Replicates per instance.
    pub seeds: u32,
    /// Every other setting (protocol, belief, particles, `--set` values...), as name and value.
    pub settings: Vec<(String, String)>,
}

/// A named layer set.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StackSpec {
    /// The stack's name, e.g. `L1-L2`.
    pub name: String,
    /// The enabled layers.
    pub layers: Vec<String>,
}

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
                "`{}` is corrupt: {why}; move it away and rerun, or resume a different run",
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
                    format!("its format is `{other}`, this program reads `{FORMAT}`"),
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

    /// The relative path of a game's record.
    fn game_path(stack: &str, instance: &str, seed_index: u32) -> PathBuf {
        Path::new("games")
            .join(slug(stack))
            .join(format!("{}-s{seed_index}.json", slug(instance)))
    }

    /// Records a finished game and its trace. The trace is written first, so a game that counts
    /// as finished always has its trace.
    pub fn record_game<T: Serialize>(
        &self,
        stack: &str,
        instance: &str,
        seed_index: u32,
        record: &T,
        trace: &str,
    ) -> Result<(), FolderError> {
        let trace_path = Path::new("traces")
            .join(slug(stack))
            .join(format!("{}-s{seed_index}.jsonl", slug(instance)));
        self.write_bytes(&trace_path, trace.as_bytes())?;
        self.write_json(Self::game_path(stack, instance, seed_index), record)
    }

    /// Writes a game's LLM accounting (one JSON object per call, latency included) to
    /// `llm/<stack>/<instance>-s<k>.jsonl`, atomically.
    pub fn record_llm_calls<T: Serialize>(
        &self,
        stack: &str,
        instance: &str,
        seed_index: u32,
        calls: &[T],
    ) -> Result<(), FolderError> {
        let path = Path::new("llm")
            .join(slug(stack))
            .join(format!("{}-s{seed_index}.jsonl", slug(instance)));
        let mut text = String::new();
        for call in calls {
            let line = serde_json::to_string(call)
                .map_err(|error| FolderError::Corrupt(self.root.join(&path), error.to_string()))?;
            text.push_str(&line);
            text.push('\n');
        }
        self.write_bytes(&path, text.as_bytes())
    }

    /// Reads a finished game's record, or `None` if the game has not finished.
    pub fn finished_game<T: DeserializeOwned>(
        &self,
        stack: &str,
        instance: &str,
        seed_index: u32,
    ) -> Result<Option<T>, FolderError> {
        let path = self.root.join(Self::game_path(stack, instance, seed_index));
        if !path.exists() {
            return Ok(None);
        }
        let text =
            fs::read_to_string(&path).map_err(|error| FolderError::Io(path.clone(), error))?;
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|error| FolderError::Corrupt(path, format!("bad game record ({error})")))
    }

    /// Reads a finished game's trace.
    pub fn trace(
        &self,
        stack: &str,
        instance: &str,
        seed_index: u32,
    ) -> Result<String, FolderError> {
        let path = self
            .root
            .join("traces")
            .join(slug(stack))
            .join(format!("{}-s{seed_index}.jsonl", slug(instance)));
        fs::read_to_string(&path).map_err(|error| FolderError::Io(path, error))
    }

    /// Rewrites `games.jsonl` from the given records, in the order given.
    pub fn write_games_index<T: Serialize>(&self, records: &[T]) -> Result<(), FolderError> {
        let mut text = String::new();
        for record in records {
            let line = serde_json::to_string(record).map_err(|error| {
                FolderError::Corrupt(self.root.join("games.jsonl"), error.to_string())
            })?;
            text.push_str(&line);
            text.push('\n');
        }
        self.write_bytes(Path::new("games.jsonl"), text.as_bytes())
    }

    /// Writes the run's summary.
    pub fn write_summary<T: Serialize>(&self, summary: &T) -> Result<(), FolderError> {
        self.write_json(Path::new("summary.json"), summary)
    }

    /// Reads the run's summary, if the run completed.
    pub fn summary<T: DeserializeOwned>(&self) -> Result<Option<T>, FolderError> {
        let path = self.root.join("summary.json");
        if !path.exists() {
            return Ok(None);
        }
        let text =
            fs::read_to_string(&path).map_err(|error| FolderError::Io(path.clone(), error))?;
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|error| FolderError::Corrupt(path, format!("bad summary ({error})")))
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
    /// target. A killed run therefore never leaves a torn file. The data is not fsynced: that
    /// would guard against a power cut, not an interruption, and would cost more than the games
    /// themselves on a fast suite.
    fn write_bytes(&self, relative: &Path, bytes: &[u8]) -> Result<(), FolderError> {
        let path = self.root.join(relative);
        let io_error = |error| FolderError::Io(path.clone(), error);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(io_error)?;
        }
        let mut temporary = path.clone().into_os_string();
        temporary.push(".tmp");
        let temporary = PathBuf::from(temporary);
        let mut file = fs::File::create(&temporary).map_err(io_error)?;
        file.write_all(bytes).map_err(io_error)?;
        fs::rename(&temporary, &path).map_err(io_error)
    }
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

    fn manifest(run_id: &str) -> Manifest {
        Manifest {
            format: FORMAT.into(),
            run_id: run_id.into(),
            program_version: "0.1.0".into(),
            harness: "harnesses/battleship".into(),
            harness_hash: "abc".into(),
            game: "battleship".into(),
            stacks: vec![StackSpec {
                name: "L1".into(),
                layers: vec!["belief".into()],
            }],
            instances: vec!["B01".into()],
            seeds: 1,
            settings: vec![("protocol".into(), "paper".into())],
        }
    }

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("harness-results-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_recorded_game_survives_reopening() {
        let parent = scratch("reopen");
        let folder = RunFolder::create(&parent, manifest("run-1")).unwrap();
        assert_eq!(folder.finished_game::<u32>("L1", "B01", 0).unwrap(), None);
        folder
            .record_game("L1", "B01", 0, &7u32, "{\"turn\":1}\n")
            .unwrap();
        let reopened = RunFolder::open(&parent.join("run-1")).unwrap();
        assert_eq!(reopened.manifest(), &manifest("run-1"));
        assert_eq!(
            reopened.finished_game::<u32>("L1", "B01", 0).unwrap(),
            Some(7)
        );
        assert_eq!(reopened.trace("L1", "B01", 0).unwrap(), "{\"turn\":1}\n");
        assert!(matches!(
            RunFolder::create(&parent, manifest("run-1")),
            Err(FolderError::Exists(_))
        ));
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
        fs::write(
            other.join("manifest.json"),
            r#"{"format":"someone-else/9"}"#,
        )
        .unwrap();
        let error = RunFolder::open(&other).unwrap_err();
        assert!(matches!(error, FolderError::Foreign(..)), "{error}");

        let folder = RunFolder::create(&parent, manifest("run-2")).unwrap();
        fs::create_dir_all(parent.join("run-2/games/l1")).unwrap();
        fs::write(parent.join("run-2/games/l1/b01-s0.json"), "{").unwrap();
        assert!(matches!(
            folder.finished_game::<u32>("L1", "B01", 0),
            Err(FolderError::Corrupt(..))
        ));
        fs::remove_dir_all(parent).unwrap();
    }

    #[test]
    fn slugs_are_file_name_safe() {
        assert_eq!(slug("L1-L2"), "l1-l2");
        assert_eq!(slug("without reflection"), "without-reflection");
        assert_eq!(slug("../etc/passwd"), "etc-passwd");
    }
}
