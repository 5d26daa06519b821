//! The cooling oracle: every `gt_spec` method, resolved with privileged access (the whole
//! trajectory, no visibility gate, the hidden families), and the simulator's verdict on an
//! intervention. It runs the same engine the agent's K5 tools run.

use std::cell::RefCell;
use std::sync::OnceLock;

use super::plant::{self, Inputs, PLATES, Params, STATE_LEN};
use super::scenario::{SCENARIOS, Scenario, plate_name};
use crate::numeric::lowest_passing;
use crate::task::{Answer, Task, Verdict};
use crate::telemetry::Telemetry;

/// One scenario, simulated and recorded.
#[derive(Clone, Debug)]
pub struct Recorded {
    /// The scenario's schedule.
    pub scenario: Scenario,
    /// The true thermal state at every second.
    pub states: Vec<[f64; STATE_LEN]>,
    /// What was recorded: visible signals with noise, hidden families exact.
    pub telemetry: Telemetry,
}

impl Recorded {
    fn new(id: &str) -> Option<Recorded> {
        let scenario = Scenario::new(id)?;
        let states = scenario.simulate();
        let telemetry = scenario.record(&states);
        Some(Recorded {
            scenario,
            states,
            telemetry,
        })
    }

    /// The loop's constants.
    pub fn params(&self) -> &Params {
        self.scenario.params()
    }

    /// The true state at time `t` (s, clamped to the episode).
    pub fn state(&self, t: i64) -> [f64; STATE_LEN] {
        self.states[t.clamp(0, self.states.len() as i64 - 1) as usize]
    }

    /// The exact readings at time `t`.
    pub fn reading(&self, t: i64) -> plant::Reading {
        plant::read(
            self.params(),
            &self.scenario.inputs(t as f64),
            &self.state(t),
        )
    }
}

/// Every cooling scenario, simulated once per process.
pub fn recorded(id: &str) -> Option<&'static Recorded> {
    static ALL: OnceLock<Vec<Recorded>> = OnceLock::new();
    ALL.get_or_init(|| {
        SCENARIOS
            .iter()
            .filter_map(|(id, _)| Recorded::new(id))
            .collect()
    })
    .iter()
    .find(|r| r.scenario.id == id)
}

/// A plate argument (`"07"`) as a 0-based index.
fn plate_arg(task: &Task) -> Result<usize, String> {
    task.text("plate")
        .and_then(|p| p.parse::<usize>().ok())
        .filter(|p| (1..=PLATES).contains(p))
        .map(|p| p - 1)
        .ok_or_else(|| format!("{}: a plate argument `01`..`20` is required", task.id))
}

fn num_arg(task: &Task, name: &str) -> Result<f64, String> {
    task.num(name)
        .ok_or_else(|| format!("{}: the numeric argument `{name}` is required", task.id))
}

fn text_arg<'t>(task: &'t Task, name: &str) -> Result<&'t str, String> {
    task.text(name)
        .ok_or_else(|| format!("{}: the argument `{name}` is required", task.id))
}

/// The times of the horizon (t_now, t_now + Δ], one per second.
fn horizon_seconds(task: &Task) -> impl Iterator<Item = i64> {
    (task.t_now + 1)..=(task.t_now + task.horizon())
}

/// The ground truth of `task`.
pub fn resolve(task: &Task) -> Result<Answer, String> {
    let rec = recorded(&task.scenario)
        .ok_or_else(|| format!("{}: unknown scenario `{}`", task.id, task.scenario))?;
    let t = task.t_now;
    let h = task.horizon();
    let recorded_value = |signal: &str, at: i64| {
        rec.telemetry
            .value(signal, at)
            .ok_or_else(|| format!("{}: unknown signal `{signal}`", task.id))
    };
    let answer = match task.method.as_str() {
        "value_at" => Answer::Number(recorded_value(text_arg(task, "signal")?, t)?),
        "plates_above" => {
            let limit = num_arg(task, "limit")?;
            let mut above = Vec::new();
            for i in 0..PLATES {
                if recorded_value(&format!("T_out.{}", plate_name(i)), t)? > limit {
                    above.push(plate_name(i));
                }
            }
            Answer::Set(above)
        }
        "hidden_plate_temp" => Answer::Number(rec.reading(t).t_base[plate_arg(task)?]),
        "junction_temp" => Answer::Number(rec.reading(t).t_junction[plate_arg(task)?]),
        "abnormal_plate" => {
            let u = rec.scenario.inputs(t as f64);
            let nominal = rec.params().r_plate;
            let worst = (0..PLATES).max_by(|&a, &b| u.resistance[a].total_cmp(&u.resistance[b]));
            match worst {
                Some(i) if u.resistance[i] > 1.5 * nominal => Answer::Label(plate_name(i)),
                _ => Answer::Label("none".into()),
            }
        }
        "pump_head" => Answer::Number(rec.scenario.inputs(t as f64).head / 1e3),
        "predict_value" => Answer::Number(recorded_value(text_arg(task, "signal")?, t + h)?),
        "will_exceed" => {
            let limit = num_arg(task, "limit")?;
            Answer::Bool(
                horizon_seconds(task).any(|s| rec.reading(s).t_out.iter().any(|&x| x > limit)),
            )
        }
        "predict_base_temp" => Answer::Number(rec.reading(t + h).t_base[plate_arg(task)?]),
        "base_will_exceed" => {
            let limit = num_arg(task, "limit")?;
            Answer::Bool(
                horizon_seconds(task).any(|s| rec.reading(s).t_base.iter().any(|&x| x > limit)),
            )
        }
        "predict_pump_head" => Answer::Number(rec.scenario.inputs((t + h) as f64).head / 1e3),
        "head_direction" => {
            let now = rec.scenario.inputs(t as f64).head;
            let later = rec.scenario.inputs((t + h) as f64).head;
            let label = if later < 0.99 * now {
                "down"
            } else if later > 1.01 * now {
                "up"
            } else {
                "flat"
            };
            Answer::Label(label.into())
        }
        _ => {
            let (control, value) = best_action(task, rec)?;
            Answer::Action { control, value }
        }
    };
    Ok(answer)
}

/// What an Act family constrains, and which control it moves.
#[derive(Clone, Copy, Debug)]
enum Goal {
    /// Every outlet at or below the limit.
    Outlet,
    /// The supply temperature at or below the limit.
    Supply,
    /// Every base plate at or below the limit.
    Base,
    /// One plate's base at or below the limit (moved by that plate's power).
    PlateBase,
    /// The loop flow at or above the limit.
    Flow,
    /// One plate's flow at or above the limit.
    PlateFlow,
}

/// The Act families: (method, goal, whether it spans a horizon).
const ACT: [(&str, Goal, bool); 11] = [
    ("min_pump_for_outlet", Goal::Outlet, false),
    ("min_valve_for_supply", Goal::Supply, false),
    ("min_pump_for_base", Goal::Base, false),
    ("max_power_for_base", Goal::PlateBase, false),
    ("min_pump_for_flow", Goal::Flow, false),
    ("min_pump_for_plate_flow", Goal::PlateFlow, false),
    ("min_pump_for_outlet_through", Goal::Outlet, true),
    ("min_valve_for_supply_through", Goal::Supply, true),
    ("min_pump_for_base_through", Goal::Base, true),
    ("max_power_for_base_through", Goal::PlateBase, true),
    ("min_pump_for_flow_through", Goal::Flow, true),
];

fn goal_of(task: &Task) -> Result<(Goal, bool), String> {
    ACT.iter()
        .find(|(m, _, _)| *m == task.method)
        .map(|&(_, g, through)| (g, through))
        .ok_or_else(|| format!("{}: unknown oracle method `{}`", task.id, task.method))
}

/// The control a task's intervention must set.
pub fn control_of(task: &Task) -> Result<String, String> {
    let (goal, _) = goal_of(task)?;
    Ok(match goal {
        Goal::Supply => "valve.opening".into(),
        Goal::PlateBase => format!("power.{}", plate_name(plate_arg(task)?)),
        _ => "pump.speed".into(),
    })
}

/// Whether the readings meet the goal's constraint.
fn meets(goal: Goal, task: &Task, r: &plant::Reading, limit: f64) -> bool {
    let plate = plate_arg(task).unwrap_or(0);
    match goal {
        Goal::Outlet => r.t_out.iter().all(|&x| x <= limit),
        Goal::Supply => r.t_supply <= limit,
        Goal::Base => r.t_base.iter().all(|&x| x <= limit),
        Goal::PlateBase => r.t_base[plate] <= limit,
        Goal::Flow => r.flows.total * 1e3 >= limit,
        Goal::PlateFlow => r.flows.plate[plate] * 1e3 >= limit,
    }
}

/// The inputs with `control` set to `value` (a power is a cap on the scheduled load, kW); an
/// unknown control changes nothing.
pub fn with_control(mut u: Inputs, control: &str, value: f64) -> Inputs {
    match control {
        "pump.speed" => u.speed = value,
        "valve.opening" => u.valve = value,
        _ => {
            if let Some(i) = control
                .strip_prefix("power.")
                .and_then(|n| n.parse::<usize>().ok())
                .filter(|n| (1..=PLATES).contains(n))
            {
                u.power[i - 1] = u.power[i - 1].min(value * 1e3);
            }
        }
    }
    u
}

/// The admissible range of a control for a task: a power cap lies between 0 and the plate's
/// highest scheduled load over the task's span (a cap above it changes nothing).
fn range_of(rec: &Recorded, control: &str, task: &Task) -> (f64, f64) {
    match control {
        "pump.speed" => rec.params().speed_range,
        "valve.opening" => (0.0, 1.0),
        _ => {
            let peak = plate_of_control(control).map_or(0.0, |i| {
                (task.t_now..=task.t_now + task.horizon())
                    .map(|t| rec.scenario.inputs(t as f64).power[i] / 1e3)
                    .fold(0.0, f64::max)
            });
            (0.0, peak)
        }
    }
}

fn plate_of_control(control: &str) -> Option<usize> {
    control
        .strip_prefix("power.")
        .and_then(|n| n.parse::<usize>().ok())
        .filter(|n| (1..=PLATES).contains(n))
        .map(|n| n - 1)
}

/// Whether setting `control = value` at the task's time meets its goal: at steady state under
/// the current conditions for a Now task, at every second of the horizon (true future
/// disturbances, the control held) for a Future task.
fn satisfied(task: &Task, rec: &Recorded, control: &str, value: f64) -> bool {
    let Ok((goal, through)) = goal_of(task) else {
        return false;
    };
    let Ok(limit) = num_arg(task, "limit") else {
        return false;
    };
    let p = rec.params();
    if !through {
        let u = with_control(rec.scenario.inputs(task.t_now as f64), control, value);
        let x = plant::steady_state(p, &u);
        return meets(goal, task, &plant::read(p, &u, &x), limit);
    }
    // The two midpoint stages of an integration step read the inputs at one time, and the
    // check reads them again at the step's end, the time of its last stage: one remembered
    // reading spares recomputing them (a sine per plate) three times in five.
    let last: RefCell<Option<(u64, Inputs)>> = RefCell::new(None);
    let inputs = |t: f64| {
        if let Some((at, u)) = &*last.borrow()
            && *at == t.to_bits()
        {
            return u.clone();
        }
        let u = with_control(rec.scenario.inputs(t), control, value);
        *last.borrow_mut() = Some((t.to_bits(), u.clone()));
        u
    };
    let mut x = rec.state(task.t_now);
    let mut ok = true;
    let operating = plant::LastOperating::default();
    plant::integrate(
        p,
        &mut x,
        task.t_now as f64,
        task.horizon() as usize,
        &inputs,
        &mut |t, state| {
            ok &= meets(goal, task, &operating.read(p, &inputs(t), state), limit);
        },
    );
    ok
}

/// The cost of an intervention: pump power ∝ s³, valve opening θ (facility water), or the
/// load curtailed from the plate's peak schedule, kW.
fn cost_of(rec: &Recorded, task: &Task, control: &str, value: f64) -> f64 {
    match control {
        "pump.speed" => value.powi(3),
        "valve.opening" => value,
        _ => range_of(rec, control, task).1 - value,
    }
}

/// The simulator's verdict on setting `control = value` for `task`.
pub fn judge(task: &Task, control: &str, value: f64) -> Result<Verdict, String> {
    let rec = recorded(&task.scenario)
        .ok_or_else(|| format!("{}: unknown scenario `{}`", task.id, task.scenario))?;
    let expected = control_of(task)?;
    let (lo, hi) = range_of(rec, &expected, task);
    let feasible = control == expected
        && value.is_finite()
        && (lo..=hi).contains(&value)
        && satisfied(task, rec, control, value);
    Ok(Verdict {
        feasible,
        cost: if value.is_finite() {
            cost_of(rec, task, &expected, value)
        } else {
            f64::INFINITY
        },
    })
}

/// The cheapest feasible intervention, found by bisection on the control (every goal is
/// monotone in its control).
fn best_action(task: &Task, rec: &Recorded) -> Result<(String, f64), String> {
    let control = control_of(task)?;
    let (lo, hi) = range_of(rec, &control, task);
    let tol = 1e-6 * (hi - lo).max(1e-3);
    let found = if control.starts_with("power.") {
        // The highest cap that still meets the limit: bisection on the curtailment.
        lowest_passing(0.0, hi - lo, tol, &|cut| {
            satisfied(task, rec, &control, hi - cut)
        })
        .map(|cut| hi - cut)
    } else {
        lowest_passing(lo, hi, tol, &|v| satisfied(task, rec, &control, v))
    };
    found
        .map(|v| (control.clone(), v))
        .ok_or_else(|| format!("{}: no setting of {control} meets the goal", task.id))
}

/// The cost of the oracle's intervention.
pub fn best_cost(task: &Task) -> Result<f64, String> {
    match resolve(task)? {
        Answer::Action { control, value } => judge(task, &control, value).map(|v| v.cost),
        _ => Ok(0.0),
    }
}
