#!/usr/bin/env bash
# Install the real agent CLIs the real-CLI tests run (tests/realcli/), at PINNED versions,
# from the npm registry into .cache/agent-clis/ (or $OKSTRA_AGENT_CLIS_DIR).
#
# The prefix gets its own package.json (exact pins) so one install never removes the other.
# Idempotent: a package already installed at its pinned version is skipped.
# Versions move: when you bump a pin, re-check the measured CLI facts the tests rely on (tests/realcli).
#
# @anthropic-ai/claude-code >= 2.1.2xx declares engines.node >= 22; on Node 20 npm
# would otherwise silently pick an old release, so the exact pin is installed with
# --engine-strict=false (an EBADENGINE warning; the `claude` binary is native and works).
set -euo pipefail

CLAUDE_CODE_VERSION="2.1.332"
CODEX_VERSION="0.171.0"
GEMINI_CLI_VERSION="0.61.0"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
prefix="${OKSTRA_AGENT_CLIS_DIR:-$here/.cache/agent-clis}"
mkdir -p "$prefix"

installed_version() {
    # Prints the version of an installed package, or nothing.
    local manifest="$prefix/node_modules/$1/package.json"
    [[ -f "$manifest" ]] || return 0
    node -e 'process.stdout.write(require(process.argv[1]).version)' "$manifest"
}

install_pinned() {
    local package="$1" version="$2" have
    have="$(installed_version "$package")"
    if [[ "$have" == "$version" ]]; then
        echo "$package@$version already installed in $prefix"
        return 0
    fi
    echo "installing $package@$version into $prefix (had: ${have:-none})"
    local started=$SECONDS
    npm install --prefix "$prefix" --save-exact --no-audit --no-fund --engine-strict=false \
        --loglevel=error "$package@$version"
    have="$(installed_version "$package")"
    if [[ "$have" != "$version" ]]; then
        echo "error: $package: expected $version, npm installed ${have:-nothing}" >&2
        exit 1
    fi
    echo "$package@$version installed in $((SECONDS - started)) s"
}

install_pinned "@anthropic-ai/claude-code" "$CLAUDE_CODE_VERSION"
install_pinned "@openai/codex" "$CODEX_VERSION"
install_pinned "@google/gemini-cli" "$GEMINI_CLI_VERSION"

for cli in claude codex gemini; do
    if [[ ! -x "$prefix/node_modules/.bin/$cli" ]]; then
        echo "error: $prefix/node_modules/.bin/$cli is missing after install" >&2
        exit 1
    fi
done
echo "agent CLIs ready: $prefix/node_modules/.bin/{claude,codex,gemini}"
