"""The argv of a worker: a provider's one-shot `launch.worker` template, rendered.

A worker is a non-interactive run of a provider's CLI for one role execution. Its
prompt reaches the CLI on standard input (the caller feeds the prompt file to it);
templates that want a path name it `{prompt_file}`, and a CLI that can write its
final message to a file is given `{result_file}`. The role decides the access: a role
that writes (profile `writes = true`) gets `[launch.access] write`, every other role
`read_only`. Those arguments go where the template has the element `{access}`; a
template without one gets them before its first `--` element, or at its end. Nothing
here runs anything, and `launch.env` (the lead's environment, e.g. a system-prompt
file) is not applied to a worker.
"""

from __future__ import annotations

from collections.abc import Mapping

from okstra_core.catalog.models import ProviderSpec
from okstra_core.errors import DataFileError

from .argv import WORKER_PLACEHOLDERS, render_element

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
    """The worker argv of `provider` for `model` (the model's `execution` value).

    Args:
        provider: a provider whose `launch.worker` is declared.
        model: the bound model, given to `{model}`.
        writes: whether the role changes the project (`write` access, else `read_only`).
        values: the other placeholders (`session_id`, `prompt_file`, `result_file`,
            `project_root`, …); `cli` defaults to the provider's `cli`.
        env: the environment for `{env.NAME}` (none by default).
        follow_up: render `launch.worker_resume` (a follow-up turn, `values` holding
            the `session_id` it continues) instead of `launch.worker`.

    Raises:
        DataFileError: the provider declares no worker, or a placeholder the template
            uses has no value (naming the provider file and the field).
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
    access = tuple(
        render_element(
            element,
            filled,
            environment,
            source=provider.source,
            field=f"launch.access.{kind}[{index}]",
            known=WORKER_PLACEHOLDERS,
        )
        for index, element in enumerate(flags)
    )
    if ACCESS in template:
        at = template.index(ACCESS)
    else:
        at = template.index("--") if "--" in template else len(template)
    out: list[str] = []
    for index, element in enumerate(template):
        if index == at:
            out.extend(access)
        if element == ACCESS:
            continue
        out.append(
            render_element(
                element,
                filled,
                environment,
                source=provider.source,
                field=f"launch.{name}[{index}]",
                known=WORKER_PLACEHOLDERS,
            )
        )
    if at == len(template):
        out.extend(access)
    return tuple(out)
