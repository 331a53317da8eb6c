"""``roost render`` end to end: every format from the command line, a real run overlaid."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from roost.cli import main
from roost.store.jsonl import JsonlLog
from roost.visualize.output import INSTALL_GRAPHVIZ
from tests.cli_inprocess import Ran, run_cli
from tests.visualize import flows
from tests.visualize.graphs import png_pixels, svg_texts

ROOT = Path(__file__).resolve().parents[2]
HELLO = ROOT / "flows" / "hello.yaml"


def roost(*args: str, cwd: Path, env: dict[str, str] | None = None) -> Ran:
    """Runs the command line's entry point with ``env`` added to the environment."""
    return run_cli(*args, cwd=cwd, env={**os.environ, **(env or {})})


@pytest.fixture
def team_files(tmp_path: Path) -> tuple[Path, Path]:
    """team.yaml and a JSON Lines log of a run of it, written as roost writes them."""
    flow = tmp_path / "team.yaml"
    shutil.copy(flows.DATA / "team.yaml", flow)
    events = flows.team_run()
    text = flow.read_text(encoding="utf-8")
    start = events[0].model_copy(
        update={
            "flow": events[0].flow.model_copy(  # type: ignore[union-attr]
                update={"text": text, "path": str(flow)}
            )
        }
    )
    log = JsonlLog(tmp_path / "run.jsonl", run_id=flows.RUN)
    log.append([start, *events[1:]])
    return flow, tmp_path / "run.jsonl"


@pytest.mark.parametrize("suffix", ["dot", "svg", "png", "pdf", "html"])
def test_render_every_format_with_a_run(
    team_files: tuple[Path, Path], suffix: str, capsys: pytest.CaptureFixture[str]
) -> None:
    flow, run = team_files
    out = flow.with_name(f"team.{suffix}")
    main(["render", str(flow), "--run", str(run), "-o", str(out)])
    assert capsys.readouterr().out.strip() == f"wrote {out}"
    data = out.read_bytes()
    if suffix == "dot":
        assert b'id="member-team-mathematician"' in data and b" 2 msgs " in data
    elif suffix == "svg":
        assert "terminated at team" in svg_texts(data)["run-state"]
    elif suffix == "png":
        assert png_pixels(data)[0] > 300
    elif suffix == "pdf":
        assert data.startswith(b"%PDF-")
    else:
        assert b"<svg" in data and b'"type":"select"' in data


def test_unsupported_suffix_exits_2_with_one_line(tmp_path: Path) -> None:
    done = roost("render", str(HELLO), "-o", "hello.jpeg", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and ".jpeg" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "hello.jpeg").exists()


def test_missing_dot_exits_with_the_install_line(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    done = roost("render", str(HELLO), "-o", "hello.svg", cwd=tmp_path, env={"PATH": str(empty)})
    assert done.returncode == 1
    assert done.stderr.strip() == INSTALL_GRAPHVIZ


def test_invalid_flow_and_missing_run_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("roost: 1\nname: bad\nagents: {a: {provider: nowhere}}\n", encoding="utf-8")
    done = roost("render", str(bad), "-o", "bad.svg", cwd=tmp_path)
    assert done.returncode == 2 and "bad.yaml:3:" in done.stderr and "Traceback" not in done.stderr
    done = roost("render", str(HELLO), "--run", "missing.jsonl", "-o", "x.svg", cwd=tmp_path)
    assert done.returncode == 2 and "missing.jsonl" in done.stderr
    assert "Traceback" not in done.stderr


def test_render_a_real_run_of_an_example_flow(tmp_path: Path) -> None:
    run = roost("run", str(HELLO), "--events", "hello.jsonl", "--no-input", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    done = roost("render", str(HELLO), "--run", "hello.jsonl", "-o", "hello.svg", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    texts = svg_texts((tmp_path / "hello.svg").read_bytes())
    records = [json.loads(line) for line in (tmp_path / "hello.jsonl").read_text().splitlines()]
    for source, target in (("USER", "assistant"), ("assistant", "USER")):
        count = sum(
            r["type"] == "message" and (r["from"], r["to"]) == (source, target) for r in records
        )
        assert count > 0
        shown = texts[f"message-{source}-{target}"].strip()
        assert shown == f"{count} msg" + ("s" if count > 1 else "")
    end = records[-1]
    assert end["type"] == "terminate" and f"terminated at {end['node']}" in texts["run-state"]
    # The run is also found by its id in the store.
    run_id = records[0]["run"]
    done = roost("render", str(HELLO), "--run", run_id, "-o", "hello.html", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert run_id in (tmp_path / "hello.html").read_text(encoding="utf-8")
