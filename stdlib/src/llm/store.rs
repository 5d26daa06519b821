//! Record and replay: request/response pairs stored by request hash, replicate and occurrence.
//!
//! Store format 2 keys an exchange by the request hash plus the replicate (the episode's seed)
//! and the occurrence (the k-th time the episode made that request), so N replicates recorded at
//! a temperature above zero replay N different answers. A directory in format 2 has a
//! `store.json` naming the provider, model and decoding settings it was recorded with, so
//! replaying it needs no flags. Format 1 (`<hash>.json`, one answer per request, no
//! `store.json`) stays readable: its single answer serves every replicate and occurrence.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::config::ProviderKind;
use super::failure::LlmFailure;
use super::request::Decoding;

/// The version of the stored-call file format written now.
pub const STORE_FORMAT: u32 = 2;

/// The name of a format-2 directory's description file.
pub const STORE_MANIFEST: &str = "store.json";

/// What one live call ended with, before the reply was parsed or validated.
///
/// Storing the raw exchange rather than the validated value means replay runs the same
/// parsing and validation again, so a replayed run takes exactly the recorded run's branches,
/// including its failures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum Exchange {
    /// The server answered; the body has the API key scrubbed out.
    Reply {
        /// The HTTP status code.
        status: u16,
        /// The response body.
        body: String,
    },
    /// No answer arrived: a transport failure or a timeout, after all retries.
    Failed {
        /// The failure.
        failure: LlmFailure,
    },
}

/// Where a recorded answer belongs: which request, in which replicate, the how-manyth time.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RecordKey {
    /// The request hash.
    pub hash: String,
    /// The replicate: the seed of the episode that made the call.
    pub replicate: u64,
    /// How many times the episode had made this request, counting this call (from 1).
    pub occurrence: u32,
    /// The key the first store format gave the same request, when it could have recorded it.
    pub first_format_hash: Option<String>,
}

impl std::fmt::Display for RecordKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-r{}-o{}", self.hash, self.replicate, self.occurrence)
    }
}

/// One recorded call: the request as hashed, and what came back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredCall {
    /// The file format: [`STORE_FORMAT`] when written now, 1 for older recordings.
    pub format: u32,
    /// The request hash.
    pub key: String,
    /// The replicate (format 2 only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicate: Option<u64>,
    /// The occurrence (format 2 only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub occurrence: Option<u32>,
    /// The canonical request (provider, model, messages, shape, decoding), for people reading
    /// the file; replay looks entries up by key only.
    pub request: Value,
    /// What came back.
    pub exchange: Exchange,
    /// The recorded latency, in milliseconds.
    pub latency_ms: u64,
    /// The recorded number of attempts.
    pub attempts: u32,
    /// Whether the server refused the reply's JSON Schema and the call was sent in JSON mode.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub schema_fallback: bool,
}

/// What a format-2 directory was recorded with: everything besides the request that went into
/// its hashes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoreManifest {
    /// [`STORE_FORMAT`].
    pub format: u32,
    /// The provider.
    pub provider: ProviderKind,
    /// The configured model.
    pub model: String,
    /// The decoding settings.
    pub decoding: Decoding,
}

/// Somewhere to keep recorded calls.
pub trait CallStore: Send + Sync {
    /// The call recorded under `key`, or `None` when there is none.
    fn load(&self, key: &RecordKey) -> io::Result<Option<StoredCall>>;
    /// Records `call` under its key, replacing any earlier entry.
    fn save(&self, call: &StoredCall) -> io::Result<()>;
}

/// A directory with one pretty-printed JSON file per recorded call:
/// `<dir>/<hash>-r<replicate>-o<occurrence>.json` (format 2) or `<dir>/<hash>.json` (format 1).
#[derive(Debug, Clone)]
pub struct DirStore {
    dir: PathBuf,
}

/// Distinguishes temporary files written by threads of the same process.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

impl DirStore {
    /// A store in `dir`; the directory is created on the first save.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        DirStore { dir: dir.into() }
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The description of a format-2 directory; `None` for a format-1 or empty one.
    pub fn manifest(&self) -> io::Result<Option<StoreManifest>> {
        let path = self.dir.join(STORE_MANIFEST);
        let text = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(error),
        };
        let manifest: StoreManifest = serde_json::from_str(&text)
            .map_err(|error| invalid(format!("{}: {error}", path.display())))?;
        if manifest.format != STORE_FORMAT {
            return Err(invalid(format!(
                "{}: store format {} is not {STORE_FORMAT}",
                path.display(),
                manifest.format
            )));
        }
        Ok(Some(manifest))
    }

    /// Prepares the directory for recording with `manifest`: writes `store.json`, or checks that
    /// the one there matches, so one directory never mixes recordings whose hashes mean
    /// different settings.
    pub fn prepare_for_recording(&self, manifest: &StoreManifest) -> io::Result<()> {
        fs::create_dir_all(&self.dir)?;
        match self.manifest()? {
            Some(existing) if &existing == manifest => Ok(()),
            Some(existing) => Err(invalid(format!(
                "{} holds a recording of provider {} model {:?} with other decoding settings \
                 than this run's (provider {} model {:?}); record into a fresh directory",
                self.dir.display(),
                existing.provider,
                existing.model,
                manifest.provider,
                manifest.model
            ))),
            None => {
                let text = serde_json::to_string_pretty(manifest).map_err(io::Error::other)?;
                write_atomically(
                    &self.dir,
                    &self.dir.join(STORE_MANIFEST),
                    STORE_MANIFEST,
                    &text,
                )
            }
        }
    }

    /// The file that holds the format-2 entry for `key`, or an error if its hash is not a hash
    /// (and so might name a path outside the directory).
    pub fn path_for(&self, key: &RecordKey) -> io::Result<PathBuf> {
        check_hash(&key.hash)?;
        Ok(self.dir.join(format!("{key}.json")))
    }

    /// The file that holds the format-1 entry for `hash`.
    pub fn first_format_path(&self, hash: &str) -> io::Result<PathBuf> {
        check_hash(hash)?;
        Ok(self.dir.join(format!("{hash}.json")))
    }
}

fn check_hash(hash: &str) -> io::Result<()> {
    if !hash.is_empty() && hash.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(())
    } else {
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("store key {hash:?} is not a hex hash"),
        ))
    }
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

fn read_call(path: &Path) -> io::Result<Option<StoredCall>> {
    let text = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(error),
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|error| invalid(format!("{}: {error}", path.display())))
}

impl CallStore for DirStore {
    fn load(&self, key: &RecordKey) -> io::Result<Option<StoredCall>> {
        let path = self.path_for(key)?;
        if let Some(call) = read_call(&path)? {
            let expected = (
                2,
                key.hash.as_str(),
                Some(key.replicate),
                Some(key.occurrence),
            );
            let found = (
                call.format,
                call.key.as_str(),
                call.replicate,
                call.occurrence,
            );
            if found != expected {
                return Err(invalid(format!(
                    "{}: holds format {} key {} replicate {:?} occurrence {:?}, not the entry \
                     its name says",
                    path.display(),
                    call.format,
                    call.key,
                    call.replicate,
                    call.occurrence
                )));
            }
            return Ok(Some(call));
        }
        let Some(first) = &key.first_format_hash else {
            return Ok(None);
        };
        let path = self.first_format_path(first)?;
        match read_call(&path)? {
            Some(call) if call.format == 1 && &call.key == first => Ok(Some(call)),
            Some(call) => Err(invalid(format!(
                "{}: format {} key {} does not match format 1 key {first}",
                path.display(),
                call.format,
                call.key
            ))),
            None => Ok(None),
        }
    }

    fn save(&self, call: &StoredCall) -> io::Result<()> {
        let key = RecordKey {
            hash: call.key.clone(),
            replicate: call.replicate.unwrap_or_default(),
            occurrence: call.occurrence.unwrap_or_default(),
            first_format_hash: None,
        };
        let path = self.path_for(&key)?;
        fs::create_dir_all(&self.dir)?;
        let text = serde_json::to_string_pretty(call).map_err(io::Error::other)?;
        write_atomically(&self.dir, &path, &key.to_string(), &text)
    }
}

/// Writes a uniquely named sibling, then renames it over the target: readers and a resumed run
/// never see half a file, and concurrent writers of the same file each replace it whole.
fn write_atomically(dir: &Path, path: &Path, stem: &str, text: &str) -> io::Result<()> {
    let unique = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let temp = dir.join(format!(".{stem}.{}-{unique}.tmp", std::process::id()));
    let written = fs::write(&temp, text).and_then(|()| fs::rename(&temp, path));
    if written.is_err() {
        // Best effort: a failed write must not leave litter that looks like a half entry.
        let _ = fs::remove_file(&temp);
    }
    written
}
