//! Accuracy of the belief backends against the exact posterior, on five fixed mid-game
//! situations: three on paper boards (a 2×2 block of hits whose owners are ambiguous; answers
//! with one of them wrong; touching ships with answers) and two on grand boards with revealed
//! colours, a sinking and unlabelled fleets. Each situation is a scripted sequence of shots on the
//! true board and of answers (ε = 0.1) fed to every backend one observation at a time, as a game
//! would; the reference is [`ExactPosterior`] on the same observations. The error of a backend is
//! the largest absolute difference over every unrevealed cell's hit probability and the
//! situation's P(yes) regions.

use harness_battleship::belief::{
    Belief, Evidence, ExactPosterior, Fleet, Mcmc, McmcCompat, McmcConfig, Smc, SmcConfig,
};
use harness_battleship::board::Board;
use harness_battleship::cell::Cell;
use harness_battleship::game::{Game, Protocol, ShotOutcome, Spotter};
use harness_battleship::grand::grand_board;
use harness_battleship::paper::paper_board;

/// One observation of a scripted situation.
#[derive(Clone, Copy, Debug)]
enum Obs {
    Shot(ShotOutcome),
    Answer(u64, bool),
}

const EPSILON: f64 = 0.1;

struct Situation {
    name: &'static str,
    fleet: Fleet,
    observations: Vec<Obs>,
    regions: Vec<u64>,
    /// True for the paper fleet (the only one `mcmc-compat` supports).
    paper: bool,
    /// True when several ships could own the same hits.
    ambiguous: bool,
}

fn cell(id: &str) -> Cell {
    id.parse().expect("cell id")
}

fn mask(ids: &[&str]) -> u64 {
    ids.iter().fold(0, |m, id| m | cell(id).bit())
}

/// Shoots `shots` on `board` and interleaves the answers `(after_shot, region, answer)`.
fn script(
    board: Board,
    protocol: Protocol,
    shots: &[&str],
    answers: &[(usize, u64, bool)],
) -> Vec<Obs> {
    let mut game = Game::new(board, protocol, Spotter::truthful());
    let mut out = Vec::new();
    for k in 0..=shots.len() {
        for &(_, region, answer) in answers.iter().filter(|a| a.0 == k) {
            out.push(Obs::Answer(region, answer));
        }
        if let Some(id) = shots.get(k) {
            out.push(Obs::Shot(game.shoot(cell(id)).expect("legal shot")));
        }
    }
    out
}

const ROW_A: u64 = 0xFF;
const ROW_H: u64 = 0xFF << 56;
const COL_8: u64 = 0x8080_8080_8080_8080;
const COL_1: u64 = 0x0101_0101_0101_0101;

fn situations() -> Vec<Situation> {
    let b1 = paper_board(1).expect("B02");
    let b0 = paper_board(0).expect("B01");
    let b2 = paper_board(2).expect("B03");
    let g1 = grand_board(0).expect("B01").expect("parses");
    let g2 = grand_board(1).expect("B02").expect("parses");
    vec![
        Situation {
            name: "paper B02: 2x2 block of hits, no answers",
            fleet: Fleet::paper(),
            observations: script(
                b1,
                Protocol::Paper,
                &[
                    "E4", "E5", "F4", "F5", "A2", "A6", "B4", "B8", "D1", "D3", "D6", "D8", "G3",
                    "G5", "G7", "H2", "H6", "H8", "E7", "C7",
                ],
                &[],
            ),
            regions: vec![
                ROW_A,
                COL_8,
                mask(&["F6", "F7"]),
                mask(&["D4", "D5"]),
                mask(&["G4", "H4"]),
            ],
            paper: true,
            ambiguous: true,
        },
        Situation {
            name: "paper B01: answers, one of them wrong",
            fleet: Fleet::paper(),
            observations: script(
                b0,
                Protocol::Paper,
                &[
                    "F3", "F4", "E3", "G4", "A5", "B7", "C4", "D8", "E1", "G1", "G7", "H6", "C6",
                    "A8", "E8", "B4",
                ],
                &[
                    (0, ROW_A, true),
                    (0, COL_8, false),
                    (2, ROW_H, false),
                    (5, COL_1, true),
                    (10, mask(&["A1", "A2", "B1", "B2"]), true),
                ],
            ),
            regions: vec![
                ROW_A,
                ROW_H,
                COL_1,
                mask(&["F7", "F8"]),
                mask(&["D1", "D2", "D3"]),
            ],
            paper: true,
            ambiguous: false,
        },
        Situation {
            name: "paper B03: touching ships, ambiguous owners, answers",
            fleet: Fleet::paper(),
            observations: script(
                b2,
                Protocol::Paper,
                &[
                    "D2", "D1", "E1", "D3", "C2", "A1", "A4", "A7", "B2", "B8", "C6", "E4", "E6",
                    "E8", "G3", "G6", "H1", "H4", "H7",
                ],
                &[
                    (3, ROW_A, false),
                    (8, COL_8, false),
                    (12, mask(&["F1", "F2", "F3", "F4", "F5"]), true),
                ],
            ),
            regions: vec![
                mask(&["F1"]),
                mask(&["G1", "H2"]),
                mask(&["C1", "B1"]),
                ROW_H,
                mask(&["F5", "F6"]),
            ],
            paper: true,
            ambiguous: true,
        },
        Situation {
            name: "grand B01: colours, a sunk ship, unlabelled 3-3-3-3",
            fleet: Fleet::unlabelled(g1.lengths()).expect("fleet"),
            observations: script(
                g1,
                Protocol::Grand,
                &[
                    "B5", "C5", "D5", "F2", "E3", "D4", "A1", "A8", "H8", "H5", "C2", "B3",
                ],
                &[(6, ROW_H, true), (9, mask(&["E4"]), true)],
            ),
            regions: vec![ROW_H, COL_1, mask(&["G2", "H2"]), mask(&["C4", "E4"])],
            paper: false,
            ambiguous: true,
        },
        Situation {
            name: "grand B02: colours, unlabelled 2-2-4-4",
            fleet: Fleet::unlabelled(g2.lengths()).expect("fleet"),
            observations: script(
                g2,
                Protocol::Grand,
                &[
                    "G5", "H3", "A3", "D4", "E5", "C6", "B2", "F2", "H8", "A8", "D1",
                ],
                &[(4, COL_8, true)],
            ),
            regions: vec![COL_8, ROW_A, mask(&["F5"]), mask(&["H1", "H2"])],
            paper: false,
            ambiguous: true,
        },
    ]
}

fn feed(belief: &mut dyn Belief, obs: &[Obs]) {
    for o in obs {
        match *o {
            Obs::Shot(s) => belief.observe_shot(&s),
            Obs::Answer(r, a) => belief.observe_answer(r, a, EPSILON),
        }
    }
}

fn exact(s: &Situation) -> (ExactPosterior, u64) {
    let mut ev = Evidence::new(s.fleet);
    for o in &s.observations {
        match *o {
            Obs::Shot(sh) => ev.observe_shot(&sh),
            Obs::Answer(r, a) => ev.observe_answer(r, a, EPSILON),
        }
    }
    let revealed = ev.hits() | ev.misses();
    (
        ExactPosterior::compute(&ev, &s.regions, 2_000_000_000).expect("enumerates"),
        revealed,
    )
}

fn max_error(belief: &dyn Belief, exact: &ExactPosterior, revealed: u64, regions: &[u64]) -> f64 {
    let p = belief.hit_probabilities(revealed);
    let q = exact.hit_probabilities(revealed);
    let mut e = p
        .iter()
        .zip(&q)
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    for &r in regions {
        e = e.max((belief.p_yes(r) - exact.p_yes(r).expect("region")).abs());
    }
    e
}

/// Largest absolute error of a backend over the tested regions, with the backend's name.
fn report(name: &str, situation: &str, error: f64) -> f64 {
    eprintln!("{situation}: {name} max abs error {error:.3}");
    error
}

/// `mcmc` against the exact posterior: N = 4,000 samples (4 chains, 250 burn-in steps, thinning
/// 10), game seed 1, maximum absolute error over every unrevealed cell's hit probability and the
/// situation's P(yes) regions at most **0.05**.
///
/// Measured over game seeds 1..=10 (50 runs): mean 0.017–0.030 per situation, worst 0.043; the
/// Monte Carlo floor for 4,000 independent draws is about 0.02–0.03 for a maximum over ~50
/// marginals. At the default N = 500 the errors are mean 0.04–0.07, worst 0.12.
#[test]
fn mcmc_matches_the_exact_posterior() {
    for s in situations() {
        let (ex, revealed) = exact(&s);
        let config = McmcConfig {
            samples: 4_000,
            ..McmcConfig::default()
        };
        let mut belief = Mcmc::new(s.fleet, 1, config);
        feed(&mut belief, &s.observations);
        let error = report(
            "mcmc",
            s.name,
            max_error(&belief, &ex, revealed, &s.regions),
        );
        assert!(error <= 0.05, "{}: mcmc error {error:.3}", s.name);
    }
}

/// `smc` against the exact posterior: N = 4,000 particles, 10 rejuvenation steps per resampling,
/// game seed 1, maximum absolute error at most **0.05** (same measure as for `mcmc`).
///
/// Measured over game seeds 1..=10: mean 0.014–0.024 per situation, worst 0.034. At N = 500 the
/// errors are mean 0.05–0.07, worst 0.088.
#[test]
fn smc_matches_the_exact_posterior() {
    for s in situations() {
        let (ex, revealed) = exact(&s);
        let config = SmcConfig {
            particles: 4_000,
            ..SmcConfig::default()
        };
        let mut belief = Smc::new(s.fleet, 1, config);
        feed(&mut belief, &s.observations);
        let error = report("smc", s.name, max_error(&belief, &ex, revealed, &s.regions));
        assert!(error <= 0.05, "{}: smc error {error:.3}", s.name);
    }
}

/// `mcmc-compat`'s documented bias (tempered 0.82/0.18 likelihood, hit ownership frozen by
/// single-ship moves, one autocorrelated chain) on the paper situations, at the paper's N = 500
/// for both samplers and game seed 1. Where hit ownership is ambiguous, compat's error must
/// exceed twice `mcmc`'s.
///
/// Measured over game seeds 1..=10 at N = 500: compat mean error 0.60 (2×2 block of hits), 0.31
/// (answers, one wrong) and 0.55 (touching ships), never below 0.34 on the two ambiguous
/// situations, against `mcmc`'s mean 0.055, 0.066 and 0.072 (worst 0.122).
#[test]
fn mcmc_compat_is_biased_where_ownership_is_ambiguous() {
    for s in situations().into_iter().filter(|s| s.paper) {
        let (ex, revealed) = exact(&s);
        let mut compat = McmcCompat::new(1, 500).expect("compat belief");
        feed(&mut compat, &s.observations);
        let compat_error = report(
            "mcmc-compat",
            s.name,
            max_error(&compat, &ex, revealed, &s.regions),
        );
        let mut mcmc = Mcmc::paper(1);
        feed(&mut mcmc, &s.observations);
        let mcmc_error = report("mcmc", s.name, max_error(&mcmc, &ex, revealed, &s.regions));
        if s.ambiguous {
            assert!(
                compat_error > 2.0 * mcmc_error,
                "{}: compat {compat_error:.3} vs mcmc {mcmc_error:.3}",
                s.name
            );
        }
    }
}
