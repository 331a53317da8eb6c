"""What a template will fail on, found without rendering it.

A template is parsed once (``template_tree``); ``template_findings`` then
names what a render would stumble on: names it reads that no render gives it
(``{{ persona }}``), keys of ``vars`` that the flow does not set
(``{{ vars.persona }}``), and filters or tests that do not exist. A name or key
that the template itself guards (``is defined``, ``|default``) is its own
business. Templates with statements (``{% ... %}``) are also compiled, as the
compiler refuses a few things (a block defined twice) that parsing accepts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import TypeVar, cast

import jinja2
from jinja2 import nodes

from roost.flow.describe import did_you_mean
from roost.templating import TemplateSyntaxProblem, parse_template, template_env

_GUARD_TESTS = frozenset({"defined", "undefined"})
_GUARD_FILTERS = frozenset({"default", "d"})
_DICT_METHODS = frozenset(dir(dict))
Hint = Callable[[str, Iterable[str]], str]
_N = TypeVar("_N", bound=nodes.Node)


@lru_cache(maxsize=4096)
def template_tree(source: str) -> nodes.Template:
    """The parsed template of ``source``; ``TemplateSyntaxProblem`` if it does not parse.

    A template with statements is compiled as well (and the compiled template is
    kept for rendering), since compiling refuses a few more things.
    """
    if "{%" in source:
        parse_template(source)
    try:
        return template_env().parse(source)
    except jinja2.TemplateSyntaxError as error:
        message = " ".join(str(error.message or "syntax error").split())
        raise TemplateSyntaxProblem(message, error.lineno or 1) from None
    except (RecursionError, MemoryError) as error:
        raise TemplateSyntaxProblem(f"template too complex ({type(error).__name__})", 1) from None


@dataclass(frozen=True, slots=True)
class TemplateFinding:
    """One thing a render would fail on, at ``lineno`` of the template (1-based)."""

    message: str
    lineno: int


def template_findings(
    tree: nodes.Template,
    known: tuple[str, ...],
    variables: Mapping[str, object],
    hints: Hint = did_you_mean,
) -> list[TemplateFinding]:
    """What rendering ``tree`` with the names ``known`` and ``vars`` = ``variables`` fails on."""
    tree_nodes = _Nodes(tree)
    guarded = _guarded(tree_nodes)
    assigned = _assigned(tree_nodes)
    found: list[TemplateFinding] = []
    found += _unknown_names(tree_nodes, known, assigned, guarded, hints)
    if "vars" in known and "vars" not in assigned:
        found += _unknown_vars(tree_nodes, variables, guarded, hints)
    found += _unknown_filters_and_tests(tree_nodes, hints)
    return sorted(found, key=lambda f: f.lineno)


class _Nodes:
    """The nodes of a template by their type, gathered in one walk of the tree."""

    def __init__(self, tree: nodes.Template) -> None:
        self._by_type: dict[type[nodes.Node], list[nodes.Node]] = {}
        stack: list[nodes.Node] = [tree]
        while stack:  # depth first, children in order: the nodes come in the template's order
            node = stack.pop()
            self._by_type.setdefault(type(node), []).append(node)
            stack.extend(reversed(list(node.iter_child_nodes())))

    def of(self, kind: type[_N]) -> list[_N]:
        """The nodes of type ``kind``, in the template's order."""
        return cast("list[_N]", self._by_type.get(kind, []))


def _assigned(tree: _Nodes) -> set[str]:
    """Names the template sets itself (set, for, macro and call arguments, with, imports)."""
    names = {n.name for n in tree.of(nodes.Name) if n.ctx in ("store", "param")}
    for macro in tree.of(nodes.Macro):
        names.add(macro.name)
        names.update(arg.name for arg in macro.args)
    for call in tree.of(nodes.CallBlock):
        names.update(arg.name for arg in call.args)
    for imported in tree.of(nodes.Import):
        names.add(imported.target)
    for some in tree.of(nodes.FromImport):
        names.update(n if isinstance(n, str) else n[1] for n in some.names)
    return names


def _guarded(tree: _Nodes) -> set[str]:
    """Names and ``vars`` keys the template tests with ``is defined`` or gives a default."""
    guarded: set[str] = set()
    operands: list[nodes.Node | None] = [
        t.node for t in tree.of(nodes.Test) if t.name in _GUARD_TESTS
    ]
    operands += [f.node for f in tree.of(nodes.Filter) if f.name in _GUARD_FILTERS]
    for operand in operands:
        if operand is None:
            continue
        for node in (operand, *operand.find_all((nodes.Name, nodes.Getattr, nodes.Getitem))):
            name = _vars_key(node)
            if name is not None:
                guarded.add(f"vars.{name}")
            elif isinstance(node, nodes.Name):
                guarded.add(node.name)
    return guarded


def _unknown_names(
    tree: _Nodes, known: tuple[str, ...], assigned: set[str], guarded: set[str], hints: Hint
) -> Iterator[TemplateFinding]:
    given = _given(known) | assigned
    reported: set[str] = set()
    for name in tree.of(nodes.Name):
        word = name.name
        if name.ctx != "load" or word in given or word in guarded or word in reported:
            continue
        reported.add(word)
        hint = hints(word, known)
        yield TemplateFinding(
            f"the template reads {word!r}, which is not defined{hint} "
            f"(a template may read {', '.join(known)})",
            name.lineno,
        )


@lru_cache(maxsize=16)
def _given(known: tuple[str, ...]) -> frozenset[str]:
    """The names every template of a kind has: its context, the globals, Jinja's own."""
    return frozenset({*known, *template_env().globals, "loop", "caller", "self"})


def _unknown_vars(
    tree: _Nodes, variables: Mapping[str, object], guarded: set[str], hints: Hint
) -> Iterator[TemplateFinding]:
    reported: set[str] = set()
    accesses = sorted([*tree.of(nodes.Getattr), *tree.of(nodes.Getitem)], key=_line)
    for node in accesses:
        key = _vars_key(node)
        if key is None or key in variables or key in reported or f"vars.{key}" in guarded:
            continue
        if isinstance(node, nodes.Getattr) and key in _DICT_METHODS:
            continue  # vars.items and the like are the mapping's own methods
        reported.add(key)
        hint = hints(key, variables)
        yield TemplateFinding(f"vars.{key} is not set under vars{hint}", node.lineno)


def _vars_key(node: nodes.Node) -> str | None:
    """``persona`` for ``vars.persona`` or ``vars['persona']``, else None."""
    if isinstance(node, nodes.Getattr):
        target, key = node.node, node.attr
    elif isinstance(node, nodes.Getitem) and isinstance(node.arg, nodes.Const):
        target, key = node.node, node.arg.value
    else:
        return None
    if isinstance(target, nodes.Name) and target.name == "vars" and isinstance(key, str):
        return key
    return None


def _unknown_filters_and_tests(tree: _Nodes, hints: Hint) -> Iterator[TemplateFinding]:
    env = template_env()
    for node in sorted([*tree.of(nodes.Filter), *tree.of(nodes.Test)], key=_line):
        table, kind = (
            (env.filters, "filter") if isinstance(node, nodes.Filter) else (env.tests, "test")
        )
        if node.name not in table:
            hint = hints(node.name, table)
            yield TemplateFinding(f"no {kind} named {node.name!r}{hint}", node.lineno)


def _line(node: nodes.Node) -> int:
    return node.lineno
