//! `harness games`: the registered games, and one game's bindings, instance sets, metrics and
//! options (with `--instances`, a picture of each instance).

use std::fmt::Write as _;
use std::process::ExitCode;

use clap::Subcommand;
use harness::games::{Registry, describe};
use harness_runtime::MetricKind;

use crate::{ReportFormat, parse_setting};

/// `harness games ...`.
#[derive(Subcommand, Debug)]
pub enum GamesCommand {
    /// List the games (the default).
    List {
        /// `human` for a list, `json` for an array, `csv` for rows.
        #[arg(long, value_enum, default_value_t = ReportFormat::Human)]
        format: ReportFormat,
    },
    /// Describe one game.
    Describe {
        /// The game.
        name: String,
        /// Also show these instances (a set, `all`, or a list), as the game draws them.
        #[arg(long)]
        instances: Option<String>,
        /// A game option for the instances shown, `NAME=VALUE` (repeatable).
        #[arg(long = "option", value_parser = parse_setting)]
        options: Vec<(String, String)>,
        /// `human` for text, `json` for one object.
        #[arg(long, value_enum, default_value_t = ReportFormat::Human)]
        format: ReportFormat,
    },
}

/// Runs the command.
pub fn run(command: Option<&GamesCommand>) -> ExitCode {
    match run_inner(command) {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run_inner(command: Option<&GamesCommand>) -> Result<String, String> {
    let registry = Registry::standard();
    let list = GamesCommand::List {
        format: ReportFormat::Human,
    };
    match command.unwrap_or(&list) {
        GamesCommand::List { format } => {
            let games: Vec<_> = registry.games().map(|g| describe(g.as_ref())).collect();
            Ok(match format {
                ReportFormat::Human => {
                    let mut out = String::new();
                    for game in &games {
                        let _ = writeln!(out, "{:<12} {}", game.name, game.about);
                    }
                    out.push_str("\n`harness games describe NAME` shows a game's bindings, instance sets, metrics and options.\n");
                    out
                }
                ReportFormat::Json => {
                    let mut text =
                        serde_json::to_string_pretty(&games).map_err(|error| error.to_string())?;
                    text.push('\n');
                    text
                }
                ReportFormat::Csv => {
                    let mut out = String::from("name,about\n");
                    for game in &games {
                        let _ = writeln!(
                            out,
                            "{},{}",
                            harness::folder::csv_field(&game.name),
                            harness::folder::csv_field(&game.about)
                        );
                    }
                    out
                }
            })
        }
        GamesCommand::Describe {
            name,
            instances,
            options,
            format,
        } => {
            let game = registry.get(name)?;
            let description = describe(game.as_ref());
            let mut pictures = Vec::new();
            if instances.is_some() || !options.is_empty() {
                let (ids, options) = harness::plan::instances_and_options(
                    &description.manifest,
                    instances.as_deref(),
                    options,
                )?;
                for id in ids {
                    let picture = match game.describe_instance(&id, &options) {
                        Some(picture) => picture?,
                        None => format!("{id}\n"),
                    };
                    pictures.push((id, picture));
                }
            }
            match format {
                ReportFormat::Json => {
                    let mut value =
                        serde_json::to_value(&description).map_err(|error| error.to_string())?;
                    if !pictures.is_empty() {
                        value["instances"] = serde_json::json!(pictures
                            .iter()
                            .map(|(id, picture)| serde_json::json!({"id": id, "picture": picture}))
                            .collect::<Vec<_>>());
                    }
                    let mut text =
                        serde_json::to_string_pretty(&value).map_err(|error| error.to_string())?;
                    text.push('\n');
                    Ok(text)
                }
                ReportFormat::Csv => Err("`games describe` prints text or JSON, not CSV".into()),
                ReportFormat::Human => {
                    let mut out = human(&description);
                    for (_, picture) in &pictures {
                        out.push('\n');
                        out.push_str(picture);
                    }
                    Ok(out)
                }
            }
        }
    }
}

/// A game's description as text.
fn human(d: &harness::games::Description) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}: {}\n", d.name, d.about);
    let _ = writeln!(out, "bindings (after `use game {}`):", d.name);
    for line in &d.bindings {
        let _ = writeln!(out, "  {line}");
    }
    let _ = writeln!(
        out,
        "\ninstance sets (`--instances NAME`; the first is the default):"
    );
    for set in &d.manifest.instance_sets {
        let implies: Vec<String> = set
            .implies
            .iter()
            .map(|(n, v)| format!("{n}={v}"))
            .collect();
        let implies = if implies.is_empty() {
            String::new()
        } else {
            format!(" [sets {}]", implies.join(" "))
        };
        let _ = writeln!(
            out,
            "  {} ({} instances){implies}: {}",
            set.name,
            set.instances.len(),
            set.doc
        );
        let _ = writeln!(out, "    {}", set.instances.join(" "));
    }
    let _ = writeln!(out, "\nmetrics:");
    for m in &d.manifest.metrics {
        let kind = match m.kind {
            MetricKind::Rate => "rate",
            MetricKind::Mean => "mean",
            MetricKind::Count => "count",
        };
        let _ = writeln!(
            out,
            "  {:<12} {kind:<5} {:<7} {:<9} {}",
            m.name,
            format!("{:?}", m.better).to_lowercase(),
            format!("{:?}", m.role).to_lowercase(),
            m.doc
        );
    }
    if d.manifest.options.is_empty() {
        let _ = writeln!(out, "\noptions: none");
    } else {
        let _ = writeln!(out, "\noptions (`--option NAME=VALUE`):");
        for o in &d.manifest.options {
            let _ = writeln!(out, "  {} = {} ({}): {}", o.name, o.default, o.ty, o.doc);
        }
    }
    out
}
