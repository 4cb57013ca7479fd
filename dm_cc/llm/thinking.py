"""``--thinking BUDGET`` per provider: what each request of a model carries for it.

litellm knows which models reason and which parameters they take for it; this
module turns a budget of tokens into them (:func:`plan_thinking`): Anthropic's
``thinking`` with a ``max_tokens`` above the budget for a Claude, the same for a
Gemini (litellm makes its ``thinkingConfig`` of it), ``reasoning_effort`` for an
OpenAI reasoning model, and a notice for any other. It also says when a Claude's
request must go without thinking (:func:`unthought_tool_turn`).

Separate from ``litellm_model.py`` because it is rules, not calls: a function that
asks litellm's model map is handed the imported module (``plan_thinking(litellm,
...)``), so this module never imports litellm and is tested with the real one
handed in. docs/models.md, "Thinking", says it for users.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from dm_cc.llm.openai_format import is_claude
from dm_cc.session import Message

# --thinking BUDGET (tokens), per provider: see plan_thinking and docs/models.md
THINKING_EFFORT = ((4_000, "low"), (16_000, "medium"))  # an OpenAI effort by budget; more: high
THINKING_MIN = 1_024       # Anthropic's smallest budget
ANSWER_TOKENS = 16_384     # what a thinking Claude's reply keeps for its answer beyond the budget
GEMINI_PROVIDERS = ("gemini", "vertex_ai", "vertex_ai_beta")


@dataclass(frozen=True)
class Thinking:
    """How one model's requests carry ``--thinking``: ``params`` added to each
    request; ``signed``: the model is a Claude, whose signed thinking blocks are kept
    and, while it thinks, sent back; ``notice``: to say once (not supported, a
    budget cut to what the model allows)."""

    params: dict[str, Any] = field(default_factory=dict)
    signed: bool = False
    notice: str | None = None

    @property
    def claude_thinks(self) -> bool:
        return self.signed and "thinking" in self.params


def plan_thinking(litellm: Any, model: str, budget: int) -> Thinking:
    """Thinking where the model supports it, as litellm knows the model (its model
    map: ``supports_reasoning``, the params it takes for it): a Claude or a Gemini
    gets ``thinking={"type": "enabled", "budget_tokens": N}`` (litellm makes Gemini's
    ``thinkingConfig`` of it), an OpenAI reasoning model ``reasoning_effort``; any
    other model is told it once."""
    name, provider = provider_of(litellm, model)
    claude = is_claude(provider, name)
    if budget <= 0:
        return Thinking(signed=claude)
    try:
        reasons = bool(litellm.supports_reasoning(model=model))
        supported = litellm.get_supported_openai_params(model=name,
                                                        custom_llm_provider=provider) or []
    except Exception:   # a model litellm does not know: nothing is known to work
        reasons, supported = False, []
    if reasons and claude and "thinking" in supported:
        return _claude_thinking(litellm, model, budget)
    if (reasons and provider in GEMINI_PROVIDERS and "gemini" in name.lower()
            and "thinking" in supported):
        return Thinking({"thinking": {"type": "enabled", "budget_tokens": budget}})
    if reasons and provider in ("openai", "azure") and "reasoning_effort" in supported:
        return Thinking({"reasoning_effort": thinking_effort(budget)})
    if reasons:     # DeepSeek's reasoner, a local reasoning model: it thinks anyway
        return Thinking(signed=claude, notice=f"{model} reasons on its own: --thinking "
                                               "does not change it")
    return Thinking(signed=claude, notice=f"thinking is not supported by {model}: "
                                           "--thinking has no effect")


def _claude_thinking(litellm: Any, model: str, budget: int) -> Thinking:
    """Anthropic requires a budget of THINKING_MIN at least, and ``max_tokens`` above
    it: the budget plus ANSWER_TOKENS for the answer (a file written by a tool call
    is part of it), the budget cut where that would pass the model's output limit.
    Not the limit itself (litellm's choice without thinking): Claude refuses a
    request whose prompt and ``max_tokens`` together pass its context window, and a
    long session's prompt comes near it."""
    notice = None
    if budget < THINKING_MIN:
        notice = (f"thinking budget {budget} tokens is less than {model} takes: thinking "
                  f"with {THINKING_MIN}")
        budget = THINKING_MIN
    limit = _max_output(litellm, model)
    if limit is not None and budget > limit - ANSWER_TOKENS:
        cut = max(THINKING_MIN, limit - ANSWER_TOKENS)
        notice = (f"thinking budget {budget} tokens is more than {model} can write in a "
                  f"reply ({limit}, {ANSWER_TOKENS} of them kept for its answer): thinking "
                  f"with {cut}")
        budget = cut
    return Thinking({"thinking": {"type": "enabled", "budget_tokens": budget},
                      "max_tokens": budget + ANSWER_TOKENS}, signed=True, notice=notice)


def thinking_effort(budget: int) -> str:
    """An OpenAI ``reasoning_effort`` for a budget of thinking tokens."""
    return next((effort for most, effort in THINKING_EFFORT if budget <= most), "high")


def provider_of(litellm: Any, model: str) -> tuple[str, str]:
    """(the model's name at its provider, the provider) as litellm routes it."""
    try:
        name, provider, _, _ = litellm.get_llm_provider(model)
    except Exception:   # litellm cannot route it: complete() will say so
        return model, ""
    return str(name), str(provider)


def _max_output(litellm: Any, model: str) -> int | None:
    try:
        tokens = litellm.get_model_info(model).get("max_output_tokens")
    except Exception:
        return None
    return tokens if isinstance(tokens, int) and tokens > ANSWER_TOKENS + THINKING_MIN else None


def unthought_tool_turn(messages: Sequence[Message]) -> bool:
    """Whether the turn under way (the replies since the last user message) began with
    a reply that called tools without thinking (thinking was off then, or another
    model made it): Anthropic refuses thinking on the requests that go on from it
    ("a final assistant message must start with a thinking block"), and a turn is
    thought in one mode throughout. A turn that began thinking goes on thinking,
    though its later replies carry no blocks (Claude thinks once a turn unless
    interleaved thinking is asked for)."""
    start = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].role == "user"), -1)
    first = next((m for m in messages[start + 1:] if m.role == "assistant"), None)
    return first is not None and bool(first.tool_calls) and not first.reasoning_blocks
