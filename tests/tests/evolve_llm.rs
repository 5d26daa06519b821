//! The LLM generator of `harness evolve`: a run recorded against the simulated model (a test
//! instrument) is reproduced byte for byte from the recording, offline; a reply that holds no
//! harness is a rejected candidate with its reason.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use harness::evolve::{Config, Generator, Mode, evolve_with};
use harness::evolve_llm::{ClientModel, Model, read_reply};
use harness::games::Registry;
use harness::load::Sources;
use harness_stdlib::llm::{
    CallMode, ClientOptions, Decoding, DirStore, LlmClient, Persona, ProviderConfig, ProviderKind,
    STORE_FORMAT, SimTransport, StoreManifest,
};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn bank(game: &str) -> Vec<Sources> {
    let dir = repo().join("harnesses/jit").join(game);
    harness::load::read_bank(&dir).unwrap_or_else(|e| panic!("{e}"))
}

fn config(game: &str, instances: &[&str], reward: &str) -> Config {
    Config {
        game: game.into(),
        instances: instances.iter().map(|s| s.to_string()).collect(),
        seeds: 3,
        rounds: 3,
        candidates: 2,
        refs: 3,
        repair_rounds: 2,
        mode: Mode::Streaming,
        generator: Generator::Llm,
        seed: 0,
        reward: reward.into(),
        smoke: instances[0].into(),
        jobs: 2,
    }
}

/// A temporary directory removed on drop.
struct Temp(PathBuf);

impl Temp {
    fn new(tag: &str) -> Temp {
        let dir =
            std::env::temp_dir().join(format!("harness-evolve-llm-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        Temp(dir)
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn options() -> ClientOptions {
    ClientOptions {
        decoding: Decoding {
            temperature: Some(0.0),
            ..Decoding::default()
        },
        ..ClientOptions::default()
    }
}

fn config_of(model: &str) -> ProviderConfig {
    ProviderConfig {
        kind: ProviderKind::Sim,
        base_url: ProviderKind::Sim.default_base_url().into(),
        model: model.into(),
        api_key: None,
    }
}

/// Every file under `dir`, by relative path, with its bytes.
fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{e}")) {
            let path = entry.unwrap_or_else(|e| panic!("{e}")).path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{e}"));
                out.push((path.strip_prefix(dir).unwrap_or(&path).to_path_buf(), bytes));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_recorded_llm_evolution_replays_byte_for_byte_offline() {
    let registry = Registry::standard();
    let config = config("search", &["n16-p25", "n32-p20"], "score");
    let text = std::fs::read_to_string(repo().join("harnesses/jit/personas/evolve-search.toml"))
        .unwrap_or_else(|e| panic!("{e}"));
    let persona = Persona::parse(&text).unwrap_or_else(|e| panic!("{e}"));
    let name = persona.name.clone();
    let store_dir = Temp::new("store");
    let store = Arc::new(DirStore::new(&store_dir.0));
    store
        .prepare_for_recording(&StoreManifest {
            format: STORE_FORMAT,
            provider: ProviderKind::Sim,
            model: name.clone(),
            decoding: options().decoding,
        })
        .unwrap_or_else(|e| panic!("{e}"));
    let recorder = LlmClient::new(
        config_of(&name),
        Arc::new(SimTransport::new(persona)),
        options(),
        CallMode::Record(store.clone()),
    );
    let mut model = ClientModel::new(recorder);
    let recorded = evolve_with(&registry, &bank("search"), &config, Some(&mut model))
        .unwrap_or_else(|e| panic!("{e}"));
    // The recorded run made a model-written entry that took a model repair round answering a
    // checker code, so the replay below reproduces more than the bank.
    let written: Vec<_> = recorded
        .items
        .iter()
        .filter(|(e, _)| e.generator == "llm" && e.valid)
        .collect();
    assert!(!written.is_empty(), "{:?}", recorded.index);
    assert!(
        written.iter().any(|(e, _)| e
            .repair
            .iter()
            .any(|r| r.rules == ["llm"] && !r.codes.is_empty())),
        "{:?}",
        written[0].0
    );
    assert_eq!(recorded.verify(), Vec::<String>::new());

    // Replay: the plain HTTP client, which would fail without a server, answered from the store.
    let replayer = LlmClient::http(config_of(&name), options(), CallMode::Replay(store));
    let mut model = ClientModel::new(replayer);
    let replayed = evolve_with(&registry, &bank("search"), &config, Some(&mut model))
        .unwrap_or_else(|e| panic!("{e}"));
    let (a, b) = (Temp::new("recorded"), Temp::new("replayed"));
    recorded.write(&a.0).unwrap_or_else(|e| panic!("{e}"));
    replayed.write(&b.0).unwrap_or_else(|e| panic!("{e}"));
    let (first, second) = (tree(&a.0), tree(&b.0));
    assert!(first.len() > 5);
    assert_eq!(
        first.iter().map(|(p, _)| p).collect::<Vec<_>>(),
        second.iter().map(|(p, _)| p).collect::<Vec<_>>()
    );
    for ((path, x), (_, y)) in first.iter().zip(&second) {
        assert!(x == y, "{} differs", path.display());
    }

    // An empty store answers nothing: every candidate is refused with the replay's reason, so
    // the byte-for-byte match above came from the recording.
    let empty = Temp::new("empty");
    let mut model = ClientModel::new(LlmClient::http(
        config_of(&name),
        options(),
        CallMode::Replay(Arc::new(DirStore::new(&empty.0))),
    ));
    let missing = evolve_with(&registry, &bank("search"), &config, Some(&mut model))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        missing
            .items
            .iter()
            .all(|(e, _)| e.generator != "llm" || !e.valid)
    );
    assert!(
        missing
            .items
            .iter()
            .any(|(e, _)| e.generator == "llm" && e.reason.starts_with("refused before validation"))
    );
}

/// A model that answers every request with the same text.
struct Says(&'static str);

impl Model for Says {
    fn ask(&mut self, _: &str, _: &str, _: &str) -> Result<String, String> {
        Ok(self.0.to_string())
    }
}

#[test]
fn a_garbage_reply_is_a_rejected_candidate_with_its_reason() {
    let registry = Registry::standard();
    let config = config("finance_ecl", &["default"], "success");
    for (reply, reason) in [
        ("", "holds no harness text"),
        ("I cannot help with that.", "not harness text"),
        ("```\n\n```", "holds no harness text"),
    ] {
        let archive = evolve_with(
            &registry,
            &bank("finance_ecl"),
            &config,
            Some(&mut Says(reply)),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let rejected: Vec<&str> = archive
            .items
            .iter()
            .filter(|(e, _)| e.generator == "llm")
            .map(|(e, _)| e.reason.as_str())
            .collect();
        assert_eq!(rejected.len(), 1, "{reply:?}: {rejected:?}");
        assert!(rejected[0].contains(reason), "{reply:?}: {}", rejected[0]);
        assert_eq!(archive.verify(), Vec::<String>::new());
    }
    // Without a model the generator is refused before anything runs.
    assert!(evolve_with(&registry, &bank("finance_ecl"), &config, None).is_err());
}

#[test]
fn a_reply_is_read_into_files() {
    let parent = Sources {
        name: "p".into(),
        files: vec![("dir/a.harness".into(), "harness x.a\n".into())],
    };
    let one =
        read_reply("```harness\nharness x.b\n```", &parent, "c").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        one.files,
        vec![("a.harness".to_string(), "harness x.b\n".to_string())]
    );
    let two = read_reply(
        "// file: m.harness\nharness x.m\n// file: k.harness\n// a comment\nharness x.k\n",
        &parent,
        "c",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        two.files
            .iter()
            .map(|(p, _)| p.as_str())
            .collect::<Vec<_>>(),
        ["k.harness", "m.harness"]
    );
    for bad in [
        "// file: ../x.harness\nharness x.a\n",
        "// file: a.txt\nharness x.a\n",
        "prose first\n// file: a.harness\nharness x.a\n",
        "// file: a.harness\nharness x.a\n// file: a.harness\nharness x.b\n",
        "{\"harness\": 3}",
    ] {
        assert!(read_reply(bad, &parent, "c").is_err(), "{bad:?}");
    }
}

#[test]
fn a_persona_capture_with_replacements_is_checked() {
    let head = "name = \"p\"\ndescription = \"d\"\n[effects.e]\n";
    let good = format!("{head}reply.t = {{ capture = '(a+)', replace = [['a', 'b']] }}\n");
    assert!(Persona::parse(&good).is_ok());
    for bad in [
        "replace = 'ab'",
        "replace = [['a']]",
        "replace = [['', 'b']]",
        "replace = [[1, 2]]",
    ] {
        let text = format!("{head}reply.t = {{ capture = '(a+)', {bad} }}\n");
        let error = Persona::parse(&text).err().map(|e| e.0).unwrap_or_default();
        assert!(error.contains("replace"), "{bad}: {error:?}");
    }
}
