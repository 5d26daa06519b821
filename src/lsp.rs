//! `harness lsp`: the language server, over standard input and output.
//!
//! The protocol layer only: the stdio transport, request dispatch, document sync (full and
//! incremental), the conversion between byte offsets and the protocol's UTF-16 positions, and the
//! translation of the answers of [`harness_compiler::ide`] into protocol types. Every question
//! about the program is answered by the compiler's incremental queries, so an edit re-checks only
//! the member it touches.
//!
//! The server never stops on bad input: a request whose parameters do not deserialize, that
//! names an unknown document or a position past the end of one gets an error response; an unknown
//! method gets `MethodNotFound`; a panic inside a handler becomes an `InternalError` response;
//! a message that is JSON but not JSON-RPC gets an `InvalidRequest` response from the transport,
//! and one that is not even JSON is skipped.

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use harness_compiler::ide::{self, CompletionKind, DefKind, Symbol, TokenKind};
use harness_compiler::signatures::SignatureSet;
use harness_compiler::{Diagnostic, Severity, Workspace};
use lsp_server::{Connection, ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types as lsp;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

#[cfg(test)]
mod tests;

/// Runs the server on standard input and output until the client says `exit`.
pub fn run() -> ExitCode {
    let (connection, threads) = stdio();
    let result = serve(
        &connection,
        harness::games::Registry::standard().signatures(),
    );
    drop(connection);
    let joined = threads.join();
    match (result, joined) {
        (Ok(()), Ok(())) => ExitCode::SUCCESS,
        (Err(error), _) | (_, Err(error)) => {
            eprintln!("harness lsp: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Serves one client on a connection: the initialize handshake, then requests and
/// notifications until `shutdown` and `exit`.
pub fn serve(connection: &Connection, signatures: SignatureSet) -> Result<(), String> {
    let (id, params) = connection.initialize_start().map_err(|e| e.to_string())?;
    let init: lsp::InitializeParams = serde_json::from_value(params).unwrap_or_default();
    let result = json!({
        "capabilities": capabilities(),
        "serverInfo": { "name": "harness", "version": env!("CARGO_PKG_VERSION") },
    });
    connection
        .initialize_finish(id, result)
        .map_err(|e| e.to_string())?;
    let mut server = Server::new(signatures);
    for folder in init.workspace_folders.iter().flatten() {
        server.roots.push(uri_to_path(folder.uri.as_str()));
    }
    for message in &connection.receiver {
        let outgoing = match message {
            Message::Request(request) => {
                if connection
                    .handle_shutdown(&request)
                    .map_err(|e| e.to_string())?
                {
                    return Ok(());
                }
                vec![Message::Response(server.request(request))]
            }
            Message::Notification(notification) => server.notify(notification),
            Message::Response(_) => Vec::new(),
        };
        for message in outgoing {
            connection.sender.send(message).map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

/// What the server can do, as announced in the initialize response.
fn capabilities() -> lsp::ServerCapabilities {
    lsp::ServerCapabilities {
        position_encoding: Some(lsp::PositionEncodingKind::UTF16),
        text_document_sync: Some(lsp::TextDocumentSyncCapability::Options(
            lsp::TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(lsp::TextDocumentSyncKind::INCREMENTAL),
                ..Default::default()
            },
        )),
        hover_provider: Some(lsp::HoverProviderCapability::Simple(true)),
        definition_provider: Some(lsp::OneOf::Left(true)),
        references_provider: Some(lsp::OneOf::Left(true)),
        completion_provider: Some(lsp::CompletionOptions {
            trigger_characters: Some(vec![".".to_owned()]),
            ..Default::default()
        }),
        document_symbol_provider: Some(lsp::OneOf::Left(true)),
        rename_provider: Some(lsp::OneOf::Right(lsp::RenameOptions {
            prepare_provider: Some(true),
            work_done_progress_options: Default::default(),
        })),
        signature_help_provider: Some(lsp::SignatureHelpOptions {
            trigger_characters: Some(vec!["(".to_owned(), ",".to_owned()]),
            ..Default::default()
        }),
        document_formatting_provider: Some(lsp::OneOf::Left(true)),
        document_range_formatting_provider: Some(lsp::OneOf::Left(true)),
        code_action_provider: Some(lsp::CodeActionProviderCapability::Simple(true)),
        semantic_tokens_provider: Some(
            lsp::SemanticTokensServerCapabilities::SemanticTokensOptions(
                lsp::SemanticTokensOptions {
                    legend: lsp::SemanticTokensLegend {
                        token_types: TOKEN_TYPES.to_vec(),
                        token_modifiers: vec![
                            lsp::SemanticTokenModifier::DECLARATION,
                            lsp::SemanticTokenModifier::DEFAULT_LIBRARY,
                        ],
                    },
                    full: Some(lsp::SemanticTokensFullOptions::Bool(true)),
                    range: None,
                    ..Default::default()
                },
            ),
        ),
        ..Default::default()
    }
}

/// The semantic token types, in the order of [`token_type`]'s indices.
const TOKEN_TYPES: &[lsp::SemanticTokenType] = &[
    lsp::SemanticTokenType::NAMESPACE,
    lsp::SemanticTokenType::TYPE,
    lsp::SemanticTokenType::ENUM,
    lsp::SemanticTokenType::ENUM_MEMBER,
    lsp::SemanticTokenType::VARIABLE,
    lsp::SemanticTokenType::PROPERTY,
    lsp::SemanticTokenType::FUNCTION,
    lsp::SemanticTokenType::METHOD,
    lsp::SemanticTokenType::EVENT,
    lsp::SemanticTokenType::new("constant"),
];

fn token_type(kind: TokenKind) -> u32 {
    match kind {
        TokenKind::Namespace => 0,
        TokenKind::Type => 1,
        TokenKind::Enum => 2,
        TokenKind::EnumMember => 3,
        TokenKind::Variable => 4,
        TokenKind::Property => 5,
        TokenKind::Function => 6,
        TokenKind::Method => 7,
        TokenKind::Event => 8,
        TokenKind::Constant => 9,
    }
}

/// An open document.
struct Document {
    /// The workspace path the document is loaded under.
    path: String,
    /// The diagnostics last published for it, to publish again only when they change.
    published: Option<Vec<lsp::Diagnostic>>,
}

/// The server's state: the workspace and the open documents.
pub struct Server {
    workspace: Workspace,
    /// Open documents by URI.
    documents: BTreeMap<String, Document>,
    /// Directories whose `.harness` files were loaded from disk.
    loaded_dirs: Vec<PathBuf>,
    /// The client's workspace folders.
    roots: Vec<String>,
}

/// A failed request: an error code and a message.
type Failure = (ErrorCode, String);

impl Server {
    /// A server with no documents, checking against the given signatures.
    pub fn new(signatures: SignatureSet) -> Self {
        Self {
            workspace: Workspace::new(signatures),
            documents: BTreeMap::new(),
            loaded_dirs: Vec::new(),
            roots: Vec::new(),
        }
    }

    /// Answers one request.
    pub fn request(&mut self, request: Request) -> Response {
        let id = request.id.clone();
        let result = catch_unwind(AssertUnwindSafe(|| self.dispatch(request)));
        match result {
            Ok(Ok(value)) => Response::new_ok(id, value),
            Ok(Err((code, message))) => Response::new_err(id, code as i32, message),
            Err(_) => Response::new_err(
                id,
                ErrorCode::InternalError as i32,
                "internal error in the language server".to_owned(),
            ),
        }
    }

    fn dispatch(&mut self, request: Request) -> Result<Value, Failure> {
        let Request { method, params, .. } = request;
        let value = match method.as_str() {
            "textDocument/hover" => to_value(self.hover(parse(params)?)?),
            "textDocument/definition" => to_value(self.definition(parse(params)?)?),
            "textDocument/references" => to_value(self.references(parse(params)?)?),
            "textDocument/completion" => to_value(self.completion(parse(params)?)?),
            "textDocument/documentSymbol" => to_value(self.document_symbols(parse(params)?)?),
            "textDocument/rename" => to_value(self.rename(parse(params)?)?),
            "textDocument/prepareRename" => to_value(self.prepare_rename(parse(params)?)?),
            "textDocument/signatureHelp" => to_value(self.signature_help(parse(params)?)?),
            "textDocument/formatting" => to_value(self.formatting(parse(params)?)?),
            "textDocument/rangeFormatting" => to_value(self.range_formatting(parse(params)?)?),
            "textDocument/semanticTokens/full" => to_value(self.semantic_tokens(parse(params)?)?),
            "textDocument/codeAction" => to_value(self.code_actions(parse(params)?)?),
            _ => {
                return Err((
                    ErrorCode::MethodNotFound,
                    format!("unknown method `{method}`"),
                ));
            }
        };
        Ok(value)
    }

    /// Handles one notification; returns the messages to send (published diagnostics).
    pub fn notify(&mut self, notification: Notification) -> Vec<Message> {
        let result = catch_unwind(AssertUnwindSafe(|| {
            self.dispatch_notification(notification)
        }));
        // A notification has no response; a bad one is ignored, as the protocol asks.
        result.ok().flatten().unwrap_or_default()
    }

    fn dispatch_notification(&mut self, notification: Notification) -> Option<Vec<Message>> {
        match notification.method.as_str() {
            "textDocument/didOpen" => {
                let params: lsp::DidOpenTextDocumentParams = parse(notification.params).ok()?;
                let uri = params.text_document.uri.as_str().to_owned();
                let path = uri_to_path(&uri);
                self.load_siblings(&path);
                self.workspace.set_file(&path, &params.text_document.text);
                self.documents.insert(
                    uri.clone(),
                    Document {
                        path,
                        published: None,
                    },
                );
                Some(self.publish(&uri))
            }
            "textDocument/didChange" => {
                let params: lsp::DidChangeTextDocumentParams = parse(notification.params).ok()?;
                let uri = params.text_document.uri.as_str().to_owned();
                let path = self.documents.get(&uri)?.path.clone();
                let mut text = self.workspace.text(&path)?.to_string();
                for change in params.content_changes {
                    apply_change(&mut text, change);
                }
                self.workspace.set_file(&path, &text);
                Some(self.publish(&uri))
            }
            "textDocument/didClose" => {
                let params: lsp::DidCloseTextDocumentParams = parse(notification.params).ok()?;
                let uri = params.text_document.uri.as_str().to_owned();
                let document = self.documents.remove(&uri)?;
                // The file goes back to what the disk holds, which other files may still use.
                match std::fs::read(&document.path) {
                    Ok(bytes) => self
                        .workspace
                        .set_file(&document.path, &String::from_utf8_lossy(&bytes)),
                    Err(_) => self.workspace.remove_file(&document.path),
                }
                let clear = Notification::new(
                    "textDocument/publishDiagnostics".to_owned(),
                    lsp::PublishDiagnosticsParams {
                        uri: params.text_document.uri,
                        diagnostics: Vec::new(),
                        version: None,
                    },
                );
                let mut out = vec![Message::Notification(clear)];
                out.extend(self.publish_others(""));
                Some(out)
            }
            _ => None,
        }
    }

    /// Loads the other `.harness` files of a file's directory, so that `use` of a sibling
    /// module resolves. Open documents keep their editor text.
    fn load_siblings(&mut self, path: &str) {
        let Some(dir) = Path::new(path)
            .parent()
            .filter(|d| d.is_dir())
            .map(Path::to_path_buf)
        else {
            return;
        };
        if self.loaded_dirs.contains(&dir) {
            return;
        }
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return;
        };
        let mut files: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "harness"))
            .collect();
        files.sort();
        let open: Vec<&str> = self.documents.values().map(|d| d.path.as_str()).collect();
        for file in files {
            let key = file.display().to_string();
            if open.contains(&key.as_str()) {
                continue;
            }
            if let Ok(bytes) = std::fs::read(&file) {
                self.workspace
                    .set_file(&key, &String::from_utf8_lossy(&bytes));
            }
        }
        self.loaded_dirs.push(dir);
    }

    /// The diagnostics of a document, and of the other open documents whose diagnostics changed
    /// (an edit of one module can fix or break the modules that use it).
    fn publish(&mut self, uri: &str) -> Vec<Message> {
        let mut out = Vec::new();
        if let Some(message) = self.publish_one(uri, true) {
            out.push(message);
        }
        out.extend(self.publish_others(uri));
        out
    }

    fn publish_others(&mut self, except: &str) -> Vec<Message> {
        let uris: Vec<String> = self
            .documents
            .keys()
            .filter(|u| *u != except)
            .cloned()
            .collect();
        uris.iter()
            .filter_map(|uri| self.publish_one(uri, false))
            .collect()
    }

    fn publish_one(&mut self, uri: &str, always: bool) -> Option<Message> {
        let path = self.documents.get(uri)?.path.clone();
        let text = self.workspace.text(&path)?;
        let index = LineIndex::new(&text);
        let diagnostics: Vec<lsp::Diagnostic> = self
            .workspace
            .file_diagnostics(&path)
            .iter()
            .map(|d| self.to_lsp_diagnostic(d, &text, &index))
            .collect();
        let document = self.documents.get_mut(uri)?;
        if !always && document.published.as_ref() == Some(&diagnostics) {
            return None;
        }
        document.published = Some(diagnostics.clone());
        let params = lsp::PublishDiagnosticsParams {
            uri: parse_uri(uri)?,
            diagnostics,
            version: None,
        };
        Some(Message::Notification(Notification::new(
            "textDocument/publishDiagnostics".to_owned(),
            params,
        )))
    }

    fn to_lsp_diagnostic(
        &self,
        diagnostic: &Diagnostic,
        text: &str,
        index: &LineIndex,
    ) -> lsp::Diagnostic {
        let range = index.range(text, diagnostic.span);
        let mut message = diagnostic.message.clone();
        if let Some(label) = &diagnostic.primary_label {
            message.push_str(&format!(" ({label})"));
        }
        if let Some(help) = &diagnostic.help {
            message.push_str(&format!("\nhelp: {help}"));
        }
        let uri = self.path_uri(&diagnostic.file);
        let mut related: Vec<lsp::DiagnosticRelatedInformation> = diagnostic
            .labels
            .iter()
            .filter_map(|label| {
                Some(lsp::DiagnosticRelatedInformation {
                    location: lsp::Location {
                        uri: uri.clone()?,
                        range: index.range(text, label.span),
                    },
                    message: label.message.clone(),
                })
            })
            .collect();
        for other in &diagnostic.related {
            let Some(other_text) = self.workspace.text(&other.file) else {
                continue;
            };
            let Some(other_uri) = self.path_uri(&other.file) else {
                continue;
            };
            let other_index = LineIndex::new(&other_text);
            related.push(lsp::DiagnosticRelatedInformation {
                location: lsp::Location {
                    uri: other_uri,
                    range: other_index.range(&other_text, other.span),
                },
                message: other.message.clone(),
            });
        }
        lsp::Diagnostic {
            range,
            severity: Some(match diagnostic.severity {
                Severity::Error => lsp::DiagnosticSeverity::ERROR,
                Severity::Warning => lsp::DiagnosticSeverity::WARNING,
            }),
            code: Some(lsp::NumberOrString::String(
                diagnostic.code.as_str().to_owned(),
            )),
            source: Some("harness".to_owned()),
            message,
            related_information: (!related.is_empty()).then_some(related),
            ..Default::default()
        }
    }

    /// The URI of a workspace path: the open document's, or a `file:` URI.
    fn path_uri(&self, path: &str) -> Option<lsp::Uri> {
        let uri = self
            .documents
            .iter()
            .find(|(_, d)| d.path == path)
            .map(|(u, _)| u.clone())
            .unwrap_or_else(|| path_to_uri(path));
        parse_uri(&uri)
    }

    /// The workspace path, text and line index of a document named by a request.
    fn document(&self, uri: &lsp::Uri) -> Result<(String, String, LineIndex), Failure> {
        let path = match self.documents.get(uri.as_str()) {
            Some(document) => document.path.clone(),
            None => uri_to_path(uri.as_str()),
        };
        let text = self
            .workspace
            .text(&path)
            .ok_or_else(|| {
                (
                    ErrorCode::InvalidParams,
                    format!("unknown document `{}`: open it first", uri.as_str()),
                )
            })?
            .to_string();
        let index = LineIndex::new(&text);
        Ok((path, text, index))
    }

    fn position(
        &self,
        params: &lsp::TextDocumentPositionParams,
    ) -> Result<(String, String, LineIndex, u32), Failure> {
        let (path, text, index) = self.document(&params.text_document.uri)?;
        let offset = index.offset(&text, params.position).ok_or_else(|| {
            (
                ErrorCode::InvalidParams,
                format!(
                    "position {}:{} is past the end of the document",
                    params.position.line, params.position.character
                ),
            )
        })?;
        Ok((path, text, index, offset))
    }

    fn location(&self, path: &str, span: harness_grammar::Span) -> Option<lsp::Location> {
        let text = self.workspace.text(path)?;
        let index = LineIndex::new(&text);
        Some(lsp::Location {
            uri: self.path_uri(path)?,
            range: index.range(&text, span),
        })
    }

    fn hover(&self, params: lsp::HoverParams) -> Result<Option<lsp::Hover>, Failure> {
        let (path, text, index, offset) = self.position(&params.text_document_position_params)?;
        Ok(
            ide::hover(&self.workspace, &path, offset).map(|hover| lsp::Hover {
                contents: lsp::HoverContents::Markup(lsp::MarkupContent {
                    kind: lsp::MarkupKind::Markdown,
                    value: hover.markdown,
                }),
                range: Some(index.range(&text, hover.span)),
            }),
        )
    }

    fn definition(
        &self,
        params: lsp::GotoDefinitionParams,
    ) -> Result<Option<lsp::GotoDefinitionResponse>, Failure> {
        let (path, _, _, offset) = self.position(&params.text_document_position_params)?;
        Ok(ide::definition(&self.workspace, &path, offset)
            .and_then(|(file, span)| self.location(&file, span))
            .map(lsp::GotoDefinitionResponse::Scalar))
    }

    fn references(
        &self,
        params: lsp::ReferenceParams,
    ) -> Result<Option<Vec<lsp::Location>>, Failure> {
        let (path, _, _, offset) = self.position(&params.text_document_position)?;
        let declaration = ide::definition(&self.workspace, &path, offset);
        let locations = ide::references(&self.workspace, &path, offset)
            .into_iter()
            .filter(|reference| {
                params.context.include_declaration || Some(reference) != declaration.as_ref()
            })
            .filter_map(|(file, span)| self.location(&file, span))
            .collect();
        Ok(Some(locations))
    }

    fn completion(
        &self,
        params: lsp::CompletionParams,
    ) -> Result<Option<lsp::CompletionResponse>, Failure> {
        let (path, _, _, offset) = self.position(&params.text_document_position)?;
        let items = ide::completions(&self.workspace, &path, offset)
            .into_iter()
            .map(|item| lsp::CompletionItem {
                label: item.label,
                kind: Some(completion_kind(item.kind)),
                detail: (!item.detail.is_empty()).then_some(item.detail),
                documentation: (!item.docs.is_empty()).then_some(
                    lsp::Documentation::MarkupContent(lsp::MarkupContent {
                        kind: lsp::MarkupKind::Markdown,
                        value: item.docs,
                    }),
                ),
                ..Default::default()
            })
            .collect();
        Ok(Some(lsp::CompletionResponse::Array(items)))
    }

    fn document_symbols(
        &self,
        params: lsp::DocumentSymbolParams,
    ) -> Result<Option<lsp::DocumentSymbolResponse>, Failure> {
        let (path, text, index) = self.document(&params.text_document.uri)?;
        let symbols = ide::outline(&self.workspace, &path)
            .into_iter()
            .map(|node| document_symbol(node, &text, &index))
            .collect();
        Ok(Some(lsp::DocumentSymbolResponse::Nested(symbols)))
    }

    // `WorkspaceEdit::changes` is keyed by `Uri`, which clippy thinks mutable; the protocol type
    // leaves no choice.
    #[allow(clippy::mutable_key_type)]
    fn rename(&self, params: lsp::RenameParams) -> Result<Option<lsp::WorkspaceEdit>, Failure> {
        let (path, _, _, offset) = self.position(&params.text_document_position)?;
        let edits = ide::rename(&self.workspace, &path, offset, &params.new_name)
            .map_err(|e| (ErrorCode::RequestFailed, e.to_string()))?;
        let mut changes = std::collections::HashMap::new();
        for (file, spans) in edits {
            let (Some(text), Some(uri)) = (self.workspace.text(&file), self.path_uri(&file)) else {
                continue;
            };
            let index = LineIndex::new(&text);
            let edits = spans
                .into_iter()
                .map(|(span, new_text)| lsp::TextEdit {
                    range: index.range(&text, span),
                    new_text,
                })
                .collect();
            changes.insert(uri, edits);
        }
        Ok(Some(lsp::WorkspaceEdit {
            changes: Some(changes),
            ..Default::default()
        }))
    }

    fn prepare_rename(
        &self,
        params: lsp::TextDocumentPositionParams,
    ) -> Result<Option<lsp::PrepareRenameResponse>, Failure> {
        let (path, text, index, offset) = self.position(&params)?;
        match ide::prepare_rename(&self.workspace, &path, offset) {
            Ok(span) => Ok(Some(lsp::PrepareRenameResponse::Range(
                index.range(&text, span),
            ))),
            // Nothing to rename here: the protocol's answer is null, not an error.
            Err(ide::RenameError::NoSymbol) => Ok(None),
            Err(error) => Err((ErrorCode::RequestFailed, error.to_string())),
        }
    }

    fn signature_help(
        &self,
        params: lsp::SignatureHelpParams,
    ) -> Result<Option<lsp::SignatureHelp>, Failure> {
        let (path, _, _, offset) = self.position(&params.text_document_position_params)?;
        let Some(help) = ide::signature_help(&self.workspace, &path, offset) else {
            return Ok(None);
        };
        // Parameter offsets count UTF-16 code units of the label.
        let utf16 = |end: u32| help.label[..end as usize].encode_utf16().count() as u32;
        let parameters = help
            .params
            .iter()
            .map(|&(start, end)| lsp::ParameterInformation {
                label: lsp::ParameterLabel::LabelOffsets([utf16(start), utf16(end)]),
                documentation: None,
            })
            .collect();
        let documentation = (!help.docs.is_empty()).then(|| {
            lsp::Documentation::MarkupContent(lsp::MarkupContent {
                kind: lsp::MarkupKind::Markdown,
                value: help.docs.clone(),
            })
        });
        Ok(Some(lsp::SignatureHelp {
            signatures: vec![lsp::SignatureInformation {
                label: help.label.clone(),
                documentation,
                parameters: Some(parameters),
                active_parameter: Some(help.active),
            }],
            active_signature: Some(0),
            active_parameter: Some(help.active),
        }))
    }

    fn range_formatting(
        &self,
        params: lsp::DocumentRangeFormattingParams,
    ) -> Result<Option<Vec<lsp::TextEdit>>, Failure> {
        let (_, text, index) = self.document(&params.text_document.uri)?;
        let end_of_text = text.len() as u32;
        let start = index
            .offset(&text, params.range.start)
            .unwrap_or(end_of_text);
        let end = index.offset(&text, params.range.end).unwrap_or(end_of_text);
        let range = harness_grammar::Span {
            start,
            end: end.max(start),
        };
        let edits = ide::format_range(&text, range)
            .map_err(|e| (ErrorCode::RequestFailed, format!("not formatted: {e}")))?;
        Ok(Some(
            edits
                .into_iter()
                .map(|(span, new_text)| lsp::TextEdit {
                    range: index.range(&text, span),
                    new_text,
                })
                .collect(),
        ))
    }

    fn formatting(
        &self,
        params: lsp::DocumentFormattingParams,
    ) -> Result<Option<Vec<lsp::TextEdit>>, Failure> {
        let (_, text, index) = self.document(&params.text_document.uri)?;
        let formatted = harness_grammar::format::format(&text)
            .map_err(|e| (ErrorCode::RequestFailed, format!("not formatted: {e}")))?;
        if formatted == text {
            return Ok(Some(Vec::new()));
        }
        let whole = harness_grammar::Span {
            start: 0,
            end: text.len() as u32,
        };
        Ok(Some(vec![lsp::TextEdit {
            range: index.range(&text, whole),
            new_text: formatted,
        }]))
    }

    fn semantic_tokens(
        &self,
        params: lsp::SemanticTokensParams,
    ) -> Result<Option<lsp::SemanticTokensResult>, Failure> {
        let (path, text, index) = self.document(&params.text_document.uri)?;
        let mut data = Vec::new();
        let (mut previous_line, mut previous_start) = (0u32, 0u32);
        for token in ide::semantic_tokens(&self.workspace, &path) {
            let range = index.range(&text, token.span);
            // A name never spans lines; anything else is not a token the protocol can encode.
            if range.start.line != range.end.line {
                continue;
            }
            let delta_line = range.start.line - previous_line;
            let delta_start = if delta_line == 0 {
                range.start.character - previous_start
            } else {
                range.start.character
            };
            let modifiers = u32::from(token.declaration) | (u32::from(token.library) << 1);
            data.push(lsp::SemanticToken {
                delta_line,
                delta_start,
                length: range.end.character - range.start.character,
                token_type: token_type(token.kind),
                token_modifiers_bitset: modifiers,
            });
            (previous_line, previous_start) = (range.start.line, range.start.character);
        }
        Ok(Some(lsp::SemanticTokensResult::Tokens(
            lsp::SemanticTokens {
                result_id: None,
                data,
            },
        )))
    }

    fn code_actions(
        &self,
        params: lsp::CodeActionParams,
    ) -> Result<Option<lsp::CodeActionResponse>, Failure> {
        let (path, text, index) = self.document(&params.text_document.uri)?;
        let start = index
            .offset(&text, params.range.start)
            .unwrap_or(text.len() as u32);
        let end = index
            .offset(&text, params.range.end)
            .unwrap_or(text.len() as u32);
        let mut actions = Vec::new();
        for diagnostic in self.workspace.file_diagnostics(&path) {
            if diagnostic.span.end < start || diagnostic.span.start > end {
                continue;
            }
            let Some(fix) = ide::quick_fix(&diagnostic) else {
                continue;
            };
            let edit = lsp::TextEdit {
                range: index.range(&text, fix.span),
                new_text: fix.text,
            };
            #[allow(clippy::mutable_key_type)] // See `rename`.
            let changes =
                std::collections::HashMap::from([(params.text_document.uri.clone(), vec![edit])]);
            actions.push(lsp::CodeActionOrCommand::CodeAction(lsp::CodeAction {
                title: fix.title,
                kind: Some(lsp::CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![self.to_lsp_diagnostic(&diagnostic, &text, &index)]),
                edit: Some(lsp::WorkspaceEdit {
                    changes: Some(changes),
                    ..Default::default()
                }),
                is_preferred: Some(true),
                ..Default::default()
            }));
        }
        Ok(Some(actions))
    }
}

fn completion_kind(kind: CompletionKind) -> lsp::CompletionItemKind {
    match kind {
        CompletionKind::Local => lsp::CompletionItemKind::VARIABLE,
        CompletionKind::Property => lsp::CompletionItemKind::PROPERTY,
        CompletionKind::Function => lsp::CompletionItemKind::FUNCTION,
        CompletionKind::Method => lsp::CompletionItemKind::METHOD,
        CompletionKind::Action => lsp::CompletionItemKind::METHOD,
        CompletionKind::Constant => lsp::CompletionItemKind::CONSTANT,
        CompletionKind::Type => lsp::CompletionItemKind::CLASS,
        CompletionKind::Enum => lsp::CompletionItemKind::ENUM,
        CompletionKind::Variant => lsp::CompletionItemKind::ENUM_MEMBER,
        CompletionKind::Layer => lsp::CompletionItemKind::MODULE,
        CompletionKind::Event => lsp::CompletionItemKind::EVENT,
        CompletionKind::Keyword => lsp::CompletionItemKind::KEYWORD,
        CompletionKind::Field => lsp::CompletionItemKind::FIELD,
    }
}

#[allow(deprecated)] // `DocumentSymbol::deprecated` must be written even though it is deprecated.
fn document_symbol(node: ide::OutlineNode, text: &str, index: &LineIndex) -> lsp::DocumentSymbol {
    let declaration = node.declaration;
    let kind = match &declaration.symbol {
        Symbol::Layer { .. } => lsp::SymbolKind::NAMESPACE,
        Symbol::Variant { .. } => lsp::SymbolKind::ENUM_MEMBER,
        Symbol::Field { .. } => lsp::SymbolKind::FIELD,
        Symbol::Def(_, kind) => match kind {
            DefKind::Const | DefKind::Error => lsp::SymbolKind::CONSTANT,
            DefKind::Config | DefKind::Tunable | DefKind::Computed => lsp::SymbolKind::PROPERTY,
            DefKind::Fn => lsp::SymbolKind::FUNCTION,
            DefKind::TypeAlias => lsp::SymbolKind::STRUCT,
            DefKind::Enum => lsp::SymbolKind::ENUM,
            DefKind::State => lsp::SymbolKind::FIELD,
            DefKind::Action => lsp::SymbolKind::METHOD,
        },
        _ => lsp::SymbolKind::VARIABLE,
    };
    let range = index.range(text, declaration.span.to(declaration.name_span));
    lsp::DocumentSymbol {
        name: declaration.name,
        detail: Some(declaration.detail),
        kind,
        tags: None,
        deprecated: None,
        range,
        selection_range: index.range(text, declaration.name_span),
        children: Some(
            node.children
                .into_iter()
                .map(|child| document_symbol(child, text, index))
                .collect(),
        ),
    }
}

fn parse<P: DeserializeOwned>(params: Value) -> Result<P, Failure> {
    serde_json::from_value(params)
        .map_err(|e| (ErrorCode::InvalidParams, format!("invalid parameters: {e}")))
}

fn to_value<T: serde::Serialize>(value: T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

fn parse_uri(uri: &str) -> Option<lsp::Uri> {
    uri.parse().ok()
}

/// Applies one content change of `didChange` to a document's text. Positions past the end are
/// clamped, so a confused client cannot make the server fail.
fn apply_change(text: &mut String, change: lsp::TextDocumentContentChangeEvent) {
    match change.range {
        None => *text = change.text,
        Some(range) => {
            let index = LineIndex::new(text);
            let end_of_text = text.len() as u32;
            let start = index.offset(text, range.start).unwrap_or(end_of_text) as usize;
            let end = (index.offset(text, range.end).unwrap_or(end_of_text) as usize).max(start);
            text.replace_range(start..end, &change.text);
        }
    }
}

/// The start offset of each line, to convert between byte offsets and UTF-16 positions.
struct LineIndex {
    starts: Vec<u32>,
}

impl LineIndex {
    fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i as u32 + 1));
        Self { starts }
    }

    /// The position of a byte offset (clamped to the text, moved back to a character boundary).
    fn position(&self, text: &str, offset: u32) -> lsp::Position {
        let mut offset = (offset as usize).min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self
            .starts
            .partition_point(|&start| start as usize <= offset)
            .saturating_sub(1);
        let start = self.starts.get(line).copied().unwrap_or(0) as usize;
        let character = text
            .get(start..offset)
            .map_or(0, |s| s.encode_utf16().count());
        lsp::Position {
            line: line as u32,
            character: character as u32,
        }
    }

    fn range(&self, text: &str, span: harness_grammar::Span) -> lsp::Range {
        lsp::Range {
            start: self.position(text, span.start),
            end: self.position(text, span.end),
        }
    }

    /// The byte offset of a position; `None` past the last line. A column past the end of its
    /// line means the end of the line, as the protocol specifies.
    fn offset(&self, text: &str, position: lsp::Position) -> Option<u32> {
        let start = *self.starts.get(position.line as usize)? as usize;
        let end = self
            .starts
            .get(position.line as usize + 1)
            .map_or(text.len(), |&next| next as usize - 1);
        let line = text.get(start..end)?;
        let line = line.strip_suffix('\r').unwrap_or(line);
        let mut units = 0u32;
        for (i, c) in line.char_indices() {
            if units >= position.character {
                return Some((start + i) as u32);
            }
            units += c.len_utf16() as u32;
        }
        Some((start + line.len()) as u32)
    }
}

/// The workspace path of a URI: the file path of a `file:` URI, the URI itself otherwise.
fn uri_to_path(uri: &str) -> String {
    match uri.strip_prefix("file://") {
        Some(rest) => percent_decode(rest),
        None => uri.to_owned(),
    }
}

/// The `file:` URI of an absolute path; any other path is used as the URI as it is.
fn path_to_uri(path: &str) -> String {
    if !path.starts_with('/') {
        return path.to_owned();
    }
    let mut uri = String::from("file://");
    for byte in path.bytes() {
        if byte.is_ascii_alphanumeric() || b"/-._~".contains(&byte) {
            uri.push(byte as char);
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    uri
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The stdio transport's threads.
struct IoThreads {
    reader: std::thread::JoinHandle<()>,
    writer: std::thread::JoinHandle<std::io::Result<()>>,
}

impl IoThreads {
    fn join(self) -> Result<(), String> {
        // The reader blocks on standard input until the client closes it; after `exit` there is
        // nothing more to read, so it is not waited for.
        drop(self.reader);
        match self.writer.join() {
            Ok(result) => result.map_err(|e| e.to_string()),
            Err(_) => Err("the writer thread panicked".to_owned()),
        }
    }
}

/// A connection over standard input and output. Unlike `lsp_server::Connection::stdio`, a
/// malformed message is answered or skipped instead of ending the connection.
fn stdio() -> (Connection, IoThreads) {
    let (reader_sender, reader_receiver) = crossbeam_channel::unbounded::<Message>();
    let (writer_sender, writer_receiver) = crossbeam_channel::unbounded::<Message>();
    let errors = writer_sender.clone();
    let writer = std::thread::spawn(move || {
        let stdout = std::io::stdout();
        let mut stdout = stdout.lock();
        for message in writer_receiver {
            message.write(&mut stdout)?;
            stdout.flush()?;
        }
        Ok(())
    });
    let reader = std::thread::spawn(move || {
        let stdin = std::io::stdin();
        let mut stdin = stdin.lock();
        while let Some(body) = read_frame(&mut stdin) {
            let message = match body {
                Ok(body) => match serde_json::from_slice::<Message>(&body) {
                    // A body with a `method` is a request or notification; one that only parses
                    // as a response (`{"id": 1, "method": 3}`) is a malformed request.
                    Ok(Message::Response(_)) if has_method(&body) => Err((
                        Some(body),
                        "a request whose `method` is not a string".to_owned(),
                    )),
                    Ok(message) => Ok(message),
                    Err(e) => Err((Some(body), e.to_string())),
                },
                Err(error) => Err((None, error)),
            };
            match message {
                Ok(message) => {
                    let is_exit =
                        matches!(&message, Message::Notification(n) if n.method == "exit");
                    if reader_sender.send(message).is_err() || is_exit {
                        break;
                    }
                }
                Err(error) => {
                    // A request that is JSON but not a valid message is answered under its id; a
                    // body that is not JSON at all has no id to answer, so it is only reported.
                    let id = body_id(&error);
                    match id {
                        Some(id) => {
                            let response = Response::new_err(
                                id,
                                ErrorCode::InvalidRequest as i32,
                                format!("malformed message: {}", error.1),
                            );
                            let _ = errors.send(Message::Response(response));
                        }
                        None => eprintln!("harness lsp: ignored a malformed message: {}", error.1),
                    }
                }
            }
        }
    });
    (
        Connection {
            sender: writer_sender,
            receiver: reader_receiver,
        },
        IoThreads { reader, writer },
    )
}

/// True when a message body is a JSON object with a `method` member.
fn has_method(body: &[u8]) -> bool {
    serde_json::from_slice::<Value>(body).is_ok_and(|value| value.get("method").is_some())
}

/// The id of a message body that is JSON with an `id`, for answering it with an error.
fn body_id(error: &(Option<Vec<u8>>, String)) -> Option<RequestId> {
    let value: Value = serde_json::from_slice(error.0.as_deref()?).ok()?;
    match value.get("id")? {
        Value::Number(n) => Some(RequestId::from(i32::try_from(n.as_i64()?).ok()?)),
        Value::String(s) => Some(RequestId::from(s.clone())),
        _ => None,
    }
}

/// The longest header line kept: a longer one keeps only its end, which is where a
/// `Content-Length` header sits when garbage precedes it on its line.
const MAX_HEADER_LINE: usize = 8 << 10;

/// The largest message body read; a larger one is refused without allocating it.
const MAX_MESSAGE: u64 = 64 << 20;

/// Reads one `Content-Length` framed message body; `None` at the end of the input, an error
/// for a frame without a valid length or with a body over [`MAX_MESSAGE`].
///
/// The framing resynchronises after any mistake: header lines are read as bytes (so invalid
/// UTF-8 is only garbage), each of bounded length, and the `Content-Length` header is looked for
/// anywhere in its line, so when a frame's declared length is short, the rest of its body is
/// skipped as garbage and the next frame's header, which follows it on the same line, is still
/// found. A refused body is not read; it is skipped the same way.
fn read_frame(input: &mut impl BufRead) -> Option<Result<Vec<u8>, String>> {
    let mut length = None;
    let mut seen = false;
    loop {
        let line = read_header_line(input)?;
        let line = line.trim_ascii_end();
        if line.is_empty() {
            if seen {
                break;
            }
            // Blank lines between frames are skipped.
            continue;
        }
        seen = true;
        if let Some(value) = content_length(line) {
            length = Some(value);
        }
    }
    let length = match length {
        None => {
            return Some(Err(
                "a message without a valid Content-Length header".to_owned()
            ));
        }
        Some(Err(error)) => return Some(Err(error)),
        Some(Ok(length)) => length,
    };
    let mut body = vec![0; length];
    input.read_exact(&mut body).ok()?;
    Some(Ok(body))
}

/// One header line with its line feed, keeping at most its last [`MAX_HEADER_LINE`] bytes;
/// `None` at the end of the input.
fn read_header_line(input: &mut impl BufRead) -> Option<Vec<u8>> {
    let mut line = Vec::new();
    loop {
        let buffer = input.fill_buf().ok()?;
        if buffer.is_empty() {
            return (!line.is_empty()).then_some(line);
        }
        let (used, done) = match buffer.iter().position(|b| *b == b'\n') {
            Some(at) => (at + 1, true),
            None => (buffer.len(), false),
        };
        line.extend_from_slice(&buffer[..used]);
        input.consume(used);
        if line.len() > MAX_HEADER_LINE {
            line.drain(..line.len() - MAX_HEADER_LINE);
        }
        if done {
            return Some(line);
        }
    }
}

/// The value of the last `Content-Length` header in `line`, if there is one: the length, or
/// why it cannot be used.
fn content_length(line: &[u8]) -> Option<Result<usize, String>> {
    const NAME: &[u8] = b"content-length:";
    let at = line
        .windows(NAME.len())
        .rposition(|w| w.eq_ignore_ascii_case(NAME))?;
    let value = String::from_utf8_lossy(&line[at + NAME.len()..]);
    let value = value.trim();
    Some(match value.parse::<u64>() {
        Ok(length) if length <= MAX_MESSAGE => Ok(length as usize),
        Ok(length) => Err(format!(
            "a message of {length} bytes is over the limit of {MAX_MESSAGE} bytes; skipped"
        )),
        Err(_) => Err(format!("an invalid Content-Length `{value}`")),
    })
}
