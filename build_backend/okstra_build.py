"""okstra's build backend (PEP 517 and PEP 660), in the tree and standard library only.

`pip install .` builds the wheel in an isolated environment. With a backend from the
index, that environment is created and filled first (resolving and installing the
backend and its dependencies), which was most of the time okstra's own wheel took to
install. This backend needs nothing installed: pip loads it from `build_backend/`
(`backend-path` in pyproject.toml) and `requires` is empty.

It builds exactly what pyproject.toml's `[project]` table and `[tool.okstra.build]`
say, and refuses any `[project]` key it does not know, so a new field in pyproject.toml
cannot be silently dropped from the metadata:

- the wheel: the listed packages (without `__pycache__` or dot files), each data
  directory mapped to its place inside a package, and the `.dist-info` (METADATA,
  WHEEL, entry_points.txt, the license files, RECORD);
- the editable wheel: a `.pth` file that puts the checkout on `sys.path` (the
  packages find their data directories in the checkout when they are not installed);
- the sdist: the listed paths, pyproject.toml, this backend and PKG-INFO.

Archives are reproducible: entries are sorted and dated SOURCE_DATE_EPOCH (else
1980-01-01), so the same tree builds byte-identical files.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import os
import re
import stat
import tarfile
import time
import tomllib
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

TAG = "py3-none-any"
GENERATOR = "okstra_build"
# The `[project]` keys this backend turns into metadata; any other key is an error.
KNOWN_PROJECT_KEYS = frozenset(
    {
        "name",
        "version",
        "description",
        "readme",
        "requires-python",
        "license",
        "license-files",
        "dependencies",
        "optional-dependencies",
        "scripts",
    }
)
ZIP_EPOCH = 315532800  # 1980-01-01, the earliest date a zip entry can carry


class BuildError(Exception):
    """pyproject.toml asks for something this backend cannot build."""


# -- the project, as pyproject.toml describes it -----------------------------------


class Project:
    """`[project]` and `[tool.okstra.build]` of pyproject.toml, checked."""

    def __init__(self, root: Path | None = None) -> None:
        # The hooks run in the source tree (PEP 517), so it is the current directory.
        self.root = (root or Path.cwd()).resolve()
        with (self.root / "pyproject.toml").open("rb") as fh:
            doc = tomllib.load(fh)
        meta: dict[str, Any] = doc.get("project", {})
        unknown = sorted(set(meta) - KNOWN_PROJECT_KEYS)
        if unknown:
            raise BuildError(f"pyproject.toml [project]: unsupported key(s) {unknown}")
        build = doc.get("tool", {}).get("okstra", {}).get("build", {})
        self.meta = meta
        self.name: str = _required(meta, "name")
        self.version: str = _required(meta, "version")
        self.packages: list[str] = list(build.get("packages", []))
        self.data: dict[str, str] = dict(build.get("data", {}))
        self.sdist: list[str] = list(build.get("sdist", []))
        if not self.packages:
            raise BuildError("pyproject.toml [tool.okstra.build]: `packages` is empty")

    @property
    def dist_name(self) -> str:
        """The name as file names spell it (PEP 427: runs of `-_.` become `_`)."""
        return re.sub(r"[-_.]+", "_", self.name).lower()

    @property
    def dist_info(self) -> str:
        return f"{self.dist_name}-{self.version}.dist-info"

    def metadata(self) -> str:
        """The core metadata (METADATA in a wheel, PKG-INFO in an sdist)."""
        meta = self.meta
        lines = [
            "Metadata-Version: 2.4",
            f"Name: {self.name}",
            f"Version: {self.version}",
        ]
        if "description" in meta:
            lines.append(f"Summary: {meta['description']}")
        if "license" in meta:
            if not isinstance(meta["license"], str):
                raise BuildError("pyproject.toml [project] license: expected an SPDX string")
            lines.append(f"License-Expression: {meta['license']}")
        lines += [f"License-File: {name}" for name in self.license_files()]
        if "requires-python" in meta:
            lines.append(f"Requires-Python: {meta['requires-python']}")
        lines += [f"Requires-Dist: {req}" for req in meta.get("dependencies", [])]
        for extra, reqs in meta.get("optional-dependencies", {}).items():
            lines.append(f"Provides-Extra: {extra}")
            lines += [f"Requires-Dist: {_with_extra(req, extra)}" for req in reqs]
        body = ""
        if "readme" in meta:
            readme = meta["readme"]
            if not isinstance(readme, str) or not readme.endswith(".md"):
                raise BuildError("pyproject.toml [project] readme: expected a .md file name")
            lines.append("Description-Content-Type: text/markdown")
            body = (self.root / readme).read_text(encoding="utf-8")
        return "\n".join(lines) + "\n\n" + body

    def license_files(self) -> list[str]:
        names = sorted(
            str(path.relative_to(self.root))
            for pattern in self.meta.get("license-files", [])
            for path in self.root.glob(pattern)
            if path.is_file()
        )
        if self.meta.get("license-files") and not names:
            raise BuildError("pyproject.toml [project] license-files: no file matches")
        return names

    def entry_points(self) -> str:
        scripts = self.meta.get("scripts", {})
        if not scripts:
            return ""
        lines = ["[console_scripts]"] + [f"{name} = {ref}" for name, ref in scripts.items()]
        return "\n".join(lines) + "\n"

    def wheel_files(self) -> Iterator[tuple[str, Path]]:
        """(name in the wheel, file in the tree) for every file the wheel carries."""
        for package in self.packages:
            source = self.root / package
            if not (source / "__init__.py").is_file():
                raise BuildError(
                    f"pyproject.toml [tool.okstra.build] packages: {package!r} is not a"
                    " package (expected a directory with __init__.py)"
                )
            for path in _tree(source):
                yield f"{package}/{path.relative_to(source).as_posix()}", path
        for source_dir, target in self.data.items():
            source = self.root / source_dir
            if not source.is_dir():
                raise BuildError(
                    f"pyproject.toml [tool.okstra.build] data: {source_dir!r} is not a directory"
                )
            for path in _tree(source):
                yield f"{target}/{path.relative_to(source).as_posix()}", path

    def sdist_files(self) -> Iterator[tuple[str, Path]]:
        paths = ["pyproject.toml", "build_backend/okstra_build.py", *self.sdist]
        for name in dict.fromkeys(paths):
            path = self.root / name
            if path.is_file():
                yield name, path
            elif path.is_dir():
                for file in _tree(path):
                    yield file.relative_to(self.root).as_posix(), file
            else:
                raise BuildError(f"pyproject.toml [tool.okstra.build] sdist: no {name!r} here")


def _required(meta: dict[str, Any], key: str) -> str:
    value = meta.get(key)
    if not isinstance(value, str) or not value:
        raise BuildError(f"pyproject.toml [project] {key}: expected a non-empty string")
    return value


def _with_extra(requirement: str, extra: str) -> str:
    marker = f'extra == "{extra}"'
    if ";" in requirement:
        req, _, existing = requirement.partition(";")
        return f"{req.strip()}; ({existing.strip()}) and {marker}"
    return f"{requirement}; {marker}"


def _tree(root: Path) -> Iterator[Path]:
    """Files under root, sorted, without dot files, `__pycache__` or compiled files."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d != "__pycache__")
        for name in sorted(filenames):
            if not name.startswith(".") and not name.endswith((".pyc", ".pyo")):
                yield Path(dirpath, name)


# -- archives ----------------------------------------------------------------------


def _epoch() -> int:
    raw = os.environ.get("SOURCE_DATE_EPOCH", str(ZIP_EPOCH))
    if not raw.isdigit():
        raise BuildError(f"SOURCE_DATE_EPOCH: expected whole seconds since 1970, got {raw!r}")
    return max(int(raw), ZIP_EPOCH)


class _Wheel:
    """A wheel being written: entries in order, RECORD last."""

    def __init__(self, path: Path, dist_info: str, epoch: int) -> None:
        self.zf = zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED)
        self.dist_info = dist_info
        self.records: list[str] = []
        stamp = time.gmtime(epoch)
        self.date = (
            stamp.tm_year,
            stamp.tm_mon,
            stamp.tm_mday,
            stamp.tm_hour,
            stamp.tm_min,
            stamp.tm_sec,
        )

    def _write(self, name: str, data: bytes, mode: int) -> None:
        info = zipfile.ZipInfo(name, date_time=self.date)
        info.compress_type = zipfile.ZIP_DEFLATED
        info.external_attr = (stat.S_IFREG | mode) << 16
        self.zf.writestr(info, data)

    def add(self, name: str, data: bytes, executable: bool = False) -> None:
        self._write(name, data, 0o755 if executable else 0o644)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
        self.records.append(f"{name},sha256={digest.decode()},{len(data)}")

    def finish(self) -> None:
        """Write RECORD (which lists itself without a hash) and close the archive."""
        record = f"{self.dist_info}/RECORD"
        self.records.append(f"{record},,")
        self._write(record, ("\n".join(self.records) + "\n").encode(), 0o644)
        self.zf.close()


def _dist_info_files(project: Project) -> Iterator[tuple[str, bytes]]:
    info = project.dist_info
    yield f"{info}/METADATA", project.metadata().encode()
    wheel = f"Wheel-Version: 1.0\nGenerator: {GENERATOR}\nRoot-Is-Purelib: true\nTag: {TAG}\n"
    yield f"{info}/WHEEL", wheel.encode()
    if entry_points := project.entry_points():
        yield f"{info}/entry_points.txt", entry_points.encode()
    for name in project.license_files():
        yield f"{info}/licenses/{name}", (project.root / name).read_bytes()


def _write_wheel(
    directory: str, project: Project, files: Iterator[tuple[str, bytes | Path]]
) -> str:
    basename = f"{project.dist_name}-{project.version}-{TAG}.whl"
    final = Path(directory) / basename
    partial = final.with_name(f".{basename}.partial")
    epoch = _epoch()  # a bad SOURCE_DATE_EPOCH stops the build before any file is made
    wheel = _Wheel(partial, project.dist_info, epoch)
    try:
        for name, content in files:
            if isinstance(content, Path):
                executable = bool(content.stat().st_mode & stat.S_IXUSR)
                wheel.add(name, content.read_bytes(), executable)
            else:
                wheel.add(name, content)
        for name, data in _dist_info_files(project):
            wheel.add(name, data)
        wheel.finish()
        os.replace(partial, final)
    finally:
        wheel.zf.close()  # closing twice is a no-op; a failed build leaves no open file
        partial.unlink(missing_ok=True)
    return basename


def _write_dist_info(directory: str, project: Project) -> str:
    for name, data in _dist_info_files(project):
        path = Path(directory) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return project.dist_info


def _editable_files(project: Project) -> Iterator[tuple[str, bytes | Path]]:
    yield f"_{project.dist_name}_editable.pth", f"{project.root}\n".encode()


# -- the PEP 517 and PEP 660 hooks --------------------------------------------------


def get_requires_for_build_wheel(config_settings: dict[str, Any] | None = None) -> list[str]:
    return []


def get_requires_for_build_sdist(config_settings: dict[str, Any] | None = None) -> list[str]:
    return []


def get_requires_for_build_editable(config_settings: dict[str, Any] | None = None) -> list[str]:
    return []


def prepare_metadata_for_build_wheel(
    metadata_directory: str, config_settings: dict[str, Any] | None = None
) -> str:
    return _write_dist_info(metadata_directory, Project())


def prepare_metadata_for_build_editable(
    metadata_directory: str, config_settings: dict[str, Any] | None = None
) -> str:
    return _write_dist_info(metadata_directory, Project())


def build_wheel(
    wheel_directory: str,
    config_settings: dict[str, Any] | None = None,
    metadata_directory: str | None = None,
) -> str:
    project = Project()
    return _write_wheel(wheel_directory, project, project.wheel_files())


def build_editable(
    wheel_directory: str,
    config_settings: dict[str, Any] | None = None,
    metadata_directory: str | None = None,
) -> str:
    project = Project()
    return _write_wheel(wheel_directory, project, _editable_files(project))


def build_sdist(sdist_directory: str, config_settings: dict[str, Any] | None = None) -> str:
    project = Project()
    base = f"{project.dist_name}-{project.version}"
    final = Path(sdist_directory) / f"{base}.tar.gz"
    partial = final.with_name(f".{final.name}.partial")
    epoch = _epoch()

    def add(tar: tarfile.TarFile, name: str, data: bytes, mode: int) -> None:
        info = tarfile.TarInfo(f"{base}/{name}")
        info.size, info.mtime, info.mode = len(data), epoch, mode
        tar.addfile(info, io.BytesIO(data))

    try:
        # gzip's own header carries a date too: fixed by writing through GzipFile.
        with (
            partial.open("wb") as raw,
            gzip.GzipFile(fileobj=raw, mode="wb", mtime=epoch, filename="") as gz,
            tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar,
        ):
            for name, path in project.sdist_files():
                mode = 0o755 if path.stat().st_mode & stat.S_IXUSR else 0o644
                add(tar, name, path.read_bytes(), mode)
            add(tar, "PKG-INFO", project.metadata().encode(), 0o644)
        os.replace(partial, final)
    finally:
        partial.unlink(missing_ok=True)
    return final.name
