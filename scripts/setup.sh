#!/usr/bin/env bash
# Install okstra from this checkout into a virtual environment (README command 1).
#
#   bash scripts/setup.sh [pip requirement…]      (default: `.`, this checkout)
#
# With a pip of its own (22.3 or newer: `pip --python`), the system's Python installs
# into a venv made without pip: making a venv with pip in it (ensurepip) took a third
# of the whole install. Without one, the venv gets its own pip, as `python3 -m venv`
# always does. Either way it is the same `pip install`, with pip's own configuration
# and cache.
#
# A venv made the fast way has no pip inside: `.venv/bin/python -m ensurepip` adds one,
# or install with `python3 -m pip --python .venv/bin/python install …`.
#
# Environment:
#   OKSTRA_VENV   the virtual environment to create or reuse (default: .venv)
#   PYTHON        the Python to build it from (default: python3; 3.11 or newer)

set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
VENV="${OKSTRA_VENV:-.venv}"
PYTHON="${PYTHON:-python3}"
export PIP_DISABLE_PIP_VERSION_CHECK="${PIP_DISABLE_PIP_VERSION_CHECK:-1}"

fail() {
    printf 'okstra setup: %s\n' "$*" >&2
    exit 2
}

if ! command -v "$PYTHON" >/dev/null; then
    fail "no '$PYTHON' on PATH: okstra needs Python 3.11 or newer (set PYTHON=… to pick one)"
fi
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    fail "$("$PYTHON" --version 2>&1) is too old: okstra needs Python 3.11 or newer" \
        "(set PYTHON=… to pick one)"
fi

# Whether the system pip can install into another interpreter (`--python`, pip 22.3).
SYSTEM_PIP=0
if "$PYTHON" -c '
import sys
from importlib.metadata import version
major, minor = (int(p) for p in version("pip").split(".")[:2])
sys.exit((major, minor) < (22, 3))
' 2>/dev/null; then
    SYSTEM_PIP=1
fi

venv_ok() {
    [ -x "$VENV/bin/python" ] &&
        "$VENV/bin/python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null
}

make_venv() {
    local args=()
    [ "$1" = without-pip ] && args=(--without-pip)
    if ! "$PYTHON" -m venv "${args[@]}" "$VENV"; then
        rm -rf "$VENV"
        fail "'$PYTHON -m venv' failed: on Debian or Ubuntu, install the venv module" \
            "first (apt install python3-venv)"
    fi
}

if venv_ok; then
    echo "okstra setup: reusing $VENV ($("$VENV/bin/python" --version))"
elif [ "$SYSTEM_PIP" = 1 ]; then
    rm -rf "$VENV"
    make_venv without-pip
else
    rm -rf "$VENV"
    make_venv with-pip
fi

if [ "$#" -eq 0 ]; then
    set -- .
fi
echo "okstra setup: installing $* into $VENV (pip, quietly; 15 s or so with a warm cache)"
# The venv's own pip when it has one, else the system's, pointed at the venv.
if "$VENV/bin/python" -c 'import pip' 2>/dev/null; then
    "$VENV/bin/python" -m pip install -q "$@"
elif [ "$SYSTEM_PIP" = 1 ]; then
    "$PYTHON" -m pip --python "$VENV/bin/python" install -q "$@"
else
    "$VENV/bin/python" -m ensurepip >/dev/null ||
        fail "$VENV has no pip and ensurepip failed: remove $VENV and run this again"
    "$VENV/bin/python" -m pip install -q "$@"
fi

# The sample project shipped beside this script (`demo/`) is okstra's own: trusted as
# it is installed, so its first launch asks nothing (`okstra trust --revoke demo`).
if [ -d demo ] && [ -x "$VENV/bin/okstra" ]; then
    "$VENV/bin/okstra" trust demo >/dev/null ||
        echo "okstra setup: could not record demo/ as trusted (okstra trust demo)" >&2
fi
