"""Finding ``module:function`` for a Python tool: the flow's folder first, then ``sys.path``.

A module found next to the flow file is loaded under a private name
(``_roost_tools_<digest of the folder>.<module>``) so that two flows in
different folders may each have their own ``tools.py`` without one hiding the
other. While such a module executes, its folder is on ``sys.path`` so that it
can import its own sibling helpers. Loaded modules are cached per folder.

An import runs in a daemon thread and is given ``IMPORT_DEADLINE`` seconds: a
module that waits or loops while it is imported fails with one line instead
of hanging ``roost validate`` or a run (the thread is left behind, as a sync
tool that outlives its timeout is).
"""

from __future__ import annotations

import contextvars
import hashlib
import importlib
import importlib.machinery
import importlib.util
import sys
import threading
import types
from contextlib import contextmanager, redirect_stdout, suppress
from typing import TYPE_CHECKING, Any

from roost.errors import ToolFailure
from roost.tools.base import raised_text

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

IMPORT_DEADLINE = 30.0  # seconds a tool's module may take to import

_CACHE: dict[tuple[str, str], types.ModuleType] = {}
_LOCK = threading.RLock()
# Imports still running past their deadline: asked again, they fail at once
# (a second import of a module that is half imported would wait for the first).
_STUCK: dict[tuple[str, str], threading.Thread] = {}


def load_callable(target: str, folder: Path) -> Callable[..., Any]:
    """The callable named by ``"module:function"``; raises ToolFailure saying what is wrong."""
    module_name, _, attr = target.partition(":")
    if not module_name or not attr:
        raise ToolFailure(f'python tool {target!r} is not of the form "module:function"')
    module = load_module(module_name, folder)
    try:
        value = getattr(module, attr)
    except AttributeError:
        raise ToolFailure(f"module {module_name!r} has no attribute {attr!r}") from None
    if not callable(value):
        raise ToolFailure(
            f"{target!r} is not callable (it is a value of type {type(value).__name__})"
        )
    return value  # type: ignore[no-any-return]


def load_module(name: str, folder: Path) -> types.ModuleType:
    """Imports ``name`` from ``folder`` when it lives there, else from ``sys.path``."""
    folder = folder.resolve()
    key = (str(folder), name)
    with _LOCK:
        if key not in _CACHE:
            _CACHE[key] = _import_in_time(name, folder, key)
        return _CACHE[key]


def _import_in_time(name: str, folder: Path, key: tuple[str, str]) -> types.ModuleType:
    """``_import`` in a daemon thread, given ``IMPORT_DEADLINE`` seconds to finish."""
    late = ToolFailure(
        f"importing {name!r} did not finish within {IMPORT_DEADLINE:g} s "
        "(does the module wait or loop when it is imported?)"
    )
    stuck = _STUCK.get(key)
    if stuck is not None and stuck.is_alive():
        raise late
    outcome: list[types.ModuleType | BaseException] = []
    context = contextvars.copy_context()

    def work() -> None:
        try:
            outcome.append(context.run(_import, name, folder))
        except BaseException as exc:  # a KeyboardInterrupt the module raised, say
            outcome.append(exc)

    thread = threading.Thread(target=work, name="roost-import", daemon=True)
    # What a module prints while imported is not roost's output (validate prints one
    # line per problem): it goes to standard error. Redirected here, not in the thread,
    # so that an import left behind does not keep standard output redirected.
    with redirect_stdout(sys.stderr):
        thread.start()
        thread.join(IMPORT_DEADLINE)
    if thread.is_alive():
        _STUCK[key] = thread
        raise late
    _STUCK.pop(key, None)
    (result,) = outcome
    if isinstance(result, BaseException):
        raise result
    return result


def _import(name: str, folder: Path) -> types.ModuleType:
    top = name.split(".")[0]
    spec = importlib.machinery.PathFinder.find_spec(top, [str(folder)])
    try:
        if spec is None:
            return importlib.import_module(name)
        return _import_local(name, folder, spec)
    except ToolFailure:
        raise
    except ModuleNotFoundError as exc:
        raise ToolFailure(f"cannot import {name!r}: {exc}") from exc
    except Exception as exc:
        raise ToolFailure(f"importing {name!r} failed: {type(exc).__name__}: {exc}") from exc
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        # sys.exit while importing would otherwise end `roost validate` silently.
        said = f"it called {raised_text(exc)}" if isinstance(exc, SystemExit) else raised_text(exc)
        raise ToolFailure(f"importing {name!r} failed: {said}") from None


def _import_local(
    name: str, folder: Path, spec: importlib.machinery.ModuleSpec
) -> types.ModuleType:
    prefix = "_roost_tools_" + hashlib.sha256(str(folder).encode()).hexdigest()[:12]
    _ensure_namespace(prefix, folder)
    top = name.split(".")[0]
    private = f"{prefix}.{top}"
    with _on_path(folder):
        if private not in sys.modules:
            local = importlib.util.spec_from_file_location(
                private, spec.origin, submodule_search_locations=spec.submodule_search_locations
            )
            if local is None or local.loader is None:
                raise ToolFailure(f"cannot import {name!r} from {folder.name}/")
            module = importlib.util.module_from_spec(local)
            sys.modules[private] = module
            try:
                local.loader.exec_module(module)
            except BaseException:
                del sys.modules[private]
                raise
        return importlib.import_module(f"{prefix}.{name}")


def _ensure_namespace(prefix: str, folder: Path) -> None:
    """A bare parent package so the private module names resolve like real ones."""
    if prefix not in sys.modules:
        package = types.ModuleType(prefix)
        package.__path__ = [str(folder)]
        sys.modules[prefix] = package


@contextmanager
def _on_path(folder: Path) -> Iterator[None]:
    """Puts a folder first on ``sys.path`` for the duration of an import."""
    sys.path.insert(0, str(folder))
    try:
        yield
    finally:
        with suppress(ValueError):
            sys.path.remove(str(folder))
