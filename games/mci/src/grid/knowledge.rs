//! What the grid harness levels K2 and K4 hand the agent: the operating manual (limits, the
//! design case, the daily pattern, rules of thumb) and the network model (branch and generator
//! tables, and DC sensitivities derived from the topology).

use super::case14::{BRANCHES, BUSES, GENS};
use super::flow::{N_BRANCH, N_BUS};
use super::oracle::branch_limits;
use super::scenario::{GEN_BUSES, GEN_PMAX, SOLAR_PEAK, UNSENSED, bus_name, line_name};
use crate::knowledge::Doc;
use crate::numeric::solve_dense;

/// The manual's topics.
pub const MANUAL_TOPICS: [&str; 4] = ["index", "limits", "design", "rules"];

/// The model's fixed components; `sensitivity.Lxx` and `outage.Lxx` exist for every line.
pub const MODEL_COMPONENTS: [&str; 2] = ["network", "generators"];

/// A manual topic (K2).
pub fn manual(topic: &str) -> Option<Doc> {
    let doc = match topic {
        "index" => Doc::text(
            "Grid operating manual (IEEE 14-bus system). Topics: `limits`, `design` (the \
             design case and the daily pattern), `rules` (rules of thumb and procedures).",
        ),
        "limits" => {
            let mut doc = Doc::text(
                "Every line must stay at loading rho <= 1.0 (current over its thermal limit). \
                 Bus voltages must stay within 0.94-1.06 pu at load buses. Generator outputs \
                 stay within their limits. Limits below are per line, in pu current.",
            )
            .with("rho_max", 1.0)
            .with("v_min", 0.94)
            .with("v_max", 1.06);
            for (k, limit) in branch_limits().iter().enumerate() {
                doc = doc.with(&format!("limit.{}", line_name(k)), *limit);
            }
            doc
        }
        "design" => {
            let mut doc = Doc::text(
                "Design case (the published IEEE 14-bus solution at the daily peak): total load \
                 259 MW, losses 13.4 MW, slack (G1) about 232 MW, G2 40 MW, condensers G3-G5 at \
                 0 MW. Daily pattern: loads follow 0.8 + 0.2 sin(2 pi (h - 9) / 24) of their \
                 peak (60% at 03:00, 100% at 15:00); G2 follows the same shape; the 30 MW solar \
                 unit G6 at bus 6 follows the sun from 06:00 to 18:00. Buses 07, 12 and 14 have \
                 no voltage sensor; their design-case voltages are given.",
            )
            .with("load_peak_mw", BUSES.iter().map(|b| b.pd).sum())
            .with("losses_mw", 13.4)
            .with("g2_mw", GENS[1].pg)
            .with("solar_peak_mw", SOLAR_PEAK);
            for &b in &UNSENSED {
                doc = doc.with(&format!("v.{}", bus_name(b)), BUSES[b - 1].vm);
            }
            for bus in BUSES.iter().filter(|b| b.pd > 0.0) {
                doc = doc.with(&format!("peak.load.{}", bus_name(bus.id)), bus.pd);
            }
            doc
        }
        "rules" => Doc::text(
            "Rules of thumb. (1) Losses run at about 5% of load and grow with its square. \
             (2) Power flows from the slack at bus 1 and G2 at bus 2 towards the load centres \
             at buses 3, 4 and 9; raising output at a generator near a congested line's \
             receiving end (G3 bus 3, G4 bus 6, G5 bus 8) and letting the slack fall relieves \
             it. (3) Line loadings follow the daily load shape: they peak mid-afternoon. \
             (4) After a line trips, its flow moves to the parallel paths between the same \
             areas. (5) Raising a generator's voltage setpoint raises nearby bus voltages; \
             buses 9-14 respond most to G4 (bus 6) and G5 (bus 8). (6) Unmonitored bus \
             voltages sit close to their design values, lower under heavy load.",
        ),
        _ => return None,
    };
    Some(doc)
}

/// DC power-transfer distribution factors: `ptdf[k][b]` is the flow change on branch `k`
/// (MW) per MW injected at bus `b` and withdrawn at the slack, under the given topology.
pub fn ptdf(in_service: &[bool; N_BRANCH]) -> [[f64; N_BUS]; N_BRANCH] {
    // The reduced susceptance matrix over buses 2..14.
    let n = N_BUS - 1;
    let mut b = vec![0.0; n * n];
    for (k, br) in BRANCHES.iter().enumerate() {
        if !in_service[k] {
            continue;
        }
        let y = 1.0 / br.x;
        let (f, t) = (br.from - 1, br.to - 1);
        for (i, j, v) in [(f, f, y), (t, t, y), (f, t, -y), (t, f, -y)] {
            if i > 0 && j > 0 {
                b[(i - 1) * n + (j - 1)] += v;
            }
        }
    }
    let mut out = [[0.0; N_BUS]; N_BRANCH];
    for bus in 1..N_BUS {
        let mut matrix = b.clone();
        let mut rhs = vec![0.0; n];
        rhs[bus - 1] = 1.0;
        if solve_dense(&mut matrix, &mut rhs).is_none() {
            continue;
        }
        let theta = |i: usize| if i == 0 { 0.0 } else { rhs[i - 1] };
        for (k, br) in BRANCHES.iter().enumerate() {
            if in_service[k] {
                out[k][bus] = (theta(br.from - 1) - theta(br.to - 1)) / br.x;
            }
        }
    }
    out
}

/// A model component (K4) under the topology `in_service` of the current time.
pub fn model(component: &str, in_service: &[bool; N_BRANCH]) -> Option<Doc> {
    let line_of = |name: &str| {
        name.strip_prefix('L')
            .and_then(|n| n.parse::<usize>().ok())
            .filter(|n| (1..=N_BRANCH).contains(n))
            .map(|n| n - 1)
    };
    if let Some(line) = component.strip_prefix("sensitivity.").and_then(line_of) {
        let factors = ptdf(in_service);
        let mut doc = Doc::text(&format!(
            "DC sensitivity of line {}'s active flow (MW, from end) to 1 MW more output at \
             each dispatchable generator, the slack G1 producing 1 MW less.",
            line_name(line)
        ));
        for g in 1..5 {
            doc = doc.with(&format!("G{}", g + 1), factors[line][GEN_BUSES[g] - 1]);
        }
        return Some(doc);
    }
    if let Some(out) = component.strip_prefix("outage.").and_then(line_of) {
        let factors = ptdf(in_service);
        let br = BRANCHES[out];
        let (f, t) = (br.from - 1, br.to - 1);
        let own = factors[out][f] - factors[out][t];
        let mut doc = Doc::text(&format!(
            "DC line-outage distribution factors of line {}: the fraction of its pre-outage \
             flow that each other line picks up when it trips (1 - own factor = {:.3}).",
            line_name(out),
            1.0 - own
        ));
        for k in (0..N_BRANCH).filter(|&k| k != out && in_service[k]) {
            let lodf = if (1.0 - own).abs() < 1e-9 {
                0.0
            } else {
                (factors[k][f] - factors[k][t]) / (1.0 - own)
            };
            doc = doc.with(&line_name(k), lodf);
        }
        return Some(doc);
    }
    let doc = match component {
        "network" => {
            let mut doc = Doc::text(
                "Branches (pi model, per unit on 100 MVA): for each line Lxx its from and to \
                 buses, series r and x, total charging b, transformer tap ratio (1 for lines) \
                 and thermal limit (pu current), and whether it is in service now. AC power \
                 flow: S_i = V_i * conj(sum_k Y_ik V_k); losses = generation - load.",
            );
            for (k, br) in BRANCHES.iter().enumerate() {
                let l = line_name(k);
                let ratio = if br.ratio == 0.0 { 1.0 } else { br.ratio };
                for (field, value) in [
                    ("from", br.from as f64),
                    ("to", br.to as f64),
                    ("r", br.r),
                    ("x", br.x),
                    ("b", br.b),
                    ("ratio", ratio),
                    ("limit", branch_limits()[k]),
                    ("in_service", f64::from(u8::from(in_service[k]))),
                ] {
                    doc = doc.with(&format!("{l}.{field}"), value);
                }
            }
            doc
        }
        "generators" => {
            let mut doc = Doc::text(
                "Generators: G1 slack (bus 1), G2 (bus 2), condensers G3 (bus 3), G4 (bus 6), \
                 G5 (bus 8) that can also produce active power, and the solar unit G6 (bus 6). \
                 For each: bus and upper active limit (MW).",
            );
            for g in 0..GEN_BUSES.len() {
                doc = doc
                    .with(&format!("G{}.bus", g + 1), GEN_BUSES[g] as f64)
                    .with(&format!("G{}.pmax", g + 1), GEN_PMAX[g]);
            }
            doc
        }
        _ => return None,
    };
    Some(doc)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dc_factors_conserve_injections_and_redistribute_outages() {
        let all = [true; N_BRANCH];
        let f = ptdf(&all);
        // 1 MW injected at bus 14 must all leave through its two branches (L17 9-14 into
        // bus 14 and L20 13-14 into bus 14 carry it back towards the slack).
        let out_of_14 = -f[16][13] - f[19][13];
        assert!((out_of_14 - 1.0).abs() < 1e-9, "{out_of_14}");
        // Outage factors: a line's own flow is fully redistributed.
        let doc = model("outage.L04", &all).unwrap_or_else(|| Doc::text(""));
        assert_eq!(doc.entries.len(), N_BRANCH - 1);
    }
}
