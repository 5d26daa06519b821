//! Snapshots: the harness's state at one moment, cheap to copy.
//!
//! A [`Snapshot`] holds the values of every state slot and tunable, and a memo of the computed
//! values already evaluated in it. Slots and tunables sit behind [`Arc`]s and are copied on
//! write, and filled memo entries are shared, so copying a snapshot for a preview copies two
//! pointers and a pointer per memo entry, never the values themselves.
//!
//! # Memoisation with dependency tracking
//!
//! Each memo entry records the set of slots, tunables and (as one flag) the game's view that its
//! evaluation read, directly or through other computed values. A patch of slot `s` drops exactly
//! the entries whose set contains `s`, so a computed value read after a patch is never stale,
//! also within the same action, while values that do not depend on `s` stay memoised. A
//! snapshot's empty entries are [`OnceLock`]s, so a snapshot shared by a preview can be filled
//! in through a shared reference.

use std::sync::{Arc, OnceLock};

use crate::value::Value;

/// A set of dependencies: one bit per state slot, per tunable and for the game's view.
///
/// The first 64 dependencies sit in a word of their own, so that the sets of a typical harness
/// (a few dozen slots and tunables) are built, copied and merged without allocating.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DepSet {
    low: u64,
    high: Vec<u64>,
}

impl DepSet {
    /// Adds dependency `i`.
    #[inline]
    pub fn insert(&mut self, i: usize) {
        if i < 64 {
            self.low |= 1 << i;
            return;
        }
        let word = i / 64 - 1;
        if self.high.len() <= word {
            self.high.resize(word + 1, 0);
        }
        self.high[word] |= 1 << (i % 64);
    }

    /// True when `i` is in the set.
    pub fn contains(&self, i: usize) -> bool {
        if i < 64 {
            return self.low & (1 << i) != 0;
        }
        self.high
            .get(i / 64 - 1)
            .is_some_and(|w| w & (1 << (i % 64)) != 0)
    }

    /// Adds every dependency of `other`.
    #[inline]
    pub fn union(&mut self, other: &DepSet) {
        self.low |= other.low;
        if self.high.len() < other.high.len() {
            self.high.resize(other.high.len(), 0);
        }
        for (a, b) in self.high.iter_mut().zip(&other.high) {
            *a |= b;
        }
    }
}

/// A memoised computed value and what it was computed from.
#[derive(Clone, Debug)]
pub(crate) struct Memo {
    pub(crate) value: Value,
    pub(crate) deps: DepSet,
}

/// One memo entry of a snapshot.
///
/// A filled entry is immutable, so a copy of the snapshot shares it rather than copying the
/// value and its dependencies: copying a snapshot for a preview copies a pointer per filled
/// entry, where copying a filled [`OnceLock`] would run its initialisation again.
#[derive(Debug)]
enum MemoEntry {
    /// An entry filled before the snapshot was copied.
    Shared(Arc<Memo>),
    /// An entry of this snapshot's own, filled at most once through a shared reference.
    Own(OnceLock<Arc<Memo>>),
}

impl MemoEntry {
    fn empty() -> Self {
        MemoEntry::Own(OnceLock::new())
    }

    fn get(&self) -> Option<&Memo> {
        match self {
            MemoEntry::Shared(memo) => Some(memo),
            MemoEntry::Own(cell) => cell.get().map(|memo| &**memo),
        }
    }
}

impl Clone for MemoEntry {
    fn clone(&self) -> Self {
        match self {
            MemoEntry::Shared(memo) => MemoEntry::Shared(Arc::clone(memo)),
            MemoEntry::Own(cell) => match cell.get() {
                Some(memo) => MemoEntry::Shared(Arc::clone(memo)),
                None => MemoEntry::empty(),
            },
        }
    }
}

/// The harness's state at one moment: slots, tunables and memoised computed values.
#[derive(Clone, Debug)]
pub struct Snapshot {
    state: Arc<Vec<Value>>,
    tunables: Arc<Vec<Value>>,
    memo: Vec<MemoEntry>,
}

impl Snapshot {
    /// A snapshot with these slot and tunable values and an empty memo for `computed` values.
    pub fn new(state: Vec<Value>, tunables: Vec<Value>, computed: usize) -> Self {
        Self {
            state: Arc::new(state),
            tunables: Arc::new(tunables),
            memo: (0..computed).map(|_| MemoEntry::empty()).collect(),
        }
    }

    /// The value of state slot `i` (`Unit` for a slot of a disabled layer).
    pub fn state(&self, i: usize) -> &Value {
        self.state.get(i).unwrap_or(&Value::Unit)
    }

    /// The value of tunable `i`.
    pub fn tunable(&self, i: usize) -> &Value {
        self.tunables.get(i).unwrap_or(&Value::Unit)
    }

    /// Every state slot's value, by slot index.
    pub fn state_values(&self) -> &[Value] {
        &self.state
    }

    /// Every tunable's value, by tunable index.
    pub fn tunable_values(&self) -> &[Value] {
        &self.tunables
    }

    /// Sets slot `i`, dropping the memo entries that read dependency `dep` (the slot's bit).
    pub(crate) fn set_state(&mut self, i: usize, value: Value, dep: usize) {
        if let Some(slot) = Arc::make_mut(&mut self.state).get_mut(i) {
            *slot = value;
        }
        self.invalidate(dep);
    }

    /// Takes the value of slot `i` out, leaving `Unit`, so that an update of it that
    /// [`Snapshot::set_state`] then stores can modify it in place. The memo is left as it is:
    /// `set_state` drops what read the slot.
    pub(crate) fn take_state(&mut self, i: usize) -> Value {
        Arc::make_mut(&mut self.state)
            .get_mut(i)
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Sets tunable `i`, dropping the memo entries that read dependency `dep`.
    pub(crate) fn set_tunable(&mut self, i: usize, value: Value, dep: usize) {
        if let Some(slot) = Arc::make_mut(&mut self.tunables).get_mut(i) {
            *slot = value;
        }
        self.invalidate(dep);
    }

    /// The slots and tunables as they are now, for [`Snapshot::roll_back`]: two shared
    /// pointers, not a copy.
    pub(crate) fn rollback_point(&self) -> Rollback {
        Rollback {
            state: Arc::clone(&self.state),
            tunables: Arc::clone(&self.tunables),
        }
    }

    /// Puts back the slots and tunables of `point` and empties the memo, whose entries may
    /// have been computed from the values rolled back. The memo is a cache: what it held is
    /// computed again, to the same values, when it is read.
    pub(crate) fn roll_back(&mut self, point: Rollback) {
        self.state = point.state;
        self.tunables = point.tunables;
        for entry in &mut self.memo {
            *entry = MemoEntry::empty();
        }
    }

    /// Drops every memo entry that read dependency `dep`.
    pub(crate) fn invalidate(&mut self, dep: usize) {
        for entry in &mut self.memo {
            if entry.get().is_some_and(|m| m.deps.contains(dep)) {
                *entry = MemoEntry::empty();
            }
        }
    }

    /// The memoised value of computed `i`, if any.
    pub(crate) fn memo(&self, i: usize) -> Option<&Memo> {
        self.memo.get(i).and_then(MemoEntry::get)
    }

    /// Records the value of computed `i`.
    pub(crate) fn set_memo(&self, i: usize, memo: Memo) {
        if let Some(MemoEntry::Own(cell)) = self.memo.get(i) {
            // A concurrent fill cannot happen (a snapshot is evaluated by one thread at a time),
            // and a second fill would hold the same value, so a lost race loses nothing.
            let _ = cell.set(Arc::new(memo));
        }
    }

    /// How many computed values are memoised; for tests of the memoisation.
    pub fn memoised(&self) -> usize {
        self.memo.iter().filter(|m| m.get().is_some()).count()
    }
}

/// The slots and tunables of a snapshot at one moment (see [`Snapshot::rollback_point`]).
pub(crate) struct Rollback {
    state: Arc<Vec<Value>>,
    tunables: Arc<Vec<Value>>,
}

/// The result of `sim.next(action)`: weighted successor snapshots.
#[derive(Clone, Debug)]
pub struct Preview {
    /// The previewed action's name.
    pub action: Arc<str>,
    /// Its arguments.
    pub args: Vec<Value>,
    /// The successors and their probabilities, which sum to one (or the list is empty when the
    /// action could not run).
    pub branches: Vec<(f64, Arc<Snapshot>)>,
}

#[cfg(test)]
mod tests {
    use super::DepSet;

    #[test]
    fn dependency_sets_hold_indices_on_both_sides_of_the_inline_word() {
        let mut a = DepSet::default();
        a.insert(3);
        a.insert(63);
        a.insert(64);
        a.insert(200);
        for i in [3, 63, 64, 200] {
            assert!(a.contains(i), "{i}");
        }
        for i in [0, 62, 65, 199, 201, 1000] {
            assert!(!a.contains(i), "{i}");
        }
        let mut b = DepSet::default();
        b.insert(1);
        b.union(&a);
        assert!(b.contains(1) && b.contains(200) && b.contains(63));
        // An empty set equals one that never grew, whatever was inserted elsewhere.
        assert_eq!(DepSet::default(), DepSet::default());
    }
}
