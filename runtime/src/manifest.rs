//! What a game declares about itself for experiments: its metrics, instance sets and options.
//!
//! The experiment engine never guesses what a game's metrics mean. A [`GameManifest`] says, for
//! each metric the game reports, whether it is a rate, a mean or a count, which direction is
//! better, which one is the primary success metric and which are costs. It names the game's
//! instance sets (a set may imply option values, as a suite of instances that only makes sense
//! under one set of rules does) and declares the game's typed options with their defaults.
//! [`GameOptions`] are options checked against the declaration, the one form a game receives.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// How a metric aggregates over episodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MetricKind {
    /// A boolean per episode; aggregated as the share of episodes where it holds (Wilson
    /// interval).
    Rate,
    /// A number per episode; aggregated as the mean (bootstrap interval).
    Mean,
    /// A whole number per episode (events, calls, steps); aggregated as the mean per episode.
    Count,
}

/// Which direction of a metric is better.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    /// Larger values are better (wins, scores).
    Higher,
    /// Smaller values are better (costs, errors).
    Lower,
    /// Neither: the metric describes, it does not rank.
    Neither,
}

/// What a metric is for in a report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MetricRole {
    /// The primary success metric: the heavy-lifting verdict is taken on it. A manifest has
    /// exactly one.
    Primary,
    /// A secondary success metric, reported beside the primary with its marginals.
    Secondary,
    /// What an episode cost (probes, tool calls, tokens).
    Cost,
    /// Reported for information only.
    Info,
}

/// One metric a game reports at the end of an episode.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetricSpec {
    /// The key in the episode's metrics, for example `solved`.
    pub name: String,
    /// A short column label, for example `solved` or `score`.
    pub label: String,
    /// How it aggregates.
    pub kind: MetricKind,
    /// Which direction is better.
    pub better: Better,
    /// What it is for.
    pub role: MetricRole,
    /// Whether the report's table shows it as a column (every metric is in the JSON and CSV).
    pub column: bool,
    /// For a rate shown as a column: the label of a column that counts the episodes where it
    /// held (`wins`), if the table should have one.
    pub count_label: Option<String>,
    /// One sentence on what it measures.
    pub doc: String,
}

impl MetricSpec {
    /// A metric shown in the table.
    pub fn new(name: &str, kind: MetricKind, better: Better, role: MetricRole, doc: &str) -> Self {
        Self {
            name: name.to_string(),
            label: name.to_string(),
            kind,
            better,
            role,
            column: true,
            count_label: None,
            doc: doc.to_string(),
        }
    }

    /// The same rate with a column counting the episodes where it held.
    pub fn counted(mut self, label: &str) -> Self {
        self.count_label = Some(label.to_string());
        self
    }

    /// The same metric with another column label.
    pub fn labelled(mut self, label: &str) -> Self {
        self.label = label.to_string();
        self
    }

    /// The same metric, kept out of the table's columns (still in JSON and CSV).
    pub fn hidden(mut self) -> Self {
        self.column = false;
        self
    }
}

/// A named set of instances, such as a published benchmark suite.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InstanceSet {
    /// The set's name, used in `--instances NAME`.
    pub name: String,
    /// What the set is.
    pub doc: String,
    /// Its instances, in a fixed order.
    pub instances: Vec<String>,
    /// Option values the set's instances are meant to be played with; choosing the set sets
    /// them, and conflicting explicit options are an error.
    pub implies: Vec<(String, String)>,
}

/// The type of a game option.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OptionType {
    /// `true` or `false`.
    Bool,
    /// An integer in an inclusive range.
    Int {
        /// The least value.
        min: i64,
        /// The greatest value.
        max: i64,
    },
    /// A finite number in an inclusive range.
    Float {
        /// The least value.
        min: f64,
        /// The greatest value.
        max: f64,
    },
    /// One of a fixed list of words.
    Choice(Vec<String>),
}

impl std::fmt::Display for OptionType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OptionType::Bool => write!(f, "true|false"),
            OptionType::Int { min, max } => write!(f, "integer {min}..={max}"),
            OptionType::Float { min, max } => write!(f, "number {min}..={max}"),
            OptionType::Choice(words) => write!(f, "{}", words.join("|")),
        }
    }
}

/// A typed option of a game, such as its rules variant.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OptionSpec {
    /// The option's name, used in `--option NAME=VALUE`.
    pub name: String,
    /// What it changes.
    pub doc: String,
    /// Its type.
    pub ty: OptionType,
    /// Its default, in canonical form.
    pub default: String,
}

impl OptionSpec {
    /// Checks `text` against the option's type and returns its canonical form.
    pub fn parse(&self, text: &str) -> Result<String, String> {
        let bad = || {
            format!(
                "`{text}` is not a value of game option `{}` ({})",
                self.name, self.ty
            )
        };
        let text = text.trim();
        match &self.ty {
            OptionType::Bool => match text {
                "true" | "false" => Ok(text.to_string()),
                _ => Err(bad()),
            },
            OptionType::Int { min, max } => {
                let value: i64 = text.parse().map_err(|_| bad())?;
                if (*min..=*max).contains(&value) {
                    Ok(value.to_string())
                } else {
                    Err(bad())
                }
            }
            OptionType::Float { min, max } => {
                let value: f64 = text.parse().map_err(|_| bad())?;
                if value.is_finite() && *min <= value && value <= *max {
                    Ok(value.to_string())
                } else {
                    Err(bad())
                }
            }
            OptionType::Choice(words) => words
                .iter()
                .find(|word| word.eq_ignore_ascii_case(text))
                .cloned()
                .ok_or_else(bad),
        }
    }
}

/// Everything a game declares for experiments.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GameManifest {
    /// The metrics of an episode, in report order; exactly one is primary.
    pub metrics: Vec<MetricSpec>,
    /// The named instance sets; the first is the default.
    pub instance_sets: Vec<InstanceSet>,
    /// The typed options.
    pub options: Vec<OptionSpec>,
}

impl GameManifest {
    /// The primary metric.
    pub fn primary(&self) -> Option<&MetricSpec> {
        self.metrics
            .iter()
            .find(|metric| metric.role == MetricRole::Primary)
    }

    /// Every instance of every set, each once, in declaration order.
    pub fn all_instances(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for set in &self.instance_sets {
            for instance in &set.instances {
                if !out.contains(instance) {
                    out.push(instance.clone());
                }
            }
        }
        out
    }

    /// Checks the declaration itself: one primary metric, unique names, defaults of the right
    /// type, implied options that exist. A game that fails this is a bug in the game, which
    /// the registry's tests catch.
    pub fn validate(&self) -> Result<(), String> {
        let primaries = self
            .metrics
            .iter()
            .filter(|metric| metric.role == MetricRole::Primary)
            .count();
        if primaries != 1 {
            return Err(format!(
                "a game declares exactly one primary metric, not {primaries}"
            ));
        }
        let mut seen = std::collections::BTreeSet::new();
        for metric in &self.metrics {
            if !seen.insert(metric.name.as_str()) {
                return Err(format!("metric `{}` is declared twice", metric.name));
            }
        }
        if self.instance_sets.is_empty() {
            return Err("a game declares at least one instance set".into());
        }
        for option in &self.options {
            option
                .parse(&option.default)
                .map_err(|error| format!("the default of option `{}`: {error}", option.name))?;
        }
        for set in &self.instance_sets {
            if set.instances.is_empty() {
                return Err(format!("instance set `{}` is empty", set.name));
            }
            for (name, value) in &set.implies {
                let option = self
                    .options
                    .iter()
                    .find(|option| &option.name == name)
                    .ok_or_else(|| {
                        format!(
                            "instance set `{}` implies unknown option `{name}`",
                            set.name
                        )
                    })?;
                option.parse(value)?;
            }
        }
        Ok(())
    }

    /// Resolves explicit `name=value` options against the declaration: unknown names and bad
    /// values are errors, every option gets its default where it is not given.
    pub fn options(&self, explicit: &[(String, String)]) -> Result<GameOptions, String> {
        let mut values = BTreeMap::new();
        for (name, text) in explicit {
            let option = self
                .options
                .iter()
                .find(|option| &option.name == name)
                .ok_or_else(|| {
                    if self.options.is_empty() {
                        format!("unknown game option `{name}`: this game has no options")
                    } else {
                        let names: Vec<&str> =
                            self.options.iter().map(|o| o.name.as_str()).collect();
                        format!(
                            "unknown game option `{name}`; the options are {}",
                            names.join(", ")
                        )
                    }
                })?;
            let value = option.parse(text)?;
            if let Some(previous) = values.insert(name.clone(), value.clone())
                && previous != value
            {
                return Err(format!(
                    "game option `{name}` is given twice, as `{previous}` and `{value}`"
                ));
            }
        }
        for option in &self.options {
            values
                .entry(option.name.clone())
                .or_insert_with(|| option.default.clone());
        }
        Ok(GameOptions(values))
    }
}

/// Game options checked against a manifest: every declared option with its canonical value.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct GameOptions(pub BTreeMap<String, String>);

impl GameOptions {
    /// The value of an option, in canonical form.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }

    /// The options as `name=value` pairs, in name order.
    pub fn pairs(&self) -> Vec<(String, String)> {
        self.0
            .iter()
            .map(|(name, value)| (name.clone(), value.clone()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest() -> GameManifest {
        GameManifest {
            metrics: vec![MetricSpec::new(
                "won",
                MetricKind::Rate,
                Better::Higher,
                MetricRole::Primary,
                "Whether the episode was won.",
            )],
            instance_sets: vec![InstanceSet {
                name: "all".into(),
                doc: "Every instance.".into(),
                instances: vec!["a".into(), "b".into()],
                implies: vec![("rules".into(), "hard".into())],
            }],
            options: vec![OptionSpec {
                name: "rules".into(),
                doc: "The rules.".into(),
                ty: OptionType::Choice(vec!["easy".into(), "hard".into()]),
                default: "easy".into(),
            }],
        }
    }

    #[test]
    fn options_are_typed_defaulted_and_canonical() {
        let manifest = manifest();
        manifest.validate().unwrap();
        let options = manifest.options(&[]).unwrap();
        assert_eq!(options.get("rules"), Some("easy"));
        let options = manifest
            .options(&[("rules".into(), "HARD".into())])
            .unwrap();
        assert_eq!(options.get("rules"), Some("hard"));
        let error = manifest
            .options(&[("rules".into(), "medium".into())])
            .unwrap_err();
        assert!(error.contains("easy|hard"), "{error}");
        let error = manifest
            .options(&[("rulez".into(), "easy".into())])
            .unwrap_err();
        assert!(error.contains("the options are rules"), "{error}");
        let error = manifest
            .options(&[
                ("rules".into(), "easy".into()),
                ("rules".into(), "hard".into()),
            ])
            .unwrap_err();
        assert!(error.contains("given twice"), "{error}");
    }

    #[test]
    fn a_manifest_needs_one_primary_metric() {
        let mut manifest = manifest();
        manifest.metrics[0].role = MetricRole::Info;
        assert!(manifest.validate().unwrap_err().contains("not 0"));
        let int = OptionSpec {
            name: "n".into(),
            doc: String::new(),
            ty: OptionType::Int { min: 1, max: 3 },
            default: "2".into(),
        };
        assert_eq!(int.parse("3").unwrap(), "3");
        assert!(int.parse("4").is_err());
        assert!(int.parse("x").is_err());
    }
}
