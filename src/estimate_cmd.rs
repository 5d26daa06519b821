//! `harness estimate`: the flags, the wall clock and the summary printed, over
//! [`harness::estimate::estimate`].

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use harness::estimate::{self, Checkpoints, EstimateError, Fit, Request, TruthSpec, Utility};
use harness::games::Registry;
use harness::load::CompileError;

use crate::{ablate_cmd, parse_setting, render};

/// The flags of `harness estimate`.
#[derive(Args, Debug)]
pub struct EstimateArgs {
    /// The harness: a directory of `.harness` files or one file.
    pub harness: PathBuf,
    /// The module to run when the harness has several top modules.
    #[arg(long)]
    pub module: Option<String>,
    /// The training instances: a set, `all`, or a comma-separated list (default: the game's
    /// first set).
    #[arg(long)]
    pub instances: Option<String>,
    /// The training seeds: a count, a range (`0..200`) or a list. Evaluation runs given the
    /// table must use other seeds.
    #[arg(long)]
    pub seeds: String,
    /// The pre-registered checkpoints: `every:K` (turns K, 2K, ... while the episode runs) or
    /// a list of turns such as `5,10,20`.
    #[arg(long)]
    pub checkpoints: String,
    /// Paired replays K per (checkpoint, admissible intervention).
    #[arg(long, default_value_t = 8)]
    pub replays: u32,
    /// The metric that says the task was solved (a boolean or a number in 0..=1).
    #[arg(long, default_value = "solved")]
    pub success: String,
    /// The metric that counts the cost in the utility `U = success − λ·cost/cost_max`.
    #[arg(long)]
    pub cost: Option<String>,
    /// λ, the cost's weight in the utility.
    #[arg(long, default_value_t = 1.0)]
    pub lambda: f64,
    /// The cost that counts as 1 in the utility (required with --cost).
    #[arg(long, requires = "cost")]
    pub cost_max: Option<f64>,
    /// The inert layer whose nullary actions are the interventions.
    #[arg(long, default_value = "interventions")]
    pub interventions: String,
    /// The computed value that names the context of a checkpoint.
    #[arg(long, default_value = "chill_context")]
    pub context: String,
    /// The continuation policy's layers (default: the interventions layer and every layer it
    /// needs, that is the reference arm).
    #[arg(long, value_delimiter = ',')]
    pub reference: Option<Vec<String>>,
    /// Salt every branch separately instead of sharing common random numbers.
    #[arg(long)]
    pub unpaired: bool,
    /// Also force the factual decision itself (`keep`): its advantage must be exactly 0.
    #[arg(long)]
    pub keep: bool,
    /// σ₀ of the weight w = K/(s² + σ₀²).
    #[arg(long, default_value_t = 0.1)]
    pub sigma0: f64,
    /// n₀: pseudo-records at zero advantage that each estimate is shrunk toward.
    #[arg(long, default_value_t = 1.0)]
    pub prior_records: f64,
    /// Weigh every record 1 instead of K/(s² + σ₀²) (an ablation).
    #[arg(long)]
    pub unit_weights: bool,
    /// Also compute a ground truth with this many paired replays at --sample checkpoints.
    #[arg(long, requires = "sample")]
    pub truth: Option<u32>,
    /// The checkpoints of the ground truth (evenly spaced over all checkpoints).
    #[arg(long, requires = "truth")]
    pub sample: Option<usize>,
    /// Also replay every intervention unpaired and compare the two designs' variances.
    #[arg(long, conflicts_with = "unpaired")]
    pub compare_unpaired: bool,
    /// A game option, `NAME=VALUE` (repeatable).
    #[arg(long = "option", value_parser = parse_setting)]
    pub options: Vec<(String, String)>,
    /// Set a config parameter or a tunable's default: `--set name=value`.
    #[arg(long, value_parser = parse_setting)]
    pub set: Vec<(String, String)>,
    /// Set a structured config parameter from a JSON file: `--set-json name=FILE`.
    #[arg(long, value_parser = parse_setting)]
    pub set_json: Vec<(String, String)>,
    /// Worker threads (default: one per core). The files do not depend on it.
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Where to write pairs.jsonl, advantages.json and the checks' files.
    #[arg(long, default_value = "results/estimate")]
    pub out: PathBuf,
}

/// Runs the command.
pub fn run(args: &EstimateArgs) -> ExitCode {
    match run_inner(args) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run_inner(args: &EstimateArgs) -> Result<ExitCode, String> {
    let checkpoints =
        Checkpoints::parse(&args.checkpoints).map_err(|e| format!("--checkpoints: {e}"))?;
    if !(args.sigma0.is_finite() && args.sigma0 > 0.0) {
        return Err("--sigma0 must be a positive number".into());
    }
    if !(args.prior_records.is_finite() && args.prior_records >= 0.0) {
        return Err("--prior-records must be a number at least 0".into());
    }
    let cost_max = match (&args.cost, args.cost_max) {
        (Some(cost), None) => {
            return Err(format!(
                "--cost {cost} needs --cost-max: the cost that counts as 1 in the utility"
            ));
        }
        (_, Some(max)) => max,
        (None, None) => 1.0,
    };
    let (set_json, frozen) = ablate_cmd::read_set_json(&args.set_json)?;
    let seeds = harness::plan::parse_seeds(&args.seeds).map_err(|e| format!("--seeds: {e}"))?;
    for table in &frozen {
        table.check(&seeds)?;
    }
    let request = Request {
        harness: args.harness.display().to_string(),
        module: args.module.clone(),
        instances: args.instances.clone(),
        seeds: args.seeds.clone(),
        options: args.options.clone(),
        set: args.set.clone(),
        set_json,
        interventions: args.interventions.clone(),
        context: args.context.clone(),
        reference: args.reference.clone(),
        checkpoints,
        replays: args.replays,
        utility: Utility {
            success: args.success.clone(),
            cost: args.cost.clone(),
            lambda: args.lambda,
            cost_max,
        },
        unpaired: args.unpaired,
        keep: args.keep,
        fit: Fit {
            sigma0_sq: args.sigma0 * args.sigma0,
            prior_records: args.prior_records,
            unit_weights: args.unit_weights,
        },
        truth: args
            .truth
            .zip(args.sample)
            .map(|(replays, sample)| TruthSpec { replays, sample }),
        compare_unpaired: args.compare_unpaired,
        threads: args.jobs.unwrap_or(0),
    };
    let started = std::time::Instant::now();
    let outcome = match estimate::estimate(&Registry::standard(), &request) {
        Ok(outcome) => outcome,
        Err(EstimateError::Compile(CompileError::Diagnostics(diagnostics), sources)) => {
            render::human(&diagnostics, sources.files.len());
            return Err("the harness has errors; fix them and run again".into());
        }
        Err(error) => return Err(error.to_string()),
    };
    let elapsed = started.elapsed().as_secs_f64();
    let written = estimate::write(&outcome, &args.out)?;
    print!("{}", summary(&outcome, elapsed));
    for path in written {
        println!("wrote {path}");
    }
    Ok(ExitCode::SUCCESS)
}

/// The summary printed after an estimate: what was replayed, what it cost, the table's
/// strongest entries and the checks' verdicts.
fn summary(outcome: &estimate::Outcome, seconds: f64) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let m = &outcome.table.manifest;
    let _ = writeln!(
        out,
        "{} design, K = {}: {} checkpoints reached, {} pair records over {} (context, \
         intervention) cells",
        m.design,
        m.replays,
        m.checkpoints_reached,
        m.records,
        outcome.table.entries.len()
    );
    let c = &m.replay_cost;
    // The utility's cost metric is optional; without one there is no game cost to report.
    let game_cost = match m.utility.cost.as_deref() {
        Some(metric) => format!(", {} of `{metric}`", c.cost),
        None => String::new(),
    };
    let _ = writeln!(
        out,
        "replay cost (apart from any evaluation): {} continuations, {} turns, {} steps, {} \
         previews{game_cost} after the checkpoints; {seconds:.1} s of wall time",
        c.continuations, c.turns, c.steps, c.previews,
    );
    if m.outside_range > 0 {
        let _ = writeln!(
            out,
            "warning: {} branch utilities fell outside the declared range [{}, {}]",
            m.outside_range, m.utility_range[0], m.utility_range[1]
        );
    }
    let mut ranked: Vec<&estimate::Entry> = outcome.table.entries.iter().collect();
    ranked.sort_by(|a, b| b.gamma.abs().total_cmp(&a.gamma.abs()));
    let _ = writeln!(out, "largest |Γ̂| (of {}):", ranked.len());
    for entry in ranked.iter().take(10) {
        let _ = writeln!(
            out,
            "  {:<48} {:+.4} [{:+.4}, {:+.4}]  n={}",
            entry.key, entry.gamma, entry.ci[0], entry.ci[1], entry.n
        );
    }
    if let Some((n, gamma, s2)) = outcome.null_check {
        let _ = writeln!(
            out,
            "null intervention (keep): {n} records, max |Γ̃| = {gamma}, max s² = {s2}"
        );
    }
    if let Some((_, t)) = &outcome.truth {
        let _ = writeln!(
            out,
            "ground truth ({} paired replays at {} checkpoints, {} pairs): mean z = {:+.3} (sd \
             {:.3}, {} with a z), |z| ≤ 1.96 for {:.1}%; mean Γ̃ − Γ = {:+.5} (z {:+.2}); A11 band \
             (ζ = {}, half-width {:.3}..{:.3}) covers {:.1}% of checkpoints; {} exact pairs \
             disagree",
            t.replays,
            t.checkpoints,
            t.pairs,
            t.mean_z,
            t.sd_z,
            t.with_z,
            100.0 * t.within_196,
            t.mean_difference,
            t.mean_difference_z,
            t.zeta,
            t.band_width[0],
            t.band_width[1],
            100.0 * t.band_coverage,
            t.exact_mismatches
        );
        let c = &t.replay_cost;
        let _ = writeln!(
            out,
            "ground truth's replay cost: {} continuations, {} turns, {} steps",
            c.continuations, c.turns, c.steps
        );
    }
    if let Some(v) = &outcome.variance {
        let _ = writeln!(
            out,
            "paired vs unpaired ({} records): median Var ratio {:.3}; mean ln ratio {:+.3} [95% \
             bootstrap {:+.3}, {:+.3}] over {} records with both variances positive ({} paired \
             0 only, {} unpaired 0 only, {} both 0)",
            v.records,
            v.median_ratio,
            v.mean_log_ratio,
            v.mean_log_ratio_ci[0],
            v.mean_log_ratio_ci[1],
            v.logged,
            v.paired_zero,
            v.unpaired_zero,
            v.both_zero
        );
    }
    out
}
