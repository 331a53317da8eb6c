"""A secret is masked also when a message shows it escaped or cut at a delimiter."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from roost.errors import FlowError
from roost.flow import load_flow_text
from roost.flow.redact import Redactor, clean, redact
from tests.cli_inprocess import run_cli

if TYPE_CHECKING:
    from pathlib import Path

URL_SECRET = "sk-SUPER/SECRET 1234@x"

URL_FLOW = """\
roost: 1
name: leaky-url
providers:
  p: {kind: openai, model: m, api_key: k, base_url: "http://u:${KEY}@127.0.0.1:9/v1"}
agents:
  USER: {role: u, interrupt: ALWAYS}
  bot: {role: b, provider: p}
start: {from: USER, to: bot, content: hi}
"""


def test_a_secret_cut_by_a_url_parser_is_masked_in_the_output_and_the_records(
    tmp_path: Path,
) -> None:
    (tmp_path / "flow.yaml").write_text(URL_FLOW)
    result = run_cli(
        "run", "flow.yaml", "--no-input", "--events", "run.jsonl", "--db", "runs.db",
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "KEY": URL_SECRET, "COLUMNS": "200"},
    )  # fmt: skip
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert "Invalid port: '***'" in result.stderr
    recorded = (tmp_path / "run.jsonl").read_text() + result.stdout + result.stderr
    stored = (tmp_path / "runs.db").read_bytes()
    for piece in ("sk-SUPER", "SECRET"):  # "1234" could be in a time stamp
        assert piece not in recorded
        assert piece.encode() not in stored


@pytest.mark.parametrize(
    ("secret", "shown"),
    [
        ("pass'word\"1234", "pass\\'word\"1234"),  # repr escapes the quote it is written in
        ("pa\\ss1234word", "pa\\\\ss1234word"),  # and doubles a backslash
    ],
)
def test_a_secret_quoted_with_escapes_is_masked_in_flow_problems(secret: str, shown: str) -> None:
    text = "roost: 1\nname: e\nagents:\n  a: {provider: '${S}'}\n"
    with pytest.raises(FlowError) as caught:
        load_flow_text(text, "flow.yaml", environ={"S": secret})
    message = str(caught.value)
    assert shown not in message
    assert "no provider named '***'" in message


def test_escaped_forms_are_masked() -> None:
    redact_ = Redactor(["pass'wo\"rd\\1234", "x"])
    assert redact_(r"""got 'pass\'wo"rd\\1234' and "pass'wo\"rd\\1234".""") == (
        """got '***' and "***"."""
    )


def test_pieces_of_four_characters_or_more_are_masked_shorter_ones_are_not() -> None:
    redact_ = Redactor([URL_SECRET])
    assert redact_("port 'sk-SUPER', path SECRET, pin 1234, host x") == (
        "port '***', path ***, pin ***, host x"
    )
    assert redact_(f"whole: {URL_SECRET}.") == "whole: ***."


def test_the_longest_form_goes_first_and_short_secrets_stay_whole_words() -> None:
    redact_ = Redactor(["abcd:abcdefgh", "ab"])
    assert redact_("abcdefgh abcd abcd:abcdefgh ab abc") == "*** *** *** *** abc"
    assert redact_("a'b") == "a'b"
    assert Redactor(["a'b"])("say 'a\\'b' or a'b") == "say 'a\\'b' or ***"


def test_redact_and_clean_take_any_iterable_of_secrets() -> None:
    assert redact("key sk-SUPER", [URL_SECRET]) == "key ***"
    assert redact("key sk-SUPER", frozenset({URL_SECRET})) == "key ***"
    assert redact("nothing", ()) == "nothing"
    assert clean("key\n'SECRET'", {URL_SECRET}) == "key\\n'***'"


def test_the_scheme_of_a_url_value_is_not_a_piece() -> None:
    redact_ = Redactor(["http://127.0.0.1:43210/v1"])
    assert redact_("http 500 from 127.0.0.1:43210") == "http 500 from ***:***"
    assert redact_("base http://127.0.0.1:43210/v1.") == "base ***."


def test_short_values_are_masked_as_whole_words_only() -> None:
    redact = Redactor(["ab", "sk-long-value"])
    assert redact("ab abc sk-long-value.") == "*** abc ***."
    assert redact.deep({"a": ["ab", ("x ab",)], "n": 1}) == {"a": ["***", ("x ***",)], "n": 1}
    assert not Redactor([""])
