"""The command line starts light: ``--help`` and ``validate`` import no SDK, store or renderer.

Each check runs in a fresh interpreter, so that what the test process already
imported does not hide what the command line imports. Speed itself is measured
by bench/startup.py, never asserted here.
"""

from __future__ import annotations

import inspect
import json
import os
import re
import subprocess
import sys
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest

from roost.cli.app import COMMANDS, app

ROOT = Path(__file__).resolve().parents[2]

# Heavy packages the command line must not load before a command needs them.
HEAVY = (
    "mcp",
    "openai",
    "anthropic",
    "sqlalchemy",
    "sqlmodel",
    "graphviz",
    "opentelemetry",
    "fastapi",
    "uvicorn",
    "starlette",
    "sse_starlette",
    "websockets",
    "jinja2.sandbox",
)
# What listing the commands needs beyond typer: none of the flow language or the engine.
NOT_FOR_HELP = (*HEAVY, "pydantic", "networkx", "jinja2", "yaml", "rich", "roost.events")


def _loaded_after(code: str) -> set[str]:
    """The modules a fresh interpreter holds after running ``code`` (a SystemExit is fine)."""
    script = (
        "import json, sys\n"
        f"try:\n    exec({code!r})\nexcept SystemExit:\n    pass\n"
        "sys.stdout.flush()\n"
        "print('\\n' + json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.splitlines()[-1]))


def _among(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in names))


def test_importing_the_command_line_loads_no_heavy_package() -> None:
    loaded = _loaded_after("import roost.cli")
    assert _among(loaded, NOT_FOR_HELP) == []


def test_help_loads_no_heavy_package_and_no_command_module() -> None:
    loaded = _loaded_after("from roost.cli import main; main(['--help'])")
    assert _among(loaded, NOT_FOR_HELP) == []
    assert sorted(m for m in loaded if m.startswith("roost.cli.")) == ["roost.cli.app"]


def test_validate_loads_the_language_but_no_sdk_store_renderer_or_engine() -> None:
    loaded = _loaded_after("from roost.cli import main; main(['validate', 'flows/hello.yaml'])")
    assert "roost.flow" in loaded  # it did validate
    not_needed = (*HEAVY, "roost.engine", "roost.events", "roost.store", "rich")
    assert _among(loaded, not_needed) == []


def test_validate_loads_jinja2_only_for_a_text_with_template_syntax(tmp_path: Path) -> None:
    # hello.yaml's roles and start message are plain text: nothing to parse as a template.
    code = "from roost.cli import main; main(['validate', {path!r}])"
    plain = _loaded_after(code.format(path="flows/hello.yaml"))
    assert _among(plain, ("jinja2", "roost.templating.render", "roost.flow.template_checks")) == []
    templated = tmp_path / "templated.yaml"
    templated.write_text(
        "roost: 1\nname: t\nvars: {topic: owls}\ndefaults: {provider: p}\n"
        "providers: {p: {kind: scripted}}\n"
        "agents: {a: {role: 'Talk of {{ vars.topic }}.'}, b: {}}\nstart: {from: a, to: b}\n"
    )
    loaded = _loaded_after(code.format(path=str(templated)))
    assert {"jinja2", "roost.flow.template_checks"} <= loaded  # the role was checked


def test_validate_loads_python_dotenv_only_for_a_env_file_to_read(tmp_path: Path) -> None:
    code = "from roost.cli import main; main(['validate', {path!r}])"
    assert _among(_loaded_after(code.format(path="flows/hello.yaml")), ("dotenv",)) == []
    beside = tmp_path / "hello.yaml"
    beside.write_text((ROOT / "flows" / "hello.yaml").read_text())
    (tmp_path / ".env").write_text("TOPIC=owls\n")
    assert "dotenv" in _loaded_after(code.format(path=str(beside)))


def test_validate_loads_networkx_only_for_a_loop_it_must_look_into(tmp_path: Path) -> None:
    # The graph checks of a small flow need no graph library; only a loop of agents that
    # nothing caps is looked into with networkx's strongly connected components.
    code = "from roost.cli import main; main(['validate', {path!r}])"
    assert "networkx" not in _loaded_after(code.format(path="flows/hello.yaml"))
    endless = tmp_path / "endless.yaml"
    endless.write_text(
        "roost: 1\nname: w\ndefaults: {provider: p, max_rounds: 5000}\n"
        "providers: {p: {kind: scripted}}\nagents: {a: {}, b: {}}\nstart: {from: a, to: b}\n"
    )
    assert "networkx" in _loaded_after(code.format(path=str(endless)))


GC_AFTER = """
import gc, json, sys
from roost.entry import main
sys.argv = ["roost", *{argv!r}]
try:
    main()
except SystemExit:
    pass
print("\\n" + json.dumps([gc.isenabled(), gc.get_freeze_count() > 0]))
"""


def _collector_after(argv: list[str]) -> list[bool]:
    """Whether the collector runs, and whether objects were frozen, after the console script."""
    code = GC_AFTER.format(argv=argv)
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout.splitlines()[-1]))


def test_the_console_script_collects_again_once_the_command_is_loaded(tmp_path: Path) -> None:
    # Start-up runs without the cyclic collector; a command's own objects are collected.
    assert _collector_after(["validate", "flows/hello.yaml"]) == [True, True]
    events, db = str(tmp_path / "run.jsonl"), tmp_path / "runs.db"
    argv = ["run", "flows/hello.yaml", "--events", events, "--db", str(db)]
    assert _collector_after(argv) == [True, True]
    # The run's own objects were not frozen: its store's connection was closed at exit,
    # and SQLite, the last connection gone, folded its write-ahead log into the file.
    assert sorted(path.name for path in tmp_path.iterdir()) == ["run.jsonl", "runs.db"]


def test_main_called_by_a_program_leaves_its_collector_alone() -> None:
    code = (
        "import gc, json\nfrom roost.cli import main\nmain(['validate', 'flows/hello.yaml'])\n"
        "print('\\n' + json.dumps([gc.isenabled(), gc.get_freeze_count()]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert json.loads(done.stdout.splitlines()[-1]) == [True, 0], done.stderr


TOOL_RUN = """
import roost
from roost.testing import call, flow_from_yaml

flow = flow_from_yaml(
    '''
    roost: 1
    tools:
      mean: {python: "statistics:fmean", description: The mean.}
    agents:
      USER: {role: A person.}
      helper: {role: You answer., functions: [mean]}
    start: {from: USER, to: helper, content: "The mean of 2 and 4?"}
    ''',
    replies=[call("mean", data=[2, 4]), "It is 3.", "TERMINATE"],
)
assert roost.run_sync(flow).status == "terminated"
"""


def test_a_run_with_python_tools_only_never_loads_the_mcp_sdk() -> None:
    loaded = _loaded_after(TOOL_RUN)
    assert "roost.tools.python_tool" in loaded  # the tool did run
    assert _among(loaded, ("mcp", "roost.tools.mcp_tool")) == []


def test_a_run_that_is_not_traced_never_loads_opentelemetry(tmp_path: Path) -> None:
    # Tracing is off unless an OTEL_* variable asks for it, and then costs no import at all.
    code = (
        "import os\n"
        "for name in [n for n in os.environ if n.startswith('OTEL_')]:\n"
        "    del os.environ[name]\n"
        "from roost.cli import main\n"
        f"main(['run', 'flows/hello.yaml', '--events', {str(tmp_path / 'run.jsonl')!r}])\n"
    )
    loaded = _loaded_after(code)
    assert "roost.engine.runner" in loaded  # it did run
    assert _among(loaded, ("opentelemetry", "roost.telemetry.otel")) == []


def test_a_stored_run_uses_the_sql_core_but_no_orm(tmp_path: Path) -> None:
    # The store's tables are SQLAlchemy Core tables: no SQLModel class (a pydantic model
    # and an ORM mapping each) is built to open a store and run a flow.
    db = str(tmp_path / "runs.db")
    code = f"from roost.cli import main\nmain(['run', 'flows/hello.yaml', '--db', {db!r}])\n"
    loaded = _loaded_after(code)
    assert "roost.store.sql" in loaded and "sqlalchemy" in loaded  # it did store the run
    assert _among(loaded, ("sqlmodel", "sqlalchemy.orm")) == []
    # Nor another database's dialect: PostgreSQL's is for a store on PostgreSQL.
    assert _among(loaded, ("sqlalchemy.dialects.postgresql", "asyncpg", "psycopg")) == []
    # A flow without templates and without a .env file renders and reads nothing with them.
    assert _among(loaded, ("jinja2", "dotenv")) == []


def test_a_new_stored_run_builds_no_validator_of_every_event(tmp_path: Path) -> None:
    # A run only writes its events: the validators of any event (one, or a list), which
    # build every event model's schema once more, are for reading a log back.
    code = (
        "import json\nfrom roost.cli import main\n"
        f"main(['run', 'flows/hello.yaml', '--db', {str(tmp_path / 'runs.db')!r}])\n"
        "from roost.events import event_adapter\nfrom roost.store.sqllog import _events_adapter\n"
        "print('\\n' + json.dumps([event_adapter.cache_info().currsize,"
        " _events_adapter.cache_info().currsize]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == [0, 0]


def test_the_console_script_help_imports_no_heavy_package() -> None:
    # The real console script, with Python's own import report (-X importtime as a variable).
    script = Path(sys.executable).parent / "roost"
    if not script.is_file():
        pytest.fail(f"no console script beside {sys.executable}: pip install -e .")
    done = subprocess.run(
        [str(script), "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPROFILEIMPORTTIME": "1"},
    )
    assert done.returncode == 0, done.stderr
    imported = {line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines() if "|" in line}
    assert "typer" in imported  # the report is there to read
    assert _among(imported, NOT_FOR_HELP) == []


def test_help_lists_every_command_with_its_own_first_line() -> None:
    # COMMANDS says which module holds each command and what --help shows for it: both
    # must be what the modules themselves register.
    for module in {module for module, _ in COMMANDS.values()}:
        __import__(module)
    registered = {}
    for info in app.registered_commands:
        assert info.callback is not None
        name = info.name or info.callback.__name__
        doc = inspect.getdoc(info.callback) or ""
        registered[name] = (info.callback.__module__, doc.split("\n\n")[0].replace("\n", " "))
    assert registered == COMMANDS


def test_version_is_the_installed_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    from roost.cli import main

    main(["--version"])  # a command that succeeds returns
    assert capsys.readouterr().out == f"roost {version('roost')}\n"


def test_the_version_number_is_written_only_in_pyproject() -> None:
    import roost

    written = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert roost.__version__ == version("roost")
    literal = [f'"{written}"', f"'{written}'"]
    holding = [
        str(path.relative_to(ROOT))
        for path in (ROOT / "roost").rglob("*.py")
        if any(text in path.read_text(encoding="utf-8") for text in literal)
    ]
    assert holding == []


def test_python_dash_m_roost_is_the_command_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "roost", "validate", "flows/hello.yaml"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "flows/hello.yaml: ok\n", "")


def test_a_misspelt_command_is_still_named_with_a_suggestion() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "roost", "valdate"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stderr == "roost: error: No such command 'valdate'. Did you mean 'validate'?\n"


def test_help_names_values_as_a_person_reads_them_and_cuts_no_description() -> None:
    script = Path(sys.executable).parent / "roost"
    env = {**os.environ, "COLUMNS": "80"}
    shown = subprocess.run(
        [str(script), "--help"], capture_output=True, text=True, env=env, check=True
    ).stdout
    words = " ".join(shown.split())
    for _, first_line in COMMANDS.values():  # each description whole (wrapped, never cut)
        assert first_line in words, first_line
    assert "..." not in shown.split("Commands:")[1]
    for name in COMMANDS:
        page = subprocess.run(
            [str(script), name, "--help"], capture_output=True, text=True, env=env
        )
        assert page.returncode == 0, page.stderr
        usage = page.stdout.splitlines()[0]
        assert "{" not in usage, usage  # RUN, not {RUN}
        marks = re.findall(r"<[a-z|\[\], ]+>", page.stdout)
        assert marks == [], f"roost {name} --help: {marks}"  # no <str>, no <list[str]>
    run_help = subprocess.run(
        [str(script), "run", "--help"], capture_output=True, text=True, env=env
    ).stdout
    assert "Usage: roost run [OPTIONS] FLOW" in run_help and "--db URL" in run_help
