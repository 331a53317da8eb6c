"""``python: "module:function"`` tools: a Python callable offered to a model.

The arguments are validated before the call: against the ``parameters``
JSON Schema when the flow declares one, and against a pydantic model built
from the function's signature (which also converts them to the hinted types).
A sync function runs in a worker thread (so parallel calls overlap and the
event loop stays free), an async one is awaited. Whatever the function returns
is given back as text: a string as it is, any other value as JSON. Whatever it
raises, ``sys.exit`` and ``KeyboardInterrupt`` included, is an error result:
only cancellation goes on up (Ctrl-C reaches a run as the cancellation of its
task, never as an exception inside a tool).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import inspect
import threading
from typing import TYPE_CHECKING, Any

import pydantic
import pydantic_core

from roost.errors import ToolFailure
from roost.messages import ToolSpec
from roost.tools.arguments import (
    InvalidSchema,
    UncheckableSchema,
    argument_problem,
    schema_validator,
)
from roost.tools.base import ToolOutcome, raised_text
from roost.tools.loader import load_callable
from roost.tools.schema import Signature, UndescribableParameters, describe_function

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from jsonschema.protocols import Validator

    from roost.flow.models import PythonTool as PythonToolConfig


class PythonFunctionTool:
    """A Python callable as a ``Tool``; build one with ``python_tool``."""

    def __init__(
        self,
        spec: ToolSpec,
        fn: Callable[..., Any],
        signature: Signature | None,
        config: PythonToolConfig,
        validator: Validator | None = None,
    ) -> None:
        self.spec = spec
        self.direct_output = config.direct_output
        self.approval = config.approval == "always"
        self.timeout = config.timeout
        self._fn = fn
        self._signature = signature
        self._validator = validator  # of the declared ``parameters``, if any

    async def call(self, arguments: dict[str, Any]) -> ToolOutcome:
        """Validates the arguments, runs the function and turns what it gave into text."""
        try:
            args, kwargs = self._bind(arguments)
        except ValueError as exc:
            return ToolOutcome(f"invalid arguments for {self.spec.name}: {exc}", is_error=True)
        except UncheckableSchema as exc:
            message = f"cannot check the arguments of {self.spec.name}: {exc}"
            return ToolOutcome(message, is_error=True)
        try:
            result = await self._run(args, kwargs)
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # a tool's sys.exit (SystemExit) must not end the run
            return ToolOutcome(failure_text(self.spec.name, exc), is_error=True)
        return ToolOutcome(result_text(result))

    async def _run(self, args: list[Any], kwargs: dict[str, Any]) -> Any:
        if _is_async(self._fn):
            return await self._fn(*args, **kwargs)
        try:
            result = await _in_daemon_thread(self._fn, args, kwargs)
        except _Raised as wrapped:
            raise wrapped.raised from None  # raised here, it reaches ``call``'s handler
        if inspect.isawaitable(result):
            result = await result
        return result

    def _bind(self, arguments: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
        if self._validator is not None and (
            problem := argument_problem(self._validator, arguments)
        ):
            raise ValueError(problem)
        if self._signature is None:
            return [], dict(arguments)
        try:
            model = self._signature.model.model_validate(arguments)
        except pydantic.ValidationError as exc:
            raise ValueError(validation_message(exc)) from None
        values = {param: getattr(model, field) for field, param in self._signature.fields}
        values.update(model.model_extra or {})
        args = [values.pop(name) for name in self._signature.positional]
        return args, values


class _Raised(Exception):
    """Carries a BaseException a sync tool raised out of its worker thread.

    Handed back through the thread's future, a GeneratorExit would be thrown into
    the awaiting task, which closes every coroutine on the way instead of letting
    them catch it.
    """

    def __init__(self, raised: BaseException) -> None:
        super().__init__(raised)
        self.raised = raised


async def _in_daemon_thread(fn: Callable[..., Any], args: list[Any], kwargs: dict[str, Any]) -> Any:
    """``fn(*args, **kwargs)`` in a thread of its own that never keeps the process alive.

    asyncio's worker threads are joined when the run ends, so a tool still blocked
    after its timeout would keep ``roost`` from ever exiting; a daemon thread is
    simply left behind. The caller's context (the current tool call) goes along.
    """
    loop = asyncio.get_running_loop()
    done: asyncio.Future[Any] = loop.create_future()
    context = contextvars.copy_context()

    def work() -> None:
        try:
            outcome: tuple[Any, BaseException | None] = (
                context.run(_in_thread, fn, args, kwargs),
                None,
            )
        except BaseException as exc:  # _in_thread wraps all but Exception subclasses
            outcome = (None, exc)
        # The run may have ended (its loop closed) while this tool was still going.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(_settle, done, *outcome)

    threading.Thread(target=work, name="roost-tool", daemon=True).start()
    return await done


def _settle(done: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if done.cancelled():
        return  # timed out or cancelled: nobody waits for this result any more
    if error is not None:
        done.set_exception(error)
    else:
        done.set_result(result)


def _in_thread(fn: Callable[..., Any], args: list[Any], kwargs: dict[str, Any]) -> Any:
    """Calls ``fn`` in the worker thread; any BaseException comes back as ``_Raised``."""
    try:
        return fn(*args, **kwargs)
    except Exception:
        raise
    except BaseException as exc:
        raise _Raised(exc) from None


def python_tool(name: str, wire: str, config: PythonToolConfig, folder: Path) -> PythonFunctionTool:
    """Imports the callable and derives its spec; raises ToolFailure naming the tool."""
    try:
        fn = load_callable(config.python, folder)
    except ToolFailure as exc:
        raise ToolFailure(f"tool {name!r}: {exc}") from exc
    signature: Signature | None = None
    try:
        signature = describe_function(fn, name)
    except UndescribableParameters:
        if config.parameters is None:
            raise
    except ToolFailure as exc:
        raise ToolFailure(f"tool {name!r}: {exc}") from exc
    validator: Validator | None = None
    if config.parameters is not None:
        parameters = config.parameters
        try:
            validator = schema_validator(parameters)
        except InvalidSchema as exc:
            raise InvalidSchema(f"tool {name!r}: {exc}") from None
    else:
        assert signature is not None  # describe_function raised otherwise
        parameters = signature.schema
    description = config.description or (signature.description if signature else "")
    spec = ToolSpec(name=wire, description=description, parameters=parameters)
    return PythonFunctionTool(spec, fn, signature, config, validator)


def result_text(value: Any) -> str:
    """A tool's value as the model sees it: a string as it is, anything else as JSON."""
    if isinstance(value, str):
        return value
    return pydantic_core.to_json(value, fallback=str).decode()


def failure_text(tool: str, exc: BaseException) -> str:
    """What the model is told of a tool that raised: ``Type: message``, or how it exited."""
    if isinstance(exc, SystemExit):
        return f"{tool} exited ({raised_text(exc)})"
    return raised_text(exc)


def validation_message(exc: pydantic.ValidationError) -> str:
    """One line per bad argument: ``name: what is wrong (got value)``."""
    parts = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"]) or "arguments"
        got = "" if error["type"] == "missing" else f" (got {_short(error.get('input'))})"
        parts.append(f"{where}: {error['msg']}{got}")
    return "; ".join(parts)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _is_async(fn: Callable[..., Any]) -> bool:
    while isinstance(fn, functools.partial):
        fn = fn.func
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 - an object with an async __call__
    )
