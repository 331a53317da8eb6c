"""``roost.templating`` imports a name's module on first use: Jinja2 loads only when needed."""

from __future__ import annotations

import subprocess
import sys

import pytest

import roost.templating

PROBE = """
import sys
import roost.templating as t
assert "jinja2" not in sys.modules, "importing the package loaded Jinja2"
assert t.MAX_STEPS == 1_000_000 and "roost.templating.render" not in sys.modules
assert t.render_template("{{ 1 + 1 }}") == "2" and "jinja2" in sys.modules
assert "render_template" in vars(t)  # found once, then kept
"""


def test_a_name_loads_its_module_when_first_asked_for() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr


def test_a_name_the_package_does_not_have_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'render_templates'"):
        _ = roost.templating.render_templates  # type: ignore[attr-defined]
