"""``pip install .`` is enough for every command the README lists.

The default install is the closure of ``[project] dependencies`` in
pyproject.toml (extras left out). The first test reads every module of roost
for what it imports and checks that each package comes with that install (only
Ray and OpenTelemetry are optional, behind ``--ray`` and tracing). The second
runs each command of the README's table in a real ``roost`` process where
every installed package outside that closure fails to import, as if it were
not installed: each command must do its work, not print a traceback.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import time
import tomllib
from functools import cache
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
# The packages an extra brings, and the only modules allowed to import them.
# (pytest loads roost's plugin itself: a user without pytest never imports it.)
OPTIONAL = {
    "ray": ("roost/batch/ray_tasks.py",),
    "opentelemetry": ("roost/telemetry/otel.py",),
    "pytest": ("roost/flowtest/pytest_plugin.py",),
    "msgpack": ("roost/importers/langgraph.py",),
}

# Runs ``roost`` with the top-level modules named in ROOST_BLOCKED unimportable.
_BLOCKED_MAIN = """
import importlib.abc, json, os, sys
blocked = set(json.loads(os.environ["ROOST_BLOCKED"]))
class NotInstalled(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        top = name.partition(".")[0]
        if top in blocked:
            raise ModuleNotFoundError(f"No module named {top!r}", name=top)
        return None
sys.meta_path.insert(0, NotInstalled())
from roost.entry import main
sys.argv = ["roost", *sys.argv[1:]]
main()
"""


@cache
def default_install() -> frozenset[str]:
    """The distributions ``pip install .`` installs: the dependencies, theirs, and so on."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    found: set[str] = set()
    todo = [Requirement(text) for text in project["dependencies"]]
    while todo:
        requirement = todo.pop()
        name = canonicalize_name(requirement.name)
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        wanted = {canonicalize_name(extra) for extra in requirement.extras}
        key = name + "[" + ",".join(sorted(wanted)) + "]"
        if key in found:
            continue
        found.add(key)
        found.add(name)
        for text in metadata.requires(requirement.name) or ():
            sub = Requirement(text)
            marker = sub.marker
            if marker is None or any(marker.evaluate({"extra": e}) for e in wanted or {""}):
                todo.append(sub)
    return frozenset(name for name in found if "[" not in name)


@cache
def _installed() -> dict[str, frozenset[str]]:
    """Each importable top-level module and the installed distributions that provide it."""
    found = metadata.packages_distributions()
    return {module: frozenset(map(canonicalize_name, dists)) for module, dists in found.items()}


def _distributions_of(module: str) -> frozenset[str]:
    return _installed().get(module, frozenset())


def _imported_by(path: Path) -> set[str]:
    """The top-level modules ``path`` imports, wherever in the file the import is."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names |= {alias.name.partition(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.partition(".")[0])
    return names


def test_the_default_install_has_every_package_roost_imports_but_the_extras() -> None:
    outside: list[str] = []
    for path in sorted((ROOT / "roost").rglob("*.py")):
        where = str(path.relative_to(ROOT))
        for module in _imported_by(path):
            if module in sys.stdlib_module_names or module in ("roost", "__future__"):
                continue
            if where in OPTIONAL.get(module, ()):
                continue
            dists = _distributions_of(module)
            assert dists, f"{where} imports {module}, which no installed package provides"
            if not dists & default_install():
                outside.append(f"{where}: {module} ({', '.join(sorted(dists))})")
    assert outside == []


def test_serving_comes_with_the_default_install() -> None:
    for package in ("fastapi", "uvicorn", "sse-starlette", "websockets", "croniter"):
        assert package in default_install()


def _blocked() -> list[str]:
    """Top-level modules whose every installed distribution is outside the default install."""
    keep = default_install()
    return sorted(m for m, dists in _installed().items() if not dists & keep and m != "roost")


def _readme_commands() -> list[str]:
    """The commands the README's command table names (``roost run`` -> ``run``)."""
    table = README.split("## Commands", 1)[1].split("\n## ", 1)[0]
    return sorted(set(re.findall(r"`roost (\w+)", table)))


SERVE_YAML = """\
schedules:
  morning:
    cron: "0 9 * * *"
    flow: hello.yaml
"""


class _Shell:
    """A folder holding the README's example flow, where ``roost`` runs as after
    ``pip install .`` (packages outside the default install do not import)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        (folder / "hello.yaml").write_text((ROOT / "flows" / "hello.yaml").read_text())
        (folder / "serve.yaml").write_text(SERVE_YAML)
        (folder / "in.jsonl").write_text('{"message": "Hi"}\n')
        (folder / "hello.test.yaml").write_text(
            "flow: hello.yaml\ncases:\n  - name: ends\n    expect: {status: terminated}\n"
        )
        self.env = {
            **os.environ,
            "ROOST_BLOCKED": json.dumps(_blocked()),
            "ROOST_DB": f"sqlite:///{folder / 'runs.db'}",
        }

    def argv(self, *args: str) -> list[str]:
        return [sys.executable, "-c", _BLOCKED_MAIN, *args]

    def roost(self, *args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            self.argv(*args),
            cwd=self.folder,
            env=self.env,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=120,
        )
        said = done.stdout + done.stderr
        assert "Traceback" not in said and "ModuleNotFoundError" not in said, said
        return done


SERVE_ARGS = ("serve", "--port", "0", "--flows", ".", "--config", "serve.yaml")


def _serve_once(shell: _Shell, args: tuple[str, ...] = SERVE_ARGS) -> str:
    """A server (``roost serve``, ``roost studio``) until it says it listens; that line."""
    process = subprocess.Popen(
        shell.argv(*args),
        cwd=shell.folder,
        env=shell.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert process.stdout is not None
        deadline = time.monotonic() + 60
        lines: list[str] = []
        while time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                break
            lines.append(line)
            if "listening on" in line:
                return line
        raise AssertionError("".join(lines))
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_every_readme_command_works_with_the_default_install_alone(tmp_path: Path) -> None:
    shell = _Shell(tmp_path)
    run = shell.roost("run", "hello.yaml")
    assert run.returncode == 0, run.stderr
    run_id = re.search(r"run (\S+) of hello", run.stdout).group(1)  # type: ignore[union-attr]
    (tmp_path / "run.jsonl").write_text(shell.roost("export", run_id).stdout)
    checks: dict[str, tuple[tuple[str, ...], int]] = {
        "validate": (("validate", "hello.yaml"), 0),
        "schema": (("schema",), 0),
        "continue": (("continue", run_id), 2),  # terminated: one line says it cannot
        "retry": (("retry", run_id), 2),
        "runs": (("runs",), 0),
        "show": (("show", run_id), 0),
        "replay": (("replay", run_id), 0),
        "fork": (("fork", run_id, "--at", "2", "--no-input"), 0),
        "export": (("export", run_id), 0),
        "import": (("import", "run.jsonl", "--db", f"sqlite:///{tmp_path / 'other.db'}"), 0),
        "chat": (("chat", "hello.yaml"), 0),
        "render": (("render", "hello.yaml", "-o", "hello.svg"), 0),
        "test": (("test", "hello.test.yaml"), 0),
        "batch": (("batch", "hello.yaml", "in.jsonl"), 0),
        "memory": (("memory", "list", "--scope", "flow:hello"), 0),
        "schedules": (("schedules", "list", "--config", "serve.yaml"), 0),
        "diff": (("diff", run_id, run_id), 0),  # a run is the same as itself
        "compare": (("compare", "hello.yaml", "hello.yaml", "in.jsonl"), 0),
    }
    commands = _readme_commands()
    servers = {"serve", "studio"}
    assert set(commands) - servers - {"run"} <= set(checks), "give a new README command a check"
    for command in commands:
        if command == "run":
            continue  # it ran first
        if command in servers:
            args = SERVE_ARGS if command == "serve" else ("studio", ".", "--port", "0")
            assert "listening on http://127.0.0.1:" in _serve_once(shell, args)
            continue
        args, code = checks[command]
        done = shell.roost(*args)
        assert done.returncode == code, (command, done.stdout, done.stderr)
    # An extra left out says what to install, in one line (and proves the cut is real).
    ray = shell.roost("batch", "hello.yaml", "in.jsonl", "--ray")
    assert (ray.returncode, ray.stderr) == (
        2,
        "--ray: Ray is not installed; install it with: pip install 'roost[ray]'\n",
    )


@pytest.mark.parametrize("extra", ["ray", "otel", "docs", "langgraph"])
def test_the_extras_that_stay_optional_are_still_extras(extra: str) -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["optional-dependencies"][extra]
    assert project["optional-dependencies"]["serve"] == []  # `roost[serve]` still installs
