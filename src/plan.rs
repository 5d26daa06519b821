//! Experiment plans: arms × instances × seeds × replicates.
//!
//! An arm is a set of enabled layers with settings of its own. The arms of a plan are the
//! harness's cumulative stacks (the first layer, the first two, ...), its single-layer removals,
//! named layer sets, and any of those crossed with a sweep over config values. A unit is one
//! episode of the plan: an arm, an instance, a seed and a replicate (repeated runs of one
//! instance and seed, which differ only in what an LLM answers). Plans come from the command
//! line or from a TOML file (see [`PlanFile`]) and are stored whole in the run's manifest.

use std::collections::BTreeMap;

use harness_compiler::ir::Program;
use harness_runtime::{GameManifest, GameOptions};
use serde::{Deserialize, Serialize};

/// What an arm is, for the report's marginals.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum ArmRole {
    /// A cumulative stack: its marginal is over the stack below it in the same sweep point.
    Cumulative,
    /// The full stack without `layer`: the full stack's advantage over it is `layer`'s marginal.
    Removal {
        /// The layer removed.
        layer: String,
    },
    /// A named set of layers; compared with other arms only on request.
    Named,
}

/// One arm of a plan.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Arm {
    /// The arm's name, unique in the plan, e.g. `L1-L2` or `L1 particles=100`.
    pub name: String,
    /// The enabled layers, bottom first.
    pub layers: Vec<String>,
    /// The arm's own settings (a sweep point's values, a named arm's `set`), applied over the
    /// plan's settings.
    pub set: Vec<(String, String)>,
    /// What the arm is.
    pub role: ArmRole,
    /// The sweep point the arm belongs to (`particles=100 belief=smc`), empty without sweeps;
    /// marginals compare arms of one point only.
    pub point: String,
}

/// What to run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    /// The arms, in report order.
    pub arms: Vec<Arm>,
    /// The game instances, in order.
    pub instances: Vec<String>,
    /// The seeds, in order.
    pub seeds: Vec<u64>,
    /// Replicates per instance and seed (at least 1).
    pub replicates: u32,
    /// Pairs of named arms (treatment, baseline) to contrast over common episodes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub contrasts: Vec<(String, String)>,
}

/// `--shard K/N`: the K-th of N disjoint parts of a plan, so that N machines (the tasks of a
/// job array) can run one plan into one shared folder. Unit `i` of the plan, in plan order,
/// belongs to shard `i mod N + 1`: every arm is spread over all shards, and which shard runs an
/// episode depends on nothing but the plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// K, from 1.
    pub index: usize,
    /// N, at least 1.
    pub count: usize,
}

impl Shard {
    /// Parses `K/N` with `1 <= K <= N`.
    pub fn parse(text: &str) -> Result<Shard, String> {
        let bad = || format!("`--shard {text}`: expected K/N with 1 <= K <= N, for example 2/4");
        let (k, n) = text.split_once('/').ok_or_else(bad)?;
        let index: usize = k.trim().parse().map_err(|_| bad())?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        if index == 0 || count == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }

    /// The units of `plan` this shard runs, in plan order.
    pub fn units(&self, plan: &Plan) -> Vec<Unit> {
        plan.units()
            .into_iter()
            .enumerate()
            .filter(|(i, _)| i % self.count + 1 == self.index)
            .map(|(_, unit)| unit)
            .collect()
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// One episode of a plan.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Unit {
    /// Index into [`Plan::arms`].
    pub arm: usize,
    /// The instance.
    pub instance: String,
    /// The seed.
    pub seed: u64,
    /// The replicate, from 0.
    pub replicate: u32,
}

impl Unit {
    /// The number that tells this episode's LLM calls from those of the other episodes of the
    /// same request: the seed for replicate 0 (so a single replicate numbers its calls by seed,
    /// as `harness run` does), and the seed with the replicate in the high bits otherwise.
    pub fn llm_replicate(&self) -> u64 {
        self.seed ^ (u64::from(self.replicate) << 40)
    }
}

impl Plan {
    /// Every unit, arm by arm, then instance, seed and replicate: the order of the report's
    /// samples (bootstrap draws depend on it).
    pub fn units(&self) -> Vec<Unit> {
        let mut out = Vec::new();
        for arm in 0..self.arms.len() {
            for instance in &self.instances {
                for &seed in &self.seeds {
                    for replicate in 0..self.replicates {
                        out.push(Unit {
                            arm,
                            instance: instance.clone(),
                            seed,
                            replicate,
                        });
                    }
                }
            }
        }
        out
    }

    /// The arm called `name`.
    pub fn arm(&self, name: &str) -> Option<(usize, &Arm)> {
        self.arms
            .iter()
            .enumerate()
            .find(|(_, arm)| arm.name == name)
    }
}

/// The cumulative stacks of a program: `L1` (the first layer), `L1-L2`, ..., all layers.
pub fn cumulative(program: &Program) -> Vec<Arm> {
    let names: Vec<String> = program.layers.iter().map(|l| l.name.clone()).collect();
    (1..=names.len())
        .map(|n| Arm {
            name: if n == 1 {
                "L1".to_string()
            } else {
                format!("L1-L{n}")
            },
            layers: names[..n].to_vec(),
            set: Vec::new(),
            role: ArmRole::Cumulative,
            point: String::new(),
        })
        .collect()
}

/// The single-layer removals from the full stack. Removing a layer also removes every layer
/// that needs it, as a switch would; a removal that leaves nothing to run is skipped.
pub fn removals(program: &Program) -> Vec<Arm> {
    if program.layers.len() < 2 {
        return Vec::new();
    }
    program
        .layers
        .iter()
        .enumerate()
        .filter_map(|(index, removed)| {
            let layers: Vec<String> = program
                .layers
                .iter()
                .enumerate()
                .filter(|(i, layer)| {
                    *i != index && !layer.below.iter().any(|below| below.index() == index)
                })
                .map(|(_, layer)| layer.name.clone())
                .collect();
            (!layers.is_empty()).then(|| Arm {
                name: format!("without {}", removed.name),
                layers,
                set: Vec::new(),
                role: ArmRole::Removal {
                    layer: removed.name.clone(),
                },
                point: String::new(),
            })
        })
        .collect()
}

/// A named arm over the layers `layers` of `program`, which must exist.
pub fn named(program: &Program, name: &str, layers: &[String]) -> Result<Arm, String> {
    let known: Vec<&str> = program.layers.iter().map(|l| l.name.as_str()).collect();
    if layers.is_empty() {
        return Err(format!("arm `{name}` enables no layer"));
    }
    if let Some(unknown) = layers.iter().find(|l| !known.contains(&l.as_str())) {
        return Err(format!(
            "arm `{name}` names layer `{unknown}`, which the harness does not have; the layers are {}",
            known.join(", ")
        ));
    }
    Ok(Arm {
        name: name.to_string(),
        layers: layers.to_vec(),
        set: Vec::new(),
        role: ArmRole::Named,
        point: String::new(),
    })
}

/// Parses `--arm NAME=LAYER,LAYER`.
pub fn parse_arm(text: &str) -> Result<(String, Vec<String>), String> {
    let (name, layers) = text
        .split_once('=')
        .ok_or_else(|| format!("`{text}` is not `NAME=LAYER,LAYER...`"))?;
    let layers: Vec<String> = layers
        .split(',')
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect();
    Ok((name.trim().to_string(), layers))
}

/// One swept config value and the values it takes.
pub type Sweep = (String, Vec<String>);

/// Parses `--sweep NAME=V1,V2,...`.
pub fn parse_sweep(text: &str) -> Result<Sweep, String> {
    let (name, values) = text
        .split_once('=')
        .ok_or_else(|| format!("`{text}` is not `NAME=VALUE,VALUE...`"))?;
    let values: Vec<String> = values
        .split(',')
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_string)
        .collect();
    if values.is_empty() {
        return Err(format!("--sweep {name} gives no value"));
    }
    Ok((name.trim().to_string(), values))
}

/// The arms crossed with the cross product of the sweeps (the first sweep varies slowest).
/// Without sweeps the arms are returned as they are.
pub fn cross(arms: Vec<Arm>, sweeps: &[Sweep]) -> Result<Vec<Arm>, String> {
    let mut seen = std::collections::BTreeSet::new();
    for (name, _) in sweeps {
        if !seen.insert(name.as_str()) {
            return Err(format!("--sweep {name} is given twice"));
        }
    }
    if sweeps.is_empty() {
        return Ok(arms);
    }
    let mut points: Vec<Vec<(String, String)>> = vec![Vec::new()];
    for (name, values) in sweeps {
        points = points
            .into_iter()
            .flat_map(|point| {
                values.iter().map(move |value| {
                    let mut next = point.clone();
                    next.push((name.clone(), value.clone()));
                    next
                })
            })
            .collect();
    }
    let mut out = Vec::new();
    for point in &points {
        let label: Vec<String> = point.iter().map(|(n, v)| format!("{n}={v}")).collect();
        let label = label.join(" ");
        for arm in &arms {
            let mut set = arm.set.clone();
            for (name, value) in point {
                if set.iter().any(|(n, _)| n == name) {
                    return Err(format!(
                        "arm `{}` sets `{name}` itself, which --sweep {name} also varies",
                        arm.name
                    ));
                }
                set.push((name.clone(), value.clone()));
            }
            out.push(Arm {
                name: format!("{} {label}", arm.name),
                set,
                point: label.clone(),
                ..arm.clone()
            });
        }
    }
    Ok(out)
}

/// Parses a seed list: a count (`3` is seeds 0, 1, 2), a range (`0..100`, `5..=9`) or a
/// comma-separated list (`3,7,11`).
pub fn parse_seeds(text: &str) -> Result<Vec<u64>, String> {
    let text = text.trim();
    let number = |part: &str| {
        part.trim().replace('_', "").parse::<u64>().map_err(|_| {
            format!(
                "`{text}` is not a seed count, a range such as `0..100` or a list such as `3,7,11`"
            )
        })
    };
    let seeds: Vec<u64> = if let Some((lo, hi)) = text.split_once("..=") {
        (number(lo)?..=number(hi)?).collect()
    } else if let Some((lo, hi)) = text.split_once("..") {
        (number(lo)?..number(hi)?).collect()
    } else if text.contains(',') {
        let mut seeds = Vec::new();
        for part in text.split(',').filter(|part| !part.trim().is_empty()) {
            let seed = number(part)?;
            if seeds.contains(&seed) {
                return Err(format!("seed {seed} is listed twice in `{text}`"));
            }
            seeds.push(seed);
        }
        seeds
    } else {
        (0..number(text)?).collect()
    };
    if seeds.is_empty() {
        return Err(format!("`{text}` names no seed; give at least one"));
    }
    Ok(seeds)
}

/// Resolves the instances and the game options of a plan together, because an instance set may
/// imply options: `spec` is a set name, `all`, or a comma-separated list of instances (looked up
/// in the first set compatible with the options); `None` is the first set compatible with the
/// explicit options.
pub fn instances_and_options(
    manifest: &GameManifest,
    spec: Option<&str>,
    explicit: &[(String, String)],
) -> Result<(Vec<String>, GameOptions), String> {
    let explicit_options = manifest.options(explicit)?;
    let given = |name: &str| explicit.iter().any(|(n, _)| n == name);
    // A set is compatible when every option it implies is not given otherwise explicitly.
    let compatible = |set: &&harness_runtime::InstanceSet| {
        set.implies
            .iter()
            .all(|(name, value)| !given(name) || explicit_options.get(name) == Some(value.as_str()))
    };
    let with_set = |set: &harness_runtime::InstanceSet| -> Result<GameOptions, String> {
        let mut pairs = explicit.to_vec();
        for (name, value) in &set.implies {
            if !given(name) {
                pairs.push((name.clone(), value.clone()));
            }
        }
        manifest.options(&pairs)
    };
    let spec = spec.map(str::trim).filter(|s| !s.is_empty());
    match spec {
        None => {
            let set = manifest.instance_sets.iter().find(compatible).ok_or(
                "no instance set of the game fits the options; name instances with --instances",
            )?;
            Ok((set.instances.clone(), with_set(set)?))
        }
        Some("all") => Ok((manifest.all_instances(), explicit_options)),
        Some(spec) => {
            if let Some(set) = manifest.instance_sets.iter().find(|set| set.name == spec) {
                if !compatible(&set) {
                    let (name, value) = set
                        .implies
                        .iter()
                        .find(|(name, value)| explicit_options.get(name) != Some(value.as_str()))
                        .cloned()
                        .unwrap_or_default();
                    return Err(format!(
                        "instance set `{spec}` is played with {name}={value}, which the options contradict"
                    ));
                }
                return Ok((set.instances.clone(), with_set(set)?));
            }
            let set = manifest.instance_sets.iter().find(compatible);
            let options = match set {
                Some(set) => with_set(set)?,
                None => explicit_options,
            };
            let known = manifest.all_instances();
            let mut out: Vec<String> = Vec::new();
            for name in spec.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                let found = known
                    .iter()
                    .find(|k| k.eq_ignore_ascii_case(name))
                    .ok_or_else(|| {
                        let sets: Vec<&str> =
                            manifest.instance_sets.iter().map(|s| s.name.as_str()).collect();
                        format!(
                            "unknown instance `{name}`; the instances are {} (or a set: {}, or `all`)",
                            known.join(", "),
                            sets.join(", ")
                        )
                    })?;
                if !out.contains(found) {
                    out.push(found.clone());
                }
            }
            if out.is_empty() {
                return Err("--instances names no instance".into());
            }
            Ok((out, options))
        }
    }
}

/// Merges settings from several sources into one list: a name given twice with different values
/// is an error that names both sources.
pub fn merge_settings(
    sources: &[(&str, Vec<(String, String)>)],
) -> Result<Vec<(String, String)>, String> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut origin: BTreeMap<String, String> = BTreeMap::new();
    for (source, settings) in sources {
        for (name, value) in settings {
            match out.iter().find(|(n, _)| n == name) {
                Some((_, existing)) if existing != value => {
                    return Err(format!(
                        "conflicting settings for `{name}`: {} gives `{existing}`, {source} gives `{value}`",
                        origin[name]
                    ));
                }
                Some(_) => {}
                None => {
                    out.push((name.clone(), value.clone()));
                    origin.insert(name.clone(), source.to_string());
                }
            }
        }
    }
    Ok(out)
}

/// A value in a plan file: TOML numbers, booleans and strings all mean their text.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum Scalar {
    /// A string.
    Text(String),
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A boolean.
    Bool(bool),
}

impl Scalar {
    /// The value as `--set` would take it.
    pub fn text(&self) -> String {
        match self {
            Scalar::Text(text) => text.clone(),
            Scalar::Int(i) => i.to_string(),
            Scalar::Float(x) => x.to_string(),
            Scalar::Bool(b) => b.to_string(),
        }
    }
}

/// Seeds in a plan file: a count, a range string or a list.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum SeedsSpec {
    /// A count.
    Count(u64),
    /// A range or list as text.
    Text(String),
    /// A list.
    List(Vec<u64>),
}

/// Instances in a plan file: a set name (or `all`) or a list.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum InstancesSpec {
    /// A set name, `all`, or a comma-separated list.
    Text(String),
    /// A list.
    List(Vec<String>),
}

/// Which of the harness's own stacks a plan file runs.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum StacksSpec {
    /// `"cumulative"`, `"none"`.
    Keyword(String),
    /// Stack names, such as `["L1", "L1-L2"]`.
    List(Vec<String>),
}

/// A named arm in a plan file.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArmFile {
    /// The arm's name.
    pub name: String,
    /// Its layers.
    pub layers: Vec<String>,
    /// Its own settings.
    #[serde(default)]
    pub set: BTreeMap<String, Scalar>,
}

/// A plan written as TOML (`harness ablate --plan plan.toml`):
///
/// ```toml
/// instances = "paper"          # a set, "all", or a list of instances
/// seeds = "0..10"              # a count, a range, or a list
/// replicates = 1
/// stacks = "cumulative"        # or "none", or a list of stack names
/// removals = false
/// options = { protocol = "paper" }
/// set = { particles = 500 }
///
/// [[arm]]
/// name = "belief+reflection"
/// layers = ["belief", "planning", "reflection"]
/// set = { belief = "smc" }
///
/// [sweep]
/// particles = [100, 500, 2000]
/// ```
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanFile {
    /// The instances.
    pub instances: Option<InstancesSpec>,
    /// The seeds.
    pub seeds: Option<SeedsSpec>,
    /// Replicates per instance and seed.
    pub replicates: Option<u32>,
    /// Which cumulative stacks to run (default: all of them when no `arm` is given, none
    /// otherwise).
    pub stacks: Option<StacksSpec>,
    /// Also run the single-layer removals.
    #[serde(default)]
    pub removals: bool,
    /// Game options.
    #[serde(default)]
    pub options: BTreeMap<String, Scalar>,
    /// Settings for every arm.
    #[serde(default)]
    pub set: BTreeMap<String, Scalar>,
    /// Named arms.
    #[serde(default)]
    pub arm: Vec<ArmFile>,
    /// Sweeps over config values, crossed with every arm.
    #[serde(default)]
    pub sweep: BTreeMap<String, Vec<Scalar>>,
}

impl PlanFile {
    /// Parses a plan file's text; `path` names it in errors.
    pub fn parse(text: &str, path: &str) -> Result<PlanFile, String> {
        toml::from_str(text).map_err(|error| format!("the plan {path} is not valid: {error}"))
    }
}

/// Converts a TOML table of scalars to settings, in name order.
pub fn scalars(table: &BTreeMap<String, Scalar>) -> Vec<(String, String)> {
    table
        .iter()
        .map(|(name, value)| (name.clone(), value.text()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_are_counts_ranges_or_lists() {
        assert_eq!(parse_seeds("3").unwrap(), vec![0, 1, 2]);
        assert_eq!(parse_seeds("2..5").unwrap(), vec![2, 3, 4]);
        assert_eq!(parse_seeds("5..=6").unwrap(), vec![5, 6]);
        assert_eq!(parse_seeds("3,7,11").unwrap(), vec![3, 7, 11]);
        assert!(parse_seeds("0").unwrap_err().contains("no seed"));
        assert!(parse_seeds("3,3").unwrap_err().contains("twice"));
        assert!(parse_seeds("x").is_err());
        assert!(parse_seeds("5..2").is_err());
    }

    fn arm(name: &str) -> Arm {
        Arm {
            name: name.into(),
            layers: vec!["a".into()],
            set: Vec::new(),
            role: ArmRole::Cumulative,
            point: String::new(),
        }
    }

    #[test]
    fn shards_partition_the_plan() {
        let plan = Plan {
            arms: vec![arm("L1"), arm("L1-L2")],
            instances: vec!["a".into(), "b".into(), "c".into()],
            seeds: vec![0, 1],
            replicates: 1,
            contrasts: Vec::new(),
        };
        let mut all: Vec<Unit> = (1..=4)
            .flat_map(|k| Shard { index: k, count: 4 }.units(&plan))
            .collect();
        assert_eq!(Shard { index: 1, count: 4 }.units(&plan).len(), 3);
        all.sort();
        let mut units = plan.units();
        units.sort();
        assert_eq!(all, units, "every unit in exactly one shard");
        assert_eq!(Shard::parse("2/4").unwrap(), Shard { index: 2, count: 4 });
        for bad in ["0/4", "5/4", "1/0", "2", "a/b"] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn sweeps_cross_every_arm() {
        let arms = cross(
            vec![arm("L1"), arm("L1-L2")],
            &[
                ("particles".into(), vec!["100".into(), "500".into()]),
                ("belief".into(), vec!["mcmc".into(), "smc".into()]),
            ],
        )
        .unwrap();
        let names: Vec<&str> = arms.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names.len(), 8);
        assert_eq!(names[0], "L1 particles=100 belief=mcmc");
        assert_eq!(names[1], "L1-L2 particles=100 belief=mcmc");
        assert_eq!(names[2], "L1 particles=100 belief=smc");
        assert_eq!(arms[7].point, "particles=500 belief=smc");
        assert_eq!(
            arms[7].set,
            vec![
                ("particles".to_string(), "500".to_string()),
                ("belief".to_string(), "smc".to_string())
            ]
        );
        assert!(
            cross(
                vec![arm("L1")],
                &[
                    ("a".into(), vec!["1".into()]),
                    ("a".into(), vec!["2".into()])
                ]
            )
            .is_err()
        );
    }

    #[test]
    fn conflicting_settings_name_both_sources() {
        let error = merge_settings(&[
            ("--particles", vec![("particles".into(), "100".into())]),
            ("--set", vec![("particles".into(), "200".into())]),
        ])
        .unwrap_err();
        assert!(
            error.contains("--particles gives `100`, --set gives `200`"),
            "{error}"
        );
        let same = merge_settings(&[
            ("--particles", vec![("particles".into(), "100".into())]),
            ("--set", vec![("particles".into(), "100".into())]),
        ])
        .unwrap();
        assert_eq!(same.len(), 1);
    }

    #[test]
    fn plan_files_parse_and_reject_unknown_keys() {
        let plan = PlanFile::parse(
            "seeds = \"0..4\"\ninstances = [\"a\"]\n[[arm]]\nname = \"x\"\nlayers = [\"a\"]\nset = { n = 3 }\n[sweep]\nk = [1, 2]\n",
            "p.toml",
        )
        .unwrap();
        assert_eq!(plan.arm[0].set["n"].text(), "3");
        assert_eq!(plan.sweep["k"].len(), 2);
        let error = PlanFile::parse("seedz = 3", "p.toml").unwrap_err();
        assert!(error.contains("p.toml"), "{error}");
    }
}
