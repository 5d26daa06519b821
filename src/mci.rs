//! `harness mci`: the infrastructure-operations games' task suites.

use std::process::ExitCode;

use harness_mci::suite::Domain;

/// `harness mci tasks --game G [--split S] [--truth]`: one line per task.
pub fn tasks(game: &str, split: Option<&str>, truth: bool) -> ExitCode {
    let Some(domain) = Domain::from_name(game) else {
        eprintln!("error: `{game}` is not an infrastructure game; use `cooling` or `grid`");
        return ExitCode::FAILURE;
    };
    if let Some(s) = split.filter(|s| !matches!(*s, "construction" | "test")) {
        eprintln!("error: `--split {s}` must be `construction` or `test`");
        return ExitCode::FAILURE;
    }
    let unit = domain.time_unit();
    let mut shown = 0;
    for task in domain.tasks() {
        if split.is_some_and(|s| s != task.split().name()) {
            continue;
        }
        let answer = if truth {
            match domain.resolve(task) {
                Ok(answer) => format!("  => {answer}"),
                Err(error) => format!("  => error: {error}"),
            }
        } else {
            String::new()
        };
        println!(
            "{:<18} {:<5} {:<12} {:<28} {:<18} t={}{unit:<4} {}{answer}",
            task.id,
            task.class.to_string(),
            task.split().name(),
            task.family,
            task.scenario,
            task.t_now,
            task.prompt,
        );
        shown += 1;
    }
    eprintln!("{shown} tasks");
    ExitCode::SUCCESS
}
