//! The two domains and their task suites: loading the bundled task tables, resolving ground
//! truth with the right oracle, and grading an answer.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use crate::task::{self, Answer, Grader, Task, Verdict};
use crate::{cooling, grid};

/// One of the two domains.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Domain {
    /// The liquid-cooling loop (`use game cooling`).
    Cooling,
    /// The IEEE 14-bus grid (`use game grid`).
    Grid,
}

/// The bundled task tables.
const COOLING_TASKS: &str = include_str!("../tasks/cooling.tsv");
const GRID_TASKS: &str = include_str!("../tasks/grid.tsv");

impl Domain {
    /// Both domains.
    pub const ALL: [Domain; 2] = [Domain::Cooling, Domain::Grid];

    /// The game's name: `cooling` or `grid`.
    pub fn name(self) -> &'static str {
        match self {
            Domain::Cooling => "cooling",
            Domain::Grid => "grid",
        }
    }

    /// The domain called `name`.
    pub fn from_name(name: &str) -> Option<Domain> {
        Domain::ALL.into_iter().find(|d| d.name() == name)
    }

    /// The time unit of the domain's clocks (`t_now`, series, horizons).
    pub fn time_unit(self) -> &'static str {
        match self {
            Domain::Cooling => "s",
            Domain::Grid => "min",
        }
    }

    /// The bundled task table, parsed once. A malformed bundled table is a build defect; the
    /// `task_tables` test keeps it well formed, and here it would leave the suite empty.
    pub fn tasks(self) -> &'static [Task] {
        static COOLING: OnceLock<Vec<Task>> = OnceLock::new();
        static GRID: OnceLock<Vec<Task>> = OnceLock::new();
        let (cell, text) = match self {
            Domain::Cooling => (&COOLING, COOLING_TASKS),
            Domain::Grid => (&GRID, GRID_TASKS),
        };
        cell.get_or_init(|| task::parse_table(text).unwrap_or_default())
    }

    /// The task with this id.
    pub fn task(self, id: &str) -> Option<&'static Task> {
        self.tasks().iter().find(|t| t.id == id)
    }

    /// The ground truth of `task`, from the domain's privileged oracle.
    ///
    /// Each truth is derived once per process and task: a level sweep grades every task once
    /// per level, and the oracles (a search over simulated plant trajectories or power flows)
    /// cost more than the episodes they grade. The oracles are deterministic, so a remembered
    /// truth is the one a fresh derivation would give; a task that only shares an id with a
    /// remembered one (built by hand, with other arguments) is derived afresh.
    pub fn resolve(self, task: &Task) -> Result<Answer, String> {
        type Truths = Mutex<HashMap<(Domain, String), (Task, Result<Answer, String>)>>;
        static TRUTHS: OnceLock<Truths> = OnceLock::new();
        let truths = TRUTHS.get_or_init(Truths::default);
        let key = (self, task.id.clone());
        // A panic elsewhere while the lock was held leaves the table as consistent as any
        // insertion does, so a poisoned lock is still read.
        let remembered = truths
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .get(&key)
            .filter(|(known, _)| known == task)
            .map(|(_, truth)| truth.clone());
        if let Some(truth) = remembered {
            return truth;
        }
        // Derived outside the lock, so that threads grading other tasks do not wait.
        let truth = match self {
            Domain::Cooling => cooling::oracle::resolve(task),
            Domain::Grid => grid::oracle::resolve(task),
        };
        truths
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .insert(key, (task.clone(), truth.clone()));
        truth
    }

    /// The simulator's verdict on an intervention for an Act task.
    pub fn judge(self, task: &Task, control: &str, value: f64) -> Result<Verdict, String> {
        match self {
            Domain::Cooling => cooling::oracle::judge(task, control, value),
            Domain::Grid => grid::oracle::judge(task, control, value),
        }
    }

    /// Scores `answer` for `task` in [0, 1].
    pub fn grade(self, task: &Task, answer: &Answer) -> Result<f64, String> {
        let truth = self.resolve(task)?;
        let (verdict, best) = match (task.grader, answer, &truth) {
            (
                Grader::Action,
                Answer::Action { control, value },
                Answer::Action {
                    control: best_control,
                    value: best_value,
                },
            ) => (
                Some(self.judge(task, control, *value)?),
                self.judge(task, best_control, *best_value)?.cost,
            ),
            _ => (None, 0.0),
        };
        Ok(task::score(task.grader, answer, &truth, verdict, best))
    }
}

#[cfg(test)]
mod tests {
    use super::Domain;
    use crate::task::{Answer, Arg};
    use crate::{cooling, grid};

    #[test]
    fn a_remembered_truth_is_the_oracles_and_a_changed_task_is_derived_afresh() {
        for domain in Domain::ALL {
            for task in domain.tasks().iter().take(12) {
                let direct = match domain {
                    Domain::Cooling => cooling::oracle::resolve(task),
                    Domain::Grid => grid::oracle::resolve(task),
                };
                assert_eq!(domain.resolve(task), direct, "{}", task.id);
                assert_eq!(domain.resolve(task), direct, "{} remembered", task.id);
            }
        }
        // The same id, another signal: its own truth, not the remembered one.
        let task = Domain::Cooling
            .task("cooling.I-N-S.00")
            .expect("a bundled value_at task");
        let remembered = Domain::Cooling.resolve(task);
        let mut other = task.clone();
        other
            .args
            .insert("signal".into(), Arg::Str("T_out.01".into()));
        let fresh = Domain::Cooling.resolve(&other);
        assert_eq!(fresh, cooling::oracle::resolve(&other));
        assert!(matches!(fresh, Ok(Answer::Number(_))));
        assert_ne!(fresh, remembered, "T_out.01 and T_out.07 read alike");
        assert_eq!(Domain::Cooling.resolve(task), remembered);
    }
}
