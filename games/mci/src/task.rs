//! Tasks as data: the paper's 12 classes ⟨ω, τ, e⟩, the task table (`tasks/<game>.tsv`), the
//! construction/test split, answers and the rule graders.
//!
//! A task row is `id, class, family, scenario, t_now, prompt, gt_spec, grader, tolerance`. The
//! `gt_spec` is `{"method": ..., "args": {...}}`, resolved by the privileged oracle of the
//! task's game; its `args` are also what the prompt states (a signal, a horizon, a limit), so
//! the agent may read them. The split follows the task's index within its class: 0–4
//! construction, 5–9 test (the paper's 5/5, B.4).

use std::collections::BTreeMap;
use std::fmt;

/// Tasks per class per domain.
pub const PER_CLASS: usize = 10;

/// Tasks per class in the construction split (indices `0..CONSTRUCTION`).
pub const CONSTRUCTION: usize = 5;

/// The target element e of a task.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Element {
    /// An observable signal y.
    Signal,
    /// A latent state x.
    State,
    /// A mechanism m (topology, dynamics, constraints, control logic).
    Mechanism,
}

/// A task class ⟨ω, τ, e⟩.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Class {
    /// ω: true for Act (choose an intervention), false for Inform (report).
    pub act: bool,
    /// τ: true for Future (t + Δ), false for Now (t).
    pub future: bool,
    /// e: the target element.
    pub element: Element,
}

impl Class {
    /// The 12 classes in the paper's order: I-N-S, I-N-X, I-N-M, I-F-S, …, A-F-M.
    pub fn all() -> Vec<Class> {
        let mut out = Vec::with_capacity(12);
        for act in [false, true] {
            for future in [false, true] {
                for element in [Element::Signal, Element::State, Element::Mechanism] {
                    out.push(Class {
                        act,
                        future,
                        element,
                    });
                }
            }
        }
        out
    }

    /// Parses `I-N-S`, `A-F-X`, ….
    pub fn parse(code: &str) -> Option<Class> {
        let mut parts = code.split('-');
        let act = match parts.next()? {
            "I" => false,
            "A" => true,
            _ => return None,
        };
        let future = match parts.next()? {
            "N" => false,
            "F" => true,
            _ => return None,
        };
        let element = match parts.next()? {
            "S" => Element::Signal,
            "X" => Element::State,
            "M" => Element::Mechanism,
            _ => return None,
        };
        parts.next().is_none().then_some(Class {
            act,
            future,
            element,
        })
    }
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let e = match self.element {
            Element::Signal => 'S',
            Element::State => 'X',
            Element::Mechanism => 'M',
        };
        write!(
            f,
            "{}-{}-{e}",
            if self.act { 'A' } else { 'I' },
            if self.future { 'F' } else { 'N' }
        )
    }
}

/// Which split a task belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Split {
    /// Used to estimate the map.
    Construction,
    /// Held out: policies are evaluated here.
    Test,
}

impl Split {
    /// `construction` or `test`.
    pub fn name(self) -> &'static str {
        match self {
            Split::Construction => "construction",
            Split::Test => "test",
        }
    }
}

/// A task argument: a number or a name.
#[derive(Clone, Debug, PartialEq)]
pub enum Arg {
    /// A number (a limit, a horizon, a flow).
    Num(f64),
    /// A name (a signal, a plate, a line).
    Str(String),
}

/// The typed rule grader of a task (D.2, without the LLM judge).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Grader {
    /// 1 within the tolerance, linearly down to 0 at three tolerances.
    Numeric(f64),
    /// Jaccard overlap of two sets of names.
    Set,
    /// A yes/no answer: 1 when the polarity matches.
    Polarity,
    /// `up`, `down` or `flat`: 1 when it matches.
    Direction,
    /// One name: 1 when it matches.
    Label,
    /// An intervention: 1 when feasible and within 5% of the oracle's cost, 0.5 when only
    /// feasible, else 0 (feasibility and cost are checked by the simulator).
    Action,
}

/// An answer, as the agent submits it or the oracle derives it.
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    /// A number.
    Number(f64),
    /// A name.
    Label(String),
    /// A set of names.
    Set(Vec<String>),
    /// Yes or no.
    Bool(bool),
    /// An intervention: set `control` to `value`, held from now on.
    Action {
        /// The control's name (`pump.speed`, `redispatch.G3`).
        control: String,
        /// Its new value (the control's unit).
        value: f64,
    },
}

impl fmt::Display for Answer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Answer::Number(x) => write!(f, "{x:.4}"),
            Answer::Label(l) => write!(f, "{l}"),
            Answer::Set(s) => write!(f, "{{{}}}", s.join(", ")),
            Answer::Bool(b) => write!(f, "{}", if *b { "yes" } else { "no" }),
            Answer::Action { control, value } => write!(f, "{control} = {value:.4}"),
        }
    }
}

/// The simulator's verdict on an intervention.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Verdict {
    /// The constraint holds and the control stays within its range.
    pub feasible: bool,
    /// The intervention's cost (its unit depends on the task: pump power, MW redispatched).
    pub cost: f64,
}

/// One task.
#[derive(Clone, Debug, PartialEq)]
pub struct Task {
    /// `cooling.I-N-S.03`.
    pub id: String,
    /// Its class.
    pub class: Class,
    /// Its template family (`value_at`, `min_pump_for_outlet`…).
    pub family: String,
    /// The scenario (trajectory) it is posed on.
    pub scenario: String,
    /// The current time, in the game's unit; nothing after it is visible.
    pub t_now: i64,
    /// The task as the agent reads it.
    pub prompt: String,
    /// The oracle method.
    pub method: String,
    /// The method's arguments, also stated in the prompt.
    pub args: BTreeMap<String, Arg>,
    /// How an answer is scored.
    pub grader: Grader,
}

impl Task {
    /// The task's index within its class (the last part of its id).
    pub fn index(&self) -> usize {
        self.id
            .rsplit('.')
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    }

    /// Its split: indices 0–4 construction, 5–9 test.
    pub fn split(&self) -> Split {
        if self.index() < CONSTRUCTION {
            Split::Construction
        } else {
            Split::Test
        }
    }

    /// The numeric argument `name`.
    pub fn num(&self, name: &str) -> Option<f64> {
        match self.args.get(name)? {
            Arg::Num(x) => Some(*x),
            Arg::Str(_) => None,
        }
    }

    /// The name argument `name`.
    pub fn text(&self, name: &str) -> Option<&str> {
        match self.args.get(name)? {
            Arg::Str(s) => Some(s),
            Arg::Num(_) => None,
        }
    }

    /// The horizon Δ of a Future task (0 for a Now task), in the game's time unit.
    pub fn horizon(&self) -> i64 {
        self.num("horizon").map_or(0, |h| h as i64)
    }
}

/// Scores `answer` against the oracle's `truth` with `grader`. For an action, `verdict` is
/// the simulator's judgement of the submitted action and `best_cost` the oracle action's cost.
pub fn score(
    grader: Grader,
    answer: &Answer,
    truth: &Answer,
    verdict: Option<Verdict>,
    best_cost: f64,
) -> f64 {
    let same = |a: &str, b: &str| a.trim().eq_ignore_ascii_case(b.trim());
    match (grader, answer, truth) {
        (Grader::Numeric(tol), Answer::Number(a), Answer::Number(t)) => {
            let err = (a - t).abs();
            if !err.is_finite() || err >= 3.0 * tol {
                0.0
            } else if err <= tol {
                1.0
            } else {
                1.0 - (err - tol) / (2.0 * tol)
            }
        }
        (Grader::Set, Answer::Set(a), Answer::Set(t)) => {
            let norm = |s: &[String]| {
                let mut v: Vec<String> = s.iter().map(|x| x.trim().to_ascii_lowercase()).collect();
                v.sort();
                v.dedup();
                v
            };
            let (a, t) = (norm(a), norm(t));
            let inter = a.iter().filter(|x| t.contains(x)).count();
            let union = a.len() + t.len() - inter;
            if union == 0 {
                1.0
            } else {
                inter as f64 / union as f64
            }
        }
        (Grader::Polarity, Answer::Bool(a), Answer::Bool(t)) => f64::from(u8::from(a == t)),
        (Grader::Direction | Grader::Label, Answer::Label(a), Answer::Label(t)) => {
            f64::from(u8::from(same(a, t)))
        }
        (Grader::Action, Answer::Action { .. }, Answer::Action { .. }) => match verdict {
            Some(v) if v.feasible && v.cost <= 1.05 * best_cost + 1e-6 => 1.0,
            Some(v) if v.feasible => 0.5,
            _ => 0.0,
        },
        // An answer of the wrong kind scores nothing.
        _ => 0.0,
    }
}

/// A problem with one line of a task table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableError {
    /// The 1-based line number.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for TableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// The columns of a task table, in order.
pub const COLUMNS: [&str; 9] = [
    "id",
    "class",
    "family",
    "scenario",
    "t_now",
    "prompt",
    "gt_spec",
    "grader",
    "tolerance",
];

/// Parses a task table: a header line with [`COLUMNS`], then one task per line, tab-separated.
/// Every bad line is reported.
pub fn parse_table(text: &str) -> Result<Vec<Task>, Vec<TableError>> {
    let mut tasks = Vec::new();
    let mut errors = Vec::new();
    let mut lines = text.lines().enumerate();
    match lines.next() {
        Some((_, header)) if header.split('\t').eq(COLUMNS) => {}
        _ => errors.push(TableError {
            line: 1,
            message: format!("the header must be `{}`", COLUMNS.join("\\t")),
        }),
    }
    for (i, line) in lines {
        if line.trim().is_empty() {
            continue;
        }
        match parse_row(line) {
            Ok(task) => tasks.push(task),
            Err(message) => errors.push(TableError {
                line: i + 1,
                message,
            }),
        }
    }
    if errors.is_empty() {
        Ok(tasks)
    } else {
        Err(errors)
    }
}

fn parse_row(line: &str) -> Result<Task, String> {
    let cells: Vec<&str> = line.split('\t').collect();
    if cells.len() != COLUMNS.len() {
        return Err(format!(
            "expected {} tab-separated cells, found {}",
            COLUMNS.len(),
            cells.len()
        ));
    }
    let class = Class::parse(cells[1]).ok_or_else(|| format!("unknown class `{}`", cells[1]))?;
    let t_now = cells[4]
        .parse::<i64>()
        .map_err(|_| format!("t_now `{}` is not an integer", cells[4]))?;
    let spec: serde_json::Value =
        serde_json::from_str(cells[6]).map_err(|e| format!("gt_spec is not JSON: {e}"))?;
    let method = spec
        .get("method")
        .and_then(|m| m.as_str())
        .ok_or("gt_spec has no string `method`")?
        .to_owned();
    let mut args = BTreeMap::new();
    if let Some(map) = spec.get("args").and_then(|a| a.as_object()) {
        for (name, value) in map {
            let arg = match value {
                serde_json::Value::Number(n) => Arg::Num(n.as_f64().unwrap_or(f64::NAN)),
                serde_json::Value::String(s) => Arg::Str(s.clone()),
                other => {
                    return Err(format!(
                        "gt_spec argument `{name}` is {other}, not a number or a string"
                    ));
                }
            };
            args.insert(name.clone(), arg);
        }
    }
    let tolerance = || {
        cells[8]
            .parse::<f64>()
            .ok()
            .filter(|t| *t > 0.0)
            .ok_or_else(|| {
                format!(
                    "a numeric task needs a positive tolerance, not `{}`",
                    cells[8]
                )
            })
    };
    let grader = match cells[7] {
        "numeric" => Grader::Numeric(tolerance()?),
        "set" => Grader::Set,
        "polarity" => Grader::Polarity,
        "direction" => Grader::Direction,
        "label" => Grader::Label,
        "action" => Grader::Action,
        other => return Err(format!("unknown grader `{other}`")),
    };
    Ok(Task {
        id: cells[0].to_owned(),
        class,
        family: cells[2].to_owned(),
        scenario: cells[3].to_owned(),
        t_now,
        prompt: cells[5].to_owned(),
        method,
        args,
        grader,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_round_trip_through_their_codes() {
        let all = Class::all();
        assert_eq!(all.len(), 12);
        assert_eq!(all[0].to_string(), "I-N-S");
        assert_eq!(all[11].to_string(), "A-F-M");
        for c in all {
            assert_eq!(Class::parse(&c.to_string()), Some(c));
        }
        assert_eq!(Class::parse("I-N"), None);
        assert_eq!(Class::parse("I-N-S-X"), None);
    }

    #[test]
    fn numeric_scores_fall_linearly_from_one_to_three_tolerances() {
        let g = Grader::Numeric(0.5);
        let s = |a| score(g, &Answer::Number(a), &Answer::Number(10.0), None, 0.0);
        assert_eq!(s(10.4), 1.0);
        assert!((s(11.0) - 0.5).abs() < 1e-12);
        assert_eq!(s(11.6), 0.0);
        assert_eq!(s(f64::NAN), 0.0);
        assert_eq!(
            score(
                g,
                &Answer::Label("10".into()),
                &Answer::Number(10.0),
                None,
                0.0
            ),
            0.0
        );
    }

    #[test]
    fn sets_score_their_jaccard_overlap_and_labels_ignore_case() {
        let set = |v: &[&str]| Answer::Set(v.iter().map(|s| s.to_string()).collect());
        assert_eq!(
            score(
                Grader::Set,
                &set(&["07", "08"]),
                &set(&["08", "07"]),
                None,
                0.0
            ),
            1.0
        );
        assert!(
            (score(Grader::Set, &set(&["07"]), &set(&["07", "08"]), None, 0.0) - 0.5).abs() < 1e-12
        );
        assert_eq!(score(Grader::Set, &set(&[]), &set(&[]), None, 0.0), 1.0);
        let l = |s: &str| Answer::Label(s.into());
        assert_eq!(
            score(Grader::Label, &l(" Plate07"), &l("plate07"), None, 0.0),
            1.0
        );
        assert_eq!(
            score(Grader::Direction, &l("up"), &l("down"), None, 0.0),
            0.0
        );
    }

    #[test]
    fn actions_score_feasibility_and_cost() {
        let a = Answer::Action {
            control: "pump.speed".into(),
            value: 0.7,
        };
        let v = |feasible, cost| Some(Verdict { feasible, cost });
        assert_eq!(score(Grader::Action, &a, &a, v(true, 1.04), 1.0), 1.0);
        assert_eq!(score(Grader::Action, &a, &a, v(true, 1.2), 1.0), 0.5);
        assert_eq!(score(Grader::Action, &a, &a, v(false, 0.5), 1.0), 0.0);
        assert_eq!(score(Grader::Action, &a, &a, None, 1.0), 0.0);
    }

    #[test]
    fn tables_parse_and_report_every_bad_line() {
        let header = COLUMNS.join("\t");
        let good = "cooling.I-N-S.00\tI-N-S\tvalue_at\tnormal-a\t600\tWhat is T_supply?\t{\"method\":\"value_at\",\"args\":{\"signal\":\"T_supply\"}}\tnumeric\t0.3";
        let tasks = parse_table(&format!("{header}\n{good}\n")).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(tasks[0].text("signal"), Some("T_supply"));
        assert_eq!(tasks[0].grader, Grader::Numeric(0.3));
        assert_eq!(tasks[0].split(), Split::Construction);
        let bad = format!(
            "{header}\n{}\nx\ty\n",
            good.replace("numeric\t0.3", "numeric\t-1")
        );
        let errors = parse_table(&bad).err().unwrap_or_default();
        assert_eq!(errors.iter().map(|e| e.line).collect::<Vec<_>>(), [2, 3]);
    }
}
