//! A line diff of two texts: the hunks that turn one into the other, for showing what the
//! formatter would change and for formatting only part of a file.

use std::ops::Range;

/// One change: the lines `old` of the first text are replaced by the lines `new` of the second
/// (line indices; an empty range is an insertion or a deletion point).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hunk {
    /// The replaced lines of the old text.
    pub old: Range<usize>,
    /// The replacing lines of the new text.
    pub new: Range<usize>,
}

/// Past this many differing lines the middle of the texts becomes one hunk: the search costs
/// memory in proportion to this bound times the length of the texts.
const MAX_EDITS: usize = 4_000;

/// The hunks of a shortest line diff (Myers' algorithm), in order. Lines keep their endings, so
/// a changed last line without a newline is a change.
pub fn line_hunks(old: &str, new: &str) -> Vec<Hunk> {
    let a: Vec<&str> = old.split_inclusive('\n').collect();
    let b: Vec<&str> = new.split_inclusive('\n').collect();
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (a_mid, b_mid) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    if a_mid.is_empty() && b_mid.is_empty() {
        return Vec::new();
    }
    let Some(pairs) = matching_lines(a_mid, b_mid) else {
        return vec![Hunk {
            old: prefix..prefix + a_mid.len(),
            new: prefix..prefix + b_mid.len(),
        }];
    };
    // Between consecutive matching lines, whatever is left is a hunk.
    let mut hunks = Vec::new();
    let (mut i, mut j) = (0, 0);
    for (x, y) in pairs.into_iter().chain([(a_mid.len(), b_mid.len())]) {
        if x > i || y > j {
            hunks.push(Hunk {
                old: prefix + i..prefix + x,
                new: prefix + j..prefix + y,
            });
        }
        (i, j) = (x + 1, y + 1);
    }
    hunks
}

/// The pairs of equal lines of a longest common subsequence, in order; `None` when the texts
/// differ in more than [`MAX_EDITS`] lines.
fn matching_lines(a: &[&str], b: &[&str]) -> Option<Vec<(usize, usize)>> {
    let (n, m) = (a.len() as isize, b.len() as isize);
    let max = (a.len() + b.len()).min(MAX_EDITS) as isize;
    let offset = max + 1;
    let mut v = vec![0isize; 2 * offset as usize + 1];
    let mut trace: Vec<Vec<isize>> = Vec::new();
    for d in 0..=max {
        trace.push(v.clone());
        let mut k = -d;
        while k <= d {
            let index = (k + offset) as usize;
            let mut x = if k == -d || (k != d && v[index - 1] < v[index + 1]) {
                v[index + 1]
            } else {
                v[index - 1] + 1
            };
            let mut y = x - k;
            while x < n && y < m && a[x as usize] == b[y as usize] {
                x += 1;
                y += 1;
            }
            v[index] = x;
            if x >= n && y >= m {
                return Some(backtrack(&trace, a, b, d, k, offset));
            }
            k += 2;
        }
    }
    None
}

/// Walks the search's trace back from the end, collecting the diagonal moves (equal lines).
fn backtrack(
    trace: &[Vec<isize>],
    a: &[&str],
    b: &[&str],
    d_end: isize,
    k_end: isize,
    offset: isize,
) -> Vec<(usize, usize)> {
    let mut pairs = Vec::new();
    let (mut x, mut y) = (a.len() as isize, b.len() as isize);
    let mut k = k_end;
    for d in (0..=d_end).rev() {
        let v = &trace[d as usize];
        let index = (k + offset) as usize;
        let (prev_k, prev_x) = if d == 0 {
            (0, 0)
        } else if k == -d || (k != d && v[index - 1] < v[index + 1]) {
            (k + 1, v[index + 1])
        } else {
            (k - 1, v[index - 1])
        };
        let prev_y = prev_x - prev_k;
        // The snake: from the point after this step's move to (x, y).
        let (start_x, start_y) = if d == 0 {
            (0, 0)
        } else if prev_k == k + 1 {
            (prev_x, prev_y + 1)
        } else {
            (prev_x + 1, prev_y)
        };
        while x > start_x && y > start_y {
            x -= 1;
            y -= 1;
            pairs.push((x as usize, y as usize));
        }
        (x, y, k) = (prev_x, prev_y, prev_k);
    }
    pairs.reverse();
    pairs
}

/// A unified diff of two texts, with `context` lines around each change and `---`/`+++`
/// headers naming them.
pub fn unified(old_name: &str, new_name: &str, old: &str, new: &str, context: usize) -> String {
    let hunks = line_hunks(old, new);
    if hunks.is_empty() {
        return String::new();
    }
    let a: Vec<&str> = old.split_inclusive('\n').collect();
    let b: Vec<&str> = new.split_inclusive('\n').collect();
    let mut out = format!("--- {old_name}\n+++ {new_name}\n");
    // Hunks closer than twice the context are shown together.
    let mut groups: Vec<Vec<&Hunk>> = Vec::new();
    for hunk in &hunks {
        match groups.last_mut() {
            Some(group)
                if hunk.old.start <= group.last().map_or(0, |h| h.old.end) + 2 * context =>
            {
                group.push(hunk);
            }
            _ => groups.push(vec![hunk]),
        }
    }
    let line = |out: &mut String, sign: char, text: &str| {
        out.push(sign);
        out.push_str(text);
        if !text.ends_with('\n') {
            out.push_str("\n\\ No newline at end of file\n");
        }
    };
    for group in groups {
        let (first, last) = (group[0], group[group.len() - 1]);
        let old_start = first.old.start.saturating_sub(context);
        let new_start = first.new.start.saturating_sub(context);
        let old_end = (last.old.end + context).min(a.len());
        let new_end = (last.new.end + context).min(b.len());
        out.push_str(&format!(
            "@@ -{},{} +{},{} @@\n",
            old_start + 1,
            old_end - old_start,
            new_start + 1,
            new_end - new_start
        ));
        let mut at = old_start;
        for hunk in group {
            for text in &a[at..hunk.old.start] {
                line(&mut out, ' ', text);
            }
            for text in &a[hunk.old.clone()] {
                line(&mut out, '-', text);
            }
            for text in &b[hunk.new.clone()] {
                line(&mut out, '+', text);
            }
            at = hunk.old.end;
        }
        for text in &a[at..old_end] {
            line(&mut out, ' ', text);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Applies hunks to the old text; must give the new one.
    fn apply(old: &str, new: &str, hunks: &[Hunk]) -> String {
        let a: Vec<&str> = old.split_inclusive('\n').collect();
        let b: Vec<&str> = new.split_inclusive('\n').collect();
        let mut out = String::new();
        let mut at = 0;
        for hunk in hunks {
            out.extend(a[at..hunk.old.start].iter().copied());
            out.extend(b[hunk.new.clone()].iter().copied());
            at = hunk.old.end;
        }
        out.extend(a[at..].iter().copied());
        out
    }

    #[test]
    fn hunks_turn_the_old_text_into_the_new_one() {
        let cases = [
            ("a\nb\nc\n", "a\nb\nc\n"),
            ("a\nb\nc\n", "a\nx\nc\n"),
            ("a\nb\nc\nd\ne\n", "b\nc\ny\ne\nf\n"),
            ("", "a\n"),
            ("a\n", ""),
            ("a\nb", "a\nb\n"),
            ("x\na\nb\nc\nx\n", "a\nb\nc\n"),
        ];
        for (old, new) in cases {
            let hunks = line_hunks(old, new);
            assert_eq!(
                apply(old, new, &hunks),
                new,
                "{old:?} -> {new:?}: {hunks:?}"
            );
        }
        assert_eq!(
            line_hunks("a\nb\nc\nd\n", "a\nB\nc\nD\n"),
            [
                Hunk {
                    old: 1..2,
                    new: 1..2
                },
                Hunk {
                    old: 3..4,
                    new: 3..4
                }
            ]
        );
    }

    #[test]
    fn a_unified_diff_shows_the_changes_with_context() {
        let diff = unified(
            "a.harness",
            "a.harness (formatted)",
            "a\nb\nc\nd\n",
            "a\nB\nc\nd\n",
            1,
        );
        assert_eq!(
            diff,
            "--- a.harness\n+++ a.harness (formatted)\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
        );
        assert_eq!(unified("x", "y", "same\n", "same\n", 3), "");
    }
}
