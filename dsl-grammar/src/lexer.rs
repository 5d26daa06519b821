//! The lexer: turns source text into a lossless stream of [`Token`]s, trivia included.
//!
//! Every byte of the input belongs to exactly one token, so concatenating the token texts gives
//! back the input. Text that is not part of the language becomes an [`TokenKind::Error`] token
//! (one per unknown character) and an unterminated string becomes a
//! [`TokenKind::UnterminatedString`] token that runs to the end of the input; the lexer itself
//! never fails. Keywords are recognised after the fact from identifier tokens, which keeps the
//! logos automaton small.

use logos::Logos;
use serde::Serialize;

use crate::ast::Span;

/// One token: its kind and the bytes it covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Token {
    /// What kind of token it is.
    pub kind: TokenKind,
    /// The bytes it covers; always on char boundaries.
    pub span: Span,
}

/// The kinds of token, trivia included.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum TokenKind {
    /// Spaces, tabs and carriage returns.
    Whitespace,
    /// A line feed.
    Newline,
    /// A `// comment` up to the end of the line.
    Comment,
    /// A `/// documentation` line.
    DocComment,
    /// A name that is not a keyword.
    Ident,
    /// An integer literal such as `1_000`.
    Int,
    /// A float literal such as `0.5` or `1e-3`.
    Float,
    /// A complete string literal, quotes included.
    String,
    /// A string literal without its closing quote; it runs to the end of the input.
    UnterminatedString,
    /// A character that cannot start any token.
    Error,

    /// `harness`
    KwHarness,
    /// `use`
    KwUse,
    /// `game`
    KwGame,
    /// `type`
    KwType,
    /// `enum`
    KwEnum,
    /// `const`
    KwConst,
    /// `config`
    KwConfig,
    /// `fn`
    KwFn,
    /// `error`
    KwError,
    /// `layer`
    KwLayer,
    /// `needs`
    KwNeeds,
    /// `uses`
    KwUses,
    /// `state`
    KwState,
    /// `tunable`
    KwTunable,
    /// `computed`
    KwComputed,
    /// `action`
    KwAction,
    /// `available`
    KwAvailable,
    /// `when`
    KwWhen,
    /// `requires`
    KwRequires,
    /// `else`
    KwElse,
    /// `fail`
    KwFail,
    /// `model`
    KwModel,
    /// `with`
    KwWith,
    /// `probability`
    KwProbability,
    /// `otherwise`
    KwOtherwise,
    /// `on`
    KwOn,
    /// `decide`
    KwDecide,
    /// `machine`
    KwMachine,
    /// `revise`
    KwRevise,
    /// `patch`
    KwPatch,
    /// `emit`
    KwEmit,
    /// `halt`
    KwHalt,
    /// `let`
    KwLet,
    /// `if`
    KwIf,
    /// `match`
    KwMatch,
    /// `in`
    KwIn,
    /// `not`
    KwNot,
    /// `and`
    KwAnd,
    /// `or`
    KwOr,
    /// `true`
    KwTrue,
    /// `false`
    KwFalse,
    /// `sim`
    KwSim,
    /// `llm`
    KwLlm,

    /// `(`
    LParen,
    /// `)`
    RParen,
    /// `[`
    LBracket,
    /// `]`
    RBracket,
    /// `{`
    LBrace,
    /// `}`
    RBrace,
    /// `,`
    Comma,
    /// `;`
    Semi,
    /// `:`
    Colon,
    /// `.`
    Dot,
    /// `..`
    DotDot,
    /// `..=`
    DotDotEq,
    /// `=`
    Eq,
    /// `==`
    EqEq,
    /// `!=`
    NotEq,
    /// `<`
    Lt,
    /// `<=`
    LtEq,
    /// `>`
    Gt,
    /// `>=`
    GtEq,
    /// `+`
    Plus,
    /// `-`
    Minus,
    /// `*`
    Star,
    /// `/`
    Slash,
    /// `%`
    Percent,
    /// `+=`
    PlusEq,
    /// `-=`
    MinusEq,
    /// `*=`
    StarEq,
    /// `=>`
    FatArrow,
    /// `->`
    Arrow,
    /// `|`
    Pipe,
    /// The end of the input. Never part of the token stream; the parser uses it as the token
    /// after the last one.
    Eof,
}

/// Declares the keywords once, for both directions: [`KEYWORDS`] maps a kind to its text, and
/// [`keyword_kind`] a text to its kind with a `match`, which the compiler turns into a dispatch on
/// the length and the bytes; the lexer asks it for every identifier, so searching the table there
/// would be a string comparison per keyword.
macro_rules! keywords {
    ($($text:literal => $kind:ident,)*) => {
        /// The keywords and their token kinds, in the order of the language reference.
        const KEYWORDS: &[(&str, TokenKind)] = &[$(($text, TokenKind::$kind)),*];

        /// The kind of the keyword spelled `text`, if it is one.
        fn keyword_kind(text: &str) -> Option<TokenKind> {
            match text {
                $($text => Some(TokenKind::$kind),)*
                _ => None,
            }
        }
    };
}

keywords! {
    "harness" => KwHarness,
    "use" => KwUse,
    "game" => KwGame,
    "type" => KwType,
    "enum" => KwEnum,
    "const" => KwConst,
    "config" => KwConfig,
    "fn" => KwFn,
    "error" => KwError,
    "layer" => KwLayer,
    "needs" => KwNeeds,
    "uses" => KwUses,
    "state" => KwState,
    "tunable" => KwTunable,
    "computed" => KwComputed,
    "action" => KwAction,
    "available" => KwAvailable,
    "when" => KwWhen,
    "requires" => KwRequires,
    "else" => KwElse,
    "fail" => KwFail,
    "model" => KwModel,
    "with" => KwWith,
    "probability" => KwProbability,
    "otherwise" => KwOtherwise,
    "on" => KwOn,
    "decide" => KwDecide,
    "machine" => KwMachine,
    "revise" => KwRevise,
    "patch" => KwPatch,
    "emit" => KwEmit,
    "halt" => KwHalt,
    "let" => KwLet,
    "if" => KwIf,
    "match" => KwMatch,
    "in" => KwIn,
    "not" => KwNot,
    "and" => KwAnd,
    "or" => KwOr,
    "true" => KwTrue,
    "false" => KwFalse,
    "sim" => KwSim,
    "llm" => KwLlm,
}

impl TokenKind {
    /// True for whitespace, newlines and comments, which the parser skips.
    pub fn is_trivia(self) -> bool {
        matches!(
            self,
            TokenKind::Whitespace | TokenKind::Newline | TokenKind::Comment | TokenKind::DocComment
        )
    }

    /// The keyword spelled `text`, if it is one.
    pub fn keyword(text: &str) -> Option<TokenKind> {
        keyword_kind(text)
    }

    /// The fixed text of a keyword or punctuation token; `None` for tokens whose text varies.
    pub fn fixed_text(self) -> Option<&'static str> {
        use TokenKind::*;
        if let Some((text, _)) = KEYWORDS.iter().find(|(_, kind)| *kind == self) {
            return Some(text);
        }
        Some(match self {
            LParen => "(",
            RParen => ")",
            LBracket => "[",
            RBracket => "]",
            LBrace => "{",
            RBrace => "}",
            Comma => ",",
            Semi => ";",
            Colon => ":",
            Dot => ".",
            DotDot => "..",
            DotDotEq => "..=",
            Eq => "=",
            EqEq => "==",
            NotEq => "!=",
            Lt => "<",
            LtEq => "<=",
            Gt => ">",
            GtEq => ">=",
            Plus => "+",
            Minus => "-",
            Star => "*",
            Slash => "/",
            Percent => "%",
            PlusEq => "+=",
            MinusEq => "-=",
            StarEq => "*=",
            FatArrow => "=>",
            Arrow => "->",
            Pipe => "|",
            _ => return None,
        })
    }
}

/// The raw token set that logos recognises. Keywords are identifiers here; the string and comment
/// callbacks carry the one bit that distinguishes their two public kinds.
#[derive(Logos, Clone, Copy, Debug, PartialEq, Eq)]
enum Raw {
    #[regex(r"[ \t\r]+")]
    Whitespace,
    #[token("\n")]
    Newline,
    #[regex(r"//[^\n]*", |lex| is_doc_comment(lex.slice()))]
    Comment(bool),
    #[regex(r"[A-Za-z_][A-Za-z0-9_]*")]
    Ident,
    #[regex(r"[0-9][0-9_]*")]
    Int,
    #[regex(r"[0-9][0-9_]*\.[0-9][0-9_]*([eE][+-]?[0-9]+)?")]
    #[regex(r"[0-9][0-9_]*[eE][+-]?[0-9]+")]
    Float,
    #[token("\"", lex_string)]
    Str(bool),
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token(",")]
    Comma,
    #[token(";")]
    Semi,
    #[token(":")]
    Colon,
    #[token(".")]
    Dot,
    #[token("..")]
    DotDot,
    #[token("..=")]
    DotDotEq,
    #[token("=")]
    Eq,
    #[token("==")]
    EqEq,
    #[token("!=")]
    NotEq,
    #[token("<")]
    Lt,
    #[token("<=")]
    LtEq,
    #[token(">")]
    Gt,
    #[token(">=")]
    GtEq,
    #[token("+")]
    Plus,
    #[token("-")]
    Minus,
    #[token("*")]
    Star,
    #[token("/")]
    Slash,
    #[token("%")]
    Percent,
    #[token("+=")]
    PlusEq,
    #[token("-=")]
    MinusEq,
    #[token("*=")]
    StarEq,
    #[token("=>")]
    FatArrow,
    #[token("->")]
    Arrow,
    #[token("|")]
    Pipe,
}

/// `///` starts a doc comment, but `////` (a ruler or commented-out doc) is a plain comment, as
/// in Rust.
fn is_doc_comment(text: &str) -> bool {
    text.starts_with("///") && !text.starts_with("////")
}

/// Consumes a string literal after its opening quote. Returns whether the closing quote was
/// found; an unterminated string swallows the rest of the input so that the error is reported
/// once, at the literal, rather than as a stream of stray tokens.
fn lex_string(lex: &mut logos::Lexer<Raw>) -> bool {
    let rest = lex.remainder();
    let mut chars = rest.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => {
                lex.bump(i + 1);
                return true;
            }
            '\\' => {
                // Skip the escaped character, whatever it is; invalid escapes are reported by
                // the parser, which knows the literal's span.
                chars.next();
            }
            _ => {}
        }
    }
    lex.bump(rest.len());
    false
}

impl Raw {
    fn kind(self, text: &str) -> TokenKind {
        match self {
            Raw::Whitespace => TokenKind::Whitespace,
            Raw::Newline => TokenKind::Newline,
            Raw::Comment(true) => TokenKind::DocComment,
            Raw::Comment(false) => TokenKind::Comment,
            Raw::Ident => TokenKind::keyword(text).unwrap_or(TokenKind::Ident),
            Raw::Int => TokenKind::Int,
            Raw::Float => TokenKind::Float,
            Raw::Str(true) => TokenKind::String,
            Raw::Str(false) => TokenKind::UnterminatedString,
            Raw::LParen => TokenKind::LParen,
            Raw::RParen => TokenKind::RParen,
            Raw::LBracket => TokenKind::LBracket,
            Raw::RBracket => TokenKind::RBracket,
            Raw::LBrace => TokenKind::LBrace,
            Raw::RBrace => TokenKind::RBrace,
            Raw::Comma => TokenKind::Comma,
            Raw::Semi => TokenKind::Semi,
            Raw::Colon => TokenKind::Colon,
            Raw::Dot => TokenKind::Dot,
            Raw::DotDot => TokenKind::DotDot,
            Raw::DotDotEq => TokenKind::DotDotEq,
            Raw::Eq => TokenKind::Eq,
            Raw::EqEq => TokenKind::EqEq,
            Raw::NotEq => TokenKind::NotEq,
            Raw::Lt => TokenKind::Lt,
            Raw::LtEq => TokenKind::LtEq,
            Raw::Gt => TokenKind::Gt,
            Raw::GtEq => TokenKind::GtEq,
            Raw::Plus => TokenKind::Plus,
            Raw::Minus => TokenKind::Minus,
            Raw::Star => TokenKind::Star,
            Raw::Slash => TokenKind::Slash,
            Raw::Percent => TokenKind::Percent,
            Raw::PlusEq => TokenKind::PlusEq,
            Raw::MinusEq => TokenKind::MinusEq,
            Raw::StarEq => TokenKind::StarEq,
            Raw::FatArrow => TokenKind::FatArrow,
            Raw::Arrow => TokenKind::Arrow,
            Raw::Pipe => TokenKind::Pipe,
        }
    }
}

/// Splits `text` into tokens, trivia included. Never fails: unknown characters become
/// [`TokenKind::Error`] tokens of exactly one character each.
pub fn lex(text: &str) -> Vec<Token> {
    // Code runs about two bytes a token, trivia included (comments run longer): reserving for
    // that up front saves the vector's repeated regrowth, a large part of lexing a member.
    let mut tokens = Vec::with_capacity(text.len() / 2 + 4);
    // A byte-order mark that some editors write at the start of a file is trivia.
    let bom = if text.starts_with('\u{feff}') {
        '\u{feff}'.len_utf8()
    } else {
        0
    };
    if bom > 0 {
        tokens.push(Token {
            kind: TokenKind::Whitespace,
            span: Span::new(0, bom),
        });
    }
    let mut lexer = Raw::lexer(&text[bom..]);
    // `covered` is the end of the text already assigned to tokens. Logos reports errors with
    // the span it gave up on; re-deriving error tokens from `covered` and the next good token
    // guarantees that every byte is covered exactly once and that spans sit on char boundaries.
    let mut covered = bom;
    while let Some(result) = lexer.next() {
        let span = lexer.span();
        let span = span.start + bom..span.end + bom;
        if let Ok(raw) = result {
            push_errors(text, covered, span.start, &mut tokens);
            let kind = raw.kind(&text[span.clone()]);
            tokens.push(Token {
                kind,
                span: Span::new(span.start, span.end),
            });
            covered = span.end;
        }
    }
    push_errors(text, covered, text.len(), &mut tokens);
    tokens
}

/// Adds one error token per character of `text[from..to]`.
fn push_errors(text: &str, from: usize, to: usize, tokens: &mut Vec<Token>) {
    if from >= to {
        return;
    }
    let Some(gap) = text.get(from..to) else {
        return;
    };
    for (offset, c) in gap.char_indices() {
        let start = from + offset;
        tokens.push(Token {
            kind: TokenKind::Error,
            span: Span::new(start, start + c.len_utf8()),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<TokenKind> {
        lex(text)
            .into_iter()
            .filter(|t| !t.kind.is_trivia())
            .map(|t| t.kind)
            .collect()
    }

    #[test]
    fn numbers_and_ranges() {
        use TokenKind::*;
        assert_eq!(kinds("1..=5"), vec![Int, DotDotEq, Int]);
        assert_eq!(kinds("1..5"), vec![Int, DotDot, Int]);
        assert_eq!(kinds("0.0..=1.0"), vec![Float, DotDotEq, Float]);
        assert_eq!(
            kinds("1_000 1e-3 2.5e3 1e"),
            vec![Int, Float, Float, Int, Ident]
        );
        assert_eq!(kinds("x.1"), vec![Ident, Dot, Int]);
    }

    #[test]
    fn operators_take_the_longest_match() {
        use TokenKind::*;
        assert_eq!(
            kinds("=> -> += -= *= == != <= >= = < > | !"),
            vec![
                FatArrow, Arrow, PlusEq, MinusEq, StarEq, EqEq, NotEq, LtEq, GtEq, Eq, Lt, Gt,
                Pipe, Error
            ]
        );
    }

    #[test]
    fn keywords_and_comments() {
        use TokenKind::*;
        let all: Vec<_> = lex("not in // c\n/// d\n//// e\nnotin")
            .into_iter()
            .map(|t| t.kind)
            .collect();
        assert_eq!(
            all,
            vec![
                KwNot, Whitespace, KwIn, Whitespace, Comment, Newline, DocComment, Newline,
                Comment, Newline, Ident
            ]
        );
    }

    #[test]
    fn every_keyword_lexes_to_its_kind_and_back() {
        for &(text, kind) in KEYWORDS {
            assert_eq!(kinds(text), vec![kind], "{text}");
            assert_eq!(kind.fixed_text(), Some(text));
            // A longer or shorter word is a name.
            assert_eq!(kinds(&format!("{text}x")), vec![TokenKind::Ident]);
            assert_eq!(TokenKind::keyword(&text[1..]).filter(|k| *k == kind), None);
        }
    }

    #[test]
    fn strings_and_errors() {
        use TokenKind::*;
        assert_eq!(kinds(r#""a\"b" "c"#), vec![String, UnterminatedString]);
        assert_eq!(kinds("\"x\\"), vec![UnterminatedString]);
        assert_eq!(kinds("é@"), vec![Error, Error]);
        let tokens = lex("aé");
        assert_eq!(tokens[1].span, Span::new(1, 3));
    }
}
