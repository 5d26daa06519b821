//! Reproduces the paper's L1 (`greedy`) and L2 (`wma`) rows on the 54-game paper suite with
//! `mcmc-compat` and 500 samples, game for game in aggregate, as the anchor's replay did (§14).

use std::collections::BTreeMap;

use harness_battleship::paper::{PAPER_BOARD_IDS, SEEDS_PER_BOARD};
use harness_battleship::reference::{
    ActionRecord, GameRecord, Greedy, Policy, Wma, play_paper_game, summarize,
};

fn suite(make: fn() -> Box<dyn Policy>) -> Vec<GameRecord> {
    let mut records = Vec::new();
    for board in 0..PAPER_BOARD_IDS.len() {
        for seed in 0..SEEDS_PER_BOARD {
            let mut policy = make();
            records.push(play_paper_game(board, seed, policy.as_mut(), 500).expect("game runs"));
        }
    }
    records
}

fn rounded(x: f64) -> String {
    format!("{x:.4}")
}

#[test]
fn greedy_reproduces_l1() {
    let records = suite(|| Box::new(Greedy));
    let s = summarize(&records);
    assert_eq!(s.games, 54);
    assert_eq!(s.wins, 27);
    assert_eq!(rounded(s.mean_f1), "0.5219");
    assert!(records.iter().all(|r| r.questions == 0));
    for r in &records {
        assert!(r.shots <= 40);
        assert_eq!(r.won, r.hits == 14);
    }
}

#[test]
fn wma_reproduces_l2() {
    let records = suite(|| Box::new(Wma::default()));
    let s = summarize(&records);
    assert_eq!(s.wins, 40);
    assert_eq!(rounded(s.mean_f1), "0.5388");
    // §5: mean 11.9 questions per game.
    assert_eq!(format!("{:.1}", s.mean_questions), "11.9");

    // §5: the first question is row A 18 times, row H 13, column 8 12 and column 1 11.
    let mut first: BTreeMap<String, usize> = BTreeMap::new();
    // §5: question mix by family over the 54 games.
    let mut families: BTreeMap<String, usize> = BTreeMap::new();
    for r in &records {
        let ids: Vec<&str> = r
            .actions
            .iter()
            .filter_map(|a| match a {
                ActionRecord::Question { id, .. } => Some(id.as_str()),
                ActionRecord::Shot { .. } => None,
            })
            .collect();
        if let Some(id) = ids.first() {
            *first.entry(id.to_string()).or_default() += 1;
        }
        for id in ids {
            let family = id.split(':').next().unwrap_or_default();
            *families.entry(family.to_string()).or_default() += 1;
        }
        // The coarse bonus beats any shot before the first hit, so every game opens with a question.
        assert!(matches!(
            r.actions.first(),
            Some(ActionRecord::Question { .. })
        ));
    }
    assert_eq!(first.get("row:A"), Some(&18));
    assert_eq!(first.get("row:H"), Some(&13));
    assert_eq!(first.get("column:8"), Some(&12));
    assert_eq!(first.get("column:1"), Some(&11));
    assert_eq!(families.get("row"), Some(&290));
    assert_eq!(families.get("column"), Some(&206));
    assert_eq!(families.get("block-2x2"), Some(&135));
    assert_eq!(families.get("quadrant"), Some(&11));
}
