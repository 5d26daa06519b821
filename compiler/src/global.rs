//! Checks that need every member at once: dependency cycles of computed values, recursion among
//! functions, `sim.next` reachable from inside a preview, and unused definitions.
//!
//! They work on the [`Facts`] that each chunk check records (references, `sim.next` calls,
//! snapshot reads, uses), never on syntax, so they are cheap to re-run after any edit.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use harness_grammar::Span;

use crate::check::{Facts, Node, NodeKind};
use crate::codes::Code;
use crate::diagnostic::Diagnostic;
use crate::env::{DefKey, Env, Located};

/// A node of the program's reference graph, with where it was found.
struct Site<'a> {
    file: &'a str,
    ordinal: u32,
    node: &'a Node,
}

/// Runs the whole-workspace checks on the facts of every chunk (file, chunk ordinal, facts).
pub fn check(env: &Env, facts: &[(String, u32, &Facts)]) -> Vec<Located> {
    let mut out = Vec::new();
    let mut sites: BTreeMap<&DefKey, Site<'_>> = BTreeMap::new();
    let mut anonymous: Vec<Site<'_>> = Vec::new();
    let mut uses: BTreeSet<&DefKey> = BTreeSet::new();
    for (file, ordinal, chunk) in facts {
        uses.extend(chunk.uses.iter());
        for node in &chunk.nodes {
            let site = Site { file, ordinal: *ordinal, node };
            match &node.key {
                Some(key) => {
                    sites.entry(key).or_insert(site);
                }
                None => anonymous.push(site),
            }
        }
    }

    // Cycles: functions that reach themselves through calls, computed values that reach
    // themselves through reads and calls. Each cycle is reported once, at its smallest member.
    // The path of a cycle is searched for only from the definitions that lie on one, which a
    // linear pass finds, so that a long acyclic chain of members costs linear time, not
    // quadratic.
    let cyclic = on_cycles(&sites);
    for (key, site) in &sites {
        let kind = &site.node.kind;
        if !matches!(kind, NodeKind::Fn | NodeKind::Computed | NodeKind::Const) || !cyclic.contains(key) {
            continue;
        }
        let only_fns = *kind == NodeKind::Fn;
        let Some(path) = cycle_through(key, &sites, only_fns) else { continue };
        if path.iter().any(|k| k < key && sites.get(k).is_some_and(|s| s.node.kind == *kind)) {
            continue;
        }
        let shown = path.iter().copied().chain(std::iter::once(*key)).map(|k| format!("`{}`", k.name)).collect::<Vec<_>>().join(" → ");
        let diagnostic = if only_fns {
            Diagnostic::new(Code::Recursion, site.node.span, format!("function `{}` calls itself: {shown}", key.name))
                .primary("recursive function")
                .help("functions cannot recurse; use a bounded aggregate (`sum`, `map`, `filter`...) over a finite collection")
        } else {
            let what = if *kind == NodeKind::Const { "constant" } else { "computed value" };
            Diagnostic::new(Code::ComputedCycle, site.node.span, format!("{what} `{}` depends on itself: {shown}", key.name))
                .primary("part of a cycle")
                .help("break the cycle: one of these values must come from state or from other members")
        };
        out.push(Located { file: site.file.to_owned(), ordinal: site.ordinal, diagnostic });
    }

    // `sim.next` inside a preview: everything a preview evaluates is reachable from the
    // previewed actions, the handlers and models, and the members read from snapshots.
    let mut roots: Vec<(&DefKey, String)> = Vec::new();
    for site in sites.values().chain(anonymous.iter()) {
        for (action, _) in &site.node.sims {
            roots.push((action, format!("the preview of action `{}`", action.name)));
        }
        for (member, _) in &site.node.snapshot_reads {
            roots.push((member, format!("a read of `{}` inside a preview", member.name)));
        }
    }
    let mut reported = BTreeSet::new();
    let mut report_sims = |site: &Site<'_>, reason: &str, out: &mut Vec<Located>| {
        for (_, span) in &site.node.sims {
            if reported.insert((site.file.to_owned(), site.ordinal, *span)) {
                out.push(Located {
                    file: site.file.to_owned(),
                    ordinal: site.ordinal,
                    diagnostic: nested_sim(*span, reason),
                });
            }
        }
    };
    for site in &anonymous {
        if site.node.kind == NodeKind::InPreview {
            report_sims(site, "a handler or model, which runs inside every preview", &mut out);
        }
    }
    for (root, reason) in roots {
        let mut queue = VecDeque::from([root]);
        let mut seen = BTreeSet::new();
        while let Some(key) = queue.pop_front() {
            if !seen.insert(key) {
                continue;
            }
            let Some(site) = sites.get(key) else { continue };
            report_sims(site, &reason, &mut out);
            queue.extend(site.node.refs.iter().map(|(k, _)| k));
        }
    }

    // Unused definitions.
    for (key, code, at) in &env.declared {
        // A leading underscore marks a definition as deliberately unused.
        if !uses.contains(key) && !key.name.starts_with('_') {
            let what = match code {
                Code::UnusedState => "state field",
                Code::UnusedComputed => "computed value",
                Code::UnusedFn => "function",
                Code::UnusedConst => "constant",
                _ => "error code",
            };
            out.push(Located {
                file: at.file.clone(),
                ordinal: at.ordinal,
                diagnostic: Diagnostic::new(*code, at.span, format!("{what} `{}` is never used", key.name))
                    .help("use it, or remove it; a name starting with `_` is not reported"),
            });
        }
    }
    out
}

fn nested_sim(span: Span, reason: &str) -> Diagnostic {
    Diagnostic::new(Code::NestedSim, span, format!("`sim.next` is reached from inside a preview ({reason})"))
        .primary("a second level of preview")
        .help("`sim.next` is one step deep; read the value you need from the snapshot in the preview's closure instead")
}

/// The definitions that lie on some cycle of references among functions, computed values and
/// constants: the members of strongly connected components with more than one definition, and
/// definitions that refer to themselves. Tarjan's algorithm, iterative so that a long chain of
/// references cannot exhaust the stack.
fn on_cycles<'a>(sites: &BTreeMap<&'a DefKey, Site<'a>>) -> BTreeSet<&'a DefKey> {
    let counted = |site: &Site<'_>| matches!(site.node.kind, NodeKind::Fn | NodeKind::Computed | NodeKind::Const);
    let keys: Vec<&DefKey> = sites.iter().filter(|(_, site)| counted(site)).map(|(key, _)| *key).collect();
    let position: BTreeMap<&DefKey, usize> = keys.iter().enumerate().map(|(i, key)| (*key, i)).collect();
    let edges: Vec<Vec<usize>> = keys
        .iter()
        .map(|key| sites.get(key).map(|site| site.node.refs.iter().filter_map(|(next, _)| position.get(next).copied()).collect()).unwrap_or_default())
        .collect();
    const UNSEEN: usize = usize::MAX;
    let mut index = vec![UNSEEN; keys.len()];
    let mut low = vec![0; keys.len()];
    let mut on_stack = vec![false; keys.len()];
    let mut stack = Vec::new();
    let mut counter = 0;
    let mut out = BTreeSet::new();
    for root in 0..keys.len() {
        if index[root] != UNSEEN {
            continue;
        }
        // Each frame is a node and how many of its edges have been followed.
        let mut frames = vec![(root, 0)];
        index[root] = counter;
        low[root] = counter;
        counter += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&(node, followed)) = frames.last() {
            if let Some(&next) = edges[node].get(followed) {
                if let Some(frame) = frames.last_mut() {
                    frame.1 += 1;
                }
                if index[next] == UNSEEN {
                    index[next] = counter;
                    low[next] = counter;
                    counter += 1;
                    stack.push(next);
                    on_stack[next] = true;
                    frames.push((next, 0));
                } else if on_stack[next] {
                    low[node] = low[node].min(index[next]);
                }
                continue;
            }
            frames.pop();
            if let Some(&(parent, _)) = frames.last() {
                low[parent] = low[parent].min(low[node]);
            }
            if low[node] == index[node] {
                let mut component = Vec::new();
                while let Some(member) = stack.pop() {
                    on_stack[member] = false;
                    component.push(member);
                    if member == node {
                        break;
                    }
                }
                if component.len() > 1 || edges[node].contains(&node) {
                    out.extend(component.into_iter().map(|member| keys[member]));
                }
            }
        }
    }
    out
}

/// A path of references from `start` back to `start`, if there is one. With `only_fns`, only
/// function calls count.
fn cycle_through<'a>(start: &'a DefKey, sites: &BTreeMap<&'a DefKey, Site<'a>>, only_fns: bool) -> Option<Vec<&'a DefKey>> {
    let mut parent: BTreeMap<&DefKey, &DefKey> = BTreeMap::new();
    let mut queue = VecDeque::from([start]);
    let mut seen = BTreeSet::new();
    while let Some(key) = queue.pop_front() {
        let Some(site) = sites.get(key) else { continue };
        for (next, _) in &site.node.refs {
            let Some(next_site) = sites.get(next) else { continue };
            if only_fns && next_site.node.kind != NodeKind::Fn {
                continue;
            }
            if !matches!(next_site.node.kind, NodeKind::Fn | NodeKind::Computed | NodeKind::Const) {
                continue;
            }
            if next == start {
                let mut path = vec![key];
                let mut current = key;
                while let Some(&p) = parent.get(current) {
                    path.push(p);
                    current = p;
                }
                path.reverse();
                return Some(path);
            }
            if seen.insert(next) {
                parent.insert(next, key);
                queue.push_back(next);
            }
        }
    }
    None
}
