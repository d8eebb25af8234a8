"""`resume.json`: how to get back into each launched participant's CLI session."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, ClassVar, Literal

from ..records import config, dataclass, field, problem
from .base import Document, Shape

if TYPE_CHECKING:
    from pydantic import Field, StrictFloat, StrictInt, StrictStr


@dataclass(frozen=True, kw_only=True)
class ResumeDiscover(Document):
    """Where a CLI that mints its own ids records them (while the id is pending)."""

    glob: StrictStr
    id_pattern: StrictStr
    cwd_field: StrictStr
    timeout_seconds: StrictFloat | StrictInt


@dataclass(frozen=True, kw_only=True)
class ResumeParticipant(Document):
    """How to resume one participant's session: its CLI, model, directory and argv."""

    # The template and `discover` only while the id is pending discovery (absent
    # from the file otherwise).
    __pydantic_config__ = config(
        camel_case=True, by_name=True, omit_none=("resume_argv_template", "discover")
    )
    NESTED: ClassVar[Mapping[str, tuple[Shape, type[Document]]]] = {
        "discover": ("one", ResumeDiscover)
    }

    participant: Annotated[StrictStr, Field(min_length=1)]
    role: Annotated[StrictStr, Field(min_length=1)]
    provider: Annotated[StrictStr, Field(min_length=1)]
    cli: Annotated[StrictStr, Field(min_length=1)]
    model: Annotated[StrictStr, Field(min_length=1)]
    cwd: Annotated[StrictStr, Field(min_length=1)]
    session_id: Annotated[StrictStr, Field(min_length=1)] | None = None
    session_id_kind: Literal["uuid4", "token", "discover"]
    status: Literal["ready", "pending discovery"]
    resume_argv: Annotated[tuple[StrictStr, ...], Field(min_length=1)] | None = None
    resume_command: StrictStr | None = None
    env: dict[StrictStr, StrictStr] = field(default_factory=dict)
    resume_argv_template: Annotated[tuple[StrictStr, ...], Field(min_length=1)] | None = None
    discover: ResumeDiscover | None = None

    def __post_init__(self) -> None:
        if self.session_id is not None and self.resume_argv is None:
            raise problem(
                ResumeParticipant,
                (),
                "resumeArgv: expected the resume argv of a known session id",
            )


@dataclass(frozen=True, kw_only=True)
class ResumeDocument(Document):
    """`resume.json` (schema 1)."""

    __pydantic_config__ = config(camel_case=True, by_name=True, omit_none=("okstra",))
    WHAT: ClassVar[str] = "resume sheet"
    NESTED: ClassVar[Mapping[str, tuple[Shape, type[Document]]]] = {
        "participants": ("each", ResumeParticipant)
    }

    schema_version: Literal[1] = 1
    participants: tuple[ResumeParticipant, ...]
    okstra: Annotated[StrictStr, Field(min_length=1)] | None = None
