"""What tests of the model path share on dm_cc's side of the wire: two small tool
specs to offer, and a sleep that records the backoff instead of waiting it."""

from __future__ import annotations

from dm_cc.llm.base import ToolSpec

READ = ToolSpec("read", "Read a file.", {"type": "object", "required": ["path"],
                                         "properties": {"path": {"type": "string"}}})
BASH = ToolSpec("bash", "Run a command.", {"type": "object",
                                           "properties": {"command": {"type": "string"}}})


class FakeSleep:
    """``sleep=`` for LiteLLMModel: the delays it was asked for, none waited."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)
