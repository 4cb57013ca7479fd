"""Tool calls, their decisions and results as the person sees them: compact, with
the whole command, the decision and the rule that made it (``file:line``); edits
as diffs; shell output trimmed, its exit code kept. Text meant for the model
("Do not retry this…") is never shown: the person sees the decision itself.

Subagents: a started line and a done line each (the headless renderer's text),
and their calls drawn as the session's own are, indented and led by the
subagent's label; a grandchild's one step further:

    ▸ [explore #1] started: find auth code (ses_…)
      [explore #1] ● grep "def login" in .
      [explore #1]   allowed by allow grep "**" at builtin:defaults
    ✓ [explore #1] done · 1 tool, 0.4 s

Their answers are not shown (they are the parent model's to read), nor is the
task call's result when a done line has said how it ended.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from dm_cc.config import counted
from dm_cc.core import (
    AgentSwitched,
    ChangesLanded,
    Compacted,
    Event,
    InTask,
    Notice,
    TaskFinished,
    TaskStarted,
    ToolDecided,
    ToolFinished,
)
from dm_cc.permissions import Decision
from dm_cc.session import ToolCall
from dm_cc.tools import ToolOutput
from dm_cc.ui.describe import rule_text
from dm_cc.ui.headless import (
    call_text,
    changes_lines,
    one_line,
    task_finished_line,
    task_started_line,
    tools_text,
)
from dm_cc.ui.sandbox_text import is_escape

if TYPE_CHECKING:
    from dm_cc.core import Running

Line = list[tuple[str, str]]
ACCEPTING = "edits in the project without asking; your rules and protected files still hold"
HEAD_LINES = 6
TAIL_LINES = 3
DIFF_LINES = 40
KEPT_CUT = 50        # outputs shown cut that /expand can still show whole
MARK = {"allow": ("class:allow", "●"), "deny": ("class:deny", "✗"), "ask": ("class:ask", "?")}
ENDED = {"done": ("class:allow", "✓"), "max_turns": ("class:notice", "!"),
         "cancelled": ("class:notice", "■"), "stopped": ("class:notice", "■"),
         "rejected": ("class:deny", "✗"), "error": ("class:error", "✗")}


def decided_lines(call: ToolCall, decision: Decision) -> Iterator[Line]:
    """``● bash git status`` and the rule that decided it (asks are shown by the
    approval question instead)."""
    style, mark = MARK[decision.action]
    yield [(style, mark + " "), ("class:tool", call.name), ("", " " + call_text(call))]
    verb = {"allow": "allowed", "deny": "denied", "ask": "asks"}[decision.action]
    for verdict in decision.deciding[:3]:
        reason = f": {verdict.rule.reason}" if verdict.rule.reason else ""
        note = f" ({verdict.note})" if verdict.note and decision.action != "allow" else ""
        yield [("class:dim", f"  {verb} by {rule_text(verdict.rule)}{reason}{note}")]
    if len(decision.deciding) > 3:
        yield [("class:dim", f"  … and {counted(len(decision.deciding) - 3, 'more request')} (/why)")]


def escape_lines(decision: Decision) -> Iterator[Line]:
    """A stopped command run again outside the sandbox, or not, by the rules (an ask
    is the approval question's): the deciding rule, or each, with the command it
    judged, when several commands of the line decided."""
    allowed = decision.action == "allow"
    head = [("class:ask", "  ↳ run again outside the sandbox")] if allowed \
        else [("class:deny", "  ↳ not run outside the sandbox")]
    verb = "allowed" if allowed else "denied"
    deciding = decision.deciding
    texts = [f"{verb} by {rule_text(v.rule)}" + (f": {v.rule.reason}" if v.rule.reason else "")
             for v in deciding]
    if len(deciding) == 1:
        yield [*head, ("class:dim", (", " if allowed else ": ") + texts[0])]
    else:
        yield head
        for verdict, text in zip(deciding, texts, strict=True):
            yield [("class:dim", f"    {one_line(verdict.request.pattern)}: {text}")]
    if deciding[0].request.note:
        yield [("class:dim", f"    ({deciding[0].request.note})")]


def finished_lines(call: ToolCall, output: ToolOutput, kept: Shown | None = None) -> Iterator[Line]:
    """A result: a diff for edits, trimmed output for the rest, errors in red. What is
    cut is ``kept`` whole, and the line that says so names it (``/expand 3``)."""
    shown = output.display or output.output
    if output.display and call.name in ("edit", "write"):
        cut = len(shown.splitlines()) > DIFF_LINES
        yield from diff_lines(shown, DIFF_LINES, _expand(kept, call, shown) if cut else "")
        return
    if call.name == "read" and output.display and not output.is_error:
        yield [("class:dim", f"  {one_line(output.display)}")]   # Read 120 lines: not the text
        return
    lines = shown.rstrip("\n").splitlines() or ["(no output)"]
    style = "class:error" if output.is_error else "class:dim"
    if len(lines) > HEAD_LINES + TAIL_LINES + 1:
        hidden = len(lines) - HEAD_LINES - TAIL_LINES
        lines = [*lines[:HEAD_LINES], f"… {counted(hidden, 'line')} hidden{_expand(kept, call, shown)} …",
                 *lines[-TAIL_LINES:]]
    for text in lines:
        yield [(style, "  │ " + text)]


def _expand(kept: Shown | None, call: ToolCall, text: str) -> str:
    """`` (/expand 3)``: ``text`` kept whole under its number, or "" (nowhere to keep it)."""
    if kept is None:
        return ""
    return f" (/expand {kept.keep(f'{call.name} {call_text(call)}'.strip(), text)})"


def diff_lines(text: str, limit: int | None = DIFF_LINES, hint: str = "") -> Iterator[Line]:
    """A unified diff (or a plan) in colour, cut to ``limit`` lines (None: whole); the
    line that counts what was cut ends with ``hint`` (how to see the rest)."""
    lines = text.splitlines()
    for text in lines[:limit]:
        style = ("class:add" if text.startswith("+") and not text.startswith("+++") else
                 "class:del" if text.startswith("-") and not text.startswith("---") else
                 "class:hunk" if text.startswith("@@") else "class:dim")
        yield [(style, "  " + text)]
    if limit is not None and len(lines) > limit:
        yield [("class:dim", f"  … {counted(len(lines) - limit, 'more line')}{hint}")]


@dataclass
class Shown:
    """What the person has already seen of each call (by call id)."""

    refused: set[str] = field(default_factory=set)    # its error is for the model only
    previewed: set[str] = field(default_factory=set)  # its diff was in the question
    tasks: set[str] = field(default_factory=set)      # a task call whose subagent started
    cut: dict[int, tuple[str, str]] = field(default_factory=dict)  # number: (call, whole text)
    _numbered: int = 0

    def keep(self, title: str, text: str) -> int:
        """Keep an output the screen showed cut (``/expand N`` shows it whole); its
        number. The last :data:`KEPT_CUT` are kept."""
        self._numbered += 1
        self.cut[self._numbered] = (title, text)
        self.cut.pop(self._numbered - KEPT_CUT, None)
        return self._numbered


def event_lines(event: Event, shown: Shown) -> Iterator[Line]:
    """What the REPL prints for a core event."""
    if isinstance(event, ToolDecided):
        if is_escape(event.decision):   # the call ran confined; its result is still shown
            if event.decision.action != "ask":
                yield from escape_lines(event.decision)
            return
        if event.decision.action == "deny":
            shown.refused.add(event.call.id)
        if event.decision.action != "ask":
            yield from decided_lines(event.call, event.decision)
    elif isinstance(event, ToolFinished):
        # a started subagent's done line said how it ended; its result is the model's
        if event.call.id in shown.refused or event.call.id in shown.tasks:
            return
        if event.call.id in shown.previewed and not event.output.is_error:
            yield [("class:dim", f"  {event.output.output.splitlines()[0]}")]
            return
        yield from finished_lines(event.call, event.output, shown)
    elif isinstance(event, ChangesLanded):   # a word only when some did not land
        yield from landed_lines(event)
    elif isinstance(event, AgentSwitched):
        yield [("class:agent", f"→ agent: {event.agent}"),
               *([("class:agent", " · accept edits"),
                  ("class:dim", f" ({ACCEPTING})")] if event.accept_edits else [])]
    elif isinstance(event, Compacted):
        how = "automatically (the context was nearly full)" if event.automatic else ""
        yield [("class:notice", f"↻ compacted {how}: {counted(event.summarised, 'message')} summarised, "
                                f"~{event.before_tokens} → ~{event.after_tokens} tokens")]
    elif isinstance(event, Notice):
        yield [("class:notice", f"! {event.text}")]
    elif isinstance(event, TaskStarted):
        shown.tasks.add(event.call_id)
        yield [("class:task", "▸ "), ("", task_started_line(event))]
    elif isinstance(event, TaskFinished):
        style, mark = ENDED.get(event.status, ("class:notice", "■"))
        yield [(style, f"{mark} "), ("", task_finished_line(event))]
    elif isinstance(event, InTask):
        yield from _task_lines(event, shown)


def landed_lines(event: ChangesLanded) -> Iterator[Line]:
    """``changes: 3 landed, 1 did not:`` and each that did not, with why; nothing
    when all landed (a command's cache files are no news; an answer said so)."""
    if not event.refused:
        return
    first, *rest = changes_lines(event)
    yield [("class:notice", "  " + first)]
    for line in rest:
        yield [("class:deny", "    ✗ "), ("class:notice", line[4:])] \
            if line.startswith("  ✗ ") else [("class:notice", "  " + line)]


def _task_lines(event: InTask, shown: Shown) -> Iterator[Line]:
    """A subagent's event: indented; its own calls led by its label, the lines of
    its subagents (which name themselves) one step further in."""
    inner = event.event
    lead: Line = [] if isinstance(inner, InTask | TaskStarted | TaskFinished) \
        else [("class:task", f"[{event.label}] ")]
    for line in event_lines(inner, shown):
        yield [("", "  "), *lead, *line]


def progress_line(work: Running) -> str:
    """A running subagent under the spinner: ``[explore #1] find auth … 5 tools, 3.2 s``."""
    where = " (background)" if work.background else ""
    return (f"  [{work.label}] {one_line(work.description, 60)} … {tools_text(work.tools)}, "
            f"{work.seconds:.1f} s{where}")
