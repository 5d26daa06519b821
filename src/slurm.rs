//! Job-array scripts: one plan run as the shards of a Slurm job array, into one shared folder.
//!
//! `harness ablate --slurm N` writes such a script instead of running; each array task runs
//! `harness ablate` with the same flags plus `--run-id ID --shard K/N`, where K is the task's
//! index. The shards share the folder through [`crate::folder::RunFolder::create_or_join`], and
//! the last one to finish writes the run's index files and summary.

/// What a job-array script runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobArray {
    /// The run id the shards share.
    pub run_id: String,
    /// N, the number of shards (array tasks 1..=N).
    pub shards: usize,
    /// The directory every task starts in (relative paths in `args` are relative to it).
    pub workdir: String,
    /// The `harness` executable.
    pub program: String,
    /// The flags of `harness ablate`, without the `--slurm` ones.
    pub args: Vec<String>,
    /// The folder run folders go to (`--out`), for the tasks' log files.
    pub out: String,
    /// Extra `#SBATCH` options, such as `--partition=short` or `--cpus-per-task=4`.
    pub options: Vec<String>,
}

/// The script for `job`, as text.
pub fn script(job: &JobArray) -> String {
    let mut text = String::from("#!/usr/bin/env bash\n");
    text.push_str(&format!(
        "# Written by `harness ablate --slurm {n}`: the plan as a job array of {n} shards, all \
         writing to\n# {out}/{id}. Submit it with `sbatch`; `harness lens run {out}/{id}` shows \
         what has finished.\n",
        n = job.shards,
        out = job.out,
        id = job.run_id,
    ));
    text.push_str(&format!("#SBATCH --job-name=harness-{}\n", job.run_id));
    text.push_str(&format!("#SBATCH --array=1-{}\n", job.shards));
    text.push_str(&format!(
        "#SBATCH --output={}/{}.slurm-%a.log\n",
        job.out, job.run_id
    ));
    for option in &job.options {
        text.push_str(&format!("#SBATCH {option}\n"));
    }
    text.push_str("set -euo pipefail\n");
    text.push_str(&format!("cd {}\n", quote(&job.workdir)));
    let mut command = vec![quote(&job.program), "ablate".to_string()];
    command.extend(job.args.iter().map(|arg| quote(arg)));
    command.push("--run-id".into());
    command.push(quote(&job.run_id));
    command.push("--shard".into());
    command.push(format!("\"${{SLURM_ARRAY_TASK_ID}}/{}\"", job.shards));
    text.push_str("exec ");
    text.push_str(&command.join(" "));
    text.push('\n');
    text
}

/// `args` without the flags that only make the script (`--slurm`, `--slurm-script`,
/// `--slurm-option`), in either `--flag value` or `--flag=value` form, and without any
/// `--run-id` or `--shard`, which the script sets itself.
pub fn forwarded_args(args: &[String]) -> Vec<String> {
    const DROPPED: [&str; 5] = [
        "--slurm",
        "--slurm-script",
        "--slurm-option",
        "--run-id",
        "--shard",
    ];
    let mut out = Vec::new();
    let mut skip_value = false;
    for arg in args {
        if skip_value {
            skip_value = false;
            continue;
        }
        if DROPPED.contains(&arg.as_str()) {
            skip_value = true;
            continue;
        }
        if DROPPED.iter().any(|flag| {
            arg.strip_prefix(flag)
                .is_some_and(|rest| rest.starts_with('='))
        }) {
            continue;
        }
        out.push(arg.clone());
    }
    out
}

/// `text` as one shell word: bare when it is plainly safe, single-quoted otherwise.
fn quote(text: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./=:,@%+".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn the_script_runs_every_shard_with_the_same_flags() {
        let job = JobArray {
            run_id: "sweep-1".into(),
            shards: 4,
            workdir: "/home/me/exp".into(),
            program: "/opt/harness/bin/harness".into(),
            args: strings(&["harnesses/examples/search.harness", "--set", "x=it's"]),
            out: "results/runs".into(),
            options: strings(&["--partition=short"]),
        };
        let text = script(&job);
        assert!(text.contains("#SBATCH --array=1-4\n"), "{text}");
        assert!(text.contains("#SBATCH --partition=short\n"), "{text}");
        assert!(text.contains("#SBATCH --output=results/runs/sweep-1.slurm-%a.log\n"));
        assert!(text.ends_with(
            "exec /opt/harness/bin/harness ablate harnesses/examples/search.harness --set \
             'x=it'\\''s' --run-id sweep-1 --shard \"${SLURM_ARRAY_TASK_ID}/4\"\n"
        ));
    }

    #[test]
    fn the_script_flags_are_not_forwarded() {
        let args = strings(&[
            "h.harness",
            "--slurm",
            "4",
            "--seeds=10",
            "--slurm-option=--partition=x",
            "--run-id",
            "old",
            "--shard=1/2",
            "--slurm-script",
            "s.sh",
            "--jobs",
            "2",
        ]);
        assert_eq!(
            forwarded_args(&args),
            strings(&["h.harness", "--seeds=10", "--jobs", "2"])
        );
    }
}
