"""Pick the ChatModel for a ``--model`` name. Importing this never imports litellm."""

from __future__ import annotations

from pathlib import Path

from dm_cc.llm.base import ChatModel
from dm_cc.llm.litellm_model import LiteLLMModel
from dm_cc.llm.offline import OfflineModel
from dm_cc.llm.scripted import load_script

SCRIPTED = "scripted:"


def make_model(name: str, api_base: str | None, *, thinking: int = 0) -> ChatModel:
    """``offline`` is the rule-based model; ``scripted:PATH`` plays the replies of a
    script file (demos, end-to-end tests); any other name is a litellm model string
    (``anthropic/claude-…``, ``openai/<name>`` with ``api_base`` for a local server),
    thinking up to ``thinking`` tokens a reply where it can (0: off).
    ValueError for a script that cannot be read."""
    if name == OfflineModel.name:
        return OfflineModel()
    if name.startswith(SCRIPTED):
        path = Path(name[len(SCRIPTED):]).expanduser()
        return load_script(path, name)
    return LiteLLMModel(name, api_base=api_base, thinking=thinking)
