//! The `harness` command line: the only place that renders diagnostics, writes files and prints.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

/// The allocator of every command: the checker and the interpreter allocate many small, short-lived
/// values, which mimalloc serves faster than the system allocator (docs/decisions/0018).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod ablate_cmd;
mod bench_cmd;
mod check;
mod estimate_cmd;
mod evolve_cmd;
mod figure;
mod fmt_cmd;
mod games_cmd;
mod lens_cmd;
mod llm_args;
mod lsp;
mod provision_cmd;
mod render;
mod repair_cmd;
mod run;
mod validate_cmd;

/// Write, check, run and ablate declarative agent harnesses.
#[derive(Parser)]
#[command(name = "harness", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

// The command is parsed once per process, so the size of its largest variant does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
enum Command {
    /// Check `.harness` files (or every `.harness` file under a directory) and report
    /// diagnostics. Exits with 1 when there is an error.
    Check {
        /// Files or directories; all loaded files form one workspace.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// How to print the diagnostics.
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
        /// Print only the errors, without warnings or the summary line.
        #[arg(long, short)]
        quiet: bool,
        /// Also print each module's cost bound per turn phase (steps and `sim.next` previews),
        /// with what leaves a phase unbounded.
        #[arg(long)]
        cost: bool,
        /// The limit on a turn phase's cost bound in steps; a phase bounded above it is E0901
        /// (default: the interpreter's step budget per turn).
        #[arg(long, value_name = "STEPS", default_value_t = harness_compiler::cost::DEFAULT_LIMIT)]
        cost_limit: u64,
        /// Also enforce a harness protocol on every top module: `jit4` (roles memory,
        /// planning, capability, action; codes E0801-E0807).
        #[arg(long, value_parser = check::parse_protocol)]
        protocol: Option<harness_compiler::protocol::Protocol>,
    },
    /// Explain a diagnostic code: what triggers it, an example and the fix.
    Explain {
        /// The code, such as `E0101`.
        #[arg(required_unless_present = "list")]
        code: Option<String>,
        /// List every code with its title instead.
        #[arg(long)]
        list: bool,
        /// How to print the explanation: a page of text, or one JSON object (an array with
        /// `--list`).
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
    },
    /// Run one episode of a harness on a game instance and seed, and print what happened.
    Run {
        /// The harness: a `.harness` file or a directory of them.
        file: PathBuf,
        /// The module to run, when the harness has several top modules.
        #[arg(long)]
        module: Option<String>,
        /// The game to play (default: the one the harness uses).
        #[arg(long)]
        game: Option<String>,
        /// A game option, `NAME=VALUE` (repeatable; `harness games describe GAME` lists them).
        #[arg(long = "option", value_parser = parse_setting)]
        options: Vec<(String, String)>,
        /// The game instance (default: the first of the game's default instance set).
        #[arg(long)]
        instance: Option<String>,
        /// The seed of the episode's random streams.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Enable only these layers (comma-separated); layers whose needs are off are off too.
        #[arg(long, value_delimiter = ',')]
        layers: Option<Vec<String>>,
        /// Switch these layers off (repeatable or comma-separated).
        #[arg(long, value_delimiter = ',')]
        without: Vec<String>,
        /// Set a config parameter or a tunable's default: `--set name=value` (repeatable).
        #[arg(long, value_parser = parse_setting)]
        set: Vec<(String, String)>,
        /// Set a structured config parameter from a JSON file: `--set-json name=FILE`
        /// (repeatable), converted to the declared type and range-checked.
        #[arg(long, value_parser = parse_setting)]
        set_json: Vec<(String, String)>,
        /// `human` for a turn-by-turn account, `json` for one summary object.
        #[arg(long, value_enum, default_value_t = RunFormat::Human)]
        format: RunFormat,
        /// Write every event as JSON lines to this file.
        #[arg(long)]
        trace: Option<PathBuf>,
        /// Stop after this many turns even if the game has not ended.
        #[arg(long, default_value_t = 1000)]
        max_turns: u32,
        /// Where the harness's LLM calls go.
        #[command(flatten)]
        llm: llm_args::LlmArgs,
    },
    /// Run a harness's layer stacks (cumulative, removals, named layer sets, config sweeps) over
    /// game instances, seeds and replicates, and report each layer's paired marginal. Exits
    /// with 1 when an episode ended in a runtime error (unless --allow-errors).
    Ablate(Box<ablate_cmd::AblateArgs>),
    /// Estimate, from paired counterfactual replays at pre-registered checkpoints, the
    /// advantage of each intervention of a harness's inert interventions layer per context
    /// (CIEL), and write the pair records and the fitted advantage table.
    Estimate(Box<estimate_cmd::EstimateArgs>),
    /// Time pairs of commands from a bench file as whole processes, in turn (A B A B …), and
    /// print each figure's median, minimum and maximum and the ratio A/B run by run, with the
    /// load average. Exits with 1 when a command fails or does not print what the file expects.
    Bench(bench_cmd::BenchArgs),
    /// Look into a result folder written by `harness ablate`: the run, one episode, a value
    /// over turns, LLM use, or a comparison of two runs. Exits with 1 when the folder is not a
    /// run or the episode or arm is missing.
    Lens(Box<lens_cmd::LensArgs>),
    /// List the result folders under a directory: run id, start, game, harness, arms,
    /// episodes finished of those planned, tags. Filters combine: a run is listed when it has
    /// every --tag, the --game and every --setting.
    Runs {
        /// The directory holding run folders.
        #[arg(default_value = "results/runs")]
        dir: PathBuf,
        /// Only runs tagged with this (`harness ablate --tag`; repeatable, all must match).
        #[arg(long = "tag")]
        tags: Vec<String>,
        /// Only runs of this game.
        #[arg(long)]
        game: Option<String>,
        /// Only runs with this setting, `name=value`, given or in effect in an arm (repeatable).
        #[arg(long = "setting", value_parser = parse_setting)]
        settings: Vec<(String, String)>,
        /// `human` for a table, `json` for an object with `runs` and `unreadable`, `csv`.
        #[arg(long, value_enum, default_value_t = ReportFormat::Human)]
        format: ReportFormat,
    },
    /// From a level sweep (a run of `harness ablate` whose cumulative stacks are the levels):
    /// the per-class mean score over levels on the construction instances, and each class's
    /// floor (the smallest level within ε of its best) for several ε.
    Map(Box<provision_cmd::MapArgs>),
    /// From a level sweep: the provisioning policies (full, lookup by the map, escalation on a
    /// failed self-check, oracles) on the test instances, with score, cost relative to full
    /// provision, escalations, attempts and a paired bootstrap interval against full.
    Provision(Box<provision_cmd::ProvisionArgs>),
    /// Write one self-contained HTML page of a run: settings, arms with intervals, paired
    /// marginals, figures, a per-instance table and every episode's turns; with RUN2, a
    /// comparison of the two runs. No script, no network.
    Report {
        /// The run folder.
        run: PathBuf,
        /// A second run to compare with (differences are RUN − RUN2).
        run2: Option<PathBuf>,
        /// Where to write the page (default: RUN/report.html).
        #[arg(long, short)]
        out: Option<PathBuf>,
    },
    /// Validate a harness in stages (syntax, check, protocol, smoke episode) and report the
    /// stage reached with every diagnostic, its help and its explanation page. Exits with 1
    /// when the harness is not valid.
    Validate {
        /// The harness: a `.harness` file or a directory of them.
        path: PathBuf,
        /// The game it must be written for.
        #[arg(long)]
        game: String,
        /// Play one episode on this instance as the last stage.
        #[arg(long, value_name = "INSTANCE")]
        smoke: Option<String>,
        /// The smoke episode's seed.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// The protocol to enforce (`jit4`), or `none`.
        #[arg(long, default_value = "jit4")]
        protocol: String,
        /// The smoke episode's turn limit.
        #[arg(long, default_value_t = 200)]
        max_turns: u32,
        /// How to print the report.
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
    },
    /// Apply a patch (JSON: byte-range `edits`, whole-`layers` or whole-`files` replacements)
    /// to a harness in place; overlapping edits are refused and changed files are formatted.
    Patch {
        /// The harness: a `.harness` file or a directory of them.
        path: PathBuf,
        /// The patch file.
        #[arg(long)]
        patch: PathBuf,
        /// Print the patched files instead of writing them.
        #[arg(long)]
        dry_run: bool,
    },
    /// Repair a harness offline in bounded rounds: the compiler's quick fixes and code-directed
    /// rules, then reverting what is still broken to a parent. Exits with 1 unless it ends valid.
    Repair {
        /// The harness: a `.harness` file or a directory of them.
        path: PathBuf,
        /// The game it must be written for.
        #[arg(long)]
        game: String,
        /// The harness it was derived from, for the revert rule.
        #[arg(long)]
        parent: Option<PathBuf>,
        /// The most repair rounds.
        #[arg(long, default_value_t = 2)]
        rounds: usize,
        /// Validate with a smoke episode on this instance.
        #[arg(long, value_name = "INSTANCE")]
        smoke: Option<String>,
        /// The smoke episode's seed.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Write the repaired files in place.
        #[arg(long)]
        write: bool,
        /// How to print the rounds.
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
    },
    /// Evolve harnesses from a bank into an archive: per round, mutate the best references,
    /// validate and repair the candidates, evaluate the first new valid one on common seeds and,
    /// in streaming mode, keep it if it matches the incumbent's reward and improves reward,
    /// latency (turns) or cost (evaluation steps).
    Evolve {
        /// The game.
        #[arg(long)]
        game: String,
        /// The bank: a directory whose `.harness` files are the reference harnesses.
        #[arg(long)]
        bank: PathBuf,
        /// The archive folder to write (replaced if it exists).
        #[arg(long)]
        archive: PathBuf,
        /// The candidate generator: `mutate` (seeded offline mutations of one reference),
        /// `template` (each role module drawn from the references) or `llm` (a model asked
        /// through the --llm-* flags, given the references and, for repair, the diagnostics).
        #[arg(long, default_value = "mutate")]
        generator: String,
        /// `streaming` (the archive's incumbent moves) or `static` (the bank's stays).
        #[arg(long, default_value = "streaming")]
        mode: String,
        /// Rounds.
        #[arg(long, default_value_t = 12)]
        rounds: usize,
        /// Candidates per round.
        #[arg(long, default_value_t = 3)]
        candidates: usize,
        /// References per round.
        #[arg(long, default_value_t = 3)]
        refs: usize,
        /// The most repair rounds per candidate.
        #[arg(long, default_value_t = 2)]
        repair_rounds: usize,
        /// The instances every candidate is evaluated on (default: the game's first set).
        #[arg(long)]
        instances: Option<String>,
        /// Seeds per instance (0..N).
        #[arg(long, default_value_t = 20)]
        seeds: u64,
        /// The generator's seed.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// The metric whose mean is the reward.
        #[arg(long, default_value = "score")]
        reward: String,
        /// Worker threads (default: one per core).
        #[arg(long, default_value_t = 0)]
        jobs: usize,
        /// Where the `llm` generator's calls go (its requests are named `evolve_candidate` and
        /// `evolve_repair`, which a simulated persona answers).
        #[command(flatten)]
        llm: llm_args::LlmArgs,
    },
    /// Read an evolution archive: `list`, `show ID`, `frontier` (the non-dominated entries over
    /// reward, turns and steps), `verify` (re-check every retention decision), `compare --with
    /// ARCH2` (the two runs' selected rewards round by round).
    Archive {
        /// list, show, frontier, verify or compare.
        view: String,
        /// The archive folder.
        archive: PathBuf,
        /// The entry (`show`), by id or a prefix of it.
        id: Option<String>,
        /// The second archive (`compare`).
        #[arg(long)]
        with: Option<PathBuf>,
        /// Also draw the comparison as an SVG figure (`compare`).
        #[arg(long)]
        plot: Option<PathBuf>,
    },
    /// Format `.harness` files in place, or check that they are formatted.
    Fmt {
        /// Print what would change, as a unified diff per file, and exit 1 if anything would;
        /// write nothing.
        #[arg(long)]
        check: bool,
        /// Files, or directories searched recursively for `.harness` files (default: `.`);
        /// `-` alone formats standard input to standard output.
        paths: Vec<PathBuf>,
        /// How to report: diffs and errors as text, or one JSON object with an entry per file
        /// (its status, its diff with `--check`, its syntax errors as diagnostics).
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
    },
    /// Run the language server on standard input and output (for editors).
    Lsp {
        /// Accepted for the clients that ask for the transport by name (vscode-languageclient
        /// appends it); standard input and output is the only transport.
        #[arg(long)]
        stdio: bool,
    },
    /// Print a shell completion script, for example
    /// `harness completions bash > ~/.local/share/bash-completion/completions/harness`.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff), for example `harness man | man -l -`.
    Man,
    /// List the games, or describe one: its bindings, instance sets, metrics and options.
    Games {
        #[command(subcommand)]
        command: Option<games_cmd::GamesCommand>,
    },
}

/// `harness report`: writes the page and says where.
fn report_page(
    run: &std::path::Path,
    compare: Option<&std::path::Path>,
    out: Option<PathBuf>,
) -> ExitCode {
    let page = match harness::lens::html::page(&harness::games::Registry::standard(), run, compare)
    {
        Ok(page) => page,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::FAILURE;
        }
    };
    let out = out.unwrap_or_else(|| run.join("report.html"));
    if let Err(error) = std::fs::write(&out, page) {
        eprintln!("error: cannot write {}: {error}", out.display());
        return ExitCode::FAILURE;
    }
    println!("wrote {}", out.display());
    ExitCode::SUCCESS
}

/// `harness runs`: the index of a directory's runs; unreadable folders are named on standard
/// error and make the exit status 1, after the listing.
fn runs(dir: &std::path::Path, filter: &harness::runs::Filter, format: ReportFormat) -> ExitCode {
    let (runs, unreadable) = match harness::runs::list(dir, filter) {
        Ok(found) => found,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::FAILURE;
        }
    };
    match format {
        ReportFormat::Human if runs.is_empty() => println!("no run under {}", dir.display()),
        ReportFormat::Human => print!("{}", harness::runs::table(&runs)),
        ReportFormat::Csv => print!("{}", harness::runs::csv(&runs)),
        ReportFormat::Json => {
            let value = serde_json::json!({ "runs": runs, "unreadable": unreadable });
            println!("{value:#}");
        }
    }
    if format != ReportFormat::Json {
        for bad in &unreadable {
            eprintln!("error: {}", bad.reason);
        }
    }
    if unreadable.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Parses `name=value`.
pub(crate) fn parse_setting(text: &str) -> Result<(String, String), String> {
    let (name, value) = text
        .split_once('=')
        .ok_or_else(|| format!("`{text}` is not `name=value`"))?;
    Ok((name.trim().to_string(), value.trim().to_string()))
}

/// Output formats of `harness check`, `harness explain`, `harness fmt`, `harness map` and
/// `harness provision`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    /// Rendered for a terminal.
    Human,
    /// One JSON array of diagnostic objects.
    Json,
}

/// Output formats of `harness run`.
#[derive(Clone, Copy, ValueEnum)]
enum RunFormat {
    /// A turn-by-turn account.
    Human,
    /// One JSON object: the episode's settings, result and costs.
    Json,
}

/// Output formats of `harness ablate`, `harness lens` and `harness games`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum ReportFormat {
    /// Tables for a terminal.
    Human,
    /// One JSON object.
    Json,
    /// Comma-separated values with a header row.
    Csv,
}

fn main() -> ExitCode {
    run_cli(Cli::parse())
}

/// Runs a parsed command line.
fn run_cli(cli: Cli) -> ExitCode {
    let quiet_hook = matches!(cli.command, Command::Check { .. } | Command::Lsp { .. });
    std::panic::set_hook(Box::new(move |info| {
        // `print!` panics when standard output is a pipe whose reader has gone (`harness lens
        // run | head`). That is the reader's choice, not a bug: end the way a process killed
        // by SIGPIPE does, silently and with status 128 + 13, as other command-line tools do.
        let payload = info.payload();
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or_default();
        if message.starts_with("failed printing to stdout") && message.contains("Broken pipe") {
            std::process::exit(141);
        }
        // The checker and the language server turn their own panics into internal-error
        // diagnostics and responses; a message here would come on top of them. Anywhere else a
        // panic is a bug of ours: say so in one line, without a backtrace.
        if !quiet_hook {
            eprintln!("error: internal error ({info}); this is a bug in harness, please report it");
        }
    }));
    match cli.command {
        Command::Check {
            paths,
            format,
            quiet,
            protocol,
            cost,
            cost_limit,
        } => check::run(
            &paths,
            format,
            quiet,
            protocol,
            check::Cost {
                report: cost,
                limit: cost_limit,
            },
        ),
        Command::Validate {
            path,
            game,
            smoke,
            seed,
            protocol,
            max_turns,
            format,
        } => validate_cmd::run(&validate_cmd::Args {
            path: &path,
            game: &game,
            smoke: smoke.as_deref(),
            seed,
            protocol: &protocol,
            max_turns,
            format,
        }),
        Command::Evolve {
            game,
            bank,
            archive,
            generator,
            mode,
            rounds,
            candidates,
            refs,
            repair_rounds,
            instances,
            seeds,
            seed,
            reward,
            jobs,
            llm,
        } => {
            let generator = match generator.as_str() {
                "mutate" => harness::evolve::Generator::Mutate,
                "template" => harness::evolve::Generator::Template,
                "llm" => harness::evolve::Generator::Llm,
                other => {
                    eprintln!(
                        "error: `{other}` is not a generator; use `mutate`, `template` or `llm`"
                    );
                    return ExitCode::FAILURE;
                }
            };
            let mode = match mode.as_str() {
                "streaming" => harness::evolve::Mode::Streaming,
                "static" => harness::evolve::Mode::Static,
                other => {
                    eprintln!("error: `{other}` is not a mode; use `streaming` or `static`");
                    return ExitCode::FAILURE;
                }
            };
            evolve_cmd::evolve_run(&evolve_cmd::EvolveArgs {
                game: &game,
                bank: &bank,
                archive: &archive,
                mode,
                generator,
                rounds,
                candidates,
                refs,
                repair_rounds,
                instances: instances.as_deref(),
                seeds,
                seed,
                reward: &reward,
                jobs,
                llm: &llm,
            })
        }
        Command::Archive {
            view,
            archive,
            id,
            with,
            plot,
        } => evolve_cmd::archive_run(
            &view,
            &archive,
            id.as_deref(),
            with.as_ref(),
            plot.as_deref(),
        ),
        Command::Patch {
            path,
            patch,
            dry_run,
        } => repair_cmd::patch(&path, &patch, dry_run),
        Command::Repair {
            path,
            game,
            parent,
            rounds,
            smoke,
            seed,
            write,
            format,
        } => repair_cmd::run(&repair_cmd::RepairArgs {
            path: &path,
            game: &game,
            parent: parent.as_deref(),
            rounds,
            smoke: smoke.as_deref(),
            seed,
            write,
            format,
        }),
        Command::Explain { code, list, format } => check::explain(code.as_deref(), list, format),
        Command::Run {
            file,
            module,
            game,
            options,
            instance,
            seed,
            layers,
            without,
            set,
            set_json,
            format,
            trace,
            max_turns,
            llm,
        } => {
            let set_json =
                match ablate_cmd::read_set_json(&set_json).and_then(|(set_json, frozen)| {
                    frozen
                        .iter()
                        .try_for_each(|table| table.check(&[seed]))
                        .map(|()| set_json)
                }) {
                    Ok(set_json) => set_json,
                    Err(message) => {
                        eprintln!("error: {message}");
                        return ExitCode::FAILURE;
                    }
                };
            run::run(&run::RunArgs {
                file: &file,
                module: module.as_deref(),
                game: game.as_deref(),
                options,
                instance: instance.as_deref(),
                seed,
                switches: harness_runtime::Switches {
                    layers,
                    without,
                    set,
                    set_json,
                },
                json: matches!(format, RunFormat::Json),
                trace: trace.as_deref(),
                max_turns,
                llm,
            })
        }
        Command::Ablate(args) => ablate_cmd::run(&args),
        Command::Estimate(args) => estimate_cmd::run(&args),
        Command::Bench(args) => bench_cmd::run(&args),
        Command::Lens(args) => lens_cmd::run(&args),
        Command::Report { run, run2, out } => report_page(&run, run2.as_deref(), out),
        Command::Runs {
            dir,
            tags,
            game,
            settings,
            format,
        } => runs(
            &dir,
            &harness::runs::Filter {
                tags,
                game,
                settings,
            },
            format,
        ),
        Command::Map(args) => provision_cmd::run_map(&args),
        Command::Provision(args) => provision_cmd::run_provision(&args),
        Command::Fmt {
            check,
            paths,
            format,
        } => fmt_cmd::run(&paths, check, matches!(format, Format::Json)),
        Command::Lsp { stdio: _ } => lsp::run(),
        Command::Games { command } => games_cmd::run(command.as_ref()),
        Command::Completions { shell } => {
            print!("{}", completions(shell));
            ExitCode::SUCCESS
        }
        Command::Man => match man_page() {
            Ok(page) => {
                print!("{page}");
                ExitCode::SUCCESS
            }
            Err(error) => {
                eprintln!("error: cannot render the manual page: {error}");
                ExitCode::FAILURE
            }
        },
    }
}

/// The completion script for `shell`, generated from the command-line definitions.
fn completions(shell: clap_complete::Shell) -> String {
    let mut command = <Cli as clap::CommandFactory>::command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut command, "harness", &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// The manual page in roff, generated from the command-line definitions.
fn man_page() -> std::io::Result<String> {
    let mut out = Vec::new();
    clap_mangen::Man::new(<Cli as clap::CommandFactory>::command()).render(&mut out)?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_definitions_are_consistent() {
        <Cli as clap::CommandFactory>::command().debug_assert();
    }

    #[test]
    fn completions_and_the_manual_page_cover_every_command() {
        let command = <Cli as clap::CommandFactory>::command();
        let names: Vec<&str> = command.get_subcommands().map(|c| c.get_name()).collect();
        assert!(
            names.contains(&"check") && names.contains(&"lsp"),
            "{names:?}"
        );
        for shell in [
            clap_complete::Shell::Bash,
            clap_complete::Shell::Zsh,
            clap_complete::Shell::Fish,
        ] {
            let script = completions(shell);
            for name in &names {
                assert!(script.contains(name), "{shell} completion lacks `{name}`");
            }
        }
        let page = man_page().expect("renders");
        assert!(
            page.starts_with(".ie") || page.contains(".TH harness"),
            "{page}"
        );
        for name in &names {
            assert!(page.contains(name), "the manual page lacks `{name}`");
        }
    }

    #[test]
    fn lsp_accepts_the_stdio_flag_clients_append() {
        assert!(Cli::try_parse_from(["harness", "lsp", "--stdio"]).is_ok());
        assert!(Cli::try_parse_from(["harness", "lsp", "--bogus"]).is_err());
    }
}
