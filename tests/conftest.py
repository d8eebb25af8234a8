"""Shared fixtures. Every test runs with its own OKSTRA_HOME (never the real ~/.config)."""

from __future__ import annotations

import hashlib
import os
import stat
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
# Test helpers import each other as `tests.<area>.<module>`. The checkout goes at the
# END of sys.path: `tests` resolves from it, while `okstra_core` and `okstra_tui` keep
# resolving to the installed copy under test (scripts/test.sh installs the wheel
# non-editable and runs the venv's `pytest`, which does not put the cwd on sys.path).
if str(REPO) not in sys.path:
    sys.path.append(str(REPO))

# Before any okstra module is imported, and for what runs outside a test (imports at
# collection, exit handlers): a throw-away
# OKSTRA_HOME for the whole session. Each test still gets its own (`okstra_home`).
os.environ["OKSTRA_HOME"] = tempfile.mkdtemp(prefix="okstra-test-session-")

# okstra launches a lead or starts a worker only in a project its person trusts
# (`okstra_core.trust`). Every project a test makes is under the temporary directory:
# trusted here, in one place, by the variable a person would use for throw-away
# checkouts. A test about trust itself calls `untrusted(monkeypatch)`.
TRUSTED_ROOT = os.path.realpath(tempfile.gettempdir())
os.environ["OKSTRA_TRUSTED_DIRECTORIES"] = TRUSTED_ROOT


def untrusted(monkeypatch: pytest.MonkeyPatch) -> None:
    """Trust no project by default in this test (the record alone decides)."""
    monkeypatch.delenv("OKSTRA_TRUSTED_DIRECTORIES", raising=False)


def _gemini_login(home: Path) -> Path:
    """A Gemini CLI home with its cached login (a file alone tells okstra it is logged
    in): the fake agent CLIs of the tests count as logged in."""
    (home / ".gemini").mkdir(parents=True, exist_ok=True)
    (home / ".gemini" / "oauth_creds.json").write_text("{}", encoding="utf-8")
    return home


# For what runs outside a test's own fixtures too (module-scoped fixtures).
os.environ["GEMINI_CLI_HOME"] = str(
    _gemini_login(Path(tempfile.mkdtemp(prefix="okstra-test-gemini-")))
)

# A fake provider CLI: records argv, cwd and selected environment as one JSON line per
# call in $FAKE_CLI_LOG (if set), answers --version and --help (every launch flag of the
# bundled providers unless $FAKE_CLI_HELP says otherwise: a check's verdict is kept for
# the model lists), and exits with $FAKE_CLI_EXIT (after
# printing $FAKE_CLI_SAY and waiting $FAKE_CLI_LINGER seconds, default 0, unless asked
# for --version or --help).
FAKE_CLI = """#!{python}
import json, os, sys, time
name = os.environ.pop("FAKE_CLI_NAME", None) or os.path.basename(sys.argv[0])
log = os.environ.get("FAKE_CLI_LOG")
if log:
    with open(log, "a", encoding="utf-8") as fh:
        fh.write(json.dumps({{"cli": name, "argv": sys.argv[1:], "cwd": os.getcwd(),
            "env": {{k: v for k, v in os.environ.items()
                    if k.startswith(("OKSTRA", "GEMINI", "CODEX", "CLAUDE", "FAKE"))}}}}) + "\\n")
if "--version" in sys.argv[1:]:
    print(name + " 9.9.9 (fake)")
    sys.exit(0)
if "--help" in sys.argv[1:]:
    print(os.environ.get("FAKE_CLI_HELP", "usage: " + name + " [options] -- [prompt] "
        "--session-id --session --model --no-daemon --config --prompt-interactive "
        "  --system-prompt-file --agent-file"))
    sys.exit(0)
# Like a real lead CLI, show its screen ($FAKE_CLI_SAY) and stay up a while
# (FAKE_CLI_LINGER seconds) so its window is seen.
if os.environ.get("FAKE_CLI_SAY"):
    print(os.environ["FAKE_CLI_SAY"], flush=True)
time.sleep(float(os.environ.get("FAKE_CLI_LINGER", "0")))
sys.exit(int(os.environ.get("FAKE_CLI_EXIT", "0")))
"""

ALL_CLIS = ("claude", "gemini", "codex", "grok", "kimi")


@pytest.fixture(autouse=True)
def okstra_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Isolate every user directory okstra touches."""
    home = tmp_path_factory.mktemp("okstra-home")
    monkeypatch.setenv("OKSTRA_HOME", str(home))
    monkeypatch.setenv("OKSTRA_TRUSTED_DIRECTORIES", TRUSTED_ROOT)
    monkeypatch.delenv("OKSTRA_WORKSPACE", raising=False)
    monkeypatch.delenv("OKSTRA_LANG", raising=False)
    # Never let the host detection see the session this test suite runs in.
    # The fake agent CLIs count as logged in where okstra tells by a file alone (the
    # Gemini CLI's cached login): a test about logins sets its own home.
    monkeypatch.setenv("GEMINI_CLI_HOME", str(_gemini_login(tmp_path_factory.mktemp("gemini"))))
    # A lead started in tmux is watched this long at most (a test about that sets more).
    monkeypatch.setenv("OKSTRA_LAUNCH_WATCH", "0.5")
    for var in (
        "CLAUDECODE",
        "CLAUDE_CODE_ENTRYPOINT",
        "CODEX_SANDBOX",
        "CODEX_THREAD_ID",
        "CODEX_MANAGED_BY_NPM",
        "TMUX",
        "TMUX_PANE",
    ):
        monkeypatch.delenv(var, raising=False)
    return home


def write_fake_cli(bin_dir: Path, name: str) -> Path:
    return write_fake(bin_dir, name, FAKE_CLI.format(python=sys.executable), help_env=True)


# The shell front of every fake CLI. okstra checks a CLI (`--version`, `--help`, its
# login status) before each prepare and launch: a shell answers those in a
# millisecond, where a Python fake costs a few hundredths of a second of CPU each
# time — a tenth of the suite's time. Everything else (and every call while
# $FAKE_CLI_LOG asks for a log of them) runs the fake's Python body, a file beside it,
# told its name in $FAKE_CLI_NAME (exec: the same process, pid and start time).
FRONT = """#!/bin/sh
if [ -z "$FAKE_CLI_LOG" ]; then
  case " $* " in
    *" --version "*) echo "${{0##*/}} 9.9.9 (fake)"; exit 0 ;;
    *" --help "*) {help}; exit 0 ;;
  esac
  {status}
fi
FAKE_CLI_NAME="${{0##*/}}" exec "{python}" "${{0%/*}}/{body}" "$@"
"""
HELP_FROM_ENV = (
    'if [ -n "${{FAKE_CLI_HELP+x}}" ]; then printf "%s\\n" "$FAKE_CLI_HELP"; '
    "else echo {default}; fi"
)
DEFAULT_HELP = (
    "usage: {name} [options] -- [prompt] --session-id --session --model --no-daemon "
    "--config --prompt-interactive   --system-prompt-file --agent-file"
)


def answering_probe(argv: Sequence[str]) -> tuple[int, str, str]:
    """`Environment.probe_override` for a PATH look-up that names no real file
    (`which_override`): each CLI answers its version and help like the fake CLIs, and
    its login status command with nothing okstra understands ("cannot tell")."""
    name = os.path.basename(argv[0])
    if "--version" in argv[1:]:
        return 0, f"{name} 9.9.9 (fake)\n", ""
    if "--help" in argv[1:]:
        return 0, DEFAULT_HELP.format(name=name) + "\n", ""
    return 2, "", ""


def _sh_quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def write_fake(
    bin_dir: Path,
    name: str,
    body: str,
    *,
    help_text: str | None = None,
    help_env: bool = False,
    status_exit: int | None = None,
) -> Path:
    """A fake CLI `name` in `bin_dir`: the shell front answers `--version` and `--help`
    (`help_text`, or $FAKE_CLI_HELP with the default when `help_env`) and, with
    `status_exit`, `auth status` / `login status`; the Python `body` does the rest."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256(body.encode()).hexdigest()[:12]
    source = bin_dir / f".fake-{digest}.py"
    if not source.exists():
        source.write_text(body, encoding="utf-8")
    if help_env:
        shown = HELP_FROM_ENV.format(default=_sh_quote(DEFAULT_HELP.format(name=name)))
    else:
        shown = f"printf '%s\\n' {_sh_quote(help_text or '')}"
    status = (
        f'case "$1 $2" in "auth status"|"login status") exit {status_exit} ;; esac'
        if status_exit is not None
        else ":"
    )
    path = bin_dir / name
    path.write_text(
        FRONT.format(help=shown, status=status, python=sys.executable, body=source.name),
        encoding="utf-8",
    )
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


@pytest.fixture
def fake_bin(tmp_path: Path) -> Callable[..., Path]:
    """Make a directory of fake provider CLIs: `fake_bin("claude", "codex")`.

    Returns the directory; put it on PATH (alone, or before /usr/bin) in the test.
    """

    def make(*names: str, directory: Path | None = None) -> Path:
        target = directory or (tmp_path / "fake-bin")
        for name in names or ALL_CLIS:
            write_fake_cli(target, name)
        return target

    return make


@pytest.fixture
def fake_path(fake_bin: Callable[..., Path], monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """PATH = fake CLIs for every bundled provider + the system dirs (no real agent CLI)."""
    directory = fake_bin()
    monkeypatch.setenv("PATH", os.pathsep.join([str(directory), "/usr/bin", "/bin"]))
    yield directory


def okstra_cmd() -> list[str]:
    """The installed `okstra` command of the interpreter running the tests."""
    exe = Path(sys.executable).parent / "okstra"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "okstra_tui"]


def dying_lead(help_text: str) -> str:
    """A `claude` that answers its version, help and login, then, started as the lead,
    prints an error and exits 1 after a second and a half (the way a logged-out one
    does): the honest-launch tests' lead."""
    return f"""#!/bin/sh
case "$1" in
  --version) echo "claude 9.9.9 (fake)"; exit 0 ;;
  --help) echo "{help_text}"; exit 0 ;;
  auth) exit 0 ;;
esac
echo "Error: Not logged in · Please run /login"
sleep 1.5
exit 1
"""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The long tests first (real tmux, marked slow): the workers of a parallel run then
    end together instead of one finishing a long test alone while the others wait.
    A stable sort: every worker collects the same order, as pytest-xdist requires."""
    items.sort(
        key=lambda item: (
            0 if item.get_closest_marker("tmux") or item.get_closest_marker("slow") else 1
        )
    )
