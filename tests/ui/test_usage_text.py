"""Tokens, cache and cost in words: /cost, the goodbye line, the toolbar, run --json."""

from __future__ import annotations

import pytest

from dm_cc.llm import Usage
from dm_cc.ui.headless import result_json
from dm_cc.ui.prompt import fit_toolbar
from dm_cc.ui.usage_text import count, usage_line

CACHED = Usage(prompt_tokens=1_234_567, completion_tokens=8_901, cost=12.3456,
               cache_read_tokens=1_100_000, cache_write_tokens=95_000)


def test_the_cache_is_said_only_when_the_provider_reported_some():
    assert usage_line(Usage(100, 20, 0.5)) == "tokens: 100 in, 20 out; cost $0.5000"
    assert usage_line(CACHED) == ("tokens: 1234567 in, 8901 out; "
                                  "cache: 1100000 read, 95000 written; cost $12.3456")
    assert usage_line(Usage(100, 20, cache_write_tokens=90)) == \
        "tokens: 100 in, 20 out; cache: 0 read, 90 written; cost $0.0000"


@pytest.mark.parametrize(("tokens", "shown"), [
    (0, "0"), (999, "999"), (1000, "1.0k"), (12_345, "12.3k"), (99_949, "99.9k"),
    (99_950, "100k"), (999_499, "999k"), (999_999, "1.0M"), (4_567_890, "4.6M"),
    (123_456_789, "123M"), (2_000_000_000, "2.0G")])
def test_counts_are_short(tokens, shown):
    assert count(tokens) == shown


def test_on_a_narrow_toolbar_what_was_cached_goes_before_the_sandbox_and_the_cost():
    parts = [(" build · accept edits", 0), ("anthropic/claude-sonnet-4-5", 5),
             ("sandbox: bwrap", 3), ("policy: built-in defaults", 4), ("1.2M tokens", 2),
             ("1.1M cached", 3.5), ("$12.3456", 2), ("/help", 6)]
    assert fit_toolbar(parts, 110) == (" build · accept edits · sandbox: bwrap · policy: "
                                       "built-in defaults · 1.2M tokens · 1.1M cached · $12.3456")
    assert fit_toolbar(parts, 80) == \
        " build · accept edits · sandbox: bwrap · 1.2M tokens · 1.1M cached · $12.3456"
    assert fit_toolbar(parts, 70) == " build · accept edits · sandbox: bwrap · 1.2M tokens · $12.3456"
    busy = [(" build · accept edits · 2 tasks running (/tasks)", 0), *parts[1:]]
    assert fit_toolbar(busy, 80) == \
        " build · accept edits · 2 tasks running (/tasks) · 1.2M tokens · $12.3456"


def test_run_json_reports_the_cache():
    assert result_json("ses_1", "done", "ok", CACHED)["usage"] == {
        "prompt_tokens": 1_234_567, "completion_tokens": 8_901, "cache_read_tokens": 1_100_000,
        "cache_write_tokens": 95_000, "cost": 12.3456}
