//! A tiny third game, written only for this test and registered in one line, is checked, run,
//! ablated and lensed with its own metrics, with no change to the command line, the lens or the
//! standard library: the engine knows games only through their declarations.
//!
//! The game: roll a die up to `limit` times and keep the last roll. An episode is `high` when
//! the kept roll is 5 or 6.

use std::collections::BTreeMap;
use std::sync::Arc;

use harness::ablate::{NoHooks, Request, ablate};
use harness::games::Registry;
use harness::lens::{self, View};
use harness_compiler::signatures::GameSig;
use harness_runtime::{
    Better, Effect, Game, GameKind, GameManifest, GameOptions, InstanceSet, MetricKind, MetricRole,
    MetricSpec, Natives, Observation, OptionSpec, OptionType, RngStreams, Stream, Value,
};

struct Dice;

struct Episode {
    rng: Stream,
    limit: i64,
    rolls: i64,
    last: i64,
    stopped: bool,
    pending: Vec<Observation>,
}

impl GameKind for Dice {
    fn name(&self) -> &str {
        "dice"
    }

    fn about(&self) -> &str {
        "Roll a die up to a limit and keep the last roll."
    }

    fn manifest(&self) -> GameManifest {
        GameManifest {
            metrics: vec![
                MetricSpec::new(
                    "high",
                    MetricKind::Rate,
                    Better::Higher,
                    MetricRole::Primary,
                    "The kept roll is 5 or 6.",
                )
                .counted("highs"),
                MetricSpec::new(
                    "kept",
                    MetricKind::Mean,
                    Better::Higher,
                    MetricRole::Secondary,
                    "The kept roll.",
                ),
                MetricSpec::new(
                    "rolls",
                    MetricKind::Count,
                    Better::Lower,
                    MetricRole::Cost,
                    "Rolls made.",
                ),
            ],
            instance_sets: vec![InstanceSet {
                name: "table".into(),
                doc: "Two tables.".into(),
                instances: vec!["short".into(), "long".into()],
                implies: Vec::new(),
            }],
            options: vec![OptionSpec {
                name: "sides".into(),
                doc: "Faces of the die.".into(),
                ty: OptionType::Int { min: 2, max: 20 },
                default: "6".into(),
            }],
        }
    }

    fn bindings(&self) -> GameSig {
        let mut sig = GameSig::new("dice", "Roll a die.");
        sig.query("rolls_left: Int", "Rolls left.", "game.rolls_left")
            .query(
                "last: Int",
                "The last roll (0 before the first).",
                "game.last",
            )
            .effect("fn roll()", "Roll the die.")
            .effect("fn stop()", "Keep the last roll and end.")
            .observation("fn rolled(face: Int)", "The face rolled.");
        sig
    }

    fn natives(&self) -> Natives {
        Natives::new()
    }

    fn start(
        &self,
        instance: &str,
        options: &GameOptions,
        streams: &RngStreams,
    ) -> Result<Box<dyn Game>, String> {
        let limit = match instance {
            "short" => 2,
            "long" => 5,
            other => return Err(format!("no table `{other}`")),
        };
        let _sides: i64 = options
            .get("sides")
            .unwrap_or("6")
            .parse()
            .map_err(|_| "sides")?;
        Ok(Box::new(Episode {
            rng: streams.stream("dice"),
            limit,
            rolls: 0,
            last: 0,
            stopped: false,
            pending: Vec::new(),
        }))
    }
}

impl Game for Episode {
    fn query(&self, name: &str, _: &[Value]) -> Result<Value, String> {
        match name {
            "rolls_left" => Ok(Value::Int(self.limit - self.rolls)),
            "last" => Ok(Value::Int(self.last)),
            other => Err(format!("no query {other}")),
        }
    }

    fn view_version(&self) -> u64 {
        self.rolls as u64 * 2 + u64::from(self.stopped)
    }

    fn apply(&mut self, effect: &Effect) -> Result<(), String> {
        match &*effect.name {
            "roll" if self.rolls < self.limit => {
                self.rolls += 1;
                self.last = 1 + self.rng.below(6) as i64;
                self.pending.push(Observation {
                    name: Arc::from("rolled"),
                    args: vec![Value::Int(self.last)],
                });
                Ok(())
            }
            "stop" => {
                self.stopped = true;
                Ok(())
            }
            other => Err(format!("cannot {other} now")),
        }
    }

    fn take_observations(&mut self) -> Vec<Observation> {
        std::mem::take(&mut self.pending)
    }

    fn is_over(&self) -> bool {
        self.stopped
    }

    fn metrics(&self) -> BTreeMap<String, Value> {
        BTreeMap::from([
            ("high".into(), Value::Bool(self.last >= 5)),
            (
                "kept".into(),
                Value::float(self.last as f64).unwrap_or(Value::Int(0)),
            ),
            ("rolls".into(), Value::Int(self.rolls)),
        ])
    }
}

/// Two layers: `roll` rolls once and stops; `persist` rolls on while the roll is low.
const HARNESS: &str = r#"harness dice_player

use game dice

layer roll {
  action again() {
    emit game.roll()
  }

  action keep() {
    emit game.stop()
  }

  decide {
    when game.last == 0 => again()
    when true => keep()
  }
}

layer persist needs roll {
  decide {
    when game.last < 5 and game.rolls_left > 0 => again()
  }
}
"#;

#[test]
fn a_game_registered_in_one_line_is_checked_run_ablated_and_lensed() {
    let registry = Registry::standard().with(Dice);
    let dir = std::env::temp_dir().join(format!("harness-third-game-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("dice.harness");
    std::fs::write(&file, HARNESS).unwrap();

    // Checked: the game's bindings reach the checker, and a misuse is an error.
    let sources = harness::load::Sources::load(Some(&file.display().to_string())).unwrap();
    let program = harness::load::compile(&registry, &sources, None).unwrap();
    assert_eq!(program.game.as_deref(), Some("dice"));
    let broken = harness::load::Sources {
        name: "broken".into(),
        files: vec![(
            "b.harness".into(),
            HARNESS.replace("game.last == 0", "game.lats == 0"),
        )],
    };
    assert!(harness::load::compile(&registry, &broken, None).is_err());
    assert!(
        harness::load::compile(&Registry::standard(), &sources, None).is_err(),
        "unregistered"
    );

    // Ablated (each episode run through the executor), with the game's own metrics.
    let request = Request {
        harness: Some(file.display().to_string()),
        seeds: Some("0..20".into()),
        options: vec![("sides".into(), "6".into())],
        out: dir.join("runs"),
        ..Request::default()
    };
    let hooks = NoHooks;
    let outcome = ablate(&registry, &request, &hooks).unwrap_or_else(|e| panic!("{e}"));
    let report = &outcome.report;
    assert_eq!(report.arms.len(), 2);
    let table = harness::report::table(report);
    assert!(
        table.contains("highs") && table.contains("high [95% CI]"),
        "{table}"
    );
    assert!(
        table.contains("kept [95% CI]") && table.contains("rolls"),
        "{table}"
    );
    assert!(table.contains("heavy lifting: `persist`"), "{table}");
    let persist = &report.marginals[0];
    assert_eq!(persist.layer, "persist");
    let (gained, lost) = persist.contrasts[0].discordant.unwrap();
    assert!(
        gained > 0 && lost == 0,
        "persisting only turns low rolls into high ones"
    );
    assert!(harness::report::csv(report).contains("marginal,L1-L2,L1,,high,40,"));

    // Lensed.
    let folder = outcome.folder.root().to_path_buf();
    let base = lens::Request {
        view: View::Run,
        run: folder.clone(),
        arm: None,
        episode: None,
        layer: Some("persist".into()),
        metric: Some("kept".into()),
        field: None,
        against: None,
        compare: None,
        overlay: Vec::new(),
        max_turns: None,
    };
    let shown = lens::show(&registry, &base).unwrap();
    assert!(
        shown
            .text
            .contains("per-instance effect of `persist` on kept"),
        "{}",
        shown.text
    );
    let game = lens::Request {
        view: View::Game,
        episode: Some("long:3".into()),
        layer: None,
        ..base.clone()
    };
    let shown = lens::show(&registry, &game).unwrap();
    assert!(
        shown.text.contains("again") && shown.text.contains("rolled"),
        "{}",
        shown.text
    );
    let compare = lens::Request {
        view: View::Compare,
        compare: Some(folder.clone()),
        layer: None,
        ..base
    };
    assert!(lens::show(&registry, &compare).is_ok());
    std::fs::remove_dir_all(&dir).unwrap();
}
