//! The cooling loop's physics: quasi-static hydraulics, first-order plate and tank thermal
//! dynamics, the direct steady-state solve and fixed-step integration.
//!
//! Every parameter here is ours (the paper's twin is proprietary, App. I.2); the values are the
//! design brief's, chosen so that the nominal operating point sits near the paper's reported
//! temperatures. The loop: a variable-speed pump drives coolant from the supply tank through 20
//! cold plates in parallel (10 racks × 2 plates) and a loop resistance into a facility heat
//! exchanger, whose outlet refills the tank.

use std::cell::RefCell;

use crate::numeric::rk4_step;

/// Cold plates in the hall (10 racks × 2).
pub const PLATES: usize = 20;

/// Length of the thermal state vector: 20 base-plate temperatures, then the supply tank.
pub const STATE_LEN: usize = PLATES + 1;

/// The loop's physical constants (all ours; units in the field docs).
#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    /// Volumetric heat capacity of the coolant, J/(m³·K) (water).
    pub rho_cp: f64,
    /// Nominal hydraulic resistance of one cold plate, Pa·s²/m⁶ (Δp = R·Q²).
    pub r_plate: f64,
    /// Resistance of the rest of the loop (piping, manifolds), Pa·s²/m⁶.
    pub r_loop: f64,
    /// Nominal shut-off head of the pump at full speed, Pa.
    pub head: f64,
    /// Pump curve coefficient: Δp = s²·H0 − k·Q², Pa·s²/m⁶.
    pub pump_k: f64,
    /// Pump wire-to-water efficiency (pump power = Δp·Q/η).
    pub pump_efficiency: f64,
    /// Conductance between a base plate and its coolant channel, W/K.
    pub ua: f64,
    /// Heat capacity of one base plate (metal and attached mass), J/K.
    pub c_base: f64,
    /// Volume of the supply tank, m³.
    pub tank_volume: f64,
    /// Heat-exchanger effectiveness with the facility valve fully open.
    pub hx_max: f64,
    /// Shape of the valve characteristic: ε_hx(θ) = ε_max(1 − e^{−aθ})/(1 − e^{−a}).
    pub hx_shape: f64,
    /// Facility-water inlet temperature, °C.
    pub t_facility: f64,
    /// Junction-to-base thermal resistance, K/W (T_j = T_b + r·P).
    pub r_junction: f64,
    /// The admissible pump speeds (fraction of full speed).
    pub speed_range: (f64, f64),
    /// Outlet-temperature limit of the operating manual, °C (a signal limit).
    pub t_out_limit: f64,
    /// Base-plate temperature limit, °C (a latent-state limit).
    pub t_base_limit: f64,
}

impl Default for Params {
    fn default() -> Self {
        Self {
            rho_cp: 1000.0 * 4180.0,
            r_plate: 6.7e11,
            r_loop: 1.67e9,
            head: 200e3,
            pump_k: 2.2e9,
            pump_efficiency: 0.6,
            ua: 1500.0,
            c_base: 60e3,
            tank_volume: 0.3,
            hx_max: 0.75,
            hx_shape: 2.5,
            t_facility: 24.0,
            r_junction: 1.67e-3,
            speed_range: (0.3, 1.0),
            t_out_limit: 45.0,
            t_base_limit: 65.0,
        }
    }
}

/// The loop's inputs and mechanism parameters at one instant.
#[derive(Clone, Debug, PartialEq)]
pub struct Inputs {
    /// Pump speed, fraction of full speed.
    pub speed: f64,
    /// Facility valve opening, 0..1.
    pub valve: f64,
    /// Heat load of each plate, W.
    pub power: [f64; PLATES],
    /// Hydraulic resistance of each plate, Pa·s²/m⁶ (a mechanism; hidden).
    pub resistance: [f64; PLATES],
    /// Pump shut-off head at full speed, Pa (a mechanism; hidden).
    pub head: f64,
}

/// The hydraulic operating point.
#[derive(Clone, Debug, PartialEq)]
pub struct Flows {
    /// Total loop flow, m³/s.
    pub total: f64,
    /// Flow through each plate, m³/s.
    pub plate: [f64; PLATES],
    /// Pump differential pressure, Pa.
    pub dp_pump: f64,
}

/// Solves the quasi-static hydraulics. Parallel branches share one manifold pressure drop, so
/// the network has the closed form Q = s·√(H0 / (k + R_L + R_eq)) with
/// R_eq = (Σ R_i^{−1/2})^{−2}; no iteration is needed.
pub fn flows(p: &Params, u: &Inputs) -> Flows {
    let conductance: f64 = u.resistance.iter().map(|r| r.powf(-0.5)).sum();
    let r_eq = conductance.powi(-2);
    let total = u.speed * (u.head / (p.pump_k + p.r_loop + r_eq)).sqrt();
    let dp_manifold = r_eq * total * total;
    let plate = u.resistance.map(|r| (dp_manifold / r).sqrt());
    Flows {
        total,
        plate,
        dp_pump: u.speed * u.speed * u.head - p.pump_k * total * total,
    }
}

/// Heat-exchanger effectiveness at valve opening `valve`.
pub fn hx_effectiveness(p: &Params, valve: f64) -> f64 {
    let valve = valve.clamp(0.0, 1.0);
    p.hx_max * (1.0 - (-p.hx_shape * valve).exp()) / (1.0 - (-p.hx_shape).exp())
}

/// Effectiveness of a plate's coolant channel at flow `q` (NTU method, constant wall
/// temperature).
pub fn plate_effectiveness(p: &Params, q: f64) -> f64 {
    1.0 - (-p.ua / (p.rho_cp * q)).exp()
}

/// Every derived quantity of the loop at one instant: what sensors would read, and more.
#[derive(Clone, Debug, PartialEq)]
pub struct Reading {
    /// The hydraulic operating point.
    pub flows: Flows,
    /// Base-plate temperatures, °C (latent).
    pub t_base: [f64; PLATES],
    /// Junction temperatures, °C (latent).
    pub t_junction: [f64; PLATES],
    /// Plate outlet temperatures, °C.
    pub t_out: [f64; PLATES],
    /// Heat passed from each plate into the coolant, W.
    pub q_plate: [f64; PLATES],
    /// Supply (tank) temperature, °C.
    pub t_supply: f64,
    /// Mixed return temperature, °C.
    pub t_return: f64,
    /// Heat-exchanger outlet temperature, °C.
    pub t_hx_out: f64,
    /// Heat removed by the heat exchanger, W.
    pub q_hx: f64,
    /// Electrical pump power, W.
    pub pump_power: f64,
}

/// What a reading takes from the inputs besides the heat loads: the hydraulic operating point,
/// each plate channel's effectiveness and the heat exchanger's.
#[derive(Debug)]
struct Operating {
    flows: Flows,
    plate_effectiveness: [f64; PLATES],
    hx_effectiveness: f64,
}

impl Operating {
    /// The operating point under inputs `u`.
    fn new(p: &Params, u: &Inputs) -> Operating {
        let flows = flows(p, u);
        Operating {
            plate_effectiveness: flows.plate.map(|q| plate_effectiveness(p, q)),
            hx_effectiveness: hx_effectiveness(p, u.valve),
            flows,
        }
    }
}

/// The inputs an operating point depends on, bit for bit.
type OperatingKey = [u64; PLATES + 3];

fn operating_key(u: &Inputs) -> OperatingKey {
    let mut key = [0; PLATES + 3];
    key[0] = u.speed.to_bits();
    key[1] = u.head.to_bits();
    key[2] = u.valve.to_bits();
    for (k, r) in key[3..].iter_mut().zip(u.resistance) {
        *k = r.to_bits();
    }
    key
}

/// The last operating point computed, with its inputs. An integration changes the pump,
/// valve and resistances far more rarely than it reads the loop (four times a step), and the
/// operating point costs a power and an exponential per plate, so a run that remembers it
/// computes it once per change, to the same bits.
#[derive(Debug, Default)]
pub struct LastOperating(RefCell<Option<(OperatingKey, Operating)>>);

impl LastOperating {
    /// The loop's readings in thermal state `x` under inputs `u`, as [`read`] gives them.
    pub fn read(&self, p: &Params, u: &Inputs, x: &[f64]) -> Reading {
        let key = operating_key(u);
        let mut last = self.0.borrow_mut();
        let op = match last.take() {
            Some((at, op)) if at == key => op,
            _ => Operating::new(p, u),
        };
        let reading = read_at(p, u, &op, x);
        *last = Some((key, op));
        reading
    }
}

/// The loop's readings in thermal state `x` under inputs `u`.
pub fn read(p: &Params, u: &Inputs, x: &[f64]) -> Reading {
    read_at(p, u, &Operating::new(p, u), x)
}

/// [`read`] at the operating point `op` of `u`.
fn read_at(p: &Params, u: &Inputs, op: &Operating, x: &[f64]) -> Reading {
    let flows = op.flows.clone();
    let t_supply = x[PLATES];
    let mut t_base = [0.0; PLATES];
    let mut t_out = [0.0; PLATES];
    let mut q_plate = [0.0; PLATES];
    let mut t_junction = [0.0; PLATES];
    for i in 0..PLATES {
        let capacity = p.rho_cp * flows.plate[i];
        let eff = op.plate_effectiveness[i];
        t_base[i] = x[i];
        q_plate[i] = eff * capacity * (x[i] - t_supply);
        t_out[i] = t_supply + eff * (x[i] - t_supply);
        t_junction[i] = x[i] + p.r_junction * u.power[i];
    }
    let loop_capacity = p.rho_cp * flows.total;
    let t_return = t_supply + q_plate.iter().sum::<f64>() / loop_capacity;
    let t_hx_out = t_return - op.hx_effectiveness * (t_return - p.t_facility);
    Reading {
        q_hx: loop_capacity * (t_return - t_hx_out),
        pump_power: flows.dp_pump * flows.total / p.pump_efficiency,
        flows,
        t_base,
        t_junction,
        t_out,
        q_plate,
        t_supply,
        t_return,
        t_hx_out,
    }
}

/// The time derivative of the thermal state, from its reading `r` under inputs `u`:
/// C_b·dT_b/dt = P − q for each plate and V·dT_s/dt = Q·(T_hx − T_s) for the tank.
fn derivative(r: &Reading, u: &Inputs, p: &Params, dx: &mut [f64]) {
    for ((d, power), q) in dx.iter_mut().zip(u.power).zip(r.q_plate) {
        *d = (power - q) / p.c_base;
    }
    dx[PLATES] = r.flows.total / p.tank_volume * (r.t_hx_out - r.t_supply);
}

/// The steady thermal state under constant inputs, solved directly: with D = ΣP/(ρc_pQ) the
/// loop's temperature rise, the tank settles at T_s = T_fw + D(1 − ε_hx)/ε_hx and each base
/// plate at T_s + P_i/(ε_i ρc_p Q_i).
pub fn steady_state(p: &Params, u: &Inputs) -> [f64; STATE_LEN] {
    let flows = flows(p, u);
    let rise = u.power.iter().sum::<f64>() / (p.rho_cp * flows.total);
    let eff_hx = hx_effectiveness(p, u.valve);
    let t_supply = p.t_facility + rise * (1.0 - eff_hx) / eff_hx;
    let mut x = [t_supply; STATE_LEN];
    for ((t_base, q), power) in x.iter_mut().zip(flows.plate).zip(u.power) {
        *t_base = t_supply + power / (plate_effectiveness(p, q) * p.rho_cp * q);
    }
    x
}

/// Integration step, s (RK4; ours, where the paper's twin uses adaptive dopri5 at 5 s output).
pub const STEP: f64 = 1.0;

/// Integrates the thermal state from `t0` for `steps` fixed RK4 steps of [`STEP`] seconds under
/// the time-varying `inputs`, calling `each` after every step with the new time and state.
pub fn integrate(
    p: &Params,
    x: &mut [f64; STATE_LEN],
    t0: f64,
    steps: usize,
    inputs: &dyn Fn(f64) -> Inputs,
    each: &mut dyn FnMut(f64, &[f64; STATE_LEN]),
) {
    let last = LastOperating::default();
    let rhs = |t: f64, state: &[f64], dx: &mut [f64]| {
        let u = inputs(t);
        derivative(&last.read(p, &u, state), &u, p, dx);
    };
    for k in 0..steps {
        let t = t0 + k as f64 * STEP;
        rk4_step(&rhs, t, x, STEP);
        each(t + STEP, x);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nominal() -> Inputs {
        let p = Params::default();
        Inputs {
            speed: 0.8,
            valve: 0.6,
            power: [12e3; PLATES],
            resistance: [p.r_plate; PLATES],
            head: p.head,
        }
    }

    #[test]
    fn the_nominal_point_is_the_briefs() {
        let p = Params::default();
        let u = nominal();
        let f = flows(&p, &u);
        // Q = 6.0·s L/s.
        assert!((f.total * 1e3 / u.speed - 6.0).abs() < 0.01, "{}", f.total);
        let r = read(&p, &u, &steady_state(&p, &u));
        assert!((r.t_supply - 31.0).abs() < 0.5, "T_s {}", r.t_supply);
        assert!((r.t_out[0] - 43.0).abs() < 0.5, "T_out {}", r.t_out[0]);
        assert!((r.t_base[0] - 46.0).abs() < 0.5, "T_b {}", r.t_base[0]);
    }

    #[test]
    fn plate_flows_add_up_and_share_one_pressure_drop() {
        let p = Params::default();
        let mut u = nominal();
        u.resistance[6] *= 8.0;
        let f = flows(&p, &u);
        let sum: f64 = f.plate.iter().sum();
        assert!((sum - f.total).abs() < 1e-15);
        let drops: Vec<f64> = (0..PLATES)
            .map(|i| u.resistance[i] * f.plate[i].powi(2))
            .collect();
        assert!(drops.iter().all(|d| (d - drops[0]).abs() < 1e-6 * drops[0]));
        // The pump curve and the system curve meet at the operating point.
        let system = (p.r_loop + drops[0] / f.total.powi(2)) * f.total.powi(2);
        assert!((f.dp_pump - system).abs() < 1e-6 * system);
        // A blocked plate passes 1/√8 of its neighbours' flow.
        assert!((f.plate[6] / f.plate[0] - 8f64.powf(-0.5)).abs() < 1e-12);
    }

    #[test]
    fn a_remembered_operating_point_reads_as_a_fresh_one_until_an_input_changes() {
        let p = Params::default();
        let last = LastOperating::default();
        let mut u = nominal();
        let x = steady_state(&p, &u);
        assert_eq!(last.read(&p, &u, &x), read(&p, &u, &x));
        // A new heat load leaves the operating point as it was.
        u.power[3] *= 1.5;
        assert_eq!(last.read(&p, &u, &x), read(&p, &u, &x));
        // Each input the point depends on is part of what it is remembered by.
        for change in 0..4 {
            match change {
                0 => u.speed *= 0.9,
                1 => u.head *= 1.1,
                2 => u.valve *= 0.5,
                _ => u.resistance[PLATES - 1] *= 2.0,
            }
            assert_eq!(last.read(&p, &u, &x), read(&p, &u, &x), "change {change}");
        }
    }
}
