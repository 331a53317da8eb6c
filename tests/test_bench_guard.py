"""bench/guard.py, the speed guard: its arguments, its verdicts and a quick run.

The guard is a benchmark; what it measures is never asserted here, only that it
runs, reads its arguments and says ``ok`` or ``short`` beside each goal.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
GUARD = ROOT / "bench" / "guard.py"


def _guard() -> ModuleType:
    """bench/guard.py as a module (bench is a folder of scripts, not a package)."""
    spec = importlib.util.spec_from_file_location("guard_tool", GUARD)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_a_figure_is_ok_only_on_the_right_side_of_its_goal() -> None:
    row = _guard().Row
    assert row("ratio", 12.0, "x", 10, at_least=True).line().endswith(" ok")
    assert row("ratio", 9.5, "x", 10, at_least=True).line().endswith(" short")
    assert row("time", 0.5, "s", 0.6, at_least=False).line().endswith(" ok")
    assert row("time", 0.7, "s", 0.6, at_least=False).line().endswith(" short")
    assert "goal >= 10 x" in row("ratio", 12.0, "x", 10, at_least=True).line()


def test_an_unknown_section_is_refused_in_one_line() -> None:
    done = subprocess.run(
        [sys.executable, str(GUARD), "--only", "engine,speed"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert "--only: no section speed (of engine, cli, startup, server, memory, runs)" in done.stderr
    assert "Traceback" not in done.stderr


def test_quick_startup_prints_each_goal_with_its_verdict() -> None:
    done = subprocess.run(
        [sys.executable, str(GUARD), "--quick", "--only", "startup"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    verdicts = re.findall(
        r"^(roost .+?)\s{2,}.*goal (<=|>=) \S+ \w+\s+(ok|short)$", done.stdout, re.M
    )
    assert [what for what, _, _ in verdicts] == [
        "roost run flows/hello.yaml, whole command, new store",
        "roost validate flows/hello.yaml, over python -c pass",
        "roost --help, over python -c pass",
    ]
    assert "load average (1, 5, 15 min) before and after" in done.stdout
