//! A stable-toolchain driver for the fuzz targets: `drive TARGET SECONDS [SEED]`, or
//! `drive TARGET FILE` to run a target once on a file (a crash, to reproduce it).
//!
//! cargo-fuzz needs a nightly compiler (sanitizer coverage); this driver runs the same target
//! functions ([`harness_grammar_fuzz::run`]) on any toolchain. It has no coverage feedback: it
//! mutates a seed corpus (every `.harness` file of the repository) with random edits, token
//! splices and cross-overs, seeded, for the given time. A failing input is written to
//! `crashes/TARGET-SEED-RUN.harness` and the driver exits with 1.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Words and fragments a mutation may insert: keywords, punctuation, and the aggregates and
/// previews that make programs expensive.
const DICTIONARY: &[&str] = &[
    "harness ",
    "use ",
    "game ",
    "type ",
    "enum ",
    "const ",
    "config ",
    "fn ",
    "error ",
    "layer ",
    "needs ",
    "state ",
    "tunable ",
    "computed ",
    "action ",
    "model ",
    "on ",
    "decide ",
    "revise ",
    "machine ",
    "when ",
    "let ",
    "if ",
    "else ",
    "match ",
    "patch ",
    "emit ",
    "requires ",
    "available ",
    "otherwise",
    "with probability ",
    "sim.next(",
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    ",",
    ".",
    ":",
    "=",
    "==",
    "=>",
    "->",
    "|x|",
    " + ",
    " * ",
    " and ",
    " not ",
    "\n",
    "  ",
    "///",
    "// c\n",
    "\"s\"",
    "0",
    "1",
    "1000000",
    "-1",
    "0.5",
    "Int",
    "Float",
    "List<Int>",
    "Option<Int>",
    "range(0, 1000000)",
    ".map(|i| i)",
    ".sum()",
    ".max_by(|c| 1.0)",
    "to_json(",
    "\u{feff}",
    "é",
];

/// A small, fast, seeded generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

fn harness_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for path in paths {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        if path.is_dir() && !matches!(name.as_deref(), Some("target" | ".git" | "crashes")) {
            harness_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "harness") {
            out.push(path);
        }
    }
}

/// One random edit of `input`.
fn mutate(rng: &mut Rng, input: &mut Vec<u8>, corpus: &[Vec<u8>]) {
    let len = input.len();
    let at = rng.below(len + 1);
    match rng.below(7) {
        0 if len > 0 => {
            let i = rng.below(len);
            input[i] = (rng.next() & 0xff) as u8;
        }
        1 => {
            let word = DICTIONARY[rng.below(DICTIONARY.len())];
            input.splice(at..at, word.bytes());
        }
        2 if len > 0 => {
            let end = (at + 1 + rng.below(64)).min(len);
            input.drain(at.min(end)..end);
        }
        3 if len > 0 => {
            let start = rng.below(len);
            let end = (start + 1 + rng.below(256)).min(len);
            let piece: Vec<u8> = input[start..end].to_vec();
            let to = rng.below(input.len() + 1);
            input.splice(to..to, piece);
        }
        4 => {
            let other = &corpus[rng.below(corpus.len())];
            if !other.is_empty() {
                let start = rng.below(other.len());
                let end = (start + 1 + rng.below(512)).min(other.len());
                input.splice(at..at, other[start..end].iter().copied());
            }
        }
        5 if len > 0 => input.truncate(at),
        _ => {
            let word = DICTIONARY[rng.below(DICTIONARY.len())];
            input.splice(at..at, word.bytes());
        }
    }
    input.truncate(64 << 10);
}

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let (Some(target), Some(file)) = (args.first(), args.get(1))
        && Path::new(file).is_file()
    {
        let input = std::fs::read(file).unwrap_or_default();
        return match std::panic::catch_unwind(|| harness_grammar_fuzz::run(target, &input)) {
            Ok(true) => {
                println!("{target}: {file} passes");
                std::process::ExitCode::SUCCESS
            }
            Ok(false) => {
                eprintln!("unknown target `{target}`");
                std::process::ExitCode::from(2)
            }
            Err(_) => std::process::ExitCode::FAILURE,
        };
    }
    let (Some(target), Some(seconds)) = (args.first(), args.get(1).and_then(|s| s.parse().ok()))
    else {
        eprintln!(
            "usage: drive TARGET SECONDS [SEED]; targets: {}",
            harness_grammar_fuzz::TARGETS.join(", ")
        );
        return std::process::ExitCode::from(2);
    };
    let seed: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1);
    if !harness_grammar_fuzz::run(target, b"") {
        eprintln!("unknown target `{target}`");
        return std::process::ExitCode::from(2);
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    harness_files(&root, &mut files);
    let corpus: Vec<Vec<u8>> = files.iter().filter_map(|f| std::fs::read(f).ok()).collect();
    if corpus.is_empty() {
        eprintln!("no seed files under {}", root.display());
        return std::process::ExitCode::from(2);
    }
    std::panic::set_hook(Box::new(|_| {}));
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let start = Instant::now();
    let budget = Duration::from_secs_f64(seconds);
    let (mut runs, mut largest) = (0u64, 0usize);
    // The seeds themselves first, then mutants of them.
    let mut queue: Vec<Vec<u8>> = corpus.clone();
    while start.elapsed() < budget {
        let input = queue.pop().unwrap_or_else(|| {
            let mut input = corpus[rng.below(corpus.len())].clone();
            for _ in 0..1 + rng.below(4) {
                mutate(&mut rng, &mut input, &corpus);
            }
            input
        });
        largest = largest.max(input.len());
        runs += 1;
        let outcome = std::panic::catch_unwind(|| harness_grammar_fuzz::run(target, &input));
        if let Err(payload) = outcome {
            let message = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_default();
            let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("crashes");
            let _ = std::fs::create_dir_all(&dir);
            let path = dir.join(format!("{target}-{seed}-{runs}.harness"));
            let _ = std::fs::write(&path, &input);
            println!(
                "{target}: FAILED after {runs} runs in {:.1} s: {message}\n  input: {}",
                start.elapsed().as_secs_f64(),
                path.display()
            );
            return std::process::ExitCode::FAILURE;
        }
    }
    println!(
        "{target}: {runs} runs in {:.1} s (seed {seed}, {} seed files, largest input {largest} bytes), no failure",
        start.elapsed().as_secs_f64(),
        corpus.len()
    );
    std::process::ExitCode::SUCCESS
}
