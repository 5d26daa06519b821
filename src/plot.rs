//! SVG plots for experiment reports: rates with intervals, per-instance effects, series.
//!
//! The plots are small and fixed in shape, so they are written as SVG text directly rather than
//! through a plotting crate (see `docs/decisions/0004-hand-written-svg.md`). Every function is
//! pure: it returns the document, and the caller writes it.

use std::fmt::Write;

const WIDTH: f64 = 720.0;
const MARGIN_LEFT: f64 = 90.0;
const MARGIN_RIGHT: f64 = 30.0;
const MARGIN_TOP: f64 = 50.0;
const MARGIN_BOTTOM: f64 = 60.0;
const FONT: &str = "font-family=\"Helvetica, Arial, sans-serif\"";
const POSITIVE: &str = "#2b7bb9";
const NEGATIVE: &str = "#d95f02";
const NEUTRAL: &str = "#555555";

/// One bar with an interval: an arm's value of one metric, its 95% interval and how many
/// episodes it rests on.
#[derive(Clone, Debug, PartialEq)]
pub struct Bar {
    /// The value.
    pub value: f64,
    /// The interval's lower bound.
    pub lo: f64,
    /// The interval's upper bound.
    pub hi: f64,
    /// The episodes behind the value.
    pub n: usize,
}

/// Bars that share a label: one arm, with one bar per overlaid run (`None` where a run has no
/// such arm).
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    /// The arm's label.
    pub label: String,
    /// One bar per series, in series order.
    pub bars: Vec<Option<Bar>>,
}

/// One panel of [`panels`]: one metric over the groups.
#[derive(Clone, Debug, PartialEq)]
pub struct Panel {
    /// The metric's axis label.
    pub axis: String,
    /// Whether the values are rates in [0, 1], drawn as percentages on a fixed axis.
    pub rate: bool,
    /// The groups, left to right.
    pub groups: Vec<Group>,
}

/// A signed effect for one instance with its interval, e.g. an instance's paired change of a
/// mean score when a layer is added.
#[derive(Clone, Debug, PartialEq)]
pub struct Effect {
    /// The instance's label.
    pub label: String,
    /// The signed effect.
    pub value: f64,
    /// The interval's lower bound.
    pub lo: f64,
    /// The interval's upper bound.
    pub hi: f64,
}

/// A mean with its interval, drawn over per-instance effects as a line and a band.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mean {
    /// The estimate.
    pub value: f64,
    /// The interval's lower bound.
    pub lo: f64,
    /// The interval's upper bound.
    pub hi: f64,
}

/// One point of a per-turn trace.
#[derive(Clone, Debug, PartialEq)]
pub struct TracePoint {
    /// The turn.
    pub turn: u32,
    /// The traced value, e.g. the reflective confidence.
    pub value: f64,
    /// Whether the gate was open on this turn.
    pub gate_open: bool,
    /// Whether a revision was applied on this turn.
    pub revised: bool,
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn header(out: &mut String, height: f64, title: &str) {
    header_sized(out, WIDTH, height, title, "");
}

/// The document's opening: its size, a white ground, the title and, when given, a subtitle
/// under it (what the figure's series differ in, what they share).
fn header_sized(out: &mut String, width: f64, height: f64, title: &str, subtitle: &str) {
    let _ = writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
         viewBox=\"0 0 {width} {height}\">"
    );
    let _ = writeln!(out, "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>");
    let _ = writeln!(
        out,
        "<text x=\"{}\" y=\"26\" text-anchor=\"middle\" font-size=\"16\" {FONT}>{}</text>",
        width / 2.0,
        escape(title)
    );
    if !subtitle.is_empty() {
        let _ = writeln!(
            out,
            "<text x=\"{}\" y=\"46\" text-anchor=\"middle\" font-size=\"12\" fill=\"{NEUTRAL}\" \
             {FONT}>{}</text>",
            width / 2.0,
            escape(subtitle)
        );
    }
}

/// A "nice" tick step (1, 2 or 5 times a power of ten) and the number of steps on each side of
/// zero so that `step * steps` covers `largest` with a little room. Odd steps such as 0.0513
/// make an axis hard to read, which is why the extent is rounded up to whole steps.
fn symmetric_ticks(largest: f64) -> (f64, i32) {
    if largest <= 1e-12 {
        return (0.01, 1);
    }
    let raw = largest / 4.0;
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = match raw / magnitude {
        n if n <= 1.0 => 1.0,
        n if n <= 2.0 => 2.0,
        n if n <= 5.0 => 5.0,
        _ => 10.0,
    } * magnitude;
    let mut steps = (largest / step).ceil().max(1.0) as i32;
    // A bar that ends on the frame reads as clipped; leave a step's worth of room instead.
    if largest / (step * f64::from(steps)) > 0.97 {
        steps += 1;
    }
    (step, steps)
}

/// The decimals that show a tick step exactly (0.05 → 2, 0.2 → 1, 5 → 0).
fn decimals_of(step: f64) -> usize {
    (-step.log10().floor()).max(0.0) as usize
}

/// Breaks a label into lines at spaces so that each fits `width` pixels at 12 px (about 7 px a
/// character in Helvetica); a single word longer than that stays whole.
fn wrap(label: &str, width: f64) -> Vec<String> {
    let fits = ((width - 6.0) / 7.0).max(1.0) as usize;
    let mut lines: Vec<String> = Vec::new();
    for word in label.split_whitespace() {
        match lines.last_mut() {
            Some(line) if line.chars().count() + 1 + word.chars().count() <= fits => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines
}

/// The colours of overlaid series, in order; a series past the last reuses them.
const SERIES: [&str; 6] = [
    POSITIVE, NEGATIVE, "#1b9e77", "#7570b3", "#e7298a", "#66a61e",
];

/// Where the plot area of a titled figure starts: below the title, and below the subtitle
/// when there is one.
fn plot_top(subtitle: &str) -> f64 {
    if subtitle.is_empty() {
        MARGIN_TOP
    } else {
        MARGIN_TOP + 14.0
    }
}

/// Bar charts side by side, one panel per metric (such as the primary success rate and a
/// secondary mean), one group of bars per arm and one bar per series (overlaid runs). Each bar
/// has its interval as a whisker and its episode count under it; with more than one series, a
/// legend names them. Rates share a fixed [0, 1] axis drawn in percent; other metrics get an
/// axis from zero to their largest upper bound.
pub fn panels(title: &str, subtitle: &str, series: &[String], panels: &[Panel]) -> String {
    let count = panels.len().max(1);
    let groups = panels
        .iter()
        .map(|p| p.groups.len())
        .max()
        .unwrap_or(1)
        .max(1);
    let per_group = series.len().max(1);
    // A panel is wide enough for its bars at about 26 px each plus gaps, and the figure never
    // narrower than the standard width.
    let panel_w = (groups as f64 * (per_group as f64 * 26.0 + 30.0))
        .max((WIDTH - MARGIN_LEFT - MARGIN_RIGHT) / count as f64 - 40.0);
    let gap = 70.0;
    let width = MARGIN_LEFT + MARGIN_RIGHT + panel_w * count as f64 + gap * (count - 1) as f64;
    let legend_h = if series.len() > 1 { 22.0 } else { 0.0 };
    let top = plot_top(subtitle) + legend_h;
    let plot_h = 280.0;
    let label_lines = panels
        .iter()
        .flat_map(|p| &p.groups)
        .map(|g| wrap(&g.label, panel_w / groups as f64).len())
        .max()
        .unwrap_or(1);
    let height = top + plot_h + 34.0 + 14.0 * label_lines as f64 + 16.0;
    let mut out = String::new();
    header_sized(&mut out, width, height, title, subtitle);
    if series.len() > 1 {
        let mut x = MARGIN_LEFT;
        for (index, name) in series.iter().enumerate() {
            let _ = writeln!(
                out,
                "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"12\" height=\"12\" fill=\"{}\"/>\
                 <text x=\"{:.1}\" y=\"{:.1}\" font-size=\"12\" {FONT}>{}</text>",
                top - legend_h - 4.0,
                SERIES[index % SERIES.len()],
                x + 16.0,
                top - legend_h + 6.0,
                escape(name),
            );
            x += 40.0 + 7.0 * name.chars().count() as f64;
        }
    }
    let bottom = top + plot_h;
    for (p, panel) in panels.iter().enumerate() {
        let left = MARGIN_LEFT + (panel_w + gap) * p as f64;
        let values = panel
            .groups
            .iter()
            .flat_map(|g| g.bars.iter().flatten())
            .flat_map(|b| [b.value, b.lo, b.hi])
            .filter(|v| v.is_finite());
        let (lo, hi) = if panel.rate {
            (0.0, 1.0)
        } else {
            let (lo, hi) = values.fold((0.0f64, 0.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
            let (step, _) = round_ticks(lo, hi);
            (
                (lo / step).floor() * step,
                ((hi / step).ceil() * step).max(lo + step),
            )
        };
        let y = |value: f64| {
            let value = if value.is_finite() { value } else { lo };
            top + plot_h * (1.0 - ((value - lo) / (hi - lo)).clamp(0.0, 1.0))
        };
        let (step, first) = if panel.rate {
            (0.1, 0.0)
        } else {
            round_ticks(lo, hi)
        };
        let mut tick = first;
        while tick <= hi + 1e-9 {
            let label = if panel.rate {
                format!("{:.0}%", tick * 100.0 + 0.0)
            } else {
                format!("{:.prec$}", tick + 0.0, prec = decimals_of(step))
            };
            let _ = writeln!(
                out,
                "<line x1=\"{left:.1}\" x2=\"{:.1}\" y1=\"{y0:.1}\" y2=\"{y0:.1}\" stroke=\"#e5e5e5\"/>\
                 <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" font-size=\"11\" {FONT}>{label}</text>",
                left + panel_w,
                left - 6.0,
                y(tick) + 4.0,
                y0 = y(tick),
            );
            tick += step;
        }
        let _ = writeln!(
            out,
            "<text transform=\"translate({:.1} {:.1}) rotate(-90)\" text-anchor=\"middle\" \
             font-size=\"12\" {FONT}>{}</text>",
            left - 52.0,
            top + plot_h / 2.0,
            escape(&panel.axis)
        );
        let slot = panel_w / panel.groups.len().max(1) as f64;
        let bar_w = ((slot - 16.0) / per_group as f64).clamp(6.0, 60.0);
        for (g, group) in panel.groups.iter().enumerate() {
            let centre = left + slot * (g as f64 + 0.5);
            for (s, bar) in group.bars.iter().enumerate() {
                let Some(bar) = bar else { continue };
                let x = centre + bar_w * (s as f64 - per_group as f64 / 2.0);
                let mid = x + bar_w / 2.0;
                let base = y(0.0f64.clamp(lo, hi));
                let (from, to) = (y(bar.value).min(base), y(bar.value).max(base));
                let _ = writeln!(
                    out,
                    "<rect x=\"{x:.1}\" y=\"{from:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{}\" \
                     opacity=\"0.85\"/>",
                    (bar_w - 2.0).max(1.0),
                    (to - from).max(0.5),
                    SERIES[s % SERIES.len()],
                );
                let (wlo, whi) = (y(bar.lo), y(bar.hi));
                let half = (bar_w / 4.0).min(8.0);
                let _ = writeln!(
                    out,
                    "<g stroke=\"{NEUTRAL}\" stroke-width=\"1.5\"><line x1=\"{mid:.1}\" x2=\"{mid:.1}\" \
                     y1=\"{wlo:.1}\" y2=\"{whi:.1}\"/><line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{wlo:.1}\" \
                     y2=\"{wlo:.1}\"/><line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{whi:.1}\" y2=\"{whi:.1}\"/></g>",
                    mid - half,
                    mid + half,
                    mid - half,
                    mid + half,
                );
                // One series has room for the value above its whisker; overlays would crowd.
                if per_group == 1 {
                    let value = if panel.rate {
                        format!("{:.1}%", bar.value * 100.0)
                    } else {
                        format!("{:.3}", bar.value)
                    };
                    let _ = writeln!(
                        out,
                        "<text x=\"{mid:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"11\" \
                         {FONT}>{value}</text>",
                        whi.min(from) - 6.0,
                    );
                }
                let _ = writeln!(
                    out,
                    "<text x=\"{mid:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"9\" \
                     fill=\"{NEUTRAL}\" {FONT}>n={}</text>",
                    bottom + 12.0,
                    bar.n,
                );
            }
            // A label wider than its slot (such as `without reflection` among six arms) would
            // run into its neighbours, so it is broken into lines at spaces.
            for (line, text) in wrap(&group.label, slot).iter().enumerate() {
                let _ = writeln!(
                    out,
                    "<text x=\"{centre:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"12\" \
                     {FONT}>{}</text>",
                    bottom + 30.0 + 14.0 * line as f64,
                    escape(text),
                );
            }
        }
    }
    out.push_str("</svg>\n");
    out
}

/// A horizontal chart of signed effects with their intervals, one row per instance in the
/// given order (sort before calling), and the mean effect with its interval as a dashed line
/// over a band (the paper's Figure 3 with error bars).
pub fn signed_effects(
    title: &str,
    subtitle: &str,
    x_label: &str,
    effects: &[Effect],
    mean: Option<Mean>,
) -> String {
    let row_h = 20.0;
    let top = plot_top(subtitle) + if mean.is_some() { 16.0 } else { 0.0 };
    let height = top + MARGIN_BOTTOM + row_h * effects.len().max(1) as f64;
    let plot_w = WIDTH - MARGIN_LEFT - MARGIN_RIGHT;
    let largest = effects
        .iter()
        .flat_map(|effect| [effect.value, effect.lo, effect.hi])
        .chain(mean.iter().flat_map(|m| [m.value, m.lo, m.hi]))
        .map(f64::abs)
        .filter(|value| value.is_finite())
        .fold(0.0_f64, f64::max);
    let (step, steps) = symmetric_ticks(largest);
    let extent = step * f64::from(steps);
    let decimals = decimals_of(step);
    let x = |value: f64| {
        let value = if value.is_finite() { value } else { 0.0 };
        MARGIN_LEFT + plot_w * (value.clamp(-extent, extent) + extent) / (2.0 * extent)
    };
    let mut out = String::new();
    header_sized(&mut out, WIDTH, height, title, subtitle);
    let bottom = height - MARGIN_BOTTOM;
    if let Some(mean) = mean {
        let _ = writeln!(
            out,
            "<rect x=\"{:.1}\" y=\"{top:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{NEUTRAL}\" \
             opacity=\"0.12\"/><line x1=\"{m:.1}\" x2=\"{m:.1}\" y1=\"{top:.1}\" y2=\"{bottom:.1}\" \
             stroke=\"{NEUTRAL}\" stroke-width=\"1.5\" stroke-dasharray=\"5 3\"/>\
             <text x=\"{m:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"11\" {FONT}>mean \
             {:+.prec$} [{:+.prec$}, {:+.prec$}]</text>",
            x(mean.lo),
            (x(mean.hi) - x(mean.lo)).max(0.5),
            bottom - top,
            top - 6.0,
            mean.value,
            mean.lo,
            mean.hi,
            m = x(mean.value),
            prec = decimals + 2,
        );
    }
    for tick in -steps..=steps {
        let value = step * f64::from(tick);
        let label = if tick == 0 {
            "0".to_string()
        } else {
            format!("{value:+.decimals$}")
        };
        let _ = writeln!(
            out,
            "<line x1=\"{x0:.1}\" x2=\"{x0:.1}\" y1=\"{top:.1}\" y2=\"{bottom:.1}\" stroke=\"{}\"/>\
             <text x=\"{x0:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"11\" {FONT}>{label}</text>",
            if tick == 0 { NEUTRAL } else { "#e5e5e5" },
            bottom + 16.0,
            x0 = x(value),
        );
    }
    let _ = writeln!(
        out,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"12\" {FONT}>{}</text>",
        MARGIN_LEFT + plot_w / 2.0,
        bottom + 40.0,
        escape(x_label)
    );
    for (index, effect) in effects.iter().enumerate() {
        let row = top + row_h * index as f64;
        let (from, to) = if effect.value >= 0.0 {
            (x(0.0), x(effect.value))
        } else {
            (x(effect.value), x(0.0))
        };
        let colour = if effect.value >= 0.0 {
            POSITIVE
        } else {
            NEGATIVE
        };
        let (wlo, whi, mid) = (x(effect.lo), x(effect.hi), row + row_h / 2.0);
        let _ = writeln!(
            out,
            "<rect x=\"{from:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{colour}\"/>\
             <g stroke=\"{NEUTRAL}\" stroke-width=\"1.2\"><line x1=\"{wlo:.1}\" x2=\"{whi:.1}\" \
             y1=\"{mid:.1}\" y2=\"{mid:.1}\"/><line x1=\"{wlo:.1}\" x2=\"{wlo:.1}\" y1=\"{:.1}\" \
             y2=\"{:.1}\"/><line x1=\"{whi:.1}\" x2=\"{whi:.1}\" y1=\"{:.1}\" y2=\"{:.1}\"/></g>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" font-size=\"11\" {FONT}>{}</text>",
            row + 3.0,
            (to - from).max(0.5),
            row_h - 6.0,
            mid - 4.0,
            mid + 4.0,
            mid - 4.0,
            mid + 4.0,
            MARGIN_LEFT - 6.0,
            row + row_h - 6.0,
            escape(&effect.label),
        );
    }
    out.push_str("</svg>\n");
    out
}

/// A per-turn line of a value with an optional reference line (a threshold), gate openings
/// (shaded turns) and revisions (markers): for example a reflective layer's confidence. The
/// axis spans [0, 1] when every value and the reference fit in it, else their range.
pub fn series(
    title: &str,
    y_label: &str,
    reference: Option<(&str, f64)>,
    points: &[TracePoint],
) -> String {
    let height = 360.0;
    let plot_h = height - MARGIN_TOP - MARGIN_BOTTOM;
    let plot_w = WIDTH - MARGIN_LEFT - MARGIN_RIGHT;
    let last_turn = points
        .iter()
        .map(|point| point.turn)
        .max()
        .unwrap_or(1)
        .max(1);
    let values = points
        .iter()
        .map(|point| point.value)
        .chain(reference.map(|(_, r)| r));
    let (lo, hi) = values.fold((0.0f64, 1.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let span = (hi - lo).max(f64::MIN_POSITIVE);
    let x = |turn: u32| MARGIN_LEFT + plot_w * f64::from(turn) / f64::from(last_turn);
    let y = |value: f64| MARGIN_TOP + plot_h * (1.0 - ((value - lo) / span).clamp(0.0, 1.0));
    let column = plot_w / f64::from(last_turn);
    let mut out = String::new();
    header(&mut out, height, title);
    for point in points.iter().filter(|point| point.gate_open) {
        let _ = writeln!(
            out,
            "<rect x=\"{:.1}\" y=\"{MARGIN_TOP}\" width=\"{column:.1}\" height=\"{plot_h:.1}\" \
             fill=\"{NEGATIVE}\" opacity=\"0.12\"/>",
            x(point.turn) - column / 2.0,
        );
    }
    for step in 0..=5 {
        let value = lo + span * f64::from(step) / 5.0;
        let _ = writeln!(
            out,
            "<line x1=\"{MARGIN_LEFT}\" x2=\"{:.1}\" y1=\"{y0:.1}\" y2=\"{y0:.1}\" stroke=\"#e5e5e5\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" font-size=\"11\" {FONT}>{value:.2}</text>",
            MARGIN_LEFT + plot_w,
            MARGIN_LEFT - 6.0,
            y(value) + 4.0,
            y0 = y(value),
        );
    }
    // The reference's label sits in a legend above the plot: placed beside the line it would be
    // crossed whenever the value passes the reference near that end of the episode.
    if let Some((label, reference)) = reference {
        let legend_y = MARGIN_TOP - 8.0;
        let right = MARGIN_LEFT + plot_w;
        let _ = writeln!(
            out,
            "<line x1=\"{MARGIN_LEFT}\" x2=\"{right:.1}\" y1=\"{t:.1}\" y2=\"{t:.1}\" stroke=\"{NEGATIVE}\" \
             stroke-dasharray=\"6 4\"/><line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" \
             stroke=\"{NEGATIVE}\" stroke-dasharray=\"6 4\"/><text x=\"{right:.1}\" y=\"{legend_y:.1}\" \
             text-anchor=\"end\" font-size=\"11\" fill=\"{NEGATIVE}\" {FONT}>{} {reference:.2}</text>",
            right - 112.0 - 6.0 * label.len() as f64,
            right - 88.0 - 6.0 * label.len() as f64,
            legend_y - 4.0,
            legend_y - 4.0,
            escape(label),
            t = y(reference),
        );
    }
    let _ = writeln!(
        out,
        "<text transform=\"translate(24 {:.1}) rotate(-90)\" text-anchor=\"middle\" font-size=\"12\" \
         {FONT}>{}</text>",
        MARGIN_TOP + plot_h / 2.0,
        escape(y_label),
    );
    let path: Vec<String> = points
        .iter()
        .map(|point| format!("{:.1},{:.1}", x(point.turn), y(point.value)))
        .collect();
    let _ = writeln!(
        out,
        "<polyline points=\"{}\" fill=\"none\" stroke=\"{POSITIVE}\" stroke-width=\"2\"/>",
        path.join(" ")
    );
    for point in points.iter().filter(|point| point.revised) {
        let _ = writeln!(
            out,
            "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"5\" fill=\"{NEGATIVE}\"/>",
            x(point.turn),
            y(point.value)
        );
    }
    let bottom = height - MARGIN_BOTTOM;
    // Every fifth turn is labelled, or fewer on long games so that labels never touch.
    let label_step = 5 * last_turn.div_ceil(60).max(1);
    for turn in (0..=last_turn).step_by(label_step as usize) {
        let _ = writeln!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"11\" {FONT}>{turn}</text>",
            x(turn),
            bottom + 16.0
        );
    }
    let _ = writeln!(
        out,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"12\" {FONT}>turn \
         (shaded: revision gate open; dots: revision applied)</text>",
        MARGIN_LEFT + plot_w / 2.0,
        bottom + 40.0
    );
    out.push_str("</svg>\n");
    out
}

/// A round tick step (1, 2 or 5 times a power of ten) giving four to ten ticks over
/// `[lo, hi]`, and the first tick at or above `lo`.
fn round_ticks(lo: f64, hi: f64) -> (f64, f64) {
    let raw = ((hi - lo) / 5.0).max(1e-9);
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = match raw / magnitude {
        n if n <= 1.0 => 1.0,
        n if n <= 2.0 => 2.0,
        n if n <= 5.0 => 5.0,
        _ => 10.0,
    } * magnitude;
    (step, (lo / step - 1e-9).ceil() * step)
}

/// One policy of an accuracy–cost trade-off: its cost relative to a reference, its score and
/// spread.
#[derive(Clone, Debug, PartialEq)]
pub struct TradeOff {
    /// The policy's label.
    pub label: String,
    /// Its cost relative to the reference (1 = the reference's).
    pub cost: f64,
    /// Its score, in [0, 1].
    pub value: f64,
    /// The ± spread drawn as a whisker.
    pub spread: f64,
    /// Drawn hollow and kept off the frontier (an oracle: a ceiling, not a choice).
    pub hollow: bool,
}

/// The Pareto frontier of the filled points: cheapest first, each strictly better than every
/// cheaper one.
fn frontier(points: &[TradeOff]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..points.len()).filter(|&i| !points[i].hollow).collect();
    order.sort_by(|&a, &b| {
        points[a]
            .cost
            .total_cmp(&points[b].cost)
            .then(points[b].value.total_cmp(&points[a].value))
    });
    let mut best = f64::NEG_INFINITY;
    order
        .into_iter()
        .filter(|&i| {
            let better = points[i].value > best + 1e-12;
            if better {
                best = points[i].value;
            }
            better
        })
        .collect()
}

/// An accuracy–cost scatter of policies with the Pareto frontier of the filled points dashed
/// (the MCI paper's Figure 4). The axes span the data with a margin; the reference cost 1 is a
/// dotted vertical line.
pub fn trade_off(title: &str, x_label: &str, y_label: &str, points: &[TradeOff]) -> String {
    let height = 420.0;
    let plot_h = height - MARGIN_TOP - MARGIN_BOTTOM;
    let plot_w = WIDTH - MARGIN_LEFT - MARGIN_RIGHT - 90.0;
    let finite = |v: f64| if v.is_finite() { v } else { 0.0 };
    let (x_lo, x_hi) = points
        .iter()
        .map(|p| finite(p.cost))
        .chain([1.0])
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    let (y_lo, y_hi) = points
        .iter()
        .flat_map(|p| [finite(p.value - p.spread), finite(p.value + p.spread)])
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    let pad = |lo: f64, hi: f64, floor: f64| {
        let span = (hi - lo).max(0.05);
        ((lo - 0.1 * span).max(floor), hi + 0.1 * span)
    };
    let (x_lo, x_hi) = pad(x_lo, x_hi, 0.0);
    let (y_lo, y_hi) = pad(y_lo, y_hi, 0.0);
    let x = |v: f64| MARGIN_LEFT + plot_w * (finite(v) - x_lo) / (x_hi - x_lo);
    let y = |v: f64| MARGIN_TOP + plot_h * (1.0 - (finite(v) - y_lo) / (y_hi - y_lo));
    let mut out = String::new();
    header(&mut out, height, title);
    let (y_step, y_first) = round_ticks(y_lo, y_hi);
    let mut v = y_first;
    while v <= y_hi + 1e-9 {
        let _ = writeln!(
            out,
            "<line x1=\"{MARGIN_LEFT}\" x2=\"{:.1}\" y1=\"{y0:.1}\" y2=\"{y0:.1}\" stroke=\"#e5e5e5\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" font-size=\"11\" {FONT}>{v:.prec$}</text>",
            MARGIN_LEFT + plot_w,
            MARGIN_LEFT - 6.0,
            y(v) + 4.0,
            y0 = y(v),
            prec = decimals_of(y_step),
        );
        v += y_step;
    }
    let (x_step, x_first) = round_ticks(x_lo, x_hi);
    let mut u = x_first;
    while u <= x_hi + 1e-9 {
        let _ = writeln!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"11\" {FONT}>{u:.prec$}</text>",
            x(u),
            MARGIN_TOP + plot_h + 16.0,
            prec = decimals_of(x_step),
        );
        u += x_step;
    }
    let _ = writeln!(
        out,
        "<line x1=\"{x1:.1}\" x2=\"{x1:.1}\" y1=\"{MARGIN_TOP}\" y2=\"{:.1}\" stroke=\"{NEUTRAL}\" \
         stroke-dasharray=\"2 3\"/>",
        MARGIN_TOP + plot_h,
        x1 = x(1.0),
    );
    let _ = writeln!(
        out,
        "<text transform=\"translate(24 {:.1}) rotate(-90)\" text-anchor=\"middle\" font-size=\"12\" \
         {FONT}>{}</text><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"12\" \
         {FONT}>{}</text>",
        MARGIN_TOP + plot_h / 2.0,
        escape(y_label),
        MARGIN_LEFT + plot_w / 2.0,
        height - MARGIN_BOTTOM + 40.0,
        escape(x_label),
    );
    let path: Vec<String> = frontier(points)
        .into_iter()
        .map(|i| format!("{:.1},{:.1}", x(points[i].cost), y(points[i].value)))
        .collect();
    let _ = writeln!(
        out,
        "<polyline points=\"{}\" fill=\"none\" stroke=\"{NEGATIVE}\" stroke-width=\"1.5\" \
         stroke-dasharray=\"6 4\"/>",
        path.join(" ")
    );
    for point in points {
        let (cx, cy) = (x(point.cost), y(point.value));
        if point.spread > 0.0 {
            let _ = writeln!(
                out,
                "<line x1=\"{cx:.1}\" x2=\"{cx:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"{NEUTRAL}\" \
                 stroke-width=\"1.5\"/>",
                y(point.value - point.spread),
                y(point.value + point.spread),
            );
        }
        let fill = if point.hollow { "white" } else { POSITIVE };
        let _ = writeln!(
            out,
            "<circle cx=\"{cx:.1}\" cy=\"{cy:.1}\" r=\"5\" fill=\"{fill}\" stroke=\"{POSITIVE}\" \
             stroke-width=\"1.5\"/><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" {FONT}>{}</text>",
            cx + 8.0,
            cy + 4.0,
            escape(&point.label),
        );
    }
    out.push_str("</svg>\n");
    out
}

/// A heat map of values in [0, 1], rows by columns, with at most one outlined cell per row (the
/// MCI paper's Figure 3: classes by levels, the floor outlined). A missing value is a grey cell.
pub fn heat_map(
    title: &str,
    rows: &[String],
    columns: &[String],
    values: &[Vec<Option<f64>>],
    marked: &[Option<usize>],
) -> String {
    let cell_w = 80.0;
    let cell_h = 26.0;
    let left = 110.0;
    let height = MARGIN_TOP + 30.0 + cell_h * rows.len() as f64 + 40.0;
    let mut out = String::new();
    header(&mut out, height, title);
    let top = MARGIN_TOP + 20.0;
    for (k, column) in columns.iter().enumerate() {
        let _ = writeln!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"12\" {FONT}>{}</text>",
            left + cell_w * (k as f64 + 0.5),
            top - 6.0,
            escape(column),
        );
    }
    for (i, row) in rows.iter().enumerate() {
        let ry = top + cell_h * i as f64;
        let _ = writeln!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" font-size=\"12\" {FONT}>{}</text>",
            left - 8.0,
            ry + cell_h / 2.0 + 4.0,
            escape(row),
        );
        for k in 0..columns.len() {
            let value = values.get(i).and_then(|r| r.get(k)).copied().flatten();
            let cx = left + cell_w * k as f64;
            // White at 0 to the positive colour at 1; text flips to white on dark cells.
            let (fill, ink, text) = match value {
                Some(v) => {
                    let v = v.clamp(0.0, 1.0);
                    let mix = |full: u8| (255.0 - (255.0 - f64::from(full)) * v).round() as u8;
                    (
                        format!("#{:02x}{:02x}{:02x}", mix(0x2b), mix(0x7b), mix(0xb9)),
                        if v > 0.6 { "white" } else { "black" },
                        format!("{v:.2}"),
                    )
                }
                None => ("#dddddd".to_string(), "black", "—".to_string()),
            };
            let _ = writeln!(
                out,
                "<rect x=\"{cx:.1}\" y=\"{ry:.1}\" width=\"{cell_w}\" height=\"{cell_h}\" \
                 fill=\"{fill}\" stroke=\"white\"/><text x=\"{:.1}\" y=\"{:.1}\" \
                 text-anchor=\"middle\" font-size=\"11\" fill=\"{ink}\" {FONT}>{text}</text>",
                cx + cell_w / 2.0,
                ry + cell_h / 2.0 + 4.0,
            );
        }
        if let Some(k) = marked.get(i).copied().flatten() {
            let _ = writeln!(
                out,
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"none\" \
                 stroke=\"{NEGATIVE}\" stroke-width=\"3\"/>",
                left + cell_w * k as f64 + 1.5,
                ry + 1.5,
                cell_w - 3.0,
                cell_h - 3.0,
            );
        }
    }
    out.push_str("</svg>\n");
    out
}

/// How a finished figure is sized and set in type: `width` in pixels (the height follows the
/// figure's aspect ratio, so nothing is re-laid out) and a font family for all of its text.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Style {
    /// The width in pixels, when not the figure's own.
    pub width: Option<f64>,
    /// The font family (a CSS font-family list), when not the default sans-serif.
    pub font: Option<String>,
}

/// The figure `svg` (written by this module) with `style` applied: the root's size scaled and
/// every text's font family replaced. The view box is kept, so the drawing scales as a whole.
pub fn restyle(svg: &str, style: &Style) -> String {
    let mut out = svg.to_string();
    if let Some(width) = style.width {
        let attribute = |text: &str, name: &str| -> Option<(usize, usize, f64)> {
            let key = format!(" {name}=\"");
            let root_end = text.find('>')?;
            let start = text[..root_end].find(&key)? + key.len();
            let end = start + text[start..].find('"')?;
            Some((start, end, text[start..end].parse().ok()?))
        };
        if let (Some((ws, we, w)), Some((_, _, h))) =
            (attribute(&out, "width"), attribute(&out, "height"))
        {
            let height = h * width / w;
            out.replace_range(ws..we, &format!("{width}"));
            if let Some((hs, he, _)) = attribute(&out, "height") {
                out.replace_range(hs..he, &format!("{height:.1}"));
            }
        }
    }
    if let Some(font) = &style.font {
        out = out.replace(FONT, &format!("font-family=\"{}\"", escape(font)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(haystack: &str, needle: &str) -> usize {
        haystack.matches(needle).count()
    }

    fn bar(value: f64, n: usize) -> Bar {
        Bar {
            value,
            lo: value - 0.1,
            hi: value + 0.1,
            n,
        }
    }

    #[test]
    fn panels_draw_one_bar_whisker_and_count_per_arm_and_metric() {
        let panel = |axis: &str, rate: bool, values: [f64; 2]| Panel {
            axis: axis.into(),
            rate,
            groups: vec![
                Group {
                    label: "L1".into(),
                    bars: vec![Some(bar(values[0], 36))],
                },
                Group {
                    label: "L1-L2 <planning>".into(),
                    bars: vec![Some(bar(values[1], 35))],
                },
            ],
        };
        let svg = panels(
            "Solve rate and score by arm",
            "arms differ in layers",
            &["run".into()],
            &[
                panel("win rate", true, [0.5, 0.741]),
                panel("score", false, [0.4, 0.6]),
            ],
        );
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert_eq!(count(&svg, "opacity=\"0.85\""), 4);
        assert_eq!(count(&svg, "stroke-width=\"1.5\""), 4);
        assert!(svg.contains("74.1%") && svg.contains(">0.600<"));
        assert_eq!(count(&svg, ">n=36<"), 2);
        assert!(svg.contains("&lt;planning&gt;"), "labels are escaped");
        assert!(svg.contains(">arms differ in layers<"), "the subtitle");
        assert!(!svg.contains("height=\"12\""), "one series has no legend");
    }

    #[test]
    fn overlaid_runs_get_a_colour_each_and_a_legend() {
        let group = |label: &str, bars: Vec<Option<Bar>>| Group {
            label: label.into(),
            bars,
        };
        let svg = panels(
            "t",
            "",
            &["particles=100".into(), "particles=500".into()],
            &[Panel {
                axis: "win rate".into(),
                rate: true,
                groups: vec![
                    group("L1", vec![Some(bar(0.5, 10)), Some(bar(0.6, 10))]),
                    group("L1-L2", vec![None, Some(bar(0.7, 10))]),
                ],
            }],
        );
        assert_eq!(
            count(&svg, "opacity=\"0.85\""),
            3,
            "a missing arm draws nothing"
        );
        assert_eq!(count(&svg, &format!("fill=\"{}\" opacity", SERIES[1])), 2);
        assert!(
            svg.contains(">particles=500<"),
            "the legend names the series"
        );
        assert!(!svg.contains("60.0%"), "overlays carry no value labels");
    }

    #[test]
    fn effects_are_coloured_by_sign_with_whiskers_and_a_mean_band() {
        let effect = |label: &str, value: f64| Effect {
            label: label.into(),
            value,
            lo: value - 0.02,
            hi: value + 0.02,
        };
        let effects = vec![
            effect("n16-p10", 0.1),
            effect("n32-p10", -0.05),
            effect("n64-p15", 0.0),
        ];
        let mean = Mean {
            value: 0.0167,
            lo: -0.01,
            hi: 0.04,
        };
        let svg = signed_effects(
            "Score effect of planning",
            "",
            "Δscore",
            &effects,
            Some(mean),
        );
        assert_eq!(count(&svg, &format!("fill=\"{POSITIVE}\"")), 2);
        assert_eq!(count(&svg, &format!("fill=\"{NEGATIVE}\"")), 1);
        assert_eq!(
            count(&svg, "stroke-width=\"1.2\""),
            3,
            "a whisker per instance"
        );
        assert!(svg.contains("mean +0.0167 [-0.0100, +0.0400]"), "{svg}");
        assert!(svg.contains("stroke-dasharray=\"5 3\""), "the mean line");
    }

    #[test]
    fn restyling_scales_the_root_and_sets_the_font() {
        let svg = signed_effects("t", "", "x", &[], None);
        let styled = restyle(
            &svg,
            &Style {
                width: Some(1440.0),
                font: Some("DejaVu Serif".into()),
            },
        );
        let root = styled.lines().next().unwrap();
        assert!(root.contains("width=\"1440\""), "{root}");
        assert!(
            root.contains("height=\"260.0\""),
            "the aspect is kept: {root}"
        );
        assert!(root.contains("viewBox=\"0 0 720 130\""), "{root}");
        assert!(styled.contains("font-family=\"DejaVu Serif\"") && !styled.contains(FONT));
        assert_eq!(restyle(&svg, &Style::default()), svg);
    }

    #[test]
    fn a_trace_marks_gates_and_revisions() {
        let points: Vec<TracePoint> = (1..=10)
            .map(|turn| TracePoint {
                turn,
                value: f64::from(turn) / 10.0,
                gate_open: turn % 3 == 0,
                revised: turn == 6,
            })
            .collect();
        let svg = series(
            "Confidence",
            "reflection.confidence",
            Some(("confidence_threshold", 0.72)),
            &points,
        );
        assert_eq!(count(&svg, "opacity=\"0.12\""), 3);
        assert_eq!(count(&svg, "<circle"), 1);
        assert!(svg.contains("confidence_threshold 0.72"));
        let unbounded = series(
            "x",
            "x",
            None,
            &[TracePoint {
                turn: 1,
                value: 12.0,
                gate_open: false,
                revised: false,
            }],
        );
        assert!(unbounded.contains(">12.00<"), "the axis covers the data");
    }
    #[test]
    fn effect_ticks_are_round_numbers_covering_the_data() {
        assert_eq!(symmetric_ticks(0.1864), (0.05, 4));
        assert_eq!(decimals_of(0.05), 2);
        let (step, steps) = symmetric_ticks(0.2);
        assert!(
            (step - 0.05).abs() < 1e-12 && steps == 5,
            "room past a bar on a tick"
        );
        assert_eq!(symmetric_ticks(0.0), (0.01, 1));
        let svg = signed_effects(
            "t",
            "",
            "x",
            &[Effect {
                label: "n16-p10".into(),
                value: -0.1864,
                lo: -0.1864,
                hi: -0.1864,
            }],
            None,
        );
        assert!(svg.contains(">-0.20<") && svg.contains(">+0.15<") && svg.contains(">0<"));
    }
    #[test]
    fn long_bar_labels_wrap_at_spaces() {
        assert_eq!(
            wrap("without reflection", 100.0),
            vec!["without", "reflection"]
        );
        assert_eq!(wrap("L1-L3", 100.0), vec!["L1-L3"]);
        let groups: Vec<Group> = [
            "L1",
            "L1-L2",
            "L1-L3",
            "L1-L4",
            "without belief",
            "without planning",
        ]
        .iter()
        .map(|label| Group {
            label: label.to_string(),
            bars: vec![Some(bar(0.5, 1))],
        })
        .collect();
        let svg = panels(
            "t",
            "",
            &[],
            &[Panel {
                axis: "y".into(),
                rate: true,
                groups,
            }],
        );
        assert!(svg.contains(">without<") && svg.contains(">planning<"));
    }

    #[test]
    fn a_trade_off_draws_every_policy_and_the_frontier_of_the_filled_ones() {
        let point = |label: &str, cost: f64, value: f64, hollow: bool| TradeOff {
            label: label.into(),
            cost,
            value,
            spread: 0.01,
            hollow,
        };
        let points = vec![
            point("full", 1.0, 0.8, false),
            point("lookup", 0.6, 0.7, false),
            point("worse", 0.9, 0.65, false),
            point("oracle", 0.5, 0.9, true),
        ];
        assert_eq!(frontier(&points), [1, 0]);
        let svg = trade_off("t", "cost", "score", &points);
        assert_eq!(count(&svg, "<circle"), 4);
        assert_eq!(
            count(&svg, "fill=\"white\" stroke="),
            1,
            "the oracle is hollow"
        );
        assert_eq!(count(&svg, "<polyline"), 1);
        assert_eq!(round_ticks(0.11, 1.08), (0.2, 0.2));
        assert!(
            svg.contains(">0.7<") && svg.contains(">1.0<"),
            "round ticks"
        );
    }

    #[test]
    fn a_heat_map_outlines_one_cell_per_marked_row() {
        let svg = heat_map(
            "map",
            &["I-N-S".into(), "A-F-M".into()],
            &["k1".into(), "k2".into()],
            &[vec![Some(0.0), Some(1.0)], vec![None, Some(0.5)]],
            &[Some(1), None],
        );
        assert_eq!(count(&svg, "stroke-width=\"3\""), 1);
        assert!(svg.contains("#2b7bb9") && svg.contains("#ffffff") && svg.contains("#dddddd"));
    }
}
