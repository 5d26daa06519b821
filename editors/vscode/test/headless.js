// Drives the real vscode-languageclient (the extension's one dependency) headless against a
// `harness` binary, as the extension starts it: `{ command, args: ["lsp"], transport: stdio }`,
// which the library runs as `command lsp --stdio`. VS Code itself is replaced by a permissive
// stub of the `vscode` module: every property is a callable, constructible proxy.
//
// Usage, after `npm install` in editors/vscode: node test/headless.js PATH/TO/harness FILE.harness
// It prints the capabilities, the published diagnostics and a hover, and exits 1 if no
// diagnostics arrived.
'use strict';
const Module = require('module');
const fs = require('fs');
function stub(name) {
  const target = function () {};
  return new Proxy(target, {
    get(t, prop) {
      if (prop === 'then') return undefined;
      if (prop === Symbol.toPrimitive) return () => name;
      if (prop === 'dispose') return () => {};
      if (prop === 'length') return 0;
      if (!(prop in t)) t[prop] = stub(name + '.' + String(prop));
      return t[prop];
    },
    apply() { return stub(name + '()'); },
    construct(t, args) { const o = stub('new ' + name); o.args = args; return o; },
  });
}
const vscode = stub('vscode');
const conf = { get: (k, d) => d, has: () => false, inspect: () => undefined, update: async () => {} };
vscode.workspace.getConfiguration = () => conf;
vscode.workspace.workspaceFolders = undefined;
vscode.workspace.textDocuments = [];
vscode.window.visibleTextEditors = [];
vscode.window.tabGroups = { all: [], onDidChangeTabs: () => ({ dispose() {} }) };
vscode.extensions.all = [];
vscode.env.language = 'en';
vscode.env.appName = 'headless';
vscode.version = '1.90.0';
const out = { append: (s) => process.stderr.write('[out] ' + s), appendLine: (s) => process.stderr.write('[out] ' + s + '\n'), show() {}, dispose() {}, clear() {}, replace() {}, hide() {}, name: 'out' };
vscode.window.createOutputChannel = () => out;
vscode.Uri.parse = (s) => ({ toString: () => s, fsPath: s.replace('file://', ''), scheme: 'file' });
vscode.Uri.file = (p) => vscode.Uri.parse('file://' + p);
const orig = Module._load;
Module._load = function (request, ...rest) {
  if (request === 'vscode') return vscode;
  return orig.call(this, request, ...rest);
};
const { LanguageClient, TransportKind } = require('vscode-languageclient/node');
const command = process.argv[2];
const server = { command, args: ['lsp'], transport: TransportKind.stdio };
let seen = false;
const client = new LanguageClient('harness', 'Harness language server', { run: server, debug: server }, {
  documentSelector: [{ scheme: 'file', language: 'harness' }],
  outputChannel: out,
  traceOutputChannel: out,
  middleware: {
    handleDiagnostics(uri, diagnostics, next) {
      console.log('diagnostics for', String(uri), JSON.stringify(diagnostics.map((d) => d.args ? { message: d.args[1] } : d)));
      seen = true;
    },
  },
});
const file = process.argv[3];
client.onNotification('textDocument/publishDiagnostics', (p) => {
  console.log('raw publishDiagnostics', p.uri, JSON.stringify(p.diagnostics.map((d) => [d.code, d.message])));
  seen = true;
});
(async () => {
  await client.start();
  console.log('started; server capabilities:', Object.keys(client.initializeResult.capabilities).join(','));
  await client.sendNotification('textDocument/didOpen', { textDocument: { uri: 'file://' + file, languageId: 'harness', version: 1, text: fs.readFileSync(file, 'utf8') } });
  const hover = await client.sendRequest('textDocument/hover', { textDocument: { uri: 'file://' + file }, position: { line: 2, character: 10 } });
  console.log('hover:', JSON.stringify(hover));
  await new Promise((r) => setTimeout(r, 1500));
  await client.stop();
  console.log('stopped; diagnostics seen:', seen);
  process.exit(seen ? 0 : 1);
})().catch((e) => { console.error('FAILED', e); process.exit(1); });
