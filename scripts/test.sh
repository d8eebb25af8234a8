#!/usr/bin/env bash
# Install everything the tests need and run the whole gate: ruff, lint-imports, dead
# code (vulture), mypy, pytest.
#
#   bash scripts/test.sh [pytest args…]
#
# The project is installed NON-editable into the venv, and pytest runs through the
# venv's `pytest` script (not `python -m pytest`, which would put the checkout on
# sys.path): the tests exercise the built wheel, the way a user gets okstra
# (tests/test_packaging.py checks this when OKSTRA_TEST_INSTALLED=1). An editable
# install already in the venv is replaced: point OKSTRA_VENV elsewhere to keep it.
#
# Environment:
#   OKSTRA_VENV            the virtual environment to create/reuse (default: .venv)
#   OKSTRA_PYTEST_TIMEOUT  seconds before a hung pytest run is stopped (default: 3000: well above the suite's time on a loaded 2-CPU machine, inside CI's 90 minutes)
#   OKSTRA_SKIP_INSTALL=1  reuse the venv as it is (no pip, apt or npm; local loops)
#   OKSTRA_TEST_WORKERS    pytest-xdist workers (default: one more than the CPUs; 0 = serial)
#
# Pytest's summary line is always the last line printed: CI logs are read bottom-up.

set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
REPO="$(pwd)"
VENV="${OKSTRA_VENV:-.venv}"
case "$VENV" in
    /*) ;;
    *) VENV="$REPO/$VENV" ;;
esac
PY="$VENV/bin/python"
START=$SECONDS
FAILED=()

export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
export DEBIAN_FRONTEND=noninteractive
# Python output straight through: phase headers and tool output stay in order.
export PYTHONUNBUFFERED=1

phase() {
    printf '\n==> [%4ss] %s\n' "$((SECONDS - START))" "$*"
}

warn() {
    printf 'WARNING: %s\n' "$*" >&2
}

is_root() {
    [ "$(id -u)" -eq 0 ]
}

venv_ok() {
    [ -x "$PY" ] && "$PY" -c 'import sys; assert sys.version_info >= (3, 11)' 2>/dev/null
}

# The venv and okstra with the test extra, as README command 1 installs okstra
# (scripts/setup.sh), with one retry: a transient index error should not fail the gate.
install_okstra() {
    if OKSTRA_VENV="$VENV" bash scripts/setup.sh "$@"; then
        return 0
    fi
    # Debian splits ensurepip into python3-venv; install it when we may.
    if is_root && command -v apt-get >/dev/null && ! python3 -c 'import ensurepip' 2>/dev/null
    then
        warn "python3 has no ensurepip; installing python3-venv from apt"
        apt-get update -qq || warn "apt-get update failed"
        apt-get install -y -qq python3-venv
    fi
    warn "installing okstra failed; retrying once"
    sleep 5
    OKSTRA_VENV="$VENV" bash scripts/setup.sh "$@"
}

# tmux for the end-to-end tests; zsh and fish so that the completion scripts are
# loaded in the real shells (their tests are skipped, not failed, without them).
install_tmux() {
    local missing=() tool
    for tool in tmux zsh fish; do
        command -v "$tool" >/dev/null || missing+=("$tool")
    done
    if [ "${#missing[@]}" -eq 0 ]; then
        echo "tmux: $(tmux -V); zsh and fish present"
        return 0
    fi
    if ! is_root || ! command -v apt-get >/dev/null; then
        warn "${missing[*]} missing and cannot be installed here (needs root and apt-get);" \
            "their tests will be skipped"
        return 0
    fi
    if ! timeout 300 apt-get update -qq; then
        warn "apt-get update failed; trying to install ${missing[*]} anyway"
    fi
    for tool in "${missing[@]}"; do
        if timeout 300 apt-get install -y -qq "$tool" >/dev/null && command -v "$tool" >/dev/null
        then
            echo "$tool: installed"
        else
            warn "apt-get install $tool failed; its tests will be skipped"
        fi
    done
}

install_agent_clis() {
    if [ ! -f scripts/install-agent-clis.sh ]; then
        warn "scripts/install-agent-clis.sh not found; the real-CLI tests will be skipped"
        return 0
    fi
    # npm has no overall timeout of its own; a stalled registry must not eat the CI budget.
    if ! timeout 600 bash scripts/install-agent-clis.sh </dev/null; then
        warn "installing the agent CLIs failed; the real-CLI tests will be skipped"
    fi
}

# The background installs (tmux, agent CLIs): wait for them, then show what they said.
# They only warn on failure (their tests are skipped), so their status is not checked.
wait_side_installs() {
    wait "$SIDE_PID" || warn "installing tmux or the agent CLIs failed"
    cat "$SIDE_LOG"
    rm -f "$SIDE_LOG"
}

# Run one check; record a failure instead of stopping, so one CI run reports every
# broken gate (the exit status is still non-zero at the end).
check() {
    local name="$1"
    shift
    phase "$name"
    if ! "$@"; then
        FAILED+=("$name")
        warn "$name failed"
    fi
}

if [ "${OKSTRA_SKIP_INSTALL:-}" = 1 ] && venv_ok; then
    phase "reusing $VENV as it is (OKSTRA_SKIP_INSTALL=1)"
else
    # tmux (apt) and the agent CLIs (npm) do not need the venv: they install while pip
    # does, and their output is shown after it (`wait_side_installs`).
    SIDE_LOG="$(mktemp)"
    (
        phase "tmux"
        install_tmux
        phase "agent CLIs"
        install_agent_clis
    ) >"$SIDE_LOG" 2>&1 &
    SIDE_PID=$!

    phase "virtual environment (${VENV#"$REPO"/}) and okstra (non-editable) with the test extra"
    install_okstra '.[test]'
    echo "$VENV: $("$PY" --version)"
    # What we test must be the installed copy, never the checkout: a previous editable
    # install of the same version is replaced here if pip left it in place.
    where="$(cd / && "$PY" -c 'import okstra_core; print(okstra_core.__file__)')"
    if [ "$where" = "$REPO/okstra_core/__init__.py" ]; then
        warn "okstra is still imported from the checkout; reinstalling it"
        "$PY" -m pip install -q --force-reinstall --no-deps .
    fi
    echo "okstra_core: $(cd / && "$PY" -c 'import okstra_core; print(okstra_core.__file__)')"

    wait_side_installs
fi

check "ruff check" "$VENV/bin/ruff" check .
check "ruff format --check" "$VENV/bin/ruff" format --check .
# The layers of the core and the app (pyproject.toml, [tool.importlinter]).
check "lint-imports" "$VENV/bin/lint-imports"
# mypy and the dead-code check (scripts/dead_code.py: functions, methods, classes and
# properties nothing uses) run beside the tests (seconds of one CPU each, which the tests
# leave idle now and then); their reports come after the tests'.
MYPY_LOG="$(mktemp)"
"$VENV/bin/mypy" okstra_core okstra_tui >"$MYPY_LOG" 2>&1 &
MYPY_PID=$!
DEAD_LOG="$(mktemp)"
"$PY" scripts/dead_code.py >"$DEAD_LOG" 2>&1 &
DEAD_PID=$!

phase "pytest"
if [ "${#FAILED[@]}" -gt 0 ]; then
    warn "already failed: $(IFS=,; echo "${FAILED[*]}") (the tests run anyway)"
fi
LOG_DIR="$REPO/.cache"
mkdir -p "$LOG_DIR"
LOG="$LOG_DIR/pytest-last.log"
export OKSTRA_TEST_INSTALLED=1
export PATH="$VENV/bin:$PATH"
color=()
[ -t 1 ] && color=(--color=yes)
# Tests wait on tmux, subprocesses and timers: one worker more than the CPUs keeps them
# busy (measured on 2 CPUs: 549 s with three workers, 567 s with two).
WORKERS=$(($(nproc 2>/dev/null || echo 1) + 1))
set +e
# `timeout` stops a hung run before CI's own limit does, so the log still ends with
# our message; faulthandler dumps every thread's stack of a test stuck for 3 minutes.
# The tests are independent (each has its own OKSTRA_HOME, tmp dirs and tmux socket),
# so they run on every CPU; `--dist worksteal` lets a worker that runs out of tests take
# some of another's queue, so the run's tail is short (none need to share a worker:
# shared paths take a lock).
timeout -k 30 "${OKSTRA_PYTEST_TIMEOUT:-3000}" "$VENV/bin/pytest" \
    -p no:cacheprovider -q -o faulthandler_timeout=180 --durations=5 \
    -n "${OKSTRA_TEST_WORKERS:-$WORKERS}" --dist worksteal \
    "${color[@]}" "$@" </dev/null 2>&1 | tee "$LOG"
rc=${PIPESTATUS[0]}
set -e

phase "mypy okstra_core okstra_tui (ran beside the tests)"
if ! wait "$MYPY_PID"; then
    FAILED+=("mypy")
fi
cat "$MYPY_LOG"
rm -f "$MYPY_LOG"
phase "dead code (ran beside the tests)"
if ! wait "$DEAD_PID"; then
    FAILED+=("dead code")
fi
cat "$DEAD_LOG"
rm -f "$DEAD_LOG"

after=()
case "$rc" in
    0) ;;
    5)
        after+=("pytest collected no tests: treated as success")
        rc=0
        ;;
    124 | 137) after+=("pytest was stopped after ${OKSTRA_PYTEST_TIMEOUT:-3000}s (hung?)") ;;
    *) ;;
esac
if [ "${#FAILED[@]}" -gt 0 ]; then
    after+=("FAILED before the tests: $(IFS=,; echo "${FAILED[*]}")")
    [ "$rc" -eq 0 ] && rc=1
fi
[ "${#after[@]}" -gt 0 ] && printf '%s\n' "${after[@]}"
# Repeat pytest's summary line so it stays the last line of the log.
summary="$(grep -v '^[[:space:]]*$' "$LOG" | tail -n 1 || true)"
[ -n "$summary" ] && printf '%s\n' "$summary"
exit "$rc"
