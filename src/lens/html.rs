//! `harness report`: one self-contained HTML page of a run (and optionally a second run to
//! compare with): its settings, the arms with their intervals, the paired marginals, the
//! figures, a per-instance table and every episode's turns. No script and no network: the
//! figures are inline SVG and the drill-down is `<details>` elements.

use std::fmt::Write;
use std::path::Path;

use super::{Request, Run, View, show, turns};
use crate::games::Registry;

/// Episodes whose turns the page lists in full; beyond this the page says how many it left out.
const EPISODE_LIMIT: usize = 400;

/// The page for the run at `path`, with a comparison section when `compare` names another run.
pub fn page(registry: &Registry, path: &Path, compare: Option<&Path>) -> Result<String, String> {
    let run = Run::open(path)?;
    let manifest = run.folder.manifest();
    let report = &run.report;
    let mut out = String::new();
    let title = format!("{} on {}", manifest.module, manifest.game);
    let _ = write!(
        out,
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{}</h1>\n",
        escape(&format!("harness report: {title}")),
        escape(&title)
    );

    out.push_str("<section id=\"settings\">\n<h2>Settings</h2>\n<table>\n");
    let llm = manifest
        .llm
        .as_ref()
        .map_or("none".to_string(), |llm| llm.to_string());
    let settings = |pairs: &[(String, String)]| {
        if pairs.is_empty() {
            "none".to_string()
        } else {
            pairs
                .iter()
                .map(|(name, value)| format!("{name}={value}"))
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    let rows = [
        ("run", manifest.run_id.clone()),
        ("started", manifest.created.clone()),
        ("harness", manifest.harness.clone()),
        ("sources (SHA-256)", manifest.harness_hash.clone()),
        ("program", manifest.program_version.clone()),
        (
            "git commit",
            manifest
                .git_commit
                .clone()
                .unwrap_or_else(|| "unknown".into()),
        ),
        ("game options", settings(&manifest.game_options)),
        ("settings", settings(&manifest.settings)),
        ("LLM", llm),
        (
            "plan",
            format!(
                "{} arms × {} instances × {} seeds × {} replicates; {} of {} episodes finished",
                manifest.plan.arms.len(),
                manifest.plan.instances.len(),
                manifest.plan.seeds.len(),
                manifest.plan.replicates,
                report.finished,
                report.planned
            ),
        ),
        ("tags", manifest.tags.join(", ")),
    ];
    for (name, value) in rows {
        let _ = writeln!(
            out,
            "<tr><th>{}</th><td>{}</td></tr>",
            escape(name),
            escape(&value)
        );
    }
    out.push_str("</table>\n</section>\n");

    // The columns the terminal table shows: the game's metrics and the costs it declares
    // worth a column.
    let columns: Vec<usize> = (0..report.metrics.len())
        .filter(|&i| report.metrics[i].column)
        .collect();
    out.push_str("<section id=\"arms\">\n<h2>Arms</h2>\n<div class=\"wide\"><table class=\"data\">\n<tr><th>arm</th><th>layers</th><th>episodes</th>");
    for spec in columns.iter().map(|&i| &report.metrics[i]) {
        let _ = write!(
            out,
            "<th title=\"{}\">{}</th>",
            escape(&spec.doc),
            escape(&spec.label)
        );
    }
    out.push_str("</tr>\n");
    for arm in &report.arms {
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}/{}{}</td>",
            escape(&arm.arm),
            escape(&arm.layers.join(" + ")),
            arm.games,
            arm.planned,
            if arm.partial { " (partial)" } else { "" }
        );
        for summary in columns.iter().filter_map(|&i| arm.metrics.get(i)) {
            let v = &summary.value;
            let _ = write!(
                out,
                "<td>{} <span class=\"ci\">[{}, {}]</span></td>",
                number(v.estimate),
                number(v.lo),
                number(v.hi)
            );
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table></div>\n<p class=\"note\">Estimates with 95% intervals: Wilson for rates, bootstrap for means.</p>\n</section>\n");

    out.push_str("<section id=\"marginals\">\n<h2>Paired marginals</h2>\n");
    if report.marginals.is_empty() {
        out.push_str("<p>No marginal: one stack, or partial stacks.</p>\n");
    } else {
        out.push_str("<div class=\"wide\"><table class=\"data\">\n<tr><th>layer</th><th>treatment − baseline</th><th>pairs</th>");
        for spec in columns.iter().map(|&i| &report.metrics[i]) {
            let _ = write!(out, "<th>Δ {}</th>", escape(&spec.label));
        }
        out.push_str("</tr>\n");
        for marginal in &report.marginals {
            let pairs = marginal.contrasts.first().map_or(0, |c| c.pairs);
            let _ = write!(
                out,
                "<tr><td>{}</td><td>{} − {}</td><td>{pairs}</td>",
                escape(&marginal.layer),
                escape(&marginal.treatment),
                escape(&marginal.baseline)
            );
            for contrast in columns.iter().filter_map(|&i| marginal.contrasts.get(i)) {
                let d = &contrast.difference;
                let p = contrast
                    .p_value
                    .map_or(String::new(), |p| format!(" p={p:.4}"));
                let _ = write!(
                    out,
                    "<td>{} <span class=\"ci\">[{}, {}]{}</span></td>",
                    signed(d.estimate),
                    signed(d.lo),
                    signed(d.hi),
                    escape(&p)
                );
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</table></div>\n");
    }
    let text = crate::report::table(report);
    for line in text
        .lines()
        .filter(|l| l.starts_with("heavy lifting") || l.contains("rank the layers"))
    {
        let _ = writeln!(out, "<p class=\"verdict\">{}</p>", escape(line));
    }
    out.push_str("</section>\n");

    let view = |view: View, compare: Option<&Path>| Request {
        view,
        run: path.to_path_buf(),
        arm: None,
        episode: None,
        layer: None,
        metric: None,
        field: None,
        against: None,
        compare: compare.map(Path::to_path_buf),
        overlay: Vec::new(),
        max_turns: None,
    };
    let shown = show(registry, &view(View::Run, None))?;
    out.push_str("<section id=\"figures\">\n<h2>Figures</h2>\n");
    match &shown.svg {
        Some(svg) => {
            let _ = writeln!(out, "<figure>{svg}</figure>");
        }
        None => out.push_str("<p>This run has no figure.</p>\n"),
    }
    out.push_str("</section>\n");

    instances_section(&mut out, &run);
    episodes_section(&mut out, &run)?;

    if let Some(other) = compare {
        let compared = show(registry, &view(View::Compare, Some(other)))?;
        let _ = writeln!(
            out,
            "<section id=\"compare\">\n<h2>Compared with {}</h2>\n<pre>{}</pre>",
            escape(&other.display().to_string()),
            escape(&compared.text)
        );
        if let Some(svg) = &compared.svg {
            let _ = writeln!(out, "<figure>{svg}</figure>");
        }
        out.push_str("</section>\n");
    }
    out.push_str("</body>\n</html>\n");
    Ok(out)
}

/// The primary metric's mean per instance and arm.
fn instances_section(out: &mut String, run: &Run) {
    let report = &run.report;
    let Some(primary) = report.primary() else {
        return;
    };
    let spec = &report.metrics[primary];
    let plan = &run.folder.manifest().plan;
    let _ = writeln!(
        out,
        "<section id=\"instances\">\n<h2>Per instance: {}</h2>\n<table class=\"data\">",
        escape(&spec.label)
    );
    out.push_str("<tr><th>instance</th>");
    for arm in &plan.arms {
        let _ = write!(out, "<th>{}</th>", escape(&arm.name));
    }
    out.push_str("</tr>\n");
    for instance in &plan.instances {
        let _ = write!(out, "<tr><td>{}</td>", escape(instance));
        for arm in 0..plan.arms.len() {
            let values: Vec<f64> = run
                .records
                .iter()
                .filter(|(unit, _)| unit.arm == arm && &unit.instance == instance)
                .filter_map(|(_, record)| record.metrics.get(&spec.name))
                .filter_map(|value| value.as_f64().or_else(|| value.as_bool().map(f64::from)))
                .collect();
            if values.is_empty() {
                out.push_str("<td>—</td>");
            } else {
                let mean = values.iter().sum::<f64>() / values.len() as f64;
                let _ = write!(
                    out,
                    "<td>{} <span class=\"ci\">(n={})</span></td>",
                    number(mean),
                    values.len()
                );
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n</section>\n");
}

/// Every finished episode, turn by turn, folded.
fn episodes_section(out: &mut String, run: &Run) -> Result<(), String> {
    out.push_str("<section id=\"episodes\">\n<h2>Episodes</h2>\n");
    for (unit, record) in run.records.iter().take(EPISODE_LIMIT) {
        let metrics: Vec<String> = record
            .metrics
            .iter()
            .map(|(name, value)| format!("{name}={value}"))
            .collect();
        let _ = writeln!(
            out,
            "<details>\n<summary>{} · {} · seed {}{} · {}{} · {}</summary>",
            escape(run.arm_name(unit.arm)),
            escape(&unit.instance),
            unit.seed,
            if unit.replicate > 0 {
                format!(" · replicate {}", unit.replicate)
            } else {
                String::new()
            },
            escape(&record.end),
            record
                .halt
                .as_ref()
                .map_or(String::new(), |reason| format!(" ({})", escape(reason))),
            escape(&metrics.join(", "))
        );
        let events = run.events(unit)?;
        let (rows, _) = turns::turns(&events);
        out.push_str(
            "<table class=\"data turns\">\n<tr><th>turn</th><th>action</th><th>rule</th>\
             <th>result</th><th>previews</th><th>patches</th><th>revisions</th><th>LLM</th>\
             <th>problems</th></tr>\n",
        );
        for row in &rows {
            let changes = |list: &[turns::Change]| {
                list.iter()
                    .map(|c| format!("{}: {} → {}", c.name, c.old, c.new))
                    .collect::<Vec<_>>()
                    .join("; ")
            };
            let previews = match &row.best_preview {
                Some((action, value)) if row.previews > 0 => {
                    format!("{} (best {action} {value:.4})", row.previews)
                }
                _ => row.previews.to_string(),
            };
            let rule = match (&row.layer, row.rule) {
                (Some(layer), Some(rule)) => format!("{layer} #{rule}"),
                (Some(layer), None) => layer.clone(),
                _ => String::new(),
            };
            let _ = writeln!(
                out,
                "<tr{}><td>{}</td><td>{}</td><td title=\"{}\">{}</td><td>{}</td><td>{}</td>\
                 <td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                if row.gate_open { " class=\"gate\"" } else { "" },
                row.turn,
                escape(row.action.as_deref().unwrap_or("")),
                escape(row.rule_at.as_deref().unwrap_or("")),
                escape(&rule),
                escape(&row.result.join("; ")),
                escape(&previews),
                escape(&changes(&row.patches)),
                escape(&changes(&row.revisions)),
                escape(&row.llm.join("; ")),
                escape(&row.problems.join("; "))
            );
        }
        out.push_str("</table>\n</details>\n");
    }
    if run.records.len() > EPISODE_LIMIT {
        let _ = writeln!(
            out,
            "<p class=\"note\">{} more episodes are not listed; `harness lens game` shows any of them.</p>",
            run.records.len() - EPISODE_LIMIT
        );
    }
    out.push_str("</section>\n");
    Ok(())
}

fn number(value: f64) -> String {
    format!("{value:.4}")
}

fn signed(value: f64) -> String {
    format!("{value:+.4}")
}

/// Text as HTML: the five characters that could open markup or end an attribute, escaped.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:72rem;\
padding:0 1rem;color:#222}h1{font-size:1.6rem}h2{font-size:1.2rem;margin-top:2rem;\
border-bottom:1px solid #ccc}table{border-collapse:collapse;margin:.5rem 0}th,td{padding:.2rem .6rem;\
text-align:left;vertical-align:top;font-size:.9rem}table.data td{font-variant-numeric:tabular-nums}\
table.data tr:nth-child(even){background:#f4f4f4}.ci{color:#666;font-size:.8rem}.note{color:#555;\
font-size:.85rem}.verdict{font-weight:600}details{margin:.2rem 0}summary{cursor:pointer}\
tr.gate{background:#fff4d6!important}figure{margin:1rem 0}pre{background:#f7f7f7;padding:.8rem;\
overflow-x:auto;font-size:.8rem}.wide{overflow-x:auto}";

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn text_cannot_open_markup() {
        assert_eq!(
            escape("<script>\"a\" & 'b'</script>"),
            "&lt;script&gt;&quot;a&quot; &amp; &#39;b&#39;&lt;/script&gt;"
        );
    }
}
