"""``roost batch --budget``: no row starts once the rows have spent it; the next run runs them."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from tests.budgets.conftest import provider
from tests.cli_inprocess import run_cli

if TYPE_CHECKING:
    from pathlib import Path

    from fakes.llm_server import FakeLLMServer


def files(server: FakeLLMServer, folder: Path) -> None:
    (folder / "pair.yaml").write_text(
        f"roost: 1\ndefaults: {{provider: llm, max_rounds: 2}}\n"
        f"providers:\n  llm: {provider(server)}\n"
        "agents: {a: {role: You are a.}, b: {role: You are b.}}\n"
        "start: {from: a, to: b}\n"
    )
    lines = [json.dumps({"message": f"question {n}"}) for n in range(6)]
    (folder / "rows.jsonl").write_text("\n".join(lines) + "\n")


def results(folder: Path) -> list[dict]:
    text = (folder / "rows.jsonl.results.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines()]


def test_a_batch_starts_no_row_once_its_budget_is_spent(server: FakeLLMServer, tmp_path: Path):
    files(server, tmp_path)
    env = {"ROOST_DB": str(tmp_path / "runs.db")}
    ran = run_cli("batch", "pair.yaml", "rows.jsonl", "--concurrency", "1", "--budget", "0.05",
                  cwd=tmp_path, env=env)  # fmt: skip
    assert ran.returncode == 3, ran.stderr
    assert "not run; run the same command again" in ran.stdout
    first = results(tmp_path)
    done = [r for r in first if r["status"] == "terminated"]
    left = [r for r in first if r["status"] == "skipped"]
    assert done and left and len(done) + len(left) == 6
    spent = sum(r["cost"] for r in done)
    assert spent >= 0.05 and spent - done[-1]["cost"] < 0.05  # the last started under it
    assert all("budget" in r["error"] for r in left)
    again = run_cli("batch", "pair.yaml", "rows.jsonl", cwd=tmp_path, env=env)
    assert again.returncode == 0, again.stdout
    second = results(tmp_path)
    assert all(r["status"] == "terminated" for r in second)
    assert [r["run"] for r in second if r["row"] in {d["row"] for d in done}] == [
        d["run"] for d in done
    ]  # the rows run before are kept, not run again


def test_a_batch_budget_needs_priced_providers(tmp_path: Path) -> None:
    (tmp_path / "f.yaml").write_text(
        "roost: 1\nproviders:\n  p: {kind: openai, model: no-such, base_url: 'http://x', "
        "api_key: k}\ndefaults: {provider: p}\nagents: {a: {}, b: {}}\nstart: {from: a, to: b}\n"
    )
    (tmp_path / "rows.jsonl").write_text('{"message": "hi"}\n')
    ran = run_cli("batch", "f.yaml", "rows.jsonl", "--budget", "1", cwd=tmp_path,
                  env={"ROOST_DB": str(tmp_path / "runs.db")})  # fmt: skip
    assert ran.returncode == 2 and "'p'" in ran.stderr and "Traceback" not in ran.stderr
