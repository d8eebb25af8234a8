"""Throw-away machines for the measurements: a home, a project, fake CLIs, big pools.

Nothing here touches the real user directories: every measurement runs with its own
`OKSTRA_HOME`, a PATH of fake provider CLIs, and (for the big pools) an
`OKSTRA_WORKSPACE` holding a synthetic profile and twenty synthetic providers.
"""

from __future__ import annotations

import os
import stat
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ._harness import clean_env

# The bundled providers, in registry order; the synthetic pools reuse these ids (a
# workspace file with a bundled id replaces the bundled one) and add fifteen more.
BUNDLED_PROVIDERS = ("claude", "antigravity", "codex", "grok", "kimi")
N_PROVIDERS = 20
# Providers whose CLI is left off PATH, so the big pools carry unavailable models too.
UNAVAILABLE_PROVIDERS = 2

BENCH_TASK_TYPE = "requirements-discovery"
# Six roles, counts up to five, with every kind of constraint the resolver knows.
BENCH_PROFILE = f'''+++
task_type = "{BENCH_TASK_TYPE}"
title = "Benchmark profile"
summary = "Six roles, counts up to five (bench/ only)."

[[roles]]
role = "analyser"
duty = "cross-verification"
min = 1
max = 5
recommended = 3
distinct = "model"

[[roles]]
role = "designer"
duty = "design"
min = 1
max = 5
recommended = 2
distinct = "provider"

[[roles]]
role = "planner"
duty = "planning"
min = 0
max = 5
recommended = 2

[[roles]]
role = "verifier"
duty = "verification"
min = 1
max = 5
recommended = 2
exclude_models_of = ["analyser"]

[[roles]]
role = "critic"
duty = "scope-critic"
min = 0
max = 5
recommended = 1
distinct = "provider"
exclude_models_of = ["designer"]

[[roles]]
role = "report-writer"
duty = "report"
min = 1
max = 1
+++
# Benchmark

A synthetic phase for bench/: the lead prompt body is not what is measured.
'''
BENCH_ROLES = ("leader", "analyser", "designer", "planner", "verifier", "critic", "report-writer")


def repo_prompts() -> Path:
    """The bundled `prompts/` the installed okstra ships (or the checkout's)."""
    from okstra_core.paths import bundled_prompts_root

    return bundled_prompts_root()


def _required_flags() -> set[str]:
    flags: set[str] = set()
    for path in sorted((repo_prompts() / "providers").glob("*.toml")):
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        flags.update(data.get("launch", {}).get("required_flags", []))
    return flags


def bundled_clis() -> list[str]:
    """The executable names of the bundled providers (claude, gemini, codex, …)."""
    clis = []
    for path in sorted((repo_prompts() / "providers").glob("*.toml")):
        clis.append(tomllib.loads(path.read_text(encoding="utf-8"))["cli"])
    return clis


def write_fake_clis(bin_dir: Path, names: Iterable[str]) -> Path:
    """Tiny shell scripts standing in for provider CLIs (fast to spawn, never launched)."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    help_text = " ".join(sorted(_required_flags()))
    for name in names:
        path = bin_dir / name
        path.write_text(
            "#!/bin/sh\n"
            'case "$1" in\n'
            f'  --version) echo "{name} 9.9.9 (fake)";;\n'
            f'  --help) echo "usage: {name} {help_text}";;\n'
            # Logged in, as `claude auth status` and `codex login status` say it.
            "  auth) echo '{\"loggedIn\": true}';;\n"
            '  login) echo "Logged in using an API key";;\n'
            "esac\n"
            "exit 0\n",
            encoding="utf-8",
        )
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return bin_dir


@dataclass(frozen=True)
class Machine:
    """One isolated setup: environment variables, a project, where the state goes."""

    root: Path
    env: dict[str, str]
    project: Path
    brief: Path

    @property
    def home(self) -> Path:
        return Path(self.env["OKSTRA_HOME"])

    def state(self, name: str = "bench") -> Path:
        return self.home / "state" / "wizards" / f"{name}.json"


def make_machine(root: Path, *, clis: Iterable[str] | None = None, **extra: str) -> Machine:
    """A fresh OKSTRA_HOME, a project with a brief, and fake CLIs on PATH."""
    root.mkdir(parents=True, exist_ok=True)
    bin_dir = write_fake_clis(root / "bin", bundled_clis() if clis is None else clis)
    project = root / "project"
    project.mkdir(exist_ok=True)
    brief = project / "brief.md"
    brief.write_text("# Brief\n\nMake the thing faster.\n", encoding="utf-8")
    env = clean_env(
        OKSTRA_HOME=str(root / "home"),
        # The gemini CLI is logged in by a key (its provider has no status command).
        GEMINI_API_KEY="bench",
        PATH=os.pathsep.join([str(bin_dir), "/usr/bin", "/bin"]),
        **extra,
    )
    return Machine(root=root, env=env, project=project, brief=brief)


def _provider_toml(provider_id: str, cli: str, models: int, first_index: int) -> str:
    roles = ", ".join(f'"{r}"' for r in BENCH_ROLES)
    lines = [
        f'id = "{provider_id}"',
        f'display_label = "Bench {provider_id}"',
        f'cli = "{cli}"',
        f"roles = [{roles}]",
        "",
        "[launch]",
        'version = ["{cli}", "--version"]',
        'help = ["{cli}", "--help"]',
        'new = ["{cli}", "--session-id", "{session_id}", "--model", "{model}",'
        ' "--append-system-prompt-file", "{prompt_file}", "--", "{kickoff}"]',
        'resume = ["{cli}", "--resume", "{session_id}", "--model", "{model}"]',
        'session_id = "uuid4"',
    ]
    for k in range(models):
        n = first_index + k
        # A few defaults per role spread over the providers, as the bundled data has.
        default_for = [BENCH_ROLES[(n + j) % len(BENCH_ROLES)] for j in range(2)] if k < 2 else []
        # Every third model serves a subset of roles, so per-role lists differ.
        subset = [r for i, r in enumerate(BENCH_ROLES) if (i + n) % 3] if k % 3 == 2 else []
        default_for = [r for r in default_for if not subset or r in subset]
        lines += [
            "",
            "[[models]]",
            f'id = "model-{n:04d}"',
            f'display = "Bench model {n:04d}"',
            f'execution = "bench-exec-{n:04d}"',
            f'aliases = ["m{n:04d}"]',
            'version = "pinned"',
            "default_for = [" + ", ".join(f'"{r}"' for r in default_for) + "]",
            "roles = [" + ", ".join(f'"{r}"' for r in subset) + "]",
        ]
    return "\n".join(lines) + "\n"


# Six roles at up to five instances each (the report writer too): the scale walk.
SCALE_PROFILE = BENCH_PROFILE.replace(
    'role = "report-writer"\nduty = "report"\nmin = 1\nmax = 1',
    'role = "report-writer"\nduty = "report"\nmin = 1\nmax = 5\nrecommended = 1',
)


def make_big_pool_machine(
    root: Path,
    total_models: int,
    *,
    providers: int = N_PROVIDERS,
    profile: str = BENCH_PROFILE,
) -> Machine:
    """A machine whose pool is `total_models` models over `providers` providers."""
    ids = [*BUNDLED_PROVIDERS, *(f"bench-{i:02d}" for i in range(1, providers - 4))]
    workspace = root / "workspace"
    (workspace / "providers").mkdir(parents=True, exist_ok=True)
    (workspace / "profiles").mkdir(parents=True, exist_ok=True)
    (workspace / "profiles" / f"{BENCH_TASK_TYPE}.md").write_text(profile, "utf-8")
    per, extra = divmod(total_models, len(ids))
    index = 0
    clis = []
    for i, provider_id in enumerate(ids):
        count = per + (1 if i < extra else 0)
        cli = f"bench-cli-{provider_id}"
        if i < len(ids) - UNAVAILABLE_PROVIDERS:
            clis.append(cli)
        (workspace / "providers" / f"{provider_id}.toml").write_text(
            _provider_toml(provider_id, cli, count, index), "utf-8"
        )
        index += count
    return make_machine(root, clis=clis, OKSTRA_WORKSPACE=str(workspace))
