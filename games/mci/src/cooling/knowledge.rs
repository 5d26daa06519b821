//! What the cooling harness levels K2 and K4 hand the agent: the operating manual (design
//! point, limits, rules of thumb) and the physical model (parameters and governing equations).
//! Both are static: they describe the design, not the current (possibly faulty) plant.

use super::plant::{self, Inputs, PLATES, Params};
use crate::knowledge::Doc;

/// The manual's topics.
pub const MANUAL_TOPICS: [&str; 4] = ["index", "limits", "design", "rules"];

/// The model's components.
pub const MODEL_COMPONENTS: [&str; 5] = ["topology", "pump", "plates", "loop", "exchanger"];

/// The design operating point: pump 0.8, valve 0.6, 12 kW on every plate, clean plates.
fn design_inputs(p: &Params) -> Inputs {
    Inputs {
        speed: 0.8,
        valve: 0.6,
        power: [12e3; PLATES],
        resistance: [p.r_plate; PLATES],
        head: p.head,
    }
}

/// A manual topic (K2).
pub fn manual(topic: &str) -> Option<Doc> {
    let p = Params::default();
    let u = design_inputs(&p);
    let r = plant::read(&p, &u, &plant::steady_state(&p, &u));
    let doc = match topic {
        "index" => Doc::text(
            "CDU-1 operating manual. Topics: `limits` (operating limits), `design` (the design \
             operating point), `rules` (rules of thumb and standard procedures).",
        ),
        "limits" => Doc::text(
            "Operating limits. Plate outlet temperature: at most 45 degC. Base-plate \
             temperature: at most 65 degC. Pump speed: 0.30 to 1.00 of full speed. Facility \
             valve: 0 (closed) to 1 (open). Plate loads may be capped down to 0 kW.",
        )
        .with("t_out_limit", p.t_out_limit)
        .with("t_base_limit", p.t_base_limit)
        .with("speed_min", p.speed_range.0)
        .with("speed_max", p.speed_range.1),
        "design" => Doc::text(
            "Design point: 10 racks of 2 cold plates (plates 01-20; rack r holds plates 2r-1 \
             and 2r), pump at 0.80, facility valve at 0.60, 12 kW per plate, facility water \
             at 24 degC. At the design point the loop carries the design flow, each plate an \
             equal share, and the temperatures below hold at steady state.",
        )
        .with("speed", u.speed)
        .with("valve", u.valve)
        .with("plate_power_kw", 12.0)
        .with("flow_loop", r.flows.total * 1e3)
        .with("flow_plate", r.flows.plate[0] * 1e3)
        .with("dp_pump_kpa", r.flows.dp_pump / 1e3)
        .with("pump_head_kpa", p.head / 1e3)
        .with("t_supply", r.t_supply)
        .with("t_out", r.t_out[0])
        .with("t_base", r.t_base[0])
        .with("t_junction", r.t_junction[0])
        .with("t_facility", p.t_facility),
        "rules" => Doc::text(
            "Rules of thumb. (1) A plate's outlet rises above the supply by about 1.0 K per kW \
             of load at the design flow; the rise scales inversely with flow. (2) A base plate \
             runs about 3.5 K above its outlet at the design flow and load (more at higher \
             load, less at lower flow). (3) A junction runs 1.67 K per kW above its base \
             plate. (4) Loop flow is proportional to pump speed; pump power to its cube. \
             (5) Opening the facility valve lowers the supply temperature; the effect \
             saturates above about 0.8. (6) A plate whose outlet runs far hotter than its \
             rack neighbour at a similar load has a fouled channel. (7) Falling loop flow and \
             pump pressure at a constant speed mean pump wear. (8) Plates settle with a time \
             constant of about 75 s; the supply tank with about 60 s.",
        )
        .with("outlet_rise_per_kw", (r.t_out[0] - r.t_supply) / 12.0)
        .with("base_over_outlet", r.t_base[0] - r.t_out[0])
        .with("junction_per_kw", p.r_junction * 1e3)
        .with("plate_time_constant_s", 75.0)
        .with("tank_time_constant_s", 60.0),
        _ => return None,
    };
    Some(doc)
}

/// A model component (K4): parameters and governing equations of the design model.
pub fn model(component: &str) -> Option<Doc> {
    let p = Params::default();
    let doc = match component {
        "topology" => Doc::text(
            "Topology: pump -> supply header -> 20 cold plates in parallel (plates 01-20, two \
             per rack) -> return header -> loop resistance -> facility heat exchanger -> \
             supply tank -> pump. All plates share one manifold pressure drop.",
        )
        .with("plates", PLATES as f64)
        .with("racks", (PLATES / 2) as f64),
        "pump" => Doc::text(
            "Pump curve: dp = s^2 * H0 - k * Q^2 (dp in Pa, Q in m3/s, s the speed). Power = \
             dp * Q / eta. H0 is the design shut-off head at full speed.",
        )
        .with("h0_pa", p.head)
        .with("k", p.pump_k)
        .with("efficiency", p.pump_efficiency),
        "plates" => Doc::text(
            "Cold plate i: hydraulic drop R_i * Q_i^2. Heat to coolant q_i = eps_i * rho_cp * \
             Q_i * (T_base_i - T_supply), eps_i = 1 - exp(-UA / (rho_cp * Q_i)). Outlet \
             T_out_i = T_supply + q_i / (rho_cp * Q_i). Base dynamics C_b * dT_base_i/dt = P_i \
             - q_i. Junction T_j = T_base + r_j * P_i. Flows in m3/s, powers in W.",
        )
        .with("r_plate", p.r_plate)
        .with("ua", p.ua)
        .with("c_base", p.c_base)
        .with("r_junction", p.r_junction)
        .with("rho_cp", p.rho_cp),
        "loop" => Doc::text(
            "Loop: total flow Q = s * sqrt(H0 / (k + R_loop + R_eq)) with R_eq = (sum_i \
             R_i^-1/2)^-2; plate flows Q_i = sqrt(R_eq * Q^2 / R_i). Return T_return = \
             T_supply + sum_i q_i / (rho_cp * Q). Supply tank V * dT_supply/dt = Q * (T_hx_out \
             - T_supply).",
        )
        .with("r_loop", p.r_loop)
        .with("tank_volume", p.tank_volume),
        "exchanger" => Doc::text(
            "Facility heat exchanger: T_hx_out = T_return - eps_hx * (T_return - T_fw), \
             eps_hx(theta) = eps_max * (1 - exp(-a * theta)) / (1 - exp(-a)). At steady state \
             T_supply = T_fw + D * (1 - eps_hx) / eps_hx with D = sum P / (rho_cp * Q).",
        )
        .with("eps_max", p.hx_max)
        .with("shape_a", p.hx_shape)
        .with("t_facility", p.t_facility),
        _ => return None,
    };
    Some(doc)
}
