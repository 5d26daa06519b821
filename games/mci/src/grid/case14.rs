//! The IEEE 14-bus test case.
//!
//! Source: the IEEE Common Data Format file `ieee14cdf.txt` of the University of Washington
//! Power Systems Test Case Archive (<https://labs.ece.uw.edu/pstca/>), as converted to
//! MATPOWER's `data/case14.m` (MATPOWER, <https://matpower.org>; the case files carry public
//! test data, not MATPOWER code). Transcribed by hand: bus, generator and branch tables, and
//! the stored power-flow solution (the `Vm`/`Va` columns) that the validation test compares
//! against. Per unit on a 100 MVA base.

/// The system base, MVA.
pub const BASE_MVA: f64 = 100.0;

/// Bus types, as in the CDF/MATPOWER convention.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BusType {
    /// A load bus: P and Q given.
    Pq,
    /// A generator bus: P and |V| given.
    Pv,
    /// The slack bus: |V| and θ given.
    Slack,
}

/// One bus row: number, type, demand (MW, MVAr), shunt susceptance (MVAr at 1 pu), and the
/// stored solution (|V| in pu, θ in degrees).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bus {
    /// The bus number, 1-based.
    pub id: usize,
    /// Its type.
    pub kind: BusType,
    /// Active demand, MW.
    pub pd: f64,
    /// Reactive demand, MVAr.
    pub qd: f64,
    /// Shunt susceptance, MVAr injected at 1 pu.
    pub bs: f64,
    /// The stored solution's voltage magnitude, pu.
    pub vm: f64,
    /// The stored solution's voltage angle, degrees.
    pub va: f64,
}

/// One generator row: bus, dispatch (MW), voltage setpoint (pu) and active limits (MW).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Gen {
    /// The bus it feeds.
    pub bus: usize,
    /// Active dispatch in the stored case, MW.
    pub pg: f64,
    /// Voltage setpoint, pu.
    pub vg: f64,
    /// Upper active limit, MW.
    pub pmax: f64,
    /// Lower active limit, MW.
    pub pmin: f64,
}

/// One branch row: endpoints, series impedance and total charging (pu), off-nominal tap ratio
/// (0 for a line).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Branch {
    /// The from bus.
    pub from: usize,
    /// The to bus.
    pub to: usize,
    /// Series resistance, pu.
    pub r: f64,
    /// Series reactance, pu.
    pub x: f64,
    /// Total line charging susceptance, pu.
    pub b: f64,
    /// Transformer tap ratio at the from side; 0 means a line (ratio 1).
    pub ratio: f64,
}

const fn bus(id: usize, kind: BusType, pd: f64, qd: f64, bs: f64, vm: f64, va: f64) -> Bus {
    Bus {
        id,
        kind,
        pd,
        qd,
        bs,
        vm,
        va,
    }
}

const fn branch(from: usize, to: usize, r: f64, x: f64, b: f64, ratio: f64) -> Branch {
    Branch {
        from,
        to,
        r,
        x,
        b,
        ratio,
    }
}

use BusType::{Pq, Pv, Slack};

/// The 14 buses.
pub const BUSES: [Bus; 14] = [
    bus(1, Slack, 0.0, 0.0, 0.0, 1.06, 0.0),
    bus(2, Pv, 21.7, 12.7, 0.0, 1.045, -4.98),
    bus(3, Pv, 94.2, 19.0, 0.0, 1.01, -12.72),
    bus(4, Pq, 47.8, -3.9, 0.0, 1.019, -10.33),
    bus(5, Pq, 7.6, 1.6, 0.0, 1.02, -8.78),
    bus(6, Pv, 11.2, 7.5, 0.0, 1.07, -14.22),
    bus(7, Pq, 0.0, 0.0, 0.0, 1.062, -13.37),
    bus(8, Pv, 0.0, 0.0, 0.0, 1.09, -13.36),
    bus(9, Pq, 29.5, 16.6, 19.0, 1.056, -14.94),
    bus(10, Pq, 9.0, 5.8, 0.0, 1.051, -15.1),
    bus(11, Pq, 3.5, 1.8, 0.0, 1.057, -14.79),
    bus(12, Pq, 6.1, 1.6, 0.0, 1.055, -15.07),
    bus(13, Pq, 13.5, 5.8, 0.0, 1.05, -15.16),
    bus(14, Pq, 14.9, 5.0, 0.0, 1.036, -16.04),
];

/// The five generators of the case (the slack at bus 1, a unit at bus 2, and synchronous
/// condensers at buses 3, 6 and 8).
pub const GENS: [Gen; 5] = [
    Gen {
        bus: 1,
        pg: 232.4,
        vg: 1.06,
        pmax: 332.4,
        pmin: 0.0,
    },
    Gen {
        bus: 2,
        pg: 40.0,
        vg: 1.045,
        pmax: 140.0,
        pmin: 0.0,
    },
    Gen {
        bus: 3,
        pg: 0.0,
        vg: 1.01,
        pmax: 100.0,
        pmin: 0.0,
    },
    Gen {
        bus: 6,
        pg: 0.0,
        vg: 1.07,
        pmax: 100.0,
        pmin: 0.0,
    },
    Gen {
        bus: 8,
        pg: 0.0,
        vg: 1.09,
        pmax: 100.0,
        pmin: 0.0,
    },
];

/// The 20 branches, in the case's order (lines `L01`..`L20`).
pub const BRANCHES: [Branch; 20] = [
    branch(1, 2, 0.01938, 0.05917, 0.0528, 0.0),
    branch(1, 5, 0.05403, 0.22304, 0.0492, 0.0),
    branch(2, 3, 0.04699, 0.19797, 0.0438, 0.0),
    branch(2, 4, 0.05811, 0.17632, 0.034, 0.0),
    branch(2, 5, 0.05695, 0.17388, 0.0346, 0.0),
    branch(3, 4, 0.06701, 0.17103, 0.0128, 0.0),
    branch(4, 5, 0.01335, 0.04211, 0.0, 0.0),
    branch(4, 7, 0.0, 0.20912, 0.0, 0.978),
    branch(4, 9, 0.0, 0.55618, 0.0, 0.969),
    branch(5, 6, 0.0, 0.25202, 0.0, 0.932),
    branch(6, 11, 0.09498, 0.1989, 0.0, 0.0),
    branch(6, 12, 0.12291, 0.25581, 0.0, 0.0),
    branch(6, 13, 0.06615, 0.13027, 0.0, 0.0),
    branch(7, 8, 0.0, 0.17615, 0.0, 0.0),
    branch(7, 9, 0.0, 0.11001, 0.0, 0.0),
    branch(9, 10, 0.03181, 0.0845, 0.0, 0.0),
    branch(9, 14, 0.12711, 0.27038, 0.0, 0.0),
    branch(10, 11, 0.08205, 0.19207, 0.0, 0.0),
    branch(12, 13, 0.22092, 0.19988, 0.0, 0.0),
    branch(13, 14, 0.17093, 0.34802, 0.0, 0.0),
];
