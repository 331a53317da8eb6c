"""A Tool whose behaviour a test chooses, and the tool source a Runner takes from a list."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from roost.messages import ToolSpec
from roost.tools.base import Tool, ToolOutcome

if TYPE_CHECKING:
    from collections.abc import Sequence


class FakeTool:
    """A Tool whose behaviour a test chooses."""

    def __init__(
        self,
        name: str,
        result: str = "ok",
        *,
        delay: float = 0.0,
        fail: bool = False,
        direct_output: bool = False,
        approval: bool = False,
        timeout: float = 5.0,
    ) -> None:
        self.spec = ToolSpec(name=name, description=f"the {name} tool")
        self.result = result
        self.delay = delay
        self.fail = fail
        self.direct_output = direct_output
        self.approval = approval
        self.timeout = timeout
        self.calls: list[dict[str, Any]] = []
        self.log: list[str] = []

    async def call(self, arguments: dict[str, Any]) -> ToolOutcome:
        self.calls.append(arguments)
        self.log.append("start")
        await asyncio.sleep(self.delay)
        self.log.append("end")
        if self.fail:
            raise RuntimeError("it broke")
        return ToolOutcome(f"{self.result}:{arguments}")


def tools_of(*tools: FakeTool) -> Any:
    def tools_for(agent: str, text: str) -> Sequence[Tool]:
        return list(tools)

    return tools_for
