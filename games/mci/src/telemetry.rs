//! Recorded trajectories as tables of named signals, and the two things that guard them: the
//! visibility gate (no sample after the task's current time) and the hidden families (latent
//! states that only the oracle reads).

use std::collections::BTreeMap;

/// One column of a trajectory table.
#[derive(Clone, Debug, PartialEq)]
pub struct SignalSpec {
    /// The signal's name, `family.target` (`T_out.07`, `rho.L03`) or a bare family (`T_supply`).
    pub name: String,
    /// Its unit, as shown to the agent (`degC`, `kW`, `pu`).
    pub unit: &'static str,
    /// True for a latent state or mechanism parameter: recorded for the oracle, never shown.
    pub hidden: bool,
    /// What it measures, in one line.
    pub doc: String,
}

impl SignalSpec {
    /// The family part of the name: `T_out` for `T_out.07`.
    pub fn family(&self) -> &str {
        self.name.split('.').next().unwrap_or(&self.name)
    }
}

/// A trajectory: sample times and one column of values per signal.
#[derive(Clone, Debug, PartialEq)]
pub struct Telemetry {
    /// The sample times, ascending, in the game's time unit (seconds or minutes).
    pub times: Vec<i64>,
    /// The columns' descriptions.
    pub signals: Vec<SignalSpec>,
    /// `values[signal][sample]`.
    pub values: Vec<Vec<f64>>,
    index: BTreeMap<String, usize>,
}

impl Telemetry {
    /// An empty table over `times` with these columns.
    pub fn new(times: Vec<i64>, signals: Vec<SignalSpec>) -> Self {
        let index = signals
            .iter()
            .enumerate()
            .map(|(i, s)| (s.name.clone(), i))
            .collect();
        let values = vec![Vec::with_capacity(times.len()); signals.len()];
        Self {
            times,
            signals,
            values,
            index,
        }
    }

    /// The column of `name`.
    pub fn column(&self, name: &str) -> Option<usize> {
        self.index.get(name).copied()
    }

    /// The index of the last sample at or before `t` (the first sample for an earlier `t`).
    pub fn sample_at(&self, t: i64) -> usize {
        self.times.partition_point(|&s| s <= t).saturating_sub(1)
    }

    /// The value of `name` at time `t` (the last sample at or before it).
    pub fn value(&self, name: &str, t: i64) -> Option<f64> {
        let column = self.column(name)?;
        self.values[column].get(self.sample_at(t)).copied()
    }

    /// The samples of `name` with `t0 <= time <= t1`.
    pub fn window(&self, name: &str, t0: i64, t1: i64) -> Option<(Vec<i64>, Vec<f64>)> {
        let column = self.column(name)?;
        let (times, values) = self
            .times
            .iter()
            .zip(&self.values[column])
            .filter(|(t, _)| (t0..=t1).contains(*t))
            .map(|(t, v)| (*t, *v))
            .unzip();
        Some((times, values))
    }

    /// The names of the signals an agent may read, in column order.
    pub fn visible_names(&self) -> Vec<String> {
        self.signals
            .iter()
            .filter(|s| !s.hidden)
            .map(|s| s.name.clone())
            .collect()
    }

    /// True when `name` is a column that an agent may read.
    pub fn is_visible(&self, name: &str) -> bool {
        self.column(name).is_some_and(|c| !self.signals[c].hidden)
    }
}

/// Evenly thins `(times, values)` to at most `cap` points, always keeping the last one (the
/// most recent sample is the one an operator cares about most).
pub fn thin(times: Vec<i64>, values: Vec<f64>, cap: usize) -> (Vec<i64>, Vec<f64>) {
    let n = times.len();
    if n <= cap || cap == 0 {
        return (times, values);
    }
    // Indices n-1, n-1-stride, ... with the smallest integer stride that fits in `cap`.
    let stride = (n - 1).div_ceil(cap - 1);
    let mut keep: Vec<usize> = (0..cap)
        .filter_map(|k| (n - 1).checked_sub(k * stride))
        .collect();
    keep.reverse();
    let times = keep.iter().map(|&i| times[i]).collect();
    let values = keep.iter().map(|&i| values[i]).collect();
    (times, values)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Telemetry {
        let mut t = Telemetry::new(
            vec![0, 5, 10, 15],
            vec![
                SignalSpec {
                    name: "T_out.01".into(),
                    unit: "degC",
                    hidden: false,
                    doc: String::new(),
                },
                SignalSpec {
                    name: "T_base.01".into(),
                    unit: "degC",
                    hidden: true,
                    doc: String::new(),
                },
            ],
        );
        t.values = vec![vec![1.0, 2.0, 3.0, 4.0], vec![9.0; 4]];
        t
    }

    #[test]
    fn values_hold_the_last_sample_and_windows_are_inclusive() {
        let t = table();
        assert_eq!(t.value("T_out.01", 7), Some(2.0));
        assert_eq!(t.value("T_out.01", 100), Some(4.0));
        assert_eq!(t.value("T_out.01", -3), Some(1.0));
        assert_eq!(
            t.window("T_out.01", 5, 10),
            Some((vec![5, 10], vec![2.0, 3.0]))
        );
        assert_eq!(t.visible_names(), ["T_out.01"]);
        assert!(!t.is_visible("T_base.01"));
        assert_eq!(t.signals[1].family(), "T_base");
    }

    #[test]
    fn thinning_keeps_the_cap_and_the_latest_sample() {
        let times: Vec<i64> = (0..241).collect();
        let values: Vec<f64> = times.iter().map(|&t| t as f64).collect();
        let (t, v) = thin(times, values, 100);
        assert!(t.len() <= 100, "{}", t.len());
        assert_eq!(t.last(), Some(&240));
        assert_eq!(v.last(), Some(&240.0));
        assert!(t.windows(2).all(|w| w[0] < w[1]));
        let (t, _) = thin(vec![1, 2, 3], vec![0.0; 3], 100);
        assert_eq!(t, [1, 2, 3]);
    }
}
