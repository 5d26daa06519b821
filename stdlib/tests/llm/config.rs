//! Provider configuration: resolution order, validation and key redaction.

use std::collections::HashMap;

use harness_stdlib::llm::{
    ApiKey, ConfigError, ProviderConfig, ProviderKind, ProviderSettings, REDACTED,
};

use crate::SECRET;

fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    move |name| map.get(name).cloned()
}

#[test]
fn defaults_to_local_ollama() {
    let config = ProviderConfig::resolve(&ProviderSettings::default(), &env_of(&[])).unwrap();
    assert_eq!(config.kind, ProviderKind::Ollama);
    assert_eq!(config.base_url, "http://localhost:11434");
    assert_eq!(config.model, "gemma4:e4b");
    assert_eq!(config.api_key, None);
    assert_eq!(config.endpoint(), "http://localhost:11434/api/chat");
}

#[test]
fn environment_fills_what_flags_leave_out_and_flags_win() {
    let env = env_of(&[
        ("OLLAMA_BASE_URL", "http://gpu-box:11434/"),
        ("OLLAMA_MODEL", "llama3"),
        ("OPENAI_API_KEY", SECRET),
    ]);
    let from_env = ProviderConfig::resolve(&ProviderSettings::default(), &env).unwrap();
    assert_eq!(
        from_env.base_url, "http://gpu-box:11434",
        "trailing slash dropped"
    );
    assert_eq!(from_env.model, "llama3");
    assert_eq!(
        from_env.api_key, None,
        "the OpenAI key is not sent to Ollama"
    );

    let flags = ProviderSettings {
        base_url: Some("http://127.0.0.1:9".into()),
        model: Some("qwen".into()),
        ..ProviderSettings::default()
    };
    let from_flags = ProviderConfig::resolve(&flags, &env).unwrap();
    assert_eq!(from_flags.base_url, "http://127.0.0.1:9");
    assert_eq!(from_flags.model, "qwen");
}

#[test]
fn openai_takes_key_and_url_from_environment_and_needs_a_model() {
    let settings = ProviderSettings {
        provider: Some(ProviderKind::OpenAiCompatible),
        ..ProviderSettings::default()
    };
    let env = env_of(&[
        ("OPENAI_BASE_URL", "https://llm.example/v1"),
        ("OPENAI_API_KEY", SECRET),
    ]);
    assert_eq!(
        ProviderConfig::resolve(&settings, &env),
        Err(ConfigError::MissingModel(ProviderKind::OpenAiCompatible))
    );
    let settings = ProviderSettings {
        model: Some("gpt-test".into()),
        ..settings
    };
    let config = ProviderConfig::resolve(&settings, &env).unwrap();
    assert_eq!(config.endpoint(), "https://llm.example/v1/chat/completions");
    assert_eq!(config.api_key, Some(ApiKey::new(SECRET)));

    let explicit = ProviderSettings {
        api_key: Some(ApiKey::new("sk-explicit")),
        ..settings
    };
    let config = ProviderConfig::resolve(&explicit, &env).unwrap();
    assert_eq!(config.api_key.unwrap().expose_secret(), "sk-explicit");
}

#[test]
fn empty_values_count_as_unset() {
    let settings = ProviderSettings {
        provider: Some(ProviderKind::OpenAiCompatible),
        model: Some("m".into()),
        base_url: Some("  ".into()),
        ..ProviderSettings::default()
    };
    let env = env_of(&[("OPENAI_BASE_URL", ""), ("OPENAI_API_KEY", "")]);
    let config = ProviderConfig::resolve(&settings, &env).unwrap();
    assert_eq!(config.base_url, "https://api.openai.com/v1");
    assert_eq!(config.api_key, None);
}

#[test]
fn bad_base_urls_and_provider_names_are_errors() {
    for bad in [
        "localhost:11434",
        "ftp://host",
        "http://",
        "http:///path",
        "http://a b",
    ] {
        let settings = ProviderSettings {
            base_url: Some(bad.into()),
            ..ProviderSettings::default()
        };
        let result = ProviderConfig::resolve(&settings, &env_of(&[]));
        assert!(
            matches!(&result, Err(ConfigError::InvalidBaseUrl { source, .. }) if source == "--llm-base-url"),
            "{bad}: {result:?}"
        );
    }
    assert_eq!("OpenAI".parse(), Ok(ProviderKind::OpenAiCompatible));
    assert_eq!("ollama".parse(), Ok(ProviderKind::Ollama));
    let unknown = "claude".parse::<ProviderKind>().unwrap_err();
    assert!(unknown.to_string().contains("claude"), "{unknown}");
}

#[test]
fn the_key_never_prints() {
    let config = ProviderConfig {
        kind: ProviderKind::OpenAiCompatible,
        base_url: "https://llm.example/v1".into(),
        model: "m".into(),
        api_key: Some(ApiKey::new(SECRET)),
    };
    let debug = format!("{config:?}");
    let json = serde_json::to_string(&config).unwrap();
    let key = config.api_key.as_ref().unwrap();
    for text in [
        debug.clone(),
        json.clone(),
        key.to_string(),
        format!("{key:?}"),
    ] {
        assert!(!text.contains(SECRET), "{text}");
        assert!(text.contains(REDACTED), "{text}");
    }
    assert!(json.contains("\"kind\":\"openai\""), "{json}");
    assert_eq!(
        key.scrub(&format!("Incorrect API key provided: {SECRET}.")),
        format!("Incorrect API key provided: {REDACTED}.")
    );
}
