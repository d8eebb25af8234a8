"""Which directory is the project, found safely (no git subprocess, no network).

The nearest `.okstra` that passes git's `safe.directory`-like owner checks (the first
met decides), else the nearest safe `.git` holder, else the current directory; never
above home or across file systems. `OKSTRA_SAFE_DIRECTORIES` skips the checks.
"""

from __future__ import annotations

import grp
import os
import pwd
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path

from .errors import OkstraError, UsageError
from .store import file_kind

OKSTRA_DIR = ".okstra"
GIT_DIR = ".git"
SAFE_ENV = "OKSTRA_SAFE_DIRECTORIES"


class UnsafeProjectError(OkstraError):
    """The `.okstra` the search met (or the directory holding it) is not safe to use."""


def find_project_root(start: Path, env: Mapping[str, str] | None = None) -> Path | None:
    """The project at or above `start`, or None (`UnsafeProjectError`, `UsageError`)."""
    env = os.environ if env is None else env
    safe = safe_directories(env)
    for holder in _upwards(start, env):
        try:
            found = os.lstat(holder / OKSTRA_DIR)
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise UnsafeProjectError(
                f"cannot inspect {OKSTRA_DIR}: {exc.strerror or exc}", path=holder / OKSTRA_DIR
            ) from None
        check_project(holder, safe, okstra=found)
        return holder
    return None


def safe_directories(env: Mapping[str, str] | None = None) -> frozenset[Path]:
    """The directories `OKSTRA_SAFE_DIRECTORIES` allows (absolute entries only, resolved)."""
    env = os.environ if env is None else env
    value = env.get(SAFE_ENV) or ""
    return frozenset(
        Path(os.path.realpath(entry))
        for entry in value.split(os.pathsep)
        if entry and os.path.isabs(entry)
    )


def check_project(
    holder: Path, safe: frozenset[Path], *, okstra: os.stat_result | None = None
) -> None:
    """Refuse a project whose `.okstra` (or `holder` itself) is not safe to use."""
    path = holder / OKSTRA_DIR
    try:
        found = okstra if okstra is not None else os.lstat(path)
        held = os.stat(holder)
    except OSError as exc:
        raise UnsafeProjectError(
            f"cannot inspect {OKSTRA_DIR}: {exc.strerror or exc}", path=path
        ) from None
    if not stat.S_ISDIR(found.st_mode):
        raise UnsafeProjectError(
            f"refusing this okstra project: {path} is {file_kind(found.st_mode)}, not a "
            "directory; okstra stops here and does not look further up",
            path=holder,
        )
    if Path(os.path.realpath(holder)) in safe:
        return
    for where, st in ((path, found), (holder, held)):
        why = _unsafe_owner(st)
        if why is not None:
            raise UnsafeProjectError(
                f"refusing the okstra project here: {where} {why}. A directory another user "
                "can write can plant runs and files that okstra would act on; okstra stops "
                f"here and does not look further up. If it is yours and safe, allow it: "
                f"{SAFE_ENV}={holder} (several directories separated by '{os.pathsep}')",
                path=holder,
            )


def _unsafe_owner(st: os.stat_result) -> str | None:
    me = os.geteuid()
    if st.st_uid != me:
        return f"belongs to {_user(st.st_uid)}, not to you ({_user(me)})"
    if st.st_mode & stat.S_IWOTH:
        return "is writable by every user"
    if st.st_mode & stat.S_IWGRP and not _private_group(st.st_gid, me):
        return f"is writable by the group {_group(st.st_gid)}"
    return None


def _private_group(gid: int, uid: int) -> bool:
    """The user's own group (user private groups: same name, no other member)."""
    try:
        user = pwd.getpwuid(uid)
        group = grp.getgrgid(gid)
    except KeyError:
        return False
    return (
        gid == user.pw_gid and group.gr_name == user.pw_name and set(group.gr_mem) <= {user.pw_name}
    )


def _user(uid: int) -> str:
    try:
        return f"{pwd.getpwuid(uid).pw_name}, uid {uid}"
    except KeyError:
        return f"uid {uid}"


def _group(gid: int) -> str:
    try:
        return f"{grp.getgrgid(gid).gr_name} (gid {gid})"
    except KeyError:
        return f"gid {gid}"


def _home(env: Mapping[str, str]) -> Path | None:
    home = env.get("HOME")
    if not home:
        try:
            home = pwd.getpwuid(os.geteuid()).pw_dir
        except KeyError:
            return None
    return Path(os.path.realpath(home)) if os.path.isabs(home) else None


def _upwards(start: Path, env: Mapping[str, str]) -> Iterator[Path]:
    """`start` (resolved) and its parents, below the home directory, on one file system."""
    here = Path(os.path.realpath(start))
    try:
        device = os.stat(here).st_dev
    except OSError as exc:
        raise UsageError(
            f"cannot look for an okstra project from {start}: {exc.strerror or exc}"
        ) from None
    home = _home(env)
    for holder in (here, *here.parents):
        if holder != here:
            if holder == home:
                return  # never the home itself when started below it
            try:
                if os.stat(holder).st_dev != device:
                    return  # another file system
            except OSError:
                return
        yield holder
        if holder == home:
            return  # started in the home: never above it


def git_top(start: Path, env: Mapping[str, str] | None = None) -> Path | None:
    """The nearest `.git` holder at or above `start`, if it is safe (else None, walk stops)."""
    env = os.environ if env is None else env
    safe = safe_directories(env)
    for holder in _upwards(start, env):
        if not os.path.lexists(holder / GIT_DIR):
            continue
        if holder in safe:
            return holder
        try:
            held = os.stat(holder)
        except OSError:
            return None
        return holder if _unsafe_owner(held) is None else None
    return None


def default_project_root(start: Path, env: Mapping[str, str] | None = None) -> Path:
    """The project okstra uses when no `--project-root` is given (`UsageError`)."""
    env = os.environ if env is None else env
    try:
        found = find_project_root(start, env)
    except UnsafeProjectError:
        found = None  # never adopted; the run commands say why
    if found is not None:
        return found
    top = git_top(start, env)
    return top if top is not None else Path(os.path.realpath(start))
