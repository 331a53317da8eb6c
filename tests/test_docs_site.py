"""The documentation site: mkdocs-material over docs/, built strictly.

Each build runs ``mkdocs build --strict`` as a person or CI would; strict makes
every warning an error, so a broken link, a heading a link names that does not
exist, a page missing from the navigation or a bad API reference fails it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def _build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # no banner about Material's future
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
        cwd=config.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    built = tmp_path_factory.mktemp("site")
    done = _build(ROOT / "mkdocs.yml", built)
    assert done.returncode == 0, done.stderr
    assert "WARNING" not in done.stderr
    return built


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """A copy of the docs and the site's settings, to break; the code is linked, not copied."""
    shutil.copytree(DOCS, tmp_path / "docs")
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    (tmp_path / "roost").symlink_to(ROOT / "roost")
    return tmp_path


def _nav_pages(nav: list[object]) -> set[str]:
    pages: set[str] = set()
    for item in nav:
        for value in item.values() if isinstance(item, dict) else [item]:
            pages |= _nav_pages(value) if isinstance(value, list) else {str(value)}
    return pages


def test_every_page_is_in_the_navigation() -> None:
    settings = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    assert _nav_pages(settings["nav"]) == {path.name for path in DOCS.glob("*.md")}


def test_search_finds_words_of_every_page(site: Path) -> None:
    index = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    located = {entry["location"].split("#")[0] for entry in index["docs"]}
    assert {f"{path.stem}/" for path in DOCS.glob("*.md") if path.stem != "index"} <= located
    text = " ".join(entry["text"] for entry in index["docs"])
    assert "invoke_workflow" in text and "max_rounds" in text


def test_the_example_graphs_are_on_the_rendering_page(site: Path) -> None:
    page = (site / "rendering" / "index.html").read_text(encoding="utf-8")
    for name in ("hello", "math-chat-run", "large"):
        assert f'src="../images/{name}.svg"' in page
        assert (site / "images" / f"{name}.svg").read_bytes() == (
            DOCS / "images" / f"{name}.svg"
        ).read_bytes()


def test_the_api_reference_comes_from_the_docstrings(site: Path) -> None:
    import roost.api
    import roost.notebook

    page = (site / "reference" / "index.html").read_text(encoding="utf-8")
    for name in ("roost.api.run", "roost.api.run_sync", "roost.notebook.show"):
        assert f'id="{name}"' in page
    assert roost.api.run_sync.__doc__ is not None
    first_line = roost.api.run_sync.__doc__.splitlines()[0]
    assert "runs the flow in an event loop of its own" in first_line
    assert "runs the flow in an event loop of its own" in page


def test_the_example_notebook_is_served_beside_its_page(site: Path) -> None:
    assert (site / "notebook.ipynb").read_bytes() == (DOCS / "notebook.ipynb").read_bytes()
    assert 'href="../notebook.ipynb"' in (site / "notebooks" / "index.html").read_text()


@pytest.mark.parametrize(
    ("page", "added", "named"),
    [
        ("index.md", "[gone](no-such-page.md)", "no-such-page.md"),
        ("index.md", "[gone](api.md#no-such-heading)", "no-such-heading"),
        ("api.md", "::: roost.api.no_such_function", "roost.api.no_such_function"),
        ("unlisted.md", "# A page in no menu", "unlisted.md"),
    ],
    ids=["dead link", "dead anchor", "bad reference", "page missing from the nav"],
)
def test_a_broken_site_fails_the_build(copy: Path, page: str, added: str, named: str) -> None:
    path = copy / "docs" / page
    before = path.read_text(encoding="utf-8") if path.exists() else ""
    path.write_text(f"{before}\n\n{added}\n", encoding="utf-8")
    done = _build(copy / "mkdocs.yml", copy / "site")
    assert done.returncode != 0
    assert named in done.stderr


def test_the_readme_says_how_to_build_the_site_with_an_extra_that_exists() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "pip install -e '.[docs]'" in readme
    assert "mkdocs serve" in readme and "mkdocs build --strict" in readme
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    docs = project["optional-dependencies"]["docs"]
    assert {"mkdocs>=1.6", "mkdocs-material>=9.5", "mkdocstrings[python]>=0.26"} <= set(docs)
    assert set(docs) <= set(project["optional-dependencies"]["dev"])  # so the suite can build
