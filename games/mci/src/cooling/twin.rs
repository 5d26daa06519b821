//! The K5 digital twin of the cooling loop: transient rollouts and steady-state solves from the
//! plant's present state, under the present inputs held constant unless overridden.
//!
//! The twin is synchronised with the plant at the task's current time (its state and its
//! mechanism parameters, such as a fouled plate's resistance or a worn pump's head), but it
//! knows nothing of what happens later: scheduled load changes and a continuing pump wear are
//! not in it. Its outputs are visible signals only; the hidden families stay masked (C.3).

use super::oracle::{Recorded, with_control};
use super::plant::{self, PLATES};
use super::scenario::{signals, value_of};

/// Samples a rollout returns, evenly spaced over its horizon (the paper's 18-step cap, C.2).
pub const ROLLOUT_SAMPLES: usize = 18;

/// The longest rollout horizon, s.
pub const MAX_HORIZON: i64 = 1800;

/// True for a control the twin accepts: `pump.speed`, `valve.opening` or `power.01`..`power.20`.
pub fn is_control(name: &str) -> bool {
    matches!(name, "pump.speed" | "valve.opening")
        || name
            .strip_prefix("power.")
            .and_then(|n| n.parse::<usize>().ok())
            .is_some_and(|n| (1..=PLATES).contains(&n) && name.len() == "power.01".len())
}

/// A transient rollout.
#[derive(Clone, Debug, PartialEq)]
pub struct Rollout {
    /// Sample times, s.
    pub times: Vec<i64>,
    /// The signals returned.
    pub names: Vec<String>,
    /// `values[signal][sample]`.
    pub values: Vec<Vec<f64>>,
    /// Each signal's highest value over every integration step of the horizon.
    pub peaks: Vec<f64>,
    /// Integration steps taken.
    pub steps: usize,
}

/// Checks the overrides and the requested signals (empty means every visible signal).
fn check(controls: &[(String, f64)], wanted: &[String]) -> Result<Vec<usize>, String> {
    if let Some((bad, _)) = controls.iter().find(|(c, _)| !is_control(c)) {
        return Err(format!(
            "`{bad}` is not a control (pump.speed, valve.opening, power.01..power.20)"
        ));
    }
    if let Some((c, v)) = controls.iter().find(|(_, v)| !v.is_finite()) {
        return Err(format!("the value {v} for `{c}` is not a number"));
    }
    let specs = signals();
    if wanted.is_empty() {
        return Ok((0..specs.len()).filter(|&i| !specs[i].hidden).collect());
    }
    wanted
        .iter()
        .map(|name| {
            specs
                .iter()
                .position(|s| &s.name == name && !s.hidden)
                .ok_or_else(|| format!("`{name}` is not a visible signal"))
        })
        .collect()
}

/// Applies overrides, clamping pump speed and valve opening to their ranges.
fn overridden(rec: &Recorded, t: i64, controls: &[(String, f64)]) -> plant::Inputs {
    let (lo, hi) = rec.params().speed_range;
    controls
        .iter()
        .fold(rec.scenario.inputs(t as f64), |u, (c, v)| {
            let v = match c.as_str() {
                "pump.speed" => v.clamp(lo, hi),
                "valve.opening" => v.clamp(0.0, 1.0),
                _ => v.max(0.0),
            };
            with_control(u, c, v)
        })
}

/// Rolls the twin forward `horizon` seconds from `t_now`.
pub fn rollout(
    rec: &Recorded,
    t_now: i64,
    horizon: i64,
    controls: &[(String, f64)],
    wanted: &[String],
) -> Result<Rollout, String> {
    let columns = check(controls, wanted)?;
    let horizon = horizon.clamp(1, MAX_HORIZON);
    let specs = signals();
    let u = overridden(rec, t_now, controls);
    let p = rec.params();
    let samples: Vec<i64> = (1..=ROLLOUT_SAMPLES as i64)
        .map(|k| t_now + (k * horizon + ROLLOUT_SAMPLES as i64 - 1) / ROLLOUT_SAMPLES as i64)
        .collect();
    let mut times = Vec::new();
    let mut values = vec![Vec::new(); columns.len()];
    let mut peaks = vec![f64::NEG_INFINITY; columns.len()];
    let mut x = rec.state(t_now);
    let held = |_: f64| u.clone();
    let operating = plant::LastOperating::default();
    plant::integrate(
        p,
        &mut x,
        t_now as f64,
        horizon as usize,
        &held,
        &mut |t, state| {
            let r = operating.read(p, &u, state);
            let now = t.round() as i64;
            let sampled = samples.contains(&now) && times.last() != Some(&now);
            if sampled {
                times.push(now);
            }
            for (k, &c) in columns.iter().enumerate() {
                let v = value_of(&specs[c], &u, &r);
                peaks[k] = peaks[k].max(v);
                if sampled {
                    values[k].push(v);
                }
            }
        },
    );
    Ok(Rollout {
        times,
        names: columns.iter().map(|&c| specs[c].name.clone()).collect(),
        values,
        peaks,
        steps: horizon as usize,
    })
}

/// The steady state the loop would settle to under the present inputs with the overrides:
/// every visible signal, by name.
pub fn steady(
    rec: &Recorded,
    t_now: i64,
    controls: &[(String, f64)],
) -> Result<Vec<(String, f64)>, String> {
    let columns = check(controls, &[])?;
    let specs = signals();
    let u = overridden(rec, t_now, controls);
    let p = rec.params();
    let r = plant::read(p, &u, &plant::steady_state(p, &u));
    Ok(columns
        .into_iter()
        .map(|c| (specs[c].name.clone(), value_of(&specs[c], &u, &r)))
        .collect())
}
