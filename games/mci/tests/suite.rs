//! The task suites as data: shape, split, and the oracle round trip (every ground-truth answer,
//! fed back to its grader, scores 1.0).

use std::collections::{BTreeMap, BTreeSet};

use harness_mci::suite::Domain;
use harness_mci::task::{Class, Split};

#[test]
fn each_suite_has_ten_tasks_per_class_split_five_five_by_family() {
    for domain in Domain::ALL {
        let tasks = domain.tasks();
        assert_eq!(tasks.len(), 120, "{}", domain.name());
        let ids: BTreeSet<&str> = tasks.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ids.len(), 120, "duplicate ids in {}", domain.name());
        for class in Class::all() {
            let of_class: Vec<_> = tasks.iter().filter(|t| t.class == class).collect();
            assert_eq!(of_class.len(), 10, "{} {class}", domain.name());
            for (i, task) in of_class.iter().enumerate() {
                assert_eq!(task.id, format!("{}.{class}.{i:02}", domain.name()));
            }
            let construction = of_class
                .iter()
                .filter(|t| t.split() == Split::Construction)
                .count();
            assert_eq!(construction, 5, "{} {class}", domain.name());
            // Stratified by family: no family lives in one split only.
            let mut splits: BTreeMap<&str, BTreeSet<Split>> = BTreeMap::new();
            for task in &of_class {
                splits
                    .entry(task.family.as_str())
                    .or_default()
                    .insert(task.split());
            }
            for (family, seen) in splits {
                assert_eq!(
                    seen.len(),
                    2,
                    "{} {class}: family {family} is in one split",
                    domain.name()
                );
            }
        }
    }
}

#[test]
fn every_ground_truth_answer_scores_one() {
    let mut checked = 0;
    for domain in Domain::ALL {
        for task in domain.tasks() {
            let truth = domain.resolve(task).unwrap_or_else(|e| panic!("{e}"));
            let score = domain.grade(task, &truth).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(score, 1.0, "{}: truth {truth} scores {score}", task.id);
            checked += 1;
        }
    }
    assert_eq!(checked, 240);
}

#[test]
fn prompts_state_their_task_and_name_no_answer() {
    for domain in Domain::ALL {
        for task in domain.tasks() {
            assert!(
                !task.prompt.contains('{'),
                "{}: unfilled prompt {}",
                task.id,
                task.prompt
            );
            let truth = domain.resolve(task).unwrap_or_else(|e| panic!("{e}"));
            if let harness_mci::task::Answer::Number(x) = truth {
                for digits in [1, 2, 3] {
                    let text = format!("{x:.digits$}");
                    assert!(
                        !task.prompt.contains(&text),
                        "{}: prompt gives away {text}",
                        task.id
                    );
                }
            }
        }
    }
}
