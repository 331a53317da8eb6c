"""Images in messages reach each API as its own image parts, sent by the official SDKs."""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any

import pytest
from fakes.script import Reply

from roost.engine import Runner
from roost.engine.images import load_image
from roost.engine.sources import Sources
from roost.flow import load_flow_text
from roost.ports import MemoryImages, MemoryLog
from tests.pictures import GIF, digest, png

from .conftest import API_KEY

if TYPE_CHECKING:
    from pathlib import Path

    from fakes.llm_server import FakeLLMServer

FLOW = """
roost: 1
name: looker
defaults: {{provider: {provider}}}
providers:
  chat: {{kind: openai, model: fake-chat, base_url: "{url}/v1", api_key: {key}}}
  responses: {{kind: openai-responses, model: fake-responses, base_url: "{url}/v1", api_key: {key}}}
  claude: {{kind: anthropic, model: fake-claude, base_url: "{url}", api_key: {key}}}
agents:
  USER: {{interrupt: ALWAYS}}
  looker: {{role: You describe pictures.}}
start: {{from: USER, to: looker, content: What is this?}}
"""

RED = png((200, 30, 30))


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def user_turns(provider: str, body: dict[str, Any]) -> list[Any]:
    """The content of each user message of a request, as the API's body holds it."""
    if provider == "responses":
        return [item["content"] for item in body["input"] if item.get("role") == "user"]
    return [m["content"] for m in body["messages"] if m["role"] == "user"]


def chat_parts(text: str, media_type: str, data: bytes) -> list[dict[str, Any]]:
    url = f"data:{media_type};base64,{b64(data)}"
    return [{"type": "text", "text": text}, {"type": "image_url", "image_url": {"url": url}}]


def responses_parts(text: str, media_type: str, data: bytes) -> list[dict[str, Any]]:
    url = f"data:{media_type};base64,{b64(data)}"
    return [
        {"type": "input_text", "text": text},
        {"type": "input_image", "image_url": url, "detail": "auto"},
    ]


def claude_parts(text: str, media_type: str, data: bytes) -> list[dict[str, Any]]:
    source = {"type": "base64", "media_type": media_type, "data": b64(data)}
    return [{"type": "image", "source": source}, {"type": "text", "text": text}]


EXPECTED = {"chat": chat_parts, "responses": responses_parts, "claude": claude_parts}


@pytest.mark.parametrize("provider", ["chat", "responses", "claude"])
async def test_images_arrive_as_each_apis_image_parts(
    provider: str, server: FakeLLMServer, tmp_path: Path
) -> None:
    (tmp_path / "red.png").write_bytes(RED)
    (tmp_path / "dot.gif").write_bytes(GIF)
    text = FLOW.format(provider=provider, url=server.url, key=API_KEY)
    flow = load_flow_text(text, str(tmp_path / "looker.yaml"))
    server.script(Reply(text="A red square."), Reply(text="A dot."))
    images = MemoryImages()
    log = MemoryLog("run-1")
    runner = Runner(flow=flow, log=log, sources=Sources(images=images))
    state = await runner.start(images=[load_image(str(tmp_path / "red.png"))])
    assert state.status == "paused"
    gif = load_image("dot.gif", tmp_path)
    state = await runner.continue_("And this one?", images=[gif])
    assert state.history[-2].content == "A dot."

    expected = EXPECTED[provider]
    first, second = (user_turns(provider, r.body) for r in server.requests)
    assert first == [expected("What is this?", "image/png", RED)]
    # The second request shows the whole conversation: each image with its own message.
    assert second == [
        expected("What is this?", "image/png", RED),
        expected("And this one?", "image/gif", GIF),
    ]
    # The log names the images by hash; the store holds their bytes.
    messages = [e for e in log.load() if e.type == "message" and e.images]
    assert [[i.hash for i in m.images or ()] for m in messages] == [[digest(RED)], [digest(GIF)]]
    assert images.get(digest(RED)) == RED and images.get(digest(GIF)) == GIF


async def test_a_message_of_images_alone_sends_no_empty_text(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    (tmp_path / "red.png").write_bytes(RED)
    text = FLOW.format(provider="claude", url=server.url, key=API_KEY)
    flow = load_flow_text(text.replace("content: What is this?", 'content: ""'), "<test>")
    server.script(Reply(text="Red."))
    await Runner(flow=flow, log=MemoryLog("run-1")).start(
        images=[load_image(str(tmp_path / "red.png"))]
    )
    (content,) = user_turns("claude", server.requests[0].body)
    assert [block["type"] for block in content] == ["image"]
