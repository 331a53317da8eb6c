"""``${NAME}`` and ``${NAME:-default}`` in string values, filled from the environment.

A value that is only one placeholder takes the YAML type of its expansion
(``max_rounds: ${ROUNDS}`` with ``ROUNDS=5`` is the integer 5). ``$${`` writes a
literal ``${``. Values read from the environment are returned as secrets so
that no message, event or log ever shows them, except those of the variables
a flow lists as ``public`` (not secret). Where each variable was read is kept,
so that the loader can keep secrets away from templates.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import ScalarNode

from roost.errors import Problem

if TYPE_CHECKING:
    from collections.abc import Mapping

    from roost.flow.positions import Path, Positions

_PLACEHOLDER = re.compile(r"\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_TYPED = {"int", "float", "bool", "null"}
_RESOLVER = yaml.resolver.Resolver()


@dataclass(slots=True)
class Substitution:
    """The outcome of substituting one document: problems and the secrets read."""

    file: str
    positions: Positions
    environ: Mapping[str, str]
    public: frozenset[str] = frozenset()  # variables whose values are not secret
    problems: list[Problem] = field(default_factory=list)
    secrets: set[str] = field(default_factory=set)
    paths: set[Path] = field(default_factory=set)
    unset: set[Path] = field(default_factory=set)  # values naming an unset variable
    read: dict[Path, list[str]] = field(default_factory=dict)  # secret variables read, by value
    # A recorded flow (a run's, from anywhere): the environment is not read at all; a
    # placeholder gives its default or stays as written, and its value is kept here.
    keep: bool = False
    kept: set[Path] = field(default_factory=set)

    def walk(self, value: Any, path: Path) -> Any:
        """``value`` with every placeholder in its strings replaced."""
        if isinstance(value, dict):
            return {key: self.walk(item, (*path, key)) for key, item in value.items()}
        if isinstance(value, list):
            return [self.walk(item, (*path, index)) for index, item in enumerate(value)]
        if isinstance(value, str) and "${" in value:
            return self._string(value, path)
        return value

    def _string(self, text: str, path: Path) -> Any:
        whole = _PLACEHOLDER.fullmatch(text)
        expanded = _PLACEHOLDER.sub(lambda match: self._expand(match, path), text)
        if expanded != text:
            self.paths.add(path)
        if whole is not None and whole.group(1) is not None:
            return typed(expanded)
        return expanded

    def _expand(self, match: re.Match[str], path: Path) -> str:
        name, default = match.group(1), match.group(2)
        if name is None:
            return "${"  # "$${" escapes a literal "${"
        if self.keep:
            if default is not None:
                return default
            self.kept.add(path)
            return match.group(0)
        value = self.environ.get(name, "")
        if value:
            if name not in self.public:
                self.secrets.add(value)
                self.read.setdefault(path, []).append(name)
            return value
        if default is not None:
            return default
        self.unset.add(path)
        line, col = self.positions.value(path)
        message = (
            f"environment variable {name!r} is not set "
            f"(write ${{{name}:-default}} to give a default)"
        )
        self.problems.append(Problem(self.file, line, col, message))
        return ""


def typed(text: str) -> Any:
    """``text`` read as a YAML scalar: ``5`` is an int, ``true`` a bool, ``""`` null, else text."""
    tag: str = _RESOLVER.resolve(ScalarNode, text, (True, False))  # type: ignore[no-untyped-call]
    kind = tag.rsplit(":", 1)[-1]
    if kind not in _TYPED:
        return text
    node = ScalarNode(tag, text)
    try:
        return getattr(SafeConstructor(), f"construct_yaml_{kind}")(node)
    except (ValueError, KeyError, OverflowError):
        return text


def substitute(
    data: dict[str, Any],
    positions: Positions,
    file: str,
    environ: Mapping[str, str],
    public: frozenset[str] = frozenset(),
    *,
    keep: bool = False,
) -> tuple[dict[str, Any], Substitution]:
    """``data`` with every string value substituted, and what the substitution found.

    The values of the variables named in ``public`` are not secrets. ``keep``
    reads no variable: each placeholder gives its default or stays as written.
    """
    result = Substitution(file, positions, environ, public, keep=keep)
    return result.walk(data, ()), result
