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

/// One bar with an interval: a stack's win rate and its Wilson interval.
#[derive(Clone, Debug, PartialEq)]
pub struct Bar {
    /// The bar's label.
    pub label: String,
    /// The value, in [0, 1].
    pub value: f64,
    /// The interval's lower bound.
    pub lo: f64,
    /// The interval's upper bound.
    pub hi: f64,
}

/// A signed effect for one instance, e.g. a board's change of mean F1 when a layer is added.
#[derive(Clone, Debug, PartialEq)]
pub struct Effect {
    /// The instance's label.
    pub label: String,
    /// The signed effect.
    pub value: f64,
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
    let _ = writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height}\" \
         viewBox=\"0 0 {WIDTH} {height}\">"
    );
    let _ = writeln!(out, "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>");
    let _ = writeln!(
        out,
        "<text x=\"{}\" y=\"28\" text-anchor=\"middle\" font-size=\"16\" {FONT}>{}</text>",
        WIDTH / 2.0,
        escape(title)
    );
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

/// A vertical bar chart of values in [0, 1] with interval whiskers (per-stack win rates).
pub fn bars_with_intervals(title: &str, y_label: &str, bars: &[Bar]) -> String {
    let height = 400.0;
    let plot_h = height - MARGIN_TOP - MARGIN_BOTTOM;
    let plot_w = WIDTH - MARGIN_LEFT - MARGIN_RIGHT;
    let y = |value: f64| MARGIN_TOP + plot_h * (1.0 - value.clamp(0.0, 1.0));
    let mut out = String::new();
    header(&mut out, height, title);
    for step in 0..=10 {
        let value = f64::from(step) / 10.0;
        let _ = writeln!(
            out,
            "<line x1=\"{MARGIN_LEFT}\" x2=\"{}\" y1=\"{y0:.1}\" y2=\"{y0:.1}\" stroke=\"#e5e5e5\"/>\
             <text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\" font-size=\"11\" {FONT}>{value:.1}</text>",
            MARGIN_LEFT + plot_w,
            MARGIN_LEFT - 6.0,
            y(value) + 4.0,
            y0 = y(value),
        );
    }
    let _ = writeln!(
        out,
        "<text transform=\"translate(24 {:.1}) rotate(-90)\" text-anchor=\"middle\" font-size=\"12\" \
         {FONT}>{}</text>",
        MARGIN_TOP + plot_h / 2.0,
        escape(y_label)
    );
    let slot = plot_w / bars.len().max(1) as f64;
    for (index, bar) in bars.iter().enumerate() {
        let centre = MARGIN_LEFT + slot * (index as f64 + 0.5);
        let bar_w = (slot * 0.5).min(80.0);
        let _ = writeln!(
            out,
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{bar_w:.1}\" height=\"{:.1}\" fill=\"{POSITIVE}\" \
             opacity=\"0.85\"/>",
            centre - bar_w / 2.0,
            y(bar.value),
            y(0.0) - y(bar.value),
        );
        let (lo, hi) = (y(bar.lo), y(bar.hi));
        let _ = writeln!(
            out,
            "<g stroke=\"{NEUTRAL}\" stroke-width=\"1.5\"><line x1=\"{centre:.1}\" x2=\"{centre:.1}\" \
             y1=\"{lo:.1}\" y2=\"{hi:.1}\"/><line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{lo:.1}\" y2=\"{lo:.1}\"/>\
             <line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{hi:.1}\" y2=\"{hi:.1}\"/></g>",
            centre - 8.0,
            centre + 8.0,
            centre - 8.0,
            centre + 8.0,
        );
        let _ = writeln!(
            out,
            "<text x=\"{centre:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"11\" {FONT}>{:.1}%</text>",
            hi - 6.0,
            bar.value * 100.0,
        );
        // A label wider than its slot (such as `without reflection` among six bars) would run
        // into its neighbours, so it is broken into lines at spaces.
        for (line, text) in wrap(&bar.label, slot).iter().enumerate() {
            let _ = writeln!(
                out,
                "<text x=\"{centre:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"12\" {FONT}>{}</text>",
                y(0.0) + 20.0 + 14.0 * line as f64,
                escape(text),
            );
        }
    }
    out.push_str("</svg>\n");
    out
}

/// A horizontal bar chart of signed effects, one row per instance (the paper's Figure 3).
pub fn signed_effects(title: &str, x_label: &str, effects: &[Effect]) -> String {
    let row_h = 20.0;
    let height = MARGIN_TOP + MARGIN_BOTTOM + row_h * effects.len().max(1) as f64;
    let plot_w = WIDTH - MARGIN_LEFT - MARGIN_RIGHT;
    let largest = effects
        .iter()
        .map(|effect| effect.value.abs())
        .filter(|value| value.is_finite())
        .fold(0.0_f64, f64::max);
    let (step, steps) = symmetric_ticks(largest);
    let extent = step * f64::from(steps);
    let decimals = decimals_of(step);
    let x = |value: f64| {
        MARGIN_LEFT + plot_w * (value.clamp(-extent, extent) + extent) / (2.0 * extent)
    };
    let mut out = String::new();
    header(&mut out, height, title);
    let bottom = height - MARGIN_BOTTOM;
    for tick in -steps..=steps {
        let value = step * f64::from(tick);
        let label = if tick == 0 {
            "0".to_string()
        } else {
            format!("{value:+.decimals$}")
        };
        let _ = writeln!(
            out,
            "<line x1=\"{x0:.1}\" x2=\"{x0:.1}\" y1=\"{MARGIN_TOP}\" y2=\"{bottom:.1}\" stroke=\"{}\"/>\
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
        let top = MARGIN_TOP + row_h * index as f64 + 3.0;
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
        let _ = writeln!(
            out,
            "<rect x=\"{from:.1}\" y=\"{top:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{colour}\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" font-size=\"11\" {FONT}>{}</text>",
            (to - from).max(0.5),
            row_h - 6.0,
            MARGIN_LEFT - 6.0,
            top + row_h - 9.0,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn count(haystack: &str, needle: &str) -> usize {
        haystack.matches(needle).count()
    }

    #[test]
    fn bars_draw_one_bar_and_one_whisker_per_stack() {
        let bars = vec![
            Bar {
                label: "L1".into(),
                value: 0.5,
                lo: 0.371,
                hi: 0.629,
            },
            Bar {
                label: "L1-L2 <planning>".into(),
                value: 0.741,
                lo: 0.611,
                hi: 0.839,
            },
        ];
        let svg = bars_with_intervals("Win rate", "win rate", &bars);
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert_eq!(count(&svg, "opacity=\"0.85\""), 2);
        assert_eq!(count(&svg, "stroke-width=\"1.5\""), 2);
        assert!(svg.contains("74.1%"));
        assert!(svg.contains("&lt;planning&gt;"), "labels are escaped");
    }

    #[test]
    fn effects_are_coloured_by_sign() {
        let effects = vec![
            Effect {
                label: "B01".into(),
                value: 0.1,
            },
            Effect {
                label: "B02".into(),
                value: -0.05,
            },
            Effect {
                label: "B03".into(),
                value: 0.0,
            },
        ];
        let svg = signed_effects("F1 effect of planning", "ΔF1", &effects);
        assert_eq!(count(&svg, &format!("fill=\"{POSITIVE}\"")), 2);
        assert_eq!(count(&svg, &format!("fill=\"{NEGATIVE}\"")), 1);
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
            "x",
            &[Effect {
                label: "B01".into(),
                value: -0.1864,
            }],
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
        let bars: Vec<Bar> = [
            "L1",
            "L1-L2",
            "L1-L3",
            "L1-L4",
            "without belief",
            "without planning",
        ]
        .iter()
        .map(|label| Bar {
            label: label.to_string(),
            value: 0.5,
            lo: 0.4,
            hi: 0.6,
        })
        .collect();
        let svg = bars_with_intervals("t", "y", &bars);
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
