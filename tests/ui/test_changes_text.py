"""How the REPL asks about a command's changes, and what it says after they land:
the heading, each change with its mark and why, the diffs coloured as the write
tool's, the answers offered (no s or a), and no word when everything landed."""

from __future__ import annotations

from dataclasses import replace

from dm_cc.core import ApprovalRequest
from dm_cc.core.events import ChangesLanded
from dm_cc.permissions import Request, Rule, decide
from dm_cc.sandbox import Change
from dm_cc.session.messages import ToolCall
from dm_cc.ui.approval_prompt import _legend, question_lines
from dm_cc.ui.render import Shown, event_lines

DELETE = Rule("delete", "**", "ask", source="~/.config/dm_cc/policy.yaml:4")
CHANGES = "\n".join([
    "The command changed the project; the changes marked ? need your answer "
    "(✗: not applied whatever you answer):",
    "  modified notes.txt",
    "? deleted old.txt  (asked about by rule `ask delete **` at ~/.config/dm_cc/policy.yaml:4)",
    "✗ deleted keep/a.txt  (denied by rule `deny delete keep/**` at ~/.config/dm_cc/policy.yaml:5)",
    "--- a/old.txt", "+++ /dev/null", "@@ -1 +0,0 @@", "-old",
    "(the changes below land whatever you answer)",
    "--- a/notes.txt", "+++ b/notes.txt", "@@ -1,3 +1,3 @@", " one", "-two", "+TWO", " three"])
CALL = ToolCall("call_1", "bash", {"command": "python3 tidy.py"})


def request(changes: str = CHANGES) -> ApprovalRequest:
    asks = decide([Request("delete", "old.txt")], [DELETE])
    return ApprovalRequest("bash", dict(CALL.arguments or {}), asks,
                           description="Tidy the notes", main_input="python3 tidy.py",
                           changes=changes)


def text(lines) -> list[str]:
    return ["".join(part for _, part in line) for line in lines]


def styled(lines, part: str) -> str:
    return next(style for line in lines for style, said in line if said == part)


def test_the_question_has_its_own_heading_the_list_and_the_diffs():
    lines = list(question_lines(request()))
    assert text(lines)[:3] == ["? The command changed the project. Apply the changes marked ?",
                               "  build's bash call: Tidy the notes", "  $ python3 tidy.py"]
    assert text(lines)[3:6] == [
        "    modified notes.txt",
        "  ? deleted old.txt  (asked about by rule `ask delete **` at ~/.config/dm_cc/policy.yaml:4)",
        "  ✗ deleted keep/a.txt  (denied by rule `deny delete keep/**` at ~/.config/dm_cc/policy.yaml:5)"]
    assert styled(lines, "  ? ") == "class:notice" and styled(lines, "  ✗ ") == "class:deny"
    assert styled(lines, "    modified notes.txt") == "class:dim"
    # the diffs as the write tool's
    assert styled(lines, "  -two") == "class:del" and styled(lines, "  +TWO") == "class:add"
    assert styled(lines, "  @@ -1,3 +1,3 @@") == "class:hunk"
    # each change says why it asks: the gate's "asks:" lines would say it twice
    assert not any(line.startswith("  asks:") for line in text(lines))


def test_the_answers_are_apply_or_discard_and_nothing_to_remember():
    legend = "".join(part for _, part in _legend(request()))
    assert "y apply them" in legend and "n no, discard them and stop the turn" in legend
    assert "f no, tell the model why" in legend
    assert " s " not in legend and "always" not in legend
    subagent = "".join(part for _, part in _legend(replace(request(), asker="explore #2")))
    assert "n no, discard them and stop this subagent" in subagent


def test_a_long_list_shows_the_marked_changes_first_and_counts_the_rest():
    listed = [f"  created build/{n}.o" for n in range(30)] + ["? deleted keep.txt  (asks)"]
    lines = text(question_lines(request("header\n" + "\n".join(listed))))
    assert lines[3:5] == ["  ? deleted keep.txt  (asks)",
                          "    … and 30 more, landing whatever you answer"]


def test_a_long_diff_is_cut_to_the_question_s_limit():
    diff = ["--- a/big.txt", "+++ b/big.txt", "@@ -1,100 +1,100 @@"] + [f"+{n}" for n in range(100)]
    lines = text(question_lines(request("header\n? modified big.txt\n" + "\n".join(diff))))
    assert lines[-1] == "  … 43 more lines: v views all" and "  +56" in lines and "  +57" not in lines


def test_nothing_is_said_when_every_change_landed():
    landed = ChangesLanded(CALL, (Change("notes.txt", "modified", "file", 3),), ())
    assert list(event_lines(landed, Shown())) == []


def test_what_did_not_land_is_said_with_why():
    refused = ChangesLanded(CALL, (Change("notes.txt", "modified", "file", 3),),
                            ((Change("old.txt", "deleted", "file"), "you said no"),))
    lines = list(event_lines(refused, Shown()))
    assert text(lines) == ["  changes: 1 landed, 1 did not:", "    ✗ deleted old.txt: you said no"]
    assert styled(lines, "    ✗ ") == "class:deny"
