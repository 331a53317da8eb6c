"""The studio page in headless Chromium against a real ``roost studio`` process.

Each edit is made as a person makes it (mouse or keyboard), then the file on disk
is compared with the text expected: the author's comments kept, only the changed
lines changed.
"""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.studio.conftest import start_studio
from tests.visualize.conftest import browser  # noqa: F401 - the headless Chromium

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from tests.serve.conftest import Server

TEAM = """\
# A team, written by hand.
roost: 1
name: team   # its name
defaults: {provider: mock}
providers:
  mock:
    kind: scripted
    replies: ["Draft.", "TERMINATE"]   # two replies
  other: {kind: scripted, replies: [Hi]}

# who speaks
agents:
  USER: {role: A person.}
  writer:
    role: You write.   # short
  critic:
    role: You check.
channels:
  desk:
    members: [writer, critic]   # in order
    director: {strategy: round_robin}
    transitions:
      writer: [critic]
      critic: [writer]
start: {from: USER, to: desk, content: Go}
"""


ASK = """\
roost: 1
name: ask
defaults: {provider: mock}
providers:
  mock: {kind: scripted, replies: ["What shall I write?", "Done. TERMINATE"]}
agents:
  USER: {interrupt: ALWAYS, role: A person.}
  bot: {role: You ask first.}
start: {from: USER, to: bot, content: Hello}
"""


@pytest.fixture(scope="module")
def studio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    folder = tmp_path_factory.mktemp("studio-page")
    flows = folder / "flows"
    flows.mkdir()
    (flows / "team.yaml").write_text(TEAM)
    (flows / "ask.yaml").write_text(ASK)
    running = start_studio(folder, flows)
    yield running
    running.stop()


@pytest.fixture
def flow(studio: Server) -> Path:
    """team.yaml as its author wrote it, again for each test."""
    path = studio.flows / "team.yaml"
    path.write_text(TEAM)
    return path


@pytest.fixture
def page(browser: Browser, studio: Server, flow: Path) -> Iterator[Page]:  # noqa: F811
    """The studio page, which loads nothing but from the server and raises no script error."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    opened = context.new_page()
    elsewhere: list[str] = []
    errors: list[str] = []
    opened.on(
        "request",
        lambda r: None if r.url.startswith(studio.url) else elsewhere.append(r.url),
    )
    opened.on("pageerror", lambda error: errors.append(str(error)))
    opened.goto(studio.url + "/")
    opened.locator('#studio-flow option[value="team.yaml"]').wait_for(state="attached")
    opened.get_by_label("Flow file", exact=True).select_option("team.yaml")
    expect(opened.locator("#yaml")).to_have_value(TEAM)
    yield opened
    context.close()
    assert not elsewhere, elsewhere
    assert not errors, errors


def on_disk(flow: Path, text: str) -> None:
    """Waits (30 s at most: a loaded machine is slow) for the file to read ``text``: each
    edit is one request."""
    deadline = time.monotonic() + 30
    while flow.read_text() != text and time.monotonic() < deadline:
        time.sleep(0.05)
    assert flow.read_text() == text


def written(page: Page, flow: Path, text: str) -> None:
    """Waits for ``text`` on disk and then in the page's YAML pane: the page has the
    server's answer, so its next edit is made on the file as written."""
    on_disk(flow, text)
    expect(page.locator("#yaml")).to_have_value(text, timeout=30_000)


def open_node(page: Page, name: str) -> None:
    """Picks ``name`` in the drawing, with the mouse."""
    # The drawing comes from dot in the server: on a loaded machine it may take a while.
    page.locator(f'#studio-drawing [data-node="{name}"]').click(timeout=90_000)
    expect(page.locator("#node-form h2")).to_contain_text(name)


def test_a_role_edited_in_the_form_changes_only_its_line(page: Page, flow: Path) -> None:
    open_node(page, "writer")
    page.get_by_label("Role").fill("You write drafts.")
    page.get_by_label("Role").press("Tab")
    written(page, flow, TEAM.replace("role: You write.   #", "role: You write drafts.   #"))
    expect(page.locator("#yaml")).to_have_value(flow.read_text())


def test_a_provider_picked_from_the_flows_goes_after_the_role(page: Page, flow: Path) -> None:
    open_node(page, "writer")
    page.get_by_label("Provider").select_option("other")
    written(page, flow, TEAM.replace("# short\n", "# short\n    provider: other\n"))


def test_an_agent_added_from_the_bar_is_a_new_block_after_the_others(
    page: Page, flow: Path
) -> None:
    page.get_by_label("New node's name").fill("editor")
    page.get_by_label("New node's name").press("Enter")
    written(page, flow, TEAM.replace("channels:\n", "  editor:\n    role: ''\nchannels:\n"))
    expect(page.locator("#node-form h2")).to_have_text("Agent editor")


def test_a_rename_updates_members_transitions_and_keeps_comments(page: Page, flow: Path) -> None:
    open_node(page, "critic")
    page.get_by_label("New name of critic").fill("judge")
    page.get_by_label("New name of critic").press("Enter")
    written(page, flow, TEAM.replace("critic", "judge").replace("judge]   #", "judge]    #"))
    expect(page.locator("#node-form h2")).to_have_text("Agent judge")


def test_a_deleted_agent_leaves_the_members_and_transitions(page: Page, flow: Path) -> None:
    open_node(page, "critic")
    page.get_by_role("button", name="Delete critic").click()
    expected = TEAM.replace("  critic:\n    role: You check.\n", "")
    expected = expected.replace("[writer, critic]   #", "[writer]           #")
    expected = expected.replace(
        "      writer: [critic]\n      critic: [writer]\n", "      writer: []\n"
    )
    written(page, flow, expected)
    expect(page.locator("#studio-nodes [data-node='critic']")).to_have_count(0)


def test_a_member_and_a_route_are_connected_on_the_drawing(page: Page, flow: Path) -> None:
    page.get_by_label("New node's name").fill("editor")
    page.get_by_label("New node's name").press("Enter")
    added = TEAM.replace("channels:\n", "  editor:\n    role: ''\nchannels:\n")
    written(page, flow, added)
    expect(page.locator('#studio-drawing [data-node="editor"]')).to_have_count(1)  # redrawn
    page.locator('#studio-drawing [data-node="desk"]').click(modifiers=["Shift"])
    # The end-of-line comment keeps its column, at least one space after the list.
    joined = added.replace("[writer, critic]   #", "[writer, critic, editor] #")
    written(page, flow, joined)
    open_node(page, "writer")
    page.locator('#studio-drawing [data-node="editor"]').click(modifiers=["Shift"])
    written(page, flow, joined.replace("writer: [critic]", "writer: [critic, editor]"))
    expect(page.get_by_label("Route 2 to")).to_have_value("editor")


def test_a_route_changed_in_the_form_gets_its_condition(page: Page, flow: Path) -> None:
    open_node(page, "critic")
    page.get_by_label("Route 1 when (JSON)").fill('{"contains": "again"}')
    page.get_by_label("Route 1 when (JSON)").press("Tab")
    on_disk(
        flow,
        TEAM.replace("critic: [writer]", "critic: [{to: writer, when: {contains: again}}]"),
    )


def test_a_member_unchecked_in_the_channel_form_leaves_the_list(page: Page, flow: Path) -> None:
    open_node(page, "desk")
    page.get_by_role("checkbox", name="critic").uncheck()
    written(page, flow, TEAM.replace("[writer, critic]   #", "[writer]           #"))
    # critic's transitions now name a non-member: the problem shows at the field.
    expect(page.locator("#studio-problems .error")).not_to_have_count(0)


def test_the_yaml_pane_is_checked_as_typed_and_written_as_typed(page: Page, flow: Path) -> None:
    typed = TEAM.replace("to: desk,", "to: nowhere,").replace("# who speaks", "# who talks")
    page.locator("#yaml").fill(typed)
    problem = page.locator("#studio-problems .error")
    expect(problem).to_contain_text("line 25:")
    assert flow.read_text() == TEAM  # checked, not written
    page.locator("#yaml").press("Control+s")
    written(page, flow, typed)
    problem.get_by_role("button").click()
    selected = page.locator("#yaml").evaluate(
        "pane => pane.value.slice(pane.selectionStart, pane.selectionEnd)"
    )
    assert selected == "start: {from: USER, to: nowhere, content: Go}"


def test_a_problem_shows_at_its_field(page: Page, flow: Path) -> None:
    page.locator("#yaml").fill(
        TEAM.replace("role: You write.", "role: You write.\n    provider: gone")
    )
    page.get_by_role("button", name="Write YAML").click()
    expect(page.get_by_role("button", name="Write YAML")).to_be_disabled()  # written
    open_node(page, "writer")
    note = page.locator("#node-form .field-problem")
    expect(note).to_contain_text("line 16:")
    expect(note).to_contain_text("gone")
    expect(page.get_by_label("Provider")).to_have_attribute("aria-invalid", "true")


def test_undo_and_redo_write_the_file_back_and_forth(page: Page, flow: Path) -> None:
    open_node(page, "writer")
    page.get_by_label("Role").fill("You write drafts.")
    page.get_by_label("Role").press("Tab")
    edited = TEAM.replace("You write.", "You write drafts.")
    written(page, flow, edited)
    page.get_by_role("button", name="Undo").click()
    written(page, flow, TEAM)
    expect(page.get_by_label("Role")).to_have_value("You write.")
    page.locator("body").press("Control+Shift+z")
    written(page, flow, edited)
    expect(page.get_by_role("button", name="Redo")).to_be_disabled()


def test_a_file_changed_on_disk_is_offered_as_a_reload_not_overwritten(
    page: Page, flow: Path
) -> None:
    by_hand = TEAM.replace("content: Go", "content: Begin")
    flow.write_text(by_hand)
    open_node(page, "writer")
    page.get_by_label("Role").fill("You write drafts.")
    page.get_by_label("Role").press("Tab")
    expect(page.locator("#conflict")).to_be_visible()
    expect(page.locator("#conflict")).to_contain_text("changed on disk")
    assert flow.read_text() == by_hand
    page.get_by_role("button", name="Reload the file").click()
    expect(page.locator("#yaml")).to_have_value(by_hand)
    expect(page.locator("#conflict")).to_be_hidden()


def test_a_form_is_used_with_the_keyboard_alone(page: Page, flow: Path) -> None:
    page.locator("#studio-nodes [data-node='writer']").focus()
    page.keyboard.press("Enter")
    expect(page.get_by_label("New name of writer")).to_be_focused()
    for _ in range(3):  # Rename, Delete, then the role
        page.keyboard.press("Tab")
    expect(page.get_by_label("Role")).to_be_focused()
    page.keyboard.press("End")
    page.keyboard.type(" Briefly.")
    page.keyboard.press("Tab")  # leaving the role writes it; the description has the focus
    briefly = TEAM.replace("You write.", "You write. Briefly.")
    written(page, flow, briefly)
    expect(page.locator("#yaml")).to_have_value(briefly)
    expect(page.get_by_label("Description")).to_be_focused()  # kept as the form is redrawn
    page.keyboard.press("Tab")
    expect(page.get_by_label("Provider")).to_be_focused()
    page.keyboard.press("ArrowDown")  # (default) -> mock
    with_mock = briefly.replace("# short\n", "# short\n    provider: mock\n")
    written(page, flow, with_mock)
    expect(page.locator("#yaml")).to_have_value(with_mock)
    expect(page.get_by_label("Provider")).to_be_focused()
    page.keyboard.press("ArrowDown")  # mock -> other
    written(page, flow, with_mock.replace("    provider: mock", "    provider: other"))


def test_the_flow_runs_from_the_studio_in_the_servers_run_view(page: Page, flow: Path) -> None:
    page.get_by_label("Run's start message").fill("Write about owls")
    page.get_by_role("button", name="Run", exact=True).click()
    expect(page.locator("#run-view")).to_be_visible()
    expect(page.locator("#status")).to_have_text("terminated")
    expect(page.locator(".ev.message .body", has_text="Draft.")).to_have_count(1)
    expect(page.locator(".ev.message .body", has_text="Write about owls")).to_have_count(1)
    page.locator("#home-link").click()
    expect(page.locator("#studio")).to_be_visible()


def test_a_run_from_the_studio_pauses_for_an_answer_given_in_the_run_view(page: Page) -> None:
    page.get_by_label("Flow file", exact=True).select_option("ask.yaml")
    expect(page.locator("#yaml")).to_have_value(ASK)
    page.get_by_role("button", name="Run", exact=True).click()
    expect(page.locator("#asked")).to_contain_text("USER is asked")
    page.get_by_label("Answer").fill("A poem")
    page.get_by_role("button", name="Send").click()
    expect(page.locator("#status")).to_have_text("terminated")
    expect(page.locator(".ev.message .body", has_text="Done.")).to_have_count(1)


def test_the_whole_story_changes_exactly_its_lines(page: Page, flow: Path) -> None:
    """An agent added, a route drawn, a role edited and renamed: the diff is those lines."""
    page.get_by_label("New node's name").fill("editor")
    page.get_by_label("New node's name").press("Enter")
    expect(page.locator('#studio-drawing [data-node="editor"]')).to_have_count(1)
    page.locator('#studio-drawing [data-node="desk"]').click(modifiers=["Shift"])
    expect(page.locator("#yaml")).to_have_value(re.compile(r"critic, editor\]"))
    open_node(page, "critic")
    page.locator('#studio-drawing [data-node="editor"]').click(modifiers=["Shift"])
    expect(page.get_by_label("Route 2 to")).to_have_value("editor")
    page.get_by_label("Role").fill("You check, then pass on.")
    page.get_by_label("Role").press("Tab")
    expect(page.locator("#yaml")).to_have_value(re.compile("then pass on"))
    page.get_by_label("New name of critic").fill("judge")
    page.get_by_label("New name of critic").press("Enter")
    expected = TEAM.replace("channels:\n", "  editor:\n    role: ''\nchannels:\n")
    expected = expected.replace("You check.", "You check, then pass on.")
    expected = expected.replace("[writer, critic]   #", "[writer, critic, editor] #")
    expected = expected.replace("critic: [writer]", "critic: [writer, editor]")
    expected = expected.replace("critic", "judge")
    expected = expected.replace("judge, editor] #", "judge, editor]  #")  # the column kept
    written(page, flow, expected)
    comments = [line for line in TEAM.splitlines() if "#" in line]
    assert all(c.split("#", 1)[1] in expected for c in comments)


def test_the_flows_own_settings_have_a_form(page: Page, flow: Path) -> None:
    page.get_by_role("listitem").filter(has_text="Flow settings").click()
    expect(page.locator("#node-form h2")).to_have_text("Flow settings")
    form = page.locator("#node-form")
    form.get_by_label("Start message").fill("Begin")
    form.get_by_label("Start message").press("Tab")
    begun = TEAM.replace("content: Go", "content: Begin")
    written(page, flow, begun)
    page.get_by_label("Default provider").select_option("other")
    written(page, flow, begun.replace("defaults: {provider: mock}", "defaults: {provider: other}"))


def test_a_flow_picked_while_the_first_still_loads_is_the_one_shown(
    browser: Browser,  # noqa: F811
    studio: Server,
    flow: Path,
) -> None:
    """The list opens its first file; a person picks another before that read answers.

    The first file's answer is held back until the picked one shows, then let through:
    the pane keeps the picked file (a late answer is dropped, not shown over it).
    """
    context = browser.new_context()
    opened = context.new_page()
    held: list[object] = []
    opened.route("**/flows/ask.yaml", lambda route: held.append(route))
    opened.goto(studio.url + "/")
    opened.locator('#studio-flow option[value="team.yaml"]').wait_for(state="attached")
    deadline = time.monotonic() + 10
    while not held and time.monotonic() < deadline:
        opened.wait_for_timeout(20)
    assert held, "the first file's read never started"
    opened.get_by_label("Flow file", exact=True).select_option("team.yaml")
    expect(opened.locator("#yaml")).to_have_value(TEAM)
    with opened.expect_response("**/flows/ask.yaml"):
        held[0].continue_()  # type: ignore[attr-defined]
    opened.wait_for_timeout(200)  # the late answer has been handled by the page
    expect(opened.locator("#yaml")).to_have_value(TEAM)
    context.close()
