//! Properties of the formatter (`harness_grammar::format`), checked on every `.harness` file of
//! the repository and on targeted examples: formatting is idempotent, keeps the syntax tree
//! (spans aside), keeps every comment in the declaration it was written in, does not depend on
//! the original layout, and refuses files with syntax errors. A few outputs are snapshots.

use std::path::{Path, PathBuf};

use harness_grammar::format::{FormatError, WIDTH, format, line_col};
use harness_grammar::{Parse, TokenKind, ast, lex, parse};

/// Every `.harness` file under the directories that hold harness sources, sorted.
fn repository_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for dir in ["dsl-grammar/tests/corpus", "tests/cases", "harnesses"] {
        collect(&root.join(dir), &mut files);
    }
    files.sort();
    files
}

fn collect(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, files);
        } else if path.extension().is_some_and(|e| e == "harness") {
            files.push(path);
        }
    }
}

/// The files of the repository that parse without errors, with their text.
fn valid_files() -> Vec<(PathBuf, String)> {
    let files: Vec<_> = repository_files()
        .into_iter()
        .filter_map(|path| {
            let text = std::fs::read_to_string(&path).ok()?;
            parse(&text).errors.is_empty().then_some((path, text))
        })
        .collect();
    assert!(
        files.len() >= 20,
        "expected the grammar corpus, found {} valid files",
        files.len()
    );
    files
}

/// The debug rendering of a tree with every span removed: two trees that differ only in
/// positions render the same. Written independently of the formatter's own check.
fn tree_without_spans(file: &ast::File) -> String {
    let debug = format!("{file:#?}");
    let mut out = String::new();
    let mut lines = debug.lines().peekable();
    while let Some(line) = lines.next() {
        // A span is a block of its own in the pretty debug output, either a field
        // (`span: Span {`) or a tuple element (`Span {`, as in `Stmt::Emit`).
        let trimmed = line.trim_start();
        if trimmed == "span: Span {" || trimmed == "Span {" {
            for inner in lines.by_ref() {
                if inner.trim_start().starts_with('}') {
                    break;
                }
            }
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// The comments of a text without trailing whitespace, sorted.
fn comments(text: &str) -> Vec<String> {
    let mut found: Vec<String> = lex(text)
        .into_iter()
        .filter(|t| matches!(t.kind, TokenKind::Comment | TokenKind::DocComment))
        .map(|t| text[t.span.range()].trim_end().to_string())
        .collect();
    found.sort();
    found
}

/// For each comment strictly inside a top-level item or layer member, the path of that
/// declaration (`item index` or `item index / member index`) and the comment, sorted.
fn comments_by_declaration(text: &str) -> Vec<(String, String)> {
    let parsed: Parse = parse(text);
    let mut regions: Vec<(String, ast::Span)> = Vec::new();
    for (i, item) in parsed.file.items.iter().enumerate() {
        regions.push((format!("{i}"), item.span()));
        if let ast::Item::Layer(layer) = item {
            for (j, member) in layer.members.iter().enumerate() {
                regions.push((format!("{i}/{j}"), member.span()));
            }
        }
    }
    let mut found = Vec::new();
    for token in &parsed.tokens {
        if !matches!(token.kind, TokenKind::Comment | TokenKind::DocComment) {
            continue;
        }
        // The innermost region holding the comment: members come after their layer.
        let owner = regions
            .iter()
            .rev()
            .find(|(_, span)| span.start < token.span.start && token.span.end <= span.end);
        if let Some((path, _)) = owner {
            let comment = text[token.span.range()].trim_end().to_string();
            found.push((path.clone(), comment));
        }
    }
    found.sort();
    found
}

fn formatted(text: &str) -> String {
    match format(text) {
        Ok(out) => out,
        Err(error) => panic!("could not format:\n{text}\n{error}"),
    }
}

#[test]
fn every_repository_file_round_trips() {
    for (path, text) in valid_files() {
        let name = path.display();
        let out = format(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        let again = format(&out).unwrap_or_else(|e| panic!("{name} (second pass): {e}"));
        assert_eq!(again, out, "{name}: formatting is not idempotent");

        let reparsed = parse(&out);
        assert!(
            reparsed.errors.is_empty(),
            "{name}: the output has errors: {:?}",
            reparsed.errors
        );
        assert_eq!(
            tree_without_spans(&parse(&text).file),
            tree_without_spans(&reparsed.file),
            "{name}: the output parses to another tree"
        );
        assert_eq!(comments(&text), comments(&out), "{name}: comments changed");
        assert_eq!(
            comments_by_declaration(&text),
            comments_by_declaration(&out),
            "{name}: a comment moved to another declaration"
        );
        for line in out.lines() {
            assert_eq!(line, line.trim_end(), "{name}: trailing whitespace");
        }
    }
}

/// A small deterministic generator, so that the layout test explores many layouts without a
/// dependency and reproduces exactly.
struct XorShift(u64);

impl XorShift {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// `text` with the whitespace between code tokens changed at random: spaces become newlines
/// and back, and space appears between tokens that touched. Gaps next to comments and gaps with
/// an empty line are left alone, since those are the layout the formatter keeps.
fn relayout(text: &str, rng: &mut XorShift) -> String {
    let tokens = lex(text);
    let mut out = String::new();
    let mut i = 0;
    while i < tokens.len() {
        let token = tokens[i];
        out.push_str(&text[token.span.range()]);
        i += 1;
        if token.kind.is_trivia() {
            continue;
        }
        let gap_end = tokens[i..]
            .iter()
            .position(|t| !matches!(t.kind, TokenKind::Whitespace | TokenKind::Newline))
            .map_or(tokens.len(), |n| i + n);
        let next_is_code = tokens.get(gap_end).is_some_and(|t| !t.kind.is_trivia());
        let gap: String = tokens[i..gap_end]
            .iter()
            .map(|t| &text[t.span.range()])
            .collect();
        if !next_is_code || gap.matches('\n').count() > 1 {
            continue;
        }
        let choices: &[&str] = if gap.is_empty() {
            &["", " ", "\n  "]
        } else {
            &[" ", "\n", "   ", "\n      "]
        };
        out.push_str(choices[rng.below(choices.len())]);
        i = gap_end;
    }
    out
}

#[test]
fn the_layout_does_not_depend_on_the_original_layout() {
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    for (path, text) in valid_files() {
        let expected = formatted(&text);
        for _ in 0..8 {
            let shuffled = relayout(&text, &mut rng);
            let out = format(&shuffled).unwrap_or_else(|e| {
                panic!(
                    "{}: relayout did not format: {e}\n{shuffled}",
                    path.display()
                )
            });
            assert_eq!(
                out,
                expected,
                "{}: the layout of\n{shuffled}\nchanged the output",
                path.display()
            );
        }
    }
}

#[test]
fn files_with_syntax_errors_are_not_formatted() {
    let text = "layer l {\n  computed x: Int = 1 +\n}\n";
    match format(text) {
        Err(FormatError::Syntax(errors)) => {
            assert!(!errors.is_empty());
            let (line, col) = line_col(text, errors[0].span.start);
            assert_eq!((line, col), (3, 1), "{errors:?}");
        }
        other => panic!("expected syntax errors, got {other:?}"),
    }
    let invalid = repository_files().into_iter().filter(|p| {
        p.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("invalid_"))
    });
    let mut seen = 0;
    for path in invalid {
        let text = std::fs::read_to_string(&path).expect("corpus files are UTF-8");
        assert!(
            matches!(format(&text), Err(FormatError::Syntax(_))),
            "{} was formatted",
            path.display()
        );
        seen += 1;
    }
    assert!(seen > 0, "no invalid corpus files found");
}

#[test]
fn line_col_counts_characters_from_one() {
    let text = "ab\ndé\nx";
    assert_eq!(line_col(text, 0), (1, 1));
    assert_eq!(line_col(text, 3), (2, 1));
    assert_eq!(line_col(text, 6), (2, 3));
    assert_eq!(line_col(text, 7), (3, 1));
    assert_eq!(line_col(text, 100), (3, 2));
    // Inside a multi-byte character: the position of that character.
    assert_eq!(line_col(text, 5), (2, 2));
}

#[test]
fn empty_and_comment_only_files() {
    assert_eq!(formatted(""), "");
    assert_eq!(formatted("\n\n  \n"), "");
    assert_eq!(formatted("// a\n\n\n// b   \n"), "// a\n\n// b\n");
}

#[test]
fn blank_lines_collapse_to_one_and_vanish_at_block_edges() {
    let text = "layer l {\n\n\n  state {}\n\n\n\n  decide {}\n\n}\n\n\nconst A: Int = 1\nconst B: Int = 2\n";
    assert_eq!(
        formatted(text),
        "layer l {\n  state {}\n\n  decide {}\n}\n\nconst A: Int = 1\nconst B: Int = 2\n"
    );
}

#[test]
fn separators_and_parentheses_become_canonical() {
    let text = "layer l { state { a: Int = 0, b: Int = 1; c: Int = ((2)) } }\n\
                const X: Int = (1 + 2) * 3 - (4 - 5) - (6 * 7)\n\
                const Y: Bool = not (a and b) == (not c)\n\
                fn f() -> Budget = if (Budget { a: 1 }) == b { Budget { a: 2 } } else { b }\n";
    assert_eq!(
        formatted(text),
        "layer l {\n  state {\n    a: Int = 0\n    b: Int = 1\n    c: Int = 2\n  }\n}\n\
         const X: Int = (1 + 2) * 3 - (4 - 5) - 6 * 7\n\
         const Y: Bool = not (a and b) == (not c)\n\
         fn f() -> Budget = if (Budget { a: 1 }) == b { Budget { a: 2 } } else { b }\n"
    );
}

#[test]
fn comments_stay_in_their_member() {
    let text = "layer l {\n\
                computed a: Int = f(x, // inside a\n y)\n\
                // leads b\n\
                computed b: Int = 2 // trails b\n\
                decide { // opens decide\n\
                // closes decide\n\
                }\n\
                }\n";
    let out = formatted(text);
    assert_eq!(
        out,
        "layer l {\n  computed a: Int = f(\n    x, // inside a\n    y,\n  )\n  // leads b\n  \
         computed b: Int = 2 // trails b\n  decide { // opens decide\n    // closes decide\n  }\n}\n"
    );
    assert_eq!(comments_by_declaration(text), comments_by_declaration(&out));
}

/// The issue's reproducer: a trailing comment in a branch used to move into the `else` branch,
/// and formatting the result again moved it further.
#[test]
fn comments_stay_in_their_branch() {
    let text = "const A: Int = if x { 1 // one\n} else { 2 // two\n}\n\
                const B: Int = if x {\n  1\n  // after one\n} else if y {\n  let z = 2;\n  z // zed\n} \
                else {\n  3\n}\n";
    let out = formatted(text);
    assert_eq!(
        out,
        "const A: Int = if x {\n  1 // one\n} else {\n  2 // two\n}\n\
         const B: Int = if x {\n  1\n  // after one\n} else if y {\n  let z = 2;\n  z // zed\n} \
         else {\n  3\n}\n"
    );
    assert_eq!(formatted(&out), out);
}

/// A doc line ending in a space used to make the formatter refuse the file (the tree kept the
/// space, the output did not).
#[test]
fn doc_lines_with_trailing_spaces_are_formatted() {
    let out = formatted("/// Counts things. \n///   \nconst  A: Int = 1\n");
    assert_eq!(out, "/// Counts things.\n///\nconst A: Int = 1\n");
}

/// A byte-order mark is trivia, not an invalid character.
#[test]
fn a_byte_order_mark_is_accepted() {
    let parse = harness_grammar::parse("\u{feff}const A: Int = 1\n");
    assert_eq!(parse.errors, vec![]);
    assert_eq!(
        formatted("\u{feff}const A: Int = 1\n"),
        "const A: Int = 1\n"
    );
}

/// Long `else if` chains and operator chains below the height limit format, idempotently, on
/// the 2 MiB stack of a test thread.
#[test]
fn long_chains_format() {
    let arms: String = (0..300)
        .map(|i| format!("if x == {i} {{ {i} }} else "))
        .collect();
    let sum = vec!["x"; 900].join(" + ");
    let text = format!("const A: Int = {arms}{{ 0 }}\nconst B: Int = {sum}\n");
    let out = formatted(&text);
    assert_eq!(formatted(&out), out);
    assert!(out.contains("} else if x == 299 {"));
}

#[test]
fn long_lines_break_at_the_width() {
    let args: Vec<String> = (0..12).map(|i| format!("argument_{i}")).collect();
    let text = format!("const A: Int = call({})\n", args.join(", "));
    let out = formatted(&text);
    assert!(out.lines().count() > 2, "{out}");
    assert!(out.lines().all(|l| l.chars().count() <= WIDTH), "{out}");
    assert!(
        out.contains("  argument_11,\n)"),
        "trailing comma when broken:\n{out}"
    );

    let short = "const A: Int = call(a, b,)\n";
    assert_eq!(formatted(short), "const A: Int = call(a, b)\n");
}

const REPRESENTATIVE: &str = r#"harness battleship.planning
use game battleship
use std.belief.{Posterior,Backend}

/// Phase budgets.
type Budget={coarse:Int,late:Int}
enum Bucket{Coarse,Local,Late(Int)}
error BUDGET_CLOSED="the question budget for this phase is closed"
config{particles:Int=500 in 1..=100_000;threshold:Float=0.72 in 0.0..=1.0}
fn clamp01(x:Float)->Float=if x<0.0{0.0}else if x>1.0{1.0}else{x}

layer planning needs belief{
  tunable coarse_budget:Int=6 in 0..=15 // revisable by higher layers
  state{coarse_asked:Int=0,asked:Set<Question>=[]}
  computed best_question:Option<Question>=game.questions().filter(|q|q not in asked and q.cost<budget_remaining).max_by(value_of_question)


  fn value_of_question(q:Question)->Float=sim.next(ask(q)).expect(|s|s.best_hit_prob)
  action ask(q:Question) available when game.questions_left>0 and q not in asked requires coarse_asked<coarse_budget or game.hits>0 else fail BUDGET_CLOSED{
    patch asked=asked.insert(q)
    patch coarse_asked+=if game.hits==0{1}else{0}
    emit game.ask(q)
  }
  model game.fire(cell){game.shot(cell,hit:true) with probability hit_prob[cell]
    game.shot(cell,hit:false) otherwise}
  decide{
    // Ask while asking is worth more than shooting.
    when let Some(q)=best_question,value_of_question(q)>best_hit_prob=>ask(q)
    shoot(best_cell)
  }
  revise when low_confidence and cooldown==0{revise belief.exploit_threshold-=0.05;patch cooldown=3}
}
"#;

#[test]
fn snapshot_representative_file() {
    insta::assert_snapshot!(formatted(REPRESENTATIVE));
}

#[test]
fn snapshot_comments() {
    let text = "// header comment\n\n\n// second paragraph\nharness a.b // on the header\n\
                /// Documented.\nfn f(\n  a: Int, // first\n  // before b\n  b: Int,\n) -> Int = g(\n  a, // after a\n  b // after b\n  // before the parenthesis\n)\n\
                layer l {\n\n  // first member\n\n  state { // after the brace\n    x: Int = 0 // x\n    // at the end\n  }\n\
                computed d: Int = xs\n    // before a method\n    .map(|x| x)\n    .sum() // end\n\
                computed e: Int = match x { // m\n    A => 1, // a\n    // before b\n    B => 2,\n  }\n\
                computed f: Int = if a { // then\n    1\n  } else { // else\n    2\n  }\n  // last\n\n}\n// end of file";
    insta::assert_snapshot!(formatted(text));
}

#[test]
fn snapshot_long_expressions() {
    let text = "layer l {\n\
        computed total: Float = alpha_coefficient * first_measurement_value + beta_coefficient * second_measurement_value + gamma\n\
        fn pick(a: Int, b: Int) -> Int = if let Some(v) = lookup_the_value_in_table(a), v > b { compute_something(v, b) } else { fallback_value(b) }\n\
        computed rec: Budget = Budget { coarse: some_long_function_name(argument_one), late: other_long_function_name(argument_two) }\n\
        computed call: Int = some_function_with_many_args(first_argument_value, second_argument_value, third_argument_value, named: 4)\n\
        action fire(cell: Cell) { patch posterior = posterior.observe_shot(cell, hit).renormalize().with_prior(prior_distribution_value) }\n\
        decide { when let Some(q) = best_question_for_the_current_phase, value_of_question(q) > best_hit_probability_now => ask(q) }\n\
        computed blk: Int = { let a = compute_a_really_long_thing(x, y, z); let b = compute_b_really_long_thing(a, a); a * b + 1 }\n\
        }\n";
    insta::assert_snapshot!(formatted(text));
}

#[test]
fn deep_nesting_formats_without_overflow() {
    let depth = 100;
    let calls = format!(
        "const A: Int = {}1{}\n",
        "f(".repeat(depth),
        ")".repeat(depth)
    );
    let parens = format!(
        "const B: Int = {}1{}\n",
        "(1 - ".repeat(depth),
        ")".repeat(depth)
    );
    let lists = format!(
        "const C: Int = {}{}\n",
        "[".repeat(depth),
        "]".repeat(depth)
    );
    for text in [calls, parens, lists] {
        assert!(parse(&text).errors.is_empty(), "{text}");
        let out = formatted(&text);
        assert_eq!(formatted(&out), out);
    }
}

#[test]
fn carriage_returns_become_line_feeds() {
    let text = "/// Doc.\r\nconst A: Int = 1 // one\r\n\r\n\r\nconst B: Int = 2\r\n";
    assert_eq!(
        formatted(text),
        "/// Doc.\nconst A: Int = 1 // one\n\nconst B: Int = 2\n"
    );
}

/// Found by the `fmt` fuzz target: a second comment after a rule's `=>` went on a line of its
/// own at the rule's indent, and a second pass indented it with the action.
#[test]
fn comments_after_a_rules_arrow_are_indented_with_the_action() {
    let text = "layer l {\n  decide {\n    when a // between\n      => // c\nb()\n  }\n}\n";
    let out = formatted(text);
    assert_eq!(
        out,
        "layer l {\n  decide {\n    when a => // between\n      // c\n      b()\n  }\n}\n"
    );
    assert_eq!(formatted(&out), out);
}

/// Found by the `fmt` fuzz target: a comment between `use game` and the game's name was moved
/// after the name, which pushed a doc comment that documented nothing onto a line of its own,
/// where it documented the next item; the formatter refused the file.
#[test]
fn a_comment_before_the_games_name_stays_before_it() {
    let text = "use game   // c\nbat///tleship\nconst N: Int = 1\n";
    let out = formatted(text);
    assert_eq!(out, "use game // c\n  bat ///tleship\nconst N: Int = 1\n");
    assert_eq!(formatted(&out), out);
    assert_eq!(formatted("use game bat\n"), "use game bat\n");
}
