//! Record and replay: identical outcomes offline, missing entries, stable hashes, clean files.

use std::sync::Arc;

use harness_stdlib::llm::{
    CallMode, CallSource, CallStore, Decoding, DirStore, LlmFailure, OutcomeKind, ProviderKind,
    RecordKey, ReplyShape, request_hash,
};

use crate::server::{Behavior, TestServer, closed_port_url};
use crate::{GOOD_REPLY, SECRET, TempDir, client, options, provider, request};

#[test]
fn a_recorded_run_replays_offline_with_identical_outcomes() {
    let dir = TempDir::new("record");
    let kind = ProviderKind::OpenAiCompatible;
    let server = TestServer::start(vec![
        Behavior::Reply(GOOD_REPLY.into()),
        Behavior::Reply("not json".into()),
        Behavior::Status(500, format!("{{\"error\":\"bad key {SECRET}\"}}")),
        Behavior::Reply(r#"{"revisionKind":"widen","coarseBudget":99}"#.into()),
        Behavior::Stall,
    ]);
    let prompts = ["turn 1", "turn 2", "turn 3", "turn 4", "turn 5"];
    let store: Arc<dyn CallStore> = Arc::new(DirStore::new(dir.path()));

    let mut recorder = client(
        provider(kind, server.base_url(kind), Some(SECRET)),
        options(300, 1),
        CallMode::Record(Arc::clone(&store)),
    );
    let recorded: Vec<_> = prompts.iter().map(|p| recorder.call(&request(p))).collect();
    let kinds: Vec<OutcomeKind> = recorded.iter().map(|c| c.record.outcome).collect();
    assert_eq!(
        kinds,
        [
            OutcomeKind::Ok,
            OutcomeKind::MalformedJson,
            OutcomeKind::HttpStatus,
            OutcomeKind::OutOfRange,
            OutcomeKind::Timeout
        ]
    );
    assert_eq!(server.received().len(), 5);
    drop(server);

    // Replay against a port where nothing listens: any network use would fail the comparison.
    let mut replayer = client(
        provider(kind, closed_port_url(), None),
        options(300, 1),
        CallMode::Replay(store),
    );
    for (prompt, original) in prompts.iter().zip(&recorded) {
        let replayed = replayer.call(&request(prompt));
        assert_eq!(replayed.outcome, original.outcome, "{prompt}");
        assert_eq!(replayed.record.source, CallSource::Replay);
        let mut expected = original.record.clone();
        expected.source = CallSource::Replay;
        assert_eq!(replayed.record, expected, "{prompt}");
    }

    let files: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        files.len(),
        5,
        "one file per request, no temp files: {files:?}"
    );
    for name in files {
        assert!(
            name.ends_with("-r0-o1.json") && name.len() == 64 + 11,
            "{name}"
        );
        let text = std::fs::read_to_string(dir.path().join(&name)).unwrap();
        assert!(!text.contains(SECRET), "{name}");
        let stored: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(stored["request"]["provider"], "openai");
        assert_eq!(stored["key"].as_str().unwrap(), &name[..64]);
    }
}

#[test]
fn a_missing_entry_in_replay_is_an_error_not_a_fallback() {
    let dir = TempDir::new("missing");
    let kind = ProviderKind::Ollama;
    let server = TestServer::start(vec![Behavior::Reply(GOOD_REPLY.into())]);
    let mut replayer = client(
        provider(kind, server.base_url(kind), None),
        options(300, 1),
        CallMode::Replay(Arc::new(DirStore::new(dir.path()))),
    );
    let req = request("never recorded");
    let call = replayer.call(&req);
    let key = format!("{}-r0-o1", replayer.request_hash(&req));
    assert_eq!(
        call.outcome,
        Err(LlmFailure::ReplayMissing { key: key.clone() })
    );
    assert_eq!(call.record.outcome, OutcomeKind::ReplayMissing);
    assert_eq!(call.record.attempts, 0);
    assert!(server.received().is_empty(), "replay never goes live");
    assert!(call.outcome.unwrap_err().to_string().contains(&key));
}

#[test]
fn a_corrupt_entry_is_a_store_failure() {
    let dir = TempDir::new("corrupt");
    let kind = ProviderKind::Ollama;
    let store = DirStore::new(dir.path());
    let mut replayer = client(
        provider(kind, closed_port_url(), None),
        options(300, 1),
        CallMode::Replay(Arc::new(store.clone())),
    );
    let req = request("x");
    std::fs::create_dir_all(dir.path()).unwrap();
    let key = |hash: &str| RecordKey {
        hash: hash.to_owned(),
        replicate: 0,
        occurrence: 1,
        first_format_hash: None,
    };
    std::fs::write(
        store.path_for(&key(&replayer.request_hash(&req))).unwrap(),
        "{trunc",
    )
    .unwrap();
    let call = replayer.call(&req);
    assert!(
        matches!(call.outcome, Err(LlmFailure::Store { .. })),
        "{:?}",
        call.outcome
    );
    assert!(store.path_for(&key("../etc/passwd")).is_err());
    assert!(store.load(&key("not-a-hash")).is_err());
}

#[test]
fn the_hash_covers_what_determines_the_answer_and_nothing_else() {
    let base = request("state");
    let hash = request_hash(ProviderKind::Ollama, "m", &Decoding::default(), &base);
    assert_eq!(
        hash,
        request_hash(
            ProviderKind::Ollama,
            "m",
            &Decoding::default(),
            &base.clone()
        )
    );
    assert_eq!(hash.len(), 64);
    assert!(
        hash.bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    );

    let mut other_prompt = base.clone();
    other_prompt.user.push('!');
    let mut other_shape = base.clone();
    other_shape.shape = ReplyShape::Enum {
        variants: vec!["a".into()],
    };
    let mut no_json = base.clone();
    no_json.json_mode = false;
    let variants = [
        request_hash(
            ProviderKind::OpenAiCompatible,
            "m",
            &Decoding::default(),
            &base,
        ),
        request_hash(ProviderKind::Ollama, "m2", &Decoding::default(), &base),
        request_hash(
            ProviderKind::Ollama,
            "m",
            &Decoding::default(),
            &other_prompt,
        ),
        request_hash(
            ProviderKind::Ollama,
            "m",
            &Decoding::default(),
            &other_shape,
        ),
        request_hash(ProviderKind::Ollama, "m", &Decoding::default(), &no_json),
    ];
    for (i, variant) in variants.iter().enumerate() {
        assert_ne!(variant, &hash, "variant {i}");
    }

    // The base URL and the key are not part of the hash.
    let a = client(
        provider(
            ProviderKind::Ollama,
            "http://127.0.0.1:1".into(),
            Some(SECRET),
        ),
        options(300, 1),
        CallMode::Live,
    );
    let b = client(
        provider(ProviderKind::Ollama, "http://127.0.0.1:2".into(), None),
        options(300, 1),
        CallMode::Live,
    );
    assert_eq!(a.request_hash(&base), b.request_hash(&base));
    assert_eq!(
        a.request_hash(&base),
        request_hash(
            ProviderKind::Ollama,
            "test-model",
            &Decoding::default(),
            &base
        )
    );
}

#[test]
fn a_failed_write_in_record_mode_is_a_store_failure() {
    let dir = TempDir::new("unwritable");
    // A regular file where the store's directory should be makes every write fail.
    std::fs::write(dir.path(), "not a directory").unwrap();
    let kind = ProviderKind::Ollama;
    let server = TestServer::start(vec![Behavior::Reply(GOOD_REPLY.into())]);
    let mut recorder = client(
        provider(kind, server.base_url(kind), None),
        options(2_000, 1),
        CallMode::Record(Arc::new(DirStore::new(dir.path()))),
    );
    let call = recorder.call(&request("x"));
    assert!(
        matches!(call.outcome, Err(LlmFailure::Store { .. })),
        "{:?}",
        call.outcome
    );
    assert_eq!(
        (call.record.source, call.record.attempts),
        (CallSource::Live, 1)
    );
    let _ = std::fs::remove_file(dir.path());
}

#[test]
fn clients_can_move_between_threads() {
    fn send_and_sync<T: Send + Sync + Clone>() {}
    send_and_sync::<harness_stdlib::llm::LlmClient>();
}
