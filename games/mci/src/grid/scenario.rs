//! The ten grid days (the paper's B.2 selection: two normal days, seven sustained overloads on
//! three bottleneck lines at increasing severity, one mid-day line trip), their injections, the
//! thermal limits, and the recorded telemetry.
//!
//! The paper draws its days from Grid2Op's 1,004 `l2rpn_case14_sandbox` chronics; we generate
//! ours (all parameters below are ours): every load follows
//! P_d0·(0.8 + 0.2·sin(2π(h − 9)/24))·(1 + 0.02·n) with n a standard normal drawn per load and
//! step from the day's stream, the generator at bus 2 follows the same daily shape, a 30 MW
//! solar unit at bus 6 (the sixth generator, not in case14) follows the sun, and the slack
//! takes the rest. Telemetry is exact, as Grid2Op's is.

use harness_runtime::RngStreams;

use super::case14::{BUSES, GENS};
use super::flow::{self, Case, FlowError, N_BRANCH, N_BUS, Solution};
use crate::numeric::gaussian;
use crate::telemetry::{SignalSpec, Telemetry};

/// Steps in a day.
pub const STEPS: usize = 288;

/// Minutes per step.
pub const STEP_MINUTES: i64 = 5;

/// The seed of the days' load-noise streams (ours, fixed).
const SEED: u64 = 0x4D43_495F_4752_4944;

/// Relative load noise (one standard deviation).
pub const LOAD_NOISE: f64 = 0.02;

/// Peak output of the solar unit at bus 6, MW.
pub const SOLAR_PEAK: f64 = 30.0;

/// The three bottleneck lines (0-based branch indices: L02 1–5, L03 2–3, L07 4–5). Their
/// limits are set so that a normal day peaks at ρ ≈ 0.85 on them.
pub const BOTTLENECKS: [usize; 3] = [1, 2, 6];

/// Normal-day peak loading of the bottleneck lines.
pub const BOTTLENECK_PEAK: f64 = 0.85;

/// Normal-day peak loading of every other line.
pub const OTHER_PEAK: f64 = 0.6;

/// The smallest thermal limit of any line, pu current: lines that carry little power still
/// have a standard rating, so a shifted flow does not overload them first.
pub const RATING_FLOOR: f64 = 0.3;

/// The line that trips on the `trip` day (L04, 2–4), and the step at which it trips (12:00).
pub const TRIP: (usize, usize) = (3, 144);

/// The generators of the game: case14's five (G1 the slack) and the solar unit G6 at bus 6.
pub const GEN_BUSES: [usize; 6] = [1, 2, 3, 6, 8, 6];

/// Upper active limits of the six generators, MW (case14's, and the solar unit's peak).
pub const GEN_PMAX: [f64; 6] = [332.4, 140.0, 100.0, 100.0, 100.0, SOLAR_PEAK];

/// Buses whose voltage no sensor measures (their `v.Bxx` column is hidden).
pub const UNSENSED: [usize; 3] = [7, 12, 14];

/// One day: its id, description, the loads it stresses (bus numbers) and by how much, the
/// solar unit's cloud factor, and whether L04 trips.
#[derive(Clone, Debug, PartialEq)]
pub struct Day {
    /// The day's id.
    pub id: &'static str,
    /// What happens on it.
    pub doc: &'static str,
    /// Buses whose loads the day scales by `stress` (a regional load pocket).
    pub stressed: &'static [usize],
    /// The regional load factor; calibrated so that the day's bottleneck peaks at the
    /// documented loading (see the `grid_days` test).
    pub stress: f64,
    /// The solar unit's output as a fraction of clear-sky.
    pub sun: f64,
    /// True on the day L04 trips at 12:00.
    pub trip: bool,
    /// The bus-2 generator's output as a fraction of its usual schedule (a partial outage).
    pub g2: f64,
    /// On an overload day, the bottleneck line (0-based) and the loading it peaks at.
    pub peak: Option<(usize, f64)>,
}

/// Every load bus: a day that stresses them all is a hot day.
const ALL: &[usize] = &[2, 3, 4, 5, 6, 9, 10, 11, 12, 13, 14];

/// The ten days, in a fixed order.
pub const DAYS: [Day; 10] = [
    Day {
        id: "normal-1",
        doc: "A normal clear day.",
        stressed: &[],
        stress: 1.0,
        sun: 1.0,
        trip: false,
        g2: 1.0,
        peak: None,
    },
    Day {
        id: "normal-2",
        doc: "A normal overcast day (solar at 50%).",
        stressed: &[],
        stress: 1.0,
        sun: 0.5,
        trip: false,
        g2: 1.0,
        peak: None,
    },
    Day {
        id: "overload-1",
        doc: "A hot day with G2 out: L02 (1-5) peaks at rho 1.00.",
        stressed: ALL,
        stress: 1.059154,
        sun: 1.0,
        trip: false,
        g2: 0.0,
        peak: Some((1, 1.00)),
    },
    Day {
        id: "overload-2",
        doc: "A load pocket at bus 3: L03 (2-3) peaks at rho 1.04.",
        stressed: &[3],
        stress: 1.245641,
        sun: 1.0,
        trip: false,
        g2: 1.0,
        peak: Some((2, 1.04)),
    },
    Day {
        id: "overload-3",
        doc: "A load pocket at bus 4: L07 (4-5) peaks at rho 1.08.",
        stressed: &[4],
        stress: 1.620045,
        sun: 1.0,
        trip: false,
        g2: 1.0,
        peak: Some((6, 1.08)),
    },
    Day {
        id: "overload-4",
        doc: "A hot hazy day with G2 out: L02 (1-5) peaks at rho 1.12.",
        stressed: ALL,
        stress: 1.172031,
        sun: 0.7,
        trip: false,
        g2: 0.0,
        peak: Some((1, 1.12)),
    },
    Day {
        id: "overload-5",
        doc: "A load pocket at bus 3, hazy: L03 (2-3) peaks at rho 1.16.",
        stressed: &[3],
        stress: 1.388643,
        sun: 0.7,
        trip: false,
        g2: 1.0,
        peak: Some((2, 1.16)),
    },
    Day {
        id: "overload-6",
        doc: "A load pocket at bus 4, hazy: L07 (4-5) peaks at rho 1.21.",
        stressed: &[4],
        stress: 2.024158,
        sun: 0.7,
        trip: false,
        g2: 1.0,
        peak: Some((6, 1.21)),
    },
    Day {
        id: "overload-7",
        doc: "A hot overcast day with G2 out: L02 (1-5) peaks at rho 1.26.",
        stressed: ALL,
        stress: 1.274387,
        sun: 0.5,
        trip: false,
        g2: 0.0,
        peak: Some((1, 1.26)),
    },
    Day {
        id: "trip",
        doc: "Loads at buses 3-4 run 20% high; L04 (2-4) trips at 12:00 and L07 takes its flow.",
        stressed: &[3, 4],
        stress: 1.2,
        sun: 1.0,
        trip: true,
        g2: 1.0,
        peak: None,
    },
];

/// The daily load shape at minute `t`: 0.6 at 03:00, 1.0 at 15:00.
pub fn load_shape(t: i64) -> f64 {
    let h = t as f64 / 60.0;
    0.8 + 0.2 * (std::f64::consts::TAU * (h - 9.0) / 24.0).sin()
}

/// Clear-sky solar output at minute `t`, as a fraction of the peak (06:00 to 18:00).
pub fn sun_shape(t: i64) -> f64 {
    let h = t as f64 / 60.0;
    (std::f64::consts::PI * (h - 6.0) / 12.0).sin().max(0.0)
}

/// Bus `b` (1-based) as its agent-facing name, `B07`.
pub fn bus_name(b: usize) -> String {
    format!("B{b:02}")
}

/// Branch `k` (0-based) as its agent-facing name, `L03`.
pub fn line_name(k: usize) -> String {
    format!("L{:02}", k + 1)
}

impl Day {
    /// The day called `id`.
    pub fn new(id: &str) -> Option<Day> {
        DAYS.iter().find(|d| d.id == id).cloned()
    }

    /// The operating point at step `step`, before any intervention: loads, dispatch and
    /// branch status.
    pub fn point_at(&self, step: usize, noise: &[[f64; N_BUS]]) -> Point {
        let t = step as i64 * STEP_MINUTES;
        let shape = load_shape(t);
        let mut case = Case::ieee14();
        for (i, bus) in BUSES.iter().enumerate() {
            let pocket = if self.stressed.contains(&bus.id) {
                self.stress
            } else {
                1.0
            };
            let factor = shape * pocket * (1.0 + LOAD_NOISE * noise[step][i]);
            case.load_p[i] = bus.pd * factor;
            case.load_q[i] = bus.qd * factor;
        }
        if self.trip && step >= TRIP.1 {
            case.in_service[TRIP.0] = false;
        }
        let mut gens = [0.0; 6];
        gens[1] = GENS[1].pg * shape * self.g2;
        gens[5] = SOLAR_PEAK * self.sun * sun_shape(t);
        Point { case, gens }
    }

    /// The day's load noise: one standard normal per step and bus, from the day's stream.
    pub fn noise(&self) -> Vec<[f64; N_BUS]> {
        let mut stream = RngStreams::new(SEED).stream(&format!("grid.loads.{}", self.id));
        (0..STEPS)
            .map(|_| std::array::from_fn(|_| gaussian(&mut stream)))
            .collect()
    }

    /// The power flow at every step of the day.
    pub fn simulate(&self) -> Result<Vec<(Point, Solution)>, FlowError> {
        let noise = self.noise();
        (0..STEPS)
            .map(|step| {
                let point = self.point_at(step, &noise);
                point.solve().map(|sol| (point, sol))
            })
            .collect()
    }
}

/// An operating point: the network case and the dispatch of the six generators (MW; the
/// slack's entry is ignored, the solve computes it).
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    /// Loads, setpoints and branch status; its `gen_p` is filled from `gens` by [`Point::solve`].
    pub case: Case,
    /// Dispatch of G1..G6, MW.
    pub gens: [f64; 6],
}

impl Point {
    /// Solves the AC power flow at this point.
    pub fn solve(&self) -> Result<Solution, FlowError> {
        let mut case = self.case.clone();
        case.gen_p = [0.0; N_BUS];
        for (g, &bus) in GEN_BUSES.iter().enumerate().skip(1) {
            case.gen_p[bus - 1] += self.gens[g];
        }
        flow::solve(&case)
    }

    /// The output of generator `g` (0-based) once solved, MW.
    pub fn gen_output(&self, g: usize, sol: &Solution) -> f64 {
        if g == 0 { sol.slack_p } else { self.gens[g] }
    }
}

/// The thermal limits of the 20 branches, pu current: each branch's peak current over the
/// noise-free normal day, divided by its design peak loading ([`BOTTLENECK_PEAK`] for the
/// bottlenecks, [`OTHER_PEAK`] otherwise).
pub fn limits() -> [f64; N_BRANCH] {
    let base = DAYS[0].clone();
    let zero = vec![[0.0; N_BUS]; STEPS];
    let mut peak = [0.0f64; N_BRANCH];
    for step in 0..STEPS {
        // The normal day always converges; a failure would leave that step out.
        if let Ok(sol) = base.point_at(step, &zero).solve() {
            for (k, b) in sol.branches.iter().enumerate() {
                peak[k] = peak[k].max(b.current());
            }
        }
    }
    std::array::from_fn(|k| {
        let design = if BOTTLENECKS.contains(&k) {
            BOTTLENECK_PEAK
        } else {
            OTHER_PEAK
        };
        (peak[k] / design).max(RATING_FLOOR)
    })
}

/// The signals of the grid telemetry, visible families first.
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
    for k in 0..N_BRANCH {
        let l = line_name(k);
        add(
            format!("rho.{l}"),
            "frac",
            false,
            format!("Loading of line {l}: current over its limit."),
        );
        add(
            format!("p.{l}"),
            "MW",
            false,
            format!("Active flow on line {l}, from end."),
        );
        add(
            format!("status.{l}"),
            "bool",
            false,
            format!("1 when line {l} is in service."),
        );
    }
    for b in 1..=N_BUS {
        if !UNSENSED.contains(&b) {
            let n = bus_name(b);
            add(
                format!("v.{n}"),
                "pu",
                false,
                format!("Voltage magnitude at bus {n}."),
            );
        }
    }
    for g in 0..GEN_BUSES.len() {
        add(
            format!("gen.G{}", g + 1),
            "MW",
            false,
            format!("Active output of generator G{}.", g + 1),
        );
    }
    for bus in BUSES.iter().filter(|b| b.pd > 0.0) {
        let n = bus_name(bus.id);
        add(
            format!("load.{n}"),
            "MW",
            false,
            format!("Active demand at bus {n}."),
        );
    }
    add(
        "losses".into(),
        "MW",
        true,
        "Total active network losses.".into(),
    );
    for &b in &UNSENSED {
        let n = bus_name(b);
        add(
            format!("v.{n}"),
            "pu",
            true,
            format!("Voltage magnitude at unsensed bus {n}."),
        );
    }
    for b in 1..=N_BUS {
        let n = bus_name(b);
        add(
            format!("theta.{n}"),
            "deg",
            true,
            format!("Voltage angle at bus {n}."),
        );
    }
    out
}

/// One row of telemetry: the value of every signal of [`signals`] for a solved case.
pub fn row(
    specs: &[SignalSpec],
    point: &Point,
    sol: &Solution,
    limits: &[f64; N_BRANCH],
) -> Vec<f64> {
    specs
        .iter()
        .map(|spec| {
            let (family, target) = spec.name.split_once('.').unwrap_or((&spec.name, ""));
            // Targets are `L03`, `B07` or `G2`; `losses` has none.
            let index = target
                .get(1..)
                .and_then(|n| n.parse::<usize>().ok())
                .unwrap_or(1);
            match family {
                "rho" => sol.branches[index - 1].current() / limits[index - 1],
                "p" => sol.branches[index - 1].p_from,
                "status" => f64::from(u8::from(point.case.in_service[index - 1])),
                "v" => sol.vm[index - 1],
                "theta" => sol.va[index - 1].to_degrees(),
                "gen" => point.gen_output(index - 1, sol),
                "load" => point.case.load_p[index - 1],
                _ => sol.losses,
            }
        })
        .collect()
}

/// Records a simulated day as telemetry, one sample per step, times in minutes.
pub fn record(steps: &[(Point, Solution)], limits: &[f64; N_BRANCH]) -> Telemetry {
    let times = (0..steps.len() as i64).map(|s| s * STEP_MINUTES).collect();
    let mut table = Telemetry::new(times, signals());
    for (point, sol) in steps {
        for (column, v) in table
            .values
            .iter_mut()
            .zip(row(&table.signals, point, sol, limits))
        {
            column.push(v);
        }
    }
    table
}
