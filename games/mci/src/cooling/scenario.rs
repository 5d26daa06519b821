//! The six cooling trajectories (the paper's B.2 list: two normal, single- and multi-plate
//! overheating, a migrating hotspot, a pump-degradation ramp), their input schedules, and the
//! recorded telemetry with sensor noise.
//!
//! Fault times, magnitudes and the per-plate load pattern are ours (the paper gives only the
//! list). Noise comes from a fixed stream per scenario, not from the episode seed, so every
//! episode on a scenario replays the same telemetry (the paper's scenarios are deterministic
//! replays too, D.5).

use harness_runtime::RngStreams;

use super::plant::{self, Inputs, PLATES, Params, STATE_LEN};
use crate::numeric::gaussian;
use crate::telemetry::{SignalSpec, Telemetry};

/// Episode length, s (the paper's 0–1200 s).
pub const DURATION: i64 = 1200;

/// Sampling period of the recorded telemetry, s (the paper's Δt = 5 s).
pub const SAMPLE: i64 = 5;

/// Outlet and supply temperature sensor noise, K (one standard deviation; ours).
pub const TEMP_NOISE: f64 = 0.1;

/// Relative noise of flow, pressure and power sensors (ours).
pub const REL_NOISE: f64 = 0.01;

/// The seed of the scenario noise streams and of the hall's load pattern (ours, fixed).
const SEED: u64 = 0x4D43_495F_434F_4F4C;

/// The cooling scenarios, in a fixed order.
pub const SCENARIOS: [(&str, &str); 6] = [
    (
        "normal-a",
        "Normal operation at the design point (pump 0.80, valve 0.60).",
    ),
    (
        "normal-b",
        "Normal operation at pump 0.85 and valve 0.70, with an 8% hall-wide load step at 600 s.",
    ),
    (
        "blocked-plate",
        "Plate 07's channel fouls at 300 s: its hydraulic resistance rises eightfold.",
    ),
    (
        "rack-overload",
        "Racks 3 and 4 (plates 05-08) take 40% more load from 400 s.",
    ),
    (
        "migrating-hotspot",
        "A 6 kW hotspot sits on plate 03 from 200 s, moves to plate 12 at 500 s and to plate 18 \
         at 800 s.",
    ),
    (
        "pump-degradation",
        "The pump's head falls linearly by 35% between 300 s and 1200 s.",
    ),
];

/// A cooling scenario: its schedule of inputs and mechanism parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    /// The scenario's id (one of [`SCENARIOS`]).
    pub id: &'static str,
    params: Params,
    base_power: [f64; PLATES],
    phase: [f64; PLATES],
}

/// Plate `i` (0-based) as its two-digit agent-facing number, `07`.
pub fn plate_name(i: usize) -> String {
    format!("{:02}", i + 1)
}

impl Scenario {
    /// The scenario called `id`.
    pub fn new(id: &str) -> Option<Scenario> {
        let &(id, _) = SCENARIOS.iter().find(|(name, _)| *name == id)?;
        // The hall's load pattern is one fixed draw shared by every scenario: plate loads
        // between 10.8 and 13.2 kW, each breathing ±3% with its own phase over 10 minutes.
        let mut stream = RngStreams::new(SEED).stream("cooling.hall");
        let mut base_power = [0.0; PLATES];
        let mut phase = [0.0; PLATES];
        for i in 0..PLATES {
            base_power[i] = 12e3 * (0.9 + 0.2 * stream.next_f64());
            phase[i] = std::f64::consts::TAU * stream.next_f64();
        }
        Some(Scenario {
            id,
            params: Params::default(),
            base_power,
            phase,
        })
    }

    /// The loop's physical constants.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// The inputs and mechanism parameters at time `t` (s).
    pub fn inputs(&self, t: f64) -> Inputs {
        let p = &self.params;
        let (speed, valve) = if self.id == "normal-b" {
            (0.85, 0.7)
        } else {
            (0.8, 0.6)
        };
        let mut power = [0.0; PLATES];
        for (i, slot) in power.iter_mut().enumerate() {
            let breathing = 1.0 + 0.03 * (std::f64::consts::TAU * t / 600.0 + self.phase[i]).sin();
            *slot = self.base_power[i] * breathing;
        }
        let mut resistance = [p.r_plate; PLATES];
        let mut head = p.head;
        match self.id {
            "normal-b" if t >= 600.0 => power.iter_mut().for_each(|w| *w *= 1.08),
            "blocked-plate" if t >= 300.0 => resistance[6] *= 8.0,
            "rack-overload" if t >= 400.0 => power[4..8].iter_mut().for_each(|w| *w *= 1.4),
            "migrating-hotspot" => {
                let plate = if t >= 800.0 {
                    Some(17)
                } else if t >= 500.0 {
                    Some(11)
                } else if t >= 200.0 {
                    Some(2)
                } else {
                    None
                };
                if let Some(i) = plate {
                    power[i] += 6e3;
                }
            }
            "pump-degradation" => head *= 1.0 - 0.35 * ((t - 300.0) / 900.0).clamp(0.0, 1.0),
            _ => {}
        }
        Inputs {
            speed,
            valve,
            power,
            resistance,
            head,
        }
    }

    /// The true thermal state at every second from 0 to [`DURATION`], starting from the steady
    /// state of the inputs at time 0.
    pub fn simulate(&self) -> Vec<[f64; STATE_LEN]> {
        let mut x = plant::steady_state(&self.params, &self.inputs(0.0));
        let mut states = Vec::with_capacity(DURATION as usize + 1);
        states.push(x);
        let inputs = |t: f64| self.inputs(t);
        plant::integrate(
            &self.params,
            &mut x,
            0.0,
            DURATION as usize,
            &inputs,
            &mut |_, state| states.push(*state),
        );
        states
    }

    /// The recorded telemetry: visible signals with sensor noise, hidden families exact, one
    /// sample every [`SAMPLE`] seconds.
    pub fn record(&self, states: &[[f64; STATE_LEN]]) -> Telemetry {
        let times: Vec<i64> = (0..=DURATION).step_by(SAMPLE as usize).collect();
        let mut table = Telemetry::new(times.clone(), signals());
        let mut noise = RngStreams::new(SEED).stream(&format!("cooling.noise.{}", self.id));
        for &t in &times {
            let u = self.inputs(t as f64);
            let r = plant::read(&self.params, &u, &states[t as usize]);
            let mut row = Vec::with_capacity(table.signals.len());
            for spec in &table.signals {
                let exact = value_of(spec, &u, &r);
                let noisy = match (spec.hidden, spec.unit) {
                    (true, _) | (_, "frac") => exact,
                    (false, "degC") => exact + TEMP_NOISE * gaussian(&mut noise),
                    (false, _) => exact * (1.0 + REL_NOISE * gaussian(&mut noise)),
                };
                row.push(noisy);
            }
            for (column, v) in table.values.iter_mut().zip(row) {
                column.push(v);
            }
        }
        table
    }
}

/// The signals of the cooling telemetry, visible families first.
pub fn signals() -> Vec<SignalSpec> {
    let mut out = Vec::new();
    let mut add = |name: String, unit: &'static str, hidden: bool, doc: String| {
        out.push(SignalSpec {
            name,
            unit,
            hidden,
            doc,
        })
    };
    add(
        "T_supply".into(),
        "degC",
        false,
        "Supply (tank) temperature.".into(),
    );
    add(
        "T_return".into(),
        "degC",
        false,
        "Mixed return temperature.".into(),
    );
    add(
        "T_hx_out".into(),
        "degC",
        false,
        "Heat-exchanger outlet temperature.".into(),
    );
    add("flow.loop".into(), "L/s", false, "Total loop flow.".into());
    add(
        "dp.pump".into(),
        "kPa",
        false,
        "Pump differential pressure.".into(),
    );
    add(
        "pump.speed".into(),
        "frac",
        false,
        "Pump speed command.".into(),
    );
    add(
        "valve.opening".into(),
        "frac",
        false,
        "Facility valve opening.".into(),
    );
    add(
        "pump.power".into(),
        "kW",
        false,
        "Electrical pump power.".into(),
    );
    for i in 0..PLATES {
        let n = plate_name(i);
        add(
            format!("T_out.{n}"),
            "degC",
            false,
            format!("Outlet temperature of plate {n}."),
        );
        add(
            format!("power.{n}"),
            "kW",
            false,
            format!("Heat load of plate {n}."),
        );
    }
    add(
        "pump.head".into(),
        "kPa",
        true,
        "Pump shut-off head at full speed (mechanism).".into(),
    );
    for i in 0..PLATES {
        let n = plate_name(i);
        add(
            format!("T_base.{n}"),
            "degC",
            true,
            format!("Base-plate temperature of plate {n}."),
        );
        add(
            format!("T_junction.{n}"),
            "degC",
            true,
            format!("Junction temperature of plate {n}."),
        );
        add(
            format!("flow.{n}"),
            "L/s",
            true,
            format!("Coolant flow through plate {n}."),
        );
        add(
            format!("R.{n}"),
            "1e11 Pa s2/m6",
            true,
            format!("Hydraulic resistance of plate {n}."),
        );
    }
    out
}

/// The exact value of one signal under inputs `u` with readings `r`.
pub fn value_of(spec: &SignalSpec, u: &Inputs, r: &plant::Reading) -> f64 {
    let plate = || {
        spec.name
            .split_once('.')
            .and_then(|(_, n)| n.parse::<usize>().ok())
            .map_or(0, |n| n - 1)
    };
    match spec.family() {
        "T_supply" => r.t_supply,
        "T_return" => r.t_return,
        "T_hx_out" => r.t_hx_out,
        "flow" if spec.name == "flow.loop" => r.flows.total * 1e3,
        "flow" => r.flows.plate[plate()] * 1e3,
        "dp" => r.flows.dp_pump / 1e3,
        "pump" if spec.name == "pump.speed" => u.speed,
        "pump" if spec.name == "pump.power" => r.pump_power / 1e3,
        "pump" => u.head / 1e3,
        "valve" => u.valve,
        "T_out" => r.t_out[plate()],
        "power" => u.power[plate()] / 1e3,
        "T_base" => r.t_base[plate()],
        "T_junction" => r.t_junction[plate()],
        "R" => u.resistance[plate()] / 1e11,
        other => unreachable!("no cooling signal family `{other}`"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn max_of(table: &Telemetry, family: &str, from: i64) -> f64 {
        table
            .signals
            .iter()
            .zip(&table.values)
            .filter(|(s, _)| s.family() == family)
            .flat_map(|(_, column)| {
                table
                    .times
                    .iter()
                    .zip(column)
                    .filter(move |(t, _)| **t >= from)
                    .map(|(_, v)| *v)
            })
            .fold(f64::NEG_INFINITY, f64::max)
    }

    #[test]
    fn scenarios_replay_exactly_and_faults_show_where_described() {
        let record = |id| {
            let s = Scenario::new(id).unwrap_or_else(|| panic!("{id}"));
            s.record(&s.simulate())
        };
        assert_eq!(record("blocked-plate"), record("blocked-plate"));
        for id in ["normal-a", "normal-b"] {
            assert!(
                max_of(&record(id), "T_out", 0) < 45.0,
                "{id} breaks the outlet limit"
            );
        }
        let blocked = record("blocked-plate");
        assert!(blocked.value("T_out.07", 295).unwrap_or(0.0) < 45.0);
        assert!(blocked.value("T_out.07", 900).unwrap_or(0.0) > 55.0);
        let worn = record("pump-degradation");
        assert_eq!(worn.value("pump.head", 1200), Some(130.0));
        assert!(worn.value("flow.loop", 1200) < worn.value("flow.loop", 200));
        let hot = record("migrating-hotspot");
        assert!(hot.value("power.12", 600) > hot.value("power.12", 400));
        assert!(max_of(&record("rack-overload"), "T_out", 600) > 45.0);
    }
}
