"""The argv of a worker (a one-shot CLI run for one role execution): `launch.worker`.

A writing role gets `[launch.access] write`, others `read_only`, at the `{access}`
element, else before the first `--`, else at the end. `launch.env` is the lead's only.
"""

from __future__ import annotations

from collections.abc import Mapping

from okstra_core.catalog.models import ProviderSpec
from okstra_core.errors import DataFileError

from ..catalog.argv import WORKER_PLACEHOLDERS, render_element

ACCESS = "{access}"


def worker_argv(
    provider: ProviderSpec,
    *,
    model: str,
    writes: bool,
    values: Mapping[str, str],
    env: Mapping[str, str] | None = None,
    follow_up: bool = False,
) -> tuple[str, ...]:
    """The worker argv of `provider` for `model` (its `execution` value).

    `follow_up`: `launch.worker_resume` instead (`values` holding its `session_id`).
    DataFileError when the provider declares no such template or a value is missing.
    """
    launch = provider.launch
    if launch.worker is None:
        refusal = provider.worker_refusal() or "no worker"
        raise DataFileError(refusal, path=provider.source, field="launch.worker")
    name = "worker_resume" if follow_up else "worker"
    template = launch.worker_resume if follow_up else launch.worker
    if template is None:
        raise DataFileError(
            f"provider {provider.id!r} declares no [launch] worker_resume: its workers "
            "cannot be sent a follow-up",
            path=provider.source,
            field="launch.worker_resume",
        )
    filled = {"cli": provider.cli, **values, "model": model}
    environment = env or {}
    kind = "write" if writes else "read_only"
    flags = launch.access.write if writes else launch.access.read_only

    def render(element: str, field: str) -> str:
        return render_element(
            element,
            filled,
            environment,
            source=provider.source,
            field=field,
            known=WORKER_PLACEHOLDERS,
        )

    access = tuple(
        render(element, f"launch.access.{kind}[{index}]") for index, element in enumerate(flags)
    )
    if ACCESS in template:
        at = template.index(ACCESS)
    else:
        at = template.index("--") if "--" in template else len(template)
    out: list[str] = []
    for index, element in enumerate(template):
        if index == at:
            out.extend(access)
        if element != ACCESS:
            out.append(render(element, f"launch.{name}[{index}]"))
    if at == len(template):
        out.extend(access)
    return tuple(out)
