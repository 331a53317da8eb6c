"""``roost validate`` and ``roost schema`` through the typer app and the console script."""

from __future__ import annotations

import json
import subprocess
import sysconfig
from pathlib import Path

import pytest
from typer.testing import CliRunner

from roost.cli import main
from roost.cli.app import app
from tests.cli_inprocess import run_cli

FLOW_TESTS = Path(__file__).parents[1] / "flow"  # the flow loader's corpus and data
CORPUS = FLOW_TESTS / "corpus"
DATA = FLOW_TESTS / "data"
GOOD = "roost: 1\nname: ok\nagents:\n  USER: {interrupt: ALWAYS}\n"


@pytest.fixture
def good(tmp_path: Path) -> Path:
    path = tmp_path / "good.yaml"
    path.write_text(GOOD, encoding="utf-8")
    return path


def test_valid_flow_prints_ok_and_exits_zero(
    good: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["validate", str(good)])
        raise SystemExit(0)
    assert exited.value.code == 0
    out = capsys.readouterr().out
    assert out == f"{good}: ok\n"


def test_every_problem_of_every_file_and_exit_two(
    good: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = CORPUS / "unknown_provider_key.yaml"
    with pytest.raises(SystemExit) as exited:
        main(["validate", str(bad), str(good), str(CORPUS / "empty.yaml")])
    assert exited.value.code == 2
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert lines == [
        f"{bad}:4:3: error: provider 'gpt' needs the key 'model'",
        f"{bad}:4:23: error: unknown key 'modle' in provider 'gpt' (did you mean 'model'?)",
        f"{good}: ok",
        f"{CORPUS / 'empty.yaml'}:1:1: error: empty file: a flow needs at least 'roost: 1'",
    ]
    assert captured.err.strip() == "roost: 2 of 3 flow files have errors"


def test_warnings_are_printed_and_the_file_is_still_ok(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "solo.yaml"
    path.write_text(
        "roost: 1\nname: s\nagents: {a: {interrupt: ALWAYS}}\n"
        "channels: {c: {members: [a], director: {strategy: manual}}}\n",
        encoding="utf-8",
    )
    with pytest.raises(SystemExit) as exited:
        main(["validate", str(path)])
        raise SystemExit(0)
    assert exited.value.code == 0
    assert capsys.readouterr().out.splitlines() == [
        f"{path}:4:12: warning: channel 'c' has fewer than two members",
        f"{path}: ok",
    ]


def test_missing_path_and_directory_are_one_line_each(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nope.yaml"
    with pytest.raises(SystemExit) as exited:
        main(["validate", str(missing), str(tmp_path)])
    assert exited.value.code == 2
    assert capsys.readouterr().out.splitlines() == [
        f"{missing}:1:1: error: no such file",
        f"{tmp_path}:1:1: error: is a directory, not a flow file",
    ]


def test_validate_through_typer_runner(good: Path) -> None:
    result = CliRunner().invoke(app, ["validate", str(good)])
    assert result.exit_code == 0
    assert result.stdout == f"{good}: ok\n"


def test_schema_accepts_the_contract_example() -> None:
    import jsonschema
    import yaml

    schema = json.loads(CliRunner().invoke(app, ["schema"]).stdout)
    example = yaml.safe_load((DATA / "contract_example.yaml").read_text(encoding="utf-8"))
    jsonschema.validate(example, schema)
    broken = dict(example, agent={})
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)


def _console(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Runs the installed ``roost`` console script (the one ``pip install`` made)."""
    script = Path(sysconfig.get_path("scripts")) / "roost"
    assert script.exists(), "the roost console script is missing: pip install -e ."
    return subprocess.run(
        [str(script), *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
        check=False,
    )


def test_console_script_exit_codes_and_no_traceback(tmp_path: Path) -> None:
    (tmp_path / "good.yaml").write_text(GOOD, encoding="utf-8")
    (tmp_path / "bad.yaml").write_bytes(b"roost: 1\nname: \xff\xfe\n")
    ok = _console("validate", "good.yaml", cwd=tmp_path)
    assert (ok.returncode, ok.stdout, ok.stderr) == (0, "good.yaml: ok\n", "")
    bad = _console("validate", "bad.yaml", "missing.yaml", cwd=tmp_path)
    assert bad.returncode == 2
    assert bad.stdout.splitlines() == [
        "bad.yaml:2:7: error: invalid UTF-8 (byte 0xff)",
        "missing.yaml:1:1: error: no such file",
    ]
    assert "Traceback" not in bad.stderr + bad.stdout
    # One file: its problem lines are the whole output, nothing added on stderr.
    alone = _console("validate", "bad.yaml", cwd=tmp_path)
    assert alone.returncode == 2 and alone.stderr == ""
    assert alone.stdout == "bad.yaml:2:7: error: invalid UTF-8 (byte 0xff)\n"


def test_validate_without_files_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["validate"])
    assert exited.value.code == 2
    assert capsys.readouterr().err.strip() == "roost validate: give at least one flow file"


def test_every_corpus_file_fails_cleanly_in_one_process(tmp_path: Path) -> None:
    files = sorted(str(p) for p in CORPUS.glob("*.yaml"))
    result = run_cli("validate", *files, cwd=tmp_path)
    assert result.returncode == 2
    assert "Traceback" not in result.stdout + result.stderr
    reported = {line.split(":", 1)[0] for line in result.stdout.splitlines()}
    assert reported == set(files)
