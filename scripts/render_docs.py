"""Draw the pictures in docs/images/ from the example flows, so the docs show real renders.

For every flow under flows/ this writes ``<name>.svg`` and ``<name>.png``. Flows
whose providers are all scripted are also run offline (``roost run --no-input``)
and drawn again with the run overlaid (``<name>-run.svg``/``.png``). One run
also gets its run page (``<name>-run-page.html``) and, when Chromium and
Playwright are at hand, a screenshot of it (``run-page.png``). A generated
30-agent flow (``large.svg``/``.png``) shows how a big graph reads.

Run from anywhere:  python scripts/render_docs.py
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

from roost import load_flow
from roost.events import Event, parse_event
from roost.flow.models import Flow, ScriptedProviderConfig
from roost.visualize import write_render

ROOT = Path(__file__).resolve().parents[1]
FLOWS = ROOT / "flows"
IMAGES = ROOT / "docs" / "images"
REPLAY_SAMPLE = "math-chat"  # the run whose replay page is saved and photographed
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]


def example_flows() -> list[Path]:
    """YAML files under flows/ that are roost flows (they carry a ``roost:`` version)."""
    found = []
    for path in sorted(FLOWS.rglob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and "roost" in data:
            found.append(path)
    return found


def offline(flow: Flow) -> bool:
    """True when every provider is scripted, so a run needs no network and no key."""
    return bool(flow.providers) and all(
        isinstance(p, ScriptedProviderConfig) for p in flow.providers.values()
    )


def run_offline(path: Path, scratch: Path) -> list[Event]:
    """Runs the flow with the real CLI, no input, its log in ``scratch``; returns the events."""
    events_file = scratch / f"{path.stem}.jsonl"
    command = [sys.executable, "-c", "from roost.cli import main; main()"]
    command += ["run", str(path.relative_to(ROOT)), "--events", str(events_file), "--no-input"]
    env = {**os.environ, "ROOST_DB": f"sqlite:///{scratch / 'runs.db'}"}
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    if done.returncode not in (0, 3):  # 3: the run stopped at an error, worth drawing too
        raise SystemExit(f"roost run {path.name} failed: {done.stderr.strip()}")
    lines = events_file.read_text(encoding="utf-8").splitlines()
    return [parse_event(line) for line in lines if line.strip()]


def large_flow(agents: int = 30) -> Flow:
    """A made-up flow of ``agents`` agents in three channels, to show a big graph."""
    names = [f"agent{i:02d}" for i in range(agents - 2)]
    spec: dict[str, Any] = {
        "roost": 1,
        "name": f"large-{agents}",
        "description": "a generated flow: three channels, two people",
        "providers": {"gpt": {"kind": "openai", "model": "gpt-4o-mini"}},
        "defaults": {"provider": "gpt"},
        "agents": {name: {"role": f"You are {name}."} for name in names},
        "channels": {},
        "start": {"from": "USER", "to": "room0", "content": "Let us begin."},
    }
    spec["agents"]["USER"] = {"interrupt": "ALWAYS"}
    spec["agents"]["auditor"] = {"interrupt": "ALWAYS"}
    for index in range(3):
        members = names[index::3]
        transitions = {m: [members[(j + 1) % len(members)]] for j, m in enumerate(members)}
        extra = ["USER"] if index == 0 else (["auditor"] if index == 2 else [])
        for person in extra:
            transitions[members[-1]] = [members[0], person]
            transitions[person] = [members[0]]
        spec["channels"][f"room{index}"] = {
            "members": members + extra,
            "director": {"strategy": ["llm", "round_robin", "random"][index]},
            "transitions": transitions,
        }
    return Flow.model_validate(spec)


def screenshot(page_file: Path, out: Path) -> bool:
    """A picture of the replay page a few steps in; False when no browser is available."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return False
    chromium = os.environ.get("CHROMIUM") or shutil.which("chromium")
    if chromium is None:
        return False
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.route(
            "**/*", lambda r: r.continue_() if r.request.url.startswith("file:") else r.abort()
        )
        page.goto(page_file.resolve().as_uri())
        for _ in range(4):
            page.keyboard.press("ArrowRight")
        page.wait_for_timeout(200)
        page.screenshot(path=str(out))
        browser.close()
    return True


def check_no_machine_paths(paths: list[Path], scratch: Path) -> None:
    """Refuses to leave a picture that names a folder of this machine."""
    for path in paths:
        data = path.read_bytes()
        for folder in {str(ROOT), str(scratch), tempfile.gettempdir() + "/"}:
            if folder.encode() in data:
                raise SystemExit(f"{path.name} contains the local path {folder}")


def draw(flow: Flow, events: list[Event] | None, stem: str) -> list[Path]:
    """``<stem>.svg`` and ``<stem>.png`` in docs/images."""
    return [write_render(flow, events, IMAGES / f"{stem}.{suffix}") for suffix in ("svg", "png")]


def main() -> None:
    IMAGES.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    with tempfile.TemporaryDirectory(prefix="roost-docs-") as tmp:
        scratch = Path(tmp)
        for path in example_flows():
            flow = load_flow(path)
            written += [
                write_render(flow, None, IMAGES / f"{path.stem}.{s}") for s in ("svg", "png")
            ]
            if offline(flow):
                events = run_offline(path, scratch)
                written += draw(flow, events, f"{path.stem}-run")
                if path.stem == REPLAY_SAMPLE:
                    page = write_render(flow, events, IMAGES / f"{path.stem}-run-page.html")
                    written.append(page)
                    if screenshot(page, IMAGES / "run-page.png"):
                        written.append(IMAGES / "run-page.png")
        written += draw(large_flow(), None, "large")
        check_no_machine_paths(written, scratch)
    for path in written:
        print(path.relative_to(ROOT))


if __name__ == "__main__":
    main()
