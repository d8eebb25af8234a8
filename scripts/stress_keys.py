"""Random key bursts at a person's speed against the terminal app, a thousand at a time.

    .venv/bin/python scripts/stress_keys.py [--bursts 1000] [--first-seed 0] [--jobs 2]

Each burst (see `tests/security/key_bursts.py`) starts a fresh app — on the start
screen or a wizard screen — and sends it 10–40 random keys 0–80 ms apart, with resizes
down to 12×3, never waiting for the app to be ready. The bursts are split over `--jobs`
worker processes (seeds `first-seed …`), each with its own OKSTRA_HOME and fake agent
CLIs (nothing touches the real user directories, no real CLI runs). The output is one
line per crash (its seed replays it: `--first-seed SEED --bursts 1 --jobs 1`), then the
crashes counted by kind, then `N bursts, C crashes`; the tracebacks are kept in `--logs`.
The exit status is 1 when any burst crashed.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# What the test suite keeps out of the app's environment (tests/conftest.py and
# tests/tui/tui_support.py): the host session, the CLIs' logins.
UNSET = (
    "CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "CODEX_SANDBOX", "CODEX_THREAD_ID",
    "CODEX_MANAGED_BY_NPM", "TMUX", "TMUX_PANE", "ANTHROPIC_API_KEY",
    "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_AUTH_TOKEN", "GEMINI_API_KEY", "GOOGLE_API_KEY",
    "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_USE_GCA",
)  # fmt: skip


def _isolate(base: Path) -> None:
    """This worker's own OKSTRA_HOME, fake CLIs first on PATH, no logins."""
    from tests.conftest import ALL_CLIS, write_fake_cli
    from tests.security.key_bursts import FAKE_HELP

    for name in UNSET:
        os.environ.pop(name, None)
    os.environ["OKSTRA_HOME"] = str(base / "okstra-home")
    os.environ["FAKE_CLI_HELP"] = FAKE_HELP
    os.environ["CLAUDE_CONFIG_DIR"] = str(base / "no-claude-login")
    os.environ["GEMINI_CLI_HOME"] = str(base / "no-gemini-login")
    bin_dir = base / "fake-bin"
    for name in ALL_CLIS:
        write_fake_cli(bin_dir, name)
    os.environ["PATH"] = os.pathsep.join([str(bin_dir), "/usr/bin", "/bin"])


def _worker(first: int, count: int) -> int:
    """Run bursts `first …` in this process; one JSON line per burst on stdout."""
    sys.path.insert(0, str(ROOT))
    with tempfile.TemporaryDirectory(prefix="okstra-keys-") as tmp:
        base = Path(tmp)
        _isolate(base)
        from tests.security.key_bursts import crash_kind, prepare_wizards_folder, run_burst

        prepare_wizards_folder(base)
        for seed in range(first, first + count):
            try:
                asyncio.run(run_burst(base / "bursts", seed))
            except Exception as exc:  # the app crashed: this is what is counted
                line = {"seed": seed, "crash": crash_kind(exc)}
            else:
                line = {"seed": seed, "crash": None}
            print(json.dumps(line), flush=True)
    return 0


def _split(first: int, count: int, jobs: int) -> list[tuple[int, int]]:
    size, extra = divmod(count, jobs)
    parts, start = [], first
    for index in range(jobs):
        n = size + (1 if index < extra else 0)
        if n:
            parts.append((start, n))
        start += n
    return parts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bursts", type=int, default=1000)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument(
        "--logs", type=Path, default=None, help="where each worker's tracebacks go (a temp dir)"
    )
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return _worker(args.first_seed, args.bursts)
    started = time.monotonic()
    logs = args.logs or Path(tempfile.mkdtemp(prefix="okstra-keys-logs-"))
    logs.mkdir(parents=True, exist_ok=True)
    workers = []
    for a, n in _split(args.first_seed, args.bursts, max(1, args.jobs)):
        # A crashed app prints its traceback on stderr: kept per worker, not shown.
        with open(logs / f"seeds-{a}-{a + n - 1}.log", "wb") as log:
            workers.append(
                subprocess.Popen(
                    [
                        sys.executable,
                        __file__,
                        "--worker",
                        "--first-seed",
                        str(a),
                        "--bursts",
                        str(n),
                    ],
                    cwd=ROOT,
                    stdout=subprocess.PIPE,
                    stderr=log,
                    text=True,
                )
            )
    done, crashes = 0, []
    # Every burst's result, as it comes: the counts survive a run that is cut short.
    results = open(logs / "results.jsonl", "a", encoding="utf-8")  # noqa: SIM115
    for worker in workers:
        assert worker.stdout is not None
        for line in worker.stdout:
            results.write(line)
            results.flush()
            result = json.loads(line)
            done += 1
            if result["crash"]:
                crashes.append(result)
                print(f"seed {result['seed']}: {result['crash']}", flush=True)
            elif done % 50 == 0:
                print(f"… {done} bursts", file=sys.stderr, flush=True)
        worker.wait()
    results.close()
    kinds = collections.Counter(c["crash"] for c in crashes)
    for kind, n in kinds.most_common():
        print(f"{n:5d}  {kind}")
    minutes = (time.monotonic() - started) / 60
    print(f"{done} bursts, {len(crashes)} crashes ({minutes:.1f} min); tracebacks in {logs}")
    failed_workers = [w.returncode for w in workers if w.returncode]
    if failed_workers or done != args.bursts:
        print(f"workers failed: {failed_workers}; bursts run: {done}", file=sys.stderr)
        return 2
    return 1 if crashes else 0


if __name__ == "__main__":
    sys.exit(main())
