"""What the approval question shows of a command and a diff: here-document bodies as
data (never led by ``$``), as the shell analysis reads them; what is cut says how
many lines and that ``v`` views all, and the whole question holds every line. The
pager's wrapping and scrolling; the model's thinking folded on screen and kept
whole for Ctrl-O."""

from __future__ import annotations

import io

from prompt_toolkit.output.plain_text import PlainTextOutput

from dm_cc.core import ApprovalRequest, ToolFinished
from dm_cc.permissions import Request, Rule, decide, heredoc_bodies
from dm_cc.session.messages import Message, ToolCall
from dm_cc.tools import ToolOutput
from dm_cc.ui.approval_prompt import fit_legend, hides, question_lines
from dm_cc.ui.command_text import BODY_HEAD, BODY_TAIL, command_lines
from dm_cc.ui.pager import KEYS, View, wrap
from dm_cc.ui.render import KEPT_CUT, Shown, event_lines
from dm_cc.ui.screen import Screen
from dm_cc.ui.thinking import last_thinking, thinking_lines


def text(lines) -> list[str]:
    return ["".join(part for _, part, *_ in line) for line in lines]


def styles(lines) -> list[str]:
    """The style of each line's text (its last fragment)."""
    return [line[-1][0] for line in lines]


# ---------------------------------------------------------------- here-documents

def test_a_heredoc_body_is_data_under_its_command_and_its_delimiter_is_shown():
    command = "cat > run.sh <<'EOF'\n#!/bin/sh\nrm -rf build\nEOF\nchmod +x run.sh"
    lines = list(command_lines(command))
    assert text(lines) == ["  $ cat > run.sh <<'EOF'", "    │ #!/bin/sh", "    │ rm -rf build",
                           "    EOF", "  $ chmod +x run.sh"]
    # the body keeps its contrast (bash <<EOF makes it a script); the code is bold
    assert styles(lines) == ["class:tool", "", "", "class:dim", "class:tool"]


def test_heredocs_are_found_as_the_analysis_reads_them_not_by_a_pattern():
    # <<- strips tabs; two heredocs on one line read one after the other; a heredoc
    # inside $( ) ends before the code that follows; << in arithmetic or quotes is none
    assert text(command_lines("cat <<-END\n\tdata\n\tEND\nrm x")) == [
        "  $ cat <<-END", "    │ \tdata", "    \tEND", "  $ rm x"]
    assert text(command_lines("paste <<A <<B\n1\nA\n2\nB\nls")) == [
        "  $ paste <<A <<B", "    │ 1", "    A", "    │ 2", "    B", "  $ ls"]
    assert text(command_lines("x=$(cat <<EOF\nbody\nEOF\n)\nrm -rf /")) == [
        "  $ x=$(cat <<EOF", "    │ body", "    EOF", "  $ )", "  $ rm -rf /"]
    for code in ("echo $((1<<2))\nrm -rf /", "echo '<<EOF'\nrm -rf /", "echo x # <<EOF\nrm -rf /"):
        assert all(line.startswith("  $ ") for line in text(command_lines(code))), code
    # the delimiter must stand alone on its line: " EOF" or "EOF;" do not end it
    assert text(command_lines("cat <<EOF\n EOF\nEOF;\nEOF\nls")) == [
        "  $ cat <<EOF", "    │  EOF", "    │ EOF;", "    EOF", "  $ ls"]


def test_an_unclosed_heredoc_runs_to_the_end_and_lines_split_only_at_newlines():
    assert text(command_lines("cat <<EOF\nrm -rf /\nls")) == [
        "  $ cat <<EOF", "    │ rm -rf /", "    │ ls"]
    assert heredoc_bodies("cat <<EOF\nx\n") == [(1, 3, False)]
    # a carriage return is no line break for bash: one line, shown as it is
    assert text(command_lines("echo safe\rrm -rf /")) == ["  $ echo safe\rrm -rf /"]
    assert text(command_lines("")) == ["  $ "]


def test_a_long_body_is_cut_with_its_count_and_the_whole_holds_every_line():
    body = [f"data {n}" for n in range(30)]
    command = "cat > d.txt <<EOF\n" + "\n".join(body) + "\nEOF\necho done"
    cut = text(command_lines(command))
    hidden = 30 - BODY_HEAD - BODY_TAIL
    assert cut == ["  $ cat > d.txt <<EOF", *(f"    │ {b}" for b in body[:BODY_HEAD]),
                   f"    │ … {hidden} more lines: v views all",
                   *(f"    │ {b}" for b in body[-BODY_TAIL:]), "    EOF", "  $ echo done"]
    whole = text(command_lines(command, whole=True))
    assert whole == ["  $ cat > d.txt <<EOF", *(f"    │ {b}" for b in body), "    EOF",
                     "  $ echo done"]


def test_a_long_command_keeps_its_first_and_last_lines():
    command = "\n".join(f"echo {n}" for n in range(100))
    cut = text(command_lines(command))
    assert cut[0] == "  $ echo 0" and cut[-1] == "  $ echo 99"
    assert "  … 50 more lines: v views all" in cut and len(cut) == 51
    assert len(text(command_lines(command, whole=True))) == 100


# ---------------------------------------------------------------- the question, whole

def write_request(lines: int) -> ApprovalRequest:
    asks = decide([Request("edit", "big.txt")], [Rule("edit", "**", "ask")])
    diff = "\n".join(["--- /dev/null", "+++ b/big.txt", f"@@ -0,0 +1,{lines} @@",
                      *(f"+line {n}" for n in range(1, lines + 1))])
    return ApprovalRequest("write", {"path": "big.txt"}, asks, main_input="big.txt",
                           preview=diff)


def test_a_cut_diff_says_how_much_is_hidden_and_the_whole_question_has_it():
    request = write_request(250)
    shown = text(question_lines(request))
    assert shown[-1] == "  … 193 more lines: v views all"
    assert "  +line 57" in shown and "  +line 58" not in shown
    whole = text(question_lines(request, whole=True))
    assert "  +line 201" in whole and "  +line 250" in whole and "more lines" not in whole[-1]
    assert hides(request)
    assert not hides(write_request(10))         # nothing cut: no v


def test_an_output_the_screen_cuts_is_numbered_and_kept_whole_for_expand():
    shown = Shown()
    seq = ToolCall("c1", "bash", {"command": "seq 1 100"})
    output = "".join(f"{n}\n" for n in range(1, 101))
    lines = text(event_lines(ToolFinished(seq, ToolOutput(output)), shown))
    assert "  │ … 91 lines hidden (/expand 1) …" in lines
    assert shown.cut[1] == ("bash seq 1 100", output)
    diff = "\n".join(["--- a/a.txt", "+++ b/a.txt", "@@ -1,50 +1,50 @@",
                      *(f"+{n}" for n in range(50))])
    edit = ToolCall("c2", "edit", {"path": "a.txt"})
    lines = text(event_lines(ToolFinished(edit, ToolOutput("Edited.", display=diff)), shown))
    assert lines[-1] == "  … 13 more lines (/expand 2)" and shown.cut[2][1] == diff
    short = text(event_lines(ToolFinished(seq, ToolOutput("1\n2\n")), shown))
    assert short == ["  │ 1", "  │ 2"] and len(shown.cut) == 2      # nothing cut: nothing kept
    for _ in range(KEPT_CUT):
        list(event_lines(ToolFinished(seq, ToolOutput(output)), shown))
    assert len(shown.cut) == KEPT_CUT and min(shown.cut) == 3     # the oldest go


# ---------------------------------------------------------------- the pager

def test_the_pager_wraps_to_the_width_and_scrolls_within_its_ends():
    assert text(wrap([("", "abcdef"), ("x", "gh")], 3)) == ["abc", "def", "gh"]
    assert text(wrap([("", "界界界")], 4)) == ["界界", "界"]     # two cells each
    assert text(wrap([("", "a\tb\x08")], 20)) == ["a       b^H"]  # shown, never acted on
    assert wrap([], 10) == [[]]
    view = View([[("", f"line {n}")] for n in range(1, 101)])
    assert text(view.screen(80, 10))[0] == "line 1"
    view.scroll(-5, 80, 10)
    assert view.top == 0
    view.scroll(10**9, 80, 10)
    assert text(view.screen(80, 10)) == [f"line {n}" for n in range(91, 101)]
    assert view.position(80, 10) == "lines 91-100 of 100"
    view.scroll(-25, 80, 10)
    assert view.position(80, 10) == "lines 66-75 of 100"


def test_the_pager_bar_keeps_the_way_out_on_a_narrow_terminal():
    bar = f" lines 221-258 of 258 · {KEYS}"
    assert "q Esc back" in bar[:60]


# ---------------------------------------------------------------- the legend

LEGEND = [("class:key", "y"), ("", " once  "), ("class:key", "a"),
          ("", ' always (bash "seq *", bash "sleep *")  '), ("class:key", "n"),
          ("", " no, stop the turn  "), ("class:key", "f"), ("", " no, tell the model why  "),
          ("class:dim", "Esc/Ctrl-D = n · Ctrl-C = n + cancel"), ("", "  "),
          ("class:key", "v"), ("", " view all")]


def test_the_legend_breaks_between_its_keys_never_inside_a_word():
    rows = "".join(text for _, text in fit_legend(LEGEND, 80)).split("\n")
    assert rows == ['y once  a always (bash "seq *", bash "sleep *")  n no, stop the turn',
                    "f no, tell the model why  Esc/Ctrl-D = n · Ctrl-C = n + cancel  v view all"]
    assert all(len(row) <= 80 for row in rows)
    assert "\n" not in "".join(text for _, text in fit_legend(LEGEND, 200))
    narrow = "".join(text for _, text in fit_legend(LEGEND, 30)).split("\n")
    assert narrow[0] == "y once"      # a part wider than the row still goes on its own row
    assert narrow[1].startswith("a always")


# ---------------------------------------------------------------- thinking

def screen() -> tuple[Screen, io.StringIO]:
    out = io.StringIO()
    return Screen(PlainTextOutput(out)), out


def test_thinking_shows_its_last_line_under_the_spinner_then_folds_to_one_line():
    shown, out = screen()
    shown.busy_since = 0.0
    shown.think("Let me look.\nThe tests live in ")
    shown.think("tests/.")
    shown.tick(10.0)
    assert "✻ thinking: The tests live in tests/." in out.getvalue()
    assert "Let me look" not in out.getvalue()            # only the last line
    shown.stream("Here is the plan.")                      # the answer folds it
    after = out.getvalue()
    assert "✻ thought for " in after and " s · Ctrl-O shows it\r\n" in after
    assert after.index("✻ thought for") < after.index("Here is the plan.")
    shown.fold()                                           # folded once
    shown.line("next")
    assert out.getvalue().count("✻ thought for") == 1


def test_a_tool_call_or_a_question_folds_the_thinking_above_it():
    shown, out = screen()
    shown.think("I will run the tests.")
    shown.hold()                                           # a question is open
    shown.line("? build wants to use bash", now=True)
    assert out.getvalue().index("✻ thought for") < out.getvalue().index("? build wants")
    shown.release()
    blank, out = screen()
    blank.think("  \n")                                    # nothing but blanks: no line
    blank.line("● bash ls")
    assert "thought" not in out.getvalue()


def test_ctrl_o_shows_the_last_turn_that_thought_each_reply_in_order():
    messages = [Message("user", "first"), Message("assistant", "a", reasoning="old thought"),
                Message("user", "second"), Message("assistant", "", reasoning="step one"),
                Message("tool", "ok"), Message("user", "(a result)", synthetic=True),
                Message("assistant", "done", reasoning="step two\nand more"),
                Message("user", "third"), Message("assistant", "no thinking")]
    assert last_thinking(messages) == ["step one", "step two\nand more"]
    assert text(thinking_lines(last_thinking(messages))) == [
        "✻ reply 1 of 2", "step one", "", "✻ reply 2 of 2", "step two", "and more"]
    assert text(thinking_lines(last_thinking(messages[:2]))) == ["old thought"]
    assert "no thinking" in text(thinking_lines([]))[0]
