"""Tokens and cost in words, one wording for ``/cost``, the goodbye line, the toolbar
and ``dm_cc run --json``. Cache reads and writes are said only when a provider
reported some (Claude with its breakpoints, OpenAI's and Gemini's own caching):
they are part of the prompt tokens, billed at a fraction (reads) or a premium
(writes), and the cost already prices them."""

from __future__ import annotations

from typing import Any

from dm_cc.llm import Usage


def usage_line(usage: Usage) -> str:
    """'tokens: 1532 in, 40 out; cache: 1400 read, 100 written; cost $0.0123'."""
    cache = f"cache: {usage.cache_read_tokens} read, {usage.cache_write_tokens} written; " \
        if usage.cache_read_tokens or usage.cache_write_tokens else ""
    return (f"tokens: {usage.prompt_tokens} in, {usage.completion_tokens} out; "
            f"{cache}cost ${usage.cost:.4f}")


def count(tokens: int) -> str:
    """987, 1.2k, 12.3k, 123k, 4.6M: four characters and a unit at most (the toolbar's
    "12.3k tokens · 9.1k cached", which must fit 80 columns)."""
    if tokens < 1000:
        return str(tokens)
    for size, unit in ((1e3, "k"), (1e6, "M")):
        value = tokens / size
        shown = f"{value:.1f}" if value < 99.95 else f"{value:.0f}"
        if float(shown) < 1000:
            return shown + unit
    return f"{tokens / 1e9:.1f}G"


def usage_json(usage: Usage) -> dict[str, Any]:
    """The ``usage`` of a ``result`` record (docs/headless.md)."""
    return {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens,
            "cache_read_tokens": usage.cache_read_tokens,
            "cache_write_tokens": usage.cache_write_tokens, "cost": usage.cost}
