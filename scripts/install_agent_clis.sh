#!/usr/bin/env bash
# Installs the real AI coding agent CLIs that the tests drive in tmux (the Codex, Gemini, Qwen Code,
# Claude Code and opencode CLIs, pinned exactly in tests/agents/package.json and package-lock.json) into tests/agents/node_modules,
# from the npm registry, and checks that each one runs and reports its pinned version.
# Fast when the pinned versions are already there. Without npm it installs Debian's nodejs and npm when
# run as root, and otherwise only reports what is missing.
set -euo pipefail
cd "$(dirname "$0")/../tests/agents"
have() { command -v "$1" >/dev/null 2>&1; }
if ! have npm || ! have node; then
  if [ "$(id -u)" -ne 0 ] || ! have apt-get; then
    echo "kronii: npm and node are missing, so the real agent CLIs the tests drive (Codex, Gemini, Qwen Code, Claude Code, opencode) are not installed" >&2
    echo "kronii: install them with your package manager (as root: apt-get install nodejs npm), then run make deps" >&2
    exit 0
  fi
  echo "kronii: installing system packages: nodejs npm"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi
major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$major" -lt 20 ]; then
  echo "kronii: node $(node --version) is too old for the agent CLIs the tests drive (Gemini and Qwen Code need node >= 20)" >&2
  exit 1
fi
# "package bin version-output version" for each pinned CLI: the command and what its --version prints.
agents() {
  node -e '
    const deps = require("./package.json").dependencies;
    const shown = {"@openai/codex": ["codex", "codex-cli ", ""], "@google/gemini-cli": ["gemini", "", ""],
                   "@qwen-code/qwen-code": ["qwen", "", ""],
                   "@anthropic-ai/claude-code": ["claude", "", " (Claude Code)"], "opencode-ai": ["opencode", "", ""]};
    for (const [name, version] of Object.entries(deps)) {
      const [bin, prefix, suffix] = shown[name] || [null, null, null];
      if (bin === null) { console.error(`kronii: tests/agents/package.json pins ${name}, which this script does not know`); process.exit(1); }
      console.log(`${name}\t${bin}\t${prefix}${version}${suffix}\t${version}`);
    }'
}
list="$(agents)"
# The installed packages' own package.json: a quick look, without starting any CLI.
installed() {
  node -e '
    const fs = require("fs");
    const deps = require("./package.json").dependencies;
    for (const [name, version] of Object.entries(deps)) {
      let got = null;
      try { got = JSON.parse(fs.readFileSync(`node_modules/${name}/package.json`, "utf8")).version; } catch (e) {}
      if (got !== version) process.exit(1);
    }'
}
if ! installed; then
  echo "kronii: installing the agent CLIs the tests drive ($(cut -f1,4 <<<"$list" | tr '\t\n' '@ ')) into tests/agents/node_modules"
  # `npm install --no-save` takes the exact versions of package-lock.json and leaves it as it is. (`npm ci`
  # would refuse it: the lock lacks the other platforms' optional binaries of Qwen Code's clipboard module,
  # which the registry reached here does not serve, so npm cannot record them.)
  npm install --no-save --no-audit --no-fund --loglevel=error --omit-lockfile-registry-resolved
fi
status=0
while IFS=$'\t' read -r name bin want _; do
  got="$(node_modules/.bin/"$bin" --version 2>/dev/null | tail -n 1 || true)"
  if [ "$got" != "$want" ]; then
    echo "kronii: tests/agents/node_modules/.bin/$bin ($name) reports '${got}', expected '$want'" >&2
    status=1
  fi
done <<<"$list"
exit "$status"
