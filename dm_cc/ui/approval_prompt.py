"""The approval question: everything about the call, then one key.

    y  allow once            s  allow for this session      a  always allow (saved)
    n  deny (the turn stops)  f  deny and tell the model why (one line)
    Esc, Ctrl-D  deny         Ctrl-C  deny and cancel the turn
    v  view the whole question in a pager (offered when part of it is cut)

A long command, here-document body or diff is cut, saying how many lines are
hidden; ``v`` shows the question whole (:mod:`dm_cc.ui.pager`), and q comes back
to it, still open.

Before an "always" (or "session") is kept, the rule is shown in an editable line
(the narrowest useful rule for shell -- ``bash setup.sh *``, ``rm -rf build`` --,
the path for files); an edit that would no longer allow this call is refused, and
one as broad as a whole interpreter (``bash *``, ``*``) is kept only after a warning
and ``y``. A doom_loop or sandbox_escape question offers ``s`` but no ``a``: those
approvals are never saved. Questions from concurrent tool calls (two
subagents asking at once) wait their turn (one lock), and the one on screen
counts them (``(2 more questions waiting)``); a subagent's question names it
(``? [explore #2] wants to use bash``). A question that comes while the REPL
waits at its prompt (a background subagent asks) first makes the prompt step
aside (``make_room``).

No key typed in a flow answers a question (:func:`_answer`): keys typed before it
appeared (during the turn, at the prompt) are set aside and given back to the next
prompt; a key pressed within :data:`GRACE` seconds of it appearing, or while keys
keep coming (until :data:`QUIET` seconds pass without one), is kept for the prompt
too, and the legend then says that what was typed is kept. So ``/tasks`` typed
as a background subagent's question pops up never answers it ``a``.

A ``sandbox_escape`` question (a confined command failed because of the sandbox)
is headed "The sandbox stopped this command. Run it again outside the sandbox?",
says why it looks stopped, lists each command of the line that asks (one request
per simple command), and its "no" keeps the failed result.
A ``changes`` question (a command ran as a transaction, and some of its changes
need an answer: :mod:`dm_cc.ui.changes_text`) is headed "The command changed the
project. Apply the changes marked ?", lists every change and shows the diffs;
y applies the marked changes, n and f discard them (n stops the turn), and
there is no s or a: the answer is about these changes, not a rule for later.
This prompt also asks, once, before a project's MCP server that is not approved
starts (:meth:`ReplApprover.trust_server`): y starts it and saves the approval,
n (Esc, Ctrl-D, Ctrl-C) leaves it stopped for this session; and whether the
project's own files are trusted (:meth:`ReplApprover.trust_project`): y trusts
them as they are, n (Esc, Ctrl-D, Ctrl-C) says no to this content.

Those two come while the world loads, when the person may be typing their first
message: the same rule keeps a word being typed ("every", "any") from answering.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import TYPE_CHECKING

from prompt_toolkit import PromptSession
from prompt_toolkit.application import Application
from prompt_toolkit.application.current import get_app, get_app_session
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.input.typeahead import get_typeahead, store_typeahead
from prompt_toolkit.key_binding import KeyBindings, KeyPress
from prompt_toolkit.key_binding.key_processor import KeyPressEvent
from prompt_toolkit.keys import Keys
from prompt_toolkit.layout import Layout, Window
from prompt_toolkit.layout.controls import FormattedTextControl
from prompt_toolkit.utils import get_cwidth

from dm_cc.config import counted
from dm_cc.core import Approval, ApprovalRequest
from dm_cc.permissions import SANDBOX_ESCAPE, Rule
from dm_cc.ui import changes_text
from dm_cc.ui.command_text import VIEW, command_lines
from dm_cc.ui.describe import rule_text
from dm_cc.ui.pager import page
from dm_cc.ui.render import Line, Shown, diff_lines
from dm_cc.ui.rule_table import wrapped
from dm_cc.ui.sandbox_text import ESCAPE_QUESTION, is_escape
from dm_cc.ui.screen import STYLE, Screen
from dm_cc.ui.trust_text import MAX_WIDTH

if TYPE_CHECKING:
    from dm_cc.config import ServerDefinition

PREVIEW_LINES = 60
GRACE = 0.5         # seconds after a question appears before a key answers it
QUIET = 1.0         # seconds without a key before one answers a question that came
                    # while the person was typing (their keys are kept for the prompt)
TYPING = "what you were typing is kept for the prompt: read this, then answer"
STOPPED_LINES = 6   # lines of a stopped command's output shown with its escape question
ASKS_SHOWN = 20     # requests that ask listed in the question (v views all)
RULES_SHOWN = 3     # rules "always" would keep named in the legend, each cut to
RULE_CHARS = 40     # this many characters when there are more (else to ONE_RULE_CHARS:
ONE_RULE_CHARS = 200  # a long command's exact rule)
SAID = {"once": ("class:allow", "allowed once"),
        "session": ("class:allow", "allowed for this session"),
        "always": ("class:allow", "always allowed (saved)"),
        "reject": ("class:deny", "denied"),
        "cancel": ("class:deny", "denied")}


def question_lines(request: ApprovalRequest, *, whole: bool = False) -> Iterator[Line]:
    """Who asks, the tool and what the call says it does, the input (a command's
    here-document bodies as data: :mod:`dm_cc.ui.command_text`), each request that asks
    with its rule (``file:line``) and reason, and the preview. What is long is cut, and
    says how much and that ``v`` views all; ``whole``: nothing cut (the pager's text)."""
    limit = None if whole else PREVIEW_LINES
    who = [("class:task", f"[{request.asker}]")] if request.asker \
        else [("class:agent", request.agent)]
    escape = is_escape(request.decision)
    listed, diffs = changes_text.split(request.changes) if request.changes else ([], "")
    if escape or request.changes:  # the call ran: this asks to run it again outside,
        heading = ESCAPE_QUESTION if escape else changes_text.QUESTION  # or what it did
        yield [("class:ask", "? "), ("", heading)]
        yield [("class:dim", "  "), *who, ("class:dim", "'s "), ("class:tool", request.tool),
               ("class:dim", f" call: {request.description}" if request.description
                else " call")]
    else:
        yield [("class:ask", "? "), *who, ("", " wants to use "), ("class:tool", request.tool)]
        if request.description:
            yield [("class:dim", f"  {request.description}")]
    if request.tool == "bash":
        yield from command_lines(request.main_input or "", whole=whole)
    else:
        for text in (request.main_input or "").splitlines() or [""]:
            yield [("class:tool", f"  {text}")]
    if escape and request.stopped:  # what the confined run printed, its end
        printed = request.stopped.split("\n(the sandbox may have stopped this")[0]
        lines = printed.rstrip("\n").splitlines()
        if len(lines) > STOPPED_LINES and not whole:
            yield [("class:dim", f"  │ … {counted(len(lines) - STOPPED_LINES, 'line')} above: {VIEW}")]
            lines = lines[-STOPPED_LINES:]
        for text in lines:
            yield [("class:dim", f"  │ {text}")]
    # each change says why it asks
    yield from changes_text.list_lines(listed, len(listed) if whole else changes_text.LIST_LINES)
    said = None   # an escape's requests share why the sandbox stopped it: said once
    asking = [v for v in request.decision.verdicts if v.action == "ask"] \
        if not request.changes else []
    if not whole and len(asking) > ASKS_SHOWN:   # a command naming thousands of paths
        asking, left = asking[:ASKS_SHOWN], len(asking) - ASKS_SHOWN
    else:
        left = 0
    for verdict in asking:
        note = verdict.request.note
        if verdict.request.permission == SANDBOX_ESCAPE and note and note != said:
            yield [("class:ask", f"  {note}")]
            said = note
        yield [("class:ask", "  asks: "), ("", f"{verdict.request.permission} "
                                               f'"{verdict.request.pattern}"'),
               ("class:dim", f"  ← {rule_text(verdict.rule)}")]
        if verdict.rule.reason:
            yield [("class:ask", f"        reason: {verdict.rule.reason}")]
        if verdict.note and verdict.note != said:
            yield [("class:dim", f"        note: {verdict.note}")]
    if left:
        yield [("class:ask", f"  … and {counted(left, 'more request')} that ask: {VIEW}")]
    if request.preview:
        yield from diff_lines(request.preview, limit, f": {VIEW}")
    if diffs:
        yield from diff_lines(diffs, limit, f": {VIEW}")


def hides(request: ApprovalRequest) -> bool:
    """Whether the question, as shown, leaves out part of what it is about (then ``v``
    views it whole)."""
    return list(question_lines(request)) != list(question_lines(request, whole=True))


def server_lines(server: ServerDefinition, trust: str,
                 changes: Sequence[str] = ()) -> Iterator[Line]:
    """A project's MCP server as the trust question shows it: where it is defined,
    what changed since it was approved, what it runs (or where it connects) as
    written, the variables it reads from the environment (by name), the names of
    what it is given and the files it runs (``ServerDefinition.facts``)."""
    changed = " (changed since you approved it)" if trust == "changed since approved" else ""
    yield [("class:ask", "? "), ("", "this project defines an MCP server "),
           ("class:tool", server.name), ("", f"{changed} at {server.source}")]
    if changes:
        yield [("class:ask", f"  changed: {', '.join(changes)}")]
    yield [("class:tool", f"  {server.transport}: {server.where()}")]
    for fact in server.facts():
        yield [("class:dim", f"  {fact}")]
    if server.transport == "stdio":
        yield [("class:dim", "  it runs as you, in the sandbox where bubblewrap works (by "
                             "default: the project read-only, no network): start it only "
                             "if you trust this project")]


def _legend(request: ApprovalRequest) -> Line:
    remember = request.suggestions
    parts: Line = [("class:key", "y"), ("", " once  ")]
    if remember:
        most = RULE_CHARS if len(remember) > RULES_SHOWN else ONE_RULE_CHARS
        shown = ", ".join(f'{r.permission} "{_cut(r.pattern, most)}"'
                          for r in remember[:RULES_SHOWN])
        if len(remember) > RULES_SHOWN:
            shown += f" and {counted(len(remember) - RULES_SHOWN, 'more rule')}"
        if request.may_save:
            parts += [("class:key", "s"), ("", " session  "), ("class:key", "a"),
                      ("", f" always ({shown})  ")]
        else:   # doom_loop, sandbox_escape: for this session at most, never saved
            parts += [("class:key", "s"), ("", f" this session ({shown})  ")]
    if is_escape(request.decision):   # a no keeps the failed result and stops the turn
        parts[1] = ("", " run it outside once  ")
        stop = " no, keep it in the sandbox and stop the turn  "
    elif request.changes:             # a no discards them (the command's output stays)
        parts[1] = ("", changes_text.YES)
        stop = changes_text.NO.format(stops="this subagent" if request.asker else "the turn")
    else:
        stop = " no, stop this subagent  " if request.asker else " no, stop the turn  "
    parts += [("class:key", "n"), ("", stop), ("class:key", "f"),
              ("", " no, tell the model why  "), ("class:dim", "Esc/Ctrl-D = n · Ctrl-C = n + cancel")]
    return parts


def _cut(pattern: str, most: int) -> str:
    return pattern if len(pattern) <= most else pattern[:most] + "…"


def _remembering(request: ApprovalRequest) -> dict[str, str]:
    """The keys that remember an answer: s and a, s alone for a permission whose
    approvals are never saved (``ApprovalRequest.may_save``), none with no rule."""
    if not request.suggestions:
        return {}
    return {"s": "session", "a": "always"} if request.may_save else {"s": "session"}


class ReplApprover:
    """The REPL's Approver: shows the question on ``screen``, reads one key (not one
    pressed within ``grace`` seconds of the question appearing: :func:`_answer`)."""

    def __init__(self, screen: Screen, shown: Shown,
                 make_room: Callable[[], Awaitable[str]] | None = None,
                 grace: float = GRACE) -> None:
        self.screen = screen
        self.shown = shown
        self.make_room = make_room
        self.grace = grace
        self._lock = asyncio.Lock()
        self._waiting = 0                  # questions open or queued
        self._returned: list[KeyPress] = []  # keys the last question gave back to the prompt
        self._settled = asyncio.Event()

    async def settled(self) -> None:
        """Wait until no question is open or queued."""
        while self._waiting:
            self._settled.clear()
            await self._settled.wait()

    async def approve(self, request: ApprovalRequest) -> Approval:
        self._waiting += 1
        try:
            async with self._lock:   # concurrent calls: one question at a time
                if request.settled():  # an answer given meanwhile covers it: not asked
                    who = f"[{request.asker}] " if request.asker else ""
                    self.screen.line([("class:allow", f"  {who}{request.tool} "
                                       f"{request.main_input}: allowed by your earlier answer")])
                    return Approval("once", by="approval")
                typed = await self.make_room() if self.make_room is not None else ""
                return await self._question(request, typing=bool(typed))
        finally:
            self._waiting -= 1
            if not self._waiting:
                self._settled.set()

    async def trust_server(self, server: ServerDefinition, trust: str,
                           changes: Sequence[str] = ()) -> bool:
        """Ask whether the project's MCP server ``server`` may start (y: yes, and
        the approval is saved by the caller); ``changes``: since it was approved."""
        legend: Line = [("class:key", "y"), ("", " start it and remember  "),
                        ("class:key", "n"), ("", " not now  "),
                        ("class:dim", "Esc/Ctrl-D/Ctrl-C = n")]
        said = {"yes": ("class:allow", "  started and approved"),
                "no": ("class:deny", f"  not started (dm_cc mcp trust {server.name} approves it)")}
        return await self._yes_or_no(list(server_lines(server, trust, changes)), legend,
                                     said) == "yes"

    async def trust_project(self, lines: Callable[[int], Sequence[str]]) -> bool:
        """Ask whether the project's own files are trusted as they are (y: yes, saved
        by the caller; n: no, remembered for this content). ``lines(width)``: the
        question, its first line the ``?`` line (``trust_text.question_lines``)."""
        width = self.screen.output.get_size().columns
        first, *rest = lines(min(width, MAX_WIDTH))
        legend: Line = [("class:key", "y"), ("", " trust them  "), ("class:key", "n"),
                        ("", " no (asked again only if they change)  "),
                        ("class:dim", "Esc/Ctrl-C = n")]
        said = {"yes": ("class:allow", "  trusted as they are now (dm_cc untrust forgets it)"),
                "no": ("class:deny", "  not trusted: only their deny and ask rules apply "
                                     "(later: dm_cc trust)")}
        question: list[Line] = [[("class:ask", first)], *([("", line)] for line in rest)]
        return await self._yes_or_no(question, legend, said) == "yes"

    async def _yes_or_no(self, question: Sequence[Line], legend: Line,
                         said: dict[str, tuple[str, str]]) -> str:
        """A yes/no question that may come while the person is typing (the REPL asks
        them while the world loads, the prompt already on screen): it waits its turn
        and makes room as :meth:`approve` does, and keys typed as it appears are kept
        for the prompt, never taken as the answer (:func:`_answer`)."""
        self._waiting += 1     # the prompt is not drawn again while this is open
        try:
            async with self._lock:
                typed = await self.make_room() if self.make_room is not None else ""
                self.screen.hold()
                self.screen.paused = True
                held, fresh = self._set_aside()
                try:
                    for line in question:
                        self.screen.line(line, now=True)
                    choice = await _answer(legend, {"y": "yes", "n": "no", "escape": "no",
                                                    "c-d": "no", "c-c": "no"},
                                           held, typing=bool(typed) or fresh, grace=self.grace,
                                           waiting=self._others)
                    self.screen.line([said[choice]], now=True)
                    return choice
                finally:
                    self.screen.paused = False
                    self._give_back(held)
                    self.screen.release()
        finally:
            self._waiting -= 1
            if not self._waiting:
                self._settled.set()

    def _set_aside(self) -> tuple[list[KeyPress], bool]:
        """Keys typed before this question (they never answer it), and whether any was
        typed since the last question gave its keys back (queued questions: those are
        not typing going on)."""
        held = _set_aside_typeahead()
        returned = {id(key) for key in self._returned}   # the very keys, not equal ones
        return held, any(id(key) not in returned for key in held)

    def _give_back(self, held: list[KeyPress]) -> None:
        self._returned = list(held)
        _give_back(held)

    def _others(self) -> int:
        """Questions waiting behind the one on screen."""
        return max(0, self._waiting - 1)

    async def _question(self, request: ApprovalRequest, typing: bool = False) -> Approval:
        self.screen.hold()   # others' lines wait: nothing comes between question and keys
        try:
            return await self._held_question(request, typing)
        finally:
            self.screen.release()

    async def _held_question(self, request: ApprovalRequest, typing: bool) -> Approval:
        self.screen.paused = True
        self.screen.clear_status()
        held, fresh = self._set_aside()
        try:
            approval = await self._ask(request, held, typing=typing or fresh)
        finally:
            self.screen.paused = False
            self._give_back(held)
        ran = is_escape(request.decision) or bool(request.changes)  # its result is shown
        if approval.answer in ("reject", "cancel") and not ran:
            self.shown.refused.add(request.call_id)
        else:
            if not request.asker:     # a subagent's call leaves the session's activity
                self.screen.activity = f"running {request.tool}"
            if request.preview:
                self.shown.previewed.add(request.call_id)
        style, said = (changes_text.SAID if request.changes else SAID)[approval.answer]
        if approval.answer == "reject" and is_escape(request.decision):
            said = "not run outside the sandbox"
        extra = f": {approval.feedback}" if approval.feedback else ""
        self.screen.line([(style, f"  {said}{extra}")], now=True)
        return approval

    async def _ask(self, request: ApprovalRequest, held: list[KeyPress],
                   typing: bool) -> Approval:
        """The question, then its answer: keys typed as it appears never answer it
        (``typing``: keys were typed just before; ``held`` gets what was typed)."""
        for line in question_lines(request):
            self.screen.line(line, now=True)
        keys = {"y": "once", "n": "reject", "f": "feedback", "escape": "reject",
                "c-d": "reject", "c-c": "cancel"}
        keys.update(_remembering(request))
        legend = _legend(request)
        if hides(request):
            keys["v"] = "view"
            legend = [*legend, ("", "  "), ("class:key", "v"), ("", " view all")]
        grace = self.grace
        while True:
            choice = await _answer(legend, keys, held, typing=typing, grace=grace,
                                   waiting=self._others)
            grace, typing = 0.0, False   # back at the question: the person is reading it
            if choice == "view":
                who = f"[{request.asker}]" if request.asker else request.agent
                await page(list(question_lines(request, whole=True)),
                           f"the whole question: {who} wants to use {request.tool}")
                continue
            if choice == "feedback":
                feedback = await _line("  tell the model: ", "")
                if feedback is None:
                    continue
                return Approval("reject", feedback.strip() or None)
            if choice in ("session", "always"):
                rules = await self._edit(request, choice)
                if rules is None:
                    continue
                return Approval(choice, rules=rules)  # type: ignore[arg-type]
            return Approval(choice)  # type: ignore[arg-type]

    async def _edit(self, request: ApprovalRequest,
                    choice: str = "always") -> tuple[Rule, ...] | None:
        """Each suggested rule in an editable line; None when the person backs out.
        A rule as broad as a whole interpreter (``bash *``) is kept only once the
        person confirms it (:meth:`_broad_confirmed`)."""
        kept = []
        self.screen.line("  the rule to keep (edit it if you like) · Enter keeps it · "
                         "Esc goes back", "class:dim", now=True)
        for rule in request.suggestions:
            pattern = rule.pattern
            while True:
                edited = await _line(f"  allow {rule.permission} ", pattern)
                if edited is None:
                    return None
                candidate = dataclasses.replace(rule, pattern=edited.strip())
                pattern = edited
                if candidate.pattern and request.covers(candidate):
                    if await self._broad_confirmed(request, candidate, choice):
                        kept.append(candidate)
                        break
                    continue
                self.screen.line(f"  {rule_text(candidate)} would not allow this call; "
                                 "edit it again, or Esc to go back", "class:error", now=True)
        return tuple(kept)

    async def _broad_confirmed(self, request: ApprovalRequest, rule: Rule, choice: str) -> bool:
        """True unless ``rule`` is as broad as a whole interpreter and the person, warned,
        goes back to edit it (``e``, Esc) rather than keep it (``y``)."""
        why = request.breadth(rule)
        if why is None:
            return True
        kept = "saved for this project" if choice == "always" else "kept for this session"
        warning = (f'! allow {rule.permission} "{rule.pattern}" {why}: it would be {kept}, '
                   "allowing far more than this call")
        for text, _ in wrapped(warning, self.screen.output.get_size().columns,
                               indent="    ", first="  "):   # between words, not by the terminal
            self.screen.line(text, "class:error", now=True)
        legend: Line = [("class:key", "y"), ("", " keep it anyway  "), ("class:key", "e"),
                        ("", " edit it  "), ("class:dim", "Esc = e")]
        typed: list[KeyPress] = []   # keys of a flow confirm nothing; they are dropped here
        answer = await _answer(legend, {"y": "keep", "e": "edit", "escape": "edit",
                                        "c-d": "edit", "c-c": "edit"}, typed, typing=False,
                               grace=self.grace)
        return answer == "keep"


def fit_legend(legend: Line, width: int) -> Line:
    """``legend`` broken into rows of at most ``width`` cells between its parts (a key
    and what it does, the dim note, the count of questions waiting), never inside a
    word as the terminal would; a part wider than a row still wraps."""
    groups: list[Line] = []
    for style, text in legend:
        if style in ("class:key", "class:dim", "class:notice") or not groups:
            groups.append([])
        groups[-1].append((style, text))
    rows: Line = []
    used = 0
    for group in groups:
        cells = sum(get_cwidth(text) for _, text in group)
        if used and used + get_cwidth(_rstrip(group)) > width:
            rows = [*rows[:-1], (rows[-1][0], rows[-1][1].rstrip()), ("", "\n")]
            used = 0
        rows += group
        used += cells
    return rows


def _rstrip(group: Line) -> str:
    return "".join(text for _, text in group).rstrip()


async def _answer(legend: Line, keys: dict[str, str], held: list[KeyPress], *,
                  typing: bool, grace: float, waiting: Callable[[], int] = lambda: 0) -> str:
    """Show ``legend`` and return the answer (``keys``) of the first key that is one --
    but no key typed in a flow answers: not one pressed less than ``grace`` seconds
    after the question appeared, nor less than :data:`QUIET` seconds after another key
    (``typing``: keys were typed as it appeared). Such a letter is kept in ``held`` for
    the prompt, as is every key that answers nothing (the person was typing a message,
    ``/tasks``); such an Esc, Ctrl-C or Ctrl-D is dropped (given back, it would clear
    the prompt or end the session). Once a key was kept the legend says so
    (:data:`TYPING`); it counts the questions waiting behind this one (``waiting``)."""
    last = time.monotonic()
    quiet = QUIET if typing else grace
    kept = typing
    bindings = KeyBindings()

    def keep(event: KeyPressEvent, *, dropped: bool = False) -> None:
        nonlocal last, quiet, kept
        if not dropped:
            held.extend(event.key_sequence)
        last, quiet, kept = time.monotonic(), QUIET, True
        event.app.invalidate()

    for key, answer in keys.items():
        def pick(event: KeyPressEvent, answer: str = answer, key: str = key) -> None:
            if time.monotonic() - last < quiet:
                keep(event, dropped=len(key) > 1)
            else:
                event.app.exit(result=answer)
        bindings.add(key, eager=True)(pick)
    bindings.add(Keys.Any)(keep)

    def shown() -> FormattedText:
        others = waiting()
        more: Line = [("class:notice", f"  ({others} more question{'s' if others > 1 else ''} "
                                       "waiting)")] if others else []
        notice: Line = [("", "\n"), ("class:notice", TYPING)] if kept else []
        width = get_app().output.get_size().columns
        return FormattedText([*fit_legend([*legend, *more], width), *notice])

    app: Application[str] = Application(
        layout=Layout(Window(FormattedTextControl(shown), wrap_lines=True)),
        key_bindings=bindings, style=STYLE, full_screen=False, erase_when_done=True,
        refresh_interval=0.5)   # a question queued meanwhile is counted
    app.ttimeoutlen = 0.05   # a lone Esc answers at once
    # Ctrl-C is a key here; the turn's own SIGINT handler must survive the question
    return await app.run_async(handle_sigint=False)


async def _line(message: str, default: str) -> str | None:
    """One editable line; None on Esc, Ctrl-C or Ctrl-D."""
    bindings = KeyBindings()

    @bindings.add("escape", eager=True)
    @bindings.add("c-c")
    @bindings.add("c-d")
    def back(event: KeyPressEvent) -> None:
        event.app.exit(result=None)

    session: PromptSession[str | None] = PromptSession(key_bindings=bindings, style=STYLE)
    session.app.ttimeoutlen = 0.05
    return await session.prompt_async(message, default=default, handle_sigint=False)


def _give_back(held: list[KeyPress]) -> None:
    """The keys set aside while a question was open go to the next prompt, before
    any typed after the answer (the question's application kept those)."""
    input_ = get_app_session().input
    after = get_typeahead(input_)
    if held or after:
        store_typeahead(input_, [*held, *after])


def _set_aside_typeahead() -> list[KeyPress]:
    """Keys already typed (during the turn) are not answers to this question."""
    input_ = get_app_session().input
    held = list(get_typeahead(input_))
    try:
        with input_.raw_mode():
            while True:
                keys = input_.read_keys()
                if not keys:
                    break
                held.extend(keys)
            held.extend(input_.flush_keys())
    except (OSError, NotImplementedError, AttributeError):
        pass
    return held
