//! Reproduces the paper's L1 (`greedy`), L2 (`wma`) and L3 (`mra`) rows on the 54-game paper
//! suite with `mcmc-compat` and 500 samples, as the anchor's replay did (§14), plus the finer
//! statistics the anchor reports for each policy.

use std::collections::BTreeMap;

use harness_battleship::paper::{PAPER_BOARD_IDS, SEEDS_PER_BOARD};
use harness_battleship::reference::{
    ActionRecord, GameRecord, Greedy, Mra, MraConfig, Policy, PresetVersion, Wma, play_paper_game,
    summarize,
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

/// Plays the suite with `mra` and returns the records and the revision counts by preset name.
fn mra_suite(config: MraConfig) -> (Vec<GameRecord>, BTreeMap<&'static str, usize>) {
    let mut records = Vec::new();
    let mut revisions: BTreeMap<&'static str, usize> = BTreeMap::new();
    for board in 0..PAPER_BOARD_IDS.len() {
        for seed in 0..SEEDS_PER_BOARD {
            let mut policy = Mra::new(config);
            records.push(play_paper_game(board, seed, &mut policy, 500).expect("game runs"));
            for kind in policy.revisions() {
                *revisions.entry(kind.name()).or_default() += 1;
            }
        }
    }
    (records, revisions)
}

fn question_ids(r: &GameRecord) -> Vec<&str> {
    r.actions
        .iter()
        .filter_map(|a| match a {
            ActionRecord::Question { id, .. } => Some(id.as_str()),
            ActionRecord::Shot { .. } => None,
        })
        .collect()
}

#[test]
fn mra_reproduces_l3_with_paper_era_presets() {
    let (records, revisions) = mra_suite(MraConfig::default());
    let s = summarize(&records);
    assert_eq!(s.wins, 31);
    assert_eq!(rounded(s.mean_f1), "0.5521");
    // §7.8: 8.8 questions per game, 1.15 revisions per game (coarse_roi_collapse 21,
    // reopen_local_probe 41), family mix row 201, column 103, row-band 137, column-band 33.
    assert_eq!(format!("{:.1}", s.mean_questions), "8.8");
    assert_eq!(revisions.get("coarse_roi_collapse"), Some(&21));
    assert_eq!(revisions.get("reopen_local_probe"), Some(&41));
    assert_eq!(revisions.values().sum::<usize>(), 62);
    let mut families: BTreeMap<&str, usize> = BTreeMap::new();
    let (mut asked, mut repeats) = (0, 0);
    for r in &records {
        let ids = question_ids(r);
        for (k, id) in ids.iter().enumerate() {
            *families
                .entry(id.split(':').next().unwrap_or_default())
                .or_default() += 1;
            asked += 1;
            repeats += usize::from(ids[..k].contains(id));
        }
    }
    assert_eq!(families.get("row"), Some(&201));
    assert_eq!(families.get("column"), Some(&103));
    assert_eq!(families.get("row-band-2"), Some(&137));
    assert_eq!(families.get("column-band-2"), Some(&33));
    // §7.2: 16% of the reflective agent's questions are repeats.
    assert_eq!((100 * repeats + asked / 2) / asked, 16);
}

#[test]
fn mra_without_revision_and_with_head_presets() {
    let off = MraConfig {
        revision_enabled: false,
        ..MraConfig::default()
    };
    let (records, revisions) = mra_suite(off);
    let s = summarize(&records);
    assert_eq!((s.wins, rounded(s.mean_f1)), (31, "0.5523".to_string()));
    assert_eq!(format!("{:.1}", s.mean_questions), "8.0");
    assert!(revisions.is_empty());

    let head = MraConfig {
        presets: PresetVersion::Head,
        ..MraConfig::default()
    };
    let (records, revisions) = mra_suite(head);
    let s = summarize(&records);
    assert_eq!((s.wins, rounded(s.mean_f1)), (33, "0.5593".to_string()));
    // §7.8: 1.87 revisions per game with HEAD presets, cluster_closeout_bias 36 and
    // confidence_collapse_reprobe 14 among them.
    let total: usize = revisions.values().sum();
    assert_eq!(format!("{:.2}", total as f64 / 54.0), "1.87");
    assert_eq!(revisions.get("cluster_closeout_bias"), Some(&36));
    assert_eq!(revisions.get("confidence_collapse_reprobe"), Some(&14));
}
