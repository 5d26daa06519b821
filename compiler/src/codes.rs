//! The table of diagnostic codes: one row per rule, the single source of `harness explain`.
//!
//! Each row gives the code, its severity, a title, an explanation, a program that triggers it and
//! the fix. The explanation pages, the `--list` output and the test that every code has a case
//! file are all generated from this table, so they cannot drift from the checker.

use crate::diagnostic::Severity;

/// Everything `harness explain` knows about a code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CodeInfo {
    /// The stable code, `E0101`.
    pub code: &'static str,
    /// Error or warning.
    pub severity: Severity,
    /// A short title.
    pub title: &'static str,
    /// What triggers it and why the rule exists.
    pub explanation: &'static str,
    /// A program that triggers it.
    pub example: &'static str,
    /// How to fix it.
    pub fix: &'static str,
}

macro_rules! codes {
    ($(
        $(#[$doc:meta])*
        $variant:ident = $code:literal, $severity:ident, $title:literal,
        explanation: $explanation:literal,
        example: $example:literal,
        fix: $fix:literal;
    )*) => {
        /// A stable diagnostic code: one per rule the checker enforces.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Code {
            $( $(#[$doc])* #[doc = $title] $variant, )*
        }

        impl Code {
            /// Every code, in table order.
            pub const ALL: &'static [Code] = &[$(Code::$variant),*];

            /// The row of the table for this code.
            pub fn info(self) -> CodeInfo {
                match self {
                    $(Code::$variant => CodeInfo {
                        code: $code,
                        severity: Severity::$severity,
                        title: $title,
                        explanation: $explanation,
                        example: $example,
                        fix: $fix,
                    },)*
                }
            }
        }
    };
}

impl Code {
    /// The code as written, `E0101`.
    pub fn as_str(self) -> &'static str {
        self.info().code
    }

    /// Looks a code up by its text, case-insensitively.
    pub fn parse(text: &str) -> Option<Code> {
        Code::ALL
            .iter()
            .copied()
            .find(|code| code.as_str().eq_ignore_ascii_case(text.trim()))
    }
}

impl CodeInfo {
    /// The explanation page printed by `harness explain CODE`, in Markdown.
    pub fn page(&self) -> String {
        format!(
            "# {code}: {title}\n\n{severity}.\n\n{explanation}\n\n## Example\n\n```harness\n{example}\n```\n\n## Fix\n\n{fix}\n",
            code = self.code,
            title = self.title,
            severity = match self.severity {
                Severity::Error => "An error: the program is rejected",
                Severity::Warning => "A warning: the program is accepted",
            },
            explanation = self.explanation,
            example = self.example.trim(),
            fix = self.fix,
        )
    }
}

codes! {
    Syntax = "E0001", Error, "syntax error",
        explanation: "The text does not follow the grammar of the language: a token appears where the grammar does not allow it. The parser recovers and reports every syntax error of a file, so fix them from the top: a later error may be a consequence of an earlier one.",
        example: "const N: Int = = 3",
        fix: "Correct the text at the span; the message says what the parser expected there.";

    InvalidCharacter = "E0002", Error, "invalid character",
        explanation: "A character that cannot start any token, such as `@`, `$` or a control character.",
        example: "const N: Int = 3 @",
        fix: "Remove the character; comments start with `//`.";

    UnterminatedString = "E0003", Error, "unterminated string",
        explanation: "A string literal has no closing quote before the end of the line or file.",
        example: "error NOPE = \"never closed",
        fix: "Close the string with `\"`.";

    InvalidEscape = "E0004", Error, "invalid escape in a string",
        explanation: "Strings accept the escapes `\\\"`, `\\\\`, `\\n` and `\\t` only.",
        example: "error NOPE = \"a \\q b\"",
        fix: "Use one of the supported escapes, or write the character itself.";

    NumberOutOfRange = "E0005", Error, "number out of range",
        explanation: "An integer literal does not fit in 64 bits, or a float literal overflows.",
        example: "const N: Int = 99999999999999999999",
        fix: "Use a smaller number.";

    MissingElse = "E0006", Error, "`if` without `else`",
        explanation: "An `if` expression must have an `else` branch, so it always has a value.",
        example: "fn f(x: Int) -> Int = if x > 0 { 1 }",
        fix: "Add `else { ... }`.";

    ChainedComparison = "E0007", Error, "chained comparison",
        explanation: "Comparisons do not chain: `a < b < c` would compare a `Bool` with `c`.",
        example: "fn f(a: Int, b: Int, c: Int) -> Bool = a < b < c",
        fix: "Write `a < b and b < c`.";

    RecordInCondition = "E0008", Error, "record literal in a condition",
        explanation: "A record literal directly in the condition of `if`, `when`, `requires` or `match` would be ambiguous with the block that follows.",
        example: "type P = { x: Int }\nfn f(p: P) -> Bool = if p == P { x: 1 } { true } else { false }",
        fix: "Wrap the record literal in parentheses.";

    ArgumentOrder = "E0009", Error, "positional argument after a named one",
        explanation: "Calls take positional arguments first, then named ones.",
        example: "fn f(a: Int, b: Int) -> Int = a\nconst N: Int = f(a: 1, 2)",
        fix: "Move the positional arguments before the named ones.";

    TooDeep = "E0010", Error, "nesting too deep",
        explanation: "The text nests expressions or blocks more deeply than the parser allows; the rest of the file is not parsed.",
        example: "const N: Int = ((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((1",
        fix: "Split the expression with `let` bindings or helper functions.";

    TooLong = "E0011", Error, "expression too long",
        explanation: "An item's expression chains more operators, calls, fields, indexes or `else if` arms than the parser allows (1000 levels, counting nesting): each link nests the tree one level deeper, and every stage after the parser walks that tree. The rest of the file is not parsed.",
        example: "const N: Int = 1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1",
        fix: "Name parts of the expression with `let` bindings, constants or helper functions, or compute it from a list (`[a, b, c].sum()`).";

    UnknownName = "E0101", Error, "unknown name",
        explanation: "A name does not refer to any local, parameter, member of the layer or of a layer it needs, item, or imported name.",
        example: "layer belief {\n  computed best: Int = bset + 1\n}",
        fix: "Correct the spelling (the help suggests close names in scope), declare the name, or import it with `use`.";

    UnknownType = "E0102", Error, "unknown type",
        explanation: "A type name is not a builtin type, a declared `type` or `enum`, an opaque type of the game, or a type imported from a library module.",
        example: "const N: Integer = 3",
        fix: "Correct the spelling, declare the type, or import it (`use game search`, `use std.belief.{Posterior}`).";

    UnknownField = "E0103", Error, "unknown field",
        explanation: "A record has no field of that name: in a field access `a.f`, a record literal, or a patch of `a.f`.",
        example: "type Budget = { coarse: Int }\nfn f(b: Budget) -> Int = b.coarce",
        fix: "Use one of the record's fields; the help suggests the closest.";

    UnknownMethod = "E0104", Error, "unknown method",
        explanation: "No builtin method of that name exists for the receiver's type.",
        example: "fn f(xs: List<Int>) -> Int = xs.lenght()",
        fix: "Use a method of the type (`harness explain --list` and the docs list the builtins); the help suggests the closest.";

    Duplicate = "E0105", Error, "duplicate definition",
        explanation: "Two items of a module, two members of a layer, two fields, two variants or two parameters have the same name, so a reference to it would be ambiguous.",
        example: "const N: Int = 1\nconst N: Int = 2",
        fix: "Rename or remove one of them.";

    UnknownModule = "E0106", Error, "unknown module",
        explanation: "`use a.b` names a module that is neither a standard-library module nor the header (`harness a.b`) of a loaded file.",
        example: "use examples.serch",
        fix: "Correct the module path, or load the file that declares it (pass its directory to `harness check`).";

    UnknownGame = "E0107", Error, "unknown game",
        explanation: "`use game NAME` names a game whose bindings are not known to the checker.",
        example: "use game serch",
        fix: "Use the name of an installed game, such as `search`.";

    UnknownGameMember = "E0108", Error, "unknown game query",
        explanation: "`game.NAME` is not a query of the game's agent-visible view. Ground truth is never visible to a harness, so only the view's queries exist.",
        example: "use game search\nlayer l {\n  computed n: Int = game.probes_lft\n}",
        fix: "Use one of the game's queries; the help suggests the closest.";

    NoGame = "E0109", Error, "`game` used without `use game`",
        explanation: "The file refers to `game` (a query, an effect or an observation) but does not say which game it is written for.",
        example: "layer l {\n  computed n: Int = game.probes_left\n}",
        fix: "Add `use game <name>` at the top of the file.";

    UnknownLayer = "E0110", Error, "unknown layer",
        explanation: "A `needs` clause or a `revise layer.tunable` names a layer that is not declared.",
        example: "layer planning needs beleif {}",
        fix: "Use the name of a declared layer.";

    UnknownVariant = "E0111", Error, "unknown enum variant",
        explanation: "The enum has no variant of that name.",
        example: "enum Bucket { Coarse, Late }\nconst B: Bucket = Bucket.Early",
        fix: "Use one of the enum's variants.";

    CyclicAlias = "E0112", Error, "cyclic type alias",
        explanation: "A `type` alias names an existing type. An alias defined through itself, directly or through other aliases, names no type at all.",
        example: "type A = B\ntype B = A",
        fix: "Give one of the aliases a real definition: a record type, a built-in type or an `enum`.";

    TypeMismatch = "E0201", Error, "type mismatch",
        explanation: "An expression has a different type from the one its position requires: a declared type, a parameter, a condition (which must be `Bool`), the branches of an `if` or `match`.",
        example: "const N: Int = 0.5",
        fix: "Change the expression or the declared type; convert explicitly (`n.to_float()`, `x.round()`).";

    Arity = "E0202", Error, "wrong number of arguments",
        explanation: "A call passes more or fewer arguments than the function, action, method, effect, observation or variant takes.",
        example: "fn add(a: Int, b: Int) -> Int = a + b\nconst N: Int = add(1)",
        fix: "Pass exactly the declared parameters.";

    NamedArgument = "E0203", Error, "unknown or repeated named argument",
        explanation: "A named argument does not match a parameter, or gives a parameter that already has a value.",
        example: "fn f(a: Int) -> Int = a\nconst N: Int = f(b: 1)",
        fix: "Use the parameter's declared name, once.";

    MissingField = "E0204", Error, "missing field in record literal",
        explanation: "A record literal must give every field of the record type.",
        example: "type Budget = { coarse: Int, late: Int }\nconst B: Budget = Budget { coarse: 1 }",
        fix: "Add the missing fields.";

    NotCallable = "E0205", Error, "not callable",
        explanation: "The expression being called is not a function, action, variant, effect or observation.",
        example: "const N: Int = 3\nconst M: Int = N(1)",
        fix: "Call a function, or remove the parentheses.";

    CannotInfer = "E0206", Error, "type cannot be inferred",
        explanation: "The checker cannot tell the type of an expression, for example an empty list with no expected type.",
        example: "fn f() -> Int = [].len()",
        fix: "Give the value a declared type, for example through a `const` or a `state` field.";

    BadOperands = "E0207", Error, "invalid operands",
        explanation: "An operator is applied to types it does not accept: arithmetic needs two `Int` or two `Float` values (no implicit conversion), `and`/`or`/`not` need `Bool`, ordering needs numbers or strings, `in` needs a list, set or map.",
        example: "const X: Float = 1 + 0.5",
        fix: "Convert explicitly (`1.to_float() + 0.5`) or use operands of the right type.";

    NotIndexable = "E0208", Error, "not indexable",
        explanation: "`a[i]` needs a list (with an `Int` index), a map (with a key) or a type whose bindings define `index`.",
        example: "const N: Int = 3\nconst M: Int = N[0]",
        fix: "Index a list, a map or a grid.";

    ClosureEscapes = "E0209", Error, "closure outside a builtin argument",
        explanation: "Closures exist only as arguments of builtins such as `filter` or `max_by`; they cannot be stored, returned or called, which keeps every evaluation bounded.",
        example: "fn f() -> Int = { let g = |x| x; 1 }",
        fix: "Pass the closure directly to the builtin that uses it, or write a `fn`.";

    RefutablePattern = "E0211", Error, "refutable pattern in `let`",
        explanation: "A `let` must bind every possible value; a pattern such as `Some(x)` does not match `None`.",
        example: "fn f(o: Option<Int>) -> Int = { let Some(x) = o; x }",
        fix: "Use `match`, or a guard `if let Some(x) = o { ... } else { ... }`.";

    TypeArguments = "E0212", Error, "wrong number of type arguments",
        explanation: "A generic type is written with more or fewer type arguments than it takes (`List<T>` takes one, `Map<K, V>` two).",
        example: "const N: List = []",
        fix: "Write the type arguments: `List<Int>`.";

    NonExhaustive = "E0301", Error, "non-exhaustive `match`",
        explanation: "A `match` must handle every possible value of the scrutinee, so evaluation never gets stuck. The message names the missing cases.",
        example: "enum Bucket { Coarse, Late }\nfn f(b: Bucket) -> Int = match b { Bucket.Coarse => 1 }",
        fix: "Add arms for the missing cases, or a final `_ => ...` arm.";

    TransitionNotAnEdge = "E0303", Error, "transition outside the machine",
        explanation: "A state field governed by a `machine` may only move along the machine's edges. A patch that sets it to a literal state is checked against the edges from the state the enclosing guards prove (`available when stage == Stage.A`, `if stage == Stage.A`), or, when no guard says where it starts, against the edges leading into that state at all. Patches whose value is computed are checked when they run (R0017).",
        example: "enum Stage { A, B, C }\nlayer l {\n  state { stage: Stage = Stage.A }\n  machine stage { A -> B -> C }\n  action skip() available when stage == Stage.A { patch stage = Stage.C }\n  decide { skip() }\n}",
        fix: "Add the edge to the machine (`A -> C`), or move through the states the machine allows.";

    BadMachine = "E0304", Error, "`machine` over a field that cannot have one",
        explanation: "A `machine` governs one state field of its own layer whose type is an enum, and names each field at most once; its states are variants of that enum.",
        example: "layer l {\n  state { n: Int = 0 }\n  machine n { A -> B }\n  decide { }\n}",
        fix: "Declare the field in this layer's `state` with an enum type, and write one `machine` per field.";

    UnreachableArm = "W0302", Warning, "unreachable `match` arm",
        explanation: "An arm can never match because earlier arms already cover every value it would match.",
        example: "fn f(n: Int) -> Int = match n { _ => 0, 1 => 1 }",
        fix: "Remove the arm or move it before the arm that covers it.";

    ComputedCycle = "E0401", Error, "computed values depend on themselves",
        explanation: "A computed value reads itself, directly or through other computed values or functions, so it has no value. The message lists the cycle.",
        example: "layer l {\n  computed a: Int = b + 1\n  computed b: Int = a + 1\n}",
        fix: "Break the cycle: one of the values must be state, or be computed from other members.";

    Recursion = "E0402", Error, "recursive function",
        explanation: "Functions cannot call themselves, directly or through other functions: the call graph is acyclic so every evaluation terminates.",
        example: "fn f(n: Int) -> Int = if n == 0 { 0 } else { f(n - 1) }",
        fix: "Write the computation with a bounded aggregate over a finite collection (`sum`, `map`, `filter`...).";

    NestedSim = "E0403", Error, "nested `sim.next`",
        explanation: "`sim.next` is one step deep: a previewed action, a handler or model it runs, or anything it reads, cannot call `sim.next` again.",
        example: "layer l {\n  state { n: Int = 0 }\n  computed v: Float = sim.next(a()).expect(|s| 1.0)\n  action a() { patch n = if v > 0.5 { 1 } else { 0 } }\n}",
        fix: "Read the value you need in the preview's closure (`.expect(|s| s.member)`) instead of previewing again.";

    SimNextArgument = "E0404", Error, "`sim.next` needs an action call",
        explanation: "`sim.next(...)` previews one action: its argument must be a call of an action of this layer or a layer it needs.",
        example: "layer l {\n  computed v: Float = sim.next(3).expect(|s| 1.0)\n}",
        fix: "Pass an action call: `sim.next(shoot(cell))`.";

    HigherLayerRead = "E0501", Error, "read of a layer that is not needed",
        explanation: "A layer reads only its own members and those of the layers it needs, transitively; top-level items read no layer members. Reading a higher or unrelated layer would make switching that layer off change this one, which breaks per-layer ablation.",
        example: "layer belief {\n  computed a: Int = plan_n\n}\nlayer planning needs belief {\n  state { plan_n: Int = 0 }\n}",
        fix: "Move the member down to a layer that both need, or add the layer to `needs` if it really is below.";

    ForeignPatch = "E0502", Error, "patch of another layer's state",
        explanation: "A layer patches only its own state. Changing a lower layer goes through `revise` of a `tunable` it declares.",
        example: "layer belief {\n  state { n: Int = 0 }\n}\nlayer planning needs belief {\n  action a() { patch n = 1 }\n}",
        fix: "Declare the state in this layer, or have the lower layer expose a `tunable` and `revise` it.";

    PatchNotState = "E0503", Error, "patch of something that is not state",
        explanation: "Only state fields can be patched; computed values, tunables, config, constants, parameters and locals cannot.",
        example: "layer l {\n  computed c: Int = 1\n  action a() { patch c = 2 }\n}",
        fix: "Patch the state the value is computed from; change a tunable with `revise`.";

    ReviseNotTunable = "E0504", Error, "revision of something that is not a tunable",
        explanation: "`revise layer.name` changes a parameter that the layer declared `tunable`; state, computed values and config cannot be revised.",
        example: "layer a {\n  state { n: Int = 0 }\n}\nlayer b needs a {\n  revise when true { revise a.n = 1 }\n}",
        fix: "Declare the parameter `tunable name: Type = default in lo..=hi` in the lower layer.";

    ReviseNotNeeded = "E0505", Error, "revision of a layer that is not needed",
        explanation: "A layer revises only its own tunables and those of the layers it needs (transitively), and sets defaults (`tunable layer.name = value`) only for the layers it needs; never for a higher or unrelated layer.",
        example: "layer a {\n  tunable t: Int = 1 in 0..=5\n}\nlayer b {\n  revise when true { revise a.t = 2 }\n}",
        fix: "Revise from the tunable's own layer or from a layer that needs it (`layer b needs a`).";

    ReviseOutOfRange = "E0506", Error, "revision out of range",
        explanation: "A literal revision sets a tunable outside the range its layer declared.",
        example: "layer a {\n  tunable t: Int = 1 in 0..=5\n}\nlayer b needs a {\n  revise when true { revise a.t = 9 }\n}",
        fix: "Stay within the declared range, or widen the range in the lower layer.";

    LayerCycle = "E0507", Error, "layers need each other",
        explanation: "The `needs` relation between layers must be acyclic, so that layers have an order from bottom to top.",
        example: "layer a needs b {}\nlayer b needs a {}",
        fix: "Remove one of the `needs`.";

    UngatedEffect = "E0508", Error, "gated effect not provided to the layer",
        explanation: "A game can gate some of its effects (the tools of a provisioning level, for example). A layer may emit a gated effect only if it, or a layer it needs, declares it with `uses game.<effect>`; switching that layer off then takes the effect away, so a stack without it cannot reach the tool. This makes 'this level cannot simulate' a checked property rather than a convention.",
        example: "use game cooling\nlayer k3 {\n  action roll() { emit game.simulate(60, [], [], []) }\n}",
        fix: "Declare the effect on the layer that provides it (`layer k5 needs k4 uses game.simulate { ... }`) and emit it from that layer or one that needs it.";

    OwnTunableDefault = "E0509", Error, "layer default for its own tunable",
        explanation: "`tunable layer.name = value` sets, while the layer holding it is on, the default of a tunable of a layer it needs: a layer that switches a lower layer's behaviour does so without revising it, so no turn records a revision. A layer's own tunables take their default where they are declared.",
        example: "layer a {\n  tunable t: Int = 1 in 0..=5\n  tunable a.t = 2\n}",
        fix: "Write the default in the tunable's declaration, or move the member into a layer that needs this one.";

    EmitOutsideAction = "E0601", Error, "`emit` outside an action",
        explanation: "Effects are sent to the game only by actions, and only an action can end the episode with `halt`; handlers and revise blocks only patch state.",
        example: "use game search\nlayer l {\n  on game.answer(cell, dir) { emit game.probe(cell) }\n}",
        fix: "Move the `emit` into an action.";

    ReviseOutsideBlock = "E0602", Error, "`revise` statement outside a revise block",
        explanation: "`revise layer.tunable ...` statements appear only in `revise when ... { }` blocks, so revisions happen in the turn's revise phase.",
        example: "layer a {\n  tunable t: Int = 1 in 0..=5\n}\nlayer b needs a {\n  action x() { revise a.t = 2 }\n}",
        fix: "Move the statement into a `revise when cond { ... }` block.";

    UnknownError = "E0603", Error, "undeclared error code",
        explanation: "`requires ... else fail CODE` names an error that is not declared with `error CODE = \"message\"`. Error codes are declared, not free strings.",
        example: "layer l {\n  action a() requires true else fail NOPE {}\n}",
        fix: "Declare it: `error NOPE = \"what went wrong\"`.";

    UnknownEffect = "E0604", Error, "unknown effect",
        explanation: "`emit game.NAME(...)` or `model game.NAME` names an effect the game does not accept.",
        example: "use game search\nlayer l {\n  action a() { emit game.prob(1) }\n}",
        fix: "Use one of the game's effects; the help suggests the closest.";

    UnknownObservation = "E0605", Error, "unknown observation",
        explanation: "`on game.NAME` or a model branch names an observation the game does not send.",
        example: "use game search\nlayer l {\n  on game.probe(cell) {}\n}",
        fix: "Use one of the game's observations.";

    MessageParams = "E0606", Error, "wrong parameters for an effect or observation",
        explanation: "An `on` handler or a `model` binds one name per field of the observation or argument of the effect.",
        example: "use game search\nlayer l {\n  on game.answer(cell) {}\n}",
        fix: "Bind exactly the declared fields, in order.";

    RuleNotAction = "E0607", Error, "decide rule is not an action call",
        explanation: "A decide rule chooses an action: `when guards => action(args)`. The action must be of this layer or a layer it needs.",
        example: "layer l {\n  decide { 3 }\n}",
        fix: "Write an action call.";

    OtherwiseNotLast = "E0608", Error, "misplaced `otherwise` branch",
        explanation: "A model has at most one `otherwise` branch, and it comes last: it takes the probability mass the other branches leave.",
        example: "use game search\nlayer l {\n  model game.probe(cell) {\n    game.answer(cell, dir: Dir.Left) otherwise\n    game.answer(cell, dir: Dir.Right) otherwise\n  }\n}",
        fix: "Keep one `otherwise` branch, at the end.";

    UnknownLlm = "E0609", Error, "unknown LLM effect",
        explanation: "`let reply = emit llm.NAME(...)` names an LLM effect that no `llm` item of the program declares, or `let ... = emit` is given something other than an LLM effect (game effects produce no value).",
        example: "layer l {\n  state { n: Int = 0 }\n  revise when n == 0 {\n    let reply = emit llm.ask(\"x\")\n    patch n = 1\n  }\n}",
        fix: "Declare the effect with `llm NAME(params) -> Reply { system \"...\" user \"...\" }`, or fix the name.";

    LlmOutsideBlock = "E0610", Error, "LLM call in the wrong place",
        explanation: "An LLM call is a statement `let reply = emit llm.name(args)`, allowed only in `revise` blocks and actions: the places where a turn may change course. Handlers, computed values and functions stay pure, and a bare `emit llm.name(...)` would drop the reply.",
        example: "use game search\nenum Answer { Yes, No }\nllm ask(q: String) -> Answer { system \"{schema}\" user \"{q}\" }\nlayer l {\n  state { n: Int = 0 }\n  on game.answer(cell, dir) {\n    let reply = emit llm.ask(\"x\")\n  }\n}",
        fix: "Move the call into a `revise when ... { }` block or an action, and bind its reply with `let`.";

    LlmArguments = "E0611", Error, "wrong arguments for an LLM effect",
        explanation: "An LLM effect takes exactly its declared parameters, positionally.",
        example: "enum Answer { Yes, No }\nllm ask(q: String) -> Answer { system \"{schema}\" user \"{q}\" }\nlayer l {\n  state { n: Int = 0 }\n  revise when n == 0 {\n    let reply = emit llm.ask(\"a\", \"b\")\n    patch n = 1\n  }\n}",
        fix: "Pass one argument per declared parameter, in order.";

    LlmBound = "E0612", Error, "invalid `where` bound of an LLM reply",
        explanation: "A `where` bound names a field of the reply record (or, as `steps.tool`, a field of the records in a list) and says what it allows: `field in lo..=hi` a numeric range, for an `Int` or `Float` field (or a list or option of them), with literal bounds of the field's type; `field len in lo..=hi` the number of items of a `List` field; `field in {A, B}` the variants an enum field may take, which must be variants of its enum. A range must not be empty. The generated `{schema}` and the JSON Schema sent to the provider show only what the bounds allow, and a reply outside its bounds is an `OutOfRange` or `SchemaViolation` failure, never a value.",
        example: "type Reply = { kind: String, n: Int }\nllm ask() -> Reply where kind in 0..=3 { system \"{schema}\" user \"go\" }",
        fix: "Bound only numeric fields of the reply, with literal bounds of the field's type.";

    LlmReplyType = "E0613", Error, "unsupported LLM reply type",
        explanation: "An LLM reply is validated JSON, so its type is a record or an enum of unit variants. A record's fields are `Int`, `Float`, `Bool`, `String`, enums of unit variants, `Option` of one of these (a missing key or `null` is `None`), or `List`s of these or of records of them (with a mandatory `len` bound, E0615).",
        example: "llm ask() -> List<Int> { system \"{schema}\" user \"go\" }",
        fix: "Declare a record type of scalar fields (`type Reply = { n: Int, why: String }`) and reply with it.";

    LlmPlaceholder = "E0614", Error, "unknown placeholder in an LLM prompt",
        explanation: "In an `llm` item's templates, `{name}` is replaced by the parameter `name` and `{schema}` by the reply's schema hint; any other `{...}` is a mistake. Write `{{` and `}}` for literal braces.",
        example: "enum Answer { Yes, No }\nllm ask(q: String) -> Answer { system \"{schema}\" user \"{question}\" }",
        fix: "Use a declared parameter's name, `{schema}`, or double the braces.";

    LlmRetry = "E0616", Error, "invalid `retry` of an LLM effect",
        explanation: "`retry N with \"...\"` asks the model again, in the same conversation, after a reply that is malformed, breaks its type or bounds, or fails an `ensure`. `N` is a literal from 1 to 5: each retry is a call against the game's budget, and a bound keeps a turn's cost known. In the feedback template, `{error}` is what was wrong with the last reply; the item's parameters and `{schema}` work as in the prompts.",
        example: "type Reply = { n: Int }\nllm ask() -> Reply retry 9 with \"Wrong: {error}\" { system \"{schema}\" user \"go\" }",
        fix: "Write a number of retries from 1 to 5.";

    LlmListLength = "E0615", Error, "list field of an LLM reply without a length bound",
        explanation: "A `List` field of an LLM reply needs a `where field len in lo..=hi` bound: the model writes the list, and without a bound a reply could be any length. The bound also goes into the generated `{schema}` and the JSON Schema sent to the provider; a reply with too few or too many items is an `OutOfRange` failure.",
        example: "type Step = { tool: String }\ntype Plan = { steps: List<Step> }\nllm plan(task: String) -> Plan { system \"{schema}\" user \"{task}\" }",
        fix: "Add `where steps len in 1..=8` (with the range the task needs) to the `llm` item.";

    DefaultOutOfRange = "E0701", Error, "default out of range",
        explanation: "A `config` entry's or `tunable`'s default value lies outside its declared range.",
        example: "config {\n  n: Int = 50 in 1..=10\n}",
        fix: "Change the default or the range.";

    InvalidRange = "E0702", Error, "invalid range",
        explanation: "A range's bounds must be literals of the parameter's type (`Int` or `Float`) with the lower bound not above the upper. On a `List`, `Set` or `Map` parameter the range bounds its number of elements and its bounds are `Int` literals: a value set with `--set-json` outside it is refused, and the checker's cost bound takes its length from it.",
        example: "config {\n  n: Int = 5 in 10..=1\n}",
        fix: "Write `lo..=hi` with `lo <= hi`.";

    NotConstant = "E0703", Error, "not a constant",
        explanation: "A `const` value is computed before the episode starts, so it reads only literals, other constants and pure builtins; no state, config or game queries.",
        example: "use game search\nconst N: Int = game.probes_left",
        fix: "Use `config` for run parameters, or a `computed` value for things that change.";

    RoleMissing = "E0801", Error, "protocol role missing",
        explanation: "Under a protocol (`harness check --protocol jit4`), every layer of a harness declares one of the protocol's roles (`layer recall role memory ...`), and every role is played. Protocol jit4 has four roles, bottom to top: `memory` (what was observed), `planning` (a directive), `capability` (the effects the action layer may use) and `action` (the decisions). A layer without a role, or a role no layer plays, leaves the harness outside the protocol, so a tool that swaps or generates role modules cannot use it. Case files and examples ask for the protocol with a first line `//@ protocol jit4`.",
        example: "//@ protocol jit4\nuse game search\nlayer memory {\n}",
        fix: "Declare each layer's role with `role <name>` after its name, and add a layer for every role the message names.";

    RoleRepeated = "E0802", Error, "protocol role repeated or unknown",
        explanation: "Under a protocol, each role is played by exactly one layer, and a role is one of the protocol's words (jit4: `memory`, `planning`, `capability`, `action`). Two layers with one role would make the module that fills the role ambiguous; an unknown word is usually a typo, which the help corrects.",
        example: "//@ protocol jit4\nuse game search\nlayer memory role memory {\n}\nlayer notes role memory needs memory {\n}",
        fix: "Merge the layers that share a role, give one of them another role, or correct the role's spelling.";

    RoleChain = "E0803", Error, "roles out of order",
        explanation: "The roles of a protocol build on each other in a fixed order; under jit4 each layer needs the layer of the role below it (`planning needs memory`, `capability needs planning`, `action needs capability`), and no layer needs a layer of its own role or a role above. The runtime then runs them in the protocol's order (memory, planning, capability, action) and switching a role off switches off every role above it.",
        example: "//@ protocol jit4\nuse game search\nlayer memory role memory {\n}\nlayer planning role planning {\n  computed directive: Option<Int> = None\n}",
        fix: "Add the layer of the role below to the `needs` list (`layer planning role planning needs memory`), and remove needs of higher roles.";

    RoleActs = "E0804", Error, "decision outside the action role",
        explanation: "Under jit4 only the action layer acts: memory records observations, planning computes a directive and capability computes the set of effects the action may use. A `decide` rule, or an action that emits a game effect, in any other role would let that module act past the capability's set. LLM calls in `revise` blocks stay allowed in every role.",
        example: "//@ protocol jit4\nuse game search\nlayer memory role memory {\n  action guess(cell: Int) {\n    emit game.guess(cell)\n  }\n  decide {\n    guess(0)\n  }\n}",
        fix: "Move the `decide` rules and the actions that emit into the action layer.";

    NoDirective = "E0805", Error, "planning without a directive",
        explanation: "Under jit4 the planning layer exposes what it tells the layers above as `computed directive: T`, of any type. A planner that directs nothing (the protocol's empty plan) still says so, with `computed directive: Option<Int> = None` for example, so that every planning module has the same interface and one can replace another.",
        example: "//@ protocol jit4\nuse game search\nlayer memory role memory {\n}\nlayer planning role planning needs memory {\n}",
        fix: "Declare `computed directive: T = ...` in the planning layer.";

    NoExposed = "E0806", Error, "capability without an effect set",
        explanation: "Under jit4 the capability layer exposes the game effects the action layer may use this turn as `computed exposed: Set<Effect>`. `Effect` is the enum of the game's effects that every game's bindings carry, one variant per effect under its own name (`Effect.probe` for `game.probe`).",
        example: "//@ protocol jit4\nuse game search\nlayer memory role memory {\n}\nlayer planning role planning needs memory {\n  computed directive: Option<Int> = None\n}\nlayer capability role capability needs planning {\n  computed exposed: Set<Int> = [1]\n}",
        fix: "Declare `computed exposed: Set<Effect> = [Effect.name, ...]` in the capability layer.";

    UnexposedEffect = "E0807", Error, "effect not gated on the capability",
        explanation: "Under jit4 the action layer uses only the effects the capability layer exposes: every action of the action layer that emits `game.x` is available only when `Effect.x in exposed`, written as a conjunct of its `available when` condition. The check is what makes the capability module a real constraint: replacing it changes what the harness can do, and nothing else does.",
        example: "//@ protocol jit4\nuse game search\nlayer memory role memory {\n}\nlayer planning role planning needs memory {\n  computed directive: Option<Int> = None\n}\nlayer capability role capability needs planning {\n  computed exposed: Set<Effect> = [Effect.guess]\n}\nlayer act role action needs capability {\n  action guess(cell: Int) {\n    emit game.guess(cell)\n  }\n  decide {\n    guess(0)\n  }\n}",
        fix: "Gate the action: `available when Effect.x in exposed` (with `and` for other conditions).";

    CostOverLimit = "E0901", Error, "the work of a turn phase is over the limit",
        explanation: "The checker bounds the work of each phase of a turn (observe, reflect, revise, decide, act) from the program alone: literal ranges, the declared ranges of config entries and tunables, the sizes games declare for their queries, and `sim.next` fan-out. A builtin that takes a closure runs it once per element of its receiver, so nested aggregates multiply. When a phase's bound passes the limit (by default 50,000,000 steps, the interpreter's step budget per turn; `harness check --cost-limit N` changes it), the program is rejected at the smallest expression whose own bound passes it, instead of running for hours. `harness check --cost` prints the bound of every phase.",
        example: "layer l {\n  computed n: Int = range(0, 1000000).map(|i| range(0, 1000000).sum()).sum()\n}",
        fix: "Make the aggregate smaller (a shorter range, fewer candidates, fewer previews), aggregate once instead of once per element, or raise the limit with `--cost-limit` if the work is intended.";

    UnusedState = "W0001", Warning, "unused state field",
        explanation: "A state field is never read (patches do not count as reads).",
        example: "layer l {\n  state { n: Int = 0 }\n}",
        fix: "Read it, or remove it.";

    UnusedComputed = "W0002", Warning, "unused computed value",
        explanation: "A computed value is never read, in its own layer or in layers above.",
        example: "layer l {\n  computed c: Int = 1\n}",
        fix: "Read it, or remove it.";

    UnusedFn = "W0003", Warning, "unused function",
        explanation: "A function is never called.",
        example: "fn f() -> Int = 1",
        fix: "Call it, or remove it.";

    UnusedConst = "W0004", Warning, "unused constant",
        explanation: "A constant is never read.",
        example: "const N: Int = 1",
        fix: "Read it, or remove it.";

    UnusedError = "W0005", Warning, "unused error code",
        explanation: "A declared error code is never named by a `requires ... else fail CODE`.",
        example: "error NOPE = \"never raised\"",
        fix: "Use it, or remove it.";

    EmptyFile = "W0006", Warning, "empty file",
        explanation: "The file holds no items: nothing to check, and no module for others to use. Often a file saved before it was written, or a wrong path.",
        example: "// only a comment",
        fix: "Write the harness, or remove the file from the paths given to `harness check`.";

    Internal = "E9999", Error, "internal error",
        explanation: "The checker met a situation it does not handle: a bug in harness, not in your file. It is reported as a diagnostic instead of a crash.",
        example: "// no program should trigger this",
        fix: "Report it with the file that triggers it.";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_and_well_formed() {
        let mut seen = std::collections::BTreeSet::new();
        for code in Code::ALL {
            let info = code.info();
            assert!(seen.insert(info.code), "duplicate code {}", info.code);
            let prefix = match info.severity {
                Severity::Error => 'E',
                Severity::Warning => 'W',
            };
            assert!(
                info.code.starts_with(prefix),
                "{} has the wrong prefix",
                info.code
            );
            assert_eq!(Code::parse(info.code), Some(*code));
        }
    }
}
