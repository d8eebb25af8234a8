"""The per-step context: catalog, text, pool, default scopes, project tasks.

One `StepContext` lives for one prompt computation or one submit: availability (a fresh
`ModelPool`) and the task list are read once per step, each on first use.
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from ..environment import Environment
from ..paths import user_dirs
from .text import WizardText, choose_language, load_text

if TYPE_CHECKING:
    from ..catalog import Catalog
    from ..catalog.models import HostSpec, Profile
    from ..defaults import DefaultScopes
    from ..pool import ModelPool
    from ..tasks import TaskEntry


class StepContext:
    """Everything a step needs besides the state, loaded on first use."""

    def __init__(self, environment: Environment, project_root: Path | None = None) -> None:
        self.environment = environment
        self.project_root = project_root

    @cached_property
    def catalog(self) -> Catalog:
        from ..catalog import load_catalog

        return load_catalog(self.environment)

    @cached_property
    def text(self) -> WizardText:
        env = self.environment.env
        return load_text(
            env, choose_language(env, self.catalog.config.language), cache=user_dirs(env).cache
        )

    @cached_property
    def pool(self) -> ModelPool:
        from ..pool import ModelPool

        return ModelPool.from_catalog(self.catalog, self.environment)

    @cached_property
    def scopes(self) -> DefaultScopes:
        from ..defaults import load_scopes

        return load_scopes(self.project_root, self.catalog, self.environment.env)

    @cached_property
    def tasks(self) -> list[TaskEntry]:
        from ..tasks import list_tasks  # on first use: a role step lists no tasks

        return list_tasks(self.project_root) if self.project_root is not None else []

    def profile(self, task_type: str) -> Profile:
        return self.catalog.profile(task_type)

    def host(self, host_id: str) -> HostSpec:
        return self.catalog.host(host_id)
