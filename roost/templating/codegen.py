"""Jinja2's code generator, made to count loops and comparisons and to measure what it joins."""

from __future__ import annotations

from typing import Any

from jinja2 import nodes
from jinja2.compiler import CodeGenerator, Frame
from jinja2.visitor import NodeTransformer


class _DictsBuiltBounded(NodeTransformer):
    """Turns every dict display ``{k: v}`` into ``environment.bounded_dict([(k, v)])``.

    Jinja2 would build a constant dict while compiling, and Python builds any dict
    in one call; ``bounded_dict`` pays for its hash table first. A call is never
    folded into a constant, so the table is built when the template runs.
    """

    def visit_Dict(self, node: nodes.Dict) -> nodes.Node:
        self.generic_visit(node)
        pairs = nodes.List([nodes.Tuple([p.key, p.value], "load") for p in node.items])
        builder = nodes.EnvironmentAttribute("bounded_dict")
        return nodes.Call(builder, [pairs], [], None, None, lineno=node.lineno)


class BoundedCodeGenerator(CodeGenerator):
    """Jinja2's code generator with loops counted, comparisons charged and ``~`` measured.

    Each ``for`` loop's iterable is compiled as ``environment.counted(...)``, each
    operand of a comparison as ``environment.charged(...)``, each sliced value as
    ``environment.sliced(...)`` and each dict display as ``environment.bounded_dict(...)``
    (see ``BoundedSandbox``).
    """

    def visit_Template(self, node: nodes.Template, frame: Frame | None = None) -> None:
        _DictsBuiltBounded().visit(node)
        self._wrapped: dict[int, tuple[nodes.Node, str]] = {}
        for loop in node.find_all(nodes.For):
            self._wrapped[id(loop.iter)] = (loop.iter, "counted")
        for compare in node.find_all(nodes.Compare):
            for operand in (compare.expr, *(op.expr for op in compare.ops)):
                self._wrapped[id(operand)] = (operand, "charged")
        for item in node.find_all(nodes.Getitem):
            if isinstance(item.arg, nodes.Slice):  # Jinja2 slices in Python, not in the sandbox
                self._wrapped[id(item.node)] = (item.node, "sliced")
        super().visit_Template(node, frame)

    def visit(self, node: nodes.Node, *args: Any, **kwargs: Any) -> Any:
        wrapped = getattr(self, "_wrapped", {}).get(id(node))
        if wrapped is None or wrapped[0] is not node:
            return super().visit(node, *args, **kwargs)
        self.write(f"environment.{wrapped[1]}(")
        super().visit(node, *args, **kwargs)
        self.write(")")
        return None

    def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:
        if frame.eval_ctx.volatile:
            join = "(markup_join if context.eval_ctx.volatile else str_join)"
        elif frame.eval_ctx.autoescape:
            join = "markup_join"
        else:
            join = "str_join"
        self.write(f"environment.bounded_join({join}, (")
        for arg in node.nodes:
            self.visit(arg, frame)
            self.write(", ")
        self.write("))")
