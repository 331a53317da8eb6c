"""Photograph the studio page for docs/studio.md (``docs/images/studio.png``).

Starts ``roost studio`` on a copy of a small hand-written flow, picks the writer
in the drawing, and saves the page as a person sees it: the drawing, the
writer's form and the file. Needs Playwright and Chromium.

Run from anywhere:  python scripts/studio_screenshot.py
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import expect, sync_playwright

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "images" / "studio.png"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
FLOW = """\
# A writer and a critic, written by hand.
roost: 1
name: review   # the flow's name
defaults: {provider: mock}
providers:
  mock:
    kind: scripted
    replies: ["A draft about owls.", "TERMINATE"]   # offline

# who speaks
agents:
  USER: {role: A person who asks for a text.}
  writer:
    role: You write short drafts.   # kept brief
  critic:
    role: You check the drafts.
channels:
  desk:
    members: [writer, critic]   # in order
    director: {strategy: round_robin}
    transitions:
      writer: [critic]
      critic: [writer]
start: {from: USER, to: desk, content: Write about owls}
"""


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        flows = Path(folder, "flows")
        flows.mkdir()
        (flows / "review.yaml").write_text(FLOW)
        command = [sys.executable, "-m", "roost", "studio", str(flows), "--port", "0"]
        command += ["--db", str(Path(folder, "runs.db"))]
        server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, cwd=ROOT)
        try:
            assert server.stdout is not None
            url = server.stdout.readline().split("listening on ", 1)[1].split()[0]
            photograph(url)
        finally:
            server.terminate()
            server.wait(timeout=20)
    print(f"wrote {OUT.relative_to(ROOT)}")


def photograph(url: str) -> None:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS, headless=True
        )
        page = browser.new_page(viewport={"width": 1400, "height": 820})
        page.goto(url + "/")
        page.locator('#studio-drawing [data-node="writer"]').click()
        expect(page.locator("#node-form h2")).to_have_text("Agent writer")
        page.get_by_label("Provider").select_option("mock")
        expect(page.get_by_role("button", name="Undo")).to_be_enabled()
        page.screenshot(path=str(OUT))
        browser.close()


if __name__ == "__main__":
    main()
