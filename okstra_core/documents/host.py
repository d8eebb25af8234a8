"""A host session context as hosts give it, settled into the record's spelling: older
spellings of the model (`currentModel: "p/m"`, `currentModelRef`) and unknown keys.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from ..records import aliases_of
from ..request import CurrentModel, HostSessionContext

# The earlier name of `currentModel.modelRef`, as a key of the context itself.
_EARLIER_MODEL_REF = "currentModelRef"


def older_spellings(data: Any) -> Any:
    """`data` with the model spelled as the record spells it: `currentModel` as a text,
    or `currentModelRef`, becomes `currentModel.modelRef`."""
    if isinstance(data, dict):
        data = dict(data)
        if isinstance(data.get("currentModel"), str):
            data["currentModel"] = {"modelRef": data["currentModel"]}
        legacy = data.pop(_EARLIER_MODEL_REF, None)
        if isinstance(legacy, str) and "currentModel" not in data:
            data["currentModel"] = {"modelRef": legacy}
    return data


def _known(record: type[Any], data: Mapping[str, Any], *also: str) -> dict[str, Any]:
    """The keys of `data` that name a field of `record` (by either name), and `also`."""
    names = {f.name for f in dataclasses.fields(record)}
    known = {*names, *aliases_of(record).values(), *also}
    return {key: value for key, value in data.items() if key in known}


def given_context(value: Mapping[str, Any]) -> dict[str, Any]:
    """A context given as a JSON object, in the record's spelling (`older_spellings`);
    keys that name no field are dropped, inside `currentModel` too."""
    data: dict[str, Any] = older_spellings(_known(HostSessionContext, value, _EARLIER_MODEL_REF))
    model = data.get("currentModel")
    if isinstance(model, dict):
        data["currentModel"] = _known(CurrentModel, model)
    return data
