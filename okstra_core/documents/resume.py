"""`resume.json`: how to get back into each launched participant's CLI session."""

from __future__ import annotations

from typing import Any, ClassVar, Literal, Self

from pydantic import Field, StrictFloat, StrictInt, StrictStr, model_validator

from .base import Document


# Default factories are Python functions, not the `dict` builtin: pydantic reads
# a factory's signature when it builds a model, and a builtin's signature is parsed
# from text (compiling the tokenizer's regular expressions, ~2 ms of a process).
def _new_dict() -> dict[Any, Any]:
    return {}


__all__ = ["ResumeDiscover", "ResumeDocument", "ResumeParticipant"]


class ResumeDiscover(Document):
    """Where a CLI that mints its own ids records them (while the id is pending)."""

    glob: StrictStr
    id_pattern: StrictStr
    cwd_field: StrictStr
    timeout_seconds: StrictFloat | StrictInt


class ResumeParticipant(Document):
    participant: StrictStr = Field(min_length=1)
    role: StrictStr = Field(min_length=1)
    provider: StrictStr = Field(min_length=1)
    cli: StrictStr = Field(min_length=1)
    model: StrictStr = Field(min_length=1)
    cwd: StrictStr = Field(min_length=1)
    session_id: StrictStr | None = Field(default=None, min_length=1)
    session_id_kind: Literal["uuid4", "token", "discover"]
    status: Literal["ready", "pending discovery"]
    resume_argv: tuple[StrictStr, ...] | None = Field(default=None, min_length=1)
    resume_command: StrictStr | None = None
    env: dict[StrictStr, StrictStr] = Field(default_factory=_new_dict)
    # Only while the id is pending discovery (absent from the file otherwise).
    resume_argv_template: tuple[StrictStr, ...] | None = Field(
        default=None, min_length=1, exclude_if=lambda value: value is None
    )
    discover: ResumeDiscover | None = Field(default=None, exclude_if=lambda value: value is None)

    @model_validator(mode="after")
    def _argv_of_a_known_id(self) -> Self:
        if self.session_id is not None and self.resume_argv is None:
            raise ValueError("resumeArgv: expected the resume argv of a known session id")
        return self


class ResumeDocument(Document):
    """`resume.json` (schema 1)."""

    WHAT: ClassVar[str] = "resume sheet"
    schema_version: Literal[1] = 1
    participants: tuple[ResumeParticipant, ...]
    okstra: StrictStr | None = Field(
        default=None, min_length=1, exclude_if=lambda value: value is None
    )
