//! The grid oracle: every `gt_spec` method with privileged access (the whole day, the absent
//! columns), N-1 screening, and the simulator's verdict on a redispatch or a voltage setpoint.

use std::sync::OnceLock;

use super::flow::{N_BRANCH, Solution};
use super::scenario::{DAYS, Day, GEN_BUSES, GEN_PMAX, Point, STEP_MINUTES, limits, line_name};
use crate::numeric::lowest_passing;
use crate::task::{Answer, Task, Verdict};
use crate::telemetry::Telemetry;

/// The radial branch (L14, 7–8) whose outage islands bus 8: N-1 screening leaves it out.
pub const RADIAL: usize = 13;

/// Generators that can be redispatched (G2..G5; the slack G1 compensates, the solar unit G6
/// only follows the sun).
pub const DISPATCHABLE: [usize; 4] = [1, 2, 3, 4];

/// Generators with a voltage setpoint (G1..G5).
pub const REGULATING: [usize; 5] = [0, 1, 2, 3, 4];

/// Admissible voltage setpoints, pu.
pub const VSET_RANGE: (f64, f64) = (0.94, 1.10);

/// One day, simulated and recorded.
#[derive(Clone, Debug)]
pub struct Recorded {
    /// The day's schedule.
    pub day: Day,
    /// The operating point and power flow at every step.
    pub steps: Vec<(Point, Solution)>,
    /// The recorded telemetry (exact; absent columns hidden).
    pub telemetry: Telemetry,
}

/// The branch limits, pu current, computed once.
pub fn branch_limits() -> &'static [f64; N_BRANCH] {
    static LIMITS: OnceLock<[f64; N_BRANCH]> = OnceLock::new();
    LIMITS.get_or_init(limits)
}

/// Every grid day, simulated once per process.
pub fn recorded(id: &str) -> Option<&'static Recorded> {
    static ALL: OnceLock<Vec<Recorded>> = OnceLock::new();
    ALL.get_or_init(|| {
        DAYS.iter()
            .filter_map(|day| {
                // Every generated day converges at every step (the `grid_days` test); a day
                // that did not would be missing, and its tasks would report it.
                let steps = day.simulate().ok()?;
                let telemetry = super::scenario::record(&steps, branch_limits());
                Some(Recorded {
                    day: day.clone(),
                    steps,
                    telemetry,
                })
            })
            .collect()
    })
    .iter()
    .find(|r| r.day.id == id)
}

impl Recorded {
    /// The operating point at minute `t` (clamped to the day).
    pub fn point(&self, t: i64) -> &Point {
        let step = (t / STEP_MINUTES).clamp(0, self.steps.len() as i64 - 1) as usize;
        &self.steps[step].0
    }

    /// The power flow at minute `t`.
    pub fn solution(&self, t: i64) -> &Solution {
        let step = (t / STEP_MINUTES).clamp(0, self.steps.len() as i64 - 1) as usize;
        &self.steps[step].1
    }
}

/// The loading of every branch in a solution.
pub fn loadings(sol: &Solution) -> [f64; N_BRANCH] {
    let lim = branch_limits();
    std::array::from_fn(|k| sol.branches[k].current() / lim[k])
}

/// The highest loading of a solution.
pub fn max_loading(sol: &Solution) -> f64 {
    loadings(sol).into_iter().fold(0.0, f64::max)
}

/// N-1 screening: for every in-service, non-radial branch, the highest loading after its
/// outage (`INFINITY` when the outage makes the flow diverge).
pub fn screen(point: &Point) -> Vec<(usize, f64)> {
    (0..N_BRANCH)
        .filter(|&k| k != RADIAL && point.case.in_service[k])
        .map(|k| {
            let mut p = point.clone();
            p.case.in_service[k] = false;
            (k, p.solve().map_or(f64::INFINITY, |s| max_loading(&s)))
        })
        .collect()
}

/// The worst contingency of a point: the outage with the highest post-outage loading.
pub fn worst_contingency(point: &Point) -> Option<(usize, f64)> {
    screen(point).into_iter().max_by(|a, b| a.1.total_cmp(&b.1))
}

/// The most loaded line after the outage of branch `k` (`none` when the outage islands a bus
/// or the flow diverges).
fn outage_worst_line(point: &Point, k: usize) -> String {
    let mut p = point.clone();
    p.case.in_service[k] = false;
    p.solve().ok().map_or("none".into(), |sol| {
        let rho = loadings(&sol);
        (0..N_BRANCH)
            .max_by(|&a, &b| rho[a].total_cmp(&rho[b]))
            .map_or("none".into(), line_name)
    })
}

fn num_arg(task: &Task, name: &str) -> Result<f64, String> {
    task.num(name)
        .ok_or_else(|| format!("{}: the numeric argument `{name}` is required", task.id))
}

fn text_arg<'t>(task: &'t Task, name: &str) -> Result<&'t str, String> {
    task.text(name)
        .ok_or_else(|| format!("{}: the argument `{name}` is required", task.id))
}

fn line_arg(task: &Task) -> Result<usize, String> {
    text_arg(task, "line").and_then(|l| {
        l.strip_prefix('L')
            .and_then(|n| n.parse::<usize>().ok())
            .filter(|n| (1..=N_BRANCH).contains(n))
            .map(|n| n - 1)
            .ok_or_else(|| format!("{}: `{l}` is not a line L01..L20", task.id))
    })
}

fn bus_arg(task: &Task) -> Result<usize, String> {
    text_arg(task, "bus").and_then(|b| {
        b.strip_prefix('B')
            .and_then(|n| n.parse::<usize>().ok())
            .filter(|n| (1..=14).contains(n))
            .ok_or_else(|| format!("{}: `{b}` is not a bus B01..B14", task.id))
    })
}

fn day_of(task: &Task) -> Result<&'static Recorded, String> {
    recorded(&task.scenario).ok_or_else(|| format!("{}: unknown day `{}`", task.id, task.scenario))
}

/// The ground truth of `task`.
pub fn resolve(task: &Task) -> Result<Answer, String> {
    let rec = day_of(task)?;
    let t = task.t_now;
    let h = task.horizon();
    let value = |signal: &str, at: i64| {
        rec.telemetry
            .value(signal, at)
            .ok_or_else(|| format!("{}: unknown signal `{signal}`", task.id))
    };
    let answer = match task.method.as_str() {
        "value_at" => Answer::Number(value(text_arg(task, "signal")?, t)?),
        "lines_above" => {
            let limit = num_arg(task, "limit")?;
            let rho = loadings(rec.solution(t));
            Answer::Set(
                (0..N_BRANCH)
                    .filter(|&k| rho[k] > limit)
                    .map(line_name)
                    .collect(),
            )
        }
        "losses_now" => Answer::Number(rec.solution(t).losses),
        "unsensed_voltage" => Answer::Number(rec.solution(t).vm[bus_arg(task)? - 1]),
        "tripped_line" => Answer::Label(
            (0..N_BRANCH)
                .find(|&k| !rec.point(t).case.in_service[k])
                .map_or("none".into(), line_name),
        ),
        "outage_worst_line" => Answer::Label(outage_worst_line(rec.point(t), line_arg(task)?)),
        "predict_value" => Answer::Number(value(text_arg(task, "signal")?, t + h)?),
        "will_overload" => {
            let limit = task.num("limit").unwrap_or(1.0);
            let steps = (t / STEP_MINUTES + 1)..=((t + h) / STEP_MINUTES);
            Answer::Bool(
                steps
                    .into_iter()
                    .any(|s| max_loading(rec.solution(s * STEP_MINUTES)) > limit),
            )
        }
        "predict_losses" => Answer::Number(rec.solution(t + h).losses),
        "predict_unsensed_voltage" => Answer::Number(rec.solution(t + h).vm[bus_arg(task)? - 1]),
        "outage_worst_line_at" => {
            Answer::Label(outage_worst_line(rec.point(t + h), line_arg(task)?))
        }
        "n1_secure_at" => {
            let limit = num_arg(task, "limit")?;
            Answer::Bool(
                screen(rec.point(t + h))
                    .iter()
                    .all(|&(_, rho)| rho <= limit),
            )
        }
        _ => {
            let (control, value) = best_action(task, rec)?;
            Answer::Action { control, value }
        }
    };
    Ok(answer)
}

/// What an Act family constrains.
#[derive(Clone, Copy, Debug)]
enum Goal {
    /// Every line at or below the limit.
    AllLines,
    /// One line at or below the limit.
    Line,
    /// Losses at or below the limit, MW.
    Losses,
    /// One bus's voltage at or above the limit (moved by a voltage setpoint).
    Voltage,
    /// Every N-1 contingency at or below the limit.
    Secure,
    /// One given outage at or below the limit.
    Outage,
}

/// The Act families: (method, goal, whether it is posed at t + Δ).
const ACT: [(&str, Goal, bool); 12] = [
    ("best_action_rho", Goal::AllLines, false),
    ("relieve_line", Goal::Line, false),
    ("loss_cap", Goal::Losses, false),
    ("raise_voltage", Goal::Voltage, false),
    ("n1_redispatch", Goal::Secure, false),
    ("outage_redispatch", Goal::Outage, false),
    ("best_action_rho_at", Goal::AllLines, true),
    ("relieve_line_at", Goal::Line, true),
    ("loss_cap_at", Goal::Losses, true),
    ("raise_voltage_at", Goal::Voltage, true),
    ("n1_redispatch_at", Goal::Secure, true),
    ("outage_redispatch_at", Goal::Outage, true),
];

fn goal_of(task: &Task) -> Result<(Goal, bool), String> {
    ACT.iter()
        .find(|(m, _, _)| *m == task.method)
        .map(|&(_, g, at)| (g, at))
        .ok_or_else(|| format!("{}: unknown oracle method `{}`", task.id, task.method))
}

/// A parsed grid control: `redispatch.Gk` (ΔP, MW) or `vset.Gk` (setpoint, pu).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Control {
    /// Add ΔP to generator `g`'s schedule; the slack compensates.
    Redispatch(usize),
    /// Set generator `g`'s voltage setpoint.
    VoltageSet(usize),
}

/// Parses a control name; `None` for a name no generator answers to.
pub fn parse_control(name: &str) -> Option<Control> {
    let (kind, unit) = name.split_once('.')?;
    let g = unit
        .strip_prefix('G')?
        .parse::<usize>()
        .ok()?
        .checked_sub(1)?;
    match kind {
        "redispatch" if DISPATCHABLE.contains(&g) => Some(Control::Redispatch(g)),
        "vset" if REGULATING.contains(&g) => Some(Control::VoltageSet(g)),
        _ => None,
    }
}

/// `point` with the control applied, or `None` when the control leaves its range.
pub fn apply(point: &Point, control: Control, value: f64) -> Option<Point> {
    let mut p = point.clone();
    match control {
        Control::Redispatch(g) => {
            p.gens[g] += value;
            (0.0..=GEN_PMAX[g]).contains(&p.gens[g]).then_some(p)
        }
        Control::VoltageSet(g) => {
            p.case.v_set[GEN_BUSES[g] - 1] = value;
            (VSET_RANGE.0..=VSET_RANGE.1).contains(&value).then_some(p)
        }
    }
}

/// Whether `point` meets the task's goal.
fn meets(goal: Goal, task: &Task, point: &Point, limit: f64) -> bool {
    let Ok(sol) = point.solve() else {
        return false;
    };
    if !(0.0..=GEN_PMAX[0]).contains(&sol.slack_p) {
        return false;
    }
    match goal {
        Goal::AllLines => max_loading(&sol) <= limit,
        Goal::Line => line_arg(task).is_ok_and(|k| loadings(&sol)[k] <= limit),
        Goal::Losses => sol.losses <= limit,
        Goal::Voltage => bus_arg(task).is_ok_and(|b| sol.vm[b - 1] >= limit),
        Goal::Secure => screen(point).iter().all(|&(_, rho)| rho <= limit),
        Goal::Outage => line_arg(task).is_ok_and(|k| {
            let mut p = point.clone();
            p.case.in_service[k] = false;
            p.solve().is_ok_and(|s| max_loading(&s) <= limit)
        }),
    }
}

/// The point the task's goal is checked at: now, or at t + Δ with the control held.
fn target_point<'r>(task: &Task, rec: &'r Recorded) -> Result<&'r Point, String> {
    let (_, at) = goal_of(task)?;
    Ok(rec.point(task.t_now + if at { task.horizon() } else { 0 }))
}

/// The current setting a control moves from: 0 MW of redispatch, or the present setpoint.
fn baseline(point: &Point, control: Control) -> f64 {
    match control {
        Control::Redispatch(_) => 0.0,
        Control::VoltageSet(g) => point.case.v_set[GEN_BUSES[g] - 1],
    }
}

/// The simulator's verdict on setting `control = value` for `task`. The cost is the size of
/// the move: |ΔP| in MW, or |ΔV| in pu.
pub fn judge(task: &Task, control: &str, value: f64) -> Result<Verdict, String> {
    let rec = day_of(task)?;
    let (goal, _) = goal_of(task)?;
    let limit = num_arg(task, "limit")?;
    let point = target_point(task, rec)?;
    let wanted_voltage = matches!(goal, Goal::Voltage);
    let Some(parsed) = parse_control(control)
        .filter(|c| matches!(c, Control::VoltageSet(_)) == wanted_voltage)
        .filter(|_| value.is_finite())
    else {
        return Ok(Verdict {
            feasible: false,
            cost: f64::INFINITY,
        });
    };
    let feasible = apply(point, parsed, value).is_some_and(|p| meets(goal, task, &p, limit));
    Ok(Verdict {
        feasible,
        cost: (value - baseline(point, parsed)).abs(),
    })
}

/// The cheapest feasible control move over every generator and direction: a scan in coarse
/// steps finds the first feasible move, bisection refines it.
fn best_action(task: &Task, rec: &Recorded) -> Result<(String, f64), String> {
    let (goal, _) = goal_of(task)?;
    let limit = num_arg(task, "limit")?;
    let point = target_point(task, rec)?;
    let candidates: Vec<(Control, String, f64, f64)> = if matches!(goal, Goal::Voltage) {
        REGULATING
            .iter()
            .map(|&g| {
                (
                    Control::VoltageSet(g),
                    format!("vset.G{}", g + 1),
                    0.005,
                    0.16,
                )
            })
            .collect()
    } else {
        DISPATCHABLE
            .iter()
            .map(|&g| {
                (
                    Control::Redispatch(g),
                    format!("redispatch.G{}", g + 1),
                    2.0,
                    GEN_PMAX[g],
                )
            })
            .collect()
    };
    let mut best: Option<(String, f64, f64)> = None;
    for (control, name, step, span) in candidates {
        let base = baseline(point, control);
        for sign in [1.0, -1.0] {
            let ok = |size: f64| {
                apply(point, control, base + sign * size)
                    .is_some_and(|p| meets(goal, task, &p, limit))
            };
            let Some(first) = (1..=(span / step).ceil() as usize)
                .map(|k| k as f64 * step)
                .find(|&size| ok(size))
            else {
                continue;
            };
            let size = lowest_passing(first - step, first, step * 1e-4, &ok).unwrap_or(first);
            if best.as_ref().is_none_or(|(_, _, c)| size < *c) {
                best = Some((name.clone(), base + sign * size, size));
            }
        }
    }
    best.map(|(name, value, _)| (name, value))
        .ok_or_else(|| format!("{}: no single-generator move meets the goal", task.id))
}

/// The cost of the oracle's intervention.
pub fn best_cost(task: &Task) -> Result<f64, String> {
    match resolve(task)? {
        Answer::Action { control, value } => judge(task, &control, value).map(|v| v.cost),
        _ => Ok(0.0),
    }
}
