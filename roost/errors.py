"""roost's exception hierarchy.

Every failure a user can cause or meet is one of these, so the CLI catches
``RoostError`` once, prints ``str(error)`` as one line and exits with
``error.exit_code``. Foreign exceptions (YAML, SDKs, SQLAlchemy) are translated
at the edge that meets them, with ``raise ... from exc``.

    RoostError                     exit 1: anything not listed below
    ├── FlowError                  exit 2: the flow file is wrong (carries Problems)
    ├── UsageError                 exit 2: bad command-line use or API misuse
    │   ├── RunStateError          exit 2: a run that cannot be continued or retried
    │   └── ImageError             exit 2: an image that is missing, not an image or too large
    ├── RunNotFoundError           exit 2: no such run id or event file
    ├── ProviderError              a model call failed (after retries and fallbacks)
    ├── ToolFailure                a tool could not be set up (not a tool's own error result)
    ├── TemplateRenderError        a template failed to render (sandbox refusal, undefined)
    ├── EventLogError              an event log that cannot be read or appended to
    ├── StoreError                 the database failed, is locked or is not roost's
    │   └── ConcurrentRunError     another process advanced the same run
    └── TelemetryError             tracing asked for cannot be set up, or spans not sent
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

Severity = Literal["error", "warning"]


class RoostError(Exception):
    """Base of every error roost raises on purpose."""

    exit_code: int = 1


@dataclass(frozen=True, slots=True)
class Problem:
    """One located finding about a flow file: ``FILE:LINE:COL: error: MESSAGE``."""

    file: str
    line: int
    col: int
    message: str
    severity: Severity = "error"

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}: {self.severity}: {self.message}"


class FlowError(RoostError):
    """A flow that does not load or validate; ``problems`` holds every finding."""

    exit_code = 2

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        errors = [p for p in problems if p.severity == "error"] or problems
        super().__init__("\n".join(str(p) for p in errors))

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]


class UsageError(RoostError):
    """The command or API was used in a way that cannot work."""

    exit_code = 2


class ImageError(UsageError):
    """An image for a message that cannot be read, is not an image roost sends, or is too large."""

    exit_code = 2


class RunStateError(UsageError):
    """The run is not in a state that allows the requested step."""


class RunNotFoundError(RoostError):
    """No stored run or event file answers to the given name."""

    exit_code = 2


# The outcome of an attempt the model refused because the request did not fit its window.
CONTEXT_TOO_LONG = "context too long"


class ProviderError(RoostError):
    """A model call failed; ``provider`` names the flow's provider entry.

    ``attempts`` lists every request tried before giving up (provider, model,
    outcome), as in ``ModelResponse.attempts``, so a failed ``llm_call`` can
    record them too. ``context_overflow`` says the model refused the request as
    longer than its context window (compressing the history may help).
    """

    def __init__(
        self,
        provider: str,
        message: str,
        *,
        retryable: bool = False,
        attempts: tuple[dict[str, Any], ...] = (),
        context_overflow: bool = False,
    ) -> None:
        self.provider = provider
        self.retryable = retryable
        self.attempts = attempts
        self.context_overflow = context_overflow
        super().__init__(f"provider {provider!r}: {message}")


class ToolFailure(RoostError):
    """A tool could not be prepared (import, MCP start-up); not a tool's own error result."""


class TemplateRenderError(RoostError):
    """A Jinja2 template failed to render at run time."""


class EventLogError(RoostError):
    """An event log that is not a run roost can load: unreadable, torn, of another run.

    Exit 2, as the contract has it for a run that cannot be continued or retried.
    """

    exit_code = 2


class EventLogWriteError(EventLogError):
    """The log could not be written while the run went on (a full disk, say)."""

    exit_code = 1


class StoreError(RoostError):
    """The run store failed, is locked, unreachable or not a roost database."""


class ConcurrentRunError(StoreError):
    """Another process appended to the same run first."""

    exit_code = 2


class TelemetryError(RoostError):
    """Tracing the ``OTEL_*`` variables ask for cannot be set up, or its spans were not sent."""
