//! Replicates and occurrences in the record key (store format 2), and format 1 still readable.

use std::path::Path;
use std::sync::Arc;

use harness_stdlib::llm::{
    CallMode, CallSource, CallStore, Decoding, DirStore, FieldValue, LlmFailure, OutcomeKind,
    ProviderKind, STORE_FORMAT, STORE_MANIFEST, StoreManifest,
};

use crate::server::{Behavior, TestServer, closed_port_url};
use crate::{TempDir, client, options, provider, request};

fn reply(coarse: i64) -> String {
    format!(r#"{{"revisionKind":"narrow","coarseBudget":{coarse}}}"#)
}

fn coarse(call: &harness_stdlib::llm::LlmCall) -> i64 {
    match call.outcome.as_ref().unwrap().field("coarseBudget") {
        Some(FieldValue::Int(v)) => *v,
        other => panic!("{other:?}"),
    }
}

#[test]
fn replicates_and_occurrences_replay_their_own_answers() {
    // Before: the key was the request hash alone, "replacing any earlier entry", so N identical
    // requests replayed one answer and any reproducibility measured from a recording was 1.
    let dir = TempDir::new("replicates");
    let kind = ProviderKind::Ollama;
    let server = TestServer::start((0..6).map(|i| Behavior::Reply(reply(i))).collect());
    let store: Arc<dyn CallStore> = Arc::new(DirStore::new(dir.path()));
    let mut recorder = client(
        provider(kind, server.base_url(kind), None),
        options(2_000, 1),
        CallMode::Record(Arc::clone(&store)),
    );
    let mut recorded = Vec::new();
    for replicate in 0..3 {
        recorder.start_game(replicate);
        // The same request twice in one game: occurrences 1 and 2.
        let first = recorder.call(&request("same"));
        let second = recorder.call(&request("same"));
        assert_eq!((first.record.occurrence, second.record.occurrence), (1, 2));
        assert_eq!(first.record.replicate, replicate);
        recorded.push((coarse(&first), coarse(&second)));
    }
    assert_eq!(recorded, [(0, 1), (2, 3), (4, 5)]);
    assert_eq!(server.received().len(), 6);
    drop(server);

    let mut replayer = client(
        provider(kind, closed_port_url(), None),
        options(300, 1),
        CallMode::Replay(store),
    );
    // Replayed in another order: each replicate gets its own answers back.
    for replicate in [2, 0, 1] {
        replayer.start_game(replicate);
        let first = replayer.call(&request("same"));
        let second = replayer.call(&request("same"));
        assert_eq!(first.record.source, CallSource::Replay);
        assert_eq!(
            (coarse(&first), coarse(&second)),
            recorded[replicate as usize]
        );
        // A third occurrence was never recorded.
        let third = replayer.call(&request("same"));
        assert!(matches!(
            third.outcome,
            Err(LlmFailure::ReplayMissing { .. })
        ));
    }
    replayer.start_game(7);
    assert!(matches!(
        replayer.call(&request("same")).outcome,
        Err(LlmFailure::ReplayMissing { .. })
    ));
}

#[test]
fn games_of_one_recording_asking_the_same_question_share_one_answer() {
    // Two stacks of an ablation may make the same request in the same replicate; a recording
    // keeps one answer per key, so both must play with it, or replay would differ from one of
    // them.
    let dir = TempDir::new("shared");
    let kind = ProviderKind::Ollama;
    let server = TestServer::start(vec![Behavior::Reply(reply(1)), Behavior::Reply(reply(2))]);
    let recorder = client(
        provider(kind, server.base_url(kind), None),
        options(2_000, 1),
        CallMode::Record(Arc::new(DirStore::new(dir.path()))),
    );
    let mut a = recorder.clone();
    let mut b = recorder.clone();
    a.start_game(3);
    b.start_game(3);
    let from_a = a.call(&request("q"));
    let from_b = b.call(&request("q"));
    assert_eq!(coarse(&from_a), coarse(&from_b));
    assert_eq!(
        (from_a.record.source, from_b.record.source),
        (CallSource::Live, CallSource::Replay)
    );
    assert_eq!(server.received().len(), 1);
}

#[test]
fn a_recording_directory_names_its_settings_and_refuses_others() {
    let dir = TempDir::new("manifest");
    let store = DirStore::new(dir.path());
    assert_eq!(store.manifest().unwrap(), None);
    let manifest = StoreManifest {
        format: STORE_FORMAT,
        provider: ProviderKind::Sim,
        model: "steady".into(),
        decoding: Decoding {
            temperature: Some(1.0),
            ..Decoding::default()
        },
    };
    store.prepare_for_recording(&manifest).unwrap();
    store.prepare_for_recording(&manifest).unwrap();
    assert_eq!(store.manifest().unwrap(), Some(manifest.clone()));
    assert!(dir.path().join(STORE_MANIFEST).is_file());
    let other = StoreManifest {
        decoding: Decoding::default(),
        ..manifest
    };
    let refused = store.prepare_for_recording(&other).unwrap_err();
    assert!(refused.to_string().contains("fresh directory"), "{refused}");
}

/// A copy of the format-1 recording checked in under `fixtures/store-v1`, written by the
/// client before store format 2 existed.
fn first_format_copy() -> TempDir {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/llm/fixtures/store-v1");
    let dir = TempDir::new("v1");
    std::fs::create_dir_all(dir.path()).unwrap();
    for entry in std::fs::read_dir(source).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dir.path().join(entry.file_name())).unwrap();
    }
    dir
}

#[test]
fn a_first_format_recording_still_replays_for_every_replicate() {
    let dir = first_format_copy();
    let kind = ProviderKind::Ollama;
    let store = DirStore::new(dir.path());
    assert_eq!(
        store.manifest().unwrap(),
        None,
        "format 1 has no store.json"
    );
    let mut replayer = client(
        provider(kind, closed_port_url(), None),
        options(300, 1),
        CallMode::Replay(Arc::new(store)),
    );
    for replicate in [0, 5] {
        replayer.start_game(replicate);
        for _ in 0..2 {
            let good = replayer.call(&request("v1 fixture: good"));
            assert_eq!(good.record.outcome, OutcomeKind::Ok, "{:?}", good.outcome);
            assert_eq!(
                good.outcome.unwrap().field("coarseBudget"),
                Some(&FieldValue::Int(4))
            );
            let bad = replayer.call(&request("v1 fixture: malformed"));
            assert_eq!(bad.record.outcome, OutcomeKind::MalformedJson);
        }
    }
    // Format 1 recorded no decoding settings, so it cannot answer a run that sets some.
    let mut opts = options(300, 1);
    opts.decoding.temperature = Some(0.5);
    let mut tempered = client(
        provider(kind, closed_port_url(), None),
        opts,
        CallMode::Replay(Arc::new(DirStore::new(dir.path()))),
    );
    assert!(matches!(
        tempered.call(&request("v1 fixture: good")).outcome,
        Err(LlmFailure::ReplayMissing { .. })
    ));
}
