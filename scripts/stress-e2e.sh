#!/usr/bin/env bash
# Run the real-terminal (tmux) end-to-end tests N times in a row on a loaded machine.
#
#   bash scripts/stress-e2e.sh [N]        (default N: 20)
#
# While the rounds run, busy loops keep every CPU busy (one per CPU, at least two;
# STRESS_LOADERS overrides), so the app and the tests are slow and the timing between
# them changes from round to round — the way a shared CI machine behaves. The loops
# are this script's children and are killed when it exits, however it exits.
#
# Each round runs the end-to-end files together (every terminal size). A round's
# output is kept in $STRESS_LOGS (default: a fresh temp dir); a failed round prints
# the end of its log. The last line is "P/N passed"; the exit status is 1 when any
# round failed.
#
# Environment:
#   OKSTRA_VENV      the virtual environment with okstra installed (default: .venv)
#   STRESS_LOADERS   how many busy loops to start (default: CPUs, at least 2)
#   STRESS_LOGS      where to keep each round's log
#   STRESS_TESTS     the tests to run each round (default: the three end-to-end files)

set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROUNDS="${1:-20}"
case "$ROUNDS" in
    '' | *[!0-9]* | 0)
        echo "usage: $0 [N]  (N: how many rounds, a positive number)" >&2
        exit 2
        ;;
esac
VENV="${OKSTRA_VENV:-.venv}"
PYTEST="$VENV/bin/pytest"
if [ ! -x "$PYTEST" ]; then
    echo "$PYTEST not found: install okstra with its test extra first (see scripts/test.sh)" >&2
    exit 2
fi
if ! command -v tmux >/dev/null; then
    echo "tmux is not installed: the end-to-end tests would be skipped" >&2
    exit 2
fi
# STRESS_TESTS (space-separated test ids) replaces the end-to-end files, e.g. to
# stress the crash tests of tests/reliability the same way.
read -r -a TESTS <<<"${STRESS_TESTS:-tests/tui/test_tui_e2e_tmux.py tests/tui/test_tui_e2e_scenario.py tests/tui/test_tui_e2e_conventions.py}"
CPUS="$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)"
LOADERS="${STRESS_LOADERS:-$((CPUS > 2 ? CPUS : 2))}"
LOGS="${STRESS_LOGS:-$(mktemp -d "${TMPDIR:-/tmp}/okstra-stress-e2e.XXXXXX")}"
mkdir -p "$LOGS"

LOAD_PIDS=()
stop_load() {
    if [ "${#LOAD_PIDS[@]}" -gt 0 ]; then
        kill "${LOAD_PIDS[@]}" 2>/dev/null
        wait "${LOAD_PIDS[@]}" 2>/dev/null
    fi
    LOAD_PIDS=()
}
trap stop_load EXIT
trap 'stop_load; exit 130' INT
trap 'stop_load; exit 143' TERM

for _ in $(seq "$LOADERS"); do
    ( while :; do :; done ) &
    LOAD_PIDS+=("$!")
done
echo "stress-e2e: $ROUNDS rounds of ${TESTS[*]}"
echo "stress-e2e: $LOADERS busy loops on $CPUS CPUs (pids ${LOAD_PIDS[*]}); logs in $LOGS"

passed=0
start=$SECONDS
for round in $(seq "$ROUNDS"); do
    log="$LOGS/round-$round.log"
    began=$SECONDS
    if "$PYTEST" -p no:cacheprovider -q "${TESTS[@]}" >"$log" 2>&1; then
        passed=$((passed + 1))
        echo "round $round/$ROUNDS: pass ($((SECONDS - began))s) $(tail -n 1 "$log")"
    else
        echo "round $round/$ROUNDS: FAIL ($((SECONDS - began))s) $(tail -n 1 "$log")"
        grep -E '^(FAILED|ERROR)|Error:' "$log" | head -n 20 | sed 's/^/    /'
    fi
done
stop_load
echo "stress-e2e: $((SECONDS - start))s in all; logs in $LOGS"
echo "$passed/$ROUNDS passed"
[ "$passed" -eq "$ROUNDS" ]
