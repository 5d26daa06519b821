//! Small numerical tools shared by the two simulators: a fixed-step RK4 integrator, Gaussian
//! draws from a runtime stream, dense linear solves and a bisection root finder.

use harness_runtime::Stream;

/// The right-hand side of `dx/dt = f(t, x)`: writes the derivative at `(t, x)` into its third
/// argument.
pub type Derivative<'a> = &'a dyn Fn(f64, &[f64], &mut [f64]);

/// One classical fourth-order Runge–Kutta step of `dx/dt = f(t, x)` from `t` to `t + h`.
/// The step allocates its
/// four stage vectors once per call; the state vectors here are 21 numbers long.
pub fn rk4_step(f: Derivative<'_>, t: f64, x: &mut [f64], h: f64) {
    let n = x.len();
    let mut k1 = vec![0.0; n];
    let mut k2 = vec![0.0; n];
    let mut k3 = vec![0.0; n];
    let mut k4 = vec![0.0; n];
    let mut stage = vec![0.0; n];
    f(t, x, &mut k1);
    for i in 0..n {
        stage[i] = x[i] + 0.5 * h * k1[i];
    }
    f(t + 0.5 * h, &stage, &mut k2);
    for i in 0..n {
        stage[i] = x[i] + 0.5 * h * k2[i];
    }
    f(t + 0.5 * h, &stage, &mut k3);
    for i in 0..n {
        stage[i] = x[i] + h * k3[i];
    }
    f(t + h, &stage, &mut k4);
    for i in 0..n {
        x[i] += h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
    }
}

/// A standard normal draw (Box–Muller, one of the pair), from `stream` only.
pub fn gaussian(stream: &mut Stream) -> f64 {
    // `1 - u` lies in (0, 1], so the logarithm is finite.
    let u = 1.0 - stream.next_f64();
    let v = stream.next_f64();
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// Solves the dense system `a x = b` in place by Gaussian elimination with partial pivoting;
/// `a` is row-major `n × n`. Returns `None` when the matrix is singular to working precision.
pub fn solve_dense(a: &mut [f64], b: &mut [f64]) -> Option<()> {
    let n = b.len();
    for col in 0..n {
        let pivot =
            (col..n).max_by(|&i, &j| a[i * n + col].abs().total_cmp(&a[j * n + col].abs()))?;
        if a[pivot * n + col].abs() < 1e-14 {
            return None;
        }
        if pivot != col {
            for k in 0..n {
                a.swap(pivot * n + k, col * n + k);
            }
            b.swap(pivot, col);
        }
        let diag = a[col * n + col];
        for row in col + 1..n {
            let factor = a[row * n + col] / diag;
            if factor == 0.0 {
                continue;
            }
            for k in col..n {
                a[row * n + k] -= factor * a[col * n + k];
            }
            b[row] -= factor * b[col];
        }
    }
    for row in (0..n).rev() {
        let mut sum = b[row];
        for k in row + 1..n {
            sum -= a[row * n + k] * b[k];
        }
        b[row] = sum / a[row * n + row];
    }
    Some(())
}

/// The smallest `x` in `[lo, hi]` with `ok(x)`, to within `tol`, for a predicate that is false
/// below some threshold and true above it. `None` when even `hi` fails; `lo` when it passes.
pub fn lowest_passing(lo: f64, hi: f64, tol: f64, ok: &dyn Fn(f64) -> bool) -> Option<f64> {
    if ok(lo) {
        return Some(lo);
    }
    if !ok(hi) {
        return None;
    }
    let (mut fail, mut pass) = (lo, hi);
    while pass - fail > tol {
        let mid = 0.5 * (fail + pass);
        if ok(mid) {
            pass = mid;
        } else {
            fail = mid;
        }
    }
    Some(pass)
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness_runtime::RngStreams;

    #[test]
    fn rk4_matches_an_exponential_decay() {
        let f = |_: f64, x: &[f64], dx: &mut [f64]| dx[0] = -x[0] / 10.0;
        let mut x = [1.0];
        for step in 0..100 {
            rk4_step(&f, f64::from(step), &mut x, 1.0);
        }
        assert!((x[0] - (-10.0f64).exp()).abs() < 1e-8, "{}", x[0]);
    }

    #[test]
    fn gaussian_draws_have_unit_variance() {
        let mut s = RngStreams::new(5).stream("test");
        let draws: Vec<f64> = (0..20_000).map(|_| gaussian(&mut s)).collect();
        let mean = draws.iter().sum::<f64>() / draws.len() as f64;
        let var = draws.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / draws.len() as f64;
        assert!(mean.abs() < 0.03, "{mean}");
        assert!((var - 1.0).abs() < 0.04, "{var}");
    }

    #[test]
    fn dense_solve_recovers_a_known_solution() {
        let mut a = vec![2.0, 1.0, -1.0, -3.0, -1.0, 2.0, -2.0, 1.0, 2.0];
        let mut b = vec![8.0, -11.0, -3.0];
        solve_dense(&mut a, &mut b).unwrap_or_else(|| panic!("singular"));
        for (x, want) in b.iter().zip([2.0, 3.0, -1.0]) {
            assert!((x - want).abs() < 1e-12);
        }
        let mut singular = vec![1.0, 2.0, 2.0, 4.0];
        assert!(solve_dense(&mut singular, &mut [1.0, 2.0]).is_none());
    }

    #[test]
    fn bisection_finds_the_threshold() {
        let x = lowest_passing(0.0, 1.0, 1e-9, &|x| x >= 0.3).unwrap_or(f64::NAN);
        assert!((x - 0.3).abs() < 1e-8);
        assert_eq!(lowest_passing(0.0, 1.0, 1e-9, &|_| true), Some(0.0));
        assert_eq!(lowest_passing(0.0, 1.0, 1e-9, &|_| false), None);
    }
}
