#!/bin/sh
# Build ifr-<version>.vsix from this folder: the language client and the grammar.
set -eu
cd "$(dirname "$0")"
npm install --no-audit --no-fund
npx --no-install vsce package --allow-missing-repository --skip-license
