"""The toolbar on a narrow terminal: what goes first, and what stays."""

from __future__ import annotations

from dm_cc.ui.prompt import fit_toolbar

PARTS = [(" build · accept edits", 0), ("anthropic/claude-sonnet-4-5", 5),
         ("sandbox: bwrap", 3), ("policy: built-in defaults", 4), ("1234 tokens", 2),
         ("$0.0123", 2), ("/help", 6)]


def test_a_wide_terminal_shows_every_part_in_order():
    line = fit_toolbar(PARTS, 200)
    assert line == (" build · accept edits · anthropic/claude-sonnet-4-5 · sandbox: bwrap · "
                    "policy: built-in defaults · 1234 tokens · $0.0123 · /help")


def test_at_80_columns_the_mode_the_cost_and_the_sandbox_stay_and_less_goes_first():
    line = fit_toolbar(PARTS, 80)
    assert len(line) < 80
    assert line == " build · accept edits · sandbox: bwrap · 1234 tokens · $0.0123"
    assert fit_toolbar(PARTS, 100) == (" build · accept edits · sandbox: bwrap · policy: built-in "
                                       "defaults · 1234 tokens · $0.0123")
    assert fit_toolbar(PARTS, 50) == " build · accept edits · 1234 tokens · $0.0123"


def test_an_untrusted_policy_is_kept_before_the_model_and_the_line_is_cut_last():
    parts = [*PARTS[:3], ("policy: .dm_cc/policy.yaml (not trusted: /trust)", 1), *PARTS[4:]]
    line = fit_toolbar(parts, 80)
    assert "not trusted" in line and "claude" not in line and len(line) < 80
    cut = fit_toolbar([(" build · " + "x" * 100, 0), ("1 tokens", 2)], 40)
    assert len(cut) == 39 and cut.endswith("…")
