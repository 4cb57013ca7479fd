"""Pick the ChatModel for a ``--model`` name. Importing this never imports litellm."""

from __future__ import annotations

from dm_cc.llm.base import ChatModel
from dm_cc.llm.litellm_model import LiteLLMModel
from dm_cc.llm.offline import OfflineModel


def make_model(name: str, api_base: str | None) -> ChatModel:
    """``offline`` is the rule-based model; any other name is a litellm model string
    (``anthropic/claude-…``, ``openai/<name>`` with ``api_base`` for a local server)."""
    if name == OfflineModel.name:
        return OfflineModel()
    return LiteLLMModel(name, api_base=api_base)
