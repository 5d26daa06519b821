//! Hostile servers and misconfigurations (issue 19, items 7 and 8): a key echoed in any
//! encoding, credentials in the base URL, keys over plain http, redirects, rate limits and
//! oversized requests. Each test starts from the reproducer that found the problem.

use std::sync::Arc;
use std::time::{Duration, Instant};

use harness_stdlib::llm::{
    ApiKey, CallMode, CallSource, ConfigError, DirStore, LlmFailure, OutcomeKind, ProbeError,
    ProbeReport, ProviderConfig, ProviderKind, ProviderSettings, REDACTED,
};

use crate::server::{Behavior, ModelList, TestServer, closed_port_url};
use crate::{GOOD_REPLY, TempDir, client, options, provider, request};

/// A key with the characters JSON and URLs escape: `/`, `"`, `\` (before a `u`), `+`, a space.
const AWKWARD: &str = "sk-or/v1 \"q\\u+=0f1e2d3c4b5a69788796";

/// A key outside ASCII, which no HTTP header carries but a scrub must still catch.
const UNICODE: &str = "clé-sécrète-0f1e2d3c4b5a";

fn base64(bytes: &[u8], alphabet: &[u8; 64], pad: bool) -> String {
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(alphabet[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else if pad {
                out.push('=');
            }
        }
    }
    out
}

const STANDARD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URL_SAFE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// The key as servers have been seen to echo it.
fn echoes(key: &str) -> Vec<(&'static str, String)> {
    let json = serde_json::to_string(key).unwrap();
    let json = json[1..json.len() - 1].to_owned();
    let slash = json.replace('/', "\\/");
    let unicode: String = key.encode_utf16().map(|u| format!("\\u{u:04x}")).collect();
    let upper_unicode: String = key.encode_utf16().map(|u| format!("\\u{u:04X}")).collect();
    let double = serde_json::to_string(&json).unwrap();
    let double = double[1..double.len() - 1].to_owned();
    let percent: String = key.bytes().map(|b| format!("%{b:02X}")).collect();
    let form: String = key
        .bytes()
        .map(|b| match b {
            b' ' => "+".to_owned(),
            b if b.is_ascii_alphanumeric() || b == b'-' => (b as char).to_string(),
            b => format!("%{b:02x}"),
        })
        .collect();
    let mut out = vec![
        ("raw", key.to_owned()),
        ("json", json),
        ("json with \\/", slash),
        ("\\u escapes", unicode),
        ("\\U escapes", upper_unicode),
        ("escaped twice", double),
        ("percent", percent),
        ("form", form),
    ];
    for (name, prefix) in [
        ("base64", ""),
        ("basic auth", "user:"),
        ("bearer in base64", "Bearer "),
    ] {
        let text = format!("{prefix}{key}");
        out.push((name, base64(text.as_bytes(), STANDARD, true)));
        out.push((name, base64(text.as_bytes(), URL_SAFE, false)));
    }
    out
}

/// The part of each echo that identifies the key: for base64, the characters encoding only key
/// bits (what scrubbing removes); otherwise the whole echo.
fn leaks(text: &str, key: &str) -> Vec<&'static str> {
    echoes(key)
        .into_iter()
        .filter(|(name, echo)| {
            if name.contains("base64") || name.contains("basic") {
                // The first and last characters also encode neighbouring bytes.
                let inner = &echo[4..echo.len() - 4];
                text.contains(inner)
            } else {
                text.contains(echo.as_str())
            }
        })
        .map(|(name, _)| name)
        .collect()
}

#[test]
fn scrubbing_removes_the_key_in_every_encoding() {
    for key in [crate::SECRET, AWKWARD, UNICODE] {
        let secret = ApiKey::new(key);
        for (name, echo) in echoes(key) {
            let text = format!("{{\"error\":\"rejected {echo} for this account\"}}");
            let scrubbed = secret.scrub(&text);
            assert!(leaks(&scrubbed, key).is_empty(), "{name}: {scrubbed}");
            assert!(scrubbed.contains(REDACTED), "{name}: {scrubbed}");
            assert!(
                scrubbed.starts_with("{\"error\":\"rejected "),
                "{name}: {scrubbed}"
            );
            assert!(
                scrubbed.ends_with(" for this account\"}"),
                "{name}: {scrubbed}"
            );
        }
    }
    // Text without the key is left alone, even when it shares the key's first characters.
    let secret = ApiKey::new(crate::SECRET);
    let text = "sk-test and sk%2Dtest and c2stdGVzdA== are not the key";
    assert_eq!(secret.scrub(text), text);
}

#[test]
fn a_key_echoed_json_escaped_reaches_no_failure_record_or_recording() {
    // Reproducer: a server answering 401 with the key JSON-escaped in its error body; before,
    // the escaped key passed the raw-text scrub into `run --format json`, the ablation's
    // `llm/*.jsonl` and the record file.
    for key in [crate::SECRET, AWKWARD] {
        for (name, echo) in echoes(key) {
            let dir = TempDir::new("echo");
            let kind = ProviderKind::OpenAiCompatible;
            let body =
                format!("{{\"error\":{{\"message\":\"Incorrect API key provided: {echo}\"}}}}");
            let server = TestServer::start(vec![Behavior::Status(401, body)]);
            let mut recorder = client(
                provider(kind, server.base_url(kind), Some(key)),
                options(2_000, 1),
                CallMode::Record(Arc::new(DirStore::new(dir.path()))),
            );
            let call = recorder.call(&request("x"));
            assert_eq!(call.record.outcome, OutcomeKind::HttpStatus, "{name}");
            let failure = call.outcome.as_ref().unwrap_err();
            let mut texts = vec![
                failure.to_string(),
                format!("{failure:?}"),
                serde_json::to_string(failure).unwrap(),
                serde_json::to_string(&call.record).unwrap(),
            ];
            for entry in std::fs::read_dir(dir.path()).unwrap() {
                texts.push(std::fs::read_to_string(entry.unwrap().path()).unwrap());
            }
            for text in texts {
                assert!(
                    leaks(&text, key).is_empty(),
                    "{name}: {:?} in {text}",
                    leaks(&text, key)
                );
            }
        }
    }
}

#[test]
fn credentials_in_the_base_url_are_refused_without_quoting_them() {
    // Reproducer: `--llm-base-url http://user:KEY@host/v1` sent the key as Basic auth and
    // recorded it in base64.
    let secret = crate::SECRET;
    for url in [
        format!("http://user:{secret}@127.0.0.1:9/v1"),
        format!("https://{secret}@api.example/v1"),
    ] {
        let settings = ProviderSettings {
            provider: Some(ProviderKind::OpenAiCompatible),
            base_url: Some(url.clone()),
            model: Some("m".into()),
            api_key: None,
        };
        let error = ProviderConfig::resolve(&settings, &|_| None).unwrap_err();
        assert!(
            matches!(error, ConfigError::CredentialsInBaseUrl { .. }),
            "{url}: {error:?}"
        );
        let message = error.to_string();
        assert!(!message.contains(secret), "{message}");
        assert!(
            message.contains(REDACTED) && message.contains("OPENAI_API_KEY"),
            "{message}"
        );
    }
    // A configuration built by hand with credentials is refused by the transport too, so no
    // Basic header is ever sent.
    let server = TestServer::start(vec![Behavior::Reply(GOOD_REPLY.into())]);
    let url = server
        .base_url(ProviderKind::OpenAiCompatible)
        .replace("http://", &format!("http://user:{secret}@"));
    let mut client = client(
        provider(ProviderKind::OpenAiCompatible, url, None),
        options(2_000, 1),
        CallMode::Live,
    );
    let call = client.call(&request("x"));
    assert!(
        matches!(call.outcome, Err(LlmFailure::Transport { .. })),
        "{:?}",
        call.outcome
    );
    assert!(server.received().is_empty());
    assert!(!format!("{:?}", call.outcome).contains(secret));
}

#[test]
fn an_invalid_base_url_is_described_not_printed() {
    // Reproducer: a key pasted where the URL goes was printed whole in the error.
    let secret = crate::SECRET;
    for bad in [
        format!("htp://{secret}"),
        secret.to_owned(),
        format!("http://exa mple/{secret}"),
    ] {
        let settings = ProviderSettings {
            base_url: Some(bad.clone()),
            ..ProviderSettings::default()
        };
        let error = ProviderConfig::resolve(&settings, &|_| None).unwrap_err();
        let message = error.to_string();
        assert!(
            matches!(error, ConfigError::InvalidBaseUrl { .. }),
            "{message}"
        );
        assert!(!message.contains(secret), "{message}");
        assert!(message.contains("--llm-base-url"), "{message}");
    }
    let from_env = ProviderConfig::resolve(&ProviderSettings::default(), &|name| {
        (name == "OLLAMA_BASE_URL").then(|| "localhost:11434".to_owned())
    })
    .unwrap_err();
    assert!(
        from_env.to_string().contains("OLLAMA_BASE_URL"),
        "{from_env}"
    );
}

#[test]
fn a_key_over_plain_http_to_another_machine_is_warned_about() {
    // Reproducer: `OPENAI_BASE_URL=http://10.0.0.5:8000/v1` sent the key in clear, silently.
    let config = |url: &str, key: Option<&str>| ProviderConfig {
        kind: ProviderKind::OpenAiCompatible,
        base_url: url.into(),
        model: "m".into(),
        api_key: key.map(ApiKey::new),
    };
    let warned = config("http://10.0.0.5:8000/v1", Some(crate::SECRET)).warnings();
    assert_eq!(warned.len(), 1, "{warned:?}");
    assert!(
        warned[0].contains("10.0.0.5:8000") && warned[0].contains("https"),
        "{warned:?}"
    );
    assert!(!warned[0].contains(crate::SECRET));
    for quiet in [
        config("https://10.0.0.5/v1", Some("k")),
        config("http://127.0.0.1:8000/v1", Some("k")),
        config("http://localhost:8000/v1", Some("k")),
        config("http://[::1]:8000/v1", Some("k")),
        config("http://10.0.0.5:8000/v1", None),
    ] {
        assert!(quiet.warnings().is_empty(), "{}", quiet.base_url);
    }
    // A hosted endpoint without a key is an error before the run, saying what to set.
    let missing = config("https://api.example/v1", None)
        .require_key()
        .unwrap_err();
    assert!(missing.to_string().contains("OPENAI_API_KEY"), "{missing}");
    assert!(config("http://127.0.0.1:9/v1", None).require_key().is_ok());
}

#[test]
fn a_redirect_to_another_host_is_not_followed() {
    // Reproducer: a 302 to another host was followed as a GET without the prompt, and its
    // reply recorded as `ok`.
    for code in [302, 307] {
        let elsewhere = TestServer::start(vec![Behavior::Reply(GOOD_REPLY.into())]);
        let target = format!(
            "{}/chat/completions",
            elsewhere.base_url(ProviderKind::OpenAiCompatible)
        )
        .replace("127.0.0.1", "localhost");
        let kind = ProviderKind::OpenAiCompatible;
        let server = TestServer::start(vec![Behavior::Redirect(
            code,
            format!("{target}?token=t0p"),
        )]);
        let dir = TempDir::new("redirect");
        let mut recorder = client(
            provider(kind, server.base_url(kind), Some(crate::SECRET)),
            options(2_000, 3),
            CallMode::Record(Arc::new(DirStore::new(dir.path()))),
        );
        let call = recorder.call(&request("x"));
        let Err(LlmFailure::Transport { message }) = &call.outcome else {
            panic!("{code}: {:?}", call.outcome);
        };
        assert!(message.contains("another host"), "{message}");
        assert!(
            !message.contains("t0p"),
            "query values are redacted: {message}"
        );
        assert_eq!(call.record.attempts, 1, "not retried");
        assert!(
            elsewhere.received().is_empty(),
            "{code}: nothing reached the other host"
        );
        let recorded: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(recorded.len(), 1);
        let text = std::fs::read_to_string(recorded[0].as_ref().unwrap().path()).unwrap();
        assert!(text.contains("\"result\": \"failed\""), "{text}");
    }
}

#[test]
fn a_method_preserving_redirect_within_the_host_is_followed_with_the_prompt() {
    let kind = ProviderKind::OpenAiCompatible;
    let server = TestServer::start(vec![
        Behavior::Redirect(307, "/v2/chat/completions".into()),
        Behavior::Reply(GOOD_REPLY.into()),
    ]);
    let mut client = client(
        provider(kind, server.base_url(kind), None),
        options(2_000, 1),
        CallMode::Live,
    );
    let call = client.call(&request("follow me"));
    assert!(call.outcome.is_ok(), "{:?}", call.outcome);
    let received = server.received();
    assert_eq!(received.len(), 2);
    assert_eq!(
        (received[1].method.as_str(), received[1].path.as_str()),
        ("POST", "/v2/chat/completions")
    );
    assert_eq!(received[1].body, received[0].body, "the prompt goes along");

    // A 302 within the host would turn the POST into a GET: reported, not followed.
    let server = TestServer::start(vec![
        Behavior::Redirect(302, "/v2/chat/completions".into()),
        Behavior::Reply(GOOD_REPLY.into()),
    ]);
    let mut client = crate::client(
        provider(kind, server.base_url(kind), None),
        options(2_000, 1),
        CallMode::Live,
    );
    let call = client.call(&request("x"));
    assert!(
        matches!(call.outcome, Err(LlmFailure::Transport { .. })),
        "{:?}",
        call.outcome
    );
    assert_eq!(server.received().len(), 1);
}

#[test]
fn a_rate_limit_is_retried_after_its_pause_within_the_budget() {
    // Reproducer: a 429 was not retried, and `Retry-After` was ignored.
    let kind = ProviderKind::Ollama;
    let server = TestServer::start(vec![
        Behavior::RateLimited(Some("1".into())),
        Behavior::Reply(GOOD_REPLY.into()),
    ]);
    let mut client = client(
        provider(kind, server.base_url(kind), None),
        {
            let mut o = options(2_000, 3);
            o.retry.max_retry_after = Duration::from_secs(2);
            o
        },
        CallMode::Live,
    );
    let started = Instant::now();
    let call = client.call(&request("x"));
    assert!(call.outcome.is_ok(), "{:?}", call.outcome);
    assert_eq!(call.record.attempts, 2);
    assert!(
        started.elapsed() >= Duration::from_millis(950),
        "Retry-After: 1 was honoured"
    );
    assert_eq!(server.received().len(), 2);

    // Without Retry-After the client's own backoff applies.
    let server = TestServer::start(vec![
        Behavior::RateLimited(None),
        Behavior::RateLimited(None),
        Behavior::Reply(GOOD_REPLY.into()),
    ]);
    let mut client = crate::client(
        provider(kind, server.base_url(kind), None),
        options(2_000, 3),
        CallMode::Live,
    );
    assert!(client.call(&request("x")).outcome.is_ok());
    assert_eq!(server.received().len(), 3);
}

#[test]
fn a_rate_limit_beyond_the_budget_ends_the_call_with_its_status() {
    let kind = ProviderKind::Ollama;
    for (script, attempts) in [
        // A pause longer than the longest the client waits: not retried at all.
        (vec![Behavior::RateLimited(Some("3600".into()))], 1),
        // Limited on every attempt: as many attempts as the policy allows, then the status.
        (vec![Behavior::RateLimited(Some("0".into()))], 3),
    ] {
        let server = TestServer::start(script);
        let mut client = client(
            provider(kind, server.base_url(kind), None),
            options(2_000, 3),
            CallMode::Live,
        );
        let started = Instant::now();
        let call = client.call(&request("x"));
        assert!(
            matches!(call.outcome, Err(LlmFailure::HttpStatus { code: 429, .. })),
            "{:?}",
            call.outcome
        );
        assert_eq!(call.record.attempts, attempts);
        assert!(started.elapsed() < Duration::from_secs(2));
    }
}

#[test]
fn an_oversized_request_is_neither_sent_nor_recorded() {
    // Reproducer: a 74 MB prompt was POSTed and recorded.
    let kind = ProviderKind::OpenAiCompatible;
    let server = TestServer::start(vec![Behavior::Reply(GOOD_REPLY.into())]);
    let dir = TempDir::new("oversized");
    let mut opts = options(2_000, 1);
    opts.max_request_bytes = 64 * 1024;
    let mut recorder = client(
        provider(kind, server.base_url(kind), None),
        opts,
        CallMode::Record(Arc::new(DirStore::new(dir.path()))),
    );
    let call = recorder.call(&request(&"x".repeat(100_000)));
    let Err(LlmFailure::RequestTooLarge { bytes, limit }) = call.outcome else {
        panic!("{:?}", call.outcome);
    };
    assert!(bytes > 100_000 && limit == 64 * 1024);
    assert_eq!(call.record.source, CallSource::NotSent);
    assert_eq!(
        recorder.calls_this_game(),
        0,
        "an unsent request spends no budget"
    );
    assert!(server.received().is_empty());
    assert!(!dir.path().exists(), "nothing recorded");
    // A request within the limit goes out as usual.
    assert!(recorder.call(&request("small")).outcome.is_ok());
}

#[test]
fn the_probe_reports_a_dead_server_a_refused_key_and_an_unknown_model() {
    for kind in [ProviderKind::Ollama, ProviderKind::OpenAiCompatible] {
        let listed = TestServer::start_with_models(
            vec![Behavior::Reply(GOOD_REPLY.into())],
            Some(ModelList::Listed(vec![
                "test-model".into(),
                "other:7b".into(),
            ])),
        );
        let probe = |base: String, model: &str| {
            let mut config = provider(kind, base, None);
            config.model = model.into();
            client(config, options(2_000, 1), CallMode::Live).probe()
        };
        assert_eq!(
            probe(listed.base_url(kind), "test-model"),
            Ok(ProbeReport::ModelListed)
        );
        let Err(ProbeError::UnknownModel { available, .. }) = probe(listed.base_url(kind), "nope")
        else {
            panic!("{kind}: an unknown model");
        };
        assert_eq!(available, ["test-model", "other:7b"]);
        let dead = probe(closed_port_url(), "test-model").unwrap_err();
        assert!(matches!(dead, ProbeError::Unreachable { .. }), "{dead:?}");
        assert!(dead.to_string().contains("--llm-base-url"), "{dead}");

        // A server without a model list is reachable, and the model is not checked.
        let unlisted = TestServer::start(vec![Behavior::Reply(GOOD_REPLY.into())]);
        assert_eq!(
            probe(unlisted.base_url(kind), "x"),
            Ok(ProbeReport::Reachable)
        );
    }
    let kind = ProviderKind::OpenAiCompatible;
    let refusing = TestServer::start_with_models(
        vec![Behavior::Reply(GOOD_REPLY.into())],
        Some(ModelList::Refused(401)),
    );
    let config = provider(kind, refusing.base_url(kind), Some(crate::SECRET));
    let refused = client(config, options(2_000, 1), CallMode::Live).probe();
    assert_eq!(refused, Err(ProbeError::KeyRefused { status: 401 }));
    assert!(refused.unwrap_err().to_string().contains("OPENAI_API_KEY"));
}
