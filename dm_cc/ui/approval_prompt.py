"""The approval question: everything about the call, then one key.

    y  allow once            s  allow for this session      a  always allow (saved)
    n  deny (the turn stops)  f  deny and tell the model why (one line)
    Esc, Ctrl-D  deny         Ctrl-C  deny and cancel the turn

Before an "always" (or "session") is kept, the rule is shown in an editable line
(the narrowest useful rule for shell -- ``bash setup.sh *``, ``rm -rf build`` --,
the path for files); an edit that would no longer allow this call is refused, and
one as broad as a whole interpreter (``bash *``, ``*``) is kept only after a warning
and ``y``. A doom_loop or sandbox_escape question offers ``s`` but no ``a``: those
approvals are never saved. Questions from concurrent tool calls (two
subagents asking at once) wait their turn (one lock); a subagent's question
names it (``? [explore #2] wants to use bash``). Keys typed before the question
appeared never answer it: they are set aside and given back to the next prompt.
A question that comes while the REPL waits at its prompt (a background subagent
asks) first makes the prompt step aside (``make_room``).

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
message: keys typed before or as the question appears are kept for the prompt,
and while keys keep coming (until :data:`QUIET` seconds pass without one) not
even y or n answers, so a word being typed ("every", "any") never does; the
legend then says that what was typed is kept.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import TYPE_CHECKING

from prompt_toolkit import PromptSession
from prompt_toolkit.application import Application
from prompt_toolkit.application.current import get_app_session
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.input.typeahead import get_typeahead, store_typeahead
from prompt_toolkit.key_binding import KeyBindings, KeyPress
from prompt_toolkit.key_binding.key_processor import KeyPressEvent
from prompt_toolkit.keys import Keys
from prompt_toolkit.layout import Layout, Window
from prompt_toolkit.layout.controls import FormattedTextControl

from dm_cc.core import Approval, ApprovalRequest
from dm_cc.permissions import SANDBOX_ESCAPE, Rule
from dm_cc.ui import changes_text
from dm_cc.ui.describe import rule_text
from dm_cc.ui.render import Line, Shown, diff_lines
from dm_cc.ui.sandbox_text import ESCAPE_QUESTION, is_escape
from dm_cc.ui.screen import STYLE, Screen
from dm_cc.ui.trust_text import MAX_WIDTH

if TYPE_CHECKING:
    from dm_cc.config import ServerDefinition

PREVIEW_LINES = 60
QUIET = 1.0         # seconds without a key before y or n answers a question that came
                    # while the person was typing (their keys are kept for the prompt)
TYPING = "what you were typing is kept for the prompt: read this, then press y or n"
STOPPED_LINES = 6   # lines of a stopped command's output shown with its escape question
SAID = {"once": ("class:allow", "allowed once"),
        "session": ("class:allow", "allowed for this session"),
        "always": ("class:allow", "always allowed (saved)"),
        "reject": ("class:deny", "denied"),
        "cancel": ("class:deny", "denied")}


def question_lines(request: ApprovalRequest) -> Iterator[Line]:
    """Who asks, the tool and what the call says it does, the whole input, each
    request that asks with its rule (``file:line``) and reason, and the preview."""
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
    for text in (request.main_input or "").splitlines() or [""]:
        yield [("class:tool", f"  $ {text}" if request.tool == "bash" else f"  {text}")]
    if escape and request.stopped:  # what the confined run printed, its end
        printed = request.stopped.split("\n(the sandbox may have stopped this")[0]
        lines = printed.rstrip("\n").splitlines()
        if len(lines) > STOPPED_LINES:
            yield [("class:dim", f"  │ … {len(lines) - STOPPED_LINES} lines above")]
        for text in lines[-STOPPED_LINES:]:
            yield [("class:dim", f"  │ {text}")]
    yield from changes_text.list_lines(listed)   # each change says why it asks
    said = None   # an escape's requests share why the sandbox stopped it: said once
    for verdict in request.decision.verdicts:
        if verdict.action != "ask" or request.changes:
            continue
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
    if request.preview:
        yield from diff_lines(request.preview, PREVIEW_LINES)
    if diffs:
        yield from diff_lines(diffs, PREVIEW_LINES)


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
        shown = ", ".join(f'{r.permission} "{r.pattern}"' for r in remember)
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


def _remembering(request: ApprovalRequest) -> dict[str, str]:
    """The keys that remember an answer: s and a, s alone for a permission whose
    approvals are never saved (``ApprovalRequest.may_save``), none with no rule."""
    if not request.suggestions:
        return {}
    return {"s": "session", "a": "always"} if request.may_save else {"s": "session"}


class ReplApprover:
    """The REPL's Approver: shows the question on ``screen``, reads one key."""

    def __init__(self, screen: Screen, shown: Shown,
                 make_room: Callable[[], Awaitable[str]] | None = None) -> None:
        self.screen = screen
        self.shown = shown
        self.make_room = make_room
        self._lock = asyncio.Lock()
        self._waiting = 0                  # questions open or queued
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
                if self.make_room is not None:
                    await self.make_room()
                return await self._question(request)
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
                held = _set_aside_typeahead()
                try:
                    for line in question:
                        self.screen.line(line, now=True)
                    choice = await _answer(legend, {"y": "yes", "n": "no", "escape": "no",
                                                    "c-d": "no", "c-c": "no"},
                                           held, typing=bool(typed or held))
                    self.screen.line([said[choice]], now=True)
                    return choice
                finally:
                    self.screen.paused = False
                    _give_back(held)
                    self.screen.release()
        finally:
            self._waiting -= 1
            if not self._waiting:
                self._settled.set()

    async def _question(self, request: ApprovalRequest) -> Approval:
        self.screen.hold()   # others' lines wait: nothing comes between question and keys
        try:
            return await self._held_question(request)
        finally:
            self.screen.release()

    async def _held_question(self, request: ApprovalRequest) -> Approval:
        self.screen.paused = True
        self.screen.clear_status()
        held = _set_aside_typeahead()
        try:
            approval = await self._ask(request)
        finally:
            self.screen.paused = False
            _give_back(held)
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

    async def _ask(self, request: ApprovalRequest) -> Approval:
        for line in question_lines(request):
            self.screen.line(line, now=True)
        keys = {"y": "once", "n": "reject", "f": "feedback", "escape": "reject",
                "c-d": "reject", "c-c": "cancel"}
        keys.update(_remembering(request))
        while True:
            choice = await _choose(_legend(request), keys)
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
        self.screen.line(f'  ! allow {rule.permission} "{rule.pattern}" {why}: it would be '
                         f"{kept}, allowing far more than this call", "class:error", now=True)
        legend: Line = [("class:key", "y"), ("", " keep it anyway  "), ("class:key", "e"),
                        ("", " edit it  "), ("class:dim", "Esc = e")]
        answer = await _choose(legend, {"y": "keep", "e": "edit", "escape": "edit",
                                        "c-d": "edit", "c-c": "edit"})
        return answer == "keep"


async def _choose(legend: Line, keys: dict[str, str]) -> str:
    """Show ``legend`` on one line and return the answer of the first key pressed
    that means something; other keys are ignored."""
    bindings = KeyBindings()
    for key, answer in keys.items():
        def pick(event: KeyPressEvent, answer: str = answer) -> None:
            event.app.exit(result=answer)
        bindings.add(key, eager=True)(pick)
    app: Application[str] = Application(
        layout=Layout(Window(FormattedTextControl(FormattedText(legend)), height=1, wrap_lines=True)),
        key_bindings=bindings, style=STYLE, full_screen=False, erase_when_done=True)
    app.ttimeoutlen = 0.05   # a lone Esc answers at once
    # Ctrl-C is a key here; the turn's own SIGINT handler must survive the question
    return await app.run_async(handle_sigint=False)


async def _answer(legend: Line, keys: dict[str, str], held: list[KeyPress],
                  typing: bool) -> str:
    """:func:`_choose` for a question that may come while the person is typing: every
    other key is kept in ``held`` (for the prompt), and so is an answer key pressed
    less than :data:`QUIET` seconds after the last key typed (``typing``: keys were
    typed as the question appeared). Nothing typed in a flow of keys answers it."""
    last = time.monotonic() if typing else None
    bindings = KeyBindings()

    def keep(event: KeyPressEvent) -> None:
        nonlocal last
        held.extend(event.key_sequence)
        last = time.monotonic()
        event.app.invalidate()

    for key, answer in keys.items():
        def pick(event: KeyPressEvent, answer: str = answer) -> None:
            if last is not None and time.monotonic() - last < QUIET:
                keep(event)
            else:
                event.app.exit(result=answer)
        bindings.add(key, eager=True)(pick)
    bindings.add(Keys.Any)(keep)

    def shown() -> FormattedText:
        if last is None:
            return FormattedText(legend)
        return FormattedText([*legend, ("", "\n"), ("class:notice", TYPING)])

    app: Application[str] = Application(
        layout=Layout(Window(FormattedTextControl(shown), wrap_lines=True)),
        key_bindings=bindings, style=STYLE, full_screen=False, erase_when_done=True)
    app.ttimeoutlen = 0.05   # a lone Esc answers at once
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
