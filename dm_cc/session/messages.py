"""Messages of a session, as plain frozen data that round-trips through JSON.

A message records who wrote it (``role``), the ``agent`` in charge when it was
written, and whether dm_cc wrote it itself (``synthetic``: the plan_enter and
plan_exit switches, reminders). The agent in charge of a session is the agent
of its last user message.

A *compaction summary* is a synthetic user message with ``compaction`` set: it
stands for every message before it except those from ``kept_from`` on, which the
model still sees verbatim (``core/compaction.py``). Files written before these
fields existed load with their defaults.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

Role = Literal["user", "assistant", "tool"]

TITLE_CHARS = 60


def new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:16]}"


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A call the model asked for. ``arguments`` is None when the model's JSON was
    malformed; ``raw_arguments`` keeps what it sent so the error can quote it.

    ``id`` is dm_cc's own, unique in the session tree (the loop gives every call
    one as the reply arrives): everything that follows a call -- its result, what
    the screen has shown of it, its subagent, its question, the audit log -- is
    keyed by it. ``wire_id`` is the id the model gave it ("": the same as ``id``),
    kept only for the wire format: a model numbers its calls as it likes (``call_1``
    again after ``/model``), so its ids identify nothing beyond one reply."""

    id: str
    name: str
    arguments: dict[str, Any] | None
    raw_arguments: str = ""
    wire_id: str = ""

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        if not self.wire_id:    # as sessions saved before dm_cc had ids of its own
            del data["wire_id"]
        return data

    def with_own_id(self) -> ToolCall:
        """This call as the loop keeps it: a new id of dm_cc's, the model's kept as
        ``wire_id`` (a model may number its calls from 1 again: after ``/model``, or a
        subagent's model of its own)."""
        return replace(self, id=new_id("call"), wire_id=self.wire_id or self.id)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ToolCall:
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})


@dataclass(frozen=True, slots=True)
class Message:
    role: Role
    content: str = ""
    agent: str = "build"
    synthetic: bool = False
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None    # role == "tool": the call this answers
    tool_name: str | None = None       # role == "tool"
    is_error: bool = False             # role == "tool": the model sees an error
    reasoning: str | None = None       # role == "assistant", when the model gives it
    reasoning_blocks: tuple[dict[str, Any], ...] = ()  # the provider's signed thinking
    compaction: bool = False           # a compaction summary (role == "user", synthetic)
    kept_from: str | None = None       # compaction: the first earlier message kept verbatim
    id: str = field(default_factory=lambda: new_id("msg"))
    time: float = field(default_factory=time.time)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["tool_calls"] = [call.to_json() for call in self.tool_calls]
        data["reasoning_blocks"] = list(self.reasoning_blocks)
        if not self.reasoning_blocks:
            del data["reasoning_blocks"]    # sessions without them read as before
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Message:
        calls = tuple(ToolCall.from_json(call) for call in data.get("tool_calls", ()))
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        blocks = tuple(block for block in data.get("reasoning_blocks", ())
                       if isinstance(block, dict))
        return cls(**{**known, "tool_calls": calls, "reasoning_blocks": blocks})


def agent_in_charge(messages: list[Message], default: str = "build") -> str:
    """The agent of the last user message (synthetic ones included)."""
    for message in reversed(messages):
        if message.role == "user":
            return message.agent
    return default


def title_of(text: str, limit: int = TITLE_CHARS) -> str:
    """A session title from a prompt: its first non-blank line, whitespace collapsed,
    cut to ``limit`` characters with an ellipsis ("" for a blank prompt)."""
    line = next((" ".join(line.split()) for line in text.splitlines() if line.strip()), "")
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"
