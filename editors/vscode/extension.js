// Starts `ifr lsp` (the command in the setting ifr.path) for .ifr files.
"use strict";

const childProcess = require("child_process");
const vscode = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");

let client;

function missing(command) {
  const probe = childProcess.spawnSync(command, ["--help"], { encoding: "utf8" });
  return probe.error !== undefined && probe.error.code === "ENOENT";
}

async function explain(message) {
  const choice = await vscode.window.showErrorMessage(message, "Open Settings");
  if (choice === "Open Settings") {
    vscode.commands.executeCommand("workbench.action.openSettings", "ifr.path");
  }
}

async function activate(context) {
  const command = vscode.workspace.getConfiguration("ifr").get("path") || "ifr";
  if (missing(command)) {
    await explain(
      `ifr: the command "${command}" was not found. Install ifr with its language server ` +
        `(pip install 'ifr[lsp]'), or set ifr.path to the ifr command (e.g. /path/to/.venv/bin/ifr).`
    );
    return;
  }
  client = new LanguageClient(
    "ifr",
    "ifr language server",
    { command, args: ["lsp"] },
    { documentSelector: [{ scheme: "file", language: "ifr" }] }
  );
  try {
    await client.start();
  } catch (err) {
    client = undefined;
    await explain(
      `ifr: "${command} lsp" did not start (${err && err.message ? err.message : err}). ` +
        `It needs ifr's lsp extra: pip install 'ifr[lsp]'.`
    );
  }
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration("ifr.path")) {
        vscode.window.showInformationMessage("ifr: reload the window to use the new ifr.path.");
      }
    })
  );
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
