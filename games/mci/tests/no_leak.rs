//! The visibility gate and the masking of hidden families, as a property: whatever tools an
//! agent calls with whatever arguments, no observation carries a sample after the task's
//! current time or a hidden family.

use std::sync::Arc;

use harness_mci::game::Episode;
use harness_mci::suite::Domain;
use harness_runtime::{Effect, Game, Observation, Value};
use proptest::prelude::*;

fn effect(name: &str, args: Vec<Value>) -> Effect {
    Effect {
        name: Arc::from(name),
        args,
    }
}

fn strings(v: &Value) -> Vec<String> {
    v.elements()
        .unwrap_or_default()
        .iter()
        .map(|s| match s {
            Value::Str(s) => s.to_string(),
            other => other.to_string(),
        })
        .collect()
}

fn ints(v: &Value) -> Vec<i64> {
    v.elements()
        .unwrap_or_default()
        .iter()
        .filter_map(Value::as_int)
        .collect()
}

/// Every signal name of a domain's telemetry, hidden ones included.
fn all_signals(domain: Domain) -> Vec<(String, bool)> {
    let specs = match domain {
        Domain::Cooling => harness_mci::cooling::scenario::signals(),
        Domain::Grid => harness_mci::grid::scenario::signals(),
    };
    specs.into_iter().map(|s| (s.name, s.hidden)).collect()
}

fn check(domain: Domain, t_now: i64, o: &Observation) -> Result<(), String> {
    let hidden: Vec<String> = all_signals(domain)
        .into_iter()
        .filter(|(_, h)| *h)
        .map(|(n, _)| n)
        .collect();
    let no_hidden = |names: Vec<String>| match names.iter().find(|n| hidden.contains(n)) {
        Some(n) => Err(format!("{} shows hidden `{n}`", o.name)),
        None => Ok(()),
    };
    let no_future = |times: Vec<i64>| match times.iter().find(|&&t| t > t_now) {
        Some(t) => Err(format!("{} shows t = {t} > t_now = {t_now}", o.name)),
        None => Ok(()),
    };
    match &*o.name {
        "series" => {
            no_hidden(vec![o.args[0].to_string().trim_matches('"').to_owned()])?;
            no_future(ints(&o.args[1]))
        }
        "snapshot" => {
            no_future(vec![o.args[0].as_int().unwrap_or(i64::MAX)])?;
            no_hidden(strings(&o.args[1]))
        }
        "alarms" => {
            no_future(ints(&o.args[0]))?;
            no_hidden(strings(&o.args[1]))
        }
        "signals" => no_hidden(strings(&o.args[0])),
        // The cooling twin's outputs are masked like its telemetry; a grid power flow computes
        // the voltages no sensor measures, which is what a power-flow study is for (C.4).
        "trajectory" => no_hidden(strings(&o.args[1])),
        "solved" if domain == Domain::Cooling => no_hidden(strings(&o.args[1])),
        _ => Ok(()),
    }
}

#[derive(Clone, Debug)]
enum Call {
    Series(usize, i64, i64),
    Snapshot(i64),
    Alarms(i64, i64),
    List,
    Simulate(i64, usize),
}

fn call() -> impl Strategy<Value = Call> {
    prop_oneof![
        (0usize..200, -500i64..2500, -500i64..2500).prop_map(|(s, a, b)| Call::Series(s, a, b)),
        (-500i64..2500).prop_map(Call::Snapshot),
        (-500i64..2500, -500i64..2500).prop_map(|(a, b)| Call::Alarms(a, b)),
        Just(Call::List),
        (-100i64..3000, 0usize..200).prop_map(|(h, s)| Call::Simulate(h, s)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn no_observation_leaks_the_future_or_a_hidden_family(
        grid in any::<bool>(),
        task in 0usize..120,
        calls in proptest::collection::vec(call(), 1..12),
    ) {
        let domain = if grid { Domain::Grid } else { Domain::Cooling };
        let id = domain.tasks()[task].id.clone();
        let t_now = domain.tasks()[task].t_now;
        let mut episode = Episode::new(domain, &id).map_err(TestCaseError::fail)?;
        let names = all_signals(domain);
        for c in calls {
            let pick = |i: usize| Value::str(&names[i % names.len()].0);
            let e = match c {
                Call::Series(s, a, b) => effect("read_series", vec![pick(s), Value::Int(a), Value::Int(b)]),
                Call::Snapshot(t) => effect("read_snapshot", vec![Value::Int(t)]),
                Call::Alarms(a, b) => effect("read_alarms", vec![Value::Int(a), Value::Int(b)]),
                Call::List => effect("list_signals", vec![]),
                Call::Simulate(h, s) if domain == Domain::Cooling => effect(
                    "simulate",
                    vec![Value::Int(h), Value::list(vec![]), Value::list(vec![]), Value::list(vec![pick(s)])],
                ),
                Call::Simulate(..) => effect("power_flow", vec![Value::list(vec![]), Value::list(vec![])]),
            };
            if episode.is_over() {
                break;
            }
            episode.apply(&e).map_err(TestCaseError::fail)?;
            for o in episode.take_observations() {
                check(domain, t_now, &o).map_err(TestCaseError::fail)?;
            }
        }
    }
}
