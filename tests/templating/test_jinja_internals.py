"""The parts of Jinja2 that roost/templating overrides or calls beyond its public API.

The bounded sandbox subclasses Jinja2's code generator and sandbox, re-implements
a few of their methods, and calls some of its filters' functions directly.
pyproject.toml pins Jinja2 to the minor version this was written against; these
tests fail, naming what moved, as soon as an installed Jinja2 differs in any of
those parts, so that a new version is reviewed before the pin is raised.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
from contextlib import suppress
from typing import TYPE_CHECKING, Any

import jinja2
import pytest
from jinja2 import nodes, runtime, utils
from jinja2.sandbox import (
    SandboxedEnvironment,
    SandboxedEscapeFormatter,
    SandboxedFormatter,
)

from roost.templating import environment
from roost.templating.codegen import BoundedCodeGenerator
from roost.templating.methods import SizedFormatter

if TYPE_CHECKING:
    from collections.abc import Callable

REVIEW = "Jinja2's internals changed: review roost/templating before raising the pin"


def find(dotted: str) -> Any:
    """The Jinja2 object named ``dotted`` (module path, then attributes), or a failure."""
    module_name, _, rest = dotted.partition(".")
    found: Any = importlib.import_module(module_name)
    for part in rest.split("."):
        if inspect.ismodule(found) and not hasattr(found, part):
            with suppress(ImportError):  # a submodule not imported yet
                importlib.import_module(f"{found.__name__}.{part}")
        if not hasattr(found, part):
            pytest.fail(f"{REVIEW}: {dotted} is gone")
        found = getattr(found, part)
    return found


def parameters(function: Callable[..., Any]) -> str:
    """``function``'s parameters as written, without annotations: ``(self, node, frame=None)``."""
    signature = inspect.signature(function)
    bare = [p.replace(annotation=inspect.Parameter.empty) for p in signature.parameters.values()]
    return str(signature.replace(parameters=bare, return_annotation=inspect.Signature.empty))


# What roost's subclasses override (the code generator, the sandbox, the template, the
# formatter, Namespace) and the functions they call, with the parameters they were
# written for.
USED = {
    "jinja2.compiler.CodeGenerator.visit_Template": "(self, node, frame=None)",
    "jinja2.compiler.CodeGenerator.visit_Concat": "(self, node, frame)",
    "jinja2.compiler.CodeGenerator.write": "(self, x)",
    "jinja2.visitor.NodeVisitor.visit": "(self, node, *args, **kwargs)",
    "jinja2.visitor.NodeTransformer.generic_visit": "(self, node, *args, **kwargs)",
    "jinja2.sandbox.SandboxedEnvironment.call": (
        "(_SandboxedEnvironment__self, _SandboxedEnvironment__context,"
        " _SandboxedEnvironment__obj, *args, **kwargs)"
    ),
    "jinja2.sandbox.SandboxedEnvironment.call_binop": "(self, context, operator, left, right)",
    "jinja2.sandbox.SandboxedEnvironment.wrap_str_format": "(self, value)",
    "jinja2.sandbox.ImmutableSandboxedEnvironment.is_safe_attribute": "(self, obj, attr, value)",
    "jinja2.environment.Template.render": "(self, *args, **kwargs)",
    "jinja2.environment.Template.new_context": "(self, vars=None, shared=False, locals=None)",
    "jinja2.sandbox.SandboxedFormatter.__init__": "(self, env, **kwargs)",
    "jinja2.sandbox.SandboxedFormatter.vformat": "(self, format_string, args, kwargs)",
    "jinja2.sandbox.SandboxedFormatter.format_field": "(self, value, format_spec)",
    "jinja2.utils.Namespace.__setitem__": "(self, name, value)",
    "jinja2.utils.generate_lorem_ipsum": "(n=5, html=True, min=20, max=100)",
    "jinja2.filters.make_attrgetter": "(environment, attribute, postprocess=None, default=None)",
    "jinja2.filters.ignore_case": "(value)",
    "jinja2.filters.do_batch": "(value, linecount, fill_with=None)",
    "jinja2.filters.do_center": "(value, width=80)",
    "jinja2.filters.do_format": "(value, *args, **kwargs)",
    "jinja2.filters.do_indent": "(s, width=4, first=False, blank=False)",
    "jinja2.filters.do_int": "(value, default=0, base=10)",
    "jinja2.filters.sync_do_join": "(eval_ctx, value, d='', attribute=None)",
    "jinja2.filters.do_replace": "(eval_ctx, s, old, new, count=None)",
    "jinja2.filters.do_round": "(value, precision=0, method='common')",
    "jinja2.filters.sync_do_slice": "(value, slices, fill_with=None)",
    "jinja2.filters.sync_do_sum": "(environment, iterable, attribute=None, start=0)",
    "jinja2.filters.do_tojson": "(eval_ctx, value, indent=None)",
    "jinja2.filters.sync_do_unique": "(environment, value, case_sensitive=False, attribute=None)",
    "jinja2.filters.do_wordwrap": (
        "(environment, s, width=79, break_long_words=True, wrapstring=None, break_on_hyphens=True)"
    ),
}


@pytest.mark.parametrize("name", USED)
def test_what_roost_overrides_or_calls_keeps_its_parameters(name: str) -> None:
    found = parameters(find(name))
    assert found == USED[name], f"{REVIEW}: {name}{found}"


# Jinja2 methods that roost re-implements in full (its own version replaces them), by
# the SHA-256 of their source: any change to them must be carried over by hand.
REWRITTEN = {
    # Copied, with the join measured, by BoundedCodeGenerator.visit_Concat.
    "jinja2.compiler.CodeGenerator.visit_Concat": "be4721533d19611d",
    # Copied, with the formatters bounded, by BoundedSandbox.wrap_str_format.
    "jinja2.sandbox.SandboxedEnvironment.wrap_str_format": "8b8bf2a9a0b9d0e0",
    # Replaced, steps charged and operands checked first, by BoundedSandbox.call_binop.
    "jinja2.sandbox.SandboxedEnvironment.call_binop": "393f399d5581f8e2",
    # Replaced, with a budget and the output capped, by BoundedTemplate.render.
    "jinja2.environment.Template.render": "c33dd2c3a2936cc0",
    # Writes the environment.call(...) that BoundedSandbox.call counts, and the
    # _loop_vars and _block_vars keywords it does not charge for.
    "jinja2.compiler.CodeGenerator.visit_Call": "f851b3bf5364bdfe",
}


@pytest.mark.parametrize("name", REWRITTEN)
def test_what_roost_rewrites_is_unchanged(name: str) -> None:
    digest = hashlib.sha256(inspect.getsource(find(name)).encode()).hexdigest()[:16]
    assert digest == REWRITTEN[name], f"{REVIEW}: the source of {name} changed"


def test_the_sandbox_wraps_str_format_where_roost_expects_it() -> None:
    # BoundedSandbox bounds str.format by overriding wrap_str_format: it must be
    # what the sandbox's attribute and item lookups go through.
    for lookup in (SandboxedEnvironment.getattr, SandboxedEnvironment.getitem):
        assert "self.wrap_str_format(" in inspect.getsource(lookup), (
            f"{REVIEW}: {lookup.__qualname__} no longer calls wrap_str_format"
        )


def test_the_hooks_roost_sets_are_still_read() -> None:
    # Class attributes the sandbox reads: the operators it intercepts and their table,
    # the code generator and the template class an environment makes.
    sandbox = environment.BoundedSandbox()
    for name in ("code_generator_class", "template_class", "intercepted_binops", "concat"):
        assert hasattr(jinja2.Environment, name) or hasattr(SandboxedEnvironment, name), (
            f"{REVIEW}: no {name} on Jinja2's environments"
        )
    assert set(sandbox.intercepted_binops) <= set(SandboxedEnvironment.default_binop_table), (
        f"{REVIEW}: default_binop_table lacks one of {sorted(sandbox.intercepted_binops)}"
    )
    template = sandbox.from_string("{{ a ~ b }}{% for x in y %}{{ x < 1 }}{% endfor %}")
    assert callable(template.root_render_func), f"{REVIEW}: no Template.root_render_func"
    source = sandbox.compile("{{ a ~ b }}{% for x in y %}{{ x < 1 }}{% endfor %}", raw=True)
    for hook in ("environment.bounded_join(", "environment.counted(", "environment.charged("):
        assert hook in source, f"{REVIEW}: the compiled template no longer calls {hook}...)"


def test_what_the_compiled_code_and_the_filters_rely_on_exists() -> None:
    # The names visit_Concat writes, the flag filters carry to be passed an
    # environment, Namespace's private store, the runtime classes BoundedSandbox tests.
    assert {"markup_join", "str_join"} <= set(runtime.exported), f"{REVIEW}: runtime.exported"
    marked = jinja2.pass_environment(lambda environment: None)  # it marks what it is given
    assert hasattr(marked, "jinja_pass_arg"), f"{REVIEW}: pass_environment sets no jinja_pass_arg"
    store = object.__getattribute__(utils.Namespace(a=1), "_Namespace__attrs")
    assert store == {"a": 1}, f"{REVIEW}: Namespace keeps its values elsewhere"
    assert issubclass(SandboxedEscapeFormatter, SandboxedFormatter), f"{REVIEW}: formatters"
    for name in ("Context", "LoopContext"):
        assert isinstance(getattr(runtime, name, None), type), f"{REVIEW}: no runtime.{name}"
    eval_ctx = nodes.EvalContext(jinja2.Environment())
    assert {"volatile", "autoescape"} <= set(vars(eval_ctx)), f"{REVIEW}: EvalContext"


# The fields of the template tree that BoundedCodeGenerator reads and builds.
NODE_FIELDS = {
    "Call": ("node", "args", "kwargs", "dyn_args", "dyn_kwargs"),
    "Compare": ("expr", "ops"),
    "Concat": ("nodes",),
    "Dict": ("items",),
    "EnvironmentAttribute": ("name",),
    "For": ("target", "iter", "body", "else_", "test", "recursive"),
    "Getitem": ("node", "arg", "ctx"),
    "List": ("items",),
    "Operand": ("op", "expr"),
    "Pair": ("key", "value"),
    "Slice": ("start", "stop", "step"),
    "Tuple": ("items", "ctx"),
}


@pytest.mark.parametrize("name", NODE_FIELDS)
def test_the_template_nodes_roost_reads_keep_their_fields(name: str) -> None:
    fields = find(f"jinja2.nodes.{name}.fields")
    assert fields == NODE_FIELDS[name], f"{REVIEW}: jinja2.nodes.{name}.fields is {fields}"


def test_every_override_of_jinja2_in_roost_is_watched_here() -> None:
    # A method roost's subclasses define is either one of its own hooks, called by
    # the compiled code, or an override of Jinja2's that the lists above watch.
    classes = (
        BoundedCodeGenerator,
        environment.BoundedSandbox,
        environment.BoundedTemplate,
        SizedFormatter,
    )
    defined = {name for cls in classes for name, f in vars(cls).items() if inspect.isfunction(f)}
    own_hooks = {"counted", "charged", "bounded_dict", "sliced", "bounded_join"}
    watched = {name.rpartition(".")[2] for name in (*USED, *REWRITTEN)} | {
        "concat"
    }  # concat: "".join
    unwatched = defined - own_hooks - watched - {"__init__"}  # __init__: public options
    assert unwatched == set(), f"add the Jinja2 methods roost now overrides here: {unwatched}"
