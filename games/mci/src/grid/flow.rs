//! AC power flow on the 14-bus network: the bus admittance matrix, a polar Newton–Raphson
//! solve, and branch flows, currents and losses.
//!
//! The solve follows the textbook formulation (and MATPOWER's `runpf` defaults): a flat start
//! from the voltage setpoints, mismatch tolerance 10⁻⁸ pu, at most 20 iterations, and no
//! reactive-limit enforcement (the stored case14 solution is computed without it).

use super::case14::{BASE_MVA, BRANCHES, BUSES, BusType};
use crate::numeric::solve_dense;

/// Buses in the network.
pub const N_BUS: usize = 14;

/// Branches in the network.
pub const N_BRANCH: usize = 20;

/// Convergence tolerance on the largest power mismatch, pu.
pub const TOLERANCE: f64 = 1e-8;

/// Newton iterations allowed before the solve gives up.
pub const MAX_ITERATIONS: usize = 20;

/// A complex number, just what the admittance arithmetic needs.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Complex {
    /// Real part.
    pub re: f64,
    /// Imaginary part.
    pub im: f64,
}

impl Complex {
    /// `re + i·im`.
    pub const fn new(re: f64, im: f64) -> Self {
        Self { re, im }
    }

    /// The number of modulus `m` and argument `theta`.
    pub fn polar(m: f64, theta: f64) -> Self {
        Self::new(m * theta.cos(), m * theta.sin())
    }

    /// The modulus.
    pub fn abs(self) -> f64 {
        self.re.hypot(self.im)
    }

    /// The complex conjugate.
    pub fn conj(self) -> Self {
        Self::new(self.re, -self.im)
    }

    /// The reciprocal.
    pub fn inv(self) -> Self {
        let d = self.re * self.re + self.im * self.im;
        Self::new(self.re / d, -self.im / d)
    }
}

impl std::ops::Add for Complex {
    type Output = Complex;
    fn add(self, o: Complex) -> Complex {
        Complex::new(self.re + o.re, self.im + o.im)
    }
}

impl std::ops::Sub for Complex {
    type Output = Complex;
    fn sub(self, o: Complex) -> Complex {
        Complex::new(self.re - o.re, self.im - o.im)
    }
}

impl std::ops::Mul for Complex {
    type Output = Complex;
    fn mul(self, o: Complex) -> Complex {
        Complex::new(
            self.re * o.re - self.im * o.im,
            self.re * o.im + self.im * o.re,
        )
    }
}

impl std::ops::Mul<f64> for Complex {
    type Output = Complex;
    fn mul(self, k: f64) -> Complex {
        Complex::new(self.re * k, self.im * k)
    }
}

/// The operating conditions of one power-flow solve.
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    /// Active demand at each bus, MW.
    pub load_p: [f64; N_BUS],
    /// Reactive demand at each bus, MVAr.
    pub load_q: [f64; N_BUS],
    /// Active generation injected at each bus, MW; the slack bus's entry is ignored (the solve
    /// computes it).
    pub gen_p: [f64; N_BUS],
    /// Voltage setpoint of each generator bus (slack and PV), pu; ignored at load buses.
    pub v_set: [f64; N_BUS],
    /// Which branches are in service.
    pub in_service: [bool; N_BRANCH],
}

impl Case {
    /// The stored IEEE 14-bus case: its demand, dispatch and setpoints, every branch in service.
    pub fn ieee14() -> Self {
        let mut case = Case {
            load_p: BUSES.map(|b| b.pd),
            load_q: BUSES.map(|b| b.qd),
            gen_p: [0.0; N_BUS],
            v_set: BUSES.map(|b| b.vm),
            in_service: [true; N_BRANCH],
        };
        for g in super::case14::GENS {
            case.gen_p[g.bus - 1] += g.pg;
            case.v_set[g.bus - 1] = g.vg;
        }
        case
    }
}

/// The flow on one branch.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BranchFlow {
    /// Active power entering at the from end, MW.
    pub p_from: f64,
    /// Reactive power entering at the from end, MVAr.
    pub q_from: f64,
    /// Active power entering at the to end, MW.
    pub p_to: f64,
    /// Reactive power entering at the to end, MVAr.
    pub q_to: f64,
    /// Current magnitude at the from end, pu.
    pub i_from: f64,
    /// Current magnitude at the to end, pu.
    pub i_to: f64,
}

impl BranchFlow {
    /// The larger of the two end currents, pu: what a thermal limit is checked against.
    pub fn current(&self) -> f64 {
        self.i_from.max(self.i_to)
    }
}

/// A converged power flow.
#[derive(Clone, Debug, PartialEq)]
pub struct Solution {
    /// Voltage magnitudes, pu.
    pub vm: [f64; N_BUS],
    /// Voltage angles, radians (slack at 0).
    pub va: [f64; N_BUS],
    /// Active power of the slack generator, MW.
    pub slack_p: f64,
    /// Net reactive injection at each bus (generation minus demand), MVAr.
    pub q_inj: [f64; N_BUS],
    /// Branch flows; zero for branches out of service.
    pub branches: [BranchFlow; N_BRANCH],
    /// Total active losses, MW.
    pub losses: f64,
    /// Newton iterations used.
    pub iterations: usize,
}

/// Why a power flow has no solution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FlowError {
    /// Some buses are cut off from the slack bus (the listed bus numbers).
    Islanded(Vec<usize>),
    /// Newton–Raphson did not converge in [`MAX_ITERATIONS`] (voltage collapse or an
    /// infeasible operating point).
    Diverged,
}

impl std::fmt::Display for FlowError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FlowError::Islanded(buses) => write!(f, "buses {buses:?} are islanded"),
            FlowError::Diverged => write!(f, "the power flow does not converge"),
        }
    }
}

/// The π-model admittances of one branch: (Y_ff, Y_ft, Y_tf, Y_tt).
fn branch_admittance(index: usize) -> (Complex, Complex, Complex, Complex) {
    let br = BRANCHES[index];
    let ys = Complex::new(br.r, br.x).inv();
    let charging = Complex::new(0.0, br.b / 2.0);
    let tap = if br.ratio == 0.0 { 1.0 } else { br.ratio };
    (
        (ys + charging) * (1.0 / (tap * tap)),
        ys * (-1.0 / tap),
        ys * (-1.0 / tap),
        ys + charging,
    )
}

/// The bus admittance matrix with the given branches in service, row-major.
pub fn admittance(in_service: &[bool; N_BRANCH]) -> Vec<Complex> {
    let mut y = vec![Complex::default(); N_BUS * N_BUS];
    for (k, br) in BRANCHES.iter().enumerate() {
        if !in_service[k] {
            continue;
        }
        let (f, t) = (br.from - 1, br.to - 1);
        let (yff, yft, ytf, ytt) = branch_admittance(k);
        y[f * N_BUS + f] = y[f * N_BUS + f] + yff;
        y[f * N_BUS + t] = y[f * N_BUS + t] + yft;
        y[t * N_BUS + f] = y[t * N_BUS + f] + ytf;
        y[t * N_BUS + t] = y[t * N_BUS + t] + ytt;
    }
    for (i, b) in BUSES.iter().enumerate() {
        y[i * N_BUS + i] = y[i * N_BUS + i] + Complex::new(0.0, b.bs / BASE_MVA);
    }
    y
}

/// The buses not connected to the slack bus through in-service branches.
pub fn islanded(in_service: &[bool; N_BRANCH]) -> Vec<usize> {
    let mut reached = [false; N_BUS];
    reached[0] = true;
    let mut changed = true;
    while changed {
        changed = false;
        for (k, br) in BRANCHES.iter().enumerate() {
            let (f, t) = (br.from - 1, br.to - 1);
            if in_service[k] && reached[f] != reached[t] {
                reached[f] = true;
                reached[t] = true;
                changed = true;
            }
        }
    }
    (0..N_BUS).filter(|&i| !reached[i]).map(|i| i + 1).collect()
}

/// Solves the AC power flow of `case`.
pub fn solve(case: &Case) -> Result<Solution, FlowError> {
    let cut = islanded(&case.in_service);
    if !cut.is_empty() {
        return Err(FlowError::Islanded(cut));
    }
    let y = admittance(&case.in_service);
    let kinds = BUSES.map(|b| b.kind);
    let mut vm = [1.0; N_BUS];
    let mut va = [0.0; N_BUS];
    for i in 0..N_BUS {
        if kinds[i] != BusType::Pq {
            vm[i] = case.v_set[i];
        }
    }
    let p_spec: Vec<f64> = (0..N_BUS)
        .map(|i| (case.gen_p[i] - case.load_p[i]) / BASE_MVA)
        .collect();
    let q_spec: Vec<f64> = (0..N_BUS).map(|i| -case.load_q[i] / BASE_MVA).collect();
    // Unknowns: the angles of every non-slack bus, then the magnitudes of the load buses.
    let angle_buses: Vec<usize> = (0..N_BUS).filter(|&i| kinds[i] != BusType::Slack).collect();
    let magnitude_buses: Vec<usize> = (0..N_BUS).filter(|&i| kinds[i] == BusType::Pq).collect();
    let n = angle_buses.len() + magnitude_buses.len();

    for iteration in 0..=MAX_ITERATIONS {
        let (p, q) = injections(&y, &vm, &va);
        let mut mismatch: Vec<f64> = angle_buses
            .iter()
            .map(|&i| p_spec[i] - p[i])
            .chain(magnitude_buses.iter().map(|&i| q_spec[i] - q[i]))
            .collect();
        let worst = mismatch.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        if worst < TOLERANCE {
            return Ok(finish(case, &y, vm, va, iteration));
        }
        if iteration == MAX_ITERATIONS || !worst.is_finite() {
            break;
        }
        let mut jac = jacobian(&y, &vm, &va, &p, &q, &angle_buses, &magnitude_buses);
        solve_dense(&mut jac, &mut mismatch).ok_or(FlowError::Diverged)?;
        for (k, &i) in angle_buses.iter().enumerate() {
            va[i] += mismatch[k];
        }
        for (k, &i) in magnitude_buses.iter().enumerate() {
            vm[i] += mismatch[angle_buses.len() + k];
        }
        debug_assert_eq!(mismatch.len(), n);
    }
    Err(FlowError::Diverged)
}

/// Net injections P_i and Q_i (pu) at the voltages `vm ∠ va`.
fn injections(y: &[Complex], vm: &[f64; N_BUS], va: &[f64; N_BUS]) -> ([f64; N_BUS], [f64; N_BUS]) {
    let v: Vec<Complex> = (0..N_BUS).map(|i| Complex::polar(vm[i], va[i])).collect();
    let mut p = [0.0; N_BUS];
    let mut q = [0.0; N_BUS];
    for i in 0..N_BUS {
        let mut current = Complex::default();
        for k in 0..N_BUS {
            current = current + y[i * N_BUS + k] * v[k];
        }
        let s = v[i] * current.conj();
        p[i] = s.re;
        q[i] = s.im;
    }
    (p, q)
}

/// The power-flow Jacobian in the unknown order of [`solve`], row-major.
fn jacobian(
    y: &[Complex],
    vm: &[f64; N_BUS],
    va: &[f64; N_BUS],
    p: &[f64; N_BUS],
    q: &[f64; N_BUS],
    angle_buses: &[usize],
    magnitude_buses: &[usize],
) -> Vec<f64> {
    let n = angle_buses.len() + magnitude_buses.len();
    let mut jac = vec![0.0; n * n];
    // The cosine and sine of the angle difference of every pair of buses the Jacobian relates
    // (every bus but the slack has an angle unknown), each computed once: the four derivatives
    // of a pair share them, and they were most of the sweep's time.
    let mut trig = [(0.0, 0.0); N_BUS * N_BUS];
    for &i in angle_buses {
        for &k in angle_buses.iter().filter(|&&k| k != i) {
            let theta = va[i] - va[k];
            trig[i * N_BUS + k] = (theta.cos(), theta.sin());
        }
    }
    // ∂(P or Q at bus i)/∂(θ or |V| at bus k).
    let d = |i: usize, k: usize, reactive: bool, magnitude: bool| -> f64 {
        let (g, b) = (y[i * N_BUS + k].re, y[i * N_BUS + k].im);
        let (c, s) = trig[i * N_BUS + k];
        if i == k {
            match (reactive, magnitude) {
                (false, false) => -q[i] - b * vm[i] * vm[i],
                (false, true) => p[i] / vm[i] + g * vm[i],
                (true, false) => p[i] - g * vm[i] * vm[i],
                (true, true) => q[i] / vm[i] - b * vm[i],
            }
        } else {
            match (reactive, magnitude) {
                (false, false) => vm[i] * vm[k] * (g * s - b * c),
                (false, true) => vm[i] * (g * c + b * s),
                (true, false) => -vm[i] * vm[k] * (g * c + b * s),
                (true, true) => vm[i] * (g * s - b * c),
            }
        }
    };
    let rows = angle_buses
        .iter()
        .map(|&i| (i, false))
        .chain(magnitude_buses.iter().map(|&i| (i, true)));
    for (r, (i, reactive)) in rows.enumerate() {
        let cols = angle_buses
            .iter()
            .map(|&k| (k, false))
            .chain(magnitude_buses.iter().map(|&k| (k, true)));
        for (c, (k, magnitude)) in cols.enumerate() {
            jac[r * n + c] = d(i, k, reactive, magnitude);
        }
    }
    jac
}

/// The solution's derived quantities: slack power, reactive injections, branch flows, losses.
fn finish(
    case: &Case,
    y: &[Complex],
    vm: [f64; N_BUS],
    va: [f64; N_BUS],
    iterations: usize,
) -> Solution {
    let (p, q) = injections(y, &vm, &va);
    let v: Vec<Complex> = (0..N_BUS).map(|i| Complex::polar(vm[i], va[i])).collect();
    let mut branches = [BranchFlow::default(); N_BRANCH];
    for (k, br) in BRANCHES.iter().enumerate() {
        if !case.in_service[k] {
            continue;
        }
        let (f, t) = (br.from - 1, br.to - 1);
        let (yff, yft, ytf, ytt) = branch_admittance(k);
        let i_f = yff * v[f] + yft * v[t];
        let i_t = ytf * v[f] + ytt * v[t];
        let s_f = v[f] * i_f.conj() * BASE_MVA;
        let s_t = v[t] * i_t.conj() * BASE_MVA;
        branches[k] = BranchFlow {
            p_from: s_f.re,
            q_from: s_f.im,
            p_to: s_t.re,
            q_to: s_t.im,
            i_from: i_f.abs(),
            i_to: i_t.abs(),
        };
    }
    let slack_p = p[0] * BASE_MVA + case.load_p[0];
    let generation: f64 = slack_p + case.gen_p[1..].iter().sum::<f64>();
    Solution {
        vm,
        va,
        slack_p,
        q_inj: q.map(|x| x * BASE_MVA),
        branches,
        losses: generation - case.load_p.iter().sum::<f64>(),
        iterations,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stored_case_converges_quickly_and_losses_match_branch_sums() {
        let sol = solve(&Case::ieee14()).unwrap_or_else(|e| panic!("{e}"));
        assert!(sol.iterations <= 6, "{} iterations", sol.iterations);
        let branch_losses: f64 = sol.branches.iter().map(|b| b.p_from + b.p_to).sum();
        assert!(
            (branch_losses - sol.losses).abs() < 1e-6,
            "{branch_losses} vs {}",
            sol.losses
        );
    }

    #[test]
    fn a_radial_outage_islands_bus_8() {
        let mut case = Case::ieee14();
        case.in_service[13] = false;
        assert_eq!(solve(&case), Err(FlowError::Islanded(vec![8])));
    }
}
