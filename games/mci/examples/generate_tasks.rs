//! Writes the task tables `tasks/cooling.tsv` and `tasks/grid.tsv`.
//!
//! Each family lists candidate instances (scenario, time, arguments) written by hand against
//! the system representation; the generator keeps, in order, the first candidates that pass
//! the validity checks (the oracle resolves them; a threshold is not within a sensor's noise
//! of the truth; an intervention has a feasible, non-trivial optimum), and interleaves the two
//! families of a class so that each split holds both. Prompts rotate over paraphrases. The
//! tables are data: this program documents how they were made, and a test checks them.
//!
//! Run from the crate directory: `cargo run --example generate_tasks -- tasks`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use harness_mci::suite::Domain;
use harness_mci::task::{Answer, Arg, COLUMNS, Class, Grader, Task};

/// One candidate: scenario, t_now, arguments.
type Candidate = (&'static str, i64, Vec<(&'static str, Arg)>);

/// One family: its class, name, oracle method, grader, paraphrases and candidates.
struct Family {
    class: &'static str,
    name: &'static str,
    grader: Grader,
    prompts: &'static [&'static str],
    candidates: Vec<Candidate>,
    /// How many tasks it contributes (5, or 10 for a class with one family).
    count: usize,
}

fn s(v: &str) -> Arg {
    Arg::Str(v.to_owned())
}

fn n(v: f64) -> Arg {
    Arg::Num(v)
}

fn fam(
    class: &'static str,
    name: &'static str,
    grader: Grader,
    prompts: &'static [&'static str],
    candidates: Vec<Candidate>,
) -> Family {
    Family {
        class,
        name,
        grader,
        prompts,
        candidates,
        count: 5,
    }
}

/// The tolerance of a numeric read or prediction of `signal`.
fn cooling_tolerance(signal: &str, future: bool) -> f64 {
    let base = if signal.starts_with('T') {
        0.3
    } else if signal.starts_with("flow") {
        0.05
    } else if signal.starts_with("dp") {
        1.5
    } else {
        0.25
    };
    if future { base * 1.7 } else { base }
}

fn grid_tolerance(signal: &str, future: bool) -> f64 {
    let base = match signal.split('.').next().unwrap_or("") {
        "rho" => 0.02,
        "v" => 0.004,
        _ => 2.0,
    };
    if future { base * 1.5 } else { base }
}

fn cooling() -> Vec<Family> {
    use Grader::*;
    let num = |t: f64| Numeric(t);
    let sig = |sc: &'static str, t: i64, signal: &str| (sc, t, vec![("signal", s(signal))]);
    let sig_h = |sc: &'static str, t: i64, signal: &str, h: f64| {
        (sc, t, vec![("signal", s(signal)), ("horizon", n(h))])
    };
    let lim = |sc: &'static str, t: i64, l: f64| (sc, t, vec![("limit", n(l))]);
    let lim_h = |sc: &'static str, t: i64, l: f64, h: f64| {
        (sc, t, vec![("limit", n(l)), ("horizon", n(h))])
    };
    let plate = |sc: &'static str, t: i64, p: &str| (sc, t, vec![("plate", s(p))]);
    let plate_h = |sc: &'static str, t: i64, p: &str, h: f64| {
        (sc, t, vec![("plate", s(p)), ("horizon", n(h))])
    };
    let plate_lim =
        |sc: &'static str, t: i64, p: &str, l: f64| (sc, t, vec![("plate", s(p)), ("limit", n(l))]);
    let plate_lim_h = |sc: &'static str, t: i64, p: &str, l: f64, h: f64| {
        (
            sc,
            t,
            vec![("plate", s(p)), ("limit", n(l)), ("horizon", n(h))],
        )
    };
    let hor = |sc: &'static str, t: i64, h: f64| (sc, t, vec![("horizon", n(h))]);
    let none = |sc: &'static str, t: i64| (sc, t, vec![]);
    vec![
        fam(
            "I-N-S",
            "value_at",
            num(0.0),
            &[
                "What does {signal} read now (t = {t} s)? Answer with a number in {unit}.",
                "Report the current reading of {signal}, in {unit}.",
                "At t = {t} s, what is the value of {signal} ({unit})?",
            ],
            vec![
                sig("blocked-plate", 600, "T_out.07"),
                sig("pump-degradation", 900, "T_supply"),
                sig("pump-degradation", 1000, "flow.loop"),
                sig("rack-overload", 700, "T_out.05"),
                sig("normal-b", 800, "T_return"),
                sig("normal-a", 500, "dp.pump"),
                sig("migrating-hotspot", 650, "T_out.12"),
                sig("rack-overload", 450, "power.06"),
            ],
        ),
        fam(
            "I-N-S",
            "plates_above",
            Set,
            &[
                "Which plates have an outlet temperature above {limit} degC right now (t = {t} s)? List their numbers.",
                "List every cold plate whose outlet currently reads more than {limit} degC.",
            ],
            vec![
                lim("rack-overload", 800, 45.0),
                lim("migrating-hotspot", 400, 44.5),
                lim("blocked-plate", 700, 44.0),
                lim("normal-a", 600, 42.5),
                lim("pump-degradation", 1100, 46.0),
                lim("normal-b", 1000, 42.0),
                lim("migrating-hotspot", 900, 45.5),
                lim("rack-overload", 1000, 46.5),
            ],
        ),
        fam(
            "I-N-X",
            "hidden_plate_temp",
            num(1.0),
            &[
                "Estimate the base-plate temperature of plate {plate} now (t = {t} s), in degC.",
                "What is the current metal base-plate temperature of cold plate {plate}? Answer in degC.",
            ],
            vec![
                plate("blocked-plate", 700, "07"),
                plate("rack-overload", 900, "06"),
                plate("migrating-hotspot", 600, "12"),
                plate("normal-a", 400, "03"),
                plate("pump-degradation", 1100, "10"),
                plate("normal-b", 900, "15"),
                plate("blocked-plate", 500, "08"),
            ],
        ),
        fam(
            "I-N-X",
            "junction_temp",
            num(1.0),
            &[
                "Estimate the junction temperature of the chip on plate {plate} now (t = {t} s), in degC.",
                "How hot is the junction of the processor cooled by plate {plate} at present? Answer in degC.",
            ],
            vec![
                plate("rack-overload", 800, "05"),
                plate("migrating-hotspot", 300, "03"),
                plate("blocked-plate", 1000, "07"),
                plate("normal-b", 700, "11"),
                plate("pump-degradation", 1000, "02"),
                plate("normal-a", 900, "20"),
                plate("migrating-hotspot", 1000, "18"),
            ],
        ),
        fam(
            "I-N-M",
            "abnormal_plate",
            Label,
            &[
                "Which cold plate, if any, has an abnormally high hydraulic resistance now (t = {t} s)? Answer with its number, or `none`.",
                "Is any plate's coolant channel fouled at present? Name the plate number, or answer `none`.",
            ],
            vec![
                none("blocked-plate", 600),
                none("rack-overload", 800),
                none("blocked-plate", 1100),
                none("normal-a", 500),
                none("blocked-plate", 400),
                none("migrating-hotspot", 700),
                none("pump-degradation", 1000),
            ],
        ),
        fam(
            "I-N-M",
            "pump_head",
            num(5.0),
            &[
                "Estimate the pump's shut-off head at full speed now (t = {t} s), in kPa.",
                "What is the present full-speed shut-off head of the CDU pump, in kPa?",
            ],
            vec![
                none("pump-degradation", 700),
                none("normal-a", 600),
                none("pump-degradation", 1000),
                none("normal-b", 300),
                none("pump-degradation", 1150),
                none("pump-degradation", 450),
                none("blocked-plate", 800),
            ],
        ),
        fam(
            "I-F-S",
            "predict_value",
            num(0.0),
            &[
                "Predict the reading of {signal} {horizon} s from now (t = {t} s), in {unit}.",
                "What will {signal} read at t = {t} + {horizon} s? Answer in {unit}.",
            ],
            vec![
                sig_h("blocked-plate", 350, "T_out.07", 120.0),
                sig_h("pump-degradation", 700, "T_supply", 300.0),
                sig_h("rack-overload", 420, "T_out.06", 180.0),
                sig_h("migrating-hotspot", 520, "T_out.12", 120.0),
                sig_h("pump-degradation", 600, "flow.loop", 300.0),
                sig_h("normal-b", 610, "T_return", 120.0),
                sig_h("normal-a", 400, "T_out.03", 200.0),
            ],
        ),
        fam(
            "I-F-S",
            "will_exceed",
            Polarity,
            &[
                "Will any plate outlet exceed {limit} degC within the next {horizon} s (from t = {t} s)? Answer yes or no.",
                "Over the coming {horizon} s, does some outlet temperature rise above {limit} degC? yes/no.",
            ],
            vec![
                lim_h("rack-overload", 410, 45.0, 200.0),
                lim_h("normal-a", 500, 45.0, 300.0),
                lim_h("blocked-plate", 320, 55.0, 100.0),
                lim_h("pump-degradation", 700, 45.0, 400.0),
                lim_h("normal-b", 550, 42.0, 300.0),
                lim_h("migrating-hotspot", 450, 50.0, 100.0),
                lim_h("pump-degradation", 400, 46.0, 300.0),
            ],
        ),
        fam(
            "I-F-X",
            "predict_base_temp",
            num(1.0),
            &[
                "Predict the base-plate temperature of plate {plate} {horizon} s from now (t = {t} s), in degC.",
                "What will cold plate {plate}'s base temperature be at t = {t} + {horizon} s? Answer in degC.",
            ],
            vec![
                plate_h("blocked-plate", 400, "07", 200.0),
                plate_h("rack-overload", 450, "05", 150.0),
                plate_h("migrating-hotspot", 520, "12", 100.0),
                plate_h("pump-degradation", 800, "10", 300.0),
                plate_h("normal-a", 300, "01", 300.0),
                plate_h("normal-b", 620, "08", 180.0),
            ],
        ),
        fam(
            "I-F-X",
            "base_will_exceed",
            Polarity,
            &[
                "Will any base plate exceed {limit} degC within the next {horizon} s (from t = {t} s)? yes/no.",
                "Within {horizon} s, does some cold plate's base temperature go above {limit} degC? Answer yes or no.",
            ],
            vec![
                lim_h("blocked-plate", 400, 58.0, 300.0),
                lim_h("normal-a", 600, 48.0, 300.0),
                lim_h("rack-overload", 420, 50.0, 300.0),
                lim_h("pump-degradation", 900, 49.0, 300.0),
                lim_h("migrating-hotspot", 510, 53.0, 200.0),
                lim_h("normal-b", 700, 46.0, 300.0),
                lim_h("blocked-plate", 900, 62.0, 300.0),
            ],
        ),
        fam(
            "I-F-M",
            "predict_pump_head",
            num(5.0),
            &[
                "Predict the pump's full-speed shut-off head {horizon} s from now (t = {t} s), in kPa.",
                "What will the CDU pump's shut-off head be at t = {t} + {horizon} s? Answer in kPa.",
            ],
            vec![
                hor("pump-degradation", 500, 300.0),
                hor("normal-a", 600, 300.0),
                hor("pump-degradation", 800, 300.0),
                hor("pump-degradation", 350, 600.0),
                hor("blocked-plate", 600, 300.0),
                hor("pump-degradation", 1000, 200.0),
            ],
        ),
        fam(
            "I-F-M",
            "head_direction",
            Direction,
            &[
                "Over the next {horizon} s (from t = {t} s), will the pump's shut-off head go up, down or stay flat?",
                "Is the pump head trending up, down or flat over the coming {horizon} s? Answer up, down or flat.",
            ],
            vec![
                hor("pump-degradation", 600, 300.0),
                hor("normal-a", 300, 300.0),
                hor("pump-degradation", 320, 300.0),
                hor("rack-overload", 700, 300.0),
                hor("pump-degradation", 1000, 150.0),
                hor("migrating-hotspot", 400, 300.0),
            ],
        ),
        fam(
            "A-N-S",
            "min_pump_for_outlet",
            Action,
            &[
                "Choose the lowest pump speed that keeps every plate outlet at or below {limit} degC at steady state under the current loads (t = {t} s).",
                "Set the pump speed as low as possible while holding all outlet temperatures at or under {limit} degC once settled.",
            ],
            vec![
                lim("rack-overload", 800, 45.0),
                lim("normal-a", 600, 43.0),
                lim("migrating-hotspot", 600, 46.0),
                lim("blocked-plate", 900, 58.0),
                lim("pump-degradation", 1100, 45.0),
                lim("normal-b", 1000, 42.5),
            ],
        ),
        fam(
            "A-N-S",
            "min_valve_for_supply",
            Action,
            &[
                "Choose the smallest facility-valve opening that keeps the supply temperature at or below {limit} degC at steady state (t = {t} s).",
                "Close the facility valve as far as possible while the settled supply temperature stays at or under {limit} degC.",
            ],
            vec![
                lim("normal-a", 600, 31.0),
                lim("rack-overload", 900, 31.5),
                lim("pump-degradation", 1000, 32.0),
                lim("normal-b", 800, 30.0),
                lim("migrating-hotspot", 700, 31.0),
                lim("blocked-plate", 500, 31.5),
            ],
        ),
        fam(
            "A-N-X",
            "min_pump_for_base",
            Action,
            &[
                "Choose the lowest pump speed that keeps every base plate at or below {limit} degC at steady state (t = {t} s).",
                "What is the lowest pump speed at which no base-plate temperature settles above {limit} degC? Set it.",
            ],
            vec![
                lim("rack-overload", 800, 52.0),
                lim("normal-a", 500, 48.0),
                lim("migrating-hotspot", 600, 52.0),
                lim("blocked-plate", 900, 62.0),
                lim("pump-degradation", 1100, 50.0),
                lim("normal-b", 900, 47.0),
            ],
        ),
        fam(
            "A-N-X",
            "max_power_for_base",
            Action,
            &[
                "Cap the load of plate {plate} as little as possible so that its base plate settles at or below {limit} degC (t = {t} s). Give the cap in kW.",
                "Choose the highest power (kW) plate {plate} may draw with its base-plate temperature settling at or under {limit} degC.",
            ],
            vec![
                plate_lim("rack-overload", 800, "05", 50.0),
                plate_lim("blocked-plate", 900, "07", 55.0),
                plate_lim("migrating-hotspot", 650, "12", 50.0),
                plate_lim("normal-a", 500, "03", 46.0),
                plate_lim("pump-degradation", 1100, "10", 47.0),
                plate_lim("normal-b", 900, "08", 45.0),
            ],
        ),
        fam(
            "A-N-M",
            "min_pump_for_flow",
            Action,
            &[
                "Choose the lowest pump speed that restores a loop flow of at least {limit} L/s given the pump's present condition (t = {t} s).",
                "Set the pump speed so the total coolant flow is at least {limit} L/s, as low as possible.",
            ],
            vec![
                lim("pump-degradation", 900, 4.8),
                lim("normal-a", 500, 5.0),
                lim("pump-degradation", 1100, 4.6),
                lim("blocked-plate", 700, 4.9),
                lim("pump-degradation", 600, 4.8),
                lim("normal-b", 400, 5.3),
            ],
        ),
        fam(
            "A-N-M",
            "min_pump_for_plate_flow",
            Action,
            &[
                "Choose the lowest pump speed that gives plate {plate} a coolant flow of at least {limit} L/s (t = {t} s).",
                "Set the pump as slow as possible while plate {plate} still receives at least {limit} L/s.",
            ],
            vec![
                plate_lim("blocked-plate", 600, "07", 0.1),
                plate_lim("normal-a", 500, "03", 0.26),
                plate_lim("blocked-plate", 900, "07", 0.11),
                plate_lim("pump-degradation", 1000, "10", 0.22),
                plate_lim("rack-overload", 700, "05", 0.25),
                plate_lim("blocked-plate", 1100, "08", 0.25),
            ],
        ),
        fam(
            "A-F-S",
            "min_pump_for_outlet_through",
            Action,
            &[
                "Choose the lowest pump speed, applied now (t = {t} s) and held, that keeps every outlet at or below {limit} degC for the next {horizon} s.",
                "Set the pump speed now, as low as possible, so no plate outlet exceeds {limit} degC during the coming {horizon} s.",
            ],
            vec![
                lim_h("rack-overload", 400, 45.0, 300.0),
                lim_h("normal-a", 500, 43.0, 300.0),
                lim_h("migrating-hotspot", 480, 46.0, 300.0),
                lim_h("blocked-plate", 300, 50.0, 120.0),
                lim_h("pump-degradation", 700, 45.0, 400.0),
                lim_h("normal-b", 580, 42.5, 300.0),
                lim_h("migrating-hotspot", 480, 48.0, 300.0),
                lim_h("rack-overload", 600, 46.0, 300.0),
                lim_h("normal-b", 300, 42.0, 300.0),
            ],
        ),
        fam(
            "A-F-S",
            "min_valve_for_supply_through",
            Action,
            &[
                "Choose the smallest facility-valve opening, set now (t = {t} s) and held, that keeps the supply at or below {limit} degC for the next {horizon} s.",
                "Close the facility valve as far as you can now while the supply temperature stays at or under {limit} degC over the next {horizon} s.",
            ],
            vec![
                lim_h("normal-b", 580, 30.0, 300.0),
                lim_h("normal-a", 400, 31.0, 300.0),
                lim_h("rack-overload", 390, 31.3, 400.0),
                lim_h("pump-degradation", 800, 32.0, 300.0),
                lim_h("migrating-hotspot", 480, 31.0, 300.0),
                lim_h("blocked-plate", 300, 31.5, 300.0),
            ],
        ),
        fam(
            "A-F-X",
            "min_pump_for_base_through",
            Action,
            &[
                "Choose the lowest pump speed, applied now (t = {t} s) and held, that keeps every base plate at or below {limit} degC for the next {horizon} s.",
                "Set the pump speed now, as low as possible, so that no base plate exceeds {limit} degC during the coming {horizon} s.",
            ],
            vec![
                lim_h("rack-overload", 400, 51.0, 300.0),
                lim_h("normal-a", 500, 47.5, 300.0),
                lim_h("migrating-hotspot", 480, 52.0, 300.0),
                lim_h("pump-degradation", 700, 49.0, 400.0),
                lim_h("blocked-plate", 300, 56.0, 200.0),
                lim_h("normal-b", 580, 46.5, 300.0),
            ],
        ),
        fam(
            "A-F-X",
            "max_power_for_base_through",
            Action,
            &[
                "Cap plate {plate}'s load now (t = {t} s) as little as possible so its base stays at or below {limit} degC for the next {horizon} s. Give the cap in kW.",
                "Choose the highest power (kW) plate {plate} may draw from now on with its base plate at or under {limit} degC over the coming {horizon} s.",
            ],
            vec![
                plate_lim_h("rack-overload", 400, "06", 49.0, 300.0),
                plate_lim_h("blocked-plate", 300, "07", 52.0, 300.0),
                plate_lim_h("migrating-hotspot", 480, "12", 49.0, 300.0),
                plate_lim_h("migrating-hotspot", 180, "03", 50.0, 300.0),
                plate_lim_h("pump-degradation", 700, "10", 49.0, 400.0),
                plate_lim_h("rack-overload", 390, "07", 49.5, 300.0),
                plate_lim_h("normal-b", 580, "09", 46.5, 300.0),
                plate_lim_h("migrating-hotspot", 780, "18", 50.0, 300.0),
            ],
        ),
        Family {
            count: 10,
            ..fam(
                "A-F-M",
                "min_pump_for_flow_through",
                Action,
                &[
                    "Choose the lowest pump speed, applied now (t = {t} s) and held, that keeps the loop flow at or above {limit} L/s for the next {horizon} s, given how the pump is ageing.",
                    "Set the pump speed now, as low as possible, so the total coolant flow stays at least {limit} L/s throughout the coming {horizon} s.",
                ],
                vec![
                    lim_h("pump-degradation", 400, 4.8, 300.0),
                    lim_h("normal-a", 600, 4.9, 300.0),
                    lim_h("pump-degradation", 600, 4.7, 400.0),
                    lim_h("blocked-plate", 700, 4.8, 300.0),
                    lim_h("pump-degradation", 800, 4.6, 300.0),
                    lim_h("normal-b", 500, 5.2, 300.0),
                    lim_h("pump-degradation", 1000, 4.8, 200.0),
                    lim_h("rack-overload", 600, 4.9, 300.0),
                    lim_h("pump-degradation", 300, 4.8, 600.0),
                    lim_h("pump-degradation", 900, 4.5, 300.0),
                    lim_h("migrating-hotspot", 500, 5.0, 300.0),
                ],
            )
        },
    ]
}

fn grid() -> Vec<Family> {
    use Grader::*;
    let num = |t: f64| Numeric(t);
    let sig = |sc: &'static str, t: i64, signal: &str| (sc, t, vec![("signal", s(signal))]);
    let sig_h = |sc: &'static str, t: i64, signal: &str, h: f64| {
        (sc, t, vec![("signal", s(signal)), ("horizon", n(h))])
    };
    let lim = |sc: &'static str, t: i64, l: f64| (sc, t, vec![("limit", n(l))]);
    let lim_h = |sc: &'static str, t: i64, l: f64, h: f64| {
        (sc, t, vec![("limit", n(l)), ("horizon", n(h))])
    };
    let bus = |sc: &'static str, t: i64, b: &str| (sc, t, vec![("bus", s(b))]);
    let bus_h =
        |sc: &'static str, t: i64, b: &str, h: f64| (sc, t, vec![("bus", s(b)), ("horizon", n(h))]);
    let bus_lim =
        |sc: &'static str, t: i64, b: &str, l: f64| (sc, t, vec![("bus", s(b)), ("limit", n(l))]);
    let bus_lim_h = |sc: &'static str, t: i64, b: &str, l: f64, h: f64| {
        (
            sc,
            t,
            vec![("bus", s(b)), ("limit", n(l)), ("horizon", n(h))],
        )
    };
    let line_ = |sc: &'static str, t: i64, l: &str| (sc, t, vec![("line", s(l))]);
    let line_h = |sc: &'static str, t: i64, l: &str, h: f64| {
        (sc, t, vec![("line", s(l)), ("horizon", n(h))])
    };
    let line_lim =
        |sc: &'static str, t: i64, l: &str, x: f64| (sc, t, vec![("line", s(l)), ("limit", n(x))]);
    let line_lim_h = |sc: &'static str, t: i64, l: &str, x: f64, h: f64| {
        (
            sc,
            t,
            vec![("line", s(l)), ("limit", n(x)), ("horizon", n(h))],
        )
    };
    let hor = |sc: &'static str, t: i64, h: f64| (sc, t, vec![("horizon", n(h))]);
    let none = |sc: &'static str, t: i64| (sc, t, vec![]);
    vec![
        fam(
            "I-N-S",
            "value_at",
            num(0.0),
            &[
                "What does {signal} read now (t = {t} min)? Answer with a number in {unit}.",
                "Report the current value of {signal}, in {unit}.",
                "At minute {t} of the day, what is {signal} ({unit})?",
            ],
            vec![
                sig("overload-1", 900, "rho.L02"),
                sig("overload-3", 840, "p.L07"),
                sig("normal-1", 600, "v.B09"),
                sig("overload-4", 780, "gen.G1"),
                sig("overload-2", 930, "load.B03"),
                sig("trip", 800, "rho.L07"),
                sig("overload-5", 960, "rho.L03"),
                sig("normal-2", 720, "gen.G6"),
            ],
        ),
        fam(
            "I-N-S",
            "lines_above",
            Set,
            &[
                "Which lines are loaded above {limit} of their limit right now (t = {t} min)? List their names.",
                "List every line whose loading rho currently exceeds {limit}.",
            ],
            vec![
                lim("overload-4", 900, 1.0),
                lim("overload-7", 870, 1.0),
                lim("trip", 780, 0.9),
                lim("normal-1", 900, 0.8),
                lim("overload-5", 930, 1.0),
                lim("overload-6", 900, 1.0),
                lim("normal-2", 600, 0.7),
            ],
        ),
        fam(
            "I-N-X",
            "losses_now",
            num(0.3),
            &[
                "Estimate the total active power losses of the network now (t = {t} min), in MW.",
                "How many MW does the grid currently lose in its lines and transformers?",
            ],
            vec![
                none("overload-1", 900),
                none("normal-1", 300),
                none("trip", 800),
                none("overload-6", 840),
                none("normal-2", 720),
                none("overload-7", 960),
            ],
        ),
        fam(
            "I-N-X",
            "unsensed_voltage",
            num(0.004),
            &[
                "Estimate the voltage magnitude at bus {bus}, which has no sensor, now (t = {t} min), in pu.",
                "Bus {bus} is unmonitored: what is its present voltage magnitude in pu?",
            ],
            vec![
                bus("normal-1", 900, "B14"),
                bus("overload-4", 840, "B12"),
                bus("trip", 780, "B07"),
                bus("overload-7", 930, "B14"),
                bus("overload-2", 600, "B07"),
                bus("normal-2", 300, "B12"),
            ],
        ),
        fam(
            "I-N-M",
            "tripped_line",
            Label,
            &[
                "Which line, if any, is out of service now (t = {t} min)? Answer with its name, or `none`.",
                "Is any line disconnected at present? Name it, or answer `none`.",
            ],
            vec![
                none("trip", 780),
                none("normal-1", 600),
                none("trip", 1020),
                none("overload-3", 900),
                none("trip", 1200),
                none("overload-6", 700),
            ],
        ),
        fam(
            "I-N-M",
            "outage_worst_line",
            Label,
            &[
                "If line {line} tripped now (t = {t} min), which of the remaining lines would be the most loaded? Answer with its name.",
                "Contingency check: after losing {line} at present, name the line that would carry the highest loading.",
            ],
            vec![
                line_("normal-1", 900, "L01"),
                line_("overload-2", 960, "L03"),
                line_("overload-3", 840, "L07"),
                line_("trip", 780, "L07"),
                line_("overload-5", 900, "L02"),
                line_("overload-6", 870, "L05"),
                line_("normal-2", 600, "L10"),
            ],
        ),
        fam(
            "I-F-S",
            "predict_value",
            num(0.0),
            &[
                "Predict {signal} {horizon} min from now (t = {t} min), in {unit}.",
                "What will {signal} read at minute {t} + {horizon}? Answer in {unit}.",
            ],
            vec![
                sig_h("overload-1", 720, "rho.L02", 120.0),
                sig_h("overload-2", 780, "rho.L03", 120.0),
                sig_h("overload-3", 660, "rho.L07", 180.0),
                sig_h("normal-1", 600, "gen.G1", 120.0),
                sig_h("trip", 600, "rho.L07", 180.0),
                sig_h("overload-5", 840, "load.B03", 60.0),
                sig_h("normal-2", 480, "rho.L03", 240.0),
            ],
        ),
        fam(
            "I-F-S",
            "will_overload",
            Polarity,
            &[
                "Will any line exceed its limit (rho > {limit}) within the next {horizon} min (from t = {t} min)? yes/no.",
                "Over the coming {horizon} min, does some line's loading go above {limit}? Answer yes or no.",
            ],
            vec![
                lim_h("overload-4", 600, 1.0, 180.0),
                lim_h("normal-1", 600, 1.0, 240.0),
                lim_h("overload-6", 540, 1.0, 180.0),
                lim_h("normal-2", 700, 1.0, 200.0),
                lim_h("overload-7", 500, 1.0, 120.0),
                lim_h("trip", 600, 1.0, 60.0),
                lim_h("overload-2", 720, 1.0, 180.0),
            ],
        ),
        fam(
            "I-F-X",
            "predict_losses",
            num(0.5),
            &[
                "Predict the network's total active losses {horizon} min from now (t = {t} min), in MW.",
                "How many MW will the grid lose at minute {t} + {horizon}?",
            ],
            vec![
                hor("overload-1", 720, 120.0),
                hor("normal-1", 480, 240.0),
                hor("overload-5", 780, 60.0),
                hor("normal-2", 600, 180.0),
                hor("overload-7", 840, 120.0),
                hor("overload-3", 660, 120.0),
            ],
        ),
        fam(
            "I-F-X",
            "predict_unsensed_voltage",
            num(0.006),
            &[
                "Predict the voltage at unmonitored bus {bus} {horizon} min from now (t = {t} min), in pu.",
                "What will the voltage magnitude at bus {bus} (no sensor) be at minute {t} + {horizon}? Answer in pu.",
            ],
            vec![
                bus_h("normal-1", 720, "B14", 120.0),
                bus_h("overload-4", 700, "B12", 180.0),
                bus_h("overload-3", 660, "B07", 120.0),
                bus_h("overload-6", 780, "B14", 120.0),
                bus_h("normal-2", 480, "B07", 240.0),
                bus_h("overload-2", 700, "B12", 200.0),
            ],
        ),
        fam(
            "I-F-M",
            "outage_worst_line_at",
            Label,
            &[
                "If line {line} tripped {horizon} min from now (t = {t} min), which remaining line would be the most loaded? Answer with its name.",
                "Looking {horizon} min ahead: after a loss of {line}, name the line that would carry the highest loading.",
            ],
            vec![
                line_h("normal-1", 720, "L01", 120.0),
                line_h("overload-2", 780, "L03", 120.0),
                line_h("overload-3", 660, "L07", 180.0),
                line_h("overload-5", 800, "L02", 100.0),
                line_h("overload-6", 700, "L05", 200.0),
                line_h("normal-2", 500, "L10", 240.0),
                line_h("overload-1", 600, "L04", 180.0),
            ],
        ),
        fam(
            "I-F-M",
            "n1_secure_at",
            Polarity,
            &[
                "Will the grid be N-1 secure {horizon} min from now (t = {t} min), i.e. will every single line outage leave all lines at rho <= {limit}? yes/no.",
                "At minute {t} + {horizon}, can the network lose any one line and keep every loading at or below {limit}? Answer yes or no.",
            ],
            vec![
                lim_h("normal-1", 720, 0.05, 120.0),
                lim_h("overload-3", 700, -0.05, 120.0),
                lim_h("overload-4", 600, 0.06, 240.0),
                lim_h("normal-2", 300, -0.04, 120.0),
                lim_h("overload-7", 700, 0.05, 180.0),
                lim_h("overload-1", 800, -0.06, 60.0),
                lim_h("normal-1", 400, 0.04, 120.0),
            ],
        ),
        fam(
            "A-N-S",
            "best_action_rho",
            Action,
            &[
                "Choose the smallest single-generator redispatch (the slack compensates) that brings every line to rho <= {limit} now (t = {t} min). Give the generator and the MW change.",
                "Relieve all overloads (rho <= {limit}) with the least redispatch at one generator.",
            ],
            vec![
                lim("overload-4", 900, 1.0),
                lim("overload-7", 870, 1.0),
                lim("overload-5", 930, 1.0),
                lim("overload-6", 900, 1.0),
                lim("overload-2", 960, 1.0),
                lim("overload-3", 870, 1.0),
            ],
        ),
        fam(
            "A-N-S",
            "relieve_line",
            Action,
            &[
                "Bring line {line} to rho <= {limit} now (t = {t} min) with the smallest redispatch at one generator.",
                "Choose one generator and the least MW change that takes {line}'s loading to {limit} or below.",
            ],
            vec![
                line_lim("overload-4", 900, "L02", 0.95),
                line_lim("overload-5", 930, "L03", 0.95),
                line_lim("overload-6", 900, "L07", 1.0),
                line_lim("overload-3", 870, "L07", 0.95),
                line_lim("trip", 800, "L07", 1.2),
                line_lim("overload-1", 900, "L02", 0.9),
            ],
        ),
        fam(
            "A-N-X",
            "loss_cap",
            Action,
            &[
                "Redispatch one generator, as little as possible, so that total network losses fall to {limit} MW or less now (t = {t} min).",
                "Choose the smallest single-generator redispatch that brings the grid's losses down to at most {limit} MW.",
            ],
            vec![
                lim("overload-1", 900, -0.6),
                lim("normal-1", 900, -0.5),
                lim("overload-7", 870, -0.8),
                lim("overload-4", 840, -0.6),
                lim("trip", 800, -0.8),
                lim("normal-2", 720, -0.4),
            ],
        ),
        fam(
            "A-N-X",
            "raise_voltage",
            Action,
            &[
                "Change one generator's voltage setpoint, as little as possible, so that unmonitored bus {bus} reaches at least {limit} pu now (t = {t} min).",
                "Bring the voltage at bus {bus} (no sensor) up to {limit} pu or more with the smallest setpoint change at one generator.",
            ],
            vec![
                bus_lim("normal-1", 900, "B14", 0.005),
                bus_lim("overload-7", 900, "B14", 0.006),
                bus_lim("overload-4", 840, "B12", 0.004),
                bus_lim("trip", 780, "B07", 0.004),
                bus_lim("overload-3", 870, "B14", 0.005),
                bus_lim("normal-2", 600, "B12", 0.005),
            ],
        ),
        fam(
            "A-N-M",
            "n1_redispatch",
            Action,
            &[
                "Choose the smallest single-generator redispatch that makes the grid N-1 secure now (t = {t} min): after any single line outage every line stays at rho <= {limit}.",
                "Make the network survive the loss of any one line (all loadings <= {limit}) with the least redispatch at one generator.",
            ],
            vec![
                lim("normal-1", 900, -0.03),
                lim("overload-2", 960, -0.03),
                lim("overload-3", 840, -0.04),
                lim("overload-5", 900, -0.03),
                lim("overload-6", 870, -0.05),
                lim("overload-1", 900, -0.04),
                lim("normal-2", 600, -0.03),
            ],
        ),
        fam(
            "A-N-M",
            "outage_redispatch",
            Action,
            &[
                "Prepare for the loss of line {line}: choose the smallest single-generator redispatch now (t = {t} min) after which that outage would leave every line at rho <= {limit}.",
                "Redispatch one generator, as little as possible, so that tripping {line} would not push any loading above {limit}.",
            ],
            vec![
                line_lim("normal-1", 900, "L03", -0.03),
                line_lim("overload-2", 960, "L02", -0.04),
                line_lim("overload-3", 840, "L02", -0.03),
                line_lim("overload-4", 900, "L07", -0.05),
                line_lim("overload-5", 900, "L07", -0.04),
                line_lim("normal-2", 720, "L04", -0.03),
                line_lim("trip", 800, "L03", -0.04),
            ],
        ),
        fam(
            "A-F-S",
            "best_action_rho_at",
            Action,
            &[
                "Choose the smallest single-generator redispatch, made now (t = {t} min) and held, that keeps every line at rho <= {limit} {horizon} min from now.",
                "Redispatch one generator now, as little as possible, so no line is above rho {limit} at minute {t} + {horizon}.",
            ],
            vec![
                lim_h("overload-4", 720, 1.0, 150.0),
                lim_h("overload-7", 720, 1.0, 120.0),
                lim_h("overload-5", 780, 1.0, 120.0),
                lim_h("overload-6", 720, 1.0, 150.0),
                lim_h("overload-2", 840, 1.0, 90.0),
                lim_h("overload-3", 720, 1.0, 120.0),
            ],
        ),
        fam(
            "A-F-S",
            "relieve_line_at",
            Action,
            &[
                "Redispatch one generator now (t = {t} min), as little as possible, so that line {line} is at rho <= {limit} {horizon} min from now.",
                "Choose the least single-generator redispatch, held from now, that keeps {line} at or below {limit} at minute {t} + {horizon}.",
            ],
            vec![
                line_lim_h("overload-4", 720, "L02", 0.95, 150.0),
                line_lim_h("overload-5", 780, "L03", 0.95, 120.0),
                line_lim_h("overload-6", 720, "L07", 1.0, 150.0),
                line_lim_h("overload-3", 720, "L07", 0.95, 120.0),
                line_lim_h("overload-1", 720, "L02", 0.9, 180.0),
                line_lim_h("overload-2", 780, "L03", 0.95, 150.0),
            ],
        ),
        fam(
            "A-F-X",
            "loss_cap_at",
            Action,
            &[
                "Redispatch one generator now (t = {t} min), as little as possible, so that the network's losses are at most {limit} MW {horizon} min from now.",
                "Choose the smallest single-generator redispatch, held from now, that keeps total losses at or under {limit} MW at minute {t} + {horizon}.",
            ],
            vec![
                lim_h("overload-1", 720, -0.6, 150.0),
                lim_h("normal-1", 700, -0.5, 170.0),
                lim_h("overload-7", 720, -0.8, 120.0),
                lim_h("overload-4", 720, -0.6, 90.0),
                lim_h("normal-2", 600, -0.4, 150.0),
                lim_h("overload-5", 780, -0.5, 150.0),
            ],
        ),
        fam(
            "A-F-X",
            "raise_voltage_at",
            Action,
            &[
                "Change one generator's voltage setpoint now (t = {t} min), as little as possible, so that unmonitored bus {bus} is at least {limit} pu {horizon} min from now.",
                "Choose the smallest setpoint change at one generator, held from now, that keeps bus {bus} at or above {limit} pu at minute {t} + {horizon}.",
            ],
            vec![
                bus_lim_h("normal-1", 720, "B14", 0.005, 150.0),
                bus_lim_h("overload-7", 720, "B14", 0.006, 180.0),
                bus_lim_h("overload-4", 700, "B12", 0.004, 110.0),
                bus_lim_h("overload-3", 720, "B14", 0.005, 120.0),
                bus_lim_h("normal-2", 480, "B12", 0.005, 200.0),
                bus_lim_h("overload-6", 720, "B07", 0.004, 180.0),
            ],
        ),
        fam(
            "A-F-M",
            "n1_redispatch_at",
            Action,
            &[
                "Choose the smallest single-generator redispatch, made now (t = {t} min) and held, after which the grid is N-1 secure (every single outage leaves all lines at rho <= {limit}) {horizon} min from now.",
                "Redispatch one generator now, as little as possible, so the network can lose any one line at minute {t} + {horizon} with all loadings <= {limit}.",
            ],
            vec![
                lim_h("normal-1", 720, -0.03, 150.0),
                lim_h("overload-2", 780, -0.03, 150.0),
                lim_h("overload-3", 720, -0.04, 90.0),
                lim_h("overload-5", 780, -0.03, 90.0),
                lim_h("overload-6", 720, -0.05, 120.0),
                lim_h("overload-1", 720, -0.04, 180.0),
                lim_h("normal-2", 480, -0.03, 240.0),
            ],
        ),
        fam(
            "A-F-M",
            "outage_redispatch_at",
            Action,
            &[
                "Prepare now (t = {t} min) for losing line {line} {horizon} min from now: choose the smallest single-generator redispatch, held, after which that outage would leave every line at rho <= {limit}.",
                "Redispatch one generator now, as little as possible, so that tripping {line} at minute {t} + {horizon} would keep all loadings at or below {limit}.",
            ],
            vec![
                line_lim_h("normal-1", 720, "L03", -0.03, 150.0),
                line_lim_h("overload-2", 780, "L02", -0.04, 150.0),
                line_lim_h("overload-3", 720, "L02", -0.03, 90.0),
                line_lim_h("overload-4", 720, "L07", -0.05, 150.0),
                line_lim_h("overload-5", 780, "L07", -0.04, 90.0),
                line_lim_h("normal-2", 600, "L04", -0.03, 120.0),
                line_lim_h("trip", 780, "L03", -0.04, 120.0),
            ],
        ),
    ]
}

/// A draft task from a candidate (prompt filled in later).
fn draft(family: &Family, (scenario, t_now, args): &Candidate) -> Task {
    let args: BTreeMap<String, Arg> = args
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect();
    Task {
        id: String::new(),
        class: Class::parse(family.class).unwrap_or_else(|| panic!("class {}", family.class)),
        family: family.name.to_owned(),
        scenario: (*scenario).to_owned(),
        t_now: *t_now,
        prompt: String::new(),
        method: family.name.to_owned(),
        args,
        grader: family.grader,
    }
}

/// Resolves arguments that are relative to the truth: on a security task a `limit` within
/// ±0.5 is an offset from the current (or future) worst post-outage loading; a negative
/// `limit` on a loss cap is an offset below the losses; a small positive `limit` on a voltage task is
/// an offset above the present voltage. Rounded, so the prompt states a plain number.
fn absolutize(domain: Domain, task: &mut Task) {
    if task.method == "plates_above" || task.method == "lines_above" {
        gap_limit(domain, task);
        return;
    }
    if domain != Domain::Grid {
        return;
    }
    let offset = task.num("limit").unwrap_or(0.0);
    let probe = |task: &Task, method: &str| {
        let mut p = task.clone();
        p.method = method.to_owned();
        p.grader = Grader::Numeric(1.0);
        match domain.resolve(&p) {
            Ok(Answer::Number(x)) => x,
            _ => f64::NAN,
        }
    };
    let future = task.class.future;
    let relative = offset.abs() < 0.5
        && (task.method.starts_with("n1_") || task.method.starts_with("outage_redispatch"));
    if relative {
        use harness_mci::grid::oracle;
        let rec = oracle::recorded(&task.scenario).unwrap_or_else(|| panic!("{}", task.scenario));
        let point = rec.point(task.t_now + if future { task.horizon() } else { 0 });
        let baseline = if task.method.starts_with("n1") {
            oracle::worst_contingency(point).map_or(f64::NAN, |(_, rho)| rho)
        } else {
            let line = task
                .text("line")
                .and_then(|l| l[1..].parse::<usize>().ok())
                .unwrap_or(1)
                - 1;
            let mut p = point.clone();
            p.case.in_service[line] = false;
            p.solve().map_or(f64::NAN, |sol| oracle::max_loading(&sol))
        };
        task.args.insert(
            "limit".into(),
            Arg::Num(((baseline + offset) * 100.0).round() / 100.0),
        );
        return;
    }
    if task.method.starts_with("loss_cap") {
        let losses = probe(
            task,
            if future {
                "predict_losses"
            } else {
                "losses_now"
            },
        );
        task.args.insert(
            "limit".into(),
            Arg::Num(((losses + offset) * 10.0).round() / 10.0),
        );
    } else if task.method.starts_with("raise_voltage") {
        let v = probe(
            task,
            if future {
                "predict_unsensed_voltage"
            } else {
                "unsensed_voltage"
            },
        );
        task.args.insert(
            "limit".into(),
            Arg::Num(((v + offset) * 1000.0).round() / 1000.0),
        );
    }
}

/// A set question's `limit` is a hint: the limit used is the middle of the widest gap
/// between the current readings within a window around it, so no reading sits near it.
fn gap_limit(domain: Domain, task: &mut Task) {
    let hint = task.num("limit").unwrap_or(0.0);
    let (signals, window, grain): (Vec<String>, f64, f64) = match domain {
        Domain::Cooling => (
            (1..=20).map(|i| format!("T_out.{i:02}")).collect(),
            1.0,
            20.0,
        ),
        Domain::Grid => (
            (1..=20).map(|k| format!("rho.L{k:02}")).collect(),
            0.05,
            200.0,
        ),
    };
    let mut values: Vec<f64> = signals
        .iter()
        .filter_map(|signal| {
            let mut p = task.clone();
            p.method = "value_at".into();
            p.args = BTreeMap::from([("signal".to_owned(), Arg::Str(signal.clone()))]);
            match domain.resolve(&p) {
                Ok(Answer::Number(x)) => Some(x),
                _ => None,
            }
        })
        .collect();
    values.push(hint - window);
    values.push(hint + window);
    values.sort_by(f64::total_cmp);
    let inside: Vec<f64> = values
        .into_iter()
        .filter(|v| (hint - window..=hint + window).contains(v))
        .collect();
    let best = inside
        .windows(2)
        .max_by(|a, b| (a[1] - a[0]).total_cmp(&(b[1] - b[0])))
        .map_or(hint, |w| 0.5 * (w[0] + w[1]));
    task.args
        .insert("limit".into(), Arg::Num((best * grain).round() / grain));
}

/// The validity checks: the oracle resolves; numeric tolerances are set from the signal;
/// thresholds keep a margin from the truth; interventions have a non-trivial optimum.
fn validate(domain: Domain, task: &mut Task) -> Result<(), String> {
    if task
        .args
        .values()
        .any(|a| matches!(a, Arg::Num(x) if !x.is_finite()))
    {
        return Err("an argument is not finite".into());
    }
    if task.grader == Grader::Numeric(0.0) {
        let signal = task.text("signal").unwrap_or("");
        task.grader = Grader::Numeric(match domain {
            Domain::Cooling => cooling_tolerance(signal, task.class.future),
            Domain::Grid => grid_tolerance(signal, task.class.future),
        });
    }
    let truth = domain.resolve(task)?;
    match (&truth, task.grader) {
        (Answer::Action { control, value }, _) => {
            let verdict = domain.judge(task, control, *value)?;
            if !verdict.feasible || verdict.cost <= 1e-6 {
                return Err(format!("trivial or infeasible optimum {truth}"));
            }
            // The optimum must not sit on the control's bound: then "as low as possible" is
            // the bound itself and the task tests nothing.
            if control == "pump.speed" && *value <= 0.3 + 1e-4 {
                return Err("optimum at the lowest pump speed".into());
            }
            if control == "pump.speed" && *value >= 1.0 - 1e-4 {
                return Err("optimum at full pump speed".into());
            }
        }
        (_, Grader::Polarity | Grader::Set) => {
            margin_check(domain, task)?;
        }
        _ => {}
    }
    Ok(())
}

/// A threshold question must not hinge on a value within sensor noise of its limit: moving
/// the limit by the margin either way must not change the answer.
fn margin_check(domain: Domain, task: &Task) -> Result<(), String> {
    let margin = match (domain, task.grader) {
        (Domain::Cooling, Grader::Set) => 0.15,
        (Domain::Cooling, _) => 0.3,
        (Domain::Grid, _) => 0.01,
    };
    let truth = domain.resolve(task)?;
    for delta in [-margin, margin] {
        let mut moved = task.clone();
        let limit = task.num("limit").unwrap_or(0.0);
        moved.args.insert("limit".into(), Arg::Num(limit + delta));
        if domain.resolve(&moved)? != truth {
            return Err(format!("answer {truth} flips within {margin} of the limit"));
        }
    }
    Ok(())
}

fn unit_of(domain: Domain, signal: &str) -> &'static str {
    let table = match domain {
        Domain::Cooling => harness_mci::cooling::scenario::signals(),
        Domain::Grid => harness_mci::grid::scenario::signals(),
    };
    table
        .iter()
        .find(|s| s.name == signal)
        .map_or("", |s| s.unit)
}

fn fill(domain: Domain, template: &str, task: &Task) -> String {
    let mut out = template.replace("{t}", &task.t_now.to_string());
    for (name, arg) in &task.args {
        let text = match arg {
            Arg::Num(x) if name == "horizon" => format!("{}", *x as i64),
            Arg::Num(x) => format!("{x}"),
            Arg::Str(v) => v.clone(),
        };
        out = out.replace(&format!("{{{name}}}"), &text);
    }
    let unit = unit_of(domain, task.text("signal").unwrap_or(""));
    out.replace("{unit}", unit)
}

fn table(domain: Domain, families: Vec<Family>) -> String {
    let mut by_class: BTreeMap<String, Vec<Vec<Task>>> = BTreeMap::new();
    for family in &families {
        let mut kept = Vec::new();
        for cand in &family.candidates {
            if kept.len() == family.count {
                break;
            }
            let mut task = draft(family, cand);
            absolutize(domain, &mut task);
            match validate(domain, &mut task) {
                Ok(()) => kept.push(task),
                Err(why) => eprintln!("skip {} {} {}: {why}", family.name, cand.0, cand.1),
            }
        }
        assert_eq!(
            kept.len(),
            family.count,
            "{}: too few valid candidates",
            family.name
        );
        for (k, task) in kept.iter_mut().enumerate() {
            task.prompt = fill(domain, family.prompts[k % family.prompts.len()], task);
        }
        by_class
            .entry(family.class.to_owned())
            .or_default()
            .push(kept);
    }
    let mut out = COLUMNS.join("\t");
    out.push('\n');
    for class in Class::all() {
        let code = class.to_string();
        let families = by_class.remove(&code).unwrap_or_default();
        // Interleave the families: indices 0..4 take A, B, A, B, A and 5..9 take B, A, B, A, B.
        let mut queues: Vec<std::collections::VecDeque<Task>> =
            families.into_iter().map(Into::into).collect();
        for index in 0..10 {
            let order: Vec<usize> = if queues.len() == 2 {
                if index < 5 {
                    vec![index % 2, 1 - index % 2]
                } else {
                    vec![1 - index % 2, index % 2]
                }
            } else {
                vec![0]
            };
            let task = order
                .into_iter()
                .find_map(|q| queues[q].pop_front())
                .unwrap_or_else(|| panic!("{code}: fewer than 10 tasks"));
            let tolerance = match task.grader {
                Grader::Numeric(t) => format!("{t}"),
                _ => String::new(),
            };
            let grader = match task.grader {
                Grader::Numeric(_) => "numeric",
                Grader::Set => "set",
                Grader::Polarity => "polarity",
                Grader::Direction => "direction",
                Grader::Label => "label",
                Grader::Action => "action",
            };
            let args: serde_json::Map<String, serde_json::Value> = task
                .args
                .iter()
                .map(|(k, v)| {
                    let value = match v {
                        Arg::Num(x) => serde_json::json!(x),
                        Arg::Str(s) => serde_json::json!(s),
                    };
                    (k.clone(), value)
                })
                .collect();
            let spec = serde_json::json!({ "method": task.method, "args": args });
            let truth = domain
                .resolve(&task)
                .map(|a| a.to_string())
                .unwrap_or_default();
            eprintln!(
                "{}.{code}.{index:02} {} {} {} -> {truth}",
                domain.name(),
                task.family,
                task.scenario,
                task.t_now
            );
            writeln!(
                out,
                "{}.{code}.{index:02}\t{code}\t{}\t{}\t{}\t{}\t{spec}\t{grader}\t{tolerance}",
                domain.name(),
                task.family,
                task.scenario,
                task.t_now,
                task.prompt
            )
            .unwrap_or_default();
        }
    }
    out
}

fn main() {
    let dir = std::env::args().nth(1).unwrap_or_else(|| "tasks".into());
    for (domain, families) in [(Domain::Cooling, cooling()), (Domain::Grid, grid())] {
        let text = table(domain, families);
        let path = format!("{dir}/{}.tsv", domain.name());
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("{path}: {e}"));
        eprintln!("wrote {path}");
    }
}
