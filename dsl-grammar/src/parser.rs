//! The recovering recursive-descent parser that builds the [`crate::ast`] from tokens.
//!
//! # Conventions
//!
//! - `parse_<rule>` parses the grammar rule of the same name in `harness.pest` and returns
//!   [`PResult`]. `Err(Reported)` means that an error has *already been recorded* and the caller
//!   must recover; errors are never returned as values, so they cannot be lost or reported twice.
//! - `at`, `at_any` and `nth` look at tokens without consuming them; `eat` consumes a token if
//!   it is the expected one and says whether it did; `expect` consumes it or records
//!   "expected X <context>, found Y" and returns `Err`.
//! - `recover_<level>` and `skip_to` skip text after an error up to a synchronisation point and
//!   build the error node that covers the skipped text.
//!
//! # Recovery
//!
//! Errors propagate with `?` to the nearest recovery point: a top-level item (sync on item
//! keywords), a layer member (member keywords), a statement (statement keywords), or an entry of
//! a delimited list (separators and the closing delimiter). Skipping jumps over balanced
//! brackets and stops at an unmatched closing one, so a mistake inside a block never eats the
//! block's `}`. Two more rules keep one mistake from producing many errors: only the first error
//! at a given offset is kept, and once the nesting limit is hit the rest of the file is abandoned.
//!
//! Expressions use precedence climbing, one function per level of the table in
//! `docs/language.md`. The `no_record` flag implements the rule that a record literal cannot
//! appear directly in a condition; brackets of any kind lift it again.

use std::collections::HashSet;

use crate::ast::*;
use crate::lexer::{Token, TokenKind};
use crate::{SyntaxError, SyntaxErrorKind};

use TokenKind as K;

/// The deepest nesting of expressions, types, patterns and statements that the parser accepts.
/// Each level costs about a dozen stack frames, so this keeps the parser well inside the 2 MiB
/// stack of a test or worker thread even in debug builds.
pub const MAX_DEPTH: usize = 128;

/// The greatest height of the tree of one item that the parser builds. Chains (`a + b + c`,
/// `x.f().g()`, `a[0][1]`, `else if` arms) are parsed in loops, but each link nests the tree
/// one level deeper, and every later stage walks the tree recursively; this bound keeps those
/// walks (and dropping the tree) inside the stack. Nesting counts here too.
pub const MAX_HEIGHT: usize = 1000;

/// Marker for "an error has been recorded; recover".
#[derive(Debug)]
pub(crate) struct Reported;

/// The result of a parse function.
pub(crate) type PResult<T> = Result<T, Reported>;

/// A significant (non-trivia) token, with the layout facts that recovery and docs need.
#[derive(Clone, Copy, Debug)]
struct Tok {
    kind: TokenKind,
    span: Span,
    /// True when only whitespace or comments precede the token on its line.
    line_start: bool,
    /// Index into `Parser::docs` of the doc comment right above the token, if any.
    docs: Option<usize>,
}

/// How far an error skips: each level also stops at the keywords of the levels around it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Level {
    Item,
    Member,
    Stmt,
    Entry,
}

/// Which separators a list accepts between its entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sep {
    /// Only `,` (type arguments, list elements, imported names, closure parameters).
    Comma,
    /// `,` or `;`, required between entries.
    Required,
    /// `,` or `;`, optional everywhere (state, config, decide and model blocks).
    Optional,
}

/// The parser's state over one text.
pub(crate) struct Parser<'t> {
    text: &'t str,
    toks: Vec<Tok>,
    docs: Vec<String>,
    pos: usize,
    prev_end: u32,
    errors: Vec<SyntaxError>,
    error_starts: HashSet<u32>,
    /// Lexical errors (invalid characters, unterminated strings) that start before this offset
    /// have been reported already.
    lexical_reported_until: u32,
    depth: usize,
    /// The level of the node being parsed, counted from the base of the innermost chain's
    /// operand: nesting raises it by one. A finished expression parsed from level `e` has a
    /// tree of height at most `peak - e + 1` (see [`Parser::chain`]).
    height: usize,
    /// The greatest level reached since the start of the innermost chain operand being parsed.
    peak: usize,
    abandoned: bool,
}

/// The state of a chain being parsed (see [`Parser::chain`]).
struct Chain {
    /// The height the chain started at.
    base: usize,
    /// The links so far.
    links: usize,
    /// `max(h0, 1 + max(hk - k))` over the operands counted so far.
    best: usize,
}

impl<'t> Parser<'t> {
    /// Prepares a parser over `text` and its full token stream.
    pub(crate) fn new(text: &'t str, tokens: &[Token]) -> Self {
        let mut toks = Vec::with_capacity(tokens.len() / 2 + 1);
        let mut docs = Vec::new();
        let mut pending_doc: Option<String> = None;
        let mut line_start = true;
        for token in tokens {
            match token.kind {
                K::Whitespace | K::Comment => {}
                K::Newline => line_start = true,
                // Where a doc comment belongs must not depend on the layout, since the formatter
                // moves comments across opening brackets and separators (`state\n/// d\n{` is
                // printed `state {\n/// d`). So a doc comment after code on its line documents
                // nothing, and one before `{`, `(`, `[`, `,` or `;` documents what follows it.
                K::DocComment if !line_start => {}
                K::LBrace | K::LParen | K::LBracket | K::Comma | K::Semi => {
                    toks.push(Tok {
                        kind: token.kind,
                        span: token.span,
                        line_start,
                        docs: None,
                    });
                    line_start = false;
                }
                K::DocComment => {
                    let line = &text[token.span.range()];
                    let line = line.strip_prefix("///").unwrap_or(line);
                    let line = line.strip_prefix(' ').unwrap_or(line);
                    let doc = pending_doc.get_or_insert_with(String::new);
                    if !doc.is_empty() {
                        doc.push('\n');
                    }
                    // Trailing whitespace is not part of the documentation: the formatter drops it,
                    // and the tree must not change when it does.
                    doc.push_str(line.trim_end());
                }
                kind => {
                    let docs_index = pending_doc.take().map(|doc| {
                        docs.push(doc);
                        docs.len() - 1
                    });
                    toks.push(Tok {
                        kind,
                        span: token.span,
                        line_start,
                        docs: docs_index,
                    });
                    line_start = false;
                }
            }
        }
        let end = Span::new(text.len(), text.len());
        toks.push(Tok {
            kind: K::Eof,
            span: end,
            line_start: true,
            docs: None,
        });
        Parser {
            text,
            toks,
            docs,
            pos: 0,
            prev_end: 0,
            errors: Vec::new(),
            error_starts: HashSet::new(),
            lexical_reported_until: 0,
            depth: 0,
            height: 0,
            peak: 0,
            abandoned: false,
        }
    }

    /// The errors found, in source order.
    pub(crate) fn finish(mut self) -> Vec<SyntaxError> {
        self.errors.sort_by_key(|e| (e.span.start, e.span.end));
        self.errors
    }

    // ---------------------------------------------------------------------------------------
    // Token access
    // ---------------------------------------------------------------------------------------

    fn tok(&self) -> Tok {
        self.toks[self.pos.min(self.toks.len() - 1)]
    }

    fn peek(&self) -> TokenKind {
        self.tok().kind
    }

    fn nth(&self, n: usize) -> TokenKind {
        self.toks[(self.pos + n).min(self.toks.len() - 1)].kind
    }

    fn at(&self, kind: TokenKind) -> bool {
        self.peek() == kind
    }

    fn at_any(&self, kinds: &[TokenKind]) -> bool {
        kinds.contains(&self.peek())
    }

    /// True at a token that can start a name in an expression or an effect path.
    fn at_name(&self) -> bool {
        self.at_any(&[K::Ident, K::KwGame, K::KwSim, K::KwLlm])
    }

    fn bump(&mut self) -> Tok {
        let tok = self.tok();
        if tok.kind != K::Eof {
            self.pos += 1;
            self.prev_end = tok.span.end;
        }
        tok
    }

    fn eat(&mut self, kind: TokenKind) -> bool {
        if self.at(kind) {
            self.bump();
            true
        } else {
            false
        }
    }

    fn eat_sep(&mut self, sep: Sep) -> bool {
        match sep {
            Sep::Comma => self.eat(K::Comma),
            Sep::Required | Sep::Optional => self.eat(K::Comma) || self.eat(K::Semi),
        }
    }

    fn expect(&mut self, kind: TokenKind, context: &str) -> PResult<Span> {
        if self.at(kind) {
            return Ok(self.bump().span);
        }
        // A `>=` after type arguments is a `>` followed by `=`: split it, as the reference
        // grammar (which has no lexer) naturally does.
        if kind == K::Gt && self.at(K::GtEq) {
            let tok = &mut self.toks[self.pos];
            let gt = Span {
                start: tok.span.start,
                end: tok.span.start + 1,
            };
            tok.kind = K::Eq;
            tok.span.start += 1;
            self.prev_end = gt.end;
            return Ok(gt);
        }
        Err(self.unexpected(&describe_kind(kind), context))
    }

    fn expect_ident(&mut self, what: &str, context: &str) -> PResult<Ident> {
        if self.at(K::Ident) {
            let tok = self.bump();
            return Ok(self.ident(tok));
        }
        Err(self.unexpected(what, context))
    }

    fn ident(&self, tok: Tok) -> Ident {
        Ident {
            name: self.text[tok.span.range()].to_string(),
            span: tok.span,
        }
    }

    /// The doc comment above the current token.
    fn docs(&self) -> Docs {
        match self.tok().docs {
            Some(index) => Docs {
                text: self.docs[index].clone(),
            },
            None => Docs::default(),
        }
    }

    fn span_from(&self, start: u32) -> Span {
        Span {
            start,
            end: self.prev_end.max(start),
        }
    }

    fn start(&self) -> u32 {
        self.tok().span.start
    }

    // ---------------------------------------------------------------------------------------
    // Errors
    // ---------------------------------------------------------------------------------------

    fn report(
        &mut self,
        kind: SyntaxErrorKind,
        span: Span,
        message: String,
        expected: Option<String>,
    ) {
        if self.abandoned || !self.error_starts.insert(span.start) {
            return;
        }
        self.errors.push(SyntaxError {
            kind,
            message,
            span,
            expected,
        });
    }

    /// Records "expected `what` `context`, found <current token>" and returns the marker. At a
    /// malformed token the lexical error is reported instead, because it is the real cause.
    fn unexpected(&mut self, what: &str, context: &str) -> Reported {
        let tok = self.tok();
        if !self.report_lexical(self.pos) {
            let found = self.describe_tok(tok);
            let message = if context.is_empty() {
                format!("expected {what}, found {found}")
            } else {
                format!("expected {what} {context}, found {found}")
            };
            self.report(
                SyntaxErrorKind::UnexpectedToken,
                tok.span,
                message,
                Some(what.to_string()),
            );
        }
        Reported
    }

    /// Reports the lexical error at token `index`, if it is one; says whether it was.
    fn report_lexical(&mut self, index: usize) -> bool {
        let tok = self.toks[index];
        match tok.kind {
            K::Error => {
                if tok.span.start >= self.lexical_reported_until {
                    // One report covers a run of adjacent invalid characters.
                    let mut end = tok.span.end;
                    let mut next = index + 1;
                    while self.toks[next].kind == K::Error && self.toks[next].span.start == end {
                        end = self.toks[next].span.end;
                        next += 1;
                    }
                    let span = Span {
                        start: tok.span.start,
                        end,
                    };
                    self.lexical_reported_until = end;
                    let text = &self.text[span.range()];
                    let message = format!("invalid character {text:?} in the source");
                    self.report(SyntaxErrorKind::InvalidCharacter, span, message, None);
                }
                true
            }
            K::UnterminatedString => {
                if tok.span.start >= self.lexical_reported_until {
                    self.lexical_reported_until = tok.span.end;
                    let message = "this string has no closing `\"`".to_string();
                    self.report(SyntaxErrorKind::UnterminatedString, tok.span, message, None);
                }
                true
            }
            _ => false,
        }
    }

    fn describe_tok(&self, tok: Tok) -> String {
        match tok.kind {
            K::Eof => "the end of the file".to_string(),
            K::Ident => format!("the name `{}`", &self.text[tok.span.range()]),
            K::Int | K::Float => format!("the number `{}`", &self.text[tok.span.range()]),
            K::String => "a string".to_string(),
            kind => describe_kind(kind),
        }
    }

    /// Enters one level of nesting; past [`MAX_DEPTH`] reports the error and abandons the rest
    /// of the file, because every enclosing construct would otherwise report its own
    /// missing closer.
    fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        self.height += 1;
        self.peak = self.peak.max(self.height);
        if self.height > MAX_HEIGHT {
            self.depth -= 1;
            self.height -= 1;
            return Err(self.too_long());
        }
        if self.depth > MAX_DEPTH {
            let tok = self.tok();
            self.report(
                SyntaxErrorKind::TooDeep,
                tok.span,
                format!("nesting is too deep: more than {MAX_DEPTH} levels"),
                None,
            );
            self.abandoned = true;
            self.pos = self.toks.len() - 1;
            self.depth -= 1;
            self.height -= 1;
            return Err(Reported);
        }
        Ok(())
    }

    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> PResult<T>) -> PResult<T> {
        self.enter()?;
        let result = crate::stack::guarded(|| f(self));
        self.depth -= 1;
        self.height -= 1;
        result
    }

    /// Parses a chain: `f` parses the first operand, then calls [`Parser::link`] before each
    /// further link. The tree of a left-nested chain with operands of heights `h0, h1, ..., hn`
    /// has height `n + max(h0, 1 + max(hk - k))`; each operand's height is measured as the peak
    /// its parse reaches above the chain's base, so operands (call arguments, closures) do not
    /// add up, while a chain whose first operand is already deep (`((a + b) + c) + d`) is
    /// bounded by the whole tree's height, not by its own length alone.
    fn chain<T>(&mut self, f: impl FnOnce(&mut Self, &mut Chain) -> PResult<T>) -> PResult<T> {
        let saved_peak = self.peak;
        let mut chain = Chain {
            base: self.height,
            links: 0,
            best: 0,
        };
        self.peak = self.height;
        let result = f(self, &mut chain);
        let height = self.fold(&mut chain);
        self.height = chain.base;
        self.peak = saved_peak.max(chain.base + height - 1);
        if result.is_ok() && chain.base + height - 1 > MAX_HEIGHT {
            return Err(self.too_long());
        }
        result
    }

    /// Counts the operand just parsed into `chain`; returns the chain's height so far.
    fn fold(&mut self, chain: &mut Chain) -> usize {
        let operand = self.peak + 1 - chain.base;
        chain.best = if chain.links == 0 {
            operand
        } else {
            chain.best.max((1 + operand).saturating_sub(chain.links))
        };
        chain.links + chain.best
    }

    /// One more link of the chain being parsed, before its operand (if any) is parsed.
    fn link(&mut self, chain: &mut Chain) -> PResult<()> {
        self.fold(chain);
        chain.links += 1;
        if chain.base + chain.links + chain.best - 1 > MAX_HEIGHT {
            return Err(self.too_long());
        }
        self.height = chain.base;
        self.peak = chain.base;
        Ok(())
    }

    /// One more link of a chain that nests to the right, such as the arms of an `else if`
    /// chain: what follows sits one level below what came before, beside (not above) the
    /// earlier arms' contents.
    fn deeper(&mut self) -> PResult<()> {
        self.height += 1;
        self.peak = self.peak.max(self.height);
        if self.height > MAX_HEIGHT {
            return Err(self.too_long());
        }
        Ok(())
    }

    /// Reports an item whose tree would be higher than [`MAX_HEIGHT`] and abandons the rest of
    /// the file, as the nesting limit does.
    fn too_long(&mut self) -> Reported {
        let tok = self.tok();
        self.report(
            SyntaxErrorKind::TooLong,
            tok.span,
            format!(
                "this expression is too long: its operators, calls, fields, indexes and `else if` \
                 arms nest more than {MAX_HEIGHT} levels deep"
            ),
            None,
        );
        self.abandoned = true;
        self.pos = self.toks.len() - 1;
        Reported
    }

    // ---------------------------------------------------------------------------------------
    // Recovery
    // ---------------------------------------------------------------------------------------

    /// True for keywords that can only start a construct of `level` or of an enclosing level,
    /// so skipping stops at them even inside unbalanced brackets.
    fn is_hard_sync(kind: TokenKind, level: Level) -> bool {
        let item = matches!(
            kind,
            K::KwHarness
                | K::KwUse
                | K::KwType
                | K::KwEnum
                | K::KwConst
                | K::KwConfig
                | K::KwError
                | K::KwLayer
        );
        let member = matches!(
            kind,
            K::KwState
                | K::KwTunable
                | K::KwComputed
                | K::KwAction
                | K::KwModel
                | K::KwOn
                | K::KwDecide
                | K::KwMachine
        );
        let stmt = matches!(kind, K::KwPatch | K::KwEmit | K::KwHalt);
        match level {
            Level::Item => item,
            Level::Member => item || member,
            Level::Stmt | Level::Entry => item || member || stmt,
        }
    }

    /// True for keywords that start a construct of `level` when not inside brackets.
    fn is_soft_sync(kind: TokenKind, level: Level) -> bool {
        match level {
            Level::Item => matches!(kind, K::KwFn | K::KwLlm),
            Level::Member => matches!(kind, K::KwFn | K::KwRevise),
            Level::Stmt | Level::Entry => {
                matches!(kind, K::KwFn | K::KwRevise | K::KwLet | K::KwIf)
            }
        }
    }

    /// Skips tokens up to a synchronisation point for `level` (or one accepted by `stop` outside
    /// brackets), an unmatched closing bracket that ends the enclosing construct, or the end.
    /// Stray closing brackets that close nothing at this level are skipped with the rest.
    /// Lexical errors in the skipped text are still reported. Returns the end of the skipped
    /// text.
    fn skip_to(&mut self, level: Level, stop: &dyn Fn(Tok) -> bool) -> u32 {
        let mut depth = 0usize;
        loop {
            let tok = self.tok();
            if tok.kind == K::Eof || Self::is_hard_sync(tok.kind, level) {
                break;
            }
            if depth == 0 && (Self::is_soft_sync(tok.kind, level) || stop(tok)) {
                break;
            }
            match tok.kind {
                K::LParen | K::LBracket | K::LBrace => depth += 1,
                K::RParen | K::RBracket | K::RBrace => {
                    if depth == 0 && closes_level(tok.kind, level) {
                        break;
                    }
                    depth = depth.saturating_sub(1);
                }
                _ => {}
            }
            self.report_lexical(self.pos);
            self.bump();
        }
        self.prev_end
    }

    // ---------------------------------------------------------------------------------------
    // Files and items
    // ---------------------------------------------------------------------------------------

    /// `file = header? item*`
    pub(crate) fn parse_file(&mut self) -> File {
        let module = if self.eat(K::KwHarness) {
            match self.parse_module_path("after `harness`") {
                Ok(path) => Some(path),
                Err(Reported) => {
                    self.skip_to(Level::Item, &|_| false);
                    None
                }
            }
        } else {
            None
        };
        let mut items = Vec::new();
        while !self.at(K::Eof) {
            items.push(self.parse_item_recovering());
        }
        File {
            module,
            items,
            span: Span::new(0, self.text.len()),
        }
    }

    /// Parses exactly one item and reports any text after it.
    pub(crate) fn parse_single_item(&mut self) -> Item {
        let item = self.parse_item_recovering();
        self.expect_end("the item");
        item
    }

    /// Parses exactly one member and reports any text after it.
    pub(crate) fn parse_single_member(&mut self) -> Member {
        let member = self.parse_member_recovering();
        self.expect_end("the member");
        member
    }

    fn expect_end(&mut self, what: &str) {
        if !self.at(K::Eof) {
            let _ = self.unexpected("the end of the text", &format!("after {what}"));
            let _ = self.skip_to(Level::Item, &|_| false);
            while !self.at(K::Eof) {
                self.report_lexical(self.pos);
                self.bump();
            }
        }
    }

    fn parse_item_recovering(&mut self) -> Item {
        let start = self.start();
        match self.parse_item() {
            Ok(item) => item,
            Err(Reported) => {
                self.skip_to(Level::Item, &|_| false);
                Item::Invalid(self.span_from(start))
            }
        }
    }

    /// `item = use | type_alias | enum | const | config | fn | error | layer`
    fn parse_item(&mut self) -> PResult<Item> {
        let docs = self.docs();
        match self.peek() {
            K::KwUse => self.parse_use().map(Item::Use),
            K::KwType => self.parse_type_alias(docs).map(Item::TypeAlias),
            K::KwEnum => self.parse_enum(docs).map(Item::Enum),
            K::KwConst => self.parse_const(docs).map(Item::Const),
            K::KwConfig => self.parse_config().map(Item::Config),
            K::KwFn => self.parse_fn(docs).map(Item::Fn),
            K::KwError => self.parse_error_decl(docs).map(Item::Error),
            K::KwLayer => self.parse_layer(docs).map(Item::Layer),
            K::KwLlm => self.parse_llm(docs).map(Item::Llm),
            kind => {
                let context = if kind == K::KwHarness {
                    "(the `harness` header must be the first line)"
                } else {
                    "at the top level"
                };
                let err = self.unexpected(
                    "an item (`use`, `type`, `enum`, `const`, `config`, `fn`, `error`, `layer` \
                     or `llm`)",
                    context,
                );
                self.bump();
                Err(err)
            }
        }
    }

    /// `module_path = ident ("." ident)*`
    fn parse_module_path(&mut self, context: &str) -> PResult<Path> {
        let first = self.expect_ident("a module name", context)?;
        let mut segments = vec![first];
        while self.at(K::Dot) && self.nth(1) == K::Ident {
            self.bump();
            let tok = self.bump();
            segments.push(self.ident(tok));
        }
        Ok(path_of(segments))
    }

    /// `use = "use" ("game" ident | module_path ("." "{" ident,* "}")?)`
    fn parse_use(&mut self) -> PResult<Use> {
        let start = self.bump().span.start;
        let kind = if self.eat(K::KwGame) {
            UseKind::Game(self.expect_ident("the game's name", "after `use game`")?)
        } else {
            let path = self.parse_module_path("after `use`")?;
            let names = if self.eat(K::Dot) {
                let (names, _) = self.parse_delimited(
                    K::LBrace,
                    K::RBrace,
                    Sep::Comma,
                    "after `.` in `use`",
                    |p| p.expect_ident("a name to import", "in the `use` list"),
                    |_| None,
                )?;
                Some(names)
            } else {
                None
            };
            UseKind::Module { path, names }
        };
        Ok(Use {
            kind,
            span: self.span_from(start),
        })
    }

    /// `type_alias = "type" ident "=" type`
    fn parse_type_alias(&mut self, docs: Docs) -> PResult<TypeAlias> {
        let start = self.bump().span.start;
        let name = self.expect_ident("the type's name", "after `type`")?;
        self.expect(K::Eq, "after the type's name")?;
        let ty = self.parse_type()?;
        Ok(TypeAlias {
            docs,
            name,
            ty,
            span: self.span_from(start),
        })
    }

    /// `enum = "enum" ident "{" variant,* "}"`
    fn parse_enum(&mut self, docs: Docs) -> PResult<EnumDecl> {
        let start = self.bump().span.start;
        let name = self.expect_ident("the enum's name", "after `enum`")?;
        let (variants, _) = self.parse_delimited(
            K::LBrace,
            K::RBrace,
            Sep::Required,
            "after the enum's name",
            Self::parse_variant,
            |_| None,
        )?;
        Ok(EnumDecl {
            docs,
            name,
            variants,
            span: self.span_from(start),
        })
    }

    /// `variant = ident ("(" type,* ")")?`
    fn parse_variant(&mut self) -> PResult<Variant> {
        let name = self.expect_ident("a variant name", "")?;
        let payload = if self.at(K::LParen) {
            self.parse_delimited(
                K::LParen,
                K::RParen,
                Sep::Required,
                "",
                Self::parse_type,
                |span| Some(TypeExpr::Invalid(span)),
            )?
            .0
        } else {
            Vec::new()
        };
        Ok(Variant {
            span: self.span_from(name.span.start),
            name,
            payload,
        })
    }

    /// `const = "const" ident ":" type "=" expr`
    fn parse_const(&mut self, docs: Docs) -> PResult<ConstDecl> {
        let start = self.bump().span.start;
        let name = self.expect_ident("the constant's name", "after `const`")?;
        self.expect(K::Colon, "after the constant's name")?;
        let ty = self.parse_type()?;
        self.expect(K::Eq, "after the constant's type")?;
        let value = self.parse_expr_or_error(Level::Item)?;
        Ok(ConstDecl {
            docs,
            name,
            ty,
            value,
            span: self.span_from(start),
        })
    }

    /// `config = "config" "{" param* "}"`
    fn parse_config(&mut self) -> PResult<ConfigBlock> {
        let start = self.bump().span.start;
        let (params, _) = self.parse_delimited(
            K::LBrace,
            K::RBrace,
            Sep::Optional,
            "after `config`",
            |p| {
                let docs = p.docs();
                let entry_start = p.start();
                p.parse_param(docs, entry_start)
            },
            |_| None,
        )?;
        Ok(ConfigBlock {
            params,
            span: self.span_from(start),
        })
    }

    /// `param = ident ":" type "=" sum ("in" range)?`
    ///
    /// The default and the bounds are parsed at the `+ -` level, so that the `in` of the range
    /// is not read as the membership operator.
    fn parse_param(&mut self, docs: Docs, start: u32) -> PResult<Param> {
        let name = self.expect_ident("a parameter name", "")?;
        self.expect(K::Colon, "after the parameter's name")?;
        let ty = self.parse_type()?;
        self.expect(K::Eq, "before the parameter's default value")?;
        let default = self.parse_sum(false)?;
        let range = if self.eat(K::KwIn) {
            Some(self.parse_range()?)
        } else {
            None
        };
        Ok(Param {
            docs,
            name,
            ty,
            default,
            range,
            span: self.span_from(start),
        })
    }

    /// `range = sum (".." | "..=") sum`
    fn parse_range(&mut self) -> PResult<RangeExpr> {
        let lo = self.parse_sum(false)?;
        let inclusive = if self.eat(K::DotDotEq) {
            true
        } else {
            self.expect(K::DotDot, "between the range's bounds (or `..=`)")?;
            false
        };
        let hi = self.parse_sum(false)?;
        Ok(RangeExpr {
            span: lo.span.to(hi.span),
            lo,
            hi,
            inclusive,
        })
    }

    /// `fn = "fn" ident "(" typed_param,* ")" "->" type "=" expr`
    fn parse_fn(&mut self, docs: Docs) -> PResult<FnDecl> {
        let start = self.bump().span.start;
        let name = self.expect_ident("the function's name", "after `fn`")?;
        let params = self.parse_typed_params("after the function's name")?;
        self.expect(K::Arrow, "before the function's result type")?;
        let ret = self.parse_type()?;
        self.expect(K::Eq, "before the function's body")?;
        let body = self.parse_expr_or_error(Level::Member)?;
        Ok(FnDecl {
            docs,
            name,
            params,
            ret,
            body,
            span: self.span_from(start),
        })
    }

    fn parse_typed_params(&mut self, context: &str) -> PResult<Vec<TypedParam>> {
        let (params, _) = self.parse_delimited(
            K::LParen,
            K::RParen,
            Sep::Required,
            context,
            Self::parse_typed_param,
            |_| None,
        )?;
        Ok(params)
    }

    /// `typed_param = ident ":" type`
    fn parse_typed_param(&mut self) -> PResult<TypedParam> {
        let name = self.expect_ident("a parameter name", "")?;
        self.expect(K::Colon, "after the parameter's name")?;
        let ty = self.parse_type()?;
        Ok(TypedParam {
            span: self.span_from(name.span.start),
            name,
            ty,
        })
    }

    /// `llm = "llm" ident "(" typed_param,* ")" "->" type ("where" bound ("," bound)*)?
    /// "{" "system" string "user" string "}"`, with `bound = ident "in" range`.
    fn parse_llm(&mut self, docs: Docs) -> PResult<LlmDecl> {
        let start = self.bump().span.start;
        let name = self.expect_ident("the LLM effect's name", "after `llm`")?;
        let params = self.parse_typed_params("after the LLM effect's name")?;
        self.expect(K::Arrow, "before the LLM effect's reply type")?;
        let reply = self.parse_type()?;
        let mut bounds = Vec::new();
        if self.at_word("where") {
            self.bump();
            loop {
                bounds.push(self.parse_llm_bound()?);
                if !self.eat(K::Comma) {
                    break;
                }
            }
        }
        let mut ensures = Vec::new();
        while self.at_word("ensure") {
            let start = self.bump().span.start;
            let condition = self.parse_expr(true)?;
            let message =
                if self.eat(K::KwElse) {
                    Some(self.parse_string_lit(
                        "the message of the `ensure` as a string",
                        "after `else`",
                    )?)
                } else {
                    None
                };
            ensures.push(LlmEnsure {
                condition,
                message,
                span: self.span_from(start),
            });
        }
        let retry = if self.at_word("retry") {
            let start = self.bump().span.start;
            let count = self.parse_sum(false)?;
            self.expect(K::KwWith, "after the number of retries")?;
            let feedback =
                self.parse_string_lit("the retry's feedback as a string", "after `with`")?;
            Some(LlmRetry {
                count,
                feedback,
                span: self.span_from(start),
            })
        } else {
            None
        };
        self.expect(K::LBrace, "to open the LLM effect's prompt")?;
        let system = self.parse_template("system")?;
        let user = self.parse_template("user")?;
        self.expect(K::RBrace, "to close the LLM effect's prompt")?;
        Ok(LlmDecl {
            docs,
            name,
            params,
            reply,
            bounds,
            ensures,
            retry,
            system,
            user,
            span: self.span_from(start),
        })
    }

    /// `bound = ident ("." ident)* ("len" "in" range | "in" ("{" ident,+ "}" | range))`
    fn parse_llm_bound(&mut self) -> PResult<LlmBound> {
        let first = self.expect_ident("a reply field", "in the `where` clause")?;
        let start = first.span;
        let mut path = vec![first];
        while self.eat(K::Dot) {
            path.push(self.expect_ident("a field of the items", "after `.` in a `where` bound")?);
        }
        let kind = if self.at_word("len") {
            self.bump();
            self.expect(K::KwIn, "after `len` in a `where` bound")?;
            LlmBoundKind::Len(self.parse_range()?)
        } else {
            self.expect(K::KwIn, "after the field of a `where` bound")?;
            if self.at(K::LBrace) {
                self.bump();
                let mut variants = Vec::new();
                while !self.at(K::RBrace) {
                    variants.push(self.expect_ident("a variant", "in the set of a `where` bound")?);
                    if !self.eat(K::Comma) {
                        break;
                    }
                }
                self.expect(K::RBrace, "to close the set of variants")?;
                LlmBoundKind::Variants(variants)
            } else {
                LlmBoundKind::Range(self.parse_range()?)
            }
        };
        Ok(LlmBound {
            path,
            kind,
            span: self.span_from(start.start),
        })
    }

    /// True when the current token is the name `word` (a word with a meaning in one place only,
    /// such as `where`, `system` and `user` in an `llm` item).
    fn at_word(&self, word: &str) -> bool {
        let tok = self.tok();
        tok.kind == K::Ident && &self.text[tok.span.range()] == word
    }

    /// A string literal with its unescaped value.
    fn parse_string_lit(&mut self, what: &str, context: &str) -> PResult<StringLit> {
        if !self.at(K::String) {
            return Err(self.unexpected(what, context));
        }
        let tok = self.bump();
        Ok(StringLit {
            value: self.unescape(tok.span),
            span: tok.span,
        })
    }

    /// `word string`: one prompt template of an `llm` item.
    fn parse_template(&mut self, word: &str) -> PResult<StringLit> {
        if !self.at_word(word) {
            return Err(self.unexpected(&format!("`{word}`"), "in the LLM effect's prompt"));
        }
        self.bump();
        if !self.at(K::String) {
            return Err(self.unexpected(
                &format!("the `{word}` template as a string"),
                &format!("after `{word}`"),
            ));
        }
        let tok = self.bump();
        Ok(StringLit {
            value: self.unescape(tok.span),
            span: tok.span,
        })
    }

    /// `error = "error" ident "=" string`
    fn parse_error_decl(&mut self, docs: Docs) -> PResult<ErrorDecl> {
        let start = self.bump().span.start;
        let name = self.expect_ident("the error code", "after `error`")?;
        self.expect(K::Eq, "after the error code")?;
        if !self.at(K::String) {
            return Err(self.unexpected("the error's message as a string", "after `=`"));
        }
        let tok = self.bump();
        let value = self.unescape(tok.span);
        let message = StringLit {
            value,
            span: tok.span,
        };
        Ok(ErrorDecl {
            docs,
            name,
            message,
            span: self.span_from(start),
        })
    }

    /// `layer = "layer" ident ("role" (ident | "action"))? ("needs" ident,+)? ("uses" "game" "." ident,+)?
    /// "{" member* "}"`; `role` is a contextual word, so it stays usable as a name elsewhere.
    fn parse_layer(&mut self, docs: Docs) -> PResult<Layer> {
        let start = self.bump().span.start;
        let name = self.expect_ident("the layer's name", "after `layer`")?;
        let role = if self.at_word("role") {
            self.bump();
            // `action` is a keyword, and also the name of a role of the jit4 protocol.
            if self.at(K::KwAction) {
                let tok = self.bump();
                Some(self.ident(tok))
            } else {
                Some(self.expect_ident("a role name", "after `role`")?)
            }
        } else {
            None
        };
        let mut needs = Vec::new();
        if self.eat(K::KwNeeds) {
            needs.push(self.expect_ident("a layer name", "after `needs`")?);
            while self.eat(K::Comma) {
                needs.push(self.expect_ident("a layer name", "after `,` in `needs`")?);
            }
        }
        let mut uses = Vec::new();
        if self.eat(K::KwUses) {
            loop {
                self.expect(K::KwGame, "in `uses game.<effect>`")?;
                self.expect(K::Dot, "after `game` in `uses`")?;
                uses.push(self.expect_ident("an effect name", "after `game.` in `uses`")?);
                if !self.eat(K::Comma) {
                    break;
                }
            }
        }
        self.expect(K::LBrace, "to open the layer's body")?;
        let mut members = Vec::new();
        loop {
            match self.peek() {
                K::RBrace => {
                    self.bump();
                    break;
                }
                K::Eof => return Err(self.unexpected("`}`", "to close the layer")),
                kind if Self::is_hard_sync(kind, Level::Item) => {
                    return Err(self.unexpected("`}`", "to close the layer"));
                }
                _ => members.push(self.parse_member_recovering()),
            }
        }
        Ok(Layer {
            docs,
            name,
            role,
            needs,
            uses,
            members,
            span: self.span_from(start),
        })
    }

    // ---------------------------------------------------------------------------------------
    // Members
    // ---------------------------------------------------------------------------------------

    fn parse_member_recovering(&mut self) -> Member {
        let start = self.start();
        match self.parse_member() {
            Ok(member) => member,
            Err(Reported) => {
                self.skip_to(Level::Member, &|_| false);
                Member::Invalid(self.span_from(start))
            }
        }
    }

    /// `member = state | tunable | computed | fn | action | model | on | decide | revise | machine`
    fn parse_member(&mut self) -> PResult<Member> {
        let docs = self.docs();
        match self.peek() {
            K::KwState => self.parse_state().map(Member::State),
            K::KwTunable if self.nth(1) == K::Ident && self.nth(2) == K::Dot => {
                self.parse_tunable_default(docs).map(Member::TunableDefault)
            }
            K::KwTunable => {
                let start = self.bump().span.start;
                self.parse_param(docs, start).map(Member::Tunable)
            }
            K::KwComputed => self.parse_computed(docs).map(Member::Computed),
            K::KwFn => self.parse_fn(docs).map(Member::Fn),
            K::KwAction => self.parse_action(docs).map(Member::Action),
            K::KwModel => self.parse_model().map(Member::Model),
            K::KwOn => self.parse_on().map(Member::On),
            K::KwDecide => self.parse_decide().map(Member::Decide),
            K::KwRevise => self.parse_revise_member().map(Member::Revise),
            K::KwMachine => self.parse_machine().map(Member::Machine),
            _ => {
                let err = self.unexpected(
                    "a member (`state`, `tunable`, `computed`, `fn`, `action`, `model`, `on`, \
                     `decide`, `revise` or `machine`)",
                    "in the layer",
                );
                if !self.at_any(&[K::Eof, K::RBrace]) {
                    self.bump();
                }
                Err(err)
            }
        }
    }

    /// `state = "state" "{" state_field* "}"`
    fn parse_state(&mut self) -> PResult<StateBlock> {
        let start = self.bump().span.start;
        let (fields, _) = self.parse_delimited(
            K::LBrace,
            K::RBrace,
            Sep::Optional,
            "after `state`",
            Self::parse_state_field,
            |_| None,
        )?;
        Ok(StateBlock {
            fields,
            span: self.span_from(start),
        })
    }

    /// `state_field = ident ":" type "=" expr`
    fn parse_state_field(&mut self) -> PResult<StateField> {
        let docs = self.docs();
        let name = self.expect_ident("a state field name", "")?;
        self.expect(K::Colon, "after the field's name")?;
        let ty = self.parse_type()?;
        self.expect(K::Eq, "before the field's initial value")?;
        let init = self.parse_expr(false)?;
        Ok(StateField {
            docs,
            span: self.span_from(name.span.start),
            name,
            ty,
            init,
        })
    }

    /// `computed = "computed" ident ":" type "=" expr`
    fn parse_computed(&mut self, docs: Docs) -> PResult<Computed> {
        let start = self.bump().span.start;
        let name = self.expect_ident("the computed value's name", "after `computed`")?;
        self.expect(K::Colon, "after the computed value's name")?;
        let ty = self.parse_type()?;
        self.expect(K::Eq, "before the computed value's definition")?;
        let body = self.parse_expr_or_error(Level::Member)?;
        Ok(Computed {
            docs,
            name,
            ty,
            body,
            span: self.span_from(start),
        })
    }

    /// `action = "action" ident "(" typed_param,* ")" ("available" "when" cond)? requires* block`
    fn parse_action(&mut self, docs: Docs) -> PResult<Action> {
        let start = self.bump().span.start;
        let name = self.expect_ident("the action's name", "after `action`")?;
        let params = self.parse_typed_params("after the action's name")?;
        let available = if self.eat(K::KwAvailable) {
            self.expect(K::KwWhen, "after `available`")?;
            Some(self.parse_expr(true)?)
        } else {
            None
        };
        let mut requires = Vec::new();
        while self.at(K::KwRequires) {
            let clause_start = self.bump().span.start;
            let cond = self.parse_expr(true)?;
            self.expect(
                K::KwElse,
                "after the `requires` condition (`else fail CODE`)",
            )?;
            self.expect(K::KwFail, "after `else` in `requires`")?;
            let code = self.expect_ident("an error code", "after `else fail`")?;
            requires.push(Requires {
                cond,
                code,
                span: self.span_from(clause_start),
            });
        }
        let body = self.parse_block("to open the action's body")?;
        Ok(Action {
            docs,
            name,
            params,
            available,
            requires,
            body,
            span: self.span_from(start),
        })
    }

    /// `effect_path = name ("." ident)*` with an optional `"(" ident,* ")"`.
    fn parse_effect_signature(&mut self, what: &str) -> PResult<(Path, Vec<Ident>)> {
        if !self.at_name() {
            return Err(self.unexpected(what, ""));
        }
        let tok = self.bump();
        let mut segments = vec![self.ident(tok)];
        while self.eat(K::Dot) {
            segments.push(self.expect_ident("a name", "after `.`")?);
        }
        let params = if self.at(K::LParen) {
            self.parse_delimited(
                K::LParen,
                K::RParen,
                Sep::Required,
                "",
                |p| p.expect_ident("a parameter name", ""),
                |_| None,
            )?
            .0
        } else {
            Vec::new()
        };
        Ok((path_of(segments), params))
    }

    /// `model = "model" effect_path params? "{" model_branch* "}"`
    fn parse_model(&mut self) -> PResult<Model> {
        let start = self.bump().span.start;
        let (effect, params) = self.parse_effect_signature("the modelled effect after `model`")?;
        let (branches, _) = self.parse_delimited(
            K::LBrace,
            K::RBrace,
            Sep::Optional,
            "to open the model's branches",
            Self::parse_model_branch,
            |_| None,
        )?;
        Ok(Model {
            effect,
            params,
            branches,
            span: self.span_from(start),
        })
    }

    /// `model_branch = expr ("with" "probability" expr | "otherwise")`
    fn parse_model_branch(&mut self) -> PResult<ModelBranch> {
        let observation = self.parse_expr(false)?;
        let probability = if self.eat(K::KwWith) {
            self.expect(K::KwProbability, "after `with`")?;
            Some(self.parse_expr(false)?)
        } else {
            self.expect(
                K::KwOtherwise,
                "after the observation (or `with probability p`)",
            )?;
            None
        };
        Ok(ModelBranch {
            span: self.span_from(observation.span.start),
            observation,
            probability,
        })
    }

    /// `on = "on" effect_path params? block`
    fn parse_on(&mut self) -> PResult<Handler> {
        let start = self.bump().span.start;
        let (observation, params) = self.parse_effect_signature("an observation after `on`")?;
        let body = self.parse_block("to open the handler's body")?;
        Ok(Handler {
            observation,
            params,
            body,
            span: self.span_from(start),
        })
    }

    /// `decide = "decide" "{" rule* "}"`
    fn parse_decide(&mut self) -> PResult<Decide> {
        let start = self.bump().span.start;
        let (rules, _) = self.parse_delimited(
            K::LBrace,
            K::RBrace,
            Sep::Optional,
            "after `decide`",
            Self::parse_rule,
            |span| {
                Some(Rule {
                    guards: Vec::new(),
                    action: error_expr(span),
                    span,
                })
            },
        )?;
        Ok(Decide {
            rules,
            span: self.span_from(start),
        })
    }

    /// `machine = "machine" ident "{" (chain sep?)* "}"`
    fn parse_machine(&mut self) -> PResult<MachineDecl> {
        let start = self.bump().span.start;
        let field = self.expect_ident("the state field the machine governs", "after `machine`")?;
        let (chains, _) = self.parse_delimited(
            K::LBrace,
            K::RBrace,
            Sep::Optional,
            "after the machine's field",
            Self::parse_chain,
            |_| None,
        )?;
        Ok(MachineDecl {
            field,
            chains,
            span: self.span_from(start),
        })
    }

    /// `chain = ("*" | ident) ("->" ident)+`
    fn parse_chain(&mut self) -> PResult<MachineChain> {
        let start = self.start();
        let any = self.at(K::Star).then(|| self.bump().span);
        let mut states = Vec::new();
        if any.is_none() {
            states.push(self.expect_ident("a state, or `*` for any state", "in the machine")?);
        }
        loop {
            self.expect(K::Arrow, "between the states of a transition")?;
            states.push(self.expect_ident("the state the transition leads to", "after `->`")?);
            if !self.at(K::Arrow) {
                break;
            }
        }
        Ok(MachineChain {
            any,
            states,
            span: self.span_from(start),
        })
    }

    /// `rule = "when" guards "=>" expr | expr`
    fn parse_rule(&mut self) -> PResult<Rule> {
        let start = self.start();
        let guards = if self.eat(K::KwWhen) {
            let guards = self.parse_guards()?;
            self.expect(K::FatArrow, "after the rule's guards")?;
            guards
        } else {
            Vec::new()
        };
        let action = self.parse_expr(false)?;
        Ok(Rule {
            guards,
            action,
            span: self.span_from(start),
        })
    }

    /// `guards = guard ("," guard)*`, `guard = "let" pattern "=" cond | cond`
    fn parse_guards(&mut self) -> PResult<Vec<Guard>> {
        let mut guards = Vec::new();
        loop {
            if self.eat(K::KwLet) {
                let pattern = self.parse_pattern()?;
                self.expect(K::Eq, "after the pattern of `let`")?;
                guards.push(Guard::Let(pattern, self.parse_expr(true)?));
            } else {
                guards.push(Guard::Cond(self.parse_expr(true)?));
            }
            if !self.eat(K::Comma) {
                return Ok(guards);
            }
        }
    }

    /// `revise_member = "revise" "when" cond block`
    /// `tunable_default = "tunable" ident "." ident "=" sum`
    fn parse_tunable_default(&mut self, docs: Docs) -> PResult<TunableDefault> {
        let start = self.bump().span.start;
        let layer = self.expect_ident("the name of a needed layer", "after `tunable`")?;
        self.expect(K::Dot, "between the layer and its tunable")?;
        let name = self.expect_ident("the name of the layer's tunable", "after `.`")?;
        let base = Expr {
            span: layer.span,
            kind: ExprKind::Name(layer),
        };
        let target = Expr {
            span: base.span.to(name.span),
            kind: ExprKind::Field(Box::new(base), name),
        };
        self.expect(K::Eq, "before the tunable's default while this layer is on")?;
        let value = self.parse_sum(false)?;
        Ok(TunableDefault {
            docs,
            target,
            value,
            span: self.span_from(start),
        })
    }

    fn parse_revise_member(&mut self) -> PResult<Revise> {
        let start = self.bump().span.start;
        self.expect(
            K::KwWhen,
            "after `revise` (a revise block is `revise when cond { ... }`)",
        )?;
        let cond = self.parse_expr(true)?;
        let body = self.parse_block("to open the revise block")?;
        Ok(Revise {
            cond,
            body,
            span: self.span_from(start),
        })
    }

    // ---------------------------------------------------------------------------------------
    // Statements
    // ---------------------------------------------------------------------------------------

    /// `block = "{" stmt* "}"`
    fn parse_block(&mut self, context: &str) -> PResult<Block> {
        let start = self.expect(K::LBrace, context)?.start;
        let mut stmts = Vec::new();
        loop {
            match self.peek() {
                K::RBrace => {
                    self.bump();
                    break;
                }
                K::Eof => return Err(self.unexpected("`}`", "to close the block")),
                kind if Self::is_hard_sync(kind, Level::Member) => {
                    return Err(self.unexpected("`}`", "to close the block"));
                }
                _ => {
                    stmts.push(self.parse_stmt_recovering());
                    self.eat_sep(Sep::Optional);
                }
            }
        }
        Ok(Block {
            stmts,
            span: self.span_from(start),
        })
    }

    fn parse_stmt_recovering(&mut self) -> Stmt {
        let start = self.start();
        match self.nested(Self::parse_stmt) {
            Ok(stmt) => stmt,
            Err(Reported) => {
                self.skip_to(Level::Stmt, &|_| false);
                Stmt::Invalid(self.span_from(start))
            }
        }
    }

    /// `stmt = let | patch | emit | revise | if_stmt | halt`
    fn parse_stmt(&mut self) -> PResult<Stmt> {
        let start = self.start();
        match self.peek() {
            K::KwLet => {
                self.bump();
                let pattern = self.parse_pattern()?;
                self.expect(K::Eq, "after the pattern of `let`")?;
                if self.eat(K::KwEmit) {
                    let effect = self.parse_expr(false)?;
                    return Ok(Stmt::LetEmit(pattern, effect, self.span_from(start)));
                }
                let value = self.parse_expr(false)?;
                Ok(Stmt::Let(pattern, value, self.span_from(start)))
            }
            K::KwPatch => {
                self.bump();
                self.parse_patch(start).map(Stmt::Patch)
            }
            K::KwRevise => {
                self.bump();
                self.parse_patch(start).map(Stmt::Revise)
            }
            K::KwEmit => {
                self.bump();
                let effect = self.parse_expr(false)?;
                Ok(Stmt::Emit(effect, self.span_from(start)))
            }
            K::KwIf => self.parse_if_stmt().map(Stmt::If),
            K::KwHalt => {
                self.bump();
                let reason = if self.at(K::String) {
                    HaltReason::Text(self.parse_string_lit("", "")?)
                } else if self.at(K::Ident) {
                    let tok = self.bump();
                    HaltReason::Name(self.ident(tok))
                } else {
                    return Err(self.unexpected(
                        "the reason of `halt`: a name or a string",
                        "as in `halt escalated`",
                    ));
                };
                Ok(Stmt::Halt(HaltStmt {
                    reason,
                    span: self.span_from(start),
                }))
            }
            _ => {
                let err = self.unexpected(
                    "a statement (`let`, `patch`, `emit`, `revise`, `if` or `halt`)",
                    "",
                );
                if !self.at_any(&[K::Eof, K::RBrace]) {
                    self.bump();
                }
                Err(err)
            }
        }
    }

    /// `patch = place assign_op expr` (after `patch` or `revise`)
    fn parse_patch(&mut self, start: u32) -> PResult<Patch> {
        let target = self.parse_place()?;
        let op = match self.peek() {
            K::Eq => AssignOp::Set,
            K::PlusEq => AssignOp::Add,
            K::MinusEq => AssignOp::Sub,
            K::StarEq => AssignOp::Mul,
            _ => return Err(self.unexpected("`=`, `+=`, `-=` or `*=`", "after the place")),
        };
        self.bump();
        let value = self.parse_expr(false)?;
        Ok(Patch {
            target,
            op,
            value,
            span: self.span_from(start),
        })
    }

    /// `place = name ("." ident | "[" expr "]")*`
    fn parse_place(&mut self) -> PResult<Expr> {
        if !self.at_name() {
            return Err(self.unexpected("the name of the place to change", ""));
        }
        let tok = self.bump();
        let mut place = Expr {
            kind: ExprKind::Name(self.ident(tok)),
            span: tok.span,
        };
        loop {
            if self.eat(K::Dot) {
                let field = self.expect_ident("a field name", "after `.`")?;
                let span = place.span.to(field.span);
                place = Expr {
                    kind: ExprKind::Field(Box::new(place), field),
                    span,
                };
            } else if self.at(K::LBracket) {
                let (index, close) = self.parse_bracketed(K::LBracket, K::RBracket)?;
                let span = place.span.to(close);
                place = Expr {
                    kind: ExprKind::Index(Box::new(place), Box::new(index)),
                    span,
                };
            } else {
                return Ok(place);
            }
        }
    }

    /// `if_stmt = "if" guards block ("else" (if_stmt | block))?`
    ///
    /// An `else if` is stored as an `else` block holding the nested `if` alone, with the span
    /// of that `if`.
    ///
    /// As with `if` expressions, the arms of an `else if` chain are parsed in a loop.
    fn parse_if_stmt(&mut self) -> PResult<IfStmt> {
        let mut arms = Vec::new();
        let last = self.chain(|p, _| {
            loop {
                let start = p.bump().span.start;
                let guards = p.parse_guards()?;
                let then = p.parse_block("after the `if` condition")?;
                arms.push((start, guards, then));
                if !p.eat(K::KwElse) {
                    return Ok(None);
                }
                if p.at(K::KwIf) {
                    p.deeper()?;
                } else {
                    return Ok(Some(p.parse_block("after `else`")?));
                }
            }
        })?;
        let mut otherwise = last;
        let mut result: Option<IfStmt> = None;
        for (start, guards, then) in arms.into_iter().rev() {
            if let Some(inner) = result.take() {
                let span = inner.span;
                otherwise = Some(Block {
                    stmts: vec![Stmt::If(inner)],
                    span,
                });
            }
            result = Some(IfStmt {
                guards,
                then,
                otherwise: otherwise.take(),
                span: self.span_from(start),
            });
        }
        // The loop above pushed at least one arm before returning `Ok`.
        result.ok_or(Reported)
    }

    // ---------------------------------------------------------------------------------------
    // Types and patterns
    // ---------------------------------------------------------------------------------------

    /// `type = ident ("." ident)* ("<" type,+ ">")? | "{" (ident ":" type),* "}"`
    fn parse_type(&mut self) -> PResult<TypeExpr> {
        self.nested(Self::parse_type_inner)
    }

    fn parse_type_inner(&mut self) -> PResult<TypeExpr> {
        let start = self.start();
        if self.at(K::LBrace) {
            let (fields, _) = self.parse_delimited(
                K::LBrace,
                K::RBrace,
                Sep::Required,
                "",
                |p| {
                    let name = p.expect_ident("a field name", "in the record type")?;
                    p.expect(K::Colon, "after the field's name")?;
                    Ok((name, p.parse_type()?))
                },
                |_| None,
            )?;
            return Ok(TypeExpr::Record {
                fields,
                span: self.span_from(start),
            });
        }
        let first = self.expect_ident("a type", "")?;
        let mut segments = vec![first];
        while self.eat(K::Dot) {
            segments.push(self.expect_ident("a type name", "after `.`")?);
        }
        let name = path_of(segments);
        let mut args = Vec::new();
        if self.eat(K::Lt) {
            loop {
                args.push(self.parse_type()?);
                if !self.eat(K::Comma) || self.at_any(&[K::Gt, K::GtEq]) {
                    break;
                }
            }
            self.expect(K::Gt, "to close the type arguments")?;
        }
        Ok(TypeExpr::Named {
            name,
            args,
            span: self.span_from(start),
        })
    }

    /// `pattern = "_" | literal | path ("(" pattern,* ")")? | ident`
    ///
    /// A single lower-case name binds; a single upper-case name (`None`), a dotted path or a
    /// name with arguments is a variant.
    fn parse_pattern(&mut self) -> PResult<Pattern> {
        self.nested(Self::parse_pattern_inner)
    }

    fn parse_pattern_inner(&mut self) -> PResult<Pattern> {
        let start = self.start();
        let kind = match self.peek() {
            K::Int | K::Float | K::String | K::KwTrue | K::KwFalse => {
                PatternKind::Literal(self.parse_primary(false)?)
            }
            K::Minus if matches!(self.nth(1), K::Int | K::Float) => {
                self.bump();
                let literal = self.parse_primary(false)?;
                let span = Span {
                    start,
                    end: literal.span.end,
                };
                PatternKind::Literal(Expr {
                    kind: ExprKind::Unary(UnaryOp::Neg, Box::new(literal)),
                    span,
                })
            }
            K::Ident => {
                let tok = self.bump();
                let first = self.ident(tok);
                if first.name == "_" && !self.at_any(&[K::Dot, K::LParen]) {
                    PatternKind::Wildcard
                } else {
                    let mut segments = vec![first];
                    while self.eat(K::Dot) {
                        segments.push(self.expect_ident("a variant name", "after `.`")?);
                    }
                    let has_args = self.at(K::LParen);
                    let args = if has_args {
                        self.parse_delimited(
                            K::LParen,
                            K::RParen,
                            Sep::Required,
                            "",
                            Self::parse_pattern,
                            |span| {
                                Some(Pattern {
                                    kind: PatternKind::Error,
                                    span,
                                })
                            },
                        )?
                        .0
                    } else {
                        Vec::new()
                    };
                    let upper = segments[0]
                        .name
                        .starts_with(|c: char| c.is_ascii_uppercase());
                    if segments.len() == 1 && !has_args && !upper {
                        let name = segments.remove(0);
                        PatternKind::Bind(name)
                    } else {
                        PatternKind::Variant(path_of(segments), args)
                    }
                }
            }
            _ => return Err(self.unexpected("a pattern", "")),
        };
        Ok(Pattern {
            kind,
            span: self.span_from(start),
        })
    }

    // ---------------------------------------------------------------------------------------
    // Expressions
    // ---------------------------------------------------------------------------------------

    /// Parses an expression in a position where recovery can stop at the next `level` keyword:
    /// on error the value becomes an error node and the declaration around it survives.
    fn parse_expr_or_error(&mut self, level: Level) -> PResult<Expr> {
        let start = self.start();
        match self.parse_expr(false) {
            Ok(expr) => Ok(expr),
            Err(Reported) if self.abandoned => Err(Reported),
            Err(Reported) => {
                self.skip_to(level, &|_| false);
                Ok(error_expr(self.span_from(start)))
            }
        }
    }

    /// `expr = or`. With `no_record`, a record literal is not allowed outside brackets.
    fn parse_expr(&mut self, no_record: bool) -> PResult<Expr> {
        self.nested(|p| p.parse_or(no_record))
    }

    /// `or = and ("or" and)*`
    fn parse_or(&mut self, no_record: bool) -> PResult<Expr> {
        self.chain(|p, c| {
            let mut lhs = p.parse_and(no_record)?;
            while p.eat(K::KwOr) {
                p.link(c)?;
                let rhs = p.parse_and(no_record)?;
                lhs = binary(BinaryOp::Or, lhs, rhs);
            }
            Ok(lhs)
        })
    }

    /// `and = not ("and" not)*`
    fn parse_and(&mut self, no_record: bool) -> PResult<Expr> {
        self.chain(|p, c| {
            let mut lhs = p.parse_not(no_record)?;
            while p.eat(K::KwAnd) {
                p.link(c)?;
                let rhs = p.parse_not(no_record)?;
                lhs = binary(BinaryOp::And, lhs, rhs);
            }
            Ok(lhs)
        })
    }

    /// `not = "not" not | comparison`
    fn parse_not(&mut self, no_record: bool) -> PResult<Expr> {
        if self.at(K::KwNot) {
            let start = self.bump().span.start;
            let operand = self.nested(|p| p.parse_not(no_record))?;
            let span = Span {
                start,
                end: operand.span.end,
            };
            return Ok(Expr {
                kind: ExprKind::Unary(UnaryOp::Not, Box::new(operand)),
                span,
            });
        }
        self.parse_comparison(no_record)
    }

    /// The comparison operator at the current token and how many tokens it spans.
    fn at_comparison(&self) -> Option<(BinaryOp, usize)> {
        Some(match self.peek() {
            K::EqEq => (BinaryOp::Eq, 1),
            K::NotEq => (BinaryOp::Ne, 1),
            K::Lt => (BinaryOp::Lt, 1),
            K::LtEq => (BinaryOp::Le, 1),
            K::Gt => (BinaryOp::Gt, 1),
            K::GtEq => (BinaryOp::Ge, 1),
            K::KwIn => (BinaryOp::In, 1),
            K::KwNot if self.nth(1) == K::KwIn => (BinaryOp::NotIn, 2),
            _ => return None,
        })
    }

    /// `comparison = sum (cmp_op sum)?`: comparisons do not chain.
    fn parse_comparison(&mut self, no_record: bool) -> PResult<Expr> {
        self.chain(|p, c| {
            let lhs = p.parse_sum(no_record)?;
            let Some((op, len)) = p.at_comparison() else {
                return Ok(lhs);
            };
            for _ in 0..len {
                p.bump();
            }
            p.link(c)?;
            let rhs = p.parse_sum(no_record)?;
            let mut expr = binary(op, lhs, rhs);
            // Report a chain once, then keep parsing it left-associatively so that the rest of the
            // expression still yields a tree and no further errors.
            let mut reported = false;
            while let Some((op, len)) = p.at_comparison() {
                let tok = p.tok();
                if !reported {
                    let message = format!(
                        "comparison operators cannot be chained: `{}` follows another comparison; \
                         use `and` or parentheses",
                        op.symbol()
                    );
                    p.report(SyntaxErrorKind::NonAssociative, tok.span, message, None);
                    reported = true;
                }
                for _ in 0..len {
                    p.bump();
                }
                p.link(c)?;
                let rhs = p.parse_sum(no_record)?;
                expr = binary(op, expr, rhs);
            }
            Ok(expr)
        })
    }

    /// `sum = product (("+" | "-") product)*`
    fn parse_sum(&mut self, no_record: bool) -> PResult<Expr> {
        self.chain(|p, c| {
            let mut lhs = p.parse_product(no_record)?;
            loop {
                let op = match p.peek() {
                    K::Plus => BinaryOp::Add,
                    K::Minus => BinaryOp::Sub,
                    _ => return Ok(lhs),
                };
                p.bump();
                p.link(c)?;
                let rhs = p.parse_product(no_record)?;
                lhs = binary(op, lhs, rhs);
            }
        })
    }

    /// `product = unary (("*" | "/" | "%") unary)*`
    fn parse_product(&mut self, no_record: bool) -> PResult<Expr> {
        self.chain(|p, c| {
            let mut lhs = p.parse_unary(no_record)?;
            loop {
                let op = match p.peek() {
                    K::Star => BinaryOp::Mul,
                    K::Slash => BinaryOp::Div,
                    K::Percent => BinaryOp::Rem,
                    _ => return Ok(lhs),
                };
                p.bump();
                p.link(c)?;
                let rhs = p.parse_unary(no_record)?;
                lhs = binary(op, lhs, rhs);
            }
        })
    }

    /// `unary = "-" unary | postfix`
    fn parse_unary(&mut self, no_record: bool) -> PResult<Expr> {
        if self.at(K::Minus) {
            let start = self.bump().span.start;
            let operand = self.nested(|p| p.parse_unary(no_record))?;
            let span = Span {
                start,
                end: operand.span.end,
            };
            return Ok(Expr {
                kind: ExprKind::Unary(UnaryOp::Neg, Box::new(operand)),
                span,
            });
        }
        self.parse_postfix(no_record)
    }

    /// `postfix = primary (call_args | "." ident call_args? | "[" expr "]" | record_body)*`
    fn parse_postfix(&mut self, no_record: bool) -> PResult<Expr> {
        self.chain(|p, c| {
            let mut expr = p.parse_primary(no_record)?;
            loop {
                if matches!(p.peek(), K::LParen | K::Dot | K::LBracket | K::LBrace) {
                    p.link(c)?;
                }
                match p.peek() {
                    K::LParen => {
                        let (args, close) = p.parse_args()?;
                        let span = expr.span.to(close);
                        expr = Expr {
                            kind: ExprKind::Call(Box::new(expr), args),
                            span,
                        };
                    }
                    K::Dot => {
                        p.bump();
                        let name = p.expect_ident("a field or method name", "after `.`")?;
                        if p.at(K::LParen) {
                            let (args, close) = p.parse_args()?;
                            let span = expr.span.to(close);
                            expr = Expr {
                                kind: ExprKind::MethodCall(Box::new(expr), name, args),
                                span,
                            };
                        } else {
                            let span = expr.span.to(name.span);
                            expr = Expr {
                                kind: ExprKind::Field(Box::new(expr), name),
                                span,
                            };
                        }
                    }
                    K::LBracket => {
                        let (index, close) = p.parse_bracketed(K::LBracket, K::RBracket)?;
                        let span = expr.span.to(close);
                        expr = Expr {
                            kind: ExprKind::Index(Box::new(expr), Box::new(index)),
                            span,
                        };
                    }
                    K::LBrace => {
                        // A path followed by `{` is a record literal only when the brace opens a
                        // record body (`{}` or `{ name:`); otherwise the brace belongs to what
                        // follows, such as the next rule of a `decide` block or a block's result.
                        let body_follows =
                            p.nth(1) == K::RBrace || (p.nth(1) == K::Ident && p.nth(2) == K::Colon);
                        let Some(path) = expr_path(&expr) else {
                            return Ok(expr);
                        };
                        if !body_follows || (no_record && p.nth(1) == K::RBrace) {
                            return Ok(expr);
                        }
                        if no_record {
                            // `if x == Budget { coarse: 1 } {`: say what is wrong instead of
                            // complaining about the `:` inside what looks like the `if` block.
                            let span = p.tok().span;
                            p.report(
                                SyntaxErrorKind::RecordInCondition,
                                span,
                                "a record literal is not allowed directly in a condition; wrap it \
                                 in parentheses"
                                    .to_string(),
                                None,
                            );
                        }
                        let (fields, close) = p.parse_delimited(
                            K::LBrace,
                            K::RBrace,
                            Sep::Required,
                            "",
                            |p| {
                                let name = p.expect_ident("a field name", "in the record")?;
                                p.expect(K::Colon, "after the field's name")?;
                                Ok((name, p.parse_expr(false)?))
                            },
                            |_| None,
                        )?;
                        let span = expr.span.to(close);
                        expr = Expr {
                            kind: ExprKind::Record { name: path, fields },
                            span,
                        };
                    }
                    _ => return Ok(expr),
                }
            }
        })
    }

    /// `call_args = "(" arg,* ")"`, `arg = ident ":" expr | expr`; named arguments come last.
    fn parse_args(&mut self) -> PResult<(Vec<Arg>, Span)> {
        let mut seen_named = false;
        self.parse_delimited(
            K::LParen,
            K::RParen,
            Sep::Required,
            "",
            |p| {
                let start = p.start();
                let name = if p.at(K::Ident) && p.nth(1) == K::Colon {
                    let tok = p.bump();
                    p.bump();
                    seen_named = true;
                    Some(p.ident(tok))
                } else {
                    if seen_named {
                        let span = p.tok().span;
                        p.report(
                            SyntaxErrorKind::ArgumentOrder,
                            span,
                            "a positional argument cannot follow a named one".to_string(),
                            None,
                        );
                    }
                    None
                };
                let value = p.parse_expr(false)?;
                Ok(Arg {
                    name,
                    value,
                    span: p.span_from(start),
                })
            },
            |span| {
                Some(Arg {
                    name: None,
                    value: error_expr(span),
                    span,
                })
            },
        )
    }

    /// One expression between `open` and `close`; returns it and the closing span.
    fn parse_bracketed(&mut self, open: TokenKind, close: TokenKind) -> PResult<(Expr, Span)> {
        self.expect(open, "")?;
        let start = self.start();
        let inner = match self.parse_expr(false) {
            Ok(inner) => inner,
            Err(Reported) if self.abandoned => return Err(Reported),
            Err(Reported) => {
                self.skip_to(Level::Entry, &|_| false);
                error_expr(self.span_from(start))
            }
        };
        let context = format!("to close the {} opened here", describe_kind(open));
        let close_span = self.expect(close, &context)?;
        Ok((inner, close_span))
    }

    /// `primary = literal | name | "(" expr ")" | list | if_expr | match | block_expr | closure`
    fn parse_primary(&mut self, no_record: bool) -> PResult<Expr> {
        let tok = self.tok();
        let kind = match tok.kind {
            K::Int => {
                self.bump();
                let digits: String = self.text[tok.span.range()]
                    .chars()
                    .filter(|c| *c != '_')
                    .collect();
                match digits.parse::<i64>() {
                    Ok(value) => ExprKind::Int(value),
                    Err(_) => {
                        self.report(
                            SyntaxErrorKind::NumberOutOfRange,
                            tok.span,
                            "this integer does not fit in 64 bits".to_string(),
                            None,
                        );
                        ExprKind::Error
                    }
                }
            }
            K::Float => {
                self.bump();
                let digits: String = self.text[tok.span.range()]
                    .chars()
                    .filter(|c| *c != '_')
                    .collect();
                match digits.parse::<f64>() {
                    Ok(value) if value.is_finite() => ExprKind::Float(value),
                    _ => {
                        self.report(
                            SyntaxErrorKind::NumberOutOfRange,
                            tok.span,
                            "this float is too large to represent".to_string(),
                            None,
                        );
                        ExprKind::Error
                    }
                }
            }
            K::String => {
                self.bump();
                ExprKind::String(self.unescape(tok.span))
            }
            K::KwTrue | K::KwFalse => {
                self.bump();
                ExprKind::Bool(tok.kind == K::KwTrue)
            }
            K::Ident | K::KwGame | K::KwSim | K::KwLlm => {
                self.bump();
                ExprKind::Name(self.ident(tok))
            }
            K::LParen => {
                let (inner, close) = self.parse_bracketed(K::LParen, K::RParen)?;
                // The parentheses are not a node; widening the inner span keeps every token
                // inside the span of some node.
                return Ok(Expr {
                    kind: inner.kind,
                    span: tok.span.to(close),
                });
            }
            K::LBracket => {
                let (items, _) = self.parse_delimited(
                    K::LBracket,
                    K::RBracket,
                    Sep::Comma,
                    "",
                    |p| p.parse_expr(false),
                    |span| Some(error_expr(span)),
                )?;
                ExprKind::List(items)
            }
            K::KwIf => return self.parse_if_expr(),
            K::KwMatch => return self.parse_match(),
            K::LBrace => return self.parse_block_expr(),
            K::Pipe => return self.parse_closure(no_record),
            _ => return Err(self.unexpected("an expression", "")),
        };
        Ok(Expr {
            kind,
            span: self.span_from(tok.span.start),
        })
    }

    /// `if_expr = "if" guards block_expr "else" (if_expr | block_expr)`
    ///
    /// The arms of an `else if` chain are parsed in a loop, so a long chain costs no stack here;
    /// each arm is still one level deeper, since the tree nests it in the arm before.
    fn parse_if_expr(&mut self) -> PResult<Expr> {
        let mut arms = Vec::new();
        let otherwise = self.chain(|p, _| {
            loop {
                let start = p.bump().span.start;
                let guards = p.parse_guards()?;
                if !p.at(K::LBrace) {
                    return Err(p.unexpected("`{`", "after the `if` condition"));
                }
                let then = p.parse_block_expr()?;
                arms.push((start, guards, then));
                if !p.eat(K::KwElse) {
                    let span = Span {
                        start: p.prev_end,
                        end: p.prev_end,
                    };
                    p.report(
                        SyntaxErrorKind::MissingElse,
                        span,
                        "an `if` expression needs an `else` branch: every expression has a value"
                            .to_string(),
                        Some("`else`".to_string()),
                    );
                    return Ok(error_expr(span));
                }
                if p.at(K::KwIf) {
                    p.deeper()?;
                } else if p.at(K::LBrace) {
                    return p.parse_block_expr();
                } else {
                    return Err(p.unexpected("`{` or `if`", "after `else`"));
                }
            }
        })?;
        let mut expr = otherwise;
        for (start, guards, then) in arms.into_iter().rev() {
            expr = Expr {
                kind: ExprKind::If {
                    guards,
                    then: Box::new(then),
                    otherwise: Box::new(expr),
                },
                span: self.span_from(start),
            };
        }
        Ok(expr)
    }

    /// `match = "match" cond "{" (pattern "=>" expr),* "}"`
    fn parse_match(&mut self) -> PResult<Expr> {
        let start = self.bump().span.start;
        let scrutinee = self.parse_expr(true)?;
        let (arms, _) = self.parse_delimited(
            K::LBrace,
            K::RBrace,
            Sep::Required,
            "after the `match` scrutinee",
            |p| {
                let pattern = p.parse_pattern()?;
                p.expect(K::FatArrow, "after the pattern")?;
                let body = p.parse_expr(false)?;
                Ok(MatchArm {
                    span: pattern.span.to(body.span),
                    pattern,
                    body,
                })
            },
            |span| {
                Some(MatchArm {
                    pattern: Pattern {
                        kind: PatternKind::Error,
                        span,
                    },
                    body: error_expr(span),
                    span,
                })
            },
        )?;
        let kind = ExprKind::Match(Box::new(scrutinee), arms);
        Ok(Expr {
            kind,
            span: self.span_from(start),
        })
    }

    /// `block_expr = "{" ("let" pattern "=" expr sep?)* expr "}"`
    ///
    /// A block without bindings is just its result expression.
    fn parse_block_expr(&mut self) -> PResult<Expr> {
        let start = self.expect(K::LBrace, "")?.start;
        let mut lets = Vec::new();
        while self.eat(K::KwLet) {
            let pattern = self.parse_pattern()?;
            self.expect(K::Eq, "after the pattern of `let`")?;
            let value = self.parse_expr(false)?;
            lets.push((pattern, value));
            self.eat_sep(Sep::Required);
        }
        let result = self.parse_expr(false)?;
        self.expect(K::RBrace, "to close the block")?;
        if lets.is_empty() {
            return Ok(result);
        }
        Ok(Expr {
            kind: ExprKind::Block(lets, Box::new(result)),
            span: self.span_from(start),
        })
    }

    /// `closure = "|" (ident (":" type)?),* "|" expr`
    fn parse_closure(&mut self, no_record: bool) -> PResult<Expr> {
        let start = self.start();
        let (params, _) = self.parse_delimited(
            K::Pipe,
            K::Pipe,
            Sep::Comma,
            "",
            |p| {
                let name = p.expect_ident("a parameter name", "in the closure")?;
                let ty = if p.eat(K::Colon) {
                    Some(p.parse_type()?)
                } else {
                    None
                };
                Ok(ClosureParam { name, ty })
            },
            |_| None,
        )?;
        let body = self.parse_expr(no_record)?;
        let span = Span {
            start,
            end: body.span.end,
        };
        Ok(Expr {
            kind: ExprKind::Closure(params, Box::new(body)),
            span,
        })
    }

    // ---------------------------------------------------------------------------------------
    // Lists
    // ---------------------------------------------------------------------------------------

    /// Parses `open entry (sep entry)* sep? close`. An entry that fails is skipped up to the
    /// next separator or the closing delimiter and replaced by `on_error(span)` (or dropped when
    /// that gives `None`). Returns the entries and the span of the closing delimiter.
    fn parse_delimited<T>(
        &mut self,
        open: TokenKind,
        close: TokenKind,
        sep: Sep,
        context: &str,
        mut entry: impl FnMut(&mut Self) -> PResult<T>,
        on_error: impl Fn(Span) -> Option<T>,
    ) -> PResult<(Vec<T>, Span)> {
        self.expect(open, context)?;
        let mut entries = Vec::new();
        let is_stop = |tok: Tok| {
            tok.kind == close
                || matches!(tok.kind, K::Comma | K::Semi)
                || (sep == Sep::Optional && tok.line_start && tok.kind == K::Ident)
        };
        loop {
            if self.at(close) {
                return Ok((entries, self.bump().span));
            }
            if self.at(K::Eof) || Self::is_hard_sync(self.peek(), Level::Member) {
                let context = format!("to close the {}", describe_kind(open));
                return Err(self.unexpected(&describe_kind(close), &context));
            }
            let start = self.start();
            let before = self.pos;
            match entry(self) {
                Ok(value) => entries.push(value),
                Err(Reported) if self.abandoned => return Err(Reported),
                Err(Reported) => {
                    if self.pos == before && !self.at(close) {
                        // Make progress past the offending token unless it ends the list.
                        self.report_lexical(self.pos);
                        self.bump();
                    }
                    self.skip_to(Level::Entry, &is_stop);
                    if let Some(value) = on_error(self.span_from(start)) {
                        entries.push(value);
                    }
                }
            }
            if self.eat_sep(sep) || self.at(close) || sep == Sep::Optional {
                continue;
            }
            let what = format!("{} or {}", describe_sep(sep), describe_kind(close));
            return Err(self.unexpected(&what, ""));
        }
    }

    /// Replaces escapes in the string literal at `span`, reporting unknown ones.
    fn unescape(&mut self, span: Span) -> String {
        let raw = &self.text[span.range()];
        let inner = raw
            .strip_prefix('"')
            .and_then(|s| s.strip_suffix('"'))
            .unwrap_or(raw);
        let mut value = String::with_capacity(inner.len());
        let mut chars = inner.char_indices();
        while let Some((_, c)) = chars.next() {
            if c != '\\' {
                value.push(c);
                continue;
            }
            match chars.next() {
                Some((_, 'n')) => value.push('\n'),
                Some((_, 't')) => value.push('\t'),
                Some((_, '"')) => value.push('"'),
                Some((_, '\\')) => value.push('\\'),
                Some((offset, other)) => {
                    let start = span.start as usize + 1 + offset - 1;
                    let bad = Span::new(start, start + 1 + other.len_utf8());
                    self.report(
                        SyntaxErrorKind::InvalidEscape,
                        bad,
                        format!(
                            "unknown escape `\\{other}` in a string; the escapes are `\\\"`, \
                             `\\\\`, `\\n` and `\\t`"
                        ),
                        None,
                    );
                    value.push(other);
                }
                None => {}
            }
        }
        value
    }
}

/// True when an unmatched `closer` ends the construct around a `level`: any bracket ends a
/// list entry, only `}` ends a member or a statement (it closes the layer or the block), and
/// nothing encloses an item.
fn closes_level(closer: TokenKind, level: Level) -> bool {
    match level {
        Level::Item => false,
        Level::Member | Level::Stmt => closer == K::RBrace,
        Level::Entry => true,
    }
}

fn error_expr(span: Span) -> Expr {
    Expr {
        kind: ExprKind::Error,
        span,
    }
}

fn binary(op: BinaryOp, lhs: Expr, rhs: Expr) -> Expr {
    let span = lhs.span.to(rhs.span);
    Expr {
        kind: ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)),
        span,
    }
}

fn path_of(segments: Vec<Ident>) -> Path {
    let span = match (segments.first(), segments.last()) {
        (Some(first), Some(last)) => first.span.to(last.span),
        _ => Span::default(),
    };
    Path { segments, span }
}

/// The dotted path an expression spells (`a`, `a.b.c`), if it is one: the name of a record
/// literal.
fn expr_path(expr: &Expr) -> Option<Path> {
    match &expr.kind {
        ExprKind::Name(ident) => Some(path_of(vec![ident.clone()])),
        ExprKind::Field(base, field) => {
            let mut path = expr_path(base)?;
            path.segments.push(field.clone());
            path.span = path.span.to(field.span);
            Some(path)
        }
        _ => None,
    }
}

fn describe_sep(sep: Sep) -> &'static str {
    match sep {
        Sep::Comma => "`,`",
        Sep::Required | Sep::Optional => "`,` or `;`",
    }
}

/// How a token kind is named in messages.
pub(crate) fn describe_kind(kind: TokenKind) -> String {
    match kind.fixed_text() {
        Some(text) => format!("`{text}`"),
        None => match kind {
            K::Ident => "a name".to_string(),
            K::Int => "an integer".to_string(),
            K::Float => "a float".to_string(),
            K::String => "a string".to_string(),
            K::UnterminatedString => "an unterminated string".to_string(),
            K::Error => "an invalid character".to_string(),
            K::Eof => "the end of the file".to_string(),
            _ => "a comment".to_string(),
        },
    }
}
