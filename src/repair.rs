//! The offline repairer: bounded rounds of validation and code-directed patches.
//!
//! Each round validates the harness ([`crate::validate`]) and, unless it is valid, turns every
//! error into at most one edit by the first rule that applies, in this order:
//!
//! 1. the compiler's own quick fix for a "did you mean" help (unknown names, fields, methods,
//!    variants, layers, roles);
//! 2. a default out of its declared range (E0701) is clamped to the nearest bound;
//! 3. a layer that does not need the role below it (E0803) gets the missing `needs`;
//! 4. an action that emits an effect it does not gate (E0807) gets the gate
//!    `Effect.x in exposed`;
//! 5. a layer without a role (E0801) gets the one role nobody plays, or its own name when that
//!    is a missing role;
//! 6. otherwise, given a parent, the layer holding the error is replaced by the parent's layer
//!    of the same name, or, for an error outside any layer or without a place, the whole
//!    harness reverts to the parent.
//!
//! Edits that overlap an earlier one of the same round wait for the next round. The repairer
//! stops when the harness is valid, when no rule applies, or after the round limit (the paper's
//! two rounds by default).

use harness_compiler::Diagnostic;
use harness_compiler::codes::Code;
use harness_grammar::Span;
use harness_grammar::ast::{self, Item, Member};
use serde::{Deserialize, Serialize};

use crate::games::Registry;
use crate::load::Sources;
use crate::patch::{Edit, FileReplacement, LayerReplacement, Patch, apply};
use crate::validate::{Finding, Options, Report, validate};

/// One repair round: the report it answered and the patch it applied.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Round {
    /// 1 for the first repair.
    pub round: usize,
    /// The codes of the errors the round answered.
    pub codes: Vec<String>,
    /// The rule that produced each change, in patch order.
    pub rules: Vec<String>,
    /// The patch.
    pub patch: Patch,
}

/// The outcome of a repair.
#[derive(Clone, Debug, PartialEq)]
pub struct Repaired {
    /// The harness after the last round.
    pub sources: Sources,
    /// The rounds applied.
    pub rounds: Vec<Round>,
    /// The last validation report.
    pub report: Report,
    /// After how many rounds the harness was valid (0: it was valid as given); `None` when it
    /// is still invalid.
    pub valid_after: Option<usize>,
}

/// Repairs `sources` in at most `max_rounds` rounds; `parent` is the harness it was derived
/// from, if any, for the revert rule.
pub fn repair(
    registry: &Registry,
    sources: &Sources,
    options: &Options<'_>,
    parent: Option<&Sources>,
    max_rounds: usize,
) -> Repaired {
    let mut current = sources.clone();
    let mut rounds = Vec::new();
    loop {
        let report = validate(registry, &current, options);
        let done = |current: Sources, rounds: Vec<Round>, report: Report| {
            let valid_after = report.valid.then_some(rounds.len());
            Repaired {
                sources: current,
                rounds,
                report,
                valid_after,
            }
        };
        if report.valid || rounds.len() == max_rounds {
            return done(current, rounds, report);
        }
        let (patch, rules) = fixes(&current, &report, parent);
        if patch.is_empty() {
            return done(current, rounds, report);
        }
        match apply(&current, &patch) {
            Ok(applied) => current = applied.sources,
            Err(_) => return done(current, rounds, report),
        }
        rounds.push(Round {
            round: rounds.len() + 1,
            codes: report.errors().map(|f| f.code.clone()).collect(),
            rules,
            patch,
        });
    }
}

/// The patch for one round, with the rule behind each change.
pub fn fixes(current: &Sources, report: &Report, parent: Option<&Sources>) -> (Patch, Vec<String>) {
    let mut patch = Patch::default();
    let mut rules = Vec::new();
    let missing_roles: Vec<String> = report
        .errors()
        .filter(|f| f.code == "E0801")
        .filter_map(|f| {
            f.message
                .strip_prefix("no layer plays the role `")
                .and_then(|rest| rest.split('`').next())
                .map(str::to_string)
        })
        .collect();
    let roleless = report
        .errors()
        .filter(|f| f.code == "E0801" && f.message.contains("declares no role"))
        .count();
    for finding in report.errors() {
        let text = current.text(&finding.file).unwrap_or_default();
        let found = quick_fix(finding)
            .map(|edit| ("quick fix", edit))
            .or_else(|| clamp(finding, text).map(|edit| ("clamp", edit)))
            .or_else(|| missing_needs(finding, text).map(|edit| ("needs", edit)))
            .or_else(|| gate(finding, text).map(|edit| ("gate", edit)))
            .or_else(|| role(finding, text, &missing_roles, roleless).map(|edit| ("role", edit)));
        match found {
            Some((rule, edit)) => {
                if !overlaps(&patch.edits, &edit) {
                    rules.push(format!("{}: {rule}", finding.code));
                    patch.edits.push(edit);
                }
            }
            None => {
                if let Some(parent) = parent {
                    revert(finding, current, parent, &mut patch, &mut rules);
                }
            }
        }
    }
    // A file replaced whole takes no other change in the same round.
    let replaced: Vec<String> = patch.files.iter().map(|f| f.file.clone()).collect();
    patch.edits.retain(|e| !replaced.contains(&e.file));
    patch.layers.retain(|l| !replaced.contains(&l.file));
    (patch, rules)
}

fn overlaps(edits: &[Edit], edit: &Edit) -> bool {
    edits.iter().any(|e| {
        e.file == edit.file && (e.start == edit.start || (e.start < edit.end && edit.start < e.end))
    })
}

fn edit(finding: &Finding, start: usize, end: usize, text: impl Into<String>) -> Edit {
    Edit {
        file: finding.file.clone(),
        start,
        end,
        text: text.into(),
    }
}

/// Rule 1: the compiler's quick fix for the finding's "did you mean" help.
fn quick_fix(finding: &Finding) -> Option<Edit> {
    let code = Code::parse(&finding.code)?;
    let diagnostic = Diagnostic::new(
        code,
        Span {
            start: finding.start,
            end: finding.end,
        },
        finding.message.clone(),
    )
    .maybe_help(finding.help.clone());
    let fix = harness_compiler::ide::quick_fix(&diagnostic)?;
    Some(edit(
        finding,
        fix.span.start as usize,
        fix.span.end as usize,
        fix.text,
    ))
}

/// Rule 2: an E0701 default clamped into the range written after it (`= v in lo..=hi`).
fn clamp(finding: &Finding, text: &str) -> Option<Edit> {
    if finding.code != "E0701" {
        return None;
    }
    let (start, end) = (finding.start as usize, finding.end as usize);
    let value = number(text.get(start..end)?)?;
    let rest = text
        .get(end..)?
        .trim_start()
        .strip_prefix("in")?
        .trim_start();
    let range = rest.lines().next()?;
    let (lo, hi, inclusive) = match range.split_once("..=") {
        Some((lo, hi)) => (lo, hi, true),
        None => {
            let (lo, hi) = range.split_once("..")?;
            (lo, hi, false)
        }
    };
    let hi = hi.trim().trim_end_matches(',').trim();
    let bound = if value < number(lo)? {
        lo.trim().to_string()
    } else if inclusive {
        hi.to_string()
    } else if !hi.contains('.') {
        // An exclusive integer range ends one below its bound.
        (hi.replace('_', "").parse::<i64>().ok()? - 1).to_string()
    } else {
        return None;
    };
    Some(edit(finding, start, end, bound))
}

fn number(text: &str) -> Option<f64> {
    text.trim().replace('_', "").parse::<f64>().ok()
}

/// The last name written in backticks in a message.
fn last_quoted(message: &str) -> Option<&str> {
    let mut parts = message.rsplit('`');
    parts.next()?;
    parts.next()
}

/// The first name written in backticks in a message.
fn first_quoted(message: &str) -> Option<&str> {
    message.split('`').nth(1)
}

fn layers(text: &str) -> Vec<ast::Layer> {
    harness_grammar::parse(text)
        .file
        .items
        .into_iter()
        .filter_map(|item| match item {
            Item::Layer(layer) => Some(layer),
            _ => None,
        })
        .collect()
}

/// Rule 3: the `needs` an E0803 "does not need" finding names.
fn missing_needs(finding: &Finding, text: &str) -> Option<Edit> {
    if finding.code != "E0803" || !finding.message.contains("does not need") {
        return None;
    }
    let below = last_quoted(&finding.message)?;
    let layer = layers(text)
        .into_iter()
        .find(|l| l.name.span.start == finding.start)?;
    match layer.needs.last() {
        Some(last) => {
            let at = last.span.end as usize;
            Some(edit(finding, at, at, format!(", {below}")))
        }
        None => {
            let at = layer.role.as_ref().unwrap_or(&layer.name).span.end as usize;
            Some(edit(finding, at, at, format!(" needs {below}")))
        }
    }
}

/// Rule 4: the gate `Effect.x in exposed` on an E0807 action.
fn gate(finding: &Finding, text: &str) -> Option<Edit> {
    if finding.code != "E0807" {
        return None;
    }
    let action = first_quoted(&finding.message)?;
    let effect = finding.message.split('`').nth(3)?.strip_prefix("game.")?;
    let conjunct = format!(
        "{}.{effect} in {}",
        harness_compiler::signatures::EFFECT_ENUM,
        harness_compiler::protocol::EXPOSED
    );
    let found = layers(text).into_iter().find_map(|layer| {
        layer.members.into_iter().find_map(|member| match member {
            Member::Action(a)
                if a.name.name == action
                    && a.span.start <= finding.start
                    && finding.end <= a.span.end =>
            {
                Some(a)
            }
            _ => None,
        })
    })?;
    match &found.available {
        Some(cond) => {
            let (start, end) = (cond.span.start as usize, cond.span.end as usize);
            Some(edit(
                finding,
                start,
                end,
                format!("{conjunct} and ({})", text.get(start..end)?),
            ))
        }
        None => {
            // After the parameter list: the `)` that closes the first `(` after the name.
            let from = found.name.span.end as usize;
            let mut depth = 0usize;
            let mut close = None;
            for (offset, ch) in text.get(from..)?.char_indices() {
                match ch {
                    '(' => depth += 1,
                    ')' => {
                        depth = depth.checked_sub(1)?;
                        if depth == 0 {
                            close = Some(from + offset + 1);
                            break;
                        }
                    }
                    _ => {}
                }
            }
            let at = close?;
            Some(edit(finding, at, at, format!(" available when {conjunct}")))
        }
    }
}

/// Rule 5: a role for a layer that declares none.
fn role(finding: &Finding, text: &str, missing: &[String], roleless: usize) -> Option<Edit> {
    if finding.code != "E0801" || !finding.message.contains("declares no role") {
        return None;
    }
    let layer = layers(text)
        .into_iter()
        .find(|l| l.name.span.start == finding.start)?;
    let chosen = if missing.contains(&layer.name.name) {
        layer.name.name.clone()
    } else if missing.len() == 1 && roleless == 1 {
        missing[0].clone()
    } else {
        return None;
    };
    let at = layer.name.span.end as usize;
    Some(edit(finding, at, at, format!(" role {chosen}")))
}

/// Rule 6: the parent's version of the layer that holds the finding, or the whole parent.
fn revert(
    finding: &Finding,
    current: &Sources,
    parent: &Sources,
    patch: &mut Patch,
    rules: &mut Vec<String>,
) {
    let text = current.text(&finding.file).unwrap_or_default();
    let holder = layers(text).into_iter().find(|l| {
        finding.end > finding.start && l.span.start <= finding.start && finding.end <= l.span.end
    });
    let parent_layer = holder.as_ref().and_then(|layer| {
        parent.files.iter().find_map(|(_, text)| {
            layers(text)
                .into_iter()
                .find(|l| l.name.name == layer.name.name)
                .and_then(|l| text.get(l.span.start as usize..l.span.end as usize))
                .map(str::to_string)
        })
    });
    match (holder, parent_layer) {
        (Some(layer), Some(text)) => {
            if patch
                .layers
                .iter()
                .any(|l| l.file == finding.file && l.layer == layer.name.name)
            {
                return;
            }
            // The replaced layer's other edits would be lost; the replacement wins.
            patch.edits.retain(|e| {
                !(e.file == finding.file
                    && e.start >= layer.span.start as usize
                    && e.end <= layer.span.end as usize)
            });
            rules.push(format!(
                "{}: revert layer `{}`",
                finding.code, layer.name.name
            ));
            patch.layers.push(LayerReplacement {
                file: finding.file.clone(),
                layer: layer.name.name.clone(),
                text,
            });
        }
        _ => {
            for (path, _) in &current.files {
                let parent_text = parent
                    .text(path)
                    .or_else(|| (parent.files.len() == 1).then(|| parent.files[0].1.as_str()));
                if let Some(parent_text) = parent_text
                    && !patch.files.iter().any(|f| f.file == *path)
                {
                    rules.push(format!("{}: revert {path}", finding.code));
                    patch.files.push(FileReplacement {
                        file: path.clone(),
                        text: parent_text.to_string(),
                    });
                }
            }
        }
    }
}
