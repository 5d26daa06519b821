//! Deterministic procedures: the two tasks of the deterministic-execution study.
//!
//! Each task is a fixed four-step procedure over one data set. Its four tools take no
//! arguments and work on the session's state, so a call is right only in its place: calling a
//! tool out of order (or again) returns an error result and changes nothing, as in the
//! authors' code. The last tool writes the report, which ends the episode; the harness may also
//! stop early. The report's fields are comparable metrics (`out.<field>`), so runs of one task
//! can be compared field by field, and `success` says whether the report equals the reference.
//!
//! | task | tools, in order |
//! |-|-|
//! | `finance_ecl` | data_loader, validation_tool, calculator_tool, report_generator |
//! | `legal_clause` | document_loader, clause_extractor, clause_classifier, report_generator |
//!
//! There is no randomness: the instance `default` and any seed give the same episode, so all
//! variation between runs comes from the agent.

pub mod data;

use std::collections::BTreeMap;
use std::sync::Arc;

use harness_compiler::signatures::GameSig;
use harness_compiler::types::{RecordTy, Ty};
use harness_runtime::{
    Effect, Game, GameKind, GameManifest, GameOptions, InstanceSet, MetricSpec, Natives,
    Observation, RecordValue, RngStreams, Value, VariantValue,
};

/// The most tool calls an episode may make (the baseline's iteration limit).
pub const MAX_CALLS: i64 = 12;

/// The tool enum's name in both tasks' bindings.
pub const TOOL: &str = "Tool";

/// Which of the two procedures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Task {
    /// Expected credit loss over a loan book.
    FinanceEcl,
    /// Clause classification of a contract.
    LegalClause,
}

impl Task {
    /// Both tasks, in listing order.
    pub const ALL: [Task; 2] = [Task::FinanceEcl, Task::LegalClause];

    /// The game's name (`use game finance_ecl`).
    pub fn name(self) -> &'static str {
        match self {
            Task::FinanceEcl => "finance_ecl",
            Task::LegalClause => "legal_clause",
        }
    }

    /// The tools in procedure order, as the model names them.
    pub fn tools(self) -> [&'static str; 4] {
        match self {
            Task::FinanceEcl => [
                "data_loader",
                "validation_tool",
                "calculator_tool",
                "report_generator",
            ],
            Task::LegalClause => [
                "document_loader",
                "clause_extractor",
                "clause_classifier",
                "report_generator",
            ],
        }
    }

    /// The tools as the enum's variants (`DataLoader`).
    pub fn variants(self) -> [String; 4] {
        self.tools().map(pascal)
    }

    fn about(self) -> &'static str {
        match self {
            Task::FinanceEcl => {
                "Expected credit loss over 12 loans, 4 of them invalid: load, validate, calculate, report."
            }
            Task::LegalClause => {
                "Classify 10 contract clauses by fixed-priority keywords: load, extract, classify, report."
            }
        }
    }

    /// The reference output: what the report generator writes after the right procedure.
    pub fn truth(self) -> BTreeMap<String, Value> {
        match self {
            Task::FinanceEcl => finance_output(),
            Task::LegalClause => legal_output(),
        }
    }
}

/// `data_loader` as `DataLoader`.
fn pascal(name: &str) -> String {
    name.split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_uppercase().chain(c).collect::<String>())
                .unwrap_or_default()
        })
        .collect()
}

/// A game kind per task.
#[derive(Clone, Copy, Debug)]
pub struct Procedure(pub Task);

fn float(x: f64) -> Value {
    Value::float(x).unwrap_or(Value::Int(0))
}

fn text(s: &str) -> Value {
    Value::str(s)
}

/// A record value with these fields, for reports.
fn record(fields: Vec<(&str, Ty, Value)>) -> Value {
    let (tys, values): (Vec<(String, Ty)>, Vec<Value>) = fields
        .into_iter()
        .map(|(name, ty, value)| ((name.to_string(), ty), value))
        .unzip();
    Value::Record(Arc::new(RecordValue {
        ty: Arc::new(RecordTy {
            name: None,
            fields: tys,
        }),
        values,
    }))
}

fn list(items: Vec<Value>) -> Value {
    Value::List(Arc::new(items))
}

fn finance_output() -> BTreeMap<String, Value> {
    let mut total = 0.0;
    let (mut excluded, mut per_loan) = (Vec::new(), Vec::new());
    for loan in &data::LOANS {
        match data::invalid_reason(loan) {
            Some(reason) => excluded.push(record(vec![
                ("loan_id", Ty::String, text(loan.id)),
                ("reason", Ty::String, text(reason)),
            ])),
            None => {
                let ecl = data::round2(loan.balance * loan.pd * loan.lgd.unwrap_or(0.0));
                total += ecl;
                per_loan.push(record(vec![
                    ("loan_id", Ty::String, text(loan.id)),
                    ("ecl", Ty::Float, float(ecl)),
                ]));
            }
        }
    }
    BTreeMap::from([
        ("out.total_ecl".to_string(), float(data::round2(total))),
        (
            "out.valid_count".to_string(),
            Value::Int(per_loan.len() as i64),
        ),
        ("out.excluded".to_string(), list(excluded)),
        ("out.per_loan".to_string(), list(per_loan)),
    ])
}

fn legal_output() -> BTreeMap<String, Value> {
    let mut counts: BTreeMap<&str, i64> = BTreeMap::new();
    let mut clauses = Vec::new();
    for (i, clause) in data::CLAUSES.iter().enumerate() {
        let category = data::classify(clause);
        *counts.entry(category).or_default() += 1;
        clauses.push(record(vec![
            ("clause_id", Ty::Int, Value::Int(i as i64 + 1)),
            ("category", Ty::String, text(category)),
            ("snippet", Ty::String, text(&data::snippet(clause))),
        ]));
    }
    let counts = record(
        counts
            .iter()
            .map(|(name, n)| (*name, Ty::Int, Value::Int(*n)))
            .collect(),
    );
    BTreeMap::from([
        (
            "out.clause_count".to_string(),
            Value::Int(data::CLAUSES.len() as i64),
        ),
        ("out.category_counts".to_string(), counts),
        ("out.clauses".to_string(), list(clauses)),
    ])
}

/// A 64-bit FNV-1a digest of a report's canonical JSON, in hex: equal reports, equal digests.
fn digest(report: &BTreeMap<String, Value>) -> String {
    let mut canonical = String::new();
    for (key, value) in report {
        canonical.push_str(key);
        canonical.push('=');
        canonical.push_str(&value.to_string());
        canonical.push('\n');
    }
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in canonical.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

impl GameKind for Procedure {
    fn name(&self) -> &str {
        self.0.name()
    }

    fn about(&self) -> &str {
        self.0.about()
    }

    fn manifest(&self) -> GameManifest {
        use harness_runtime::{Better::*, MetricKind::*, MetricRole::*};
        GameManifest {
            metrics: vec![
                MetricSpec::new(
                    "success",
                    Rate,
                    Higher,
                    Primary,
                    "Whether the report equals the reference output (TSR).",
                )
                .labelled("TSR")
                .counted("succeeded"),
                MetricSpec::new(
                    "reported",
                    Rate,
                    Higher,
                    Secondary,
                    "Whether a report was written at all.",
                ),
                MetricSpec::new("calls", Count, Lower, Cost, "Tool calls made."),
                MetricSpec::new(
                    "errors",
                    Count,
                    Lower,
                    Info,
                    "Tool calls that returned an error result (out of order or repeated).",
                ),
            ],
            instance_sets: vec![InstanceSet {
                name: "all".to_string(),
                doc: "The task's one fixed data set.".to_string(),
                instances: vec!["default".to_string()],
                implies: Vec::new(),
            }],
            options: Vec::new(),
        }
    }

    fn bindings(&self) -> GameSig {
        let mut sig = GameSig::new(self.0.name(), self.0.about());
        sig.enumeration(
            &format!("enum {TOOL} {{ {} }}", self.0.variants().join(", ")),
            "The task's four tools, in procedure order.",
        )
        .query(
            "calls_left: Int",
            "How many tool calls the episode has left (12 in all).",
            "game.calls_left > 0",
        )
        .query(
            "calls_made: Int",
            "How many tool calls were made.",
            "game.calls_made",
        )
        .effect(
            "fn call(tool: Tool)",
            "Call a tool; the game answers with `result` (and, for the report, `report`).",
        )
        .effect(
            "fn stop()",
            "End the episode without a report (escalation).",
        )
        .observation(
            "fn result(tool: Tool, ok: Bool, items: Int, message: String)",
            "A tool's result: whether it ran, how many items it produced, and the error when it did not.",
        )
        .observation(
            "fn report(digest: String)",
            "The report was written; the episode ends.",
        );
        sig
    }

    fn natives(&self) -> Natives {
        Natives::new()
    }

    fn start(
        &self,
        instance: &str,
        _options: &GameOptions,
        _streams: &RngStreams,
    ) -> Result<Box<dyn Game>, String> {
        if instance != "default" {
            return Err(format!(
                "unknown instance `{instance}`; the {} task has one instance, `default`",
                self.0.name()
            ));
        }
        Ok(Box::new(Session::new(self.0)))
    }
}

/// One episode: the session's progress through the procedure.
#[derive(Clone, Debug)]
pub struct Session {
    task: Task,
    /// How many of the four steps have run.
    done: usize,
    calls: i64,
    errors: i64,
    stopped: bool,
    report: Option<BTreeMap<String, Value>>,
    version: u64,
    pending: Vec<Observation>,
}

impl Session {
    /// A fresh session of `task`.
    pub fn new(task: Task) -> Self {
        Session {
            task,
            done: 0,
            calls: 0,
            errors: 0,
            stopped: false,
            report: None,
            version: 0,
            pending: Vec::new(),
        }
    }

    /// How many items a step produces: what its result reports.
    fn items(&self, step: usize) -> i64 {
        match (self.task, step) {
            (Task::FinanceEcl, 0) => data::LOANS.len() as i64,
            (Task::FinanceEcl, 1) => data::LOANS
                .iter()
                .filter(|l| data::invalid_reason(l).is_none())
                .count() as i64,
            (Task::FinanceEcl, 2) => data::LOANS
                .iter()
                .filter(|l| data::invalid_reason(l).is_none())
                .count() as i64,
            (Task::LegalClause, 0) => 1,
            (Task::LegalClause, _) => data::CLAUSES.len() as i64,
            _ => 1,
        }
    }

    fn tool(&self, index: u32) -> Value {
        let variants = self.task.variants();
        Value::Variant(Arc::new(VariantValue {
            enum_name: Arc::from(TOOL),
            index,
            name: Arc::from(variants[index as usize].as_str()),
            payload: Vec::new(),
        }))
    }

    fn result(&mut self, index: u32, ok: bool, items: i64, message: &str) {
        let tool = self.tool(index);
        self.pending.push(Observation {
            name: Arc::from("result"),
            args: vec![tool, Value::Bool(ok), Value::Int(items), text(message)],
        });
    }
}

impl Game for Session {
    fn query(&self, name: &str, args: &[Value]) -> Result<Value, String> {
        if !args.is_empty() {
            return Err(format!("`{name}` takes no arguments"));
        }
        match name {
            "calls_left" => Ok(Value::Int(MAX_CALLS - self.calls)),
            "calls_made" => Ok(Value::Int(self.calls)),
            other => Err(format!(
                "the {} game has no query `{other}`",
                self.task.name()
            )),
        }
    }

    fn view_version(&self) -> u64 {
        self.version
    }

    fn apply(&mut self, effect: &Effect) -> Result<(), String> {
        if self.is_over() {
            return Err("the episode is over".into());
        }
        self.version += 1;
        match &*effect.name {
            "call" => {
                let index = match effect.args.first() {
                    Some(Value::Variant(v)) if v.index < 4 => v.index,
                    other => return Err(format!("expected a tool, found {other:?}")),
                };
                self.calls += 1;
                let step = index as usize;
                let tools = self.task.tools();
                if step != self.done {
                    self.errors += 1;
                    let message = if step < self.done {
                        format!("{} has already run in this session", tools[step])
                    } else {
                        format!(
                            "{} cannot run before {} in this session",
                            tools[step], tools[self.done]
                        )
                    };
                    self.result(index, false, 0, &message);
                    return Ok(());
                }
                let items = self.items(step);
                self.done += 1;
                self.result(index, true, items, "");
                if self.done == 4 {
                    let report = self.task.truth();
                    let digest = digest(&report);
                    self.report = Some(report);
                    self.pending.push(Observation {
                        name: Arc::from("report"),
                        args: vec![text(&digest)],
                    });
                }
                Ok(())
            }
            "stop" => {
                self.stopped = true;
                Ok(())
            }
            other => Err(format!(
                "the {} game accepts no effect `{other}`",
                self.task.name()
            )),
        }
    }

    fn take_observations(&mut self) -> Vec<Observation> {
        std::mem::take(&mut self.pending)
    }

    fn is_over(&self) -> bool {
        self.report.is_some() || self.stopped || self.calls >= MAX_CALLS
    }

    fn fork(&self) -> Option<Box<dyn Game>> {
        Some(Box::new(self.clone()))
    }

    fn reseed(&mut self, _salt: u64) -> bool {
        // No effect draws anything at random: the copies already agree.
        true
    }

    fn metrics(&self) -> BTreeMap<String, Value> {
        let truth = self.task.truth();
        let mut out = BTreeMap::from([
            (
                "success".to_string(),
                Value::Bool(self.report.as_ref() == Some(&truth)),
            ),
            ("reported".to_string(), Value::Bool(self.report.is_some())),
            ("calls".to_string(), Value::Int(self.calls)),
            ("errors".to_string(), Value::Int(self.errors)),
            (
                "report_digest".to_string(),
                text(&self.report.as_ref().map(digest).unwrap_or_default()),
            ),
        ]);
        if let Some(report) = &self.report {
            out.extend(report.clone());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(session: &mut Session, index: u32) -> Vec<Observation> {
        let tool = session.tool(index);
        session
            .apply(&Effect {
                name: Arc::from("call"),
                args: vec![tool],
            })
            .unwrap();
        session.take_observations()
    }

    #[test]
    fn bindings_parse_for_both_tasks() {
        for task in Task::ALL {
            let sig = Procedure(task).bindings();
            assert!(sig.problems.is_empty(), "{:?}", sig.problems);
            assert!(Procedure(task).manifest().validate().is_ok());
        }
    }

    #[test]
    fn the_right_order_writes_the_reference_report() {
        for task in Task::ALL {
            let mut session = Session::new(task);
            for i in 0..4 {
                let obs = call(&mut session, i);
                assert_eq!(obs[0].args[1], Value::Bool(true), "{task:?} step {i}");
            }
            assert!(session.is_over());
            let metrics = session.metrics();
            assert_eq!(metrics["success"], Value::Bool(true));
            assert_eq!(metrics["calls"], Value::Int(4));
        }
    }

    #[test]
    fn an_out_of_order_call_is_an_error_result_and_changes_nothing() {
        let mut session = Session::new(Task::FinanceEcl);
        let obs = call(&mut session, 2);
        assert_eq!(obs[0].args[1], Value::Bool(false));
        assert_eq!(
            obs[0].args[3],
            text("calculator_tool cannot run before data_loader in this session")
        );
        call(&mut session, 0);
        let again = call(&mut session, 0);
        assert_eq!(again[0].args[1], Value::Bool(false));
        assert_eq!(session.metrics()["errors"], Value::Int(2));
        for i in 1..4 {
            call(&mut session, i);
        }
        assert_eq!(session.metrics()["success"], Value::Bool(true));
    }

    #[test]
    fn the_finance_report_excludes_the_four_invalid_loans() {
        let out = Task::FinanceEcl.truth();
        assert_eq!(out["out.valid_count"], Value::Int(8));
        let Value::List(excluded) = &out["out.excluded"] else {
            panic!()
        };
        assert_eq!(excluded.len(), 4);
        // 1080 + 1190 + 1260 + 1608 + 1986.88 + 1230 + 1474.2 + 1444.5
        assert_eq!(out["out.total_ecl"], float(11_273.58));
    }

    #[test]
    fn the_episode_ends_after_twelve_calls_or_a_stop() {
        let mut session = Session::new(Task::LegalClause);
        for _ in 0..12 {
            call(&mut session, 3);
        }
        assert!(session.is_over());
        assert_eq!(session.metrics()["reported"], Value::Bool(false));
        let mut session = Session::new(Task::LegalClause);
        session
            .apply(&Effect {
                name: Arc::from("stop"),
                args: vec![],
            })
            .unwrap();
        assert!(session.is_over());
    }
}
