"""A planted run manifest never makes okstra talk to a tmux server or pane it did not start.

The planted socket is a real UNIX socket the test listens on: nothing may ever connect
to it (a tmux client would hand it the whole environment, API keys included), and
`runs`, `status`, `stop` and `attach` answer at once. A socket in a tmux directory that
is open to others or owned by another uid is refused the same way. A pane of the user's
own server (a private `tmux -S` server in a 0700 `tmux-<uid>` directory that
`TMUX_TMPDIR` makes the user's) whose program is not the one launch recorded is never
read, sent keys or killed. tmux itself runs with a minimal environment.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from okstra_core.environment import Environment
from okstra_core.processes import tmux
from tests.life.life_support import eventually, okstra_json, prepare_args, read_jsonl, set_lead
from tests.security.planted_support import (
    DROP,
    Listener,
    World,
    alive,
    private_tmux_dir,
    stat_start,
)

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

SECRET = "sk-ant-planted-socket-must-never-see-this"
# An answer that took longer than this waited on something (a hung socket cost 10 s).
PROMPT = 8.0
OTHER_UID = 65534


def _tmux_lead(socket: Path | str, pane: str = "%0", **fields: Any) -> dict[str, Any]:
    return {
        "status": "launched",
        "launchBackend": "tmux",
        "paneRef": pane,
        "windowRef": "okstra:1",
        "tmuxSocket": str(socket),
        "paneProcessId": os.getpid(),
        "paneStart": stat_start(os.getpid()),
        **fields,
    }


def _every_command_refuses(world: World) -> list[str]:
    """`runs`, `status`, `stop`, `attach`: each answers promptly; the refusals they gave."""
    said: list[str] = []
    code, listed, took = world.call("runs", "--json")
    assert code == 0 and took < PROMPT, (listed, took)
    assert listed["runs"][0]["lead"]["state"] == "refused", listed
    said.append(listed["runs"][0]["lead"]["detail"])
    code, status, took = world.call("status", world.run_id, "--json")
    assert code == 0 and took < PROMPT and status["lead"]["state"] == "refused", (status, took)
    said.append(status["lead"]["detail"])
    code, stopped, took = world.call("stop", world.run_id, "--json", "--grace", "1")
    assert code == 0 and took < PROMPT and stopped["steps"] == [], (stopped, took)
    code, attached, took = world.call("attach", world.run_id)
    assert code == 1 and took < PROMPT and "will not attach" in attached, attached
    said.append(attached)
    assert world.leader()["status"] == "launched"  # nothing recorded
    return said


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path, ANTHROPIC_API_KEY=SECRET, TMUX_TMPDIR=str(tmp_path / "tmuxbase"))


def test_a_planted_socket_is_never_connected_to(world: World) -> None:
    listener = Listener(world.tmp / "planted.sock")
    try:
        world.plant(**_tmux_lead(listener.path))
        said = _every_command_refuses(world)
    finally:
        connections = listener.close()
    assert connections == 0, "okstra connected to a socket a run file named"
    assert all("is not the user's own" in why for why in said), said


@pytest.mark.parametrize("how", ["open to everyone", "owned by another user", "foreign socket"])
def test_a_socket_in_a_tmux_directory_not_the_users_own_is_refused(world: World, how: str) -> None:
    if how != "open to everyone" and os.getuid() != 0:
        pytest.skip("making a file another user's needs root")
    base = Path(world.env["TMUX_TMPDIR"])
    directory = private_tmux_dir(base, 0o777 if how == "open to everyone" else 0o700)
    listener = Listener(directory / "default")
    if how == "owned by another user":
        os.chown(directory, OTHER_UID, -1)
    if how == "foreign socket":
        os.chown(listener.path, OTHER_UID, -1)
    try:
        world.plant(**_tmux_lead(listener.path))
        said = _every_command_refuses(world)
    finally:
        connections = listener.close()
    assert connections == 0
    expected = {
        "open to everyone": "mode 0777",
        "owned by another user": f"owner uid {OTHER_UID}",
        "foreign socket": f"owner uid {OTHER_UID}",
    }[how]
    assert all(expected in why for why in said), said


@pytest.fixture
def own_server(world: World) -> Iterator[dict[str, Any]]:
    """A tmux server of the user's own (socket in a private tmux-<uid> under TMUX_TMPDIR)
    running a program okstra never started, which shows something private."""
    socket = private_tmux_dir(Path(world.env["TMUX_TMPDIR"])) / "own"
    base = ["tmux", "-S", str(socket)]
    program = "echo PRIVATE-SCREEN-TEXT; exec sleep 1000"
    subprocess.run(
        [*base, "new-session", "-d", "-s", "mine", "-x", "80", "-y", "24", "sh", "-c", program],
        check=True,
        env={k: v for k, v in world.env.items() if k != "ANTHROPIC_API_KEY"},
    )
    shown = subprocess.run(
        [*base, "display-message", "-p", "-t", "mine", "#{pane_id} #{pane_pid}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    pane, pid = shown[0], int(shown[1])
    try:
        yield {"socket": socket, "base": base, "pane": pane, "pid": pid}
    finally:
        subprocess.run([*base, "kill-server"], capture_output=True, check=False)


@pytest.mark.parametrize("case", ["another start time", "another pid", "no pane pid"])
def test_a_pane_of_the_users_own_server_that_is_not_the_leads_is_left_alone(
    world: World, own_server: dict[str, Any], case: str
) -> None:
    pid = own_server["pid"]
    fields = {
        "another start time": {"paneProcessId": pid, "paneStart": "1"},
        "another pid": {},  # the test's own pid and start (see _tmux_lead)
        "no pane pid": {"paneProcessId": DROP, "paneStart": DROP},
    }[case]
    world.plant(**_tmux_lead(own_server["socket"], own_server["pane"], **fields))
    said = _every_command_refuses(world)
    assert all(f"tmux pane {own_server['pane']}" in why for why in said), said
    # Not killed, not sent Ctrl-C (it would end `sleep`), not read into the timeline.
    panes = subprocess.run(
        [*own_server["base"], "list-panes", "-a", "-F", "#{pane_id}"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.split()
    assert own_server["pane"] in panes and alive(pid)
    assert "PRIVATE-SCREEN-TEXT" not in world.timeline()


def test_tmux_runs_with_a_minimal_environment(tmp_path: Path) -> None:
    socket = private_tmux_dir(tmp_path) / "env"
    env = {**os.environ, "ANTHROPIC_API_KEY": SECRET, "TMUX_TMPDIR": str(tmp_path)}
    env.pop("TMUX", None)
    environment = Environment(env=env)
    server = tmux.server_for(str(socket), environment)
    assert server.refused is None, server
    try:
        done = tmux.run(
            server, ["new-session", "-d", "-s", "t", "sleep 1000"], environment, timeout=30
        )
        assert done is not None and done.returncode == 0, done
        for scope in (["-g"], ["-t", "t"]):
            shown = subprocess.run(
                ["tmux", "-S", str(socket), "show-environment", *scope],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            assert SECRET not in shown and "ANTHROPIC_API_KEY" not in shown, shown
            assert "PATH=" in shown or scope == ["-t", "t"]
    finally:
        subprocess.run(["tmux", "-S", str(socket), "kill-server"], capture_output=True, check=False)
    assert set(tmux.minimal_env({"PATH": "p", "LC_ALL": "C", "GH_TOKEN": "x", "TERM": "t"})) == {
        "PATH",
        "LC_ALL",
        "TERM",
    }


def test_a_real_launch_records_its_pane_and_stops(tmp_path: Path) -> None:
    base = tmp_path / "tmuxbase"
    private_tmux_dir(base)
    world = World(tmp_path, TMUX_TMPDIR=str(base), OKSTRA_TMUX_SOCKET="okstra-own")
    set_lead(tmp_path / "lead.json", delay=60, trapInt=True, signalExit=130)
    try:
        code, launched = okstra_json(
            prepare_args(world.project, "tmux", task_id="live"), cwd=world.project, env=world.env
        )
        assert code == 0, launched
        run_dir = Path(launched["runDir"])
        started = eventually(
            lambda: [e for e in read_jsonl(tmp_path / "lead.log") if e["event"] == "started"],
            "the lead started",
        )
        manifest = json.loads((run_dir / "run-manifest.json").read_text(encoding="utf-8"))
        lead = manifest["participants"][0]
        assert lead["tmuxSocket"] == str(base / f"tmux-{os.getuid()}" / "okstra-own")
        assert lead["paneProcessId"] == started[0]["pid"]
        assert lead["paneStart"] == stat_start(started[0]["pid"])
        code, stopped, _ = world.call("stop", str(run_dir), "--json", "--grace", "20")
        assert code == 0 and stopped["stopped"] and stopped["lead"]["state"] == "stopped", stopped
    finally:
        socket = base / f"tmux-{os.getuid()}" / "okstra-own"
        subprocess.run(["tmux", "-S", str(socket), "kill-server"], capture_output=True, check=False)
