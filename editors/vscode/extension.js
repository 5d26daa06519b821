// The Harness extension: starts `harness lsp` over stdio for `.harness` files.
//
// Plain JavaScript with no build step; the one dependency, vscode-languageclient, comes from
// `npm install` in this folder. Highlighting works without it: it is the TextMate grammar in
// `syntaxes/`, which VS Code loads from package.json.
'use strict';

const vscode = require('vscode');
const { LanguageClient, TransportKind } = require('vscode-languageclient/node');

/** @type {LanguageClient | undefined} */
let client;

/** Builds a client for the configured `harness` executable. */
function createClient() {
  const command = vscode.workspace.getConfiguration('harness').get('server.path') || 'harness';
  const server = { command, args: ['lsp'], transport: TransportKind.stdio };
  return new LanguageClient(
    'harness',
    'Harness language server',
    { run: server, debug: server },
    {
      documentSelector: [
        { scheme: 'file', language: 'harness' },
        { scheme: 'untitled', language: 'harness' },
      ],
    },
  );
}

/** Starts the client, telling the user (once) if the server cannot be started. */
async function start() {
  client = createClient();
  try {
    await client.start();
  } catch (error) {
    vscode.window.showErrorMessage(
      `Harness: could not start \`harness lsp\` (${error}). ` +
        'Install the harness CLI or set "harness.server.path".',
    );
  }
}

async function stop() {
  if (client) {
    const running = client;
    client = undefined;
    await running.stop();
  }
}

/** @param {vscode.ExtensionContext} context */
async function activate(context) {
  context.subscriptions.push(
    vscode.commands.registerCommand('harness.restartServer', async () => {
      await stop();
      await start();
    }),
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (event.affectsConfiguration('harness.server.path')) {
        await stop();
        await start();
      }
    }),
  );
  await start();
}

function deactivate() {
  return stop();
}

module.exports = { activate, deactivate };
