//! Physics validation of both simulators: energy closure and integration accuracy of the
//! cooling loop, and the IEEE 14-bus base case against its published solution.

use harness_mci::cooling::plant::{self, Inputs, PLATES, Params};
use harness_mci::grid::case14::BUSES;
use harness_mci::grid::flow::{Case, solve};

fn nominal(p: &Params) -> Inputs {
    Inputs {
        speed: 0.8,
        valve: 0.6,
        power: std::array::from_fn(|i| 10e3 + 250.0 * i as f64),
        resistance: std::array::from_fn(|i| p.r_plate * if i == 6 { 8.0 } else { 1.0 }),
        head: p.head,
    }
}

#[test]
fn the_integrated_cooling_steady_state_closes_energy_and_matches_the_direct_solve() {
    let p = Params::default();
    let u = nominal(&p);
    // Start 8 K away from equilibrium everywhere and integrate for an hour (τ ≈ 75 s).
    let direct = plant::steady_state(&p, &u);
    let mut x = direct.map(|t| t + 8.0);
    plant::integrate(&p, &mut x, 0.0, 3600, &|_| u.clone(), &mut |_, _| {});
    for (a, b) in x.iter().zip(direct) {
        assert!((a - b).abs() < 1e-6, "integrated {a} vs direct {b}");
    }
    let r = plant::read(&p, &u, &x);
    let load: f64 = u.power.iter().sum();
    assert!(
        (load - r.q_hx).abs() / load < 1e-3,
        "load {load} W, removed {} W",
        r.q_hx
    );
    let absorbed: f64 = r.q_plate.iter().sum();
    assert!((load - absorbed).abs() / load < 1e-3);
}

#[test]
fn rk4_tracks_the_analytic_first_order_lag_of_a_plate() {
    // With an infinite tank the supply temperature is constant, and each base plate is a
    // first-order lag: T_b(t) = T_∞ + (T_b(0) − T_∞)·e^{−t/τ}, τ = C_b/(ε ρc_p Q_i).
    let p = Params {
        tank_volume: f64::INFINITY,
        ..Params::default()
    };
    let u = nominal(&p);
    // Everything starts at the (fixed) supply temperature.
    let mut x = [30.0; plant::STATE_LEN];
    let x0 = x;
    plant::integrate(&p, &mut x, 0.0, 300, &|_| u.clone(), &mut |_, _| {});
    let flows = plant::flows(&p, &u);
    for i in 0..PLATES {
        let conductance =
            plant::plate_effectiveness(&p, flows.plate[i]) * p.rho_cp * flows.plate[i];
        let tau = p.c_base / conductance;
        let t_inf = 30.0 + u.power[i] / conductance;
        let exact = t_inf + (x0[i] - t_inf) * (-300.0 / tau).exp();
        assert!(
            (x[i] - exact).abs() < 1e-6,
            "plate {i}: {} vs {exact}",
            x[i]
        );
    }
}

#[test]
fn loop_flow_is_proportional_to_pump_speed() {
    let p = Params::default();
    let mut u = nominal(&p);
    u.speed = 1.0;
    let full = plant::flows(&p, &u).total;
    for k in 0..=14 {
        u.speed = 0.3 + 0.05 * f64::from(k);
        let q = plant::flows(&p, &u).total;
        assert!(
            (q / u.speed - full).abs() / full < 1e-6,
            "speed {}: {q}",
            u.speed
        );
    }
}

#[test]
fn the_ieee14_base_case_matches_its_published_solution() {
    let sol = solve(&Case::ieee14()).unwrap_or_else(|e| panic!("{e}"));
    for (i, bus) in BUSES.iter().enumerate() {
        let va = sol.va[i].to_degrees();
        assert!(
            (sol.vm[i] - bus.vm).abs() <= 0.002,
            "bus {}: |V| {} vs {}",
            bus.id,
            sol.vm[i],
            bus.vm
        );
        assert!(
            (va - bus.va).abs() <= 0.1,
            "bus {}: θ {va} vs {}",
            bus.id,
            bus.va
        );
    }
    assert!((sol.vm[13] - 1.036).abs() <= 0.002 && (sol.va[13].to_degrees() + 16.04).abs() <= 0.1);
    assert!(
        (sol.slack_p - 232.4).abs() <= 0.5,
        "slack {} MW",
        sol.slack_p
    );
    assert!((sol.losses - 13.4).abs() <= 0.2, "losses {} MW", sol.losses);
}

#[test]
fn grid_days_peak_where_their_descriptions_say() {
    use harness_mci::grid::oracle::{max_loading, recorded};
    use harness_mci::grid::scenario::{DAYS, TRIP};
    for day in DAYS {
        let rec = recorded(day.id).unwrap_or_else(|| panic!("{} does not converge", day.id));
        let peak = |steps: std::ops::Range<usize>| {
            steps
                .map(|s| max_loading(&rec.steps[s].1))
                .fold(0.0, f64::max)
        };
        match day.peak {
            Some((line, rho)) => {
                let worst = rec.steps.iter().map(|(_, sol)| {
                    let r = harness_mci::grid::oracle::loadings(sol);
                    (r[line], r.iter().cloned().fold(0.0, f64::max))
                });
                let (line_peak, day_peak) =
                    worst.fold((0.0f64, 0.0f64), |(a, b), (x, y)| (a.max(x), b.max(y)));
                assert!(
                    (line_peak - rho).abs() < 0.005,
                    "{}: peak {line_peak} vs {rho}",
                    day.id
                );
                assert!(
                    (day_peak - line_peak).abs() < 1e-12,
                    "{}: another line is worse",
                    day.id
                );
            }
            None if day.trip => {
                assert!(
                    peak(0..TRIP.1) < 1.0,
                    "{} overloads before the trip",
                    day.id
                );
                assert!(
                    peak(TRIP.1..rec.steps.len()) > 1.5,
                    "{}: the trip overloads L07",
                    day.id
                );
            }
            None => assert!(peak(0..rec.steps.len()) < 0.95, "{} overloads", day.id),
        }
    }
}

#[test]
fn dc_sensitivities_predict_the_ac_response_to_redispatch() {
    use harness_mci::grid::knowledge::ptdf;
    use harness_mci::grid::oracle::recorded;
    let rec = recorded("overload-4").unwrap_or_else(|| panic!("no day"));
    let point = rec.point(900).clone();
    let base = point.solve().unwrap_or_else(|e| panic!("{e}"));
    let mut moved = point.clone();
    moved.gens[2] += 10.0; // G3 at bus 3
    let after = moved.solve().unwrap_or_else(|e| panic!("{e}"));
    let factors = ptdf(&point.case.in_service);
    for line in [1usize, 2, 6] {
        let ac = after.branches[line].p_from - base.branches[line].p_from;
        let dc = 10.0 * factors[line][2];
        assert!(
            (ac - dc).abs() < 0.2 * dc.abs() + 0.3,
            "L{:02}: AC {ac} MW vs DC {dc} MW",
            line + 1
        );
    }
}
