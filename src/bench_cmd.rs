//! `harness bench`: whole-process timings of pairs of commands from a bench file, run in turn
//! (A B A B …) so that both see the same machine, with each figure's median, minimum and
//! maximum and the ratio A/B pair by pair.
//!
//! A bench file is TOML:
//!
//! ```toml
//! runs = 5          # counted runs of each command (default 5)
//! warmup = 1        # runs of each command first, not counted (default 1)
//! # Commands run once before timing, untimed (to build what the pairs run).
//! build = [["cargo", "build", "--release", "--locked", "--example", "suite"]]
//! # A directory the commands write into, removed after every run so that runs do not pile up.
//! scratch = "target/bench-runs"
//!
//! [[pair]]
//! name = "L1"
//! a = { label = "language", cmd = ["harness", "ablate", "--stacks", "L1"], expect = ["27"] }
//! b = { label = "native", cmd = ["target/release/examples/suite"], expect = ["wins 27"] }
//! ```
//!
//! A command's first word `harness` is this executable, so a bench measures the build that runs
//! it; other programs are found as the shell would, relative paths from the current directory.
//! Each `expect` string must appear in every run's standard output: that is how a bench file
//! states that both commands of a pair did the same work (played the same games), without which
//! their ratio means nothing.
//!
//! CPU time is the kernel's accounting of each finished child (user + system, all its threads),
//! read from this process's own `/proc/self/stat` before and after the child is reaped, so it is
//! measured on Linux only (elsewhere only wall time is shown). The kernel counts it in ticks of
//! 1/100 s (`USER_HZ`, fixed at 100 by Linux's user-space interface).

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

use clap::{Args, ValueEnum};
use serde::{Deserialize, Serialize};

/// The flags of `harness bench`.
#[derive(Args, Debug)]
pub struct BenchArgs {
    /// The bench file (TOML: `runs`, `warmup`, `build` and `[[pair]]`s of commands).
    pub plan: PathBuf,
    /// Counted runs of each command (overrides the file's `runs`).
    #[arg(long)]
    pub runs: Option<usize>,
    /// Uncounted runs of each command first (overrides the file's `warmup`).
    #[arg(long)]
    pub warmup: Option<usize>,
    /// Run only the pairs of these names (comma-separated).
    #[arg(long, value_delimiter = ',')]
    pub pair: Vec<String>,
    /// Skip the file's `build` commands.
    #[arg(long)]
    pub no_build: bool,
    /// `human` for tables, `json` for one object.
    #[arg(long, value_enum, default_value = "human")]
    pub format: BenchFormat,
}

/// Output formats of `harness bench`.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum BenchFormat {
    /// Tables for a terminal.
    Human,
    /// One JSON object with every run's figures.
    Json,
}

/// A bench file.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct Plan {
    runs: Option<usize>,
    warmup: Option<usize>,
    #[serde(default)]
    build: Vec<Vec<String>>,
    scratch: Option<PathBuf>,
    pair: Vec<PairSpec>,
}

/// Two commands to time against each other.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct PairSpec {
    name: String,
    a: Side,
    b: Side,
}

/// One command of a pair.
#[derive(Deserialize, Serialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
struct Side {
    label: String,
    cmd: Vec<String>,
    #[serde(default)]
    expect: Vec<String>,
}

/// The minimum, median and maximum of a figure over the counted runs.
#[derive(Serialize, Debug, Clone, Copy, PartialEq)]
struct Spread {
    min: f64,
    median: f64,
    max: f64,
}

impl Spread {
    /// The spread of `xs`; the median of an even count is the mean of the middle two.
    fn of(xs: &[f64]) -> Option<Spread> {
        let mut sorted: Vec<f64> = xs.to_vec();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let median = match n {
            0 => return None,
            _ if n % 2 == 1 => sorted[n / 2],
            _ => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
        };
        Some(Spread {
            min: sorted[0],
            median,
            max: sorted[n - 1],
        })
    }
}

/// What one run of a command took.
#[derive(Serialize, Debug, Clone, Copy)]
struct Sample {
    wall: f64,
    cpu: Option<f64>,
}

/// A command's figures.
#[derive(Serialize, Debug)]
struct SideResult {
    label: String,
    command: String,
    wall: Spread,
    cpu: Option<Spread>,
    samples: Vec<Sample>,
}

/// A pair's figures and ratios A/B, taken run by run.
#[derive(Serialize, Debug)]
struct PairResult {
    name: String,
    a: SideResult,
    b: SideResult,
    wall_ratio: Spread,
    cpu_ratio: Option<Spread>,
    expected: Vec<String>,
}

/// The whole bench.
#[derive(Serialize, Debug)]
struct BenchResult {
    plan: String,
    runs: usize,
    warmup: usize,
    load_before: Option<String>,
    load_after: Option<String>,
    pairs: Vec<PairResult>,
}

/// Runs `harness bench`.
pub fn run(args: &BenchArgs) -> ExitCode {
    match run_inner(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run_inner(args: &BenchArgs) -> Result<(), String> {
    let text = std::fs::read_to_string(&args.plan)
        .map_err(|e| format!("cannot read the bench file {}: {e}", args.plan.display()))?;
    let plan: Plan = toml::from_str(&text)
        .map_err(|e| format!("the bench file {} is not valid: {e}", args.plan.display()))?;
    let runs = args.runs.or(plan.runs).unwrap_or(5);
    let warmup = args.warmup.or(plan.warmup).unwrap_or(1);
    if runs == 0 {
        return Err("--runs must be at least 1".into());
    }
    for name in &args.pair {
        if !plan.pair.iter().any(|p| &p.name == name) {
            let names: Vec<&str> = plan.pair.iter().map(|p| p.name.as_str()).collect();
            return Err(format!(
                "the bench file has no pair `{name}`; its pairs are {}",
                names.join(", ")
            ));
        }
    }
    let harness = std::env::current_exe()
        .map_err(|e| format!("cannot find this executable to run `harness`: {e}"))?;
    if !args.no_build {
        for cmd in &plan.build {
            build(&harness, cmd)?;
        }
    }
    let load_before = load_average();
    let mut pairs = Vec::new();
    for spec in plan
        .pair
        .iter()
        .filter(|p| args.pair.is_empty() || args.pair.contains(&p.name))
    {
        pairs.push(time_pair(
            &harness,
            spec,
            runs,
            warmup,
            plan.scratch.as_deref(),
        )?);
    }
    let result = BenchResult {
        plan: args.plan.display().to_string(),
        runs,
        warmup,
        load_before,
        load_after: load_average(),
        pairs,
    };
    match args.format {
        BenchFormat::Json => println!(
            "{}",
            serde_json::to_string_pretty(&result).map_err(|e| e.to_string())?
        ),
        BenchFormat::Human => print!("{}", render(&result)),
    }
    Ok(())
}

/// Runs a build command to completion, its output shown; a failure stops the bench.
fn build(harness: &Path, cmd: &[String]) -> Result<(), String> {
    let mut command = command(harness, cmd)?;
    let status = command
        .stdout(Stdio::null())
        .status()
        .map_err(|e| format!("cannot run the build command `{}`: {e}", cmd.join(" ")))?;
    if !status.success() {
        return Err(format!(
            "the build command `{}` failed ({status})",
            cmd.join(" ")
        ));
    }
    Ok(())
}

fn command(harness: &Path, cmd: &[String]) -> Result<Command, String> {
    let (program, rest) = cmd
        .split_first()
        .ok_or("a command in the bench file is empty; give its program and arguments")?;
    let mut command = if program == "harness" {
        Command::new(harness)
    } else {
        Command::new(program)
    };
    command.args(rest);
    Ok(command)
}

/// Times both commands of a pair in turn and checks that each run printed what it must.
fn time_pair(
    harness: &Path,
    spec: &PairSpec,
    runs: usize,
    warmup: usize,
    scratch: Option<&Path>,
) -> Result<PairResult, String> {
    let mut a = Vec::new();
    let mut b = Vec::new();
    for i in 0..warmup + runs {
        let sa = time_once(harness, &spec.a, scratch)?;
        let sb = time_once(harness, &spec.b, scratch)?;
        if i >= warmup {
            a.push(sa);
            b.push(sb);
        }
    }
    let ratio = |f: fn(&Sample) -> Option<f64>| -> Option<Spread> {
        let ratios: Option<Vec<f64>> = a
            .iter()
            .zip(&b)
            .map(|(x, y)| match (f(x), f(y)) {
                (Some(x), Some(y)) if y > 0.0 => Some(x / y),
                _ => None,
            })
            .collect();
        ratios.and_then(|r| Spread::of(&r))
    };
    let wall_ratio = ratio(|s| Some(s.wall)).ok_or_else(|| {
        format!(
            "pair `{}`: a run of `{}` took no measurable time",
            spec.name, spec.b.label
        )
    })?;
    let cpu_ratio = ratio(|s| s.cpu);
    let side = |side: &Side, samples: Vec<Sample>| -> SideResult {
        let walls: Vec<f64> = samples.iter().map(|s| s.wall).collect();
        let cpus: Option<Vec<f64>> = samples.iter().map(|s| s.cpu).collect();
        SideResult {
            label: side.label.clone(),
            command: side.cmd.join(" "),
            wall: Spread::of(&walls).unwrap_or(Spread {
                min: 0.0,
                median: 0.0,
                max: 0.0,
            }),
            cpu: cpus.and_then(|c| Spread::of(&c)),
            samples,
        }
    };
    let mut expected = spec.a.expect.clone();
    expected.extend(spec.b.expect.iter().cloned());
    Ok(PairResult {
        name: spec.name.clone(),
        a: side(&spec.a, a),
        b: side(&spec.b, b),
        wall_ratio,
        cpu_ratio,
        expected,
    })
}

/// Runs a command once, timing it, and checks its exit status and its expected output.
fn time_once(harness: &Path, side: &Side, scratch: Option<&Path>) -> Result<Sample, String> {
    let mut command = command(harness, &side.cmd)?;
    command.stdin(Stdio::null()).stderr(Stdio::null());
    let cpu_before = children_cpu();
    let start = Instant::now();
    let output = command
        .output()
        .map_err(|e| format!("cannot run `{}`: {e}", side.cmd.join(" ")))?;
    let wall = start.elapsed().as_secs_f64();
    let cpu = match (cpu_before, children_cpu()) {
        (Some(before), Some(after)) => Some(after - before),
        _ => None,
    };
    if let Some(dir) = scratch
        && dir.exists()
    {
        std::fs::remove_dir_all(dir)
            .map_err(|e| format!("cannot remove the scratch directory {}: {e}", dir.display()))?;
    }
    if !output.status.success() {
        return Err(format!(
            "`{}` ({}) failed ({}); run it alone to see why",
            side.cmd.join(" "),
            side.label,
            output.status
        ));
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    if let Some(missing) = side.expect.iter().find(|e| !stdout.contains(e.as_str())) {
        return Err(format!(
            "`{}` ({}) did not print `{missing}`: it did not do the work its pair compares \
             (or the bench file's `expect` is out of date)",
            side.cmd.join(" "),
            side.label
        ));
    }
    Ok(Sample { wall, cpu })
}

/// The CPU seconds of this process's reaped children so far, from `/proc/self/stat`.
fn children_cpu() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    children_cpu_of(&stat)
}

/// The children's user + system time of a `/proc/PID/stat` line (fields 16 and 17), in
/// seconds. The command name (field 2) is parenthesised and may hold spaces and parentheses,
/// so the fields are counted from the last `)`.
fn children_cpu_of(stat: &str) -> Option<f64> {
    /// Linux's fixed user-space clock tick.
    const USER_HZ: f64 = 100.0;
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // `rest` starts at field 3, so field n is at index n - 3.
    let cutime: u64 = fields.get(13)?.parse().ok()?;
    let cstime: u64 = fields.get(14)?.parse().ok()?;
    Some((cutime + cstime) as f64 / USER_HZ)
}

/// The 1, 5 and 15 minute load averages, as `/proc/loadavg` gives them.
fn load_average() -> Option<String> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    let parts: Vec<&str> = text.split_whitespace().take(3).collect();
    (parts.len() == 3).then(|| parts.join(" "))
}

fn spread(s: &Spread, unit: &str) -> String {
    format!(
        "{:.3}{unit} [{:.3}–{:.3}]",
        s.median,
        s.min,
        s.max,
        unit = unit
    )
}

/// The human-readable report.
fn render(result: &BenchResult) -> String {
    let mut out = format!(
        "bench {}: {} counted run(s) of each command after {} warm-up, in turn A B A B …\n\
         load average (1, 5, 15 min): {} before, {} after\n",
        result.plan,
        result.runs,
        result.warmup,
        result.load_before.as_deref().unwrap_or("unknown"),
        result.load_after.as_deref().unwrap_or("unknown"),
    );
    out.push_str("figures: median [min–max]; ratios A/B taken run by run\n");
    for pair in &result.pairs {
        out.push_str(&format!("\n{}\n", pair.name));
        for (tag, side) in [("A", &pair.a), ("B", &pair.b)] {
            let cpu = side
                .cpu
                .map_or_else(|| "unmeasured".to_string(), |c| spread(&c, " s"));
            out.push_str(&format!(
                "  {:<22} cpu {:<26} wall {}\n      {}\n",
                format!("{tag} {}", side.label),
                cpu,
                spread(&side.wall, " s"),
                side.command
            ));
        }
        let cpu = pair
            .cpu_ratio
            .map_or_else(|| "unmeasured".to_string(), |c| spread(&c, "×"));
        out.push_str(&format!(
            "  {:<22} cpu {:<26} wall {}\n",
            "A/B",
            cpu,
            spread(&pair.wall_ratio, "×")
        ));
        if !pair.expected.is_empty() {
            out.push_str(&format!(
                "  every run printed: {}\n",
                pair.expected
                    .iter()
                    .map(|e| format!("`{e}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spreads_take_the_middle_of_odd_and_even_counts() {
        let odd = Spread::of(&[3.0, 1.0, 2.0]).expect("a spread");
        assert_eq!((odd.min, odd.median, odd.max), (1.0, 2.0, 3.0));
        let even = Spread::of(&[4.0, 1.0, 2.0, 3.0]).expect("a spread");
        assert_eq!((even.min, even.median, even.max), (1.0, 2.5, 4.0));
        assert_eq!(Spread::of(&[]), None);
    }

    #[test]
    fn children_cpu_is_read_past_a_command_name_with_spaces_and_parentheses() {
        let line = "4242 (a (b) c) S 1 2 3 4 5 6 7 8 9 10 11 12 250 75 20 0 1 0 99";
        // utime 11, stime 12, cutime 250, cstime 75 ticks.
        assert_eq!(children_cpu_of(line), Some(3.25));
        assert_eq!(children_cpu_of("4242 (x) S 1 2"), None);
        assert_eq!(children_cpu_of("no parenthesis"), None);
    }

    fn plan_file(name: &str, text: &str) -> PathBuf {
        let path =
            std::env::temp_dir().join(format!("harness-bench-{name}-{}.toml", std::process::id()));
        std::fs::write(&path, text).expect("the plan is writable");
        path
    }

    fn args(plan: PathBuf) -> BenchArgs {
        BenchArgs {
            plan,
            runs: Some(2),
            warmup: Some(0),
            pair: Vec::new(),
            no_build: false,
            format: BenchFormat::Json,
        }
    }

    /// This test binary, run with `--list`, is a command that exists everywhere the tests run
    /// and prints something known (its tests' names).
    fn lister() -> String {
        std::env::current_exe()
            .expect("the test binary")
            .display()
            .to_string()
    }

    #[test]
    fn a_pair_is_timed_run_by_run_and_its_expected_output_checked() {
        let exe = lister();
        let plan = plan_file(
            "ok",
            &format!(
                "[[pair]]\nname = \"same\"\n\
                 a = {{ label = \"one\", cmd = [\"{exe}\", \"--list\"], expect = [\"spreads_take_the_middle\"] }}\n\
                 b = {{ label = \"two\", cmd = [\"{exe}\", \"--list\"] }}\n"
            ),
        );
        let text = std::fs::read_to_string(&plan).expect("readable");
        let parsed: Plan = toml::from_str(&text).expect("a valid plan");
        let result = time_pair(Path::new("harness"), &parsed.pair[0], 2, 1, None).expect("timed");
        assert_eq!(result.a.samples.len(), 2);
        assert_eq!(result.b.samples.len(), 2);
        assert!(result.wall_ratio.min > 0.0);
        assert!(
            render(&BenchResult {
                plan: "p".into(),
                runs: 2,
                warmup: 1,
                load_before: None,
                load_after: None,
                pairs: vec![result],
            })
            .contains("every run printed: `spreads_take_the_middle`")
        );
        assert!(run_inner(&args(plan.clone())).is_ok());
        std::fs::remove_file(plan).expect("removable");
    }

    #[test]
    fn a_run_that_did_not_print_what_it_must_stops_the_bench() {
        let exe = lister();
        let plan = plan_file(
            "mismatch",
            &format!(
                "[[pair]]\nname = \"differ\"\n\
                 a = {{ label = \"one\", cmd = [\"{exe}\", \"--list\"], expect = [\"no such test\"] }}\n\
                 b = {{ label = \"two\", cmd = [\"{exe}\", \"--list\"] }}\n"
            ),
        );
        let error = run_inner(&args(plan.clone())).expect_err("a mismatch");
        assert!(error.contains("did not print `no such test`"), "{error}");
        let mut unknown = args(plan.clone());
        unknown.pair = vec!["nope".into()];
        let error = run_inner(&unknown).expect_err("an unknown pair");
        assert!(
            error.contains("no pair `nope`; its pairs are differ"),
            "{error}"
        );
        std::fs::remove_file(plan).expect("removable");
    }

    #[test]
    fn bad_bench_files_get_a_diagnostic() {
        let plan = plan_file("bad", "runs = 3\n[[pair]]\nname = \"x\"\n");
        let error = run_inner(&args(plan.clone())).expect_err("invalid");
        assert!(error.contains("is not valid"), "{error}");
        std::fs::remove_file(plan).expect("removable");
        let error =
            run_inner(&args(PathBuf::from("/nonexistent/bench.toml"))).expect_err("missing");
        assert!(error.contains("cannot read the bench file"), "{error}");
    }
}
