//! Plays the 54-game paper suite with a reference policy and prints per-game lines, the
//! summary and the wall time: `cargo run --release -p harness-battleship --example suite -- wma`.

use std::time::Instant;

use harness_battleship::paper::{PAPER_BOARD_IDS, SEEDS_PER_BOARD};
use harness_battleship::reference::{
    Greedy, Mra, MraConfig, Policy, PresetVersion, Wma, play_paper_game, summarize,
};

/// The allocator of the `harness` binary (docs/decisions/0018), so that a side-by-side timing of
/// this suite and `harness ablate` compares the language with the native policies, not two
/// allocators.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let strategy = args.get(1).map_or("greedy", String::as_str);
    let no_revision = args.iter().any(|a| a == "--no-revision");
    let head = args.iter().any(|a| a == "--head");
    let particles = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(500);
    let verbose = args.iter().any(|a| a == "-v");
    let start = Instant::now();
    let mut records = Vec::new();
    for (board, board_id) in PAPER_BOARD_IDS.iter().enumerate() {
        for seed in 0..SEEDS_PER_BOARD {
            let mut policy: Box<dyn Policy> = match strategy {
                "wma" => Box::new(Wma::default()),
                "mra" => Box::new(Mra::new(MraConfig {
                    revision_enabled: !no_revision,
                    presets: if head {
                        PresetVersion::Head
                    } else {
                        PresetVersion::PaperEra
                    },
                    ..MraConfig::default()
                })),
                _ => Box::new(Greedy),
            };
            match play_paper_game(board, seed, policy.as_mut(), particles) {
                Ok(r) => {
                    println!(
                        "{} seed={}: {} | F1={:.4} | shots={} hits={} q={}",
                        r.board_id,
                        r.seed_index,
                        if r.won { "WON" } else { "LOST" },
                        r.f1,
                        r.shots,
                        r.hits,
                        r.questions
                    );
                    if verbose {
                        let acts: Vec<String> = r.actions.iter().map(|a| a.to_string()).collect();
                        println!("  {}", acts.join(" "));
                    }
                    records.push(r);
                }
                Err(e) => println!("{board_id} seed={seed}: error {e}"),
            }
        }
    }
    let s = summarize(&records);
    println!(
        "{strategy} mcmc-compat {particles}: games {} wins {} F1 {:.4} questions/game {:.2} in {:.1}s",
        s.games,
        s.wins,
        s.mean_f1,
        s.mean_questions,
        start.elapsed().as_secs_f64()
    );
}
