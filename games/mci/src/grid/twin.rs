//! The K5 engine of the grid: a steady AC power flow and N-1 screening at the present
//! operating point, with the agent's overrides. There is deliberately no time rollout (C.4):
//! the grid's future follows exogenous injections, which the agent must forecast itself and
//! pass as overrides.

use super::flow::{N_BRANCH, N_BUS};
use super::oracle::{Control, Recorded, apply, loadings, parse_control, screen};
use super::scenario::{GEN_PMAX, Point, bus_name, line_name};

/// A screened outage's post-outage loading when the flow diverges (a finite stand-in for
/// "collapse", so it survives serialisation).
pub const COLLAPSE: f64 = 99.0;

/// The point at `t_now` with the overrides applied:
/// `redispatch.Gk` (ΔMW), `vset.Gk` (pu), `gen.Gk` (MW, G2..G6), `load.Bxx` (MW, reactive
/// demand scaled alike), `load.scale` (every load ×), `line.Lxx` (1 in service, 0 out).
pub fn overridden(rec: &Recorded, t_now: i64, controls: &[(String, f64)]) -> Result<Point, String> {
    let mut point = rec.point(t_now).clone();
    for (name, value) in controls {
        if !value.is_finite() {
            return Err(format!("the value {value} for `{name}` is not a number"));
        }
        let value = *value;
        let index = |prefix: &str, max: usize| {
            name.strip_prefix(prefix)
                .and_then(|n| n.parse::<usize>().ok())
                .filter(|n| (1..=max).contains(n))
        };
        if let Some(control) = parse_control(name) {
            point = apply(&point, control, value).ok_or_else(|| match control {
                Control::Redispatch(g) => format!(
                    "`{name}` = {value} takes G{} outside 0..{} MW",
                    g + 1,
                    GEN_PMAX[g]
                ),
                Control::VoltageSet(_) => format!("`{name}` = {value} is outside 0.94..1.10 pu"),
            })?;
        } else if let Some(g) = index("gen.G", 6).filter(|&g| g >= 2) {
            if !(0.0..=GEN_PMAX[g - 1]).contains(&value) {
                return Err(format!(
                    "`{name}` = {value} is outside 0..{} MW",
                    GEN_PMAX[g - 1]
                ));
            }
            point.gens[g - 1] = value;
        } else if let Some(b) = index("load.B", N_BUS) {
            let old = point.case.load_p[b - 1];
            let ratio = if old.abs() > 1e-9 { value / old } else { 1.0 };
            point.case.load_p[b - 1] = value;
            point.case.load_q[b - 1] *= ratio;
        } else if name == "load.scale" {
            point.case.load_p.iter_mut().for_each(|p| *p *= value);
            point.case.load_q.iter_mut().for_each(|q| *q *= value);
        } else if let Some(k) = index("line.L", N_BRANCH) {
            point.case.in_service[k - 1] = value >= 0.5;
        } else {
            return Err(format!(
                "`{name}` is not a control (redispatch.Gk, vset.Gk, gen.Gk, load.Bxx, \
                 load.scale, line.Lxx)"
            ));
        }
    }
    Ok(point)
}

/// The AC power flow at the overridden point: every line's loading and flow, every bus
/// voltage (including the unmonitored ones: the solve computes them), generator outputs and
/// losses. `Err` when the overrides are bad or the flow has no solution.
pub fn power_flow(
    rec: &Recorded,
    t_now: i64,
    controls: &[(String, f64)],
) -> Result<Vec<(String, f64)>, String> {
    let point = overridden(rec, t_now, controls)?;
    let sol = point.solve().map_err(|e| e.to_string())?;
    let rho = loadings(&sol);
    let mut out = Vec::new();
    for (k, (loading, branch)) in rho.iter().zip(&sol.branches).enumerate() {
        out.push((format!("rho.{}", line_name(k)), *loading));
        out.push((format!("p.{}", line_name(k)), branch.p_from));
    }
    for b in 0..N_BUS {
        out.push((format!("v.{}", bus_name(b + 1)), sol.vm[b]));
    }
    for g in 0..6 {
        out.push((format!("gen.G{}", g + 1), point.gen_output(g, &sol)));
    }
    out.push(("losses".into(), sol.losses));
    Ok(out)
}

/// N-1 screening at the overridden point: per outage, the highest post-outage loading and
/// the line that carries it.
pub fn n1_screen(
    rec: &Recorded,
    t_now: i64,
    controls: &[(String, f64)],
) -> Result<Vec<(String, f64, String)>, String> {
    let point = overridden(rec, t_now, controls)?;
    Ok(screen(&point)
        .into_iter()
        .map(|(k, rho)| {
            let mut p = point.clone();
            p.case.in_service[k] = false;
            let worst = p.solve().ok().and_then(|sol| {
                let r = loadings(&sol);
                (0..N_BRANCH).max_by(|&a, &b| r[a].total_cmp(&r[b]))
            });
            (
                line_name(k),
                if rho.is_finite() { rho } else { COLLAPSE },
                worst.map_or("none".into(), line_name),
            )
        })
        .collect())
}
