"""Validators of okstra's own models kept between processes (the user cache directory).

Building a pydantic model's validator means generating its core schema in Python,
which costs more than everything else a `wizard step` does with the model. The core
schema depends only on the code, so a process that built the validators of some
models stores their core schemas (`<cache>/models/<digest>.pickle`, through
`okstra_core.catalog.cache`: atomic, checksummed, private) and the next process gives
each model a validator and a serializer compiled from them. They are the very schemas
pydantic generated from the models: there is one set of rules and messages, the
models'.

The rules that make this safe:

* The key covers the models' names, the pydantic, pydantic-core, Python and okstra
  versions, and the size and modification time of every source file of okstra_core
  (any edit of the code, an upgrade, gives another key).
* Only what a validator needs is stored: each schema without its `metadata` (JSON
  Schema hints, which may hold functions that cannot be stored); the model keeps
  generating its full schema, on first use, for `model_json_schema`.
* A model that is already built, a model whose schema holds a function that cannot
  be stored (a local one), or a process with pydantic plugins (whose validators wrap
  the compiled one) is left to pydantic; any problem reading or writing an entry is a
  miss, never an error.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pydantic
import pydantic_core
from pydantic import BaseModel
from pydantic_core import SchemaSerializer, SchemaValidator

from .. import __version__
from . import cache as entries

FORMAT = "okstra-model-schemas 1"
_ROOT = Path(__file__).resolve().parent.parent  # the okstra_core package
_STAMP: bytes | None = None


def _code_stamp() -> bytes:
    """Versions, and size and mtime of every source file of okstra_core."""
    parts = [FORMAT, __version__, pydantic.VERSION, pydantic_core.__version__, sys.version]
    for directory, dirs, files in os.walk(_ROOT):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(directory, name)
                try:
                    st = os.stat(path)
                except OSError:
                    parts.append(f"{path}:?")
                    continue
                parts.append(f"{path}:{st.st_size}:{st.st_mtime_ns}")
    return "\n".join(parts).encode("utf-8", "surrogateescape")


def _key(models: Sequence[type[BaseModel]]) -> str:
    global _STAMP
    if _STAMP is None:
        _STAMP = _code_stamp()
    h = hashlib.sha256(_STAMP)
    for model in models:
        h.update(f"\0{model.__module__}.{model.__qualname__}".encode())
    return h.hexdigest()


def _without_metadata(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_metadata(v) for k, v in value.items() if k != "metadata"}
    if isinstance(value, list):
        return [_without_metadata(v) for v in value]
    return value


def _parts(model: type[BaseModel]) -> tuple[Any, Any, Any] | None:
    """(schema, validator config, serializer config) of a built model, or None."""
    validator = model.__pydantic_validator__
    serializer = model.__pydantic_serializer__
    if type(validator) is not SchemaValidator or type(serializer) is not SchemaSerializer:
        return None  # a plugin's wrapper, or not built
    # Both are pickled as (class, (schema, config, …)).
    reduced: Any = validator.__reduce__()
    schema, config = reduced[1][0], reduced[1][1]
    reduced = serializer.__reduce__()
    ser_config = reduced[1][1]
    return _without_metadata(schema), config, ser_config


def prepare_models(models: Sequence[type[BaseModel]], cache: Path) -> None:
    """Give `models` their validators from the cache; on a miss, build and store them.

    `cache` is the user cache directory. Models already built are left as they are.
    """
    todo = [m for m in models if not m.__pydantic_complete__]
    if not todo:
        return
    directory = cache / "models"
    key = _key(models)
    stored = entries.load(directory, key, dict)
    if stored is not None and _install(todo, stored):
        return
    try:
        payload: dict[str, Any] = {}
        for model in models:
            model.model_rebuild()
            parts = _parts(model)
            if parts is None:
                return
            try:
                pickle.dumps(parts, protocol=pickle.HIGHEST_PROTOCOL)
            except Exception:  # a schema holding a local function: pydantic builds it
                continue
            payload[f"{model.__module__}.{model.__qualname__}"] = parts
    except Exception:  # a model that does not build says so where it is used
        return
    entries.store(directory, key, payload)


def _install(models: Sequence[type[BaseModel]], stored: dict[str, Any]) -> bool:
    compiled = []
    try:
        for model in models:
            parts = stored.get(f"{model.__module__}.{model.__qualname__}")
            if parts is None:
                continue  # not storable (see `prepare_models`): pydantic builds it on use
            schema, config, ser_config = parts
            # Compiled whole: never reusing (or touching) another model's validator.
            validator = SchemaValidator(schema, config, _use_prebuilt=False)
            serializer = SchemaSerializer(schema, ser_config, _use_prebuilt=False)
            compiled.append((model, validator, serializer))
    except Exception:  # a damaged or foreign entry is a miss
        return False
    for model, validator, serializer in compiled:
        if not model.__pydantic_complete__:
            # The full schema (and `__pydantic_complete__`) stay pydantic's: generated
            # on first need, e.g. for `model_json_schema`.
            model.__pydantic_validator__ = validator
            model.__pydantic_serializer__ = serializer
    return True
