"""Running Graphviz's ``dot``: a missing, failing or broken program is one line saying so."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from roost.errors import RoostError
from roost.visualize.output import INSTALL_GRAPHVIZ, write_render
from tests.visualize import flows

if TYPE_CHECKING:
    from pathlib import Path


def test_missing_dot_says_how_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty folder: no dot anywhere
    with pytest.raises(RoostError) as caught:
        write_render(flows.load("two.yaml"), None, tmp_path / "two.svg")
    assert str(caught.value) == INSTALL_GRAPHVIZ
    assert INSTALL_GRAPHVIZ == (
        "install Graphviz: apt-get install graphviz (Debian/Ubuntu), brew install graphviz (macOS)"
    )
    assert not (tmp_path / "two.svg").exists()
    # .dot needs no program at all.
    assert write_render(flows.load("two.yaml"), None, tmp_path / "two.dot").is_file()


def test_dot_failure_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "dot"
    fake.write_text("#!/bin/sh\necho 'Error: something broke' >&2\necho more >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(RoostError, match=r"^dot failed: Error: something broke$"):
        write_render(flows.load("two.yaml"), None, tmp_path / "two.png")


def test_dot_failure_quotes_a_long_complaint_shortly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / "dot"
    fake.write_text("#!/bin/sh\nprintf 'Error: %0500d\\nsecond line\\n' 0 >&2\nexit 3\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(RoostError) as caught:
        write_render(flows.load("two.yaml"), None, tmp_path / "two.svg")
    message = str(caught.value)
    assert message.startswith("dot failed: Error: 000") and message.endswith("…")
    assert "\n" not in message and len(message) < 250


def test_dot_that_cannot_run_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "dot").write_text("not a program\n")  # found on PATH, but not executable
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(RoostError, match=r"^cannot run dot: Permission denied$"):
        write_render(flows.load("two.yaml"), None, tmp_path / "two.pdf")
