//! The builtin registry: the signature, documentation and example of every builtin.
//!
//! This table is the one list of builtins. The checker reads it (as a
//! [`SignatureSet`](harness_compiler::signatures::SignatureSet)), `harness explain` and the docs
//! render it, and the interpreter attaches native implementations by each entry's registry name
//! (`abs`, `List.max_by`, `Preview.expect`).

use harness_compiler::signatures::SignatureSet;

/// Every builtin of the prelude and of the standard-library modules.
pub fn signatures() -> SignatureSet {
    let mut set = SignatureSet::default();
    math(&mut set);
    for owner in ["List", "Set"] {
        collection(&mut set, owner);
    }
    list_only(&mut set);
    set_only(&mut set);
    map(&mut set);
    option(&mut set);
    preview(&mut set);
    modules(&mut set);
    set
}

fn math(set: &mut SignatureSet) {
    set.builtin(
        "fn abs<N: Num>(x: N) -> N",
        "The absolute value.",
        "abs(-3) == 3",
    )
    .builtin(
        "fn min<N: Num>(a: N, b: N) -> N",
        "The smaller of two numbers.",
        "min(2, 5) == 2",
    )
    .builtin(
        "fn max<N: Num>(a: N, b: N) -> N",
        "The larger of two numbers.",
        "max(2, 5) == 5",
    )
    .builtin(
        "fn clamp<N: Num>(x: N, lo: N, hi: N) -> N",
        "`x` limited to `lo..=hi`.",
        "clamp(1.5, 0.0, 1.0) == 1.0",
    )
    .builtin(
        "fn sqrt(x: Float) -> Float",
        "The square root; a negative `x` is a runtime error.",
        "sqrt(9.0) == 3.0",
    )
    .builtin(
        "fn ln(x: Float) -> Float",
        "The natural logarithm; `x <= 0` is a runtime error.",
        "ln(1.0) == 0.0",
    )
    .builtin(
        "fn exp(x: Float) -> Float",
        "`e` raised to `x`.",
        "exp(0.0) == 1.0",
    )
    .builtin(
        "fn floor(x: Float) -> Int",
        "The largest integer not above `x`.",
        "floor(2.7) == 2",
    )
    .builtin(
        "fn ceil(x: Float) -> Int",
        "The smallest integer not below `x`.",
        "ceil(2.2) == 3",
    )
    .builtin(
        "fn round(x: Float) -> Int",
        "The nearest integer, halves away from zero.",
        "round(2.5) == 3",
    )
    .builtin(
        "fn to_float(self: Int) -> Float",
        "The integer as a float.",
        "3.to_float() == 3.0",
    )
    .builtin(
        "fn abs(self: Int) -> Int",
        "The absolute value.",
        "(-3).abs() == 3",
    )
    .builtin(
        "fn abs(self: Float) -> Float",
        "The absolute value.",
        "(-0.5).abs() == 0.5",
    )
    .builtin(
        "fn round(self: Float) -> Int",
        "The nearest integer, halves away from zero.",
        "2.5.round() == 3",
    )
    .builtin(
        "fn floor(self: Float) -> Int",
        "The largest integer not above the value.",
        "2.7.floor() == 2",
    )
    .builtin(
        "fn ceil(self: Float) -> Int",
        "The smallest integer not below the value.",
        "2.2.ceil() == 3",
    )
    .builtin(
        "fn sqrt(self: Float) -> Float",
        "The square root.",
        "9.0.sqrt() == 3.0",
    )
    .builtin(
        "fn ln(self: Float) -> Float",
        "The natural logarithm.",
        "1.0.ln() == 0.0",
    )
    .builtin(
        "fn exp(self: Float) -> Float",
        "`e` raised to the value.",
        "0.0.exp() == 1.0",
    )
    .builtin(
        "fn len(self: String) -> Int",
        "The number of characters.",
        "\"abc\".len() == 3",
    );
}

/// Methods shared by lists and sets (a set iterates in ascending order).
fn collection(set: &mut SignatureSet, c: &str) {
    let entries = [
        (
            format!("fn len<T>(self: {c}<T>) -> Int"),
            "The number of elements.",
            "[1, 2].len() == 2",
        ),
        (
            format!("fn is_empty<T>(self: {c}<T>) -> Bool"),
            "True when there are no elements.",
            "[].is_empty()",
        ),
        (
            format!("fn contains<T>(self: {c}<T>, x: T) -> Bool"),
            "True when `x` is an element; the same as `x in xs`.",
            "[1, 2].contains(2)",
        ),
        (
            format!("fn filter<T>(self: {c}<T>, keep: fn(T) -> Bool) -> {c}<T>"),
            "The elements for which `keep` holds, in order.",
            "[1, 2, 3].filter(|x| x > 1) == [2, 3]",
        ),
        (
            format!("fn map<T, U>(self: {c}<T>, f: fn(T) -> U) -> List<U>"),
            "`f` applied to each element, in order.",
            "[1, 2].map(|x| x * 10) == [10, 20]",
        ),
        (
            format!("fn sum<N: Num>(self: {c}<N>) -> N"),
            "The sum of the elements; zero when empty.",
            "[1, 2, 3].sum() == 6",
        ),
        (
            format!("fn sum_by<T, N: Num>(self: {c}<T>, f: fn(T) -> N) -> N"),
            "The sum of `f` over the elements.",
            "cells.sum_by(|c| p[c])",
        ),
        (
            format!("fn count<T>(self: {c}<T>, pred: fn(T) -> Bool) -> Int"),
            "How many elements satisfy `pred`.",
            "[1, 2, 3].count(|x| x > 1) == 2",
        ),
        (
            format!("fn any<T>(self: {c}<T>, pred: fn(T) -> Bool) -> Bool"),
            "True when some element satisfies `pred`.",
            "[1, 2].any(|x| x > 1)",
        ),
        (
            format!("fn all<T>(self: {c}<T>, pred: fn(T) -> Bool) -> Bool"),
            "True when every element satisfies `pred`; true when empty.",
            "[1, 2].all(|x| x > 0)",
        ),
        (
            format!("fn min_by<T>(self: {c}<T>, key: fn(T) -> Float) -> Option<T>"),
            "The element with the smallest key (the first on ties); `None` when empty.",
            "cells.min_by(|c| p[c])",
        ),
        (
            format!("fn max_by<T>(self: {c}<T>, key: fn(T) -> Float) -> Option<T>"),
            "The element with the largest key (the first on ties); `None` when empty.",
            "cells.max_by(|c| p[c])",
        ),
        (
            format!("fn argmax<T>(self: {c}<T>, key: fn(T) -> Float) -> Option<T>"),
            "The same as `max_by`: the element maximising `key`.",
            "cells.argmax(|c| p[c])",
        ),
        (
            format!("fn max_of<T>(self: {c}<T>, key: fn(T) -> Float) -> Float"),
            "The largest key; `0.0` when empty.",
            "cells.max_of(|c| p[c])",
        ),
        (
            format!("fn min_of<T>(self: {c}<T>, key: fn(T) -> Float) -> Float"),
            "The smallest key; `0.0` when empty.",
            "cells.min_of(|c| p[c])",
        ),
        (
            format!("fn first<T>(self: {c}<T>) -> Option<T>"),
            "The first element, if any.",
            "[4, 5].first() == Some(4)",
        ),
    ];
    for (sig, doc, example) in entries {
        set.builtin(&sig, doc, example);
    }
}

fn list_only(set: &mut SignatureSet) {
    set.builtin(
        "fn get<T>(self: List<T>, i: Int) -> Option<T>",
        "The element at index `i`, if there is one.",
        "[4, 5].get(1) == Some(5)",
    )
    .builtin(
        "fn push<T>(self: List<T>, x: T) -> List<T>",
        "The list with `x` appended.",
        "[1].push(2) == [1, 2]",
    )
    .builtin(
        "fn last<T>(self: List<T>) -> Option<T>",
        "The last element, if any.",
        "[4, 5].last() == Some(5)",
    )
    .builtin(
        "fn take<T>(self: List<T>, n: Int) -> List<T>",
        "The first `n` elements.",
        "[1, 2, 3].take(2) == [1, 2]",
    )
    .builtin(
        "fn to_set<T>(self: List<T>) -> Set<T>",
        "The elements as a set.",
        "[2, 1, 2].to_set()",
    );
}

fn set_only(set: &mut SignatureSet) {
    set.builtin(
        "fn insert<T>(self: Set<T>, x: T) -> Set<T>",
        "The set with `x` added.",
        "asked.insert(q)",
    )
    .builtin(
        "fn remove<T>(self: Set<T>, x: T) -> Set<T>",
        "The set without `x`.",
        "asked.remove(q)",
    )
    .builtin(
        "fn union<T>(self: Set<T>, other: Set<T>) -> Set<T>",
        "The elements of either set.",
        "a.union(b)",
    )
    .builtin(
        "fn to_list<T>(self: Set<T>) -> List<T>",
        "The elements in ascending order.",
        "s.to_list()",
    );
}

fn map(set: &mut SignatureSet) {
    set.builtin(
        "fn len<K, V>(self: Map<K, V>) -> Int",
        "The number of entries.",
        "counts.len()",
    )
    .builtin(
        "fn get<K, V>(self: Map<K, V>, key: K) -> Option<V>",
        "The value for `key`, if present.",
        "counts.get(cell)",
    )
    .builtin(
        "fn insert<K, V>(self: Map<K, V>, key: K, value: V) -> Map<K, V>",
        "The map with `key` set to `value`.",
        "counts.insert(cell, 1)",
    )
    .builtin(
        "fn remove<K, V>(self: Map<K, V>, key: K) -> Map<K, V>",
        "The map without `key`.",
        "counts.remove(cell)",
    )
    .builtin(
        "fn contains<K, V>(self: Map<K, V>, key: K) -> Bool",
        "True when `key` has a value; the same as `key in map`.",
        "counts.contains(cell)",
    )
    .builtin(
        "fn keys<K, V>(self: Map<K, V>) -> List<K>",
        "The keys in ascending order.",
        "counts.keys()",
    )
    .builtin(
        "fn values<K, V>(self: Map<K, V>) -> List<V>",
        "The values, in ascending order of their keys.",
        "counts.values()",
    )
    .builtin(
        "fn argmax<K>(self: Map<K, Float>) -> Option<K>",
        "The key with the largest value (the smallest key on ties).",
        "scores.argmax()",
    );
}

fn option(set: &mut SignatureSet) {
    set.builtin(
        "fn is_some<T>(self: Option<T>) -> Bool",
        "True for `Some`.",
        "Some(1).is_some()",
    )
    .builtin(
        "fn is_none<T>(self: Option<T>) -> Bool",
        "True for `None`.",
        "None.is_none()",
    )
    .builtin(
        "fn unwrap_or<T>(self: Option<T>, default: T) -> T",
        "The value, or `default` for `None`.",
        "best.unwrap_or(0.0)",
    )
    .builtin(
        "fn map<T, U>(self: Option<T>, f: fn(T) -> U) -> Option<U>",
        "`f` applied to the value, if any.",
        "best.map(|c| p[c])",
    );
}

fn preview(set: &mut SignatureSet) {
    set.builtin(
        "fn expect(self: Preview, f: fn(Snapshot) -> Float) -> Float",
        "The expected value of `f` over the preview's weighted successor snapshots.",
        "sim.next(ask(q)).expect(|s| s.best_hit_prob)",
    )
    .builtin(
        "fn prob(self: Preview, pred: fn(Snapshot) -> Bool) -> Float",
        "The total weight of the successor snapshots where `pred` holds.",
        "sim.next(shoot(c)).prob(|s| s.hits > 0)",
    )
    .builtin(
        "fn branches(self: Preview) -> List<Snapshot>",
        "The successor snapshots, in the order of the model's branches.",
        "sim.next(shoot(c)).branches().len()",
    )
    .builtin(
        "fn weights(self: Preview) -> List<Float>",
        "The weights of the successor snapshots, in the order of `branches()`.",
        "sim.next(shoot(c)).weights().sum()",
    );
}

fn modules(set: &mut SignatureSet) {
    set.module_builtin(
        "std.stats",
        "fn mean(xs: List<Float>) -> Float",
        "The arithmetic mean; `0.0` when empty.",
        "mean([1.0, 3.0]) == 2.0",
    )
    .module_builtin(
        "std.stats",
        "fn ema(previous: Float, x: Float, alpha: Float) -> Float",
        "One step of an exponential moving average: `previous + alpha * (x - previous)`.",
        "ema(0.5, 1.0, 0.1) == 0.55",
    )
    .module_builtin(
        "std.stats",
        "fn wilson_lower(successes: Int, trials: Int) -> Float",
        "The lower end of the 95% Wilson score interval of a proportion.",
        "wilson_lower(8, 10)",
    )
    .module_builtin(
        "std.info",
        "fn entropy(ps: List<Float>) -> Float",
        "Shannon entropy in bits of a distribution.",
        "entropy([0.5, 0.5]) == 1.0",
    )
    .module_builtin(
        "std.info",
        "fn binary_entropy(p: Float) -> Float",
        "Entropy in bits of a yes/no outcome with probability `p`.",
        "binary_entropy(0.5) == 1.0",
    )
    .enumeration(
        Some("std.belief"),
        "enum Backend { Exact, Mcmc, Smc }",
        "How a belief is represented: exact enumeration, MCMC particles or sequential Monte Carlo.",
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_signature_parses_and_names_are_unique() {
        let set = signatures();
        assert!(set.problems.is_empty(), "{:?}", set.problems);
        let mut names: Vec<&str> = set.builtins.iter().map(|b| b.name.as_str()).collect();
        names.sort_unstable();
        let before = names.len();
        names.dedup();
        assert_eq!(before, names.len(), "registry names must be unique");
    }
}
