//! Checks that need every member at once: dependency cycles of computed values and constants,
//! recursion among functions, `sim.next` reachable from inside a preview, and unused
//! definitions.
//!
//! They work on the [`Facts`] that each chunk check records (references, `sim.next` calls,
//! snapshot reads, uses), never on syntax. They run after every edit, so they are linear in the
//! size of the reference graph: cycles come from one pass of Tarjan's strongly connected
//! components, nesting from one breadth-first search.

use std::collections::{HashMap, HashSet, VecDeque};

use harness_grammar::Span;
use rustc_hash::{FxHashMap, FxHashSet};

use crate::check::{Facts, Node, NodeKind};
use crate::codes::Code;
use crate::diagnostic::Diagnostic;
use crate::env::{DefKey, Env, Located};

/// A node of the reference graph, with where it was found.
struct Site<'a> {
    file: &'a str,
    ordinal: u32,
    node: &'a Node,
}

/// The reference graph: named definitions, indexed, with their edges.
struct Graph<'a> {
    sites: Vec<Site<'a>>,
    /// The graph hashes every definition and reference on every check; FxHash reads a key's
    /// names a word at a time, where SipHash's protection against collision attacks buys
    /// nothing here and costs most of the time.
    index: FxHashMap<&'a DefKey, usize>,
    /// For each site, the sites it references (reads or calls).
    edges: Vec<Vec<usize>>,
}

impl<'a> Graph<'a> {
    fn new(facts: &'a [(&'a str, u32, &'a Facts)]) -> (Self, Vec<Site<'a>>) {
        let nodes: usize = facts.iter().map(|(_, _, chunk)| chunk.nodes.len()).sum();
        let mut sites = Vec::with_capacity(nodes);
        let mut anonymous = Vec::new();
        let mut index = FxHashMap::with_capacity_and_hasher(nodes, Default::default());
        for (file, ordinal, chunk) in facts {
            for node in &chunk.nodes {
                let site = Site {
                    file,
                    ordinal: *ordinal,
                    node,
                };
                match &node.key {
                    Some(key) if !index.contains_key(key) => {
                        index.insert(key, sites.len());
                        sites.push(site);
                    }
                    Some(_) => {}
                    None => anonymous.push(site),
                }
            }
        }
        let edges = sites
            .iter()
            .map(|site| {
                site.node
                    .refs
                    .iter()
                    .filter_map(|key| index.get(key).copied())
                    .collect()
            })
            .collect();
        (
            Self {
                sites,
                index,
                edges,
            },
            anonymous,
        )
    }

    fn key(&self, i: usize) -> &DefKey {
        // Every site in the graph has a key; see `Graph::new`.
        self.sites[i].node.key.as_ref().unwrap_or(&EMPTY_KEY)
    }

    fn kind(&self, i: usize) -> &NodeKind {
        &self.sites[i].node.kind
    }

    /// The strongly connected components of the subgraph of the nodes `keep` accepts, each
    /// with more than one node or a self-reference: exactly the nodes on some cycle.
    fn cycles(&self, keep: impl Fn(&NodeKind) -> bool) -> Vec<Vec<usize>> {
        let n = self.sites.len();
        let mut order = vec![usize::MAX; n];
        let mut low = vec![0; n];
        let mut on_stack = vec![false; n];
        let mut stack = Vec::new();
        let mut components = Vec::new();
        let mut counter = 0;
        for root in 0..n {
            if order[root] != usize::MAX || !keep(self.kind(root)) {
                continue;
            }
            // An explicit stack of (node, next edge to look at) instead of recursion, so deep
            // chains of references cannot overflow the call stack.
            let mut work = vec![(root, 0usize)];
            order[root] = counter;
            low[root] = counter;
            counter += 1;
            stack.push(root);
            on_stack[root] = true;
            while let Some(&mut (v, ref mut next)) = work.last_mut() {
                if let Some(&w) = self.edges[v].get(*next) {
                    *next += 1;
                    if !keep(self.kind(w)) {
                        continue;
                    }
                    if order[w] == usize::MAX {
                        order[w] = counter;
                        low[w] = counter;
                        counter += 1;
                        stack.push(w);
                        on_stack[w] = true;
                        work.push((w, 0));
                    } else if on_stack[w] {
                        low[v] = low[v].min(order[w]);
                    }
                    continue;
                }
                work.pop();
                if let Some(&(parent, _)) = work.last() {
                    low[parent] = low[parent].min(low[v]);
                }
                if low[v] == order[v] {
                    let mut component = Vec::new();
                    while let Some(w) = stack.pop() {
                        on_stack[w] = false;
                        component.push(w);
                        if w == v {
                            break;
                        }
                    }
                    let cyclic = component.len() > 1 || self.edges[v].contains(&v);
                    if cyclic {
                        component.sort_by(|a, b| self.key(*a).cmp(self.key(*b)));
                        components.push(component);
                    }
                }
            }
        }
        components
    }

    /// A cycle through `start` inside `component`, as names: `a → b → a`.
    fn cycle_text(&self, start: usize, component: &[usize]) -> String {
        let inside: HashSet<usize> = component.iter().copied().collect();
        let mut parent: HashMap<usize, usize> = HashMap::new();
        let mut queue = VecDeque::from([start]);
        let mut end = start;
        'search: while let Some(v) = queue.pop_front() {
            for &w in &self.edges[v] {
                if w == start {
                    end = v;
                    break 'search;
                }
                if inside.contains(&w) && !parent.contains_key(&w) && w != start {
                    parent.insert(w, v);
                    queue.push_back(w);
                }
            }
        }
        let mut path = vec![end];
        while let Some(&p) = parent.get(path.last().unwrap_or(&start)) {
            path.push(p);
        }
        path.reverse();
        if path.first() != Some(&start) {
            path.insert(0, start);
        }
        path.push(start);
        path.iter()
            .map(|&i| format!("`{}`", self.key(i).name))
            .collect::<Vec<_>>()
            .join(" → ")
    }
}

static EMPTY_KEY: std::sync::LazyLock<DefKey> =
    std::sync::LazyLock::new(|| DefKey::new(String::new(), None, String::new()));

/// Runs the whole-workspace checks on the facts of every chunk (file, chunk ordinal, facts).
pub fn check(env: &Env, facts: &[(&str, u32, &Facts)]) -> Vec<Located> {
    let mut out = Vec::new();
    let (graph, anonymous) = Graph::new(facts);
    let at = |i: usize, diagnostic: Diagnostic| Located {
        file: graph.sites[i].file.to_owned(),
        ordinal: graph.sites[i].ordinal,
        diagnostic,
    };

    // Recursion: cycles among functions alone.
    for component in graph.cycles(|kind| *kind == NodeKind::Fn) {
        let first = component[0];
        let shown = graph.cycle_text(first, &component);
        out.push(at(
            first,
            Diagnostic::new(
                Code::Recursion,
                graph.sites[first].node.span,
                format!("function `{}` calls itself: {shown}", graph.key(first).name),
            )
            .primary("recursive function")
            .help("functions cannot recurse; use a bounded aggregate (`sum`, `map`, `filter`...) over a finite collection"),
        ));
    }
    // Cycles of values: computed values and constants, possibly through functions. A cycle of
    // functions alone is recursion, reported above.
    let value = |kind: &NodeKind| matches!(kind, NodeKind::Computed | NodeKind::Const);
    for component in graph.cycles(|kind| value(kind) || *kind == NodeKind::Fn) {
        let Some(&first) = component.iter().find(|&&i| value(graph.kind(i))) else {
            continue;
        };
        let shown = graph.cycle_text(first, &component);
        let what = if *graph.kind(first) == NodeKind::Const {
            "constant"
        } else {
            "computed value"
        };
        out.push(at(
            first,
            Diagnostic::new(
                Code::ComputedCycle,
                graph.sites[first].node.span,
                format!(
                    "{what} `{}` depends on itself: {shown}",
                    graph.key(first).name
                ),
            )
            .primary("part of a cycle")
            .help(
                "break the cycle: one of these values must come from state or from other members",
            ),
        ));
    }

    // `sim.next` inside a preview: everything a preview evaluates is reachable from the
    // previewed actions, the handlers and models, and the members read from snapshots.
    let mut reason: HashMap<usize, String> = HashMap::new();
    let mut queue = VecDeque::new();
    for site in graph.sites.iter().chain(anonymous.iter()) {
        for (action, _) in &site.node.sims {
            if let Some(&i) = graph.index.get(action) {
                reason
                    .entry(i)
                    .or_insert_with(|| format!("the preview of action `{}`", action.name));
                queue.push_back(i);
            }
        }
        for member in &site.node.snapshot_reads {
            if let Some(&i) = graph.index.get(member) {
                reason
                    .entry(i)
                    .or_insert_with(|| format!("a read of `{}` inside a preview", member.name));
                queue.push_back(i);
            }
        }
    }
    let mut reached = vec![false; graph.sites.len()];
    while let Some(v) = queue.pop_front() {
        if std::mem::replace(&mut reached[v], true) {
            continue;
        }
        let why = reason.get(&v).cloned().unwrap_or_default();
        for &w in &graph.edges[v] {
            reason.entry(w).or_insert_with(|| why.clone());
            queue.push_back(w);
        }
    }
    for (i, site) in graph.sites.iter().enumerate() {
        if reached[i] {
            let why = reason.get(&i).cloned().unwrap_or_default();
            for (_, span) in &site.node.sims {
                out.push(at(i, nested_sim(*span, &why)));
            }
        }
    }
    for site in &anonymous {
        if site.node.kind == NodeKind::InPreview {
            for (_, span) in &site.node.sims {
                out.push(Located {
                    file: site.file.to_owned(),
                    ordinal: site.ordinal,
                    diagnostic: nested_sim(
                        *span,
                        "a handler or model, which runs inside every preview",
                    ),
                });
            }
        }
    }

    // Unused definitions.
    let uses: FxHashSet<&DefKey> = facts
        .iter()
        .flat_map(|(_, _, chunk)| chunk.uses.iter())
        .collect();
    for (key, code, at) in &env.declared {
        // A leading underscore marks a definition as deliberately unused.
        if uses.contains(key) || key.name.starts_with('_') {
            continue;
        }
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
            diagnostic: Diagnostic::new(
                *code,
                at.span,
                format!("{what} `{}` is never used", key.name),
            )
            .help("use it, or remove it; a name starting with `_` is not reported"),
        });
    }
    out
}

fn nested_sim(span: Span, reason: &str) -> Diagnostic {
    Diagnostic::new(Code::NestedSim, span, format!("`sim.next` is reached from inside a preview ({reason})"))
        .primary("a second level of preview")
        .help("`sim.next` is one step deep; read the value you need from the snapshot in the preview's closure instead")
}
