"""Docstring parsing and the JSON Schema of a Python function's parameters."""

from __future__ import annotations

from roost.tools.schema import describe_function, parse_docstring


def test_google_docstring_with_continuation_lines() -> None:
    summary, args = parse_docstring(
        """Look a word up.

        Uses the big dictionary.

        Args:
            word (str): The word to look up.
                Case does not matter: it is folded.
            **options: Ignored.

        Returns:
            The definition.
        """
    )
    assert summary.splitlines()[0] == "Look a word up."
    assert "Uses the big dictionary." in summary and "Returns" not in summary
    assert args == {
        "word": "The word to look up. Case does not matter: it is folded.",
        "options": "Ignored.",
    }


def test_sphinx_docstring() -> None:
    summary, args = parse_docstring("Add.\n\n:param a: first\n:param int b: second\n  more")
    assert summary == "Add."
    assert args == {"a": "first", "b": "second more"}


def test_async_function_schema() -> None:
    async def fetch(url: str, retries: int = 3) -> str:
        """Fetch a page."""
        return url

    signature = describe_function(fetch, "fetch")
    assert signature.description == "Fetch a page."
    assert signature.schema["required"] == ["url"]


def test_a_function_is_described_once_and_an_unhashable_callable_still_is() -> None:
    def add(a: int, b: int = 2) -> int:
        """Adds.

        Args:
            a: The first.
        """
        return a + b

    first = describe_function(add, "add")
    assert describe_function(add, "add") is first  # the pydantic model is built once
    assert describe_function(add, "plus") is not first  # the name is part of the model

    class Unhashable:
        __hash__ = None  # type: ignore[assignment]

        def echo(self, text: str) -> str:
            """Echoes."""
            return text

    method = Unhashable().echo  # a bound method hashes its object: this one cannot be a key
    described = describe_function(method, "echo")
    assert described.schema["properties"]["text"]["type"] == "string"
    assert described.schema["required"] == ["text"]
