"""Chat models behind one Protocol: litellm (lazily), scripted, offline.

    base.py           the ChatModel seam and what crosses it: ToolSpec, ModelReply,
                      stream events (text, thinking, a retry), Usage,
                      ModelError and ContextTooLong
    factory.py        ``make_model``: the model a ``--model`` name names
    litellm_model.py  over litellm, which it imports on first use: the only module
                      that imports it; what needs no litellm is beside it:
      openai_format.py  the request in OpenAI format, Claude's cache breakpoints
      thinking.py       --thinking per provider (handed litellm for its model map)
      failures.py       what a failed call means: retry, wait, or which error
    scripted.py       plays a script (the fake for tests); offline.py: rules, no LLM

The front door is lazy: a name's module is imported on its first use.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dm_cc.llm.base import (
        ChatModel,
        ContextTooLong,
        ModelError,
        ModelReply,
        OnStream,
        ReasoningDelta,
        Retrying,
        RetryNotices,
        StreamEvent,
        TextDelta,
        ToolSpec,
        Usage,
        WarmsUp,
    )
    from dm_cc.llm.factory import make_model

__all__ = [
    "ChatModel",
    "ContextTooLong",
    "ModelError",
    "ModelReply",
    "OnStream",
    "ReasoningDelta",
    "RetryNotices",
    "Retrying",
    "StreamEvent",
    "TextDelta",
    "ToolSpec",
    "Usage",
    "WarmsUp",
    "make_model",
]

# Each module of the part and the names of it re-exported here, imported on first
# use (PEP 562): importing the package loads none of them.
_LAZY: dict[str, tuple[str, ...]] = {
    "dm_cc.llm.base": ("ChatModel", "ContextTooLong", "ModelError", "ModelReply", "OnStream",
                       "ReasoningDelta", "RetryNotices", "Retrying", "StreamEvent", "TextDelta",
                       "ToolSpec", "Usage", "WarmsUp"),
    "dm_cc.llm.factory": ("make_model",),
}

if not TYPE_CHECKING:  # for mypy, the imports above are the names
    _OWNER = {name: module for module, names in _LAZY.items() for name in names}

    def __getattr__(name: str) -> object:
        """``name``, its module imported on first use."""
        module = _OWNER.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(import_module(module), name)
        globals()[name] = value  # found once: later lookups do not come here
        return value
