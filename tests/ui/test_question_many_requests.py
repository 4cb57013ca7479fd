"""The approval question about a command of thousands of requests (issue 26): it
lists the first that ask and counts the rest (``v`` views all), and its legend names
a few of the rules "always" would keep, not thousands."""

from __future__ import annotations

from dm_cc.core import ApprovalRequest
from dm_cc.core.approval import suggested_rules
from dm_cc.permissions import Request, Rule
from dm_cc.permissions.gate import Decision, Verdict
from dm_cc.ui.approval_prompt import ASKS_SHOWN, _legend, hides, question_lines

COMMAND = "rm " + " ".join(f"{i:x}" for i in range(3_000))
ASK = Rule("*", "*", "ask", source="builtin:defaults")


def text(lines) -> list[str]:
    return ["".join(part for _, part, *_ in line) for line in lines]


def question(count: int) -> ApprovalRequest:
    requests = [Request("bash", COMMAND)] + [Request("edit", f"{i:x}") for i in range(count)]
    decision = Decision("ask", tuple(Verdict(r, ASK, "ask", r.pattern) for r in requests))
    return ApprovalRequest("bash", {"command": COMMAND}, decision, main_input=COMMAND,
                           suggestions=suggested_rules(requests, "bash"))


def test_the_first_requests_that_ask_are_listed_and_the_rest_counted():
    many = question(3_000)
    shown = [line for line in text(question_lines(many)) if line.startswith("  asks: ")]
    assert len(shown) == ASKS_SHOWN and shown[0].startswith('  asks: bash "rm 0 1 2')
    assert "  … and 2981 more requests that ask: v views all" in text(question_lines(many))
    whole = [line for line in text(question_lines(many, whole=True)) if line.startswith("  asks: ")]
    assert len(whole) == 3_001 and hides(many)
    few = question(ASKS_SHOWN - 1)     # as many as are shown: nothing counted
    assert not any("more request" in line for line in text(question_lines(few)))


def test_the_legend_names_three_rules_and_counts_the_rest():
    legend = "".join(part for _, part in _legend(question(3_000)))
    assert 'always (bash "rm 0 1 2' in legend and '…", edit "0", edit "1" and 2' in legend
    assert legend.count('edit "') == 2 and len(legend) < 400


def test_a_few_rules_keep_their_length_in_the_legend():
    rule = "rm -rf build/generated/assets/very/long/directory/name"    # 55 characters
    requests = [Request("bash", rule, always=rule)]
    decision = Decision("ask", (Verdict(requests[0], ASK, "ask", rule),))
    legend = "".join(part for _, part in _legend(ApprovalRequest(
        "bash", {"command": rule}, decision, suggestions=suggested_rules(requests, "bash"))))
    assert f'always (bash "{rule}")' in legend
