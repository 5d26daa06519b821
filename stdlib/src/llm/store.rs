//! Record and replay: request/response pairs stored by request hash.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::failure::LlmFailure;

/// The version of the stored-call file format.
pub const STORE_FORMAT: u32 = 1;

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

/// One recorded call: the request as hashed, and what came back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredCall {
    /// [`STORE_FORMAT`] at the time of writing.
    pub format: u32,
    /// The request hash; also the file name.
    pub key: String,
    /// The canonical request (provider, model, messages, shape, JSON mode), for people reading
    /// the file; replay looks entries up by key only.
    pub request: Value,
    /// What came back.
    pub exchange: Exchange,
    /// The recorded latency, in milliseconds.
    pub latency_ms: u64,
    /// The recorded number of attempts.
    pub attempts: u32,
}

/// Somewhere to keep recorded calls.
pub trait CallStore: Send + Sync {
    /// The call recorded under `key`, or `None` when there is none.
    fn load(&self, key: &str) -> io::Result<Option<StoredCall>>;
    /// Records `call` under `call.key`, replacing any earlier entry.
    fn save(&self, call: &StoredCall) -> io::Result<()>;
}

/// A directory with one pretty-printed JSON file per request hash: `<dir>/<hash>.json`.
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

    /// The file that holds `key`, or an error if `key` is not a hash (and so might name a path
    /// outside the directory).
    pub fn path_for(&self, key: &str) -> io::Result<PathBuf> {
        let is_hash = !key.is_empty() && key.bytes().all(|b| b.is_ascii_hexdigit());
        if is_hash {
            Ok(self.dir.join(format!("{key}.json")))
        } else {
            Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("store key {key:?} is not a hex hash"),
            ))
        }
    }
}

impl CallStore for DirStore {
    fn load(&self, key: &str) -> io::Result<Option<StoredCall>> {
        let path = self.path_for(key)?;
        let text = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(error),
        };
        let call: StoredCall = serde_json::from_str(&text).map_err(|error| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{}: {error}", path.display()),
            )
        })?;
        if call.format != STORE_FORMAT || call.key != key {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{}: format {} key {} does not match format {STORE_FORMAT} key {key}",
                    path.display(),
                    call.format,
                    call.key
                ),
            ));
        }
        Ok(Some(call))
    }

    fn save(&self, call: &StoredCall) -> io::Result<()> {
        let path = self.path_for(&call.key)?;
        fs::create_dir_all(&self.dir)?;
        let text = serde_json::to_string_pretty(call).map_err(io::Error::other)?;
        // Write a uniquely named sibling, then rename it over the target: readers and a
        // resumed run never see half a file, and concurrent games writing the same key each
        // replace the file whole.
        let unique = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
        let temp = self
            .dir
            .join(format!(".{}.{}-{unique}.tmp", call.key, std::process::id()));
        let written = fs::write(&temp, text).and_then(|()| fs::rename(&temp, &path));
        if written.is_err() {
            // Best effort: a failed write must not leave litter that looks like a half entry.
            let _ = fs::remove_file(&temp);
        }
        written
    }
}
