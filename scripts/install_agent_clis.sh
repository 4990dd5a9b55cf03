#!/usr/bin/env bash
# Installs the real AI coding agent CLIs that the tests drive in tmux (the Codex CLI, pinned in
# tests/agents/package.json and package-lock.json) into tests/agents/node_modules, from the npm registry.
# Fast when the pinned version is already there. Without npm it installs Debian's nodejs and npm when
# run as root, and otherwise only reports what is missing.
set -euo pipefail
cd "$(dirname "$0")/../tests/agents"
have() { command -v "$1" >/dev/null 2>&1; }
if ! have npm || ! have node; then
  if [ "$(id -u)" -ne 0 ] || ! have apt-get; then
    echo "kronii: npm and node are missing, so the real agent CLIs the tests drive (Codex) are not installed" >&2
    echo "kronii: install them with your package manager (as root: apt-get install nodejs npm), then run make deps" >&2
    exit 0
  fi
  echo "kronii: installing system packages: nodejs npm"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi
want="$(node -p "require('./package.json').dependencies['@openai/codex']")"
if [ -x node_modules/.bin/codex ] && [ "$(node_modules/.bin/codex --version 2>/dev/null)" = "codex-cli $want" ]; then
  exit 0
fi
echo "kronii: installing the Codex CLI $want for the tests (tests/agents/node_modules)"
if [ -f package-lock.json ]; then
  npm ci --no-audit --no-fund --loglevel=error
else
  npm install --no-audit --no-fund --loglevel=error --omit-lockfile-registry-resolved
fi
got="$(node_modules/.bin/codex --version 2>/dev/null || true)"
if [ "$got" != "codex-cli $want" ]; then
  echo "kronii: tests/agents/node_modules/.bin/codex reports '${got}', expected 'codex-cli $want'" >&2
  exit 1
fi
